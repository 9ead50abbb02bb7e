//! E2E: generated informers and listers, and Lease leader election, on the real control plane.

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use kube::api::{Api, DeleteParams, PostParams};
use kube::core::Selector;
use kube_codegen_runtime::informer::{
    DeleteEvent, HandlerFuncs, SharedInformerFactory as RuntimeFactory, drop_managed_fields,
};
use kube_codegen_runtime::leader::{LeaderCallbacks, LeaderElectionConfig, LeaderElector};
use kube_codegen_runtime::lister::Lister;
use kube_codegen_runtime::store::label_index;
use kube_codegen_tests::*;
use sample_api::apis::samplecontroller::v1alpha1::{Foo, FooSpec};
use sample_api::generated::informers::SharedInformerFactory;
use std::sync::Mutex;

async fn install(client: &kube::Client) {
    for entry in std::fs::read_dir(repo_root().join("sample-api/crds")).unwrap() {
        apply_crd(
            client,
            &parse_crd(&std::fs::read_to_string(entry.unwrap().path()).unwrap()),
        )
        .await
        .unwrap();
    }
}

fn foo(name: &str, team: &str) -> Foo {
    let mut f = Foo::new(
        name,
        FooSpec {
            deployment_name: format!("{name}-d"),
            replicas: Some(1),
        },
    );
    f.metadata.labels = Some([("team".to_string(), team.to_string())].into());
    f
}

#[tokio::test]
async fn generated_informer_sees_events_in_order_and_listers_answer_by_namespace_and_index() {
    let client = client().await;
    install(&client).await;
    let ns = TestNamespace::new(&client, "informers").await;
    let other = TestNamespace::new(&client, "informers-other").await;
    let foos: Api<Foo> = Api::namespaced(client.clone(), &ns.name);
    foos.create(&PostParams::default(), &foo("before", "red"))
        .await
        .unwrap();
    Api::<Foo>::namespaced(client.clone(), &other.name)
        .create(&PostParams::default(), &foo("elsewhere", "red"))
        .await
        .unwrap();

    let runtime = RuntimeFactory::builder(client.clone())
        .with_transform(drop_managed_fields)
        .build();
    let factory = SharedInformerFactory::from_runtime(runtime.clone());
    let informer = factory.samplecontroller().v1alpha1().foos();
    // The same kind again with the opt-in compact cache (each Foo kept as its JSON): its
    // handlers, lister and index must answer as the typed informer's do.
    let compact = runtime.compact().informer_for::<Foo>();
    assert!(compact.store().is_compact() && !informer.informer().store().is_compact());
    let log = Arc::new(Mutex::new(Vec::<String>::new()));
    let compact_log = Arc::new(Mutex::new(Vec::<String>::new()));
    for (informer, log) in [(informer.informer(), &log), (&compact, &compact_log)] {
        informer
            .add_indexers([("team".to_string(), label_index::<Foo>("team"))])
            .unwrap();
        informer.add_event_handler(log_events(log));
    }
    factory.start();
    factory
        .wait_for_cache_sync(Duration::from_secs(30))
        .await
        .unwrap();

    // create, update, delete arrive in order
    foos.create(&PostParams::default(), &foo("x", "blue"))
        .await
        .unwrap();
    let mut x = foos.get("x").await.unwrap();
    x.spec.replicas = Some(3);
    foos.replace("x", &PostParams::default(), &x).await.unwrap();
    foos.delete("x", &DeleteParams::default()).await.unwrap();
    let mine = |l: &Vec<String>| {
        l.iter()
            .filter(|e| e.ends_with(" x") || e.contains(" x "))
            .cloned()
            .collect::<Vec<_>>()
    };
    for log in [&log, &compact_log] {
        eventually("x events", Duration::from_secs(20), || async {
            Ok((mine(&log.lock().unwrap()).len() >= 3).then_some(()))
        })
        .await
        .unwrap();
        assert_eq!(
            mine(&log.lock().unwrap()),
            ["add x", "update x Some(3)", "delete x"]
        );
    }
    compact_lister_answers_as_typed(
        &informer.informer().lister(),
        &compact.lister(),
        [&ns.name, &other.name],
    );

    // A late handler gets the backlog (kube-rs #1630).
    let late = Arc::new(Mutex::new(Vec::<String>::new()));
    let l = late.clone();
    informer
        .informer()
        .add_event_handler(HandlerFuncs::new().on_add(move |f: Arc<Foo>, _| {
            l.lock().unwrap().push(f.metadata.name.clone().unwrap())
        }));
    eventually("backlog", Duration::from_secs(10), || async {
        Ok((late.lock().unwrap().len() >= 2).then_some(()))
    })
    .await
    .unwrap();
    let mut backlog = late.lock().unwrap().clone();
    backlog.sort();
    assert!(
        backlog.contains(&"before".to_string()) && backlog.contains(&"elsewhere".to_string()),
        "{backlog:?}"
    );

    // Listers: by namespace, by selector, by custom index.
    let lister = informer.lister();
    assert!(lister.foos(&ns.name).get("before").is_some());
    assert!(lister.foos(&ns.name).get("elsewhere").is_none());
    assert!(lister.foos(&other.name).get("elsewhere").is_some());
    let red = Selector::from_iter([("team", "red")]);
    let in_ns: Vec<String> = lister
        .foos(&ns.name)
        .list(&red)
        .into_iter()
        .filter_map(|f| f.metadata.name.clone())
        .collect();
    assert_eq!(in_ns, ["before"]);
    let by_team: Vec<String> = lister
        .by_index("team", "red")
        .into_iter()
        .filter_map(|f| f.metadata.name.clone())
        .collect();
    assert!(
        by_team.contains(&"before".to_string()) && by_team.contains(&"elsewhere".to_string()),
        "{by_team:?}"
    );
    assert!(
        lister
            .list(&Selector::default())
            .iter()
            .all(|f| f.metadata.managed_fields.is_none()),
        "transform dropped managedFields"
    );

    // Built-in kinds share the same factory.
    let deployments = factory.informer_for::<Deployment>();
    factory
        .wait_for_cache_sync(Duration::from_secs(30))
        .await
        .unwrap();
    assert!(deployments.has_synced());
    factory.shutdown();
}

