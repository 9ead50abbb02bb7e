//! The kube-derive fixtures of `tests/fixtures/kube-derive/`, compiled as their users
//! compile them, so the tests can call kube-derive's own `crd()` on them; and the code
//! `generate` writes for the `basic` fixture, compiled against its kube-derive kinds.

#![deny(warnings)]

#[path = "../../fixtures/kube-derive/basic/src/lib.rs"]
pub mod basic;

/// What `kube-codegen generate` writes for `basic` (build.rs).
pub mod basic_generated {
    include!(concat!(env!("OUT_DIR"), "/basic.rs"));
}
