//! The generated shapes behave as their markers say, over the fake API server.

use kube::api::{ListParams, PostParams};
use kube_codegen_runtime::DeepCopy;
use kube_codegen_runtime::fake::Verb;
use kube_codegen_shapes::api::v1::*;
use kube_codegen_shapes::fake;

#[tokio::test]
async fn cluster_scoped_and_subset_clients_work() {
    let (cs, server) = fake::new_clientset();
    let clusters = cs.shapes_v1().clusters();
    let c = Cluster::new("c1", Label("x".into()));
    let created = clusters.create(&c, &PostParams::default()).await.unwrap();
    assert_eq!(created.metadata.namespace, None);
    assert_eq!(
        clusters
            .list(&ListParams::default())
            .await
            .unwrap()
            .items
            .len(),
        1
    );

    let scaled = cs.shapes_v1().scaleds("ns");
    scaled
        .create(
            &Scaled::new("s", Replicas { replicas: 2 }),
            &PostParams::default(),
        )
        .await
        .unwrap();
    assert_eq!(scaled.get("s").await.unwrap().spec.replicas, 2);
    scaled.delete("s", &Default::default()).await.unwrap();
    assert!(
        server
            .actions()
            .iter()
            .any(|a| a.verb == Verb::Delete && a.resource == "scaleds")
    );
}

#[test]
fn register_constants_and_resources() {
    assert_eq!(Full::API_VERSION, "shapes.kube-codegen.dev/v1");
    assert_eq!(Cluster::PLURAL, "clusters");
    assert_eq!(<NoClient as kube::Resource>::plural(&()), "noclients");
    let kinds: Vec<String> = kube_codegen_shapes::register::api_resources()
        .into_iter()
        .map(|r| r.kind)
        .collect();
    assert_eq!(
        kinds,
        [
            "Gen", "Thing", "Typed",    // 1password.example.com/v1
            "Krate",    // crate.example.com/v1
            "Workload", // embed/v1
            // golayout/v1: kinds in a private `types.rs`, a `#[path]` file and an inline module.
            "Gadget", "Gizmo", "Widget", //
            "Own",    // self.example.com/v1
            // shapes/v1
            "Cluster", "Full", "NoClient", "Ported", "ReadOnly", "Scaled", "Silent", "Skipper",
            "Sup" // super.example.com/v1
        ]
    );
}

/// Kinds of a Go-style layout (doc.go -> `v1/mod.rs`, types.go -> private `v1/types.rs`
/// re-exported, a `#[path]` file, an inline module) get clients under their re-exported paths.
#[tokio::test]
async fn go_layout_kinds_have_clients() {
    use kube_codegen_shapes::api::golayout::v1 as golayout;
    assert_eq!(golayout::Gizmo::API_VERSION, "golayout.kube-codegen.dev/v1");
    assert_eq!(golayout::GROUP_NAME, "golayout.kube-codegen.dev");
    let (cs, _server) = fake::new_clientset();
    let gizmo = golayout::Gizmo::new(
        "g",
        golayout::GizmoSpec {
            deployment_name: "d".into(),
            replicas: Some(1),
        },
    );
    let created = cs
        .golayout_v1()
        .gizmos("ns")
        .create(&gizmo, &PostParams::default())
        .await
        .unwrap();
    assert_eq!(created.spec.deployment_name, "d");
    let widget = golayout::Widget::new(
        "w",
        golayout::WidgetSpec {
            color: "red".into(),
        },
    );
    cs.golayout_v1()
        .widgets("ns")
        .create(&widget, &PostParams::default())
        .await
        .unwrap();
    let gadget = golayout::inline::Gadget::new("x", golayout::inline::GadgetSpec { size: 3 });
    let gadget = cs
        .golayout_v1()
        .gadgets()
        .create(&gadget, &PostParams::default())
        .await
        .unwrap();
    assert_eq!(gadget.metadata.namespace, None, "cluster-scoped");
}

