//! Unit tests of the Foo and TestResource controllers over the generated fake clientset,
//! mirroring kubernetes/sample-controller's controller_test.go (creates deployment, do
//! nothing, update deployment, not controlled by us) plus the cases it never covered.

#![allow(clippy::result_large_err)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use k8s_openapi::api::apps::v1::{Deployment, DeploymentStatus};
use k8s_openapi::api::core::v1::Event;
use kube_codegen_runtime::controller::{Action as Reconciled, Request};
use kube_codegen_runtime::events::{Recorder, Reporter};
use kube_codegen_runtime::fake::{Action, FakeApiServer, Verb, errors};
use kube_codegen_runtime::informer::{DeleteEvent, Tombstone};
use kube_codegen_runtime::lister::Lister;
use kube_codegen_runtime::store::{ObjectKey, Store};
use kube_codegen_runtime::workqueue::WorkQueue;
use sample_api::Clientset;
use sample_api::apis::insujang::v1beta1::{TestResource, TestResourceSpec};
use sample_api::apis::samplecontroller::v1alpha1::{Foo, FooSpec, FooStatus};
use sample_api::generated::fake;
use sample_api::generated::listers::samplecontroller_v1alpha1::FooLister;
use sample_controller::foo::{self, Controller, OwnerEnqueuer, WriteMode, new_deployment};
use sample_controller::testresource;

const NS: &str = "default";

struct Fixture {
    server: FakeApiServer,
    clientset: Clientset,
    foos: Store<Foo>,
    deployments: Store<Deployment>,
    recorder: Recorder,
}

impl Fixture {
    fn new() -> Self {
        let (clientset, server) = fake::new_clientset();
        let recorder = Recorder::new(server.client(), Reporter::new("sample-controller"));
        Fixture {
            server,
            clientset,
            foos: Store::new(),
            deployments: Store::new(),
            recorder,
        }
    }

    /// Put a Foo in the fake server and the informer cache, as the Go test does.
    fn foo(&self, name: &str, replicas: i32, status: Option<FooStatus>) -> Foo {
        let mut f = Foo::new(
            name,
            FooSpec {
                deployment_name: format!("{name}-deployment"),
                replicas: Some(replicas),
            },
        );
        f.metadata.namespace = Some(NS.into());
        f.status = status;
        let stored: Foo = serde_json::from_value(self.server.add(&f).unwrap()).unwrap();
        self.foos.upsert(Arc::new(stored.clone()));
        stored
    }

    fn deployment(&self, d: Deployment) {
        let stored: Deployment = serde_json::from_value(self.server.add(&d).unwrap()).unwrap();
        self.deployments.upsert(Arc::new(stored));
    }

    /// The controller writing as the Go one does (create/update): the port of its tests.
    fn controller(&self) -> Controller {
        self.controller_writing(WriteMode::Update)
    }

    fn controller_writing(&self, mode: WriteMode) -> Controller {
        Controller::new(
            self.clientset.clone(),
            FooLister::new(Lister::new(self.foos.clone())),
            Lister::new(self.deployments.clone()),
            self.recorder.clone(),
            WorkQueue::new("foos"),
        )
        .with_write_mode(mode)
    }

    /// Writes to foos and deployments, as (verb, resource[/subresource]); informer reads
    /// and events are filtered out, like filterInformerActions in Go.
    fn writes(&self) -> Vec<String> {
        self.server
            .actions()
            .into_iter()
            .filter(|a: &Action| {
                !matches!(a.verb, Verb::Get | Verb::List | Verb::Watch)
                    && matches!(a.resource.as_str(), "foos" | "deployments")
            })
            .map(|a| match &a.subresource {
                Some(s) => format!("{} {}/{s}", a.verb, a.resource),
                None => format!("{} {}", a.verb, a.resource),
            })
            .collect()
    }

