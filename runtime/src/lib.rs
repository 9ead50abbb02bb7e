//! kube-codegen-runtime: what generated code needs at run time.
//!
//! - [`deepcopy`]: the `DeepCopy` trait generated types implement;
//! - [`error`]: typed API errors (`NotFound`, `Conflict`, ...) that are easy to match;
//! - [`client`]: the generic typed client the generated per-kind clients delegate to;
//! - [`fake`]: an in-memory API server behind a real `kube::Client`, for unit tests;
//! - [`informer`], [`store`], [`lister`]: shared informers with indexed caches and listers;
//! - [`workqueue`]: client-go's rate-limited work queue.
//!
//! Also [`events`] (client-go's event recorder), [`leader`] (Lease leader election) and
//! [`ratelimit`] (client-side QPS limits and the token bucket every limiter here uses).
//!
//! Objects in caches and work queues are named by [`store::ObjectKey`] (typed; its string
//! form is client-go's `namespace/name`).

#![deny(missing_docs)]

pub mod client;
pub mod contract;
pub mod deepcopy;
pub mod error;
pub mod events;
pub mod fake;
pub mod informer;
pub mod leader;
pub mod lister;
pub mod ratelimit;
pub mod store;
pub mod workqueue;

pub use deepcopy::DeepCopy;
pub use error::{Error, Result};