#[test]
fn deep_copy_into_equals_clone_and_reuses_buffers() {
    let mut src = Full::new(
        "f",
        FullSpec {
            name: "n".repeat(10),
            ..Default::default()
        },
    );
    src.spec.items = vec![
        Item {
            value: 1,
            tags: vec!["a".into()],
        },
        Item {
            value: 2,
            tags: vec![],
        },
    ];
    src.spec.primary = Some(Item {
        value: 3,
        tags: vec!["p".into()],
    });
    src.spec.by_name.insert(
        "k".into(),
        Item {
            value: 4,
            tags: vec![],
        },
    );
    src.status = Some(FullStatus { ready: true });
    let mut dst = Full::default();
    dst.spec.name = String::with_capacity(128);
    let ptr = dst.spec.name.as_ptr();
    src.deep_copy_into(&mut dst);
    assert_eq!(dst, src);
    assert_eq!(
        dst.spec.name.as_ptr(),
        ptr,
        "the destination's string buffer was reused"
    );
    assert_eq!(src.deep_copy(), src);
}

/// The ported shapes serialize as their CRD schema says (aliases as their targets, `into`
/// as a String, fixed arrays as arrays, enum and newtype keys as strings), read back, and
/// deep-copy.
#[test]
fn ported_shapes_round_trip_in_their_wire_form() {
    let mut spec = PortedSpec {
        name: "a".into(),
        other: "b".into(),
        host: "example.com".into(),
        phase: Phase("Running".into()),
        fixed: [1, 2, 3],
        blob: Blob(b"hi".to_vec()),
        version: Version { major: 1, minor: 2 },
        timeout: std::time::Duration::from_secs(90),
        ..Default::default()
    };
    spec.by_phase.insert(Phase("Pending".into()), 1);
    spec.by_mode.insert(Mode::Safe, Item::default());
    spec.by_version
        .insert(Version { major: 2, minor: 0 }, "x".into());
    let json = serde_json::to_value(&spec).unwrap();
    assert_eq!(json["version"], "v1.2");
    assert_eq!(json["timeout"], "90s");
    assert_eq!(json["fixed"], serde_json::json!([1, 2, 3]));
    assert_eq!(json["phase"], "Running");
    assert_eq!(json["blob"], "aGk=");
    assert_eq!(json["byPhase"], serde_json::json!({"Pending": 1}));
    assert!(json["byMode"]["Safe"].is_object());
    assert_eq!(json["byVersion"], serde_json::json!({"v2.0": "x"}));
    let back: PortedSpec = serde_json::from_value(json).unwrap();
    assert_eq!(back, spec);
    let obj = Ported::new("p", spec);
    assert_eq!(obj.deep_copy(), obj);
}

/// Groups and plurals Kubernetes allows and Rust does not (`1password`, `self`, `type`)
/// get identifiers all the same, and their clients and informers reach the right resources.
#[tokio::test]
async fn groups_and_plurals_that_are_no_rust_names_get_clients() {
    use kube_codegen_shapes::api::names::{digit_group, self_group};
    let (cs, server) = fake::new_clientset();
    let things = cs._1password_v1()._1things("ns");
    let thing = digit_group::Thing::new("t", digit_group::ThingSpec { name: "x".into() });
    things.create(&thing, &PostParams::default()).await.unwrap();
    assert_eq!(things.get("t").await.unwrap().spec.name, "x");
    let typed = digit_group::Typed::new("t", digit_group::TypedSpec::default());
    cs._1password_v1()
        .r#type("ns")
        .create(&typed, &PostParams::default())
        .await
        .unwrap();
    let own = self_group::Own::new("o", self_group::OwnSpec::default());
    cs.self_v1()
        .self_("ns")
        .create(&own, &PostParams::default())
        .await
        .unwrap();
    let resources: Vec<(String, String)> = server
        .actions()
        .iter()
        .filter(|a| a.verb == Verb::Create)
        .map(|a| (a.group.clone(), a.resource.clone()))
        .collect();
    assert_eq!(
        resources,
        [
            ("1password.example.com".to_owned(), "1things".to_owned()),
            ("1password.example.com".to_owned(), "type".to_owned()),
            ("self.example.com".to_owned(), "self".to_owned()),
        ]
    );
    assert_eq!(digit_group::Thing::PLURAL, "1things");
    assert_eq!(self_group::Own::API_VERSION, "self.example.com/v1");
}