    async fn events(&self) -> Vec<(String, String, String)> {
        self.recorder.flush().await;
        self.server
            .objects("", "events", Some(NS))
            .into_iter()
            .map(|v| serde_json::from_value::<Event>(v).unwrap())
            .map(|e| {
                (
                    e.type_.unwrap_or_default(),
                    e.reason.unwrap_or_default(),
                    e.message.unwrap_or_default(),
                )
            })
            .collect()
    }
}

fn key(name: &str) -> ObjectKey {
    ObjectKey::namespaced(NS, name)
}

#[tokio::test]
async fn creates_deployment() {
    let f = Fixture::new();
    f.foo("test", 1, None);
    f.controller().sync_handler(&key("test")).await.unwrap();
    assert_eq!(f.writes(), ["create deployments", "update foos/status"]);
    let d: Deployment = f.server.get(Some(NS), "test-deployment").unwrap();
    assert_eq!(d.spec.replicas, Some(1));
    let labels = d.metadata.labels.clone().unwrap_or_default();
    let pod_labels = d
        .spec
        .template
        .metadata
        .as_ref()
        .unwrap()
        .labels
        .clone()
        .unwrap();
    assert_eq!(pod_labels["app"], "nginx");
    assert_eq!(pod_labels["controller"], "test");
    assert_eq!(
        (labels["app"].as_str(), labels["controller"].as_str()),
        ("nginx", "test")
    );
    let owner = &d.metadata.owner_references.as_ref().unwrap()[0];
    assert_eq!(
        (owner.kind.as_str(), owner.name.as_str(), owner.controller),
        ("Foo", "test", Some(true))
    );
    let mf = d.metadata.managed_fields.clone().unwrap_or_default();
    assert!(
        mf.iter()
            .any(|m| m.manager.as_deref() == Some("sample-controller"))
            || mf.is_empty()
    );
    assert_eq!(
        f.events().await,
        [(
            "Normal".into(),
            "Synced".into(),
            "Foo synced successfully".into()
        )]
    );
}

#[tokio::test]
async fn do_nothing_when_in_sync() {
    let f = Fixture::new();
    let foo = f.foo(
        "test",
        1,
        Some(FooStatus {
            available_replicas: 0,
        }),
    );
    f.deployment(new_deployment(&foo));
    f.controller().sync_handler(&key("test")).await.unwrap();
    // Go writes the unchanged status anyway; we skip writes that change nothing.
    assert!(f.writes().is_empty(), "{:?}", f.writes());
}

#[tokio::test]
async fn status_follows_the_deployment() {
    let f = Fixture::new();
    let foo = f.foo("test", 1, None);
    let mut d = new_deployment(&foo);
    d.status = Some(DeploymentStatus {
        available_replicas: Some(1),
        ..Default::default()
    });
    f.deployment(d);
    f.controller().sync_handler(&key("test")).await.unwrap();
    assert_eq!(f.writes(), ["update foos/status"]);
    let stored: Foo = f.server.get(Some(NS), "test").unwrap();
    assert_eq!(
        stored.status,
        Some(FooStatus {
            available_replicas: 1
        })
    );
}

#[tokio::test]
async fn update_deployment() {
    let f = Fixture::new();
    let foo = f.foo("test", 2, None);
    let mut d = new_deployment(&foo);
    d.spec.replicas = Some(1);
    f.deployment(d);
    f.controller().sync_handler(&key("test")).await.unwrap();
    assert_eq!(f.writes(), ["update deployments", "update foos/status"]);
    let d: Deployment = f.server.get(Some(NS), "test-deployment").unwrap();
    assert_eq!(d.spec.replicas, Some(2));
}

