//! The controller builder against the in-memory fake API server: what is enqueued by whom,
//! predicates, actions, per-key backoff, panics, concurrency and graceful shutdown.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kube::api::{Api, DeleteParams, PostParams};
use kube::core::PartialObjectMeta;
use kube_codegen_runtime::controller::{Action, Builder, Metrics, Predicate, Request};
use kube_codegen_runtime::fake::FakeApiServer;
use kube_codegen_runtime::informer::SharedInformerFactory;
use kube_codegen_runtime::store::ObjectKey;
use parking_lot::Mutex;
use tokio::sync::oneshot;

fn deployment(name: &str) -> Deployment {
    let mut d = Deployment::default();
    d.metadata.namespace = Some("ns".into());
    d.metadata.name = Some(name.into());
    d
}

fn config_map(name: &str, owner: Option<&str>, controller: bool) -> ConfigMap {
    let mut c = ConfigMap::default();
    c.metadata.namespace = Some("ns".into());
    c.metadata.name = Some(name.into());
    c.metadata.owner_references = owner.map(|o| {
        vec![OwnerReference {
            api_version: "apps/v1".into(),
            kind: "Deployment".into(),
            name: o.into(),
            uid: "uid".into(),
            controller: Some(controller),
            block_owner_deletion: None,
        }]
    });
    c
}

/// A Secret labelled `for=<deployment>`, which the watching controllers map to that key.
fn secret_for(deployment: &str) -> Secret {
    let mut s = Secret::default();
    s.metadata.namespace = Some("ns".into());
    s.metadata.name = Some("s".into());
    s.metadata.labels = Some(BTreeMap::from([("for".to_owned(), deployment.to_owned())]));
    s
}

/// The watching controllers' mapping: the Deployment a Secret's `for` label names.
fn for_label(meta: &ObjectMeta) -> Vec<ObjectKey> {
    meta.labels
        .as_ref()
        .and_then(|l| l.get("for"))
        .map(|d| vec![ObjectKey::namespaced("ns", d)])
        .unwrap_or_default()
}

/// What reconciles saw: (key, whether the object was there), in order.
type Seen = Arc<Mutex<Vec<(String, bool)>>>;

