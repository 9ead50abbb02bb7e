//! Generated apply configurations, compiled: unset fields are absent (for embedded
//! Kubernetes types too, which k8s-openapi's own types cannot do), lists append, maps
//! merge, and extraction keeps exactly what one manager owns, list-map items by key.

use k8s_openapi::api::core::v1::{Container, PodSpec, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
    Condition, FieldsV1, ManagedFieldsEntry, ObjectMeta, Time,
};
use kube_codegen_shapes::api::embed::{Placement, Workload, WorkloadSpec, WorkloadStatus};
use kube_codegen_shapes::api::v1::Mode;
use kube_codegen_shapes::applyconfigurations::embed_v1::{
    PlacementApplyConfiguration, WorkloadApplyConfiguration, WorkloadSpecApplyConfiguration,
    WorkloadStatusApplyConfiguration, extract_workload, extract_workload_status,
};
use kube_codegen_shapes::applyconfigurations::k8s::{
    ConditionApplyConfiguration, ContainerApplyConfiguration, PodSpecApplyConfiguration,
    PodTemplateSpecApplyConfiguration,
};
use kube_codegen_shapes::applyconfigurations::shapes_v1::{
    FullApplyConfiguration, FullSpecApplyConfiguration, ItemApplyConfiguration,
};
use serde_json::json;

fn container(name: &str) -> ContainerApplyConfiguration {
    ContainerApplyConfiguration::default().with_name(name)
}

fn app_template() -> PodTemplateSpecApplyConfiguration {
    PodTemplateSpecApplyConfiguration::default().with_spec(
        PodSpecApplyConfiguration::default()
            .with_containers([container("app").with_image("app:1")]),
    )
}

#[test]
fn only_what_is_set_is_sent_even_inside_kubernetes_types() {
    let config = WorkloadApplyConfiguration::new("w", "ns")
        .with_spec(WorkloadSpecApplyConfiguration::default().with_template(app_template()));
    assert_eq!(
        serde_json::to_value(&config).unwrap(),
        json!({
            "apiVersion": "embed.kube-codegen.dev/v1",
            "kind": "Workload",
            "metadata": {"name": "w", "namespace": "ns"},
            // k8s-openapi's PodSpec would also send every required field it has.
            "spec": {"template": {"spec": {"containers": [{"name": "app", "image": "app:1"}]}}}
        })
    );
    // What k8s-openapi's types send for the same intent: the over-claim the generated
    // configurations avoid.
    let typed = PodTemplateSpec {
        spec: Some(PodSpec {
            service_account_name: Some("sa".into()),
            ..PodSpec::default()
        }),
        ..PodTemplateSpec::default()
    };
    assert_eq!(
        serde_json::to_value(&typed).unwrap(),
        json!({"spec": {"containers": [], "serviceAccountName": "sa"}})
    );
    let _ = Container::default();
}

#[test]
fn lists_append_and_maps_merge() {
    let spec = FullSpecApplyConfiguration::default()
        .with_items([ItemApplyConfiguration::default().with_value(1)])
        .with_items([ItemApplyConfiguration::default().with_value(2)])
        .with_by_name([("a", ItemApplyConfiguration::default().with_value(1))])
        .with_by_name([
            ("b", ItemApplyConfiguration::default().with_value(2)),
            ("a", ItemApplyConfiguration::default().with_value(3)),
        ])
        .with_mode(Mode::default());
    let json =
        serde_json::to_value(FullApplyConfiguration::new("f", "ns").with_spec(spec)).unwrap();
    assert_eq!(json["spec"]["items"], json!([{"value": 1}, {"value": 2}]));
    assert_eq!(
        json["spec"]["byName"],
        json!({"a": {"value": 3}, "b": {"value": 2}})
    );
}

fn managed(
    manager: &str,
    subresource: Option<&str>,
    fields: serde_json::Value,
) -> ManagedFieldsEntry {
    ManagedFieldsEntry {
        manager: Some(manager.into()),
        operation: Some("Apply".into()),
        subresource: subresource.map(Into::into),
        api_version: Some("embed.kube-codegen.dev/v1".into()),
        fields_type: Some("FieldsV1".into()),
        fields_v1: Some(FieldsV1(fields)),
        time: None,
    }
}