/// Logs a Foo informer's events as `add NAME`, `update NAME REPLICAS`, `delete NAME`.
fn log_events(log: &Arc<Mutex<Vec<String>>>) -> HandlerFuncs<Foo> {
    let (a, u, d) = (log.clone(), log.clone(), log.clone());
    HandlerFuncs::new()
        .on_add(move |f: Arc<Foo>, _| {
            a.lock()
                .unwrap()
                .push(format!("add {}", f.metadata.name.clone().unwrap()))
        })
        .on_update(move |_, f: Arc<Foo>| {
            u.lock().unwrap().push(format!(
                "update {} {:?}",
                f.metadata.name.clone().unwrap(),
                f.spec.replicas
            ))
        })
        .on_delete(move |e: DeleteEvent<Foo>| {
            d.lock().unwrap().push(format!(
                "delete {}",
                e.object().metadata.name.clone().unwrap()
            ))
        })
}

/// A compact cache's lister returns objects equal to the typed cache's, for every read:
/// both informers have seen the same events (the caller waited for them). Only the test's
/// own namespaces: other tests may add Foos elsewhere meanwhile.
fn compact_lister_answers_as_typed(
    typed: &Lister<Foo>,
    compact: &Lister<Foo>,
    namespaces: [&str; 2],
) {
    let all = Selector::default();
    let red = Selector::from_iter([("team", "red")]);
    for ns in namespaces {
        let (t, c) = (typed.namespaced(ns), compact.namespaced(ns));
        assert_eq!(c.list(&all), t.list(&all));
        assert_eq!(c.list(&all).len(), 1, "before, or elsewhere");
        assert_eq!(c.list(&red), t.list(&red));
        for name in ["before", "elsewhere", "x"] {
            assert_eq!(c.get(name), t.get(name));
        }
    }
    let ours = |foos: Vec<Arc<Foo>>| -> Vec<Arc<Foo>> {
        foos.into_iter()
            .filter(|f| namespaces.contains(&f.metadata.namespace.as_deref().unwrap_or("")))
            .collect()
    };
    let red_foos = ours(compact.by_index("team", "red"));
    assert_eq!(red_foos, ours(typed.by_index("team", "red")));
    assert_eq!(red_foos.len(), 2);
    let before = compact
        .namespaced(namespaces[0])
        .get("before")
        .expect("cached");
    assert_eq!(before.spec.deployment_name, "before-d");
    assert!(
        before.metadata.managed_fields.is_none(),
        "the transform ran before packing"
    );
}