async fn wait_until(what: &str, mut f: impl FnMut() -> bool) {
    for _ in 0..400 {
        if f() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("timed out waiting for {what}");
}

struct Running {
    stop: Option<oneshot::Sender<()>>,
    done: tokio::task::JoinHandle<()>,
    metrics: Arc<Metrics>,
}

impl Running {
    async fn stop(mut self) {
        let _ = self.stop.take().unwrap().send(());
        tokio::time::timeout(Duration::from_secs(5), self.done)
            .await
            .expect("the controller stops on shutdown")
            .unwrap();
    }
}

/// A Deployment controller owning ConfigMaps and watching Secrets by a label, recording
/// what it reconciles; `behave` decides the result per key.
async fn start(
    server: &FakeApiServer,
    seen: &Seen,
    predicate: Option<Predicate<Deployment>>,
    behave: impl Fn(&str) -> Result<Action, String> + Send + Sync + 'static,
) -> Running {
    let factory = SharedInformerFactory::new(server.client());
    let mut builder = Builder::for_kind(factory.informer_for::<Deployment>())
        .owns(factory.informer_for::<ConfigMap>())
        .watches(factory.informer_for::<Secret>(), |s: &Secret| {
            for_label(&s.metadata)
        })
        .max_concurrent_reconciles(2);
    if let Some(p) = predicate {
        builder = builder.with_predicate(p);
    }
    let controller = builder.build();
    let metrics = controller.metrics();
    factory.start();
    factory
        .wait_for_cache_sync(Duration::from_secs(5))
        .await
        .unwrap();
    let (tx, rx) = oneshot::channel();
    let seen = seen.clone();
    let behave = Arc::new(behave);
    let done = tokio::spawn(async move {
        controller
            .run(
                Arc::new(()),
                move |req: Request<Deployment>, _ctx: Arc<()>| {
                    let seen = seen.clone();
                    let behave = behave.clone();
                    async move {
                        let name = req.key.name().to_owned();
                        seen.lock()
                            .push((req.key.to_string(), req.object.is_some()));
                        behave(&name)
                    }
                },
                async {
                    let _ = rx.await;
                },
            )
            .await;
        factory.shutdown();
    });
    Running {
        stop: Some(tx),
        done,
        metrics,
    }
}

fn count(seen: &Seen, key: &str) -> usize {
    seen.lock().iter().filter(|(k, _)| k == key).count()
}

#[tokio::test]
async fn primary_owned_and_watched_objects_enqueue_the_right_key() {
    let server = FakeApiServer::new();
    let seen: Seen = Default::default();
    let run = start(&server, &seen, None, |_| Ok(Action::Done)).await;
    let client = server.client();
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), "ns");
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "ns");
    let secrets: Api<Secret> = Api::namespaced(client, "ns");
    let pp = PostParams::default();

    deployments.create(&pp, &deployment("web")).await.unwrap();
    wait_until("the primary's reconcile", || count(&seen, "ns/web") == 1).await;

    // An owned object enqueues its controller owner; a non-controller owner reference and
    // an owner of another kind enqueue nothing.
    cms.create(&pp, &config_map("cm1", Some("web"), true))
        .await
        .unwrap();
    wait_until("the owner's reconcile", || count(&seen, "ns/web") == 2).await;
    cms.create(&pp, &config_map("cm2", Some("web"), false))
        .await
        .unwrap();
    cms.create(&pp, &config_map("cm3", None, false))
        .await
        .unwrap();

    // A watched object maps to a key, here of a Deployment that does not exist: the
    // reconcile sees no object, which is not an error.
    secrets.create(&pp, &secret_for("ghost")).await.unwrap();
    wait_until("the mapped key's reconcile", || {
        count(&seen, "ns/ghost") == 1
    })
    .await;
    assert!(seen.lock().contains(&("ns/ghost".to_owned(), false)));

    // Deleting the primary reconciles it once more, without an object.
    deployments
        .delete("web", &DeleteParams::default())
        .await
        .unwrap();
    wait_until("the deletion's reconcile", || {
        seen.lock().contains(&("ns/web".to_owned(), false))
    })
    .await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    // cm2 and cm3 added nothing: web was reconciled for its creation, cm1, and its deletion.
    assert_eq!(count(&seen, "ns/web"), 3, "{:?}", seen.lock());
    assert_eq!(run.metrics.errors(), 0);
    run.stop().await;
}

