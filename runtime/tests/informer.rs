//! Shared informers, stores and listers against the in-memory fake API server.

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, DeleteParams, PostParams};
use kube::core::Selector;
use kube_codegen_runtime::fake::{FakeApiServer, Verb};
use kube_codegen_runtime::informer::{
    AddKind, DeleteEvent, HandlerFuncs, Informer, NotSynced, SharedInformerFactory, SyncFailure,
    drop_managed_fields,
};
use kube_codegen_runtime::store::label_index;
use parking_lot::Mutex;

fn cm(ns: &str, name: &str, app: &str) -> ConfigMap {
    let mut c = ConfigMap::default();
    c.metadata.namespace = Some(ns.into());
    c.metadata.name = Some(name.into());
    c.metadata.labels = Some([("app".to_string(), app.to_string())].into());
    c
}

type Log = Arc<Mutex<Vec<String>>>;

fn recorder(log: &Log) -> HandlerFuncs<ConfigMap> {
    let (a, u, d) = (log.clone(), log.clone(), log.clone());
    HandlerFuncs::new()
        .on_add(move |o: Arc<ConfigMap>, kind: AddKind| {
            a.lock().push(format!(
                "add {} initial={}",
                o.metadata.name.clone().unwrap(),
                kind.is_initial_list()
            ))
        })
        .on_update(move |old: Arc<ConfigMap>, new: Arc<ConfigMap>| {
            let same = Arc::ptr_eq(&old, &new);
            u.lock().push(format!(
                "update {} same={same}",
                new.metadata.name.clone().unwrap()
            ))
        })
        .on_delete(move |e: DeleteEvent<ConfigMap>| {
            let kind = if matches!(e, DeleteEvent::Tombstone(_)) {
                "tombstone"
            } else {
                "delete"
            };
            d.lock().push(format!(
                "{kind} {}",
                e.object().metadata.name.clone().unwrap()
            ))
        })
}

