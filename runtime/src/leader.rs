//! Leader election with a `coordination.k8s.io/v1` Lease, as client-go's
//! `tools/leaderelection` does it, so that of several replicas of a controller only one
//! does the work at a time.
//!
//! ```no_run
//! # async fn work(_token: kube_codegen_runtime::leader::LeadershipToken) {}
//! # async fn example(client: kube::Client) {
//! use kube_codegen_runtime::leader::{LeaderCallbacks, LeaderElectionConfig, LeaderElector};
//!
//! let config = LeaderElectionConfig::new("foo-controller", "kube-system", LeaderElectionConfig::default_identity());
//! let elector = LeaderElector::new(client, config).expect("valid config");
//! let health = elector.handle(); // is_leader() / leader() for metrics and probes
//! let callbacks = LeaderCallbacks::new(|token| async move {
//!     // Run the controller until `token.cancelled()` resolves.
//!     work(token).await
//! })
//! .on_stopped_leading(|| tracing::info!("stopped leading"))
//! .on_new_leader(|id| tracing::info!(leader = id, "new leader"));
//! let shutdown = async { tokio::signal::ctrl_c().await.ok(); };
//! let ended = elector.run(callbacks, shutdown).await;
//! # let _ = (health, ended);
//! # }
//! ```
//!
//! # Semantics (client-go's unless noted)
//!
//! - **Acquire.** Every `retry_period` (with client-go's jitter: up to 2.2 × the period) the
//!   elector reads the Lease. It creates it if absent (`holderIdentity` = identity,
//!   `leaseDurationSeconds`, `acquireTime` = `renewTime` = now, `leaseTransitions` = 0). A
//!   Lease held by someone else is taken only once it expired: the holder's
//!   `leaseDurationSeconds` passed since this elector last *saw the Lease record change*
//!   (local observation time, so clock skew between replicas does not matter). An expired
//!   or released (empty holder) Lease is taken with `leaseTransitions` + 1. Every write is
//!   an update carrying the read `resourceVersion`: of two electors racing for a Lease, one
//!   gets a 409 Conflict and tries again after `retry_period`.
//! - **Lead.** Once the Lease is ours, `on_started_leading` is called with a
//!   [`LeadershipToken`] and its future is polled *inside* [`LeaderElector::run`] (not
//!   spawned), concurrently with the renewals. The Lease is renewed every `retry_period`
//!   (an update with the last `resourceVersion`; on failure, read and retry). A work future
//!   that completes on its own does not end the leadership: the elector keeps the Lease
//!   until shutdown or loss (as client-go, whose `OnStartedLeading` returning changes
//!   nothing), so work may also be spawned elsewhere and watch a clone of the token.
//! - **Lose.** When renewals keep failing for `renew_deadline`, or a read shows another
//!   holder, the elector stops leading: [`is_leader`](LeaderHandle::is_leader) turns false
//!   and the token is cancelled at once; the work future is then polled for at most
//!   `lease_duration - renew_deadline` (time the Lease is still ours in everybody else's
//!   eyes) and dropped if it has not finished; `on_stopped_leading` is called; `run` returns
//!   [`Ended::LostLeadership`]. (client-go does not wait for or stop the work; here the
//!   work cannot outlive the leadership by more than that bound.) As in client-go, an
//!   elector that lost the Lease does not compete again: build a new one, or exit and let
//!   the replica restart.
//! - **Shut down.** When the `shutdown` future resolves, the same happens (token cancelled,
//!   work drained for at most `lease_duration - renew_deadline`), then with
//!   `release_on_cancel` the Lease is released (`holderIdentity` emptied,
//!   `leaseDurationSeconds` = 1) so another replica takes over at its next retry instead
//!   of waiting for expiry, `on_stopped_leading` is called, and `run` returns
//!   [`Ended::Shutdown`]. Shutdown before leading returns at once.
//! - **Dropped.** If the future of `run` is dropped (its task aborted), the work future is
//!   dropped with it, `is_leader` turns false, and the Lease is left to expire.
//! - `on_new_leader` is called (inline: it must not block) whenever the observed holder
//!   changes to a non-empty identity, ours included. `on_stopped_leading` is called only
//!   when this elector was leading (client-go calls it in every case).
//!
//! Time is [`tokio::time::Instant`]; Lease timestamps are wall-clock time.

