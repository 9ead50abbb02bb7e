//! kube-codegen-runtime: what generated code needs at run time.
//!
//! The user guide is the book in the repository's `docs/` (`hack/book.sh` builds it); for
//! this crate, see its chapters "Using the generated code" (clients, informers, the
//! controller builder), "Server-side apply", "Multi-version APIs and conversion" and
//! "Defaulting and validation".
//!
//! - [`deepcopy`]: the `DeepCopy` trait generated types implement;
//! - [`error`]: typed API errors (`NotFound`, `Conflict`, ...) that are easy to match;
//! - [`apply`]: server-side apply: the shared apply configuration of `metadata`, typed
//!   apply errors (a field conflict names managers and fields), extraction from
//!   managedFields;
//! - [`client`]: the generic typed client the generated per-kind clients delegate to;
//! - `fake` (feature `fake`): an in-memory API server behind a real `kube::Client`, for
//!   unit tests;
//! - [`informer`], [`store`], [`lister`]: shared informers with indexed caches and listers;
//! - [`workqueue`]: client-go's rate-limited work queue.
//!
//! - [`conversion`]: conversions between the versions of a kind (hub and spoke) and the
//!   `ConversionReview` dispatch generated code registers; `webhook` (feature `webhook`)
//!   serves it over HTTPS.
//!
//! Also [`events`] (client-go's event recorder), [`leader`] (Lease leader election) and
//! [`ratelimit`] (client-side QPS limits and the token bucket every limiter here uses), and
//! [`sharding`] (the API server's shard selectors for sharded list and watch, and shard groups:
//! replicas that split a kind between them through Leases); `endpoints` (feature
//! `endpoints`) serves a manager's `/metrics` and health probes over plain HTTP.
//!
//! Objects in caches and work queues are named by [`store::ObjectKey`] (typed; its string
//! form is client-go's `namespace/name`).

#![deny(missing_docs)]

pub mod apply;
/// The CEL evaluator for CRD validation rules: [`kube_codegen_validation::cel`], re-exported.
#[cfg(feature = "cel")]
pub use kube_codegen_validation::cel;
pub mod client;
pub mod contract;
pub mod controller;
pub mod conversion;
pub mod deepcopy;
#[cfg(feature = "endpoints")]
pub mod endpoints;
pub mod error;
pub mod events;
#[cfg(feature = "fake")]
pub mod fake;
pub mod informer;
pub mod leader;
pub mod lister;
pub mod ratelimit;
pub mod sharding;
pub mod store;
mod task;
// The CEL format library uses the validation module's name and format checkers, so
// `cel` compiles both; `validation` names the feature for what users want.
#[cfg(feature = "cel")]
pub mod validation;
#[cfg(feature = "webhook")]
pub mod webhook;
pub mod workqueue;

pub use deepcopy::DeepCopy;
pub use error::{Error, Result};

/// Expands to its items when this crate's `fake` feature is on, and to nothing otherwise.
///
/// Generated code wraps its `fake` module's items in it, so the generated
/// `fake::new_clientset()` exists exactly when the runtime has the fake API server: the
/// user's crate needs no feature of its own, and turning on `fake` in [dev-dependencies]
/// gives tests the fake clientset while the controller binary compiles neither.
#[cfg(feature = "fake")]
#[macro_export]
macro_rules! cfg_fake {
    ($($item:item)*) => { $($item)* };
}

/// Expands to its items when this crate's `fake` feature is on, and to nothing otherwise
/// (here it is off).
#[cfg(not(feature = "fake"))]
#[macro_export]
macro_rules! cfg_fake {
    ($($item:item)*) => {};
}
