//! The generated conversions of Foo between v1alpha1 (spoke) and v1beta1 (hub): property
//! tests that nothing is lost either way, and the webhook's dispatch table.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::core::TypeMeta;
use kube_codegen_runtime::conversion::{Converter, Convertible};
use proptest::prelude::*;
use sample_api::apis::samplecontroller::{v1alpha1, v1beta1};
use serde_json::json;

const DATA: &str = "samplecontroller.k8s.io/conversion-data";

fn meta(labels: BTreeMap<String, String>, annotations: BTreeMap<String, String>) -> ObjectMeta {
    ObjectMeta {
        name: Some("x".into()),
        namespace: Some("default".into()),
        labels: (!labels.is_empty()).then_some(labels),
        annotations: (!annotations.is_empty()).then_some(annotations),
        ..Default::default()
    }
}

fn small_map() -> impl Strategy<Value = BTreeMap<String, String>> {
    prop::collection::btree_map("[a-z]{1,4}", "[a-z0-9]{0,4}", 0..3)
}

fn hub() -> impl Strategy<Value = v1beta1::Foo> {
    let scale = (prop::option::of(1..=10i32), prop::option::of(0..600i32));
    let status = prop::option::of(
        (0..10i32).prop_map(|available_replicas| v1beta1::FooStatus { available_replicas }),
    );
    ("[a-z-]{0,8}", scale, status, small_map(), small_map()).prop_map(
        |(deployment_name, (replicas, min_ready_seconds), status, labels, annotations)| {
            v1beta1::Foo {
                types: TypeMeta {
                    api_version: "samplecontroller.k8s.io/v1beta1".into(),
                    kind: "Foo".into(),
                },
                metadata: meta(labels, annotations),
                spec: v1beta1::FooSpec {
                    deployment_name,
                    replicas,
                    min_ready_seconds,
                },
                status,
            }
        },
    )
}

fn spoke() -> impl Strategy<Value = v1alpha1::Foo> {
    let status = prop::option::of(
        (0..10i32).prop_map(|available_replicas| v1alpha1::FooStatus { available_replicas }),
    );
    (
        "[a-z-]{0,8}",
        prop::option::of(1..=10i32),
        status,
        small_map(),
        small_map(),
    )
        .prop_map(
            |(deployment_name, replicas, status, labels, annotations)| v1alpha1::Foo {
                types: TypeMeta {
                    api_version: "samplecontroller.k8s.io/v1alpha1".into(),
                    kind: "Foo".into(),
                },
                metadata: meta(labels, annotations),
                spec: v1alpha1::FooSpec {
                    deployment_name,
                    replicas,
                },
                status,
            },
        )
}

proptest! {
    /// Any hub object survives hub -> v1alpha1 -> hub, minReadySeconds included.
    #[test]
    fn hub_to_spoke_and_back_is_unchanged(hub in hub()) {
        let spoke = v1alpha1::Foo::from_hub(&hub);
        prop_assert_eq!(&spoke.types.api_version, "samplecontroller.k8s.io/v1alpha1");
        prop_assert_eq!(spoke.spec.replicas, hub.spec.replicas);
        let back: v1beta1::Foo = spoke.to_hub();
        prop_assert_eq!(back, hub);
    }

    /// Any v1alpha1 object survives v1alpha1 -> hub -> v1alpha1, and gains no annotation.
    #[test]
    fn spoke_to_hub_and_back_is_unchanged(spoke in spoke()) {
        let hub: v1beta1::Foo = spoke.to_hub();
        prop_assert_eq!(hub.spec.replicas, spoke.spec.replicas);
        prop_assert_eq!(hub.spec.min_ready_seconds, None);
        prop_assert_eq!(v1alpha1::Foo::from_hub(&hub), spoke);
    }
}

#[test]
fn what_v1alpha1_cannot_hold_rides_in_the_annotation_and_edits_win() {
    let hub = v1beta1::Foo {
        types: TypeMeta {
            api_version: "samplecontroller.k8s.io/v1beta1".into(),
            kind: "Foo".into(),
        },
        metadata: meta(Default::default(), Default::default()),
        spec: v1beta1::FooSpec {
            deployment_name: "d".into(),
            replicas: Some(2),
            min_ready_seconds: Some(30),
        },
        status: None,
    };
    let mut spoke = v1alpha1::Foo::from_hub(&hub);
    let stored = &spoke.metadata.annotations.as_ref().unwrap()[DATA];
    assert!(stored.contains("\"minReadySeconds\":30"), "{stored}");
    // An update through v1alpha1 changes replicas; minReadySeconds comes back, the edit wins.
    spoke.spec.replicas = Some(5);
    let back: v1beta1::Foo = spoke.to_hub();
    assert_eq!(
        (back.spec.replicas, back.spec.min_ready_seconds),
        (Some(5), Some(30))
    );
    assert_eq!(
        back.metadata.annotations, None,
        "the annotation is not stored in the hub"
    );
    // Nothing lost: no annotation at all.
    let plain = v1beta1::Foo {
        spec: v1beta1::FooSpec {
            deployment_name: "d".into(),
            replicas: Some(2),
            min_ready_seconds: None,
        },
        ..hub
    };
    assert_eq!(v1alpha1::Foo::from_hub(&plain).metadata.annotations, None);
}

#[test]
fn the_dispatch_table_converts_by_api_version() {
    let converter = Converter::new(sample_api::generated::conversion::KINDS);
    let review = json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "ConversionReview",
        "request": {
            "uid": "1",
            "desiredAPIVersion": "samplecontroller.k8s.io/v1alpha1",
            "objects": [{
                "apiVersion": "samplecontroller.k8s.io/v1beta1",
                "kind": "Foo",
                "metadata": {"name": "a", "namespace": "default"},
                "spec": {"deploymentName": "a", "replicas": 3, "minReadySeconds": 10},
            }],
        },
    });
    let out = converter.review(&serde_json::to_vec(&review).unwrap());
    assert!(out.succeeded(), "{out:?}");
    let obj = &out.response.unwrap().converted_objects[0];
    assert_eq!(obj["apiVersion"], "samplecontroller.k8s.io/v1alpha1");
    assert_eq!(obj["spec"], json!({"deploymentName": "a", "replicas": 3}));
    // A v1alpha1 object that does not read fails the review with serde's message.
    let bad = json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "ConversionReview",
        "request": {
            "uid": "2",
            "desiredAPIVersion": "samplecontroller.k8s.io/v1beta1",
            "objects": [{"apiVersion": "samplecontroller.k8s.io/v1alpha1", "kind": "Foo", "metadata": {}, "spec": {"replicas": "three"}}],
        },
    });
    let out = converter.review(&serde_json::to_vec(&bad).unwrap());
    let msg = out.response.unwrap().result.message.unwrap();
    assert!(
        msg.starts_with("object 0: cannot read samplecontroller.k8s.io/v1alpha1 Foo"),
        "{msg}"
    );
}