use std::collections::BTreeMap;
use std::fmt;
use std::future::Future;
use std::hash::{BuildHasher, RandomState};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use futures::future::BoxFuture;
use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use k8s_openapi::jiff::Timestamp;
use kube::Client;
use kube::api::{Api, PostParams};
use parking_lot::Mutex;
use tokio::sync::watch;
use tokio::time::{Instant, sleep, timeout, timeout_at};

use crate::error::Error;
use crate::events::{EventType, Recorder, object_ref};

/// client-go's `JitterFactor` for the acquire loop.
const JITTER_FACTOR: f64 = 1.2;

/// What the elector competes for and how; [`new`](Self::new) fills in client-go's
/// defaults (15s / 10s / 2s, release on cancel).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeaderElectionConfig {
    /// The Lease's name.
    pub lease_name: String,
    /// The Lease's namespace.
    pub lease_namespace: String,
    /// This replica's identity (unique among the competitors), written to `holderIdentity`.
    pub identity: String,
    /// How long others wait, after seeing the Lease last renewed, before taking it. Whole
    /// seconds (the Lease stores seconds; a fraction is rounded down). Default 15s.
    pub lease_duration: Duration,
    /// How long the leader keeps retrying a failing renewal before giving up. Default 10s.
    pub renew_deadline: Duration,
    /// How often to try to acquire, and to renew. Default 2s.
    pub retry_period: Duration,
    /// Release the Lease on shutdown, so the next leader need not wait for it to expire.
    /// Default true.
    pub release_on_cancel: bool,
    /// Labels the Lease is created with (a shard group finds its members' Leases by them).
    /// Default none.
    pub labels: BTreeMap<String, String>,
}

impl LeaderElectionConfig {
    /// Compete for the Lease `lease_namespace/lease_name` as `identity` (unique per replica,
    /// e.g. the pod name), with client-go's default timings.
    #[must_use]
    pub fn new(
        lease_name: impl Into<String>,
        lease_namespace: impl Into<String>,
        identity: impl Into<String>,
    ) -> Self {
        LeaderElectionConfig {
            lease_name: lease_name.into(),
            lease_namespace: lease_namespace.into(),
            identity: identity.into(),
            lease_duration: Duration::from_secs(15),
            renew_deadline: Duration::from_secs(10),
            retry_period: Duration::from_secs(2),
            release_on_cancel: true,
            labels: BTreeMap::new(),
        }
    }

    /// `<hostname>_<random hex>`, the usual identity (client-go users write
    /// `hostname + "_" + uuid`). The hostname comes from `$HOSTNAME` or `/etc/hostname`.
    #[must_use]
    pub fn default_identity() -> String {
        let host = std::env::var("HOSTNAME")
            .ok()
            .or_else(|| std::fs::read_to_string("/etc/hostname").ok())
            .map(|h| h.trim().to_owned())
            .filter(|h| !h.is_empty())
            .unwrap_or_else(|| "unknown".to_owned());
        format!(
            "{host}_{:016x}",
            RandomState::new().hash_one(Instant::now())
        )
    }

