//! The code `generate` writes for kube-derive kinds, used as the users of those kinds use
//! it: the typed clientset over the fake API server (create, update_status, list, delete),
//! an apply configuration with apiVersion and kind, deep copies, the register constants,
//! and kube-derive's own `Resource` impl underneath (not a second one).

use kube::api::{ListParams, PostParams};
use kube::{CustomResourceExt, Resource};
use kube_codegen_kube_derive::basic::{
    Document, DocumentSpec, DocumentStatus, Owner, Phase, Shelf, ShelfSpec,
};
use kube_codegen_kube_derive::basic_generated::{applyconfigurations, fake};
use kube_codegen_runtime::DeepCopy;
use kube_codegen_runtime::fake::Verb;

fn spec(title: &str) -> DocumentSpec {
    DocumentSpec {
        title: title.into(),
        hidden: false,
        replicas: 1,
        size: None,
        weight: 1.5,
        ratio: None,
        count: 2,
        big: 3,
        small: 4,
        tags: vec!["a".into()],
        labels: Default::default(),
        owners: None,
        main_owner: Owner {
            name: "ann".into(),
            email: None,
        },
        backup_owner: None,
        phase: Phase::Draft,
        next_phase: Some(Phase::Published),
        original: "o".into(),
        defaulted: false,
        defaulted_count: 0,
        defaulted_list: vec![],
        cache: String::new(),
        extra: serde_json::json!({"free": "form"}),
        maybe_extra: None,
        nested_map: Default::default(),
    }
}

#[tokio::test]
async fn the_typed_clients_serve_kube_derive_kinds() {
    let (cs, server) = fake::new_clientset();
    let docs = cs.basic_v1().documents("ns");
    // kube-derive's own constructor: register does not generate a second one.
    let created = docs
        .create(&Document::new("d1", spec("first")), &PostParams::default())
        .await
        .unwrap();
    assert_eq!(created.metadata.namespace.as_deref(), Some("ns"));
    assert_eq!(created.spec.title, "first");

    let mut with_status = created.deep_copy();
    with_status.status = Some(DocumentStatus {
        replicas: 1,
        observed_generation: Some(1),
        message: "ok".into(),
    });
    let updated = docs
        .update_status(&with_status, &PostParams::default())
        .await
        .unwrap();
    assert_eq!(updated.status.unwrap().message, "ok");

    assert_eq!(
        docs.list(&ListParams::default()).await.unwrap().items.len(),
        1
    );
    docs.delete("d1", &Default::default()).await.unwrap();
    assert!(
        server
            .actions()
            .iter()
            .any(|a| a.verb == Verb::Delete && a.resource == "documents")
    );

    // A cluster-scoped kind without status: no status verbs, no namespace.
    let shelves = cs.basic_v1alpha1().shelves();
    let s = shelves
        .create(
            &Shelf::new("s1", ShelfSpec { capacity: 3 }),
            &PostParams::default(),
        )
        .await
        .unwrap();
    assert_eq!(s.metadata.namespace, None);
}

#[test]
fn register_and_kube_derive_agree() {
    assert_eq!(Document::API_VERSION, "basic.example.com/v1");
    assert_eq!(Document::PLURAL, <Document as Resource>::plural(&()));
    assert_eq!(Shelf::PLURAL, "shelves");
    assert_eq!(Document::SHORT_NAMES, Document::shortnames());
    assert_eq!(
        Document::api_resource(),
        <Document as CustomResourceExt>::api_resource()
    );
}

#[test]
fn apply_configurations_carry_api_version_and_kind() {
    let config = applyconfigurations::basic_v1::DocumentApplyConfiguration::new("d", "ns")
        .with_spec(
            applyconfigurations::basic_v1::DocumentSpecApplyConfiguration::default()
                .with_title("t"),
        );
    assert_eq!(
        serde_json::to_value(&config).unwrap(),
        serde_json::json!({
            "apiVersion": "basic.example.com/v1",
            "kind": "Document",
            "metadata": {"name": "d", "namespace": "ns"},
            "spec": {"title": "t"}
        })
    );
}

/// A kind named apart from its struct (`#[kube(root)]`), with k8s-openapi types, a field
/// serialized by custom code and a flattened struct: the typed client round-trips it.
#[tokio::test]
async fn edge_kinds_round_trip_through_the_typed_client() {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, LabelSelector, Time};
    use kube_codegen_kube_derive::edge::*;
    use kube_codegen_kube_derive::edge_generated::fake as edge_fake;

    let (cs, _server) = edge_fake::new_clientset();
    let edges = cs.edge_v1beta1().edges("ns");
    let spec = EdgeSpec {
        name: "e".into(),
        port: k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::Int(80),
        maybe_port: None,
        memory: k8s_openapi::apimachinery::pkg::api::resource::Quantity("1Gi".into()),
        maybe_memory: None,
        started: None,
        strict: Strict { only: true },
        common: Common {
            owner_name: "ann".into(),
            note: None,
        },
        unique: Default::default(),
        pair: [1, 2],
        level: Level::High,
        retries: 3,
        mode: "fast".into(),
        defaults: Defaults::default(),
        short: "s".into(),
        ranged: 5,
        lower: None,
        few: vec![],
        contact: "a@example.com".into(),
        home: None,
        code: "ab".into(),
        by_name: Default::default(),
        sizes: Default::default(),
        owner: None,
        selector: LabelSelector::default(),
        every: std::time::Duration::from_secs(30),
        timeout: std::time::Duration::from_secs(5),
    };
    let created = edges
        .create(&EdgeResource::new("e1", spec), &PostParams::default())
        .await
        .unwrap();
    assert_eq!(created.spec.every, std::time::Duration::from_secs(30));
    assert_eq!(created.spec.common.owner_name, "ann");

    let mut with_status = created.deep_copy();
    with_status.status = Some(EdgeStatus {
        ready: true,
        conditions: vec![Condition {
            type_: "Ready".into(),
            status: "True".into(),
            reason: "Up".into(),
            message: String::new(),
            last_transition_time: Time(k8s_openapi::jiff::Timestamp::UNIX_EPOCH),
            observed_generation: None,
        }],
    });
    let updated = edges
        .update_status(&with_status, &PostParams::default())
        .await
        .unwrap();
    assert_eq!(updated.status.unwrap().conditions[0].reason, "Up");
}