/// controller-runtime's `builder.OnlyMetadata`: the owned and watched kinds are cached from
/// the fake server's `PartialObjectMetadata` answers (it sends them only when asked with
/// `as=PartialObjectMetadata`), and their events enqueue the same keys as whole objects'.
#[tokio::test]
async fn metadata_only_owned_and_watched_objects_enqueue_the_right_key() {
    let server = FakeApiServer::new();
    let factory = SharedInformerFactory::new(server.client());
    let controller = Builder::for_kind(factory.informer_for::<Deployment>())
        .owns_metadata::<ConfigMap>(&factory)
        .watches_metadata::<Secret>(&factory, |s: &PartialObjectMeta<Secret>| {
            for_label(&s.metadata)
        })
        .build();
    factory.start();
    factory
        .wait_for_cache_sync(Duration::from_secs(5))
        .await
        .unwrap();
    let seen: Seen = Default::default();
    let s = seen.clone();
    let (tx, rx) = oneshot::channel::<()>();
    let done = tokio::spawn(controller.run(
        Arc::new(()),
        move |req: Request<Deployment>, _ctx: Arc<()>| {
            s.lock().push((req.key.to_string(), req.object.is_some()));
            async { Ok::<_, String>(Action::Done) }
        },
        async move {
            let _ = rx.await;
        },
    ));
    let client = server.client();
    let pp = PostParams::default();
    Api::<Deployment>::namespaced(client.clone(), "ns")
        .create(&pp, &deployment("web"))
        .await
        .unwrap();
    wait_until("the primary's reconcile", || count(&seen, "ns/web") == 1).await;

    let mut owned = config_map("cm1", Some("web"), true);
    owned.data = Some(BTreeMap::from([("big".to_owned(), "x".repeat(1000))]));
    Api::<ConfigMap>::namespaced(client.clone(), "ns")
        .create(&pp, &owned)
        .await
        .unwrap();
    wait_until("the owner's reconcile", || count(&seen, "ns/web") == 2).await;

    Api::<Secret>::namespaced(client, "ns")
        .create(&pp, &secret_for("ghost"))
        .await
        .unwrap();
    wait_until("the mapped key's reconcile", || {
        count(&seen, "ns/ghost") == 1
    })
    .await;

    // The builder's informers are the factory's metadata-only ones (asking again shares
    // them), and they cache what the server sent for `as=PartialObjectMetadata`.
    let cms = factory.metadata_informer_for::<ConfigMap>();
    assert!(cms.has_synced());
    let cached = cms
        .lister()
        .get(&ObjectKey::namespaced("ns", "cm1"))
        .expect("cm1 cached");
    let types = cached.types.as_ref().expect("apiVersion and kind");
    assert_eq!(
        (types.api_version.as_str(), types.kind.as_str()),
        ("meta.k8s.io/v1", "PartialObjectMetadata")
    );
    assert_eq!(
        cached.metadata.owner_references.as_ref().unwrap()[0].name,
        "web"
    );
    let secrets = factory.metadata_informer_for::<Secret>();
    assert_eq!(secrets.lister().list_all().len(), 1);
    let _ = tx.send(());
    tokio::time::timeout(Duration::from_secs(5), done)
        .await
        .expect("the controller stops on shutdown")
        .unwrap();
    factory.shutdown();
}

#[tokio::test]
async fn the_generation_predicate_skips_metadata_only_updates() {
    let server = FakeApiServer::new();
    let seen: Seen = Default::default();
    let run = start(&server, &seen, Some(Predicate::GenerationChanged), |_| {
        Ok(Action::Done)
    })
    .await;
    let deployments: Api<Deployment> = Api::namespaced(server.client(), "ns");
    let pp = PostParams::default();
    let created = deployments.create(&pp, &deployment("web")).await.unwrap();
    wait_until("the creation's reconcile", || count(&seen, "ns/web") == 1).await;

    // A label change: no new generation, no reconcile.
    let mut labeled = created.clone();
    labeled.metadata.labels = Some(BTreeMap::from([("a".to_owned(), "b".to_owned())]));
    let labeled = deployments.replace("web", &pp, &labeled).await.unwrap();
    assert_eq!(labeled.metadata.generation, created.metadata.generation);
    tokio::time::sleep(Duration::from_millis(150)).await;
    assert_eq!(count(&seen, "ns/web"), 1);

    // A spec change bumps the generation: reconciled.
    let mut scaled = labeled.clone();
    scaled.spec.replicas = Some(3);
    deployments.replace("web", &pp, &scaled).await.unwrap();
    wait_until("the spec change's reconcile", || {
        count(&seen, "ns/web") == 2
    })
    .await;
    run.stop().await;
}