    /// client-go's `NewLeaderElector` checks.
    pub fn validate(&self) -> Result<(), InvalidConfig> {
        let fail = |m: &str| Err(InvalidConfig(m.to_owned()));
        if self.lease_name.is_empty() || self.lease_namespace.is_empty() {
            return fail("lease name and namespace must not be empty");
        }
        if self.identity.is_empty() {
            return fail("identity must not be empty");
        }
        if self.lease_duration < Duration::from_secs(1) {
            return fail("lease_duration must be at least one second");
        }
        if self.lease_duration <= self.renew_deadline {
            return fail("lease_duration must be greater than renew_deadline");
        }
        if self.retry_period.is_zero() {
            return fail("retry_period must be greater than zero");
        }
        if self.renew_deadline.as_secs_f64() <= JITTER_FACTOR * self.retry_period.as_secs_f64() {
            return fail("renew_deadline must be greater than retry_period * 1.2");
        }
        Ok(())
    }

    fn lease_duration_seconds(&self) -> i32 {
        i32::try_from(self.lease_duration.as_secs()).unwrap_or(i32::MAX)
    }
}

/// A [`LeaderElectionConfig`] that [`LeaderElectionConfig::validate`] rejected.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid leader election config: {0}")]
pub struct InvalidConfig(pub String);

/// Why [`LeaderElector::run`] returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ended {
    /// The shutdown future resolved (the Lease was released if we held it and
    /// `release_on_cancel` is set).
    Shutdown,
    /// We were leading and could not renew the Lease, or someone else holds it now.
    LostLeadership,
}

/// Given to `on_started_leading`: tells the work when leadership ends. Cheap to clone.
#[derive(Clone, Debug)]
pub struct LeadershipToken {
    rx: watch::Receiver<bool>,
}

impl LeadershipToken {
    /// A token that ends when `rx` turns true (or its sender goes): the manager's stop
    /// token is the same signal.
    pub(crate) fn from_receiver(rx: watch::Receiver<bool>) -> Self {
        LeadershipToken { rx }
    }

    /// Resolves once leadership ended (lost, or shutting down): stop working.
    pub async fn cancelled(&self) {
        let mut rx = self.rx.clone();
        // An error means the elector is gone: leadership ended too.
        let _ = rx.wait_for(|cancelled| *cancelled).await;
    }

    /// Whether leadership ended.
    #[must_use]
    pub fn is_cancelled(&self) -> bool {
        *self.rx.borrow() || self.rx.has_changed().is_err()
    }
}

type StartedFn = Box<dyn FnOnce(LeadershipToken) -> BoxFuture<'static, ()> + Send>;
type StoppedFn = Box<dyn FnOnce() + Send>;
type NewLeaderFn = Box<dyn FnMut(&str) + Send>;

/// client-go's `LeaderCallbacks`.
pub struct LeaderCallbacks {
    on_started_leading: StartedFn,
    on_stopped_leading: Option<StoppedFn>,
    on_new_leader: Option<NewLeaderFn>,
}

impl fmt::Debug for LeaderCallbacks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LeaderCallbacks").finish_non_exhaustive()
    }
}

impl LeaderCallbacks {
    /// `on_started_leading` returns the work to do while leading; the work should end
    /// when [`LeadershipToken::cancelled`] resolves.
    pub fn new<F, Fut>(on_started_leading: F) -> Self
    where
        F: FnOnce(LeadershipToken) -> Fut + Send + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        LeaderCallbacks {
            on_started_leading: Box::new(move |token| Box::pin(on_started_leading(token))),
            on_stopped_leading: None,
            on_new_leader: None,
        }
    }

    /// Called once leadership ended and the work stopped.
    #[must_use]
    pub fn on_stopped_leading(mut self, f: impl FnOnce() + Send + 'static) -> Self {
        self.on_stopped_leading = Some(Box::new(f));
        self
    }

    /// Called with the holder's identity whenever the observed holder changes (must not
    /// block).
    #[must_use]
    pub fn on_new_leader(mut self, f: impl FnMut(&str) + Send + 'static) -> Self {
        self.on_new_leader = Some(Box::new(f));
        self
    }
}

