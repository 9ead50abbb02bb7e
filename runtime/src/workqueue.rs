//! client-go's work queue (`k8s.io/client-go/util/workqueue`) for tokio: a deduplicating
//! FIFO with delayed and rate-limited adds, and client-go's metrics.
//!
//! A controller puts the keys of objects that changed ("namespace/name") into the queue and
//! runs a few workers that each loop on [`get`](WorkQueue::get) → reconcile →
//! [`done`](WorkQueue::done). The queue guarantees, as client-go's does:
//!
//! - **dedup**: adding an item that is already waiting in the queue does nothing, so a burst
//!   of events for one object costs one reconcile;
//! - **no concurrent processing**: an item handed out by `get` is not handed out again until
//!   it is `done`, so two workers never reconcile the same object at once;
//! - **no lost changes**: an item added while it is being processed is queued again when it
//!   is `done`, so the change that arrived mid-reconcile gets its own reconcile;
//! - **FIFO** otherwise.
//!
//! On top of that, as client-go's `DelayingInterface` and `RateLimitingInterface`:
//! [`add_after`](WorkQueue::add_after) adds an item once a delay has passed, and
//! [`add_rate_limited`](WorkQueue::add_rate_limited) adds it after the delay its
//! [`RateLimiter`] decides (per-item exponential backoff, overall token bucket, ...);
//! [`forget`](WorkQueue::forget) resets that backoff once the item succeeded.
//!
//! ```no_run
//! # async fn reconcile(_key: &str) -> Result<(), ()> { Ok(()) }
//! # async fn example() {
//! use kube_codegen_runtime::workqueue::WorkQueue;
//!
//! let queue: WorkQueue<String> = WorkQueue::new("foos");
//! queue.add("default/foo".to_owned());
//!
//! let worker = {
//!     let queue = queue.clone();
//!     tokio::spawn(async move {
//!         while let Some(key) = queue.get().await {
//!             match reconcile(&key).await {
//!                 Ok(()) => queue.forget(&key),
//!                 Err(()) => queue.add_rate_limited(key.clone()),
//!             }
//!             queue.done(&key);
//!         }
//!     })
//! };
//! // ...
//! queue.shutdown_with_drain().await;
//! worker.await.unwrap();
//! # }
//! ```
//!
//! Everything is driven by the callers: there is no background task, so a queue can be
//! created outside a runtime. Delayed items move into the queue when their time has come
//! and any method looks (a worker blocked in `get` sleeps until the earliest one is due).
//! Time is [`tokio::time::Instant`], so tests can run on a paused clock.

mod metrics;
mod rate_limiter;

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::fmt;
use std::hash::Hash;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use tokio::sync::Notify;
use tokio::time::Instant;

use metrics::Histogram;
pub use metrics::{DURATION_BUCKETS, HistogramSnapshot, QueueMetrics, render_prometheus};
pub use rate_limiter::{
    BucketRateLimiter, ItemExponentialFailureRateLimiter, ItemFastSlowRateLimiter,
    MaxOfRateLimiter, RateLimiter, WithMaxWaitRateLimiter, default_controller_rate_limiter,
};

/// A blocked `get` re-checks at least this often, so a far-future delay never asks the
/// timer for a deadline it cannot represent.
const MAX_SLEEP: Duration = Duration::from_secs(24 * 60 * 60);
/// Stand-in ready time for a delay too large to add to `Instant` (about 30 years).
const FAR_FUTURE: Duration = Duration::from_secs(30 * 365 * 24 * 60 * 60);

/// A deduplicating, delaying, rate-limiting work queue; see the [module docs](self).
///
/// `WorkQueue` is a handle: clones share one queue.
pub struct WorkQueue<T> {
    inner: Arc<Inner<T>>,
}

struct Inner<T> {
    name: String,
    state: Mutex<State<T>>,
    /// Wakes workers blocked in `get`: `notify_one` per item pushed onto `queue`,
    /// `notify_waiters` on shutdown and when the earliest delayed item changes.
    item_ready: Notify,
    /// Wakes `shutdown_with_drain` when nothing is being processed any more, or on `shutdown`.
    drained: Notify,
    limiter: Box<dyn RateLimiter<T>>,
}

