//! The controller builder against the in-memory fake API server: what is enqueued by whom,
//! predicates, actions, per-key backoff, panics, concurrency and graceful shutdown.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::api::{Api, DeleteParams, PostParams};
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
            s.metadata
                .labels
                .as_ref()
                .and_then(|l| l.get("for"))
                .map(|d| vec![ObjectKey::namespaced("ns", d)])
                .unwrap_or_default()
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
    let mut s = Secret::default();
    s.metadata.namespace = Some("ns".into());
    s.metadata.name = Some("s".into());
    s.metadata.labels = Some(BTreeMap::from([("for".to_owned(), "ghost".to_owned())]));
    secrets.create(&pp, &s).await.unwrap();
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