/// The elector's view of the Lease, shared with its [`LeaderHandle`]s.
#[derive(Default)]
struct Shared {
    leading: AtomicBool,
    observed: Mutex<Observed>,
    /// When the last successful acquire or renewal was *sent*: the Lease is ours, in
    /// everybody's eyes, for at least `lease_duration` after it.
    renewed: Mutex<Option<Instant>>,
}

#[derive(Default)]
struct Observed {
    record: Option<Record>,
    /// When the record last changed, by the local clock.
    time: Option<Instant>,
    /// The Lease as last read or written (its resourceVersion makes the next update
    /// conditional).
    lease: Option<Lease>,
    /// The last holder reported to `on_new_leader`.
    reported: String,
}

/// The leader election record part of a Lease.
#[derive(Clone, Debug, Default, PartialEq)]
struct Record {
    holder: String,
    lease_duration_seconds: i32,
    acquire_time: Option<MicroTime>,
    renew_time: Option<MicroTime>,
    transitions: i32,
}

impl Record {
    fn of(lease: &Lease) -> Self {
        let spec = lease.spec.clone().unwrap_or_default();
        Record {
            holder: spec.holder_identity.unwrap_or_default(),
            lease_duration_seconds: spec.lease_duration_seconds.unwrap_or_default(),
            acquire_time: spec.acquire_time,
            renew_time: spec.renew_time,
            transitions: spec.lease_transitions.unwrap_or_default(),
        }
    }

    /// Writes the record into a Lease spec, keeping its other fields (strategy,
    /// preferredHolder).
    fn apply_to(&self, spec: &mut LeaseSpec) {
        spec.holder_identity = Some(self.holder.clone());
        spec.lease_duration_seconds = Some(self.lease_duration_seconds);
        spec.acquire_time = self.acquire_time.clone();
        spec.renew_time = self.renew_time.clone();
        spec.lease_transitions = Some(self.transitions);
    }
}

/// Read-only view of an elector, for metrics and health checks; cheap to clone.
#[derive(Clone)]
pub struct LeaderHandle {
    shared: Arc<Shared>,
    identity: Arc<str>,
}

impl fmt::Debug for LeaderHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LeaderHandle")
            .field("identity", &self.identity)
            .field("is_leader", &self.is_leader())
            .finish()
    }
}

impl LeaderHandle {
    /// Whether this elector is leading right now (turns false as soon as it stops, before
    /// the Lease is released).
    #[must_use]
    pub fn is_leader(&self) -> bool {
        self.shared.leading.load(Ordering::SeqCst)
    }

    /// The holder of the Lease as last observed (`None` when unknown or released). May be
    /// a holder whose Lease has expired.
    #[must_use]
    pub fn leader(&self) -> Option<String> {
        self.shared
            .observed
            .lock()
            .record
            .as_ref()
            .map(|r| r.holder.clone())
            .filter(|h| !h.is_empty())
    }

    /// When this elector's last successful acquire or renewal of the Lease was sent (by the
    /// local monotonic clock); `None` before the first. Others see the Lease held for at
    /// least `lease_duration` after it, which is what makes work fenced by the Lease safe
    /// while it is at most `renew_deadline` old.
    #[must_use]
    pub fn last_renewed(&self) -> Option<Instant> {
        *self.shared.renewed.lock()
    }

    /// This elector's identity.
    #[must_use]
    pub fn identity(&self) -> &str {
        &self.identity
    }
}

/// Competes for a Lease; see the [module docs](self).
pub struct LeaderElector {
    api: Api<Lease>,
    config: LeaderElectionConfig,
    shared: Arc<Shared>,
    recorder: Option<Recorder>,
}

impl fmt::Debug for LeaderElector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LeaderElector")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

/// Sets `leading` back to false however `run` ends (including its future being dropped).
struct LeadingGuard<'a>(&'a Shared);

impl Drop for LeadingGuard<'_> {
    fn drop(&mut self) {
        self.0.leading.store(false, Ordering::SeqCst);
    }
}