#[tokio::test]
async fn errors_and_panics_are_retried_with_backoff_and_the_controller_keeps_running() {
    let server = FakeApiServer::new();
    let seen: Seen = Default::default();
    let attempts = Arc::new(AtomicUsize::new(0));
    let a = attempts.clone();
    let run = start(&server, &seen, None, move |name| match name {
        // Fails twice (once by panicking), then succeeds.
        "flaky" => match a.fetch_add(1, Ordering::SeqCst) {
            0 => Err("the API said no".into()),
            1 => panic!("reconcile bug"),
            _ => Ok(Action::Done),
        },
        _ => Ok(Action::Done),
    })
    .await;
    let deployments: Api<Deployment> = Api::namespaced(server.client(), "ns");
    let pp = PostParams::default();
    deployments.create(&pp, &deployment("flaky")).await.unwrap();
    wait_until("the third attempt", || count(&seen, "ns/flaky") == 3).await;
    // The panic did not stop the workers: another key still reconciles.
    deployments.create(&pp, &deployment("other")).await.unwrap();
    wait_until("another key", || count(&seen, "ns/other") == 1).await;
    assert_eq!(run.metrics.errors(), 2);
    assert_eq!(run.metrics.panics(), 1);
    assert_eq!(run.metrics.success(), 2);
    // The same counts under controller-runtime's metric names.
    let text = run.metrics.render_prometheus("deployment");
    for line in [
        "controller_runtime_reconcile_total{controller=\"deployment\",result=\"success\"} 2",
        "controller_runtime_reconcile_total{controller=\"deployment\",result=\"error\"} 2",
        "controller_runtime_reconcile_errors_total{controller=\"deployment\"} 2",
        "controller_runtime_reconcile_panics_total{controller=\"deployment\"} 1",
        "controller_runtime_reconcile_time_seconds_bucket{controller=\"deployment\",le=\"+Inf\"} 4",
        "controller_runtime_reconcile_time_seconds_count{controller=\"deployment\"} 4",
    ] {
        assert!(text.lines().any(|l| l == line), "{line} not in:\n{text}");
    }
    run.stop().await;
}

#[tokio::test]
async fn requeue_after_reconciles_again_and_done_stops() {
    let server = FakeApiServer::new();
    let seen: Seen = Default::default();
    let n = Arc::new(AtomicUsize::new(0));
    let m = n.clone();
    let run = start(&server, &seen, None, move |_| {
        if m.fetch_add(1, Ordering::SeqCst) < 2 {
            Ok(Action::RequeueAfter(Duration::from_millis(30)))
        } else {
            Ok(Action::Done)
        }
    })
    .await;
    let deployments: Api<Deployment> = Api::namespaced(server.client(), "ns");
    deployments
        .create(&PostParams::default(), &deployment("web"))
        .await
        .unwrap();
    wait_until("three reconciles", || count(&seen, "ns/web") == 3).await;
    tokio::time::sleep(Duration::from_millis(150)).await;
    assert_eq!(count(&seen, "ns/web"), 3, "Done ends the requeues");
    assert_eq!(run.metrics.requeue_after(), 2);
    run.stop().await;
}

#[tokio::test]
async fn one_key_is_never_reconciled_twice_at_once() {
    let server = FakeApiServer::new();
    let factory = SharedInformerFactory::new(server.client());
    let controller = Builder::for_kind(factory.informer_for::<ConfigMap>())
        .max_concurrent_reconciles(4)
        .build();
    let queue = controller.queue().clone();
    factory.start();
    factory
        .wait_for_cache_sync(Duration::from_secs(5))
        .await
        .unwrap();
    let in_flight: Arc<Mutex<BTreeMap<String, usize>>> = Default::default();
    let max_seen: Arc<AtomicUsize> = Default::default();
    let total: Arc<AtomicUsize> = Default::default();
    let (tx, rx) = oneshot::channel::<()>();
    let (f, mx, t) = (in_flight.clone(), max_seen.clone(), total.clone());
    let done = tokio::spawn(async move {
        controller
            .run(
                Arc::new(()),
                move |req: Request<ConfigMap>, _: Arc<()>| {
                    let (f, mx, t) = (f.clone(), mx.clone(), t.clone());
                    async move {
                        let k = req.key.to_string();
                        let now = {
                            let mut g = f.lock();
                            let e = g.entry(k.clone()).or_default();
                            *e += 1;
                            *e
                        };
                        mx.fetch_max(now, Ordering::SeqCst);
                        tokio::time::sleep(Duration::from_millis(5)).await;
                        *f.lock().get_mut(&k).unwrap() -= 1;
                        t.fetch_add(1, Ordering::SeqCst);
                        Ok::<_, String>(Action::Done)
                    }
                },
                async {
                    let _ = rx.await;
                },
            )
            .await;
    });
    for round in 0..20 {
        for k in 0..3 {
            queue.add(ObjectKey::namespaced("ns", format!("k{k}")));
        }
        if round % 5 == 0 {
            tokio::time::sleep(Duration::from_millis(3)).await;
        }
    }
    wait_until("the keys to drain", || {
        queue.is_empty() && total.load(Ordering::SeqCst) >= 3
    })
    .await;
    let _ = tx.send(());
    tokio::time::timeout(Duration::from_secs(5), done)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(max_seen.load(Ordering::SeqCst), 1);
    factory.shutdown();
}

