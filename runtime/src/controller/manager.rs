//! The manager (controller-runtime's `manager.Manager`): runs a process's controllers
//! together, only while this replica leads when leader election is on, and stops them
//! gracefully on a shutdown signal.

use std::fmt;
use std::future::Future;
use std::sync::Arc;

use futures::FutureExt;
use futures::future::BoxFuture;
use kube::Resource;
use serde::de::DeserializeOwned;
use tokio::sync::watch;

use super::{Action, Controller, Request};
use crate::leader::{Ended, LeaderCallbacks, LeaderElector, LeaderHandle, LeadershipToken};

/// Why [`Manager::run`] returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[must_use]
pub enum Stopped {
    /// The shutdown signal fired; every controller drained its reconciles in flight (and
    /// the Lease was released, with leader election on).
    Shutdown,
    /// Leadership was lost: the controllers stopped so that two replicas never act at
    /// once. Exit non-zero so the replica restarts and competes again, as
    /// controller-runtime's manager does.
    LostLeadership,
    /// Every controller ended by itself (their queues were shut down elsewhere).
    Finished,
}

/// Tells a runnable when to stop; cheap to clone. The same signal as the elector's
/// [`LeadershipToken`], which it wraps.
#[derive(Clone, Debug)]
pub struct StopToken(LeadershipToken);

impl StopToken {
    /// Resolves once the manager stops (shutdown, or leadership lost).
    pub async fn stopped(&self) {
        self.0.cancelled().await;
    }

    /// Whether the manager is stopping.
    #[must_use]
    pub fn is_stopped(&self) -> bool {
        self.0.is_cancelled()
    }
}

type Runnable = Box<dyn FnOnce(StopToken) -> BoxFuture<'static, ()> + Send>;

/// Runs controllers (and any other work that must run only on the leader) until a
/// shutdown signal, optionally behind leader election.
///
/// ```no_run
/// # async fn demo(client: kube::Client, factory: kube_codegen_runtime::informer::SharedInformerFactory) -> Result<(), Box<dyn std::error::Error>> {
/// use std::sync::Arc;
/// use std::time::Duration;
/// use k8s_openapi::api::apps::v1::Deployment;
/// use kube_codegen_runtime::controller::{Action, Builder, Manager, Request, Stopped};
/// use kube_codegen_runtime::leader::{LeaderElectionConfig, LeaderElector};
///
/// async fn reconcile(_req: Request<Deployment>, _ctx: Arc<()>) -> Result<Action, kube::Error> {
///     Ok(Action::Done)
/// }
///
/// let controller = Builder::for_kind(factory.informer_for::<Deployment>()).build();
/// factory.start();
/// factory.wait_for_cache_sync(Duration::from_secs(60)).await?;
///
/// let config = LeaderElectionConfig::new("my-controller", "kube-system", &LeaderElectionConfig::default_identity());
/// let stopped = Manager::new()
///     .leader_election(LeaderElector::new(client, config)?)
///     .shutdown_on_signals()
///     .add(controller, Arc::new(()), reconcile)
///     .run()
///     .await;
/// if stopped == Stopped::LostLeadership {
///     std::process::exit(1); // restart and compete again
/// }
/// # Ok(()) }
/// ```
#[must_use]
pub struct Manager {
    elector: Option<LeaderElector>,
    shutdown: Option<BoxFuture<'static, ()>>,
    runnables: Vec<Runnable>,
}

impl fmt::Debug for Manager {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Manager")
            .field("leader_election", &self.elector.is_some())
            .field("runnables", &self.runnables.len())
            .finish_non_exhaustive()
    }
}

impl Default for Manager {
    fn default() -> Self {
        Self::new()
    }
}

impl Manager {
    /// A manager with no controllers, no leader election, and no shutdown signal (it
    /// runs until its controllers end by themselves).
    ///
    /// ```
    /// let manager = kube_codegen_runtime::controller::Manager::new();
    /// # drop(manager);
    /// ```
    pub fn new() -> Self {
        Manager {
            elector: None,
            shutdown: None,
            runnables: vec![],
        }
    }

    /// Run the controllers only while `elector` holds its Lease. On a shutdown signal the
    /// controllers drain and the Lease is released (with the elector's
    /// `release_on_cancel`, the default), so a standby takes over at once; when the Lease
    /// is lost they stop within the elector's grace and [`Manager::run`] returns
    /// [`Stopped::LostLeadership`]. Informers may run before leadership (warm caches on
    /// the standby); only reconciles wait for it.
    pub fn leader_election(mut self, elector: LeaderElector) -> Self {
        self.elector = Some(elector);
        self
    }

    /// Stop gracefully when `signal` resolves: no new keys are taken, reconciles in
    /// flight finish, then [`Manager::run`] returns [`Stopped::Shutdown`].
    ///
    /// ```
    /// # use kube_codegen_runtime::controller::Manager;
    /// let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    /// let manager = Manager::new().graceful_shutdown_on(async move { let _ = rx.await; });
    /// # drop((manager, tx));
    /// ```
    pub fn graceful_shutdown_on(
        mut self,
        signal: impl Future<Output = ()> + Send + 'static,
    ) -> Self {
        self.shutdown = Some(signal.boxed());
        self
    }