#[tokio::test]
async fn two_electors_never_lead_at_once_and_hand_over_on_release() {
    let client = client().await;
    let ns = TestNamespace::new(&client, "leases").await;
    let config = |id: &str| {
        let mut c = LeaderElectionConfig::new("e2e-lease", &ns.name, id);
        c.lease_duration = Duration::from_secs(4);
        c.renew_deadline = Duration::from_secs(3);
        c.retry_period = Duration::from_millis(500);
        c
    };
    let a = LeaderElector::new(client.clone(), config("a")).unwrap();
    let b = LeaderElector::new(client.clone(), config("b")).unwrap();
    let (ha, hb) = (a.handle(), b.handle());
    let (stop_a_tx, stop_a) = tokio::sync::oneshot::channel::<()>();
    let (stop_b_tx, stop_b) = tokio::sync::oneshot::channel::<()>();
    let work = |_: kube_codegen_runtime::leader::LeadershipToken| async {};
    let ta = tokio::spawn(a.run(
        LeaderCallbacks::new(move |t| async move {
            t.cancelled().await;
            work(t).await
        }),
        async {
            let _ = stop_a.await;
        },
    ));
    let tb = tokio::spawn(b.run(
        LeaderCallbacks::new(move |t| async move { t.cancelled().await }),
        async {
            let _ = stop_b.await;
        },
    ));

    // Exactly one leads; sample for a while.
    eventually("a leader", Duration::from_secs(20), || async {
        Ok((ha.is_leader() || hb.is_leader()).then_some(()))
    })
    .await
    .unwrap();
    for _ in 0..100 {
        assert!(!(ha.is_leader() && hb.is_leader()), "both lead");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let (leader, follower, leader_stop, follower_stop) = if ha.is_leader() {
        (ha, hb, stop_a_tx, stop_b_tx)
    } else {
        (hb, ha, stop_b_tx, stop_a_tx)
    };
    // Shut the leader down: it releases the Lease and the other takes over well within the lease duration.
    let t0 = std::time::Instant::now();
    let _ = leader_stop.send(());
    eventually("handover", Duration::from_secs(10), || async {
        Ok(follower.is_leader().then_some(()))
    })
    .await
    .unwrap();
    assert!(
        t0.elapsed() < Duration::from_secs(4),
        "handover took {:?}",
        t0.elapsed()
    );
    assert!(!leader.is_leader());
    let lease: k8s_openapi::api::coordination::v1::Lease =
        Api::namespaced(client.clone(), &ns.name)
            .get("e2e-lease")
            .await
            .unwrap();
    assert_eq!(
        lease.spec.unwrap().holder_identity.as_deref(),
        Some(follower.identity())
    );
    let _ = follower_stop.send(());
    let _ = tokio::join!(ta, tb);
}

/// The audit policy of the metadata-informer test's control plane: the response of every
/// list of Deployments and ConfigMaps in its namespace (the API server records the object it
/// sent, so the log shows what the request asked for), nothing else.
const METADATA_AUDIT_POLICY: &str = r#"apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived", "ResponseStarted"]
rules:
- level: RequestResponse
  verbs: ["list"]
  namespaces: ["metadata-informers"]
  resources:
  - group: apps
    resources: ["deployments"]
  - group: ""
    resources: ["configmaps"]
- level: None
"#;

/// A metadata-only informer (client-go's `metadatainformer`, controller-runtime's
/// `OnlyMetadata`): the API server answers its list and watch as `PartialObjectMetadata`, so
/// the cache holds each object's metadata and nothing of its spec; a whole-object informer of
/// the same kind lives beside it. The server's audit log shows both lists as it answered
/// them: `PartialObjectMetadataList`, which it sends only for `as=PartialObjectMetadata`, and
/// `DeploymentList`. Then the controller builder's `owns_metadata` (controller-runtime's
/// `OnlyMetadata`): a ConfigMap the Deployment controls, cached as metadata, reconciles the
/// Deployment, and the ConfigMaps' list was answered as `PartialObjectMetadataList`. A
/// control plane of its own, for the audit flags.
#[tokio::test]
async fn metadata_informers_cache_only_metadata_as_the_server_sends_it() {
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube_codegen_envtest::Environment;
    use kube_codegen_runtime::controller::{Action, Builder, Request};
    use kube_codegen_runtime::store::ObjectKey;

    const NS: &str = "metadata-informers";
    let dir = std::env::temp_dir().join(format!("kcg-metadata-audit-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let policy = dir.join("policy.yaml");
    std::fs::write(&policy, METADATA_AUDIT_POLICY).unwrap();
    let audit = dir.join("audit.log");
    let env = Environment::builder()
        .apiserver_arg(format!("--audit-policy-file={}", policy.display()))
        .apiserver_arg(format!("--audit-log-path={}", audit.display()))
        .timeout(Duration::from_secs(90))
        .start()
        .await
        .expect("control plane (kube-codegen-envtest; hack/testenv.sh build makes the binaries)");
    let client = env.client();
    let namespace: k8s_openapi::api::core::v1::Namespace =
        serde_json::from_value(serde_json::json!({"metadata": {"name": NS}})).unwrap();
    Api::all(client.clone())
        .create(&PostParams::default(), &namespace)
        .await
        .unwrap();
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), NS);
    let deployment: Deployment = serde_json::from_value(serde_json::json!({
        "metadata": { "name": "web", "labels": { "app": "web" } },
        "spec": {
            "selector": { "matchLabels": { "app": "web" } },
            "template": {
                "metadata": { "labels": { "app": "web" } },
                "spec": { "containers": [{ "name": "c", "image": "example.invalid/web" }] }
            }
        }
    }))
    .unwrap();
    deployments
        .create(&PostParams::default(), &deployment)
        .await
        .unwrap();

    let factory = RuntimeFactory::builder(client.clone())
        .with_namespace(NS)
        .build();
    let metadata = factory.metadata_informer_for::<Deployment>();
    let whole = factory.informer_for::<Deployment>();
    factory.start();
    factory
        .wait_for_cache_sync(Duration::from_secs(60))
        .await
        .unwrap();

    let key = ObjectKey::namespaced(NS, "web");
    let cached = metadata.lister().get(&key).expect("cached");
    // The server's own form for metadata-only answers: it sends it only when asked with
    // `as=PartialObjectMetadata`.
    let types = cached.types.as_ref().expect("apiVersion and kind");
    assert_eq!(types.kind, "PartialObjectMetadata");
    assert_eq!(types.api_version, "meta.k8s.io/v1");
    assert_eq!(
        cached.metadata.labels.as_ref().unwrap()["app"],
        "web",
        "labels kept"
    );
    // The whole-object informer of the same kind is another informer, with the spec.
    let full = whole.lister().get(&key).expect("cached");
    assert_eq!(
        full.spec.template.spec.as_ref().unwrap().containers[0].name,
        "c"
    );
    assert_ne!(metadata.name(), whole.name());

    // A later change reaches the metadata cache through the metadata watch.
    let mut changed = deployments.get("web").await.unwrap();
    changed
        .metadata
        .labels
        .get_or_insert_with(Default::default)
        .insert("tier".into(), "front".into());
    deployments
        .replace("web", &PostParams::default(), &changed)
        .await
        .unwrap();
    eventually(
        "the label in the metadata cache",
        Duration::from_secs(30),
        || {
            let tier = metadata
                .lister()
                .get(&key)
                .and_then(|d| d.metadata.labels.as_ref()?.get("tier").cloned());
            async move { Ok(tier.filter(|t| t == "front")) }
        },
    )
    .await
    .unwrap();
    // The watch's answers are the server's metadata-only form too.
    let watched = metadata.lister().get(&key).expect("cached");
    assert_eq!(
        watched.types.as_ref().unwrap().kind,
        "PartialObjectMetadata"
    );

    // The API server's record of the lists: what it answered each informer, by resource.
    let listed = |resource: &'static str, at_least: usize| {
        let audit = audit.clone();
        eventually(
            "the informers' lists in the audit log",
            Duration::from_secs(30),
            move || {
                let text = std::fs::read_to_string(&audit).unwrap_or_default();
                async move {
                    let mut kinds: Vec<String> = text
                        .lines()
                        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
                        .filter(|e| e["verb"] == "list" && e["objectRef"]["resource"] == resource)
                        .filter_map(|e| e["responseObject"]["kind"].as_str().map(str::to_owned))
                        .collect();
                    kinds.sort();
                    kinds.dedup();
                    Ok((kinds.len() >= at_least).then_some(kinds))
                }
            },
        )
    };
    assert_eq!(
        listed("deployments", 2).await.unwrap(),
        ["DeploymentList", "PartialObjectMetadataList"]
    );

    // The builder's `owns_metadata`: the owned kind's informer is the factory's metadata-only
    // one (made now, it starts at once), and an owned object's event reconciles its owner.
    let controller = Builder::for_kind(whole.clone())
        .owns_metadata::<ConfigMap>(&factory)
        .build();
    // Each reconcile reports its key and whether the owned ConfigMap was in the metadata
    // cache when it ran: the kube-controller-manager's status writes to `web` reconcile it
    // too, so only a reconcile that saw the ConfigMap cached can be the ConfigMap's.
    let owned_key = ObjectKey::namespaced(NS, "web-config");
    let owned_cache = factory.metadata_informer_for::<ConfigMap>().lister();
    let (seen_tx, mut seen) = tokio::sync::mpsc::unbounded_channel::<(String, bool)>();
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let running = tokio::spawn(controller.run(
        Arc::new(()),
        move |req: Request<Deployment>, _: Arc<()>| {
            let cached = owned_cache.get(&owned_key).is_some();
            let _ = seen_tx.send((req.key.to_string(), cached));
            async { Ok::<_, String>(Action::Done) }
        },
        async move {
            let _ = stop_rx.await;
        },
    ));
    let web = format!("{NS}/web");
    let wait = Duration::from_secs(30);
    // The Deployment's own add (the cache is replayed to the new handler).
    let (first, _) = tokio::time::timeout(wait, seen.recv())
        .await
        .unwrap()
        .expect("the Deployment's add");
    assert_eq!(first, web);
    let owner = deployments.get("web").await.unwrap();
    let owned: ConfigMap = serde_json::from_value(serde_json::json!({
        "metadata": {
            "name": "web-config",
            "ownerReferences": [{
                "apiVersion": "apps/v1", "kind": "Deployment", "name": "web",
                "uid": owner.metadata.uid.unwrap(), "controller": true,
            }],
        },
        "data": { "big": "x".repeat(1000) },
    }))
    .unwrap();
    Api::<ConfigMap>::namespaced(client.clone(), NS)
        .create(&PostParams::default(), &owned)
        .await
        .unwrap();
    // Every reconcile is the owner's; one of them runs after the ConfigMap is cached (the
    // informer stores an object before it delivers its event).
    let deadline = tokio::time::Instant::now() + wait;
    loop {
        let (key, cached) = tokio::time::timeout_at(deadline, seen.recv())
            .await
            .expect("the owner's reconcile after the ConfigMap is cached")
            .expect("the controller is running");
        assert_eq!(key, web);
        if cached {
            break;
        }
    }
    let cached = factory
        .metadata_informer_for::<ConfigMap>()
        .lister()
        .get(&ObjectKey::namespaced(NS, "web-config"))
        .expect("the owned ConfigMap cached");
    assert_eq!(cached.types.as_ref().unwrap().kind, "PartialObjectMetadata");
    assert_eq!(
        listed("configmaps", 1).await.unwrap(),
        ["PartialObjectMetadataList"]
    );
    let _ = stop_tx.send(());
    running.await.unwrap();
    factory.shutdown();
    drop(env);
    let _ = std::fs::remove_dir_all(&dir);
}