/// In a shard group the Deployment cache holds only Deployments with their Foo's slot
/// label: one made before (not cached) is found by its AlreadyExists, and labelled.
#[tokio::test]
async fn a_sharded_controller_labels_an_unlabelled_deployment_it_controls() {
    use kube_codegen_runtime::sharding::{DEFAULT_SLOTS, ShardGate, ShardKey, SlotLabel};
    let f = Fixture::new();
    let foo = f.foo("test", 1, None);
    // In the fake server, not in the (label-selected) cache.
    f.server.add(&new_deployment(&foo)).unwrap();
    let gate = ShardGate::new(ShardKey::Uid, DEFAULT_SLOTS, SlotLabel::for_group("foos"));
    let (label, slot) = gate.owner_label(&foo.metadata);
    let controller = f.controller().with_shard_gate(Some(gate.clone()));
    // The desired Deployment carries the label; its selector and pods do not.
    let desired = controller.desired_deployment(&foo);
    assert_eq!(desired.metadata.labels.as_ref().unwrap()[&label], slot);
    assert!(
        !desired
            .spec
            .selector
            .match_labels
            .as_ref()
            .unwrap()
            .contains_key(&label)
    );
    controller.sync_handler(&key("test")).await.unwrap();
    assert_eq!(
        f.writes(),
        [
            "create deployments",
            "patch deployments",
            "update foos/status"
        ]
    );
    let d: Deployment = f.server.get(Some(NS), "test-deployment").unwrap();
    assert_eq!(
        d.metadata.labels.unwrap().get(&label),
        Some(&gate.slot_of(&foo.metadata).to_string())
    );

    // A Deployment of that name that another owner controls is left alone.
    let g = Fixture::new();
    let foo = g.foo("test", 1, None);
    let mut foreign = new_deployment(&foo);
    foreign.metadata.owner_references = None;
    g.server.add(&foreign).unwrap();
    let err = g
        .controller()
        .with_shard_gate(Some(gate))
        .sync_handler(&key("test"))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("not managed by Foo"), "{err}");
    assert_eq!(g.writes(), ["create deployments"]);
}

#[tokio::test]
async fn not_controlled_by_us() {
    let f = Fixture::new();
    let foo = f.foo("test", 1, None);
    let mut d = new_deployment(&foo);
    d.metadata.owner_references = None;
    f.deployment(d);
    let err = f.controller().sync_handler(&key("test")).await.unwrap_err();
    assert!(
        err.to_string()
            .contains("already exists and is not managed by Foo"),
        "{err}"
    );
    assert!(
        f.writes().is_empty(),
        "must not touch the Deployment: {:?}",
        f.writes()
    );
    let events = f.events().await;
    assert_eq!(
        events,
        [(
            "Warning".into(),
            "ErrResourceExists".into(),
            "Resource \"test-deployment\" already exists and is not managed by Foo".into()
        )]
    );
}

#[tokio::test]
async fn missing_foo_is_not_an_error() {
    let f = Fixture::new();
    f.controller().sync_handler(&key("gone")).await.unwrap();
    assert!(f.writes().is_empty());
}

#[tokio::test]
async fn empty_deployment_name_is_dropped_with_a_warning() {
    let f = Fixture::new();
    let mut foo = Foo::new(
        "bad",
        FooSpec {
            deployment_name: String::new(),
            replicas: Some(1),
        },
    );
    foo.metadata.namespace = Some(NS.into());
    let stored: Foo = serde_json::from_value(f.server.add(&foo).unwrap()).unwrap();
    f.foos.upsert(Arc::new(stored));
    let c = f.controller();
    c.queue.add(key("bad"));
    assert!(c.process_next_work_item().await);
    assert_eq!(
        c.queue.num_requeues(&key("bad")),
        0,
        "no retry for an invalid spec"
    );
    assert_eq!(c.queue.len(), 0);
    assert_eq!(c.metrics.dropped.load(Ordering::Relaxed), 1);
    assert!(f.writes().is_empty());
    let events = f.events().await;
    assert_eq!(events.len(), 1);
    assert_eq!(
        (events[0].0.as_str(), events[0].1.as_str()),
        ("Warning", foo::INVALID_SPEC)
    );
}