mod finalizers {
    use super::*;
    use kube_codegen_runtime::controller::{FinalizerError, FinalizerEvent, finalizer};

    const NAME: &str = "example.com/cleanup";

    #[tokio::test]
    async fn added_before_apply_and_removed_only_after_a_successful_cleanup() {
        let server = FakeApiServer::new();
        let cms: Api<ConfigMap> = Api::namespaced(server.client(), "ns");
        let created = cms
            .create(&PostParams::default(), &config_map("cm", None, false))
            .await
            .unwrap();

        // A live object without the finalizer: it is added, then Apply sees it on.
        let action = finalizer(&cms, NAME, Arc::new(created), |e| async move {
            match e {
                FinalizerEvent::Apply(o) => {
                    assert_eq!(
                        o.metadata.finalizers.as_deref(),
                        Some(&[NAME.to_owned()][..])
                    );
                    Ok::<_, String>(Action::Done)
                }
                FinalizerEvent::Cleanup(_) => panic!("not deleted"),
            }
        })
        .await
        .unwrap();
        assert_eq!(action, Action::Done);

        // Deleted: the object stays while the finalizer is on it.
        cms.delete("cm", &DeleteParams::default()).await.unwrap();
        let deleting = cms.get("cm").await.unwrap();
        assert!(deleting.metadata.deletion_timestamp.is_some());

        // A failing cleanup keeps the finalizer (and the object).
        let err = finalizer(&cms, NAME, Arc::new(deleting.clone()), |e| async move {
            assert!(matches!(e, FinalizerEvent::Cleanup(_)));
            Err::<Action, _>("the bucket is still there".to_owned())
        })
        .await
        .unwrap_err();
        assert!(matches!(err, FinalizerError::Reconcile(_)));
        assert!(cms.get("cm").await.is_ok());

        // A successful cleanup removes it, and the object goes.
        let action = finalizer(&cms, NAME, Arc::new(deleting), |_| async {
            Ok::<_, String>(Action::Done)
        })
        .await
        .unwrap();
        assert_eq!(action, Action::Done);
        assert!(cms.get_opt("cm").await.unwrap().is_none());
    }

    #[tokio::test]
    async fn adding_to_a_changed_object_is_a_conflict_not_a_lost_update() {
        let server = FakeApiServer::new();
        let cms: Api<ConfigMap> = Api::namespaced(server.client(), "ns");
        let mut c = config_map("cm", None, false);
        c.metadata.finalizers = Some(vec!["other.io/keep".into()]);
        let stale = cms.create(&PostParams::default(), &c).await.unwrap();
        // Someone else changes the object after our cache saw it.
        let mut fresh = stale.clone();
        fresh.data = Some(BTreeMap::from([("k".to_owned(), "v".to_owned())]));
        cms.replace("cm", &PostParams::default(), &fresh)
            .await
            .unwrap();
        let err = finalizer(&cms, NAME, Arc::new(stale), |_| async {
            Ok::<_, String>(Action::Done)
        })
        .await
        .unwrap_err();
        assert!(matches!(err, FinalizerError::Patch(_)), "{err}");
        // Nothing was written: the other finalizer and the data are intact, ours absent.
        let now = cms.get("cm").await.unwrap();
        assert_eq!(
            now.metadata.finalizers,
            Some(vec!["other.io/keep".to_owned()])
        );
        assert!(now.data.is_some());
    }
}

mod manager {
    use super::*;
    use futures::future::BoxFuture;
    use k8s_openapi::api::coordination::v1::Lease;
    use kube_codegen_runtime::controller::{Manager, Stopped};
    use kube_codegen_runtime::leader::{LeaderElectionConfig, LeaderElector};

    type Reconcile = Arc<
        dyn Fn(Request<Deployment>, Arc<()>) -> BoxFuture<'static, Result<Action, String>>
            + Send
            + Sync,
    >;