struct State<T> {
    /// Items to hand out, in order. Always exactly the dirty items that are not processing.
    queue: VecDeque<T>,
    /// Items added and not yet handed out, with the time they were added (queue latency).
    dirty: HashMap<T, Instant>,
    /// Items handed out and not yet done, with the time they were handed out.
    processing: HashMap<T, Instant>,
    /// Delayed items by (ready time, insertion sequence number).
    waiting: BTreeMap<(Instant, u64), T>,
    /// The key of each delayed item in `waiting`.
    waiting_keys: HashMap<T, (Instant, u64)>,
    next_seq: u64,
    shutting_down: bool,
    drain: bool,
    adds: u64,
    retries: u64,
    queue_latency: Histogram,
    work_duration: Histogram,
}

impl<T: Clone + Eq + Hash> State<T> {
    fn new() -> Self {
        Self {
            queue: VecDeque::new(),
            dirty: HashMap::new(),
            processing: HashMap::new(),
            waiting: BTreeMap::new(),
            waiting_keys: HashMap::new(),
            next_seq: 0,
            shutting_down: false,
            drain: false,
            adds: 0,
            retries: 0,
            queue_latency: Histogram::default(),
            work_duration: Histogram::default(),
        }
    }

    /// client-go's `Add`, with `at` as the add time. Returns whether the item was pushed
    /// onto `queue` (and so a worker should be woken).
    fn add(&mut self, item: T, at: Instant) -> bool {
        if self.shutting_down || self.dirty.contains_key(&item) {
            return false;
        }
        self.adds += 1;
        if self.processing.contains_key(&item) {
            // Queued again by `done`.
            self.dirty.insert(item, at);
            return false;
        }
        self.dirty.insert(item.clone(), at);
        self.queue.push_back(item);
        true
    }

    /// Moves the delayed items that are due into the queue, earliest first. Returns how many
    /// were pushed onto `queue`.
    fn promote(&mut self, now: Instant) -> usize {
        let mut pushed = 0;
        while let Some(entry) = self.waiting.first_entry() {
            let ready_at = entry.key().0;
            if ready_at > now {
                break;
            }
            let item = entry.remove();
            self.waiting_keys.remove(&item);
            // The item counts as added when its delay ran out, as if client-go's waiting
            // loop had added it right then.
            pushed += usize::from(self.add(item, ready_at));
        }
        pushed
    }

    /// Adds a delayed item; an item already waiting keeps the earlier ready time.
    fn add_waiting(&mut self, item: T, ready_at: Instant) {
        if let Some(&key) = self.waiting_keys.get(&item) {
            if key.0 <= ready_at {
                return;
            }
            self.waiting.remove(&key);
        }
        let key = (ready_at, self.next_seq);
        self.next_seq += 1;
        self.waiting_keys.insert(item.clone(), key);
        self.waiting.insert(key, item);
    }

    fn next_ready_at(&self) -> Option<Instant> {
        self.waiting.first_key_value().map(|(key, _)| key.0)
    }

    /// client-go's `Get` once the queue is non-empty.
    fn pop(&mut self, now: Instant) -> Option<T> {
        let item = self.queue.pop_front()?;
        if let Some(added) = self.dirty.remove(&item) {
            self.queue_latency
                .observe(now.saturating_duration_since(added).as_secs_f64());
        }
        self.processing.insert(item.clone(), now);
        Some(item)
    }

    fn stop(&mut self, drain: bool) {
        self.shutting_down = true;
        self.drain = drain;
        // Like client-go, delayed items are dropped: nothing can be added any more.
        self.waiting.clear();
        self.waiting_keys.clear();
    }
}

/// What `get` found in the queue.
enum Take<T> {
    Item(T),
    /// Shutting down and nothing left to hand out.
    ShutDown,
    /// Nothing to hand out yet; the earliest delayed item is due at this time, if any.
    Wait(Option<Instant>),
}

impl<T> Inner<T> {
    fn wake(&self, pushed: usize) {
        for _ in 0..pushed {
            self.item_ready.notify_one();
        }
    }
}

// Every lock is taken in a plain function, never in an `async fn`, so no guard can be held
// across an `.await` (and the futures stay `Send`).
impl<T: Clone + Eq + Hash> Inner<T> {
    fn take(&self, now: Instant) -> Take<T> {
        let mut state = self.state.lock();
        let pushed = state.promote(now);
        let taken = match state.pop(now) {
            Some(item) => Take::Item(item),
            None if state.shutting_down => Take::ShutDown,
            None => Take::Wait(state.next_ready_at()),
        };
        drop(state);
        self.wake(pushed);
        taken
    }

    fn drained_or_released(&self) -> bool {
        let state = self.state.lock();
        state.processing.is_empty() || !state.drain
    }
}