#[tokio::test(start_paused = true)]
async fn conflict_on_status_update_is_retried() {
    let f = Fixture::new();
    f.foo("test", 1, None);
    let failures = Arc::new(AtomicUsize::new(0));
    let count = failures.clone();
    f.server
        .prepend_reactor(Verb::Update, "foos/status", move |_| {
            (count.fetch_add(1, Ordering::SeqCst) == 0).then(|| {
                Err(errors::stale_conflict(
                    "samplecontroller.k8s.io",
                    "foos",
                    "test",
                ))
            })
        });
    let c = f.controller();
    c.queue.add(key("test"));
    assert!(c.process_next_work_item().await);
    assert_eq!(
        c.queue.num_requeues(&key("test")),
        1,
        "a Conflict requeues with rate limiting"
    );
    assert_eq!(c.metrics.errors.load(Ordering::Relaxed), 1);
    // The Deployment informer would now have cached what the first attempt created.
    f.deployment(f.server.get(Some(NS), "test-deployment").unwrap());
    // The retry (after the rate limiter's delay) succeeds and forgets the key.
    assert!(c.process_next_work_item().await);
    assert_eq!(c.queue.num_requeues(&key("test")), 0);
    assert_eq!(c.metrics.success.load(Ordering::Relaxed), 1);
    assert_eq!(failures.load(Ordering::SeqCst), 2);
    assert_eq!(
        f.writes(),
        [
            "create deployments",
            "update foos/status",
            "update foos/status"
        ]
    );
}

#[tokio::test]
async fn handle_object_unwraps_tombstones_and_ignores_other_owners() {
    let f = Fixture::new();
    let foo = f.foo("test", 1, None);
    let queue = WorkQueue::new("foos");
    let enqueuer = OwnerEnqueuer::new(FooLister::new(Lister::new(f.foos.clone())), queue.clone());
    let d = Arc::new(new_deployment(&foo));
    enqueuer.handle_delete(DeleteEvent::Tombstone(Tombstone {
        key: key("test-deployment"),
        last_known: d.clone(),
    }));
    assert_eq!(queue.len(), 1);
    assert_eq!(queue.get().await.unwrap(), key("test"));

    // A Deployment controlled by something else is ignored.
    let mut other = (*d).clone();
    other.metadata.owner_references.as_mut().unwrap()[0].kind = "ReplicaSet".into();
    enqueuer.handle_object(&other);
    // An owner reference to a Foo with another uid (a recreated Foo) is ignored too.
    let mut stale = (*d).clone();
    stale.metadata.owner_references.as_mut().unwrap()[0].uid = "stale".into();
    enqueuer.handle_object(&stale);
    assert_eq!(queue.len(), 0);
}

#[tokio::test]
async fn testresource_gets_handled_through_a_copy() {
    let (clientset, server) = fake::new_clientset();
    let recorder = Recorder::new(server.client(), Reporter::new("sample-controller"));
    let mut tr = TestResource {
        types: TestResource::type_meta(),
        spec: TestResourceSpec {
            command: "echo hi".into(),
            custom_property: "x".into(),
        },
        ..Default::default()
    };
    tr.metadata.name = Some("t".into());
    tr.metadata.namespace = Some(NS.into());
    let stored: TestResource = serde_json::from_value(server.add(&tr).unwrap()).unwrap();
    let cached = Arc::new(stored);
    let ctx = Arc::new(testresource::Context {
        clientset,
        recorder: recorder.clone(),
    });
    let request = Request {
        key: key("t"),
        object: Some(cached.clone()),
    };
    let action = testresource::reconcile(request, ctx.clone()).await.unwrap();
    assert_eq!(action, Reconciled::Done);
    // A deleted TestResource is nothing to do.
    let gone = Request {
        key: key("gone"),
        object: None,
    };
    assert_eq!(
        testresource::reconcile(gone, ctx).await.unwrap(),
        Reconciled::Done
    );
    let after: TestResource = server.get(Some(NS), "t").unwrap();
    assert_eq!(after.status.as_deref(), Some("HANDLED"));
    assert_eq!(cached.status, None, "the cached object is never mutated");
    recorder.flush().await;
    let events: Vec<Event> = server
        .objects("", "events", Some(NS))
        .into_iter()
        .map(|v| serde_json::from_value(v).unwrap())
        .collect();
    assert_eq!(events[0].reason.as_deref(), Some("ObjectHandled"));
}