fn condition(type_: &str, status: &str) -> Condition {
    Condition {
        type_: type_.into(),
        status: status.into(),
        reason: "Because".into(),
        message: "m".into(),
        last_transition_time: Time(k8s_openapi::jiff::Timestamp::UNIX_EPOCH),
        observed_generation: None,
    }
}

#[test]
fn extraction_keeps_what_the_manager_owns_of_embedded_types() {
    let mut w = Workload::default();
    w.types.api_version = "embed.kube-codegen.dev/v1".into();
    w.types.kind = "Workload".into();
    w.metadata = ObjectMeta {
        name: Some("w".into()),
        namespace: Some("ns".into()),
        labels: Some([("by-other".to_string(), "x".to_string())].into()),
        managed_fields: Some(vec![
            managed(
                "ctl",
                None,
                json!({"f:spec": {"f:template": {"f:spec": {"f:containers": {
                    "k:{\"name\":\"app\"}": {".": {}, "f:name": {}, "f:image": {}}
                }}}}}),
            ),
            managed(
                "other",
                None,
                json!({"f:metadata": {"f:labels": {"f:by-other": {}}}, "f:spec": {"f:zone": {}, "f:template": {"f:spec": {
                    "f:serviceAccountName": {},
                    "f:containers": {"k:{\"name\":\"sidecar\"}": {".": {}, "f:name": {}, "f:image": {}}}
                }}}}),
            ),
            managed(
                "ctl",
                Some("status"),
                json!({"f:status": {"f:conditions": {"k:{\"type\":\"Ready\"}": {
                    ".": {}, "f:type": {}, "f:status": {}, "f:reason": {}, "f:message": {}, "f:lastTransitionTime": {}
                }}}}),
            ),
        ]),
        ..ObjectMeta::default()
    };
    w.spec = WorkloadSpec {
        template: PodTemplateSpec {
            metadata: None,
            spec: Some(PodSpec {
                service_account_name: Some("sa".into()),
                containers: vec![
                    Container {
                        name: "app".into(),
                        image: Some("app:1".into()),
                        ..Container::default()
                    },
                    Container {
                        name: "sidecar".into(),
                        image: Some("side:1".into()),
                        ..Container::default()
                    },
                ],
                ..PodSpec::default()
            }),
        },
        selector: None,
        placement: Placement {
            zone: Some("a".into()),
        },
    };
    w.status = Some(WorkloadStatus {
        conditions: vec![condition("Ready", "True"), condition("Other", "False")],
    });

    let mine = extract_workload(&w, "ctl").unwrap();
    assert_eq!(
        mine,
        WorkloadApplyConfiguration::new("w", "ns")
            .with_spec(WorkloadSpecApplyConfiguration::default().with_template(app_template()))
    );
    let status = extract_workload_status(&w, "ctl").unwrap();
    assert_eq!(
        status,
        WorkloadApplyConfiguration::new("w", "ns").with_status(
            WorkloadStatusApplyConfiguration::default().with_conditions([
                ConditionApplyConfiguration::default()
                    .with_type("Ready")
                    .with_status("True")
                    .with_reason("Because")
                    .with_message("m")
                    .with_last_transition_time(Time(k8s_openapi::jiff::Timestamp::UNIX_EPOCH))
            ])
        )
    );
    let theirs = extract_workload(&w, "other").unwrap();
    let json = serde_json::to_value(&theirs).unwrap();
    assert_eq!(json["metadata"]["labels"], json!({"by-other": "x"}));
    assert_eq!(json["spec"]["zone"], "a", "flattened fields are the spec's");
    assert_eq!(
        theirs.spec.as_ref().unwrap().placement,
        PlacementApplyConfiguration::default().with_zone("a")
    );
    assert_eq!(
        json["spec"]["template"]["spec"],
        json!({"serviceAccountName": "sa", "containers": [{"name": "sidecar", "image": "side:1"}]})
    );

    // Malformed managedFields are an error, not a panic.
    let mut broken = w.clone();
    broken.metadata.managed_fields = Some(vec![managed(
        "ctl",
        None,
        json!({"f:spec": {"f:template": {"f:spec": {"f:containers": {"k:{oops": {}}}}}}),
    )]);
    let err = extract_workload(&broken, "ctl").unwrap_err();
    assert!(
        err.to_string()
            .contains("list-map key is not a JSON object"),
        "{err}"
    );
}
