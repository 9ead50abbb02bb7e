//! A real Kubernetes control plane for your controller's tests: etcd and kube-apiserver
//! (and, if asked, kube-controller-manager) on free loopback ports, your CRDs installed,
//! and a [`kube::Client`] for it. The Rust analogue of controller-runtime's `envtest`.
//!
//! The user guide is the book in the repository's `docs/` (`hack/book.sh` builds it); for
//! this crate, see its chapter "Testing your controller: envtest".
//!
//! ```no_run
//! use kube::api::{Api, DynamicObject, ApiResource, PostParams};
//! use kube::core::GroupVersionKind;
//!
//! # async fn example() -> Result<(), Box<dyn std::error::Error>> {
//! // One environment per test (a start takes a few seconds); several run in parallel.
//! let env = kube_codegen_envtest::Environment::builder()
//!     .crd_dir("config/crd")
//!     .start()
//!     .await?;
//! let gvk = GroupVersionKind::gvk("samplecontroller.k8s.io", "v1alpha1", "Foo");
//! let foos: Api<DynamicObject> =
//!     Api::namespaced_with(env.client(), "default", &ApiResource::from_gvk(&gvk));
//! // ... run your reconciler against env.client(), or your controller binary with
//! // KUBECONFIG=env.kubeconfig_path(), and assert on what it did ...
//! env.stop().await?; // or just drop it: that stops it too, also when the test panics
//! # Ok(())
//! # }
//! ```
//!
//! No containers and no kubelet: Pods stay `Pending`, but everything the API server does
//! (validation, defaulting, admission, RBAC, watches, server-side apply, CRD schemas and
//! CEL rules) is the real thing, and with [`Builder::controller_manager`] so is what the
//! built-in controllers do (garbage collection, namespace deletion, ServiceAccounts).
//!
//! # Binaries
//!
//! The pinned [`KUBERNETES_VERSION`] and [`ETCD_VERSION`] are built once from Go modules
//! with the machine's Go toolchain ([`Binaries::build`], or `kube-codegen-envtest build`)
//! and cached in `~/.cache/kube-codegen/k8s-v1.37.2/bin` (`$KUBE_CODEGEN_CACHE` moves the
//! root), outside any clone. [`Binaries::find`] (what
//! [`Builder::start`] calls) looks in `$KUBE_CODEGEN_ENVTEST_BIN` first, then in the cache;
//! it never builds, so a test never spends minutes compiling Kubernetes by surprise: a
//! missing binary is an error that says how to build it.
//!
//! # Lifetime
//!
//! Each [`Environment`] has its own temporary directory (certificates, kubeconfig, logs,
//! etcd data) and ports. Dropping it kills its processes and removes the directory, also
//! when a test panics; a process killed with SIGKILL (the test binary itself) cannot run
//! destructors, so its control plane outlives it.
//!
//! A [`SharedEnvironment`] in a `static` is one environment for all the tests of a test
//! binary (each in its own namespace): started by the first test that asks, stopped when
//! the process exits, and on Linux tied to the process's life so that even a SIGKILLed
//! test binary leaves no etcd or kube-apiserver behind.
//!
//! # Detached
//!
//! [`Builder::start_detached`] starts a control plane that outlives the process: in a
//! directory of your choosing, on fixed [`Ports`], each process in a session of its own.
//! Its whole state is that directory (pid files, logs, certificates, kubeconfig, etcd
//! data, and each process's command line), so a [`DetachedEnvironment`] from any later
//! process reports on it, crashes and restarts its API server, or stops it. The
//! `kube-codegen-envtest` command (feature `cli`) exposes it as `up --detach`, `status`,
//! `env`, `kill-apiserver`, `start-apiserver`, `apiserver-restart` and `down`, for shells,
//! benchmarks and test runners of other languages.
#![deny(missing_docs)]

mod binaries;
mod crds;
mod detached;
mod environment;
mod error;
mod pki;
mod shared;

pub use binaries::{
    BIN_DIR_ENV, Binaries, CACHE_ENV, ETCD_VERSION, KUBERNETES_VERSION, cache_bin_dir, cache_root,
};
pub use detached::{DetachedEnvironment, DetachedStatus, Ports};
pub use environment::{Builder, Environment};
pub use error::{Component, Error};
pub use shared::SharedEnvironment;
