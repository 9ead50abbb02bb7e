//! Leader election against the fake API server, in real time with short durations (lease
//! 2-4s, retry 200ms). Timing assertions keep margins of several hundred milliseconds.

// Reactors return the fake server's `Result<Value, Status>` (as in tests/fake.rs).
#![allow(clippy::result_large_err)]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use k8s_openapi::api::coordination::v1::Lease;
use kube_codegen_runtime::fake::{FakeApiServer, Verb, VerbFilter, errors};
use kube_codegen_runtime::leader::{
    Ended, LeaderCallbacks, LeaderElectionConfig, LeaderElector, LeaderHandle,
};
use parking_lot::Mutex;
use serde_json::json;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tokio::time::{Instant, sleep};

const NS: &str = "kube-system";
const LEASE: &str = "foo-controller";

fn config(identity: &str, lease_secs: u64, renew_ms: u64) -> LeaderElectionConfig {
    LeaderElectionConfig {
        lease_duration: Duration::from_secs(lease_secs),
        renew_deadline: Duration::from_millis(renew_ms),
        retry_period: Duration::from_millis(200),
        ..LeaderElectionConfig::new(LEASE, NS, identity)
    }
}

fn lease(server: &FakeApiServer) -> Lease {
    server.get::<Lease>(Some(NS), LEASE).expect("lease exists")
}

fn holder(server: &FakeApiServer) -> Option<String> {
    server
        .get::<Lease>(Some(NS), LEASE)
        .and_then(|l| l.spec?.holder_identity)
}

async fn wait_until(what: &str, limit: Duration, mut cond: impl FnMut() -> bool) -> Duration {
    let start = Instant::now();
    while !cond() {
        assert!(
            start.elapsed() < limit,
            "timed out after {limit:?} waiting until {what}"
        );
        sleep(Duration::from_millis(20)).await;
    }
    start.elapsed()
}

/// What the callbacks of one elector saw.
#[derive(Default)]
struct Seen {
    started: AtomicBool,
    token_cancelled: AtomicBool,
    work_dropped: AtomicBool,
    stopped: AtomicUsize,
    new_leaders: Mutex<Vec<String>>,
}

struct DropFlag(Arc<Seen>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.work_dropped.store(true, Ordering::SeqCst);
    }
}

struct Running {
    handle: LeaderHandle,
    seen: Arc<Seen>,
    shutdown: Option<oneshot::Sender<()>>,
    task: JoinHandle<Ended>,
}

impl Running {
    async fn shutdown(mut self) -> (Ended, Arc<Seen>) {
        let _ = self.shutdown.take().unwrap().send(());
        let ended = tokio::time::timeout(Duration::from_secs(10), self.task)
            .await
            .expect("run returns")
            .unwrap();
        (ended, self.seen)
    }
}

/// Starts an elector whose work waits for the token (or, with `ignore_token`, runs forever).
fn start(server: &FakeApiServer, config: LeaderElectionConfig, ignore_token: bool) -> Running {
    let elector = LeaderElector::new(server.client(), config).unwrap();
    let handle = elector.handle();
    let seen = Arc::new(Seen::default());
    let (s1, s2, s3) = (seen.clone(), seen.clone(), seen.clone());
    let callbacks = LeaderCallbacks::new(move |token| async move {
        let _flag = DropFlag(s1.clone());
        s1.started.store(true, Ordering::SeqCst);
        if ignore_token {
            std::future::pending::<()>().await;
        }
        token.cancelled().await;
        assert!(token.is_cancelled());
        s1.token_cancelled.store(true, Ordering::SeqCst);
    })
    .on_stopped_leading(move || {
        s2.stopped.fetch_add(1, Ordering::SeqCst);
    })
    .on_new_leader(move |id| s3.new_leaders.lock().push(id.to_owned()));
    let (tx, rx) = oneshot::channel();
    let task = tokio::spawn(elector.run(callbacks, async move {
        let _ = rx.await;
    }));
    Running {
        handle,
        seen,
        shutdown: Some(tx),
        task,
    }
}