impl LeaderElector {
    /// An elector for `config`'s Lease; nothing happens until [`run`](Self::run).
    ///
    /// # Errors
    /// [`InvalidConfig`] if the timings are inconsistent (as client-go's
    /// `NewLeaderElector` checks: `lease_duration > renew_deadline > retry_period`, ...) or
    /// a name is empty.
    pub fn new(client: Client, config: LeaderElectionConfig) -> Result<Self, InvalidConfig> {
        config.validate()?;
        Ok(LeaderElector {
            api: Api::namespaced(client, &config.lease_namespace),
            config,
            shared: Arc::default(),
            recorder: None,
        })
    }

    /// Also record "became leader" / "stopped leading" Events on the Lease, as client-go
    /// does when its lock has an event recorder.
    #[must_use]
    pub fn with_event_recorder(mut self, recorder: Recorder) -> Self {
        self.recorder = Some(recorder);
        self
    }

    /// The configuration it was built with.
    #[must_use]
    pub fn config(&self) -> &LeaderElectionConfig {
        &self.config
    }

    /// A handle that outlives [`run`](Self::run) taking `self`.
    #[must_use]
    pub fn handle(&self) -> LeaderHandle {
        LeaderHandle {
            shared: self.shared.clone(),
            identity: self.config.identity.as_str().into(),
        }
    }

    /// See [`LeaderHandle::is_leader`].
    #[must_use]
    pub fn is_leader(&self) -> bool {
        self.shared.leading.load(Ordering::SeqCst)
    }

    /// See [`LeaderHandle::leader`].
    #[must_use]
    pub fn leader(&self) -> Option<String> {
        self.handle().leader()
    }

    /// Competes for the Lease until `shutdown` resolves or, once leading, until the
    /// leadership is lost; see the [module docs](self).
    pub async fn run<S>(self, callbacks: LeaderCallbacks, shutdown: S) -> Ended
    where
        S: Future<Output = ()> + Send,
    {
        let LeaderCallbacks {
            on_started_leading,
            on_stopped_leading,
            mut on_new_leader,
        } = callbacks;
        let _guard = LeadingGuard(&self.shared);
        let mut shutdown = std::pin::pin!(shutdown);

        // Acquire.
        loop {
            let acquired = tokio::select! {
                biased;
                () = &mut shutdown => return Ended::Shutdown,
                ok = self.attempt(self.config.renew_deadline) => ok,
            };
            self.report_new_leader(&mut on_new_leader);
            if acquired {
                break;
            }
            tokio::select! {
                biased;
                () = &mut shutdown => return Ended::Shutdown,
                () = sleep(jittered(self.config.retry_period)) => {}
            }
        }
        self.shared.leading.store(true, Ordering::SeqCst);
        tracing::info!(lease = %self.config.lease_name, identity = %self.config.identity, "leader election: became leader");
        self.record_event("became leader");

        // Lead.
        let (cancel, token_rx) = watch::channel(false);
        let mut work: Pin<Box<dyn Future<Output = ()> + Send>> =
            on_started_leading(LeadershipToken { rx: token_rx });
        let mut work_done = false;
        let ended = {
            let renew = self.renew_loop(&mut on_new_leader);
            let mut renew = std::pin::pin!(renew);
            loop {
                tokio::select! {
                    biased;
                    () = &mut shutdown => break Ended::Shutdown,
                    () = &mut renew => break Ended::LostLeadership,
                    () = &mut work, if !work_done => work_done = true,
                }
            }
        };

        // Step down: stop claiming, tell the work, give it a bounded time to finish.
        self.shared.leading.store(false, Ordering::SeqCst);
        let _ = cancel.send(true);
        if !work_done {
            let grace = self
                .config
                .lease_duration
                .saturating_sub(self.config.renew_deadline);
            if timeout(grace, &mut work).await.is_err() {
                tracing::warn!(lease = %self.config.lease_name, "leader election: work did not stop within {grace:?} of losing leadership; dropping it");
            }
        }
        drop(work);
        match ended {
            Ended::Shutdown => {
                tracing::info!(lease = %self.config.lease_name, identity = %self.config.identity, "leader election: shutting down");
                if self.config.release_on_cancel {
                    self.release().await;
                }
            }
            Ended::LostLeadership => {
                tracing::warn!(lease = %self.config.lease_name, identity = %self.config.identity, "leader election: lost leadership");
            }
        }
        self.record_event("stopped leading");
        if let Some(f) = on_stopped_leading {
            f();
        }
        ended
    }

