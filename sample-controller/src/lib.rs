//! sample-controller: the Rust port of kubernetes/sample-controller.
//!
//! Everything Kubernetes-specific comes from code kube-codegen generated for `sample-api`
//! (clientset, informers, listers, deep-copy) and from `kube-codegen-runtime` (workqueue,
//! event recorder, leader election). The control loop is the Go one, step for step.

pub mod admission;
pub mod audit;
pub mod conversion;
pub mod foo;
pub mod foo_builder;
pub mod testresource;

/// Field manager for every write the controller makes.
pub const FIELD_MANAGER: &str = "sample-controller";
/// Event source component.
pub const COMPONENT: &str = "sample-controller";