/// Samples both electors until stopped; returns how often both claimed to lead.
fn sample_exclusion(a: LeaderHandle, b: LeaderHandle) -> (Arc<AtomicBool>, JoinHandle<usize>) {
    let stop = Arc::new(AtomicBool::new(false));
    let s = stop.clone();
    let task = tokio::spawn(async move {
        let mut both = 0;
        while !s.load(Ordering::SeqCst) {
            if a.is_leader() && b.is_leader() {
                both += 1;
            }
            sleep(Duration::from_millis(2)).await;
        }
        both
    });
    (stop, task)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn single_elector_acquires_renews_and_releases() {
    let server = FakeApiServer::new();
    let a = start(&server, config("a", 2, 1500), false);
    assert_eq!(a.handle.identity(), "a");

    wait_until("a leads", Duration::from_secs(5), || a.handle.is_leader()).await;
    wait_until("the work starts", Duration::from_secs(1), || {
        a.seen.started.load(Ordering::SeqCst)
    })
    .await;
    let first = lease(&server).spec.unwrap();
    assert_eq!(first.holder_identity.as_deref(), Some("a"));
    assert_eq!(first.lease_duration_seconds, Some(2));
    assert_eq!(first.lease_transitions, Some(0));
    assert!(first.acquire_time.is_some());
    assert_eq!(a.handle.leader().as_deref(), Some("a"));

    // Renewals: renewTime moves, acquireTime and transitions stay.
    sleep(Duration::from_millis(1000)).await;
    let later = lease(&server).spec.unwrap();
    assert!(
        later.renew_time > first.renew_time,
        "{:?} > {:?}",
        later.renew_time,
        first.renew_time
    );
    assert_eq!(later.acquire_time, first.acquire_time);
    assert_eq!(later.lease_transitions, Some(0));
    assert!(a.handle.is_leader());
    assert_eq!(a.seen.stopped.load(Ordering::SeqCst), 0);
    let updates = server
        .actions()
        .iter()
        .filter(|x| x.matches(Verb::Update, "leases"))
        .count();
    assert!(
        (2..=8).contains(&updates),
        "about one renewal per 200ms, got {updates}"
    );

    let handle = a.handle.clone();
    let (ended, seen) = a.shutdown().await;
    assert_eq!(ended, Ended::Shutdown);
    assert!(!handle.is_leader());
    assert!(
        seen.token_cancelled.load(Ordering::SeqCst),
        "work was told to stop"
    );
    assert_eq!(seen.stopped.load(Ordering::SeqCst), 1);
    assert_eq!(*seen.new_leaders.lock(), ["a"]);
    // Released as client-go's ReleaseOnCancel does.
    let released = lease(&server).spec.unwrap();
    assert_eq!(released.holder_identity.as_deref(), Some(""));
    assert_eq!(released.lease_duration_seconds, Some(1));
    assert_eq!(released.lease_transitions, Some(0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_of_two_leads_and_release_hands_over_quickly() {
    let server = FakeApiServer::new();
    // Started together: both race to create the Lease; one gets AlreadyExists.
    let a = start(&server, config("a", 4, 3000), false);
    let b = start(&server, config("b", 4, 3000), false);
    let (stop, sampler) = sample_exclusion(a.handle.clone(), b.handle.clone());

    wait_until("someone leads", Duration::from_secs(5), || {
        a.handle.is_leader() || b.handle.is_leader()
    })
    .await;
    let (leader, follower) = if a.handle.is_leader() { (a, b) } else { (b, a) };
    let (leader_id, follower_id) = (
        leader.handle.identity().to_owned(),
        follower.handle.identity().to_owned(),
    );

    // The follower keeps trying but does not take a live Lease.
    sleep(Duration::from_millis(1500)).await;
    assert!(leader.handle.is_leader());
    assert!(!follower.handle.is_leader());
    assert!(!follower.seen.started.load(Ordering::SeqCst));
    assert_eq!(follower.handle.leader().as_deref(), Some(&*leader_id));
    assert_eq!(
        follower.seen.new_leaders.lock().as_slice(),
        std::slice::from_ref(&leader_id)
    );

    // The leader shuts down and releases: the follower takes over at its next retry, long
    // before the 4s lease would have expired.
    let released_at = Instant::now();
    let (ended, seen) = leader.shutdown().await;
    assert_eq!(ended, Ended::Shutdown);
    assert_eq!(seen.stopped.load(Ordering::SeqCst), 1);
    let took = wait_until("the follower leads", Duration::from_secs(3), || {
        follower.handle.is_leader()
    })
    .await;
    let took = took.max(released_at.elapsed());
    assert!(took < Duration::from_millis(2000), "takeover took {took:?}");

    let spec = lease(&server).spec.unwrap();
    assert_eq!(spec.holder_identity.as_deref(), Some(&*follower_id));
    assert_eq!(spec.lease_transitions, Some(1));
    assert_eq!(spec.lease_duration_seconds, Some(4));
    assert_eq!(*follower.seen.new_leaders.lock(), [leader_id, follower_id]);

    stop.store(true, Ordering::SeqCst);
    assert_eq!(
        sampler.await.unwrap(),
        0,
        "both electors claimed to lead at the same time"
    );
    let (ended, _) = follower.shutdown().await;
    assert_eq!(ended, Ended::Shutdown);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aborted_leader_is_replaced_after_the_lease_expires() {
    let server = FakeApiServer::new();
    let a = start(&server, config("a", 2, 1500), false);
    wait_until("a leads", Duration::from_secs(5), || a.handle.is_leader()).await;
    let b = start(&server, config("b", 2, 1500), false);
    let (stop, sampler) = sample_exclusion(a.handle.clone(), b.handle.clone());
    // Let b observe a's renewals for a while.
    sleep(Duration::from_millis(800)).await;
    assert!(!b.handle.is_leader());

    // The leader's task dies without releasing.
    a.task.abort();
    let aborted_at = Instant::now();
    let _ = a.task.await;
    assert!(
        !a.handle.is_leader(),
        "a dropped run() no longer claims leadership"
    );
    assert!(
        a.seen.work_dropped.load(Ordering::SeqCst),
        "the work is dropped with run()"
    );
    assert_eq!(a.seen.stopped.load(Ordering::SeqCst), 0);
    assert_eq!(holder(&server).as_deref(), Some("a"), "not released");

    wait_until("b leads", Duration::from_secs(6), || b.handle.is_leader()).await;
    let took = aborted_at.elapsed();
    // a renewed every ~200ms until the abort; b waits the 2s lease from when it saw the last
    // renewal (the bound leaves room for renewals slowed down by a loaded machine).
    assert!(
        took >= Duration::from_millis(1000),
        "b took over after {took:?}, before the lease expired"
    );
    assert!(
        took < Duration::from_millis(4500),
        "b took over after {took:?}"
    );
    let spec = lease(&server).spec.unwrap();
    assert_eq!(spec.holder_identity.as_deref(), Some("b"));
    assert_eq!(spec.lease_transitions, Some(1));

    stop.store(true, Ordering::SeqCst);
    assert_eq!(sampler.await.unwrap(), 0);
    b.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conflicts_on_update_are_retried() {
    let server = FakeApiServer::new();
    // A Lease released by a previous holder; the first two updates lose a race.
    server
        .add(&json!({
            "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
            "metadata": {"name": LEASE, "namespace": NS},
            "spec": {"holderIdentity": "", "leaseDurationSeconds": 1, "leaseTransitions": 3},
        }))
        .unwrap();
    let conflicts = Arc::new(AtomicUsize::new(2));
    let c = conflicts.clone();
    server.prepend_reactor(Verb::Update, "leases", move |_| {
        (c.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            .is_ok())
        .then(|| {
            Err(errors::conflict(
                "coordination.k8s.io",
                "leases",
                LEASE,
                "the object has been modified",
            ))
        })
    });

    let a = start(&server, config("a", 2, 1500), false);
    wait_until("a leads", Duration::from_secs(5), || a.handle.is_leader()).await;
    assert_eq!(conflicts.load(Ordering::SeqCst), 0);
    let spec = lease(&server).spec.unwrap();
    assert_eq!(spec.holder_identity.as_deref(), Some("a"));
    assert_eq!(spec.lease_transitions, Some(4));

    // Conflicts while renewing: the optimistic update fails, the elector re-reads and
    // renews; leadership is kept.
    conflicts.store(3, Ordering::SeqCst);
    let before = lease(&server).spec.unwrap().renew_time;
    for _ in 0..20 {
        assert!(a.handle.is_leader());
        sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(conflicts.load(Ordering::SeqCst), 0);
    assert!(lease(&server).spec.unwrap().renew_time > before);
    assert_eq!(a.seen.stopped.load(Ordering::SeqCst), 0);
    let (ended, _) = a.shutdown().await;
    assert_eq!(ended, Ended::Shutdown);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failing_renewals_end_leadership_and_stop_the_work() {
    let server = FakeApiServer::new();
    // The work ignores its token: it is dropped once the grace period (lease - renew
    // deadline = 0.5s) has passed.
    let a = start(&server, config("a", 2, 1500), true);
    wait_until("a leads", Duration::from_secs(5), || a.handle.is_leader()).await;

    let broken = Arc::new(AtomicBool::new(true));
    let br = broken.clone();
    server.prepend_reactor(VerbFilter::Any, "leases", move |_| {
        br.load(Ordering::SeqCst)
            .then(|| Err(errors::internal_error("etcd is down")))
    });
    let broken_at = Instant::now();
    wait_until("a stops leading", Duration::from_secs(5), || {
        !a.handle.is_leader()
    })
    .await;
    let took = broken_at.elapsed();
    assert!(
        took >= Duration::from_millis(1200),
        "gave up after {took:?}, before the renew deadline"
    );
    let ended = tokio::time::timeout(Duration::from_secs(3), a.task)
        .await
        .expect("run returns")
        .unwrap();
    assert_eq!(ended, Ended::LostLeadership);
    assert!(a.seen.work_dropped.load(Ordering::SeqCst));
    assert!(
        !a.seen.token_cancelled.load(Ordering::SeqCst),
        "this work never looked at its token"
    );
    assert_eq!(a.seen.stopped.load(Ordering::SeqCst), 1);
    // Nothing was released (the apiserver was unreachable): others wait for expiry.
    broken.store(false, Ordering::SeqCst);
    assert_eq!(holder(&server).as_deref(), Some("a"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn leader_that_sees_another_holder_steps_down_at_once() {
    let server = FakeApiServer::new();
    let a = start(&server, config("a", 2, 1500), false);
    wait_until("a leads", Duration::from_secs(5), || a.handle.is_leader()).await;

    // Someone overwrites the Lease (e.g. an operator, or a replica with a skewed view).
    let mut l = lease(&server);
    l.metadata.resource_version = None;
    let spec = l.spec.as_mut().unwrap();
    spec.holder_identity = Some("intruder".into());
    spec.lease_duration_seconds = Some(30);
    server.add(&l).unwrap();

    let took = wait_until("a stops leading", Duration::from_secs(3), || {
        !a.handle.is_leader()
    })
    .await;
    assert!(took < Duration::from_millis(1200), "{took:?}");
    let ended = tokio::time::timeout(Duration::from_secs(3), a.task)
        .await
        .expect("run returns")
        .unwrap();
    assert_eq!(ended, Ended::LostLeadership);
    assert!(a.seen.token_cancelled.load(Ordering::SeqCst));
    assert_eq!(a.seen.stopped.load(Ordering::SeqCst), 1);
    assert_eq!(*a.seen.new_leaders.lock(), ["a", "intruder"]);
    assert_eq!(holder(&server).as_deref(), Some("intruder"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_before_leading_returns_without_callbacks() {
    let server = FakeApiServer::new();
    server
        .add(&json!({
            "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
            "metadata": {"name": LEASE, "namespace": NS},
            "spec": {"holderIdentity": "other", "leaseDurationSeconds": 60},
        }))
        .unwrap();
    let b = start(&server, config("b", 2, 1500), false);
    sleep(Duration::from_millis(500)).await;
    assert!(!b.handle.is_leader());
    assert_eq!(b.handle.leader().as_deref(), Some("other"));
    let (ended, seen) = b.shutdown().await;
    assert_eq!(ended, Ended::Shutdown);
    assert!(!seen.started.load(Ordering::SeqCst));
    assert_eq!(seen.stopped.load(Ordering::SeqCst), 0);
    assert_eq!(*seen.new_leaders.lock(), ["other"]);
    assert_eq!(
        holder(&server).as_deref(),
        Some("other"),
        "a lease we do not hold is not released"
    );
}

#[test]
fn invalid_config_is_rejected() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let server = FakeApiServer::new();
        let bad = LeaderElectionConfig {
            renew_deadline: Duration::from_secs(20),
            ..LeaderElectionConfig::new(LEASE, NS, "a")
        };
        assert!(LeaderElector::new(server.client(), bad).is_err());
    });
}
