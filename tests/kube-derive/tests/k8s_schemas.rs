//! The schemas kube-derive embeds for k8s-openapi types (their `JsonSchema` impls through
//! kube's schema settings and transforms), which `generate` reads from
//! `generator/src/schema/kube-derive-k8s.json` for kube-derive kinds: this test
//! computes them with the real schemars and kube, and fails when the file differs.
//! `KUBE_CODEGEN_BLESS=1 cargo test -p kube-codegen-kube-derive --test k8s_schemas` rewrites it.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1 as core;
use k8s_openapi::apimachinery::pkg::apis::meta::v1 as meta;
use kube::core::schema::{OptionalEnum, OptionalIntOrString, StructuralSchemaRewriter};
use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use schemars::transform::AddNullable;
use serde_json::Value;

/// What kube-derive's `crd()` does with a type (kube-derive 5's `schemagen`), without the
/// root's title.
fn schema<T: JsonSchema>() -> Value {
    let generator = SchemaSettings::openapi3()
        .with(|s| {
            s.inline_subschemas = true;
            s.meta_schema = None;
        })
        .with_transform(AddNullable::default())
        .with_transform(StructuralSchemaRewriter)
        .with_transform(OptionalEnum)
        .with_transform(OptionalIntOrString)
        .into_generator();
    let mut v = serde_json::to_value(generator.into_root_schema_for::<T>()).expect("a schema");
    if let Some(o) = v.as_object_mut() {
        o.remove("title");
    }
    v
}

/// The k8s-openapi types read, by the path kube-codegen names them with.
fn types() -> BTreeMap<&'static str, Value> {
    BTreeMap::from([
        (
            "apimachinery::pkg::util::intstr::IntOrString",
            schema::<k8s_openapi::apimachinery::pkg::util::intstr::IntOrString>(),
        ),
        (
            "apimachinery::pkg::api::resource::Quantity",
            schema::<k8s_openapi::apimachinery::pkg::api::resource::Quantity>(),
        ),
        (
            "apimachinery::pkg::apis::meta::v1::Time",
            schema::<meta::Time>(),
        ),
        (
            "apimachinery::pkg::apis::meta::v1::Condition",
            schema::<meta::Condition>(),
        ),
        (
            "apimachinery::pkg::apis::meta::v1::LabelSelector",
            schema::<meta::LabelSelector>(),
        ),
        (
            "apimachinery::pkg::apis::meta::v1::OwnerReference",
            schema::<meta::OwnerReference>(),
        ),
        (
            "api::core::v1::ObjectReference",
            schema::<core::ObjectReference>(),
        ),
        (
            "api::core::v1::LocalObjectReference",
            schema::<core::LocalObjectReference>(),
        ),
        (
            "api::core::v1::TypedLocalObjectReference",
            schema::<core::TypedLocalObjectReference>(),
        ),
        (
            "api::core::v1::SecretReference",
            schema::<core::SecretReference>(),
        ),
        (
            "api::core::v1::SecretKeySelector",
            schema::<core::SecretKeySelector>(),
        ),
        (
            "api::core::v1::ConfigMapKeySelector",
            schema::<core::ConfigMapKeySelector>(),
        ),
        ("api::core::v1::Toleration", schema::<core::Toleration>()),
        (
            "api::core::v1::ResourceRequirements",
            schema::<core::ResourceRequirements>(),
        ),
        ("api::core::v1::EnvVar", schema::<core::EnvVar>()),
        (
            "api::core::v1::ContainerPort",
            schema::<core::ContainerPort>(),
        ),
    ])
}

#[test]
fn kube_derive_k8s_schemas_are_fresh() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../generator/src/schema/kube-derive-k8s.json"
    );
    let data = serde_json::json!({
        "source": "k8s-openapi 0.29.0 (v1_37) JsonSchema impls through schemars 1 and kube 5's kube-derive settings (tests/kube-derive/tests/k8s_schemas.rs)",
        "types": types(),
    });
    let text = serde_json::to_string_pretty(&data).expect("JSON") + "\n";
    if std::env::var_os("KUBE_CODEGEN_BLESS").is_some() {
        std::fs::write(path, &text).expect("written");
    }
    let committed = std::fs::read_to_string(path).unwrap_or_default();
    assert!(
        committed == text,
        "{path} is stale: rerun with KUBE_CODEGEN_BLESS=1 and review the diff"
    );
}