    /// A Deployment controller whose reconciles take `work` each and record their key
    /// when they finish.
    fn slow_controller(
        factory: &SharedInformerFactory,
        finished: &Seen,
        work: Duration,
    ) -> (
        kube_codegen_runtime::controller::Controller<Deployment>,
        Reconcile,
    ) {
        use futures::FutureExt;
        let controller = Builder::for_kind(factory.informer_for::<Deployment>())
            .max_concurrent_reconciles(4)
            .build();
        let finished = finished.clone();
        let reconcile: Reconcile = Arc::new(move |req: Request<Deployment>, _: Arc<()>| {
            let finished = finished.clone();
            async move {
                tokio::time::sleep(work).await;
                finished.lock().push((req.key.to_string(), true));
                Ok(Action::Done)
            }
            .boxed()
        });
        (controller, reconcile)
    }

    #[tokio::test]
    async fn graceful_shutdown_lets_reconciles_in_flight_finish() {
        let server = FakeApiServer::new();
        let deployments: Api<Deployment> = Api::namespaced(server.client(), "ns");
        for i in 0..8 {
            deployments
                .create(&PostParams::default(), &deployment(&format!("d{i}")))
                .await
                .unwrap();
        }
        let factory = SharedInformerFactory::new(server.client());
        let finished: Seen = Arc::default();
        let (controller, reconcile) =
            slow_controller(&factory, &finished, Duration::from_millis(300));
        let queue = controller.queue().clone();
        factory.start();
        factory
            .wait_for_cache_sync(Duration::from_secs(5))
            .await
            .unwrap();
        let (tx, rx) = oneshot::channel::<()>();
        let run = tokio::spawn(
            Manager::new()
                .graceful_shutdown_on(async move {
                    let _ = rx.await;
                })
                .add(controller, Arc::new(()), move |r, c| reconcile(r, c))
                .run(),
        );
        // Four are in flight (4 workers, 300 ms each) and four queued when the signal comes.
        wait_until("four reconciles started", || {
            queue.metrics().processing >= 4
        })
        .await;
        tokio::time::sleep(Duration::from_millis(50)).await;
        tx.send(()).unwrap();
        let stopped = tokio::time::timeout(Duration::from_secs(5), run)
            .await
            .expect("the manager stops")
            .unwrap();
        assert_eq!(stopped, Stopped::Shutdown);
        // The four in flight finished; the four still queued were not started (they
        // would hold the shutdown up for as long as the queue is long).
        let done = finished.lock().clone();
        assert_eq!(
            done.len(),
            4,
            "reconciles in flight were cut off, or queued ones started: {done:?}"
        );
        // Stopped means stopped: a new object is not reconciled.
        deployments
            .create(&PostParams::default(), &deployment("late"))
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(400)).await;
        assert_eq!(count(&finished, "ns/late"), 0);
        factory.shutdown();
    }

    fn elector(server: &FakeApiServer, identity: &str) -> LeaderElector {
        let config = LeaderElectionConfig {
            lease_duration: Duration::from_secs(2),
            renew_deadline: Duration::from_millis(1500),
            retry_period: Duration::from_millis(100),
            ..LeaderElectionConfig::new("managers", "ns", identity)
        };
        LeaderElector::new(server.client(), config).unwrap()
    }

    fn holder(server: &FakeApiServer) -> Option<String> {
        server
            .get::<Lease>(Some("ns"), "managers")
            .and_then(|l| l.spec?.holder_identity)
            .filter(|h| !h.is_empty())
    }

    #[tokio::test]
    async fn only_the_leader_reconciles_and_a_shutdown_hands_over_at_once() {
        let server = FakeApiServer::new();
        let deployments: Api<Deployment> = Api::namespaced(server.client(), "ns");
        deployments
            .create(&PostParams::default(), &deployment("d"))
            .await
            .unwrap();
        let start = |identity: &'static str, finished: Seen| {
            let factory = SharedInformerFactory::new(server.client());
            let (controller, reconcile) = slow_controller(&factory, &finished, Duration::ZERO);
            let manager = Manager::new().leader_election(elector(&server, identity));
            let handle = manager.leader_handle().expect("leader election is on");
            let (tx, rx) = oneshot::channel::<()>();
            let manager = manager
                .graceful_shutdown_on(async move {
                    let _ = rx.await;
                })
                .add(controller, Arc::new(()), move |r, c| reconcile(r, c));
            factory.start();
            let run = tokio::spawn(async move {
                let stopped = manager.run().await;
                factory.shutdown();
                stopped
            });
            (handle, tx, run)
        };
        let (a_seen, b_seen): (Seen, Seen) = (Arc::default(), Arc::default());
        let (a, a_stop, a_run) = start("a", a_seen.clone());
        wait_until("a leads", || a.is_leader()).await;
        let (b, b_stop, b_run) = start("b", b_seen.clone());
        wait_until("a reconciled d", || count(&a_seen, "ns/d") == 1).await;
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert!(!b.is_leader());
        assert_eq!(count(&b_seen, "ns/d"), 0, "the standby reconciled");

        // A graceful stop releases the Lease: b takes over well before it would expire.
        let released = std::time::Instant::now();
        a_stop.send(()).unwrap();
        assert_eq!(a_run.await.unwrap(), Stopped::Shutdown);
        wait_until("b leads", || b.is_leader()).await;
        assert!(
            released.elapsed() < Duration::from_millis(1500),
            "b waited for the lease to expire: {:?}",
            released.elapsed()
        );
        assert_eq!(holder(&server).as_deref(), Some("b"));
        wait_until("b reconciled d", || count(&b_seen, "ns/d") == 1).await;
        b_stop.send(()).unwrap();
        assert_eq!(b_run.await.unwrap(), Stopped::Shutdown);
        assert_eq!(holder(&server), None, "the lease was not released");
    }

    #[tokio::test]
    async fn a_manager_whose_controllers_end_returns_finished() {
        let server = FakeApiServer::new();
        let factory = SharedInformerFactory::new(server.client());
        let (controller, reconcile) = slow_controller(&factory, &Arc::default(), Duration::ZERO);
        let queue = controller.queue().clone();
        factory.start();
        let run = tokio::spawn(
            Manager::new()
                .leader_election(elector(&server, "solo"))
                .add(controller, Arc::new(()), move |r, c| reconcile(r, c))
                .run(),
        );
        tokio::time::sleep(Duration::from_millis(300)).await;
        queue.shutdown_with_drain().await;
        let stopped = tokio::time::timeout(Duration::from_secs(5), run)
            .await
            .expect("the manager returns once its controllers ended")
            .unwrap();
        assert_eq!(stopped, Stopped::Finished);
        factory.shutdown();
    }
}

