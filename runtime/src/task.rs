//! Small helpers for the runtime's background tasks.

/// Aborts a task when dropped: a task that must not outlive the future that spawned it
/// (a controller's slot-opening watcher, a shard group's labeler).
pub(crate) struct AbortOnDrop(pub(crate) tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}
