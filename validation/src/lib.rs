//! kube-codegen-validation: what the API server does with a custom resource's schema,
//! without a client.
//!
//! - [`validation`]: pruning, defaulting and validation of values from a CRD's structural
//!   schema (the OpenAPI value validations, list-type uniqueness, `x-kubernetes-validations`
//!   rules with transition rules and ratcheting);
//! - [`cel`]: the CEL evaluator for those rules, with the Kubernetes CEL libraries.
//!
//! kube-codegen-runtime re-exports both (`kube_codegen_runtime::{cel, validation}`, features
//! `cel` and `validation`) for generated code; the generator uses them to check a CRD's
//! defaults as the API server does when it creates the CRD. This crate is apart from the
//! runtime so that the generator, which build scripts run, compiles no kube, k8s-openapi or
//! tokio.

#![deny(missing_docs)]

pub mod cel;
pub mod re2;
pub mod validation;