    /// Renews every `retry_period`; returns when leadership is lost.
    async fn renew_loop(&self, on_new_leader: &mut Option<NewLeaderFn>) {
        loop {
            sleep(self.config.retry_period).await;
            // One renewal round, as client-go's: retry every retry_period until success or
            // renew_deadline after the round started.
            let deadline = Instant::now() + self.config.renew_deadline;
            loop {
                let renewed = timeout_at(deadline, self.attempt(self.config.renew_deadline))
                    .await
                    .unwrap_or(false);
                self.report_new_leader(on_new_leader);
                if renewed {
                    break;
                }
                if self.held_by_other() {
                    tracing::warn!(lease = %self.config.lease_name, holder = ?self.leader(), "leader election: the lease is held by someone else");
                    return;
                }
                let now = Instant::now();
                if now >= deadline {
                    tracing::warn!(lease = %self.config.lease_name, "leader election: failed to renew the lease within {:?}", self.config.renew_deadline);
                    return;
                }
                sleep((deadline - now).min(self.config.retry_period)).await;
                if Instant::now() >= deadline {
                    tracing::warn!(lease = %self.config.lease_name, "leader election: failed to renew the lease within {:?}", self.config.renew_deadline);
                    return;
                }
            }
        }
    }

    /// One `tryAcquireOrRenew`, bounded by `limit`.
    async fn attempt(&self, limit: Duration) -> bool {
        let sent = Instant::now();
        let ok = timeout(limit, self.try_acquire_or_renew()).await.unwrap_or_else(|_| {
            tracing::debug!(lease = %self.config.lease_name, "leader election: request timed out");
            false
        });
        if ok {
            *self.shared.renewed.lock() = Some(sent);
        }
        ok
    }

    /// client-go's `tryAcquireOrRenew`.
    async fn try_acquire_or_renew(&self) -> bool {
        let now = MicroTime(Timestamp::now());
        let identity = &self.config.identity;
        let mut record = Record {
            holder: identity.clone(),
            lease_duration_seconds: self.config.lease_duration_seconds(),
            acquire_time: Some(now.clone()),
            renew_time: Some(now),
            transitions: 0,
        };

        // 1. Fast path: we hold it and nobody changed it since we wrote it.
        let cached = {
            let observed = self.shared.observed.lock();
            match (&observed.record, &observed.lease) {
                (Some(r), Some(lease))
                    if r.holder == *identity && self.valid(&observed, Instant::now()) =>
                {
                    record.acquire_time = r.acquire_time.clone();
                    record.transitions = r.transitions;
                    Some(lease.clone())
                }
                _ => None,
            }
        };
        if let Some(lease) = cached {
            match self.update(lease, &record).await {
                Ok(()) => return true,
                Err(e) => {
                    tracing::debug!(lease = %self.config.lease_name, error = %e, "leader election: optimistic renewal failed, reading the lease")
                }
            }
        }

        // 2. Read, or create.
        let lease = match self.api.get_opt(&self.config.lease_name).await {
            Ok(Some(lease)) => lease,
            Ok(None) => return self.create(&record).await,
            Err(e) => {
                tracing::warn!(lease = %self.config.lease_name, error = %Error::from(e), "leader election: could not read the lease");
                return false;
            }
        };

        // 3. Held by someone else and not expired?
        let observed_now = Instant::now();
        let old = Record::of(&lease);
        {
            let mut observed = self.shared.observed.lock();
            self.observe(&mut observed, old.clone(), lease.clone(), observed_now);
            if !old.holder.is_empty()
                && old.holder != *identity
                && self.valid(&observed, observed_now)
            {
                tracing::trace!(lease = %self.config.lease_name, holder = %old.holder, "leader election: held by another holder, not expired");
                return false;
            }
        }

        // 4. Take it (or renew it the slow way).
        if old.holder == *identity {
            record.acquire_time = old.acquire_time;
            record.transitions = old.transitions;
        } else {
            record.transitions = old.transitions.saturating_add(1);
        }
        match self.update(lease, &record).await {
            Ok(()) => true,
            Err(e) if e.is_conflict() => {
                tracing::debug!(lease = %self.config.lease_name, "leader election: conflict updating the lease, someone else wrote it");
                false
            }
            Err(e) => {
                tracing::warn!(lease = %self.config.lease_name, error = %e, "leader election: could not update the lease");
                false
            }
        }
    }

