//! The sample types on the wire: apiVersion and kind at the top level (from the flattened
//! TypeMeta), and objects as the API server returns them deserialize.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::core::TypeMeta;
use sample_api::apis::insujang::v1beta1::{TestResource, TestResourceSpec};
use sample_api::apis::samplecontroller::v1alpha1::{Foo, FooSpec, FooStatus};
use serde_json::{Value, json};

fn type_meta(api_version: &str, kind: &str) -> TypeMeta {
    TypeMeta {
        api_version: api_version.to_owned(),
        kind: kind.to_owned(),
    }
}

fn meta(name: &str) -> ObjectMeta {
    ObjectMeta {
        name: Some(name.to_owned()),
        namespace: Some("default".to_owned()),
        ..Default::default()
    }
}

#[test]
fn foo_round_trips_with_api_version_and_kind() {
    let foo = Foo {
        types: type_meta("samplecontroller.k8s.io/v1alpha1", "Foo"),
        metadata: meta("example-foo"),
        spec: FooSpec {
            deployment_name: "example-foo".to_owned(),
            replicas: Some(1),
        },
        status: Some(FooStatus {
            available_replicas: 1,
        }),
    };
    let value = serde_json::to_value(&foo).unwrap();
    assert_eq!(
        value,
        json!({
            "apiVersion": "samplecontroller.k8s.io/v1alpha1",
            "kind": "Foo",
            "metadata": {"name": "example-foo", "namespace": "default"},
            "spec": {"deploymentName": "example-foo", "replicas": 1},
            "status": {"availableReplicas": 1},
        })
    );
    let text = serde_json::to_string(&foo).unwrap();
    let back: Foo = serde_json::from_str(&text).unwrap();
    assert_eq!(back, foo);
}

#[test]
fn foo_leaves_out_absent_optionals() {
    let foo = Foo {
        types: type_meta("samplecontroller.k8s.io/v1alpha1", "Foo"),
        metadata: meta("bare"),
        spec: FooSpec {
            deployment_name: "bare".to_owned(),
            replicas: None,
        },
        status: None,
    };
    let value = serde_json::to_value(&foo).unwrap();
    let object = value.as_object().unwrap();
    assert!(!object.contains_key("status"), "{value}");
    assert!(
        !object["spec"].as_object().unwrap().contains_key("replicas"),
        "{value}"
    );
    assert_eq!(serde_json::from_value::<Foo>(value).unwrap(), foo);
}

#[test]
fn test_resource_round_trips_with_api_version_and_kind() {
    let tr = TestResource {
        types: type_meta("insujang.github.io/v1beta1", "TestResource"),
        metadata: meta("example-tr"),
        spec: TestResourceSpec {
            command: "echo Hello World!".to_owned(),
            custom_property: "asdasd=1234".to_owned(),
        },
        status: Some("HANDLED".to_owned()),
    };
    let value = serde_json::to_value(&tr).unwrap();
    assert_eq!(value["apiVersion"], "insujang.github.io/v1beta1");
    assert_eq!(value["kind"], "TestResource");
    assert_eq!(
        value["spec"],
        json!({"command": "echo Hello World!", "customProperty": "asdasd=1234"})
    );
    assert_eq!(value["status"], "HANDLED");
    let keys: Vec<&String> = value.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["apiVersion", "kind", "metadata", "spec", "status"]);
    let back: TestResource = serde_json::from_value(value).unwrap();
    assert_eq!(back, tr);
}

/// What `kubectl get foo example-foo -o json` prints, server-set fields and all.
const SERVER_FOO: &str = r#"{
    "apiVersion": "samplecontroller.k8s.io/v1alpha1",
    "kind": "Foo",
    "metadata": {
        "creationTimestamp": "2024-05-01T10:00:00Z",
        "generation": 2,
        "managedFields": [
            {
                "apiVersion": "samplecontroller.k8s.io/v1alpha1",
                "fieldsType": "FieldsV1",
                "fieldsV1": {"f:spec": {".": {}, "f:deploymentName": {}, "f:replicas": {}}},
                "manager": "kubectl-client-side-apply",
                "operation": "Update",
                "time": "2024-05-01T10:00:00Z"
            }
        ],
        "name": "example-foo",
        "namespace": "default",
        "resourceVersion": "4711",
        "uid": "6f1c2a9e-3b0d-4c55-9a47-1f0e3c2b7d11"
    },
    "spec": {"deploymentName": "example-foo", "replicas": 3},
    "status": {"availableReplicas": 2}
}"#;

#[test]
fn server_shaped_foo_deserializes() {
    let foo: Foo = serde_json::from_str(SERVER_FOO).unwrap();
    assert_eq!(
        foo.types,
        type_meta("samplecontroller.k8s.io/v1alpha1", "Foo")
    );
    assert_eq!(foo.metadata.name.as_deref(), Some("example-foo"));
    assert_eq!(foo.metadata.resource_version.as_deref(), Some("4711"));
    assert_eq!(foo.metadata.generation, Some(2));
    assert_eq!(foo.metadata.managed_fields.as_ref().map(Vec::len), Some(1));
    assert_eq!(
        foo.spec,
        FooSpec {
            deployment_name: "example-foo".to_owned(),
            replicas: Some(3)
        }
    );
    assert_eq!(
        foo.status,
        Some(FooStatus {
            available_replicas: 2
        })
    );

    // And back to the same JSON.
    let again = serde_json::to_value(&foo).unwrap();
    assert_eq!(again, serde_json::from_str::<Value>(SERVER_FOO).unwrap());
}

#[test]
fn server_shaped_test_resource_without_status_deserializes() {
    let tr: TestResource = serde_json::from_value(json!({
        "apiVersion": "insujang.github.io/v1beta1",
        "kind": "TestResource",
        "metadata": {"name": "example-tr", "namespace": "default", "uid": "1b2c", "resourceVersion": "1"},
        "spec": {"command": "echo Hello World!", "customProperty": "asdasd=1234"}
    }))
    .unwrap();
    assert_eq!(tr.types.kind, "TestResource");
    assert_eq!(tr.spec.command, "echo Hello World!");
    assert_eq!(tr.status, None);
}

/// A list response's items carry their own apiVersion and kind.
#[test]
fn list_items_deserialize() {
    let list: Value = json!({
        "apiVersion": "samplecontroller.k8s.io/v1alpha1",
        "kind": "FooList",
        "metadata": {"resourceVersion": "5000"},
        "items": [serde_json::from_str::<Value>(SERVER_FOO).unwrap()]
    });
    let items: Vec<Foo> = serde_json::from_value(list["items"].clone()).unwrap();
    assert_eq!(items.len(), 1);
    assert_eq!(items[0].types.kind, "Foo");
}