mod owned {
    use super::*;
    use kube_codegen_runtime::client::{ApplyOptions, ResourceClient};
    use kube_codegen_runtime::controller::{
        OperationResult, OwnedError, apply_owned, create_or_update, set_controller_reference,
    };
    use kube_codegen_runtime::fake::Verb;

    async fn owner(server: &FakeApiServer) -> Deployment {
        Api::<Deployment>::namespaced(server.client(), "ns")
            .create(&PostParams::default(), &deployment("web"))
            .await
            .unwrap()
    }

    fn with_data(cm: &mut ConfigMap, value: &str) {
        cm.data
            .get_or_insert_with(Default::default)
            .insert("mode".into(), value.into());
    }

    #[tokio::test]
    async fn create_or_update_creates_then_updates_only_on_change() {
        let server = FakeApiServer::new();
        let owner = owner(&server).await;
        let cms = ResourceClient::<ConfigMap>::namespaced(server.client(), "ns");
        let wanted = || config_map("cfg", None, false);
        let mutate = |value: &'static str| {
            let owner = owner.clone();
            move |cm: &mut ConfigMap| {
                with_data(cm, value);
                set_controller_reference(&owner, cm).unwrap();
            }
        };

        let (result, created) = create_or_update(&cms, wanted(), mutate("fast"))
            .await
            .unwrap();
        assert_eq!(result, OperationResult::Created);
        let refs = created.metadata.owner_references.clone().unwrap();
        assert_eq!(refs.len(), 1);
        assert_eq!(refs[0].uid, owner.metadata.uid.clone().unwrap());
        assert_eq!(refs[0].controller, Some(true));
        assert_eq!(refs[0].block_owner_deletion, Some(true));