/// The managers of `obj`'s managedFields with their operations and subresources.
fn managers(obj: &serde_json::Value) -> Vec<String> {
    obj.pointer("/metadata/managedFields")
        .and_then(|m| m.as_array())
        .into_iter()
        .flatten()
        .map(|e| {
            format!(
                "{} {}{}",
                e["manager"].as_str().unwrap_or_default(),
                e["operation"].as_str().unwrap_or_default(),
                e["subresource"]
                    .as_str()
                    .map(|s| format!(" /{s}"))
                    .unwrap_or_default()
            )
        })
        .collect()
}

#[tokio::test]
async fn applies_the_deployment_and_the_status_under_one_field_manager() {
    let f = Fixture::new();
    f.foo("test", 1, None);
    f.controller_writing(WriteMode::Apply)
        .sync_handler(&key("test"))
        .await
        .unwrap();
    assert_eq!(f.writes(), ["patch deployments", "patch foos/status"]);
    let d = f
        .server
        .get_object("apps", "deployments", Some(NS), "test-deployment")
        .unwrap();
    assert_eq!(
        managers(&d),
        [format!("{} Apply", sample_controller::FIELD_MANAGER)]
    );
    assert_eq!(d["spec"]["replicas"], 1);
    assert_eq!(d["metadata"]["ownerReferences"][0]["kind"], "Foo");
    let foo = f
        .server
        .get_object("samplecontroller.k8s.io", "foos", Some(NS), "test")
        .unwrap();
    assert_eq!(foo["status"]["availableReplicas"], 0);
    assert!(
        managers(&foo).contains(&format!(
            "{} Apply /status",
            sample_controller::FIELD_MANAGER
        )),
        "{:?}",
        managers(&foo)
    );
}

#[tokio::test]
async fn applying_keeps_what_other_managers_own() {
    let f = Fixture::new();
    let foo = f.foo("test", 2, None);
    // Our Deployment at 1 replica, plus a label another manager applied.
    let mut d = new_deployment(&foo);
    d.spec.replicas = Some(1);
    f.deployment(d);
    let deployments: kube::Api<Deployment> = kube::Api::namespaced(f.server.client(), NS);
    let label = serde_json::json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "test-deployment", "labels": {"team": "web"}},
    });
    deployments
        .patch(
            "test-deployment",
            &kube::api::PatchParams::apply("labeler"),
            &kube::api::Patch::Apply(&label),
        )
        .await
        .unwrap();
    f.controller_writing(WriteMode::Apply)
        .sync_handler(&key("test"))
        .await
        .unwrap();
    let d: Deployment = f.server.get(Some(NS), "test-deployment").unwrap();
    assert_eq!(d.spec.replicas, Some(2));
    assert_eq!(
        d.metadata
            .labels
            .unwrap_or_default()
            .get("team")
            .map(String::as_str),
        Some("web"),
        "the other manager's label survives the controller's write"
    );
}

#[tokio::test(start_paused = true)]
async fn conflict_on_status_apply_is_retried() {
    let f = Fixture::new();
    f.foo("test", 1, None);
    let failures = Arc::new(AtomicUsize::new(0));
    let count = failures.clone();
    f.server
        .prepend_reactor(Verb::Patch, "foos/status", move |_| {
            (count.fetch_add(1, Ordering::SeqCst) == 0).then(|| {
                Err(errors::stale_conflict(
                    "samplecontroller.k8s.io",
                    "foos",
                    "test",
                ))
            })
        });
    let c = f.controller_writing(WriteMode::Apply);
    c.queue.add(key("test"));
    assert!(c.process_next_work_item().await);
    assert_eq!(c.queue.num_requeues(&key("test")), 1);
    assert_eq!(failures.load(Ordering::SeqCst), 1);
}