    /// Stop gracefully on SIGTERM (what the kubelet sends before killing a pod) or SIGINT,
    /// as controller-runtime's `SetupSignalHandler` does.
    ///
    /// ```
    /// let manager = kube_codegen_runtime::controller::Manager::new().shutdown_on_signals();
    /// # drop(manager);
    /// ```
    pub fn shutdown_on_signals(self) -> Self {
        self.graceful_shutdown_on(termination_signal())
    }

    /// A built controller and its reconcile, started when the manager runs (and leads).
    pub fn add<K, C, F, Fut, E>(self, controller: Controller<K>, ctx: Arc<C>, reconcile: F) -> Self
    where
        K: Resource<DynamicType = ()>
            + Clone
            + DeserializeOwned
            + fmt::Debug
            + Send
            + Sync
            + 'static,
        C: Send + Sync + 'static,
        F: Fn(Request<K>, Arc<C>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Action, E>> + Send + 'static,
        E: fmt::Display + Send + 'static,
    {
        self.add_runnable(move |stop: StopToken| async move {
            controller
                .run(ctx, reconcile, async move { stop.stopped().await })
                .await;
        })
    }

    /// Any other work that runs with the controllers (and only on the leader): it gets a
    /// [`StopToken`] and should return soon after [`StopToken::stopped`] resolves.
    ///
    /// ```
    /// # use kube_codegen_runtime::controller::{Manager, StopToken};
    /// let manager = Manager::new().add_runnable(|stop: StopToken| async move {
    ///     stop.stopped().await; // a periodic job would select on this
    /// });
    /// # drop(manager);
    /// ```
    pub fn add_runnable<F, Fut>(mut self, runnable: F) -> Self
    where
        F: FnOnce(StopToken) -> Fut + Send + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        self.runnables
            .push(Box::new(move |stop| runnable(stop).boxed()));
        self
    }

    /// The elector's view (is this replica leading, who is), for readiness checks and
    /// metrics; `None` without leader election.
    #[must_use]
    pub fn leader_handle(&self) -> Option<LeaderHandle> {
        self.elector.as_ref().map(LeaderElector::handle)
    }

    /// Run everything until shutdown, the loss of leadership, or until every runnable has
    /// ended by itself. Start the informer factory (and wait for its caches) before, or
    /// the first reconciles see objects as missing.
    pub async fn run(self) -> Stopped {
        let Manager {
            elector,
            shutdown,
            runnables,
        } = self;
        let shutdown = shutdown.unwrap_or_else(|| std::future::pending().boxed());
        match elector {
            None => run_until(runnables, shutdown).await,
            Some(elector) => {
                let (finished_tx, finished_rx) = watch::channel(false);
                // The elector leads until shutdown or loss, whatever the work does: when
                // every controller ended by itself there is nothing left to lead for.
                let mut finished = finished_rx.clone();
                let shutdown = async move {
                    tokio::select! {
                        () = shutdown => {}
                        _ = finished.wait_for(|f| *f) => {}
                    }
                };
                let callbacks = LeaderCallbacks::new(move |token| async move {
                    let stopped =
                        run_until(runnables, async move { token.cancelled().await }).await;
                    if stopped == Stopped::Finished {
                        let _ = finished_tx.send(true);
                    }
                });
                match elector.run(callbacks, shutdown).await {
                    Ended::Shutdown if *finished_rx.borrow() => Stopped::Finished,
                    Ended::Shutdown => Stopped::Shutdown,
                    Ended::LostLeadership => Stopped::LostLeadership,
                }
            }
        }
    }
}

/// Runs every runnable until `stop` resolves (then waits for them to drain) or until all
/// of them ended by themselves.
async fn run_until(runnables: Vec<Runnable>, stop: impl Future<Output = ()>) -> Stopped {
    let (tx, rx) = watch::channel(false);
    let all = futures::future::join_all(
        runnables
            .into_iter()
            .map(|r| r(StopToken(LeadershipToken::from_receiver(rx.clone())))),
    );
    let stop = std::pin::pin!(stop);
    match futures::future::select(all, stop).await {
        futures::future::Either::Left(_) => Stopped::Finished,
        futures::future::Either::Right(((), all)) => {
            let _ = tx.send(true);
            all.await;
            Stopped::Shutdown
        }
    }
}

/// SIGTERM or SIGINT.
async fn termination_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = term.recv() => tracing::info!("SIGTERM: shutting down"),
                    _ = tokio::signal::ctrl_c() => tracing::info!("SIGINT: shutting down"),
                }
            }
            Err(e) => {
                tracing::warn!(error = %e, "cannot listen for SIGTERM; only SIGINT stops the manager");
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
        tracing::info!("interrupted: shutting down");
    }
}
