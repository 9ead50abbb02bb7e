//! The API types of the sample controller, annotated for kube-codegen.
//!
//! `src/apis` holds what a Go project keeps in doc.go and types.go; everything register.go
//! held by hand (group, version, kind, plural, scope) comes from the markers. The CRDs in
//! `crds/` are generated: `kube-codegen generate sample-api`.

pub mod apis;
pub mod generated;

pub use generated::clientset::Clientset;
