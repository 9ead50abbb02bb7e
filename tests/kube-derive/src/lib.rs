//! The kube-derive fixtures of `tests/fixtures/kube-derive/`, compiled as their users
//! compile them, so the tests can call kube-derive's own `crd()` on them.

#[path = "../../fixtures/kube-derive/basic/src/lib.rs"]
pub mod basic;