impl<T> Clone for WorkQueue<T> {
    fn clone(&self) -> Self {
        Self {
            inner: Arc::clone(&self.inner),
        }
    }
}

impl<T> fmt::Debug for WorkQueue<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.inner.state.lock();
        f.debug_struct("WorkQueue")
            .field("name", &self.inner.name)
            .field("len", &state.queue.len())
            .field("processing", &state.processing.len())
            .field("waiting", &state.waiting.len())
            .field("shutting_down", &state.shutting_down)
            .finish()
    }
}

impl<T> WorkQueue<T>
where
    T: Clone + Eq + Hash + Send + Sync + 'static,
{
    /// A queue named `name` (the `name` label of its metrics) that rate limits with
    /// [`default_controller_rate_limiter`].
    pub fn new(name: impl Into<String>) -> Self {
        Self::with_rate_limiter(name, default_controller_rate_limiter())
    }

    /// A queue named `name` that rate limits with `limiter`.
    pub fn with_rate_limiter(
        name: impl Into<String>,
        limiter: impl RateLimiter<T> + 'static,
    ) -> Self {
        Self {
            inner: Arc::new(Inner {
                name: name.into(),
                state: Mutex::new(State::new()),
                item_ready: Notify::new(),
                drained: Notify::new(),
                limiter: Box::new(limiter),
            }),
        }
    }

    /// The queue's name.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// Marks `item` as needing processing. Does nothing if it is already queued, or if the
    /// queue is shutting down; if it is being processed it is queued when it is `done`.
    pub fn add(&self, item: T) {
        let mut state = self.inner.state.lock();
        let now = Instant::now();
        let pushed = state.promote(now) + usize::from(state.add(item, now));
        drop(state);
        self.inner.wake(pushed);
    }

    /// Adds `item` once `delay` has passed (right away if `delay` is zero). If `item` is
    /// already waiting, it keeps the earlier of the two ready times. Does nothing if the
    /// queue is shutting down; delayed items are dropped at shutdown.
    pub fn add_after(&self, item: T, delay: Duration) {
        let mut state = self.inner.state.lock();
        if state.shutting_down {
            return;
        }
        state.retries += 1;
        let now = Instant::now();
        let mut pushed = state.promote(now);
        let mut earlier_deadline = false;
        if delay.is_zero() {
            pushed += usize::from(state.add(item, now));
        } else {
            let ready_at = now
                .checked_add(delay)
                .or_else(|| now.checked_add(FAR_FUTURE))
                .unwrap_or(now);
            let before = state.next_ready_at();
            state.add_waiting(item, ready_at);
            earlier_deadline = state.next_ready_at() != before;
        }
        drop(state);
        self.inner.wake(pushed);
        if earlier_deadline {
            // Blocked workers sleep until the earliest ready time; let them look again.
            self.inner.item_ready.notify_waiters();
        }
    }

    /// Adds `item` after the delay the rate limiter decides for it (which counts one more
    /// failure of `item`).
    pub fn add_rate_limited(&self, item: T) {
        let delay = self.inner.limiter.when(&item);
        self.add_after(item, delay);
    }

    /// Tells the rate limiter that `item` is done being retried (it succeeded, or was given
    /// up on): its backoff starts over. It does not remove `item` from the queue.
    pub fn forget(&self, item: &T) {
        self.inner.limiter.forget(item);
    }

    /// How many times `item` was rate limited since it was last forgotten.
    pub fn num_requeues(&self, item: &T) -> u32 {
        self.inner.limiter.num_requeues(item)
    }

    /// Number of items ready to be handed out. Items being processed and delayed items that
    /// are not yet due are not counted.
    pub fn len(&self) -> usize {
        let mut state = self.inner.state.lock();
        let pushed = state.promote(Instant::now());
        let len = state.queue.len();
        drop(state);
        self.inner.wake(pushed);
        len
    }

    /// Whether [`len`](Self::len) is 0.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Waits for an item to process, and marks it as being processed: call
    /// [`done`](Self::done) with it when finished. Returns `None` when the queue is shutting
    /// down and has no item left to hand out; like client-go, items that were queued before
    /// the shutdown are still handed out (and dirty items still come back after `done`).
    ///
    /// Cancel safe: an item is only taken from the queue when the future completes.
    pub async fn get(&self) -> Option<T> {
        // Like tokio's own channels: a worker that always finds an item still yields to the
        // scheduler once its cooperative budget is spent.
        tokio::task::consume_budget().await;
        loop {
            let notified = self.inner.item_ready.notified();
            let mut notified = std::pin::pin!(notified);
            // Register before looking at the state, so a wake-up in between is not missed.
            notified.as_mut().enable();
            let now = Instant::now();
            let deadline = match self.inner.take(now) {
                Take::Item(item) => return Some(item),
                Take::ShutDown => return None,
                Take::Wait(deadline) => deadline,
            };
            match deadline {
                Some(deadline) => {
                    let deadline = deadline.min(now + MAX_SLEEP);
                    tokio::select! {
                        _ = notified.as_mut() => {}
                        _ = tokio::time::sleep_until(deadline) => {}
                    }
                }
                None => notified.await,
            }
        }
    }

    /// [`get`](Self::get) without waiting: an item if one is ready now.
    pub fn try_get(&self) -> Option<T> {
        match self.inner.take(Instant::now()) {
            Take::Item(item) => Some(item),
            Take::ShutDown | Take::Wait(_) => None,
        }
    }

    /// Marks `item` as done processing. If it was added again meanwhile, it is queued now.
    /// Does nothing if `item` is not being processed.
    pub fn done(&self, item: &T) {
        let now = Instant::now();
        let mut state = self.inner.state.lock();
        let mut pushed = state.promote(now);
        let Some(started) = state.processing.remove(item) else {
            drop(state);
            self.inner.wake(pushed);
            return;
        };
        state
            .work_duration
            .observe(now.saturating_duration_since(started).as_secs_f64());
        if state.dirty.contains_key(item) {
            state.queue.push_back(item.clone());
            pushed += 1;
        }
        let idle = state.processing.is_empty();
        drop(state);
        self.inner.wake(pushed);
        if idle {
            self.inner.drained.notify_waiters();
        }
    }

    /// Stops the queue: adds are ignored from now on, delayed items are dropped, and `get`
    /// returns `None` once the items already queued have been handed out. Does not wait;
    /// it also releases a [`shutdown_with_drain`](Self::shutdown_with_drain) that is waiting.
    pub fn shutdown(&self) {
        self.inner.state.lock().stop(false);
        tracing::debug!(queue = %self.inner.name, "work queue shutting down");
        self.inner.item_ready.notify_waiters();
        self.inner.drained.notify_waiters();
    }

    /// [`shutdown`](Self::shutdown), then waits until no item is being processed (every
    /// item handed out by `get` is `done`). Items still queued are not waited for, but
    /// running workers keep getting them until the queue is empty. A concurrent
    /// `shutdown()` stops the wait.
    pub async fn shutdown_with_drain(&self) {
        self.inner.state.lock().stop(true);
        tracing::debug!(queue = %self.inner.name, "work queue shutting down, draining");
        self.inner.item_ready.notify_waiters();
        loop {
            let notified = self.inner.drained.notified();
            let mut notified = std::pin::pin!(notified);
            notified.as_mut().enable();
            if self.inner.drained_or_released() {
                return;
            }
            notified.await;
        }
    }

    /// Whether `shutdown` or `shutdown_with_drain` was called.
    pub fn is_shutting_down(&self) -> bool {
        self.inner.state.lock().shutting_down
    }

    /// A snapshot of the queue's metrics.
    pub fn metrics(&self) -> QueueMetrics {
        let now = Instant::now();
        let mut state = self.inner.state.lock();
        let pushed = state.promote(now);
        let mut unfinished = 0.0;
        let mut longest: f64 = 0.0;
        for started in state.processing.values() {
            let secs = now.saturating_duration_since(*started).as_secs_f64();
            unfinished += secs;
            longest = longest.max(secs);
        }
        let metrics = QueueMetrics {
            name: self.inner.name.clone(),
            depth: state.dirty.len(),
            adds: state.adds,
            retries: state.retries,
            queue_latency: state.queue_latency.snapshot(),
            work_duration: state.work_duration.snapshot(),
            unfinished_work_seconds: unfinished,
            longest_running_processor_seconds: longest,
            processing: state.processing.len(),
            waiting: state.waiting.len(),
        };
        drop(state);
        self.inner.wake(pushed);
        metrics
    }

    /// The queue's metrics in the Prometheus text exposition format, with client-go's
    /// series names (see [`render_prometheus`] to expose several queues together).
    pub fn render_prometheus(&self) -> String {
        self.metrics().render_prometheus()
    }
}
