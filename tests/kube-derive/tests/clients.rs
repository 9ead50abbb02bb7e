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