async fn wait_until(what: &str, mut f: impl FnMut() -> bool) {
    for _ in 0..200 {
        if f() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("timed out waiting for {what}");
}

/// Records `informer`'s events from its first, then starts `factory` and waits until its
/// caches have synced.
async fn record_and_sync(factory: &SharedInformerFactory, informer: &Informer<ConfigMap>) -> Log {
    let log: Log = Default::default();
    informer.add_event_handler(recorder(&log));
    factory.start();
    factory
        .wait_for_cache_sync(Duration::from_secs(5))
        .await
        .unwrap();
    log
}

/// From now on every ConfigMap watch answers 410 Expired, so informers relist.
fn expire_watches(server: &FakeApiServer) {
    server.prepend_reactor(Verb::Watch, "configmaps", |_| {
        Some(Ok(serde_json::json!({"type": "ERROR", "object": {"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 410, "reason": "Expired", "message": "too old resource version"}})))
    });
}

#[tokio::test]
async fn handlers_see_events_in_order_and_late_handlers_get_the_backlog() {
    let server = FakeApiServer::new();
    server.add(&cm("a", "pre", "web")).unwrap();
    let factory = SharedInformerFactory::new(server.client());
    let informer = factory.informer_for::<ConfigMap>();
    let log = record_and_sync(&factory, &informer).await;
    assert!(informer.has_synced());

    let api: Api<ConfigMap> = Api::namespaced(server.client(), "a");
    let created = api
        .create(&PostParams::default(), &cm("a", "x", "web"))
        .await
        .unwrap();
    let mut changed = created.clone();
    changed.data = Some([("k".to_string(), "v".to_string())].into());
    api.replace("x", &PostParams::default(), &changed)
        .await
        .unwrap();
    api.delete("x", &DeleteParams::default()).await.unwrap();
    wait_until("four events", || log.lock().len() >= 4).await;
    assert_eq!(
        *log.lock(),
        [
            "add pre initial=true",
            "add x initial=false",
            "update x same=false",
            "delete x"
        ]
    );

    // A handler added now gets synthetic adds for what is cached (kube-rs #1630).
    let late: Log = Default::default();
    informer.add_event_handler(recorder(&late));
    wait_until("backlog", || !late.lock().is_empty()).await;
    assert_eq!(*late.lock(), ["add pre initial=true"]);
    factory.shutdown();
}

#[tokio::test]
async fn one_watch_is_shared_and_listers_answer_from_cache() {
    let server = FakeApiServer::new();
    for (ns, name, app) in [
        ("a", "one", "web"),
        ("a", "two", "db"),
        ("b", "three", "web"),
    ] {
        server.add(&cm(ns, name, app)).unwrap();
    }
    let factory = SharedInformerFactory::builder(server.client())
        .with_transform(drop_managed_fields)
        .build();
    let first = factory.informer_for::<ConfigMap>();
    let second = factory.informer_for::<ConfigMap>();
    first
        .add_indexers([("app".to_string(), label_index::<ConfigMap>("app"))])
        .unwrap();
    factory.start();
    factory
        .wait_for_cache_sync(Duration::from_secs(5))
        .await
        .unwrap();
    assert!(
        second.has_synced(),
        "the second handle is the same informer"
    );
    let lists = server
        .actions()
        .iter()
        .filter(|a| a.verb == Verb::List && a.resource == "configmaps")
        .count();
    assert_eq!(lists, 1, "one list for both consumers");

    let lister = second.lister();
    assert_eq!(lister.list_all().len(), 3);
    let web = Selector::from_iter([("app", "web")]);
    let names = |v: Vec<Arc<ConfigMap>>| {
        v.into_iter()
            .map(|c| c.metadata.name.clone().unwrap())
            .collect::<Vec<_>>()
    };
    assert_eq!(names(lister.list(&web)), ["one", "three"]);
    assert_eq!(
        names(lister.namespaced("a").list(&Selector::default())),
        ["one", "two"]
    );
    assert_eq!(
        lister
            .namespaced("a")
            .get("two")
            .unwrap()
            .metadata
            .labels
            .as_ref()
            .unwrap()["app"],
        "db"
    );
    assert!(lister.namespaced("b").get("two").is_none());
    assert_eq!(names(lister.by_index("app", "web")), ["one", "three"]);
    assert!(
        lister
            .list_all()
            .iter()
            .all(|c| c.metadata.managed_fields.is_none())
    );
    factory.shutdown();
}

#[tokio::test]
async fn relist_after_expired_watch_converges_and_reports_missed_deletes_as_tombstones() {
    let server = FakeApiServer::new();
    server.add(&cm("a", "keep", "web")).unwrap();
    server.add(&cm("a", "lost", "web")).unwrap();
    let factory = SharedInformerFactory::new(server.client());
    let informer = factory.informer_for::<ConfigMap>();
    let log = record_and_sync(&factory, &informer).await;

    // Break the watch with a 410 and change the world meanwhile.
    expire_watches(&server);
    let api: Api<ConfigMap> = Api::namespaced(server.client(), "a");
    api.delete("lost", &DeleteParams::default()).await.unwrap();
    api.create(&PostParams::default(), &cm("a", "new", "web"))
        .await
        .unwrap();
    server.clear_reactors();

    wait_until("relist", || informer.store().keys() == ["a/keep", "a/new"]).await;
    let expected = server.objects("", "configmaps", Some("a")).len();
    assert_eq!(
        informer.store().len(),
        expected,
        "cache equals the server after relist"
    );
    wait_until("events", || log.lock().iter().any(|l| l.contains(" new"))).await;
    let log = log.lock().clone();
    assert!(
        log.iter()
            .any(|l| l == "delete lost" || l == "tombstone lost"),
        "{log:?}"
    );
    factory.shutdown();
}

#[tokio::test]
async fn resync_redelivers_cached_objects_as_updates() {
    let server = FakeApiServer::new();
    server.add(&cm("a", "r", "web")).unwrap();
    let factory = SharedInformerFactory::builder(server.client())
        .with_default_resync(Duration::from_millis(200))
        .build();
    let informer = factory.informer_for::<ConfigMap>();
    let log: Log = Default::default();
    informer.add_event_handler(recorder(&log));
    factory.start();
    wait_until("resync", || {
        log.lock()
            .iter()
            .filter(|l| *l == "update r same=true")
            .count()
            >= 2
    })
    .await;
    factory.shutdown();
}

#[tokio::test]
async fn wait_for_cache_sync_names_the_informer_that_did_not_sync() {
    let server = FakeApiServer::new();
    let factory = SharedInformerFactory::new(server.client());
    let config_maps = factory.informer_for::<ConfigMap>();
    // Not registered with the fake: it answers 404, so this informer never syncs.
    let unknown = kube::api::ApiResource {
        group: "nope.example.com".into(),
        version: "v1".into(),
        api_version: "nope.example.com/v1".into(),
        kind: "Nope".into(),
        plural: "nopes".into(),
    };
    let nopes = factory.for_resource(&unknown, true);
    factory.start();
    let err = factory
        .wait_for_cache_sync(Duration::from_millis(800))
        .await
        .unwrap_err();
    assert_eq!(
        err,
        NotSynced {
            pending: vec!["nopes.nope.example.com".into()],
            cause: SyncFailure::Timeout
        }
    );
    // One informer's wait has the same contract.
    config_maps
        .wait_for_sync(Duration::from_secs(5))
        .await
        .unwrap();
    let err = nopes
        .wait_for_sync(Duration::from_millis(100))
        .await
        .unwrap_err();
    assert_eq!(err.pending, ["nopes.nope.example.com"]);
    assert_eq!(err.cause, SyncFailure::Timeout);
    assert_eq!(
        err.to_string(),
        "caches not synced (timed out): nopes.nope.example.com"
    );
    // After shutdown both waits end at once, saying why.
    factory.shutdown();
    let err = nopes
        .wait_for_sync(Duration::from_secs(60))
        .await
        .unwrap_err();
    assert_eq!(err.cause, SyncFailure::Stopped);
    let err = factory
        .wait_for_cache_sync(Duration::from_secs(60))
        .await
        .unwrap_err();
    assert_eq!(err.cause, SyncFailure::Stopped);
}

/// Collects what tracing prints, for the one log line a sharded informer owes.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The fake API server ignores `shardSelector`, like a kube-apiserver without the
/// `ShardedListAndWatch` gate: two informers with complementary ranges must still split the
/// objects between them, with the server's hash, and each must say, once, that it filters
/// client-side.
#[tokio::test]
async fn sharded_informers_partition_the_objects_when_the_server_ignores_the_selector() {
    use kube_codegen_runtime::sharding::{
        ServerFiltering, ShardKey, ShardRange, ShardSelector, hash_field,
    };
    let logs = Captured::default();
    let writer = logs.clone();
    let _guard = tracing::subscriber::set_default(
        tracing_subscriber::fmt()
            .with_writer(move || writer.clone())
            .with_ansi(false)
            .finish(),
    );
    let server = FakeApiServer::new();
    for i in 0..60 {
        server.add(&cm("a", &format!("cm-{i}"), "web")).unwrap();
    }
    let halves = ShardRange::split_even(std::num::NonZeroUsize::new(2).unwrap());
    let shards: Vec<_> = halves
        .iter()
        .map(|r| {
            let sel = ShardSelector::new(ShardKey::Uid, [*r]).unwrap();
            let factory = SharedInformerFactory::builder(server.client())
                .with_shard_selector(sel)
                .build();
            let informer = factory.informer_for::<ConfigMap>();
            let log: Log = Default::default();
            informer.add_event_handler(recorder(&log));
            factory.start();
            (factory, informer, log)
        })
        .collect();
    for (factory, informer, _) in &shards {
        factory
            .wait_for_cache_sync(Duration::from_secs(5))
            .await
            .unwrap();
        assert_eq!(informer.server_filtering(), Some(ServerFiltering::Ignored));
    }
    // Then changes while watching: new objects and deletions go to their shard only.
    let api: Api<ConfigMap> = Api::namespaced(server.client(), "a");
    for i in 60..80 {
        api.create(&PostParams::default(), &cm("a", &format!("cm-{i}"), "web"))
            .await
            .unwrap();
    }
    for i in 0..10 {
        api.delete(&format!("cm-{i}"), &DeleteParams::default())
            .await
            .unwrap();
    }
    let all: Vec<ConfigMap> = server.list(Some("a"));
    assert_eq!(all.len(), 70);
    let owner = |c: &ConfigMap| {
        let h = hash_field(c.metadata.uid.as_deref().unwrap());
        halves.iter().position(|r| r.contains(h)).unwrap()
    };
    for (i, (_, informer, _)) in shards.iter().enumerate() {
        let mut want: Vec<String> = all
            .iter()
            .filter(|c| owner(c) == i)
            .map(|c| c.metadata.name.clone().unwrap())
            .collect();
        want.sort();
        let lister = informer.lister();
        wait_until("the shard's cache to converge", || {
            let mut have: Vec<String> = lister
                .list_all()
                .iter()
                .map(|c| c.metadata.name.clone().unwrap())
                .collect();
            have.sort();
            have == want
        })
        .await;
        // Neither half is empty: the test would pass vacuously otherwise.
        assert!(want.len() > 15, "shard {i}: {} objects", want.len());
    }
    // Handlers heard of their own shard's objects only.
    for (i, (_, _, log)) in shards.iter().enumerate() {
        let other_names: Vec<String> = all
            .iter()
            .filter(|c| owner(c) != i)
            .map(|c| c.metadata.name.clone().unwrap())
            .collect();
        for line in log.lock().iter() {
            let name = line.split_whitespace().nth(1).unwrap();
            assert!(
                !other_names.iter().any(|n| n == name),
                "shard {i} heard {line}"
            );
        }
    }
    let printed = String::from_utf8(logs.0.lock().clone()).unwrap();
    let warnings = printed
        .lines()
        .filter(|l| l.contains("ignored the shard selector"))
        .count();
    assert_eq!(warnings, 2, "one line per informer:\n{printed}");
    for (factory, _, _) in shards {
        factory.shutdown();
    }
}

/// The initial list's adds carry the cached objects as listed (a compact cache's packed
/// form, decoded at delivery): an object deleted between the list and the delivery of its
/// add still reaches the handler as an add, then as a delete; never a delete alone.
async fn list_adds_survive_a_delete_before_delivery(compact: bool) {
    let server = FakeApiServer::new();
    server.add(&cm("a", "first", "web")).unwrap();
    server.add(&cm("a", "gone", "db")).unwrap();
    let factory = SharedInformerFactory::new(server.client());
    let informer = if compact {
        factory.compact().informer_for::<ConfigMap>()
    } else {
        factory.informer_for::<ConfigMap>()
    };
    assert_eq!(informer.store().is_compact(), compact);
    let log: Log = Default::default();
    // The first add blocks the handler's delivery until the test releases it.
    let (release, gate) = std::sync::mpsc::channel::<()>();
    let gate = Mutex::new(Some(gate));
    let (a, d) = (log.clone(), log.clone());
    informer.add_event_handler(
        HandlerFuncs::new()
            .on_add(move |o: Arc<ConfigMap>, _| {
                if let Some(gate) = gate.lock().take() {
                    gate.recv().unwrap();
                }
                let app = &o.metadata.labels.as_ref().unwrap()["app"];
                a.lock().push(format!(
                    "add {} app={app}",
                    o.metadata.name.clone().unwrap()
                ));
            })
            .on_delete(move |e: DeleteEvent<ConfigMap>| {
                d.lock().push(format!(
                    "delete {}",
                    e.object().metadata.name.clone().unwrap()
                ));
            }),
    );
    factory.start();
    factory
        .wait_for_cache_sync(Duration::from_secs(5))
        .await
        .unwrap();
    let api: Api<ConfigMap> = Api::namespaced(server.client(), "a");
    api.delete("gone", &DeleteParams::default()).await.unwrap();
    wait_until("the delete in the cache", || {
        informer.store().keys() == ["a/first"]
    })
    .await;
    release.send(()).unwrap();
    wait_until("three events", || log.lock().len() == 3).await;
    assert_eq!(
        *log.lock(),
        ["add first app=web", "add gone app=db", "delete gone"],
        "compact: {compact}"
    );
    factory.shutdown();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_adds_survive_a_delete_before_delivery_typed() {
    list_adds_survive_a_delete_before_delivery(false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_adds_survive_a_delete_before_delivery_compact() {
    list_adds_survive_a_delete_before_delivery(true).await;
}

/// A compact informer's relist: the same notifications as a typed one's (an update for a
/// changed object, a tombstone for one deleted unseen, an add for a new one). Every watch
/// fails with 410 Expired, so the informer learns of changes only by relisting.
#[tokio::test]
async fn compact_relist_reports_updates_adds_and_tombstones() {
    let server = FakeApiServer::new();
    server.add(&cm("a", "keep", "web")).unwrap();
    server.add(&cm("a", "changed", "web")).unwrap();
    server.add(&cm("a", "lost", "web")).unwrap();
    expire_watches(&server);
    let factory = SharedInformerFactory::new(server.client());
    let informer = factory.compact().informer_for::<ConfigMap>();
    let log = record_and_sync(&factory, &informer).await;
    wait_until("the list's adds", || log.lock().len() == 3).await;

    let api: Api<ConfigMap> = Api::namespaced(server.client(), "a");
    api.delete("lost", &DeleteParams::default()).await.unwrap();
    let mut changed = api.get("changed").await.unwrap();
    changed.metadata.labels = Some([("app".to_string(), "db".to_string())].into());
    api.replace("changed", &PostParams::default(), &changed)
        .await
        .unwrap();
    api.create(&PostParams::default(), &cm("a", "new", "web"))
        .await
        .unwrap();

    wait_until("the relist's events", || log.lock().len() >= 6).await;
    let log = log.lock().clone();
    assert_eq!(
        log[..3],
        [
            "add changed initial=true",
            "add keep initial=true",
            "add lost initial=true"
        ]
    );
    let mut relist = log[3..].to_vec();
    relist.sort();
    assert_eq!(
        relist,
        [
            "add new initial=false",
            "tombstone lost",
            "update changed same=false"
        ],
        "{log:?}"
    );
    assert_eq!(informer.store().keys(), ["a/changed", "a/keep", "a/new"]);
    let changed = informer.store().get(&"a/changed".parse().unwrap()).unwrap();
    assert_eq!(changed.metadata.labels.as_ref().unwrap()["app"], "db");
    factory.shutdown();
}