    async fn create(&self, record: &Record) -> bool {
        let mut spec = LeaseSpec::default();
        record.apply_to(&mut spec);
        let lease = Lease {
            metadata: ObjectMeta {
                name: Some(self.config.lease_name.clone()),
                namespace: Some(self.config.lease_namespace.clone()),
                labels: (!self.config.labels.is_empty()).then(|| self.config.labels.clone()),
                ..ObjectMeta::default()
            },
            spec: Some(spec),
        };
        match self
            .api
            .create(&PostParams::default(), &lease)
            .await
            .map_err(Error::from)
        {
            Ok(created) => {
                let mut observed = self.shared.observed.lock();
                self.observe(&mut observed, Record::of(&created), created, Instant::now());
                true
            }
            Err(e) if e.is_already_exists() => {
                tracing::debug!(lease = %self.config.lease_name, "leader election: lease created by someone else meanwhile");
                false
            }
            Err(e) => {
                tracing::warn!(lease = %self.config.lease_name, error = %e, "leader election: could not create the lease");
                false
            }
        }
    }

    /// Writes `record` into `lease` (which carries the resourceVersion to update) and
    /// remembers what the apiserver returned.
    async fn update(&self, mut lease: Lease, record: &Record) -> Result<(), Error> {
        record.apply_to(lease.spec.get_or_insert_with(LeaseSpec::default));
        let updated = self
            .api
            .replace(&self.config.lease_name, &PostParams::default(), &lease)
            .await?;
        let mut observed = self.shared.observed.lock();
        self.observe(&mut observed, Record::of(&updated), updated, Instant::now());
        Ok(())
    }

    /// Remembers the Lease; the observation time moves only when the record changed.
    fn observe(&self, observed: &mut Observed, record: Record, lease: Lease, now: Instant) {
        if observed.record.as_ref() != Some(&record) {
            observed.record = Some(record);
            observed.time = Some(now);
        }
        observed.lease = Some(lease);
    }

    /// client-go's `isLeaseValid`: the observed holder's duration has not passed since we
    /// saw the record change.
    fn valid(&self, observed: &Observed, now: Instant) -> bool {
        match (&observed.record, observed.time) {
            (Some(r), Some(t)) => {
                t + Duration::from_secs(u64::try_from(r.lease_duration_seconds).unwrap_or(0)) > now
            }
            _ => false,
        }
    }

    fn held_by_other(&self) -> bool {
        let observed = self.shared.observed.lock();
        observed
            .record
            .as_ref()
            .is_some_and(|r| !r.holder.is_empty() && r.holder != self.config.identity)
    }

    fn report_new_leader(&self, on_new_leader: &mut Option<NewLeaderFn>) {
        let holder = {
            let mut observed = self.shared.observed.lock();
            let Some(holder) = observed.record.as_ref().map(|r| r.holder.clone()) else {
                return;
            };
            if holder.is_empty() || holder == observed.reported {
                return;
            }
            observed.reported = holder.clone();
            holder
        };
        tracing::info!(lease = %self.config.lease_name, leader = %holder, "leader election: new leader");
        if let Some(f) = on_new_leader {
            f(&holder);
        }
    }

