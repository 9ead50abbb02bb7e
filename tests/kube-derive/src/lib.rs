//! The kube-derive fixtures of `tests/fixtures/kube-derive/`, compiled as their users
//! compile them, so the tests can call kube-derive's own `crd()` on them; and the code
//! `generate` writes for the `basic` fixture, compiled against its kube-derive kinds.

#[path = "../../fixtures/kube-derive/basic/src/lib.rs"]
pub mod basic;
#[path = "../../fixtures/kube-derive/edge/src/lib.rs"]
pub mod edge;
#[path = "../../fixtures/kube-derive/kube_complex_enum/src/lib.rs"]
#[allow(unused_attributes, dead_code)] // kube-rs' test files, copied as they are
pub mod kube_complex_enum;
#[path = "../../fixtures/kube-derive/kube_enum/src/lib.rs"]
#[allow(unused_attributes, dead_code)] // kube-rs' test files, copied as they are
pub mod kube_enum;
#[path = "../../fixtures/kube-derive/kube_mixed_enum/src/lib.rs"]
#[allow(unused_attributes, dead_code)] // kube-rs' test files, copied as they are
pub mod kube_mixed_enum;
#[path = "../../fixtures/kube-derive/kube_schema/src/lib.rs"]
#[allow(unused_attributes, dead_code)] // kube-rs' test files, copied as they are
pub mod kube_schema;
#[path = "../../fixtures/kube-derive/kube_typed_subresource/src/lib.rs"]
#[allow(unused_attributes, dead_code)] // kube-rs' test files, copied as they are
pub mod kube_typed_subresource;
#[path = "../../fixtures/kube-derive/multi/src/lib.rs"]
pub mod multi;

/// What `kube-codegen generate` writes for `basic` (build.rs), warning-free.
#[deny(warnings)]
pub mod basic_generated {
    include!(concat!(env!("OUT_DIR"), "/basic/generated.rs"));
}

/// What `kube-codegen generate` writes for `edge` (build.rs): k8s-openapi types, a field
/// serialized by custom code, a flattened struct, a kind named by `#[kube(root)]`.
#[deny(warnings)]
pub mod edge_generated {
    include!(concat!(env!("OUT_DIR"), "/edge/generated.rs"));
}