        server.clear_actions();
        let (result, same) = create_or_update(&cms, wanted(), mutate("fast"))
            .await
            .unwrap();
        assert_eq!(result, OperationResult::Unchanged);
        assert_eq!(
            same.metadata.resource_version,
            created.metadata.resource_version
        );
        assert!(
            server.actions().iter().all(|a| a.verb == Verb::Get),
            "an unchanged object was written: {:?}",
            server.actions()
        );

        let (result, updated) = create_or_update(&cms, wanted(), mutate("slow"))
            .await
            .unwrap();
        assert_eq!(result, OperationResult::Updated);
        assert_eq!(updated.data.unwrap()["mode"], "slow");
        // The one owner reference was refreshed, not duplicated.
        assert_eq!(updated.metadata.owner_references.unwrap().len(), 1);
    }

    #[tokio::test]
    async fn create_or_update_refuses_a_rename_and_writes_nothing() {
        let server = FakeApiServer::new();
        let cms = ResourceClient::<ConfigMap>::namespaced(server.client(), "ns");
        let err = create_or_update(&cms, config_map("cfg", None, false), |cm| {
            cm.metadata.name = Some("other".into());
        })
        .await
        .unwrap_err();
        assert!(matches!(err, OwnedError::IdentityChanged { .. }), "{err}");
        assert!(server.list::<ConfigMap>(Some("ns")).is_empty());
    }

    #[tokio::test]
    async fn set_controller_reference_refuses_a_second_controller() {
        let server = FakeApiServer::new();
        let owner = owner(&server).await;
        let mut cm = config_map("cfg", Some("someone-else"), true);
        let err = set_controller_reference(&owner, &mut cm).unwrap_err();
        assert!(
            matches!(&err, OwnedError::AlreadyOwned { name, .. } if name == "someone-else"),
            "{err}"
        );
        // An owner never read from the server has no uid to reference.
        let err = set_controller_reference(&deployment("unsaved"), &mut ConfigMap::default())
            .unwrap_err();
        assert!(matches!(err, OwnedError::OwnerWithoutUid(_)), "{err}");
    }

    #[tokio::test]
    async fn apply_owned_sets_the_controller_reference_under_the_field_manager() {
        let server = FakeApiServer::new();
        let owner = owner(&server).await;
        let cms = ResourceClient::<ConfigMap>::namespaced(server.client(), "ns");
        let config = serde_json::json!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "cfg", "ownerReferences": [
                {"apiVersion": "v1", "kind": "Secret", "name": "keep", "uid": "other-uid"}
            ]},
            "data": {"mode": "fast"},
        });
        let options = ApplyOptions::new("web-controller").force();
        let applied = apply_owned(&cms, &owner, &config, &options).await.unwrap();
        let refs = applied.metadata.owner_references.clone().unwrap();
        assert_eq!(refs.len(), 2, "{refs:?}");
        let controller = refs.iter().find(|r| r.controller == Some(true)).unwrap();
        assert_eq!(
            (controller.kind.as_str(), controller.name.as_str()),
            ("Deployment", "web")
        );
        assert_eq!(controller.uid, owner.metadata.uid.clone().unwrap());
        let managers: Vec<String> = applied
            .metadata
            .managed_fields
            .unwrap_or_default()
            .into_iter()
            .filter_map(|m| m.manager)
            .collect();
        assert_eq!(managers, ["web-controller"]);

        // Applying again is idempotent: still one controller reference.
        let again = apply_owned(&cms, &owner, &config, &options).await.unwrap();
        assert_eq!(again.metadata.owner_references.unwrap().len(), 2);

        let unnamed = serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {}});
        let err = apply_owned(&cms, &owner, &unnamed, &options)
            .await
            .unwrap_err();
        assert!(matches!(err, OwnedError::Unnamed), "{err}");
    }
}