    /// client-go's `release`: if we still hold the Lease, empty the holder and shorten the
    /// duration to one second.
    async fn release(&self) {
        let released = timeout(self.config.renew_deadline, async {
            let lease = match self.api.get_opt(&self.config.lease_name).await {
                Ok(Some(lease)) => lease,
                Ok(None) => return true,
                Err(e) => {
                    tracing::warn!(lease = %self.config.lease_name, error = %Error::from(e), "leader election: could not read the lease to release it");
                    return false;
                }
            };
            let old = Record::of(&lease);
            if old.holder != self.config.identity {
                return true;
            }
            let now = MicroTime(Timestamp::now());
            let record = Record {
                holder: String::new(),
                lease_duration_seconds: 1,
                acquire_time: Some(now.clone()),
                renew_time: Some(now),
                transitions: old.transitions,
            };
            match self.update(lease, &record).await {
                Ok(()) => true,
                Err(e) => {
                    tracing::warn!(lease = %self.config.lease_name, error = %e, "leader election: could not release the lease");
                    false
                }
            }
        })
        .await
        .unwrap_or(false);
        if released {
            tracing::info!(lease = %self.config.lease_name, "leader election: released the lease");
        }
    }

    fn record_event(&self, what: &str) {
        let Some(recorder) = &self.recorder else {
            return;
        };
        let lease = self.shared.observed.lock().lease.clone();
        if let Some(lease) = lease {
            recorder.record(
                &object_ref(&lease),
                EventType::Normal,
                "LeaderElection",
                format!("{} {what}", self.config.identity),
            );
        }
    }
}

/// client-go's `wait.Jitter(period, 1.2)`: a duration in [period, 2.2 × period).
fn jittered(period: Duration) -> Duration {
    let random = RandomState::new().hash_one(Instant::now()) as f64 / u64::MAX as f64;
    period.mul_f64(1.0 + JITTER_FACTOR * random)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_client_go_s_and_valid() {
        let c = LeaderElectionConfig::new("l", "ns", "me");
        assert_eq!(c.lease_duration, Duration::from_secs(15));
        assert_eq!(c.renew_deadline, Duration::from_secs(10));
        assert_eq!(c.retry_period, Duration::from_secs(2));
        assert!(c.release_on_cancel);
        assert_eq!(c.validate(), Ok(()));
    }

    #[test]
    fn validation_rejects_bad_timings() {
        let base = LeaderElectionConfig::new("l", "ns", "me");
        let bad = [
            LeaderElectionConfig {
                identity: String::new(),
                ..base.clone()
            },
            LeaderElectionConfig {
                lease_duration: Duration::from_secs(10),
                ..base.clone()
            },
            LeaderElectionConfig {
                renew_deadline: Duration::from_millis(2400),
                ..base.clone()
            },
            LeaderElectionConfig {
                retry_period: Duration::ZERO,
                ..base.clone()
            },
            LeaderElectionConfig {
                lease_duration: Duration::from_millis(900),
                renew_deadline: Duration::from_millis(500),
                retry_period: Duration::from_millis(100),
                ..base.clone()
            },
        ];
        for c in bad {
            assert!(c.validate().is_err(), "{c:?}");
        }
    }

    #[test]
    fn jitter_stays_in_range() {
        for _ in 0..100 {
            let d = jittered(Duration::from_millis(100));
            assert!(
                d >= Duration::from_millis(100) && d <= Duration::from_millis(220),
                "{d:?}"
            );
        }
    }

    #[test]
    fn default_identity_is_unique() {
        assert_ne!(
            LeaderElectionConfig::default_identity(),
            LeaderElectionConfig::default_identity()
        );
    }
}
