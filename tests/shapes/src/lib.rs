//! Every shape the generator emits, compiled with `#![deny(warnings)]` (and clippy
//! `-D warnings` in CI): namespaced and cluster-scoped kinds, with and without status,
//! every verb subset marker, custom subresource verbs, and a kind without a client.

#![deny(warnings)]

pub mod api;

// ANCHOR: include
include!(concat!(env!("OUT_DIR"), "/kube_codegen.rs"));
// ANCHOR_END: include
