//! The Foo controller on the runtime's controller builder (`--foo-controller builder`): the
//! same sync as [`crate::foo`], which stays the faithful port of the Go control loop; the
//! event handlers, the owner lookup, the worker loop, backoff and shutdown are the
//! builder's.

use std::sync::Arc;

use k8s_openapi::api::apps::v1::Deployment;
use kube_codegen_runtime::controller::{Action, Builder, Controller, Metrics, Request};
use kube_codegen_runtime::informer::Informer;
use kube_codegen_runtime::sharding::ShardGate;
use kube_codegen_runtime::store::ObjectKey;
use kube_codegen_runtime::workqueue::WorkQueue;
use sample_api::apis::samplecontroller::v1alpha1::Foo;

use crate::foo::{self, SyncError};

/// Foos, and the Deployments they own (a Deployment's event reconciles its controller
/// Foo), on `queue` and counting into `metrics`; with a shard group's `gate` (`--shards
/// auto`), only the Foos of this replica's slots are cached and reconciled.
pub fn controller(
    foos: Informer<Foo>,
    deployments: Informer<Deployment>,
    queue: WorkQueue<ObjectKey>,
    metrics: Arc<Metrics>,
    workers: usize,
    gate: Option<ShardGate>,
) -> Controller<Foo> {
    // ANCHOR: sharded_builder
    let mut builder = Builder::for_kind(foos)
        .owns(deployments)
        .named("foos")
        .with_queue(queue)
        .with_metrics(metrics)
        .max_concurrent_reconciles(workers);
    if let Some(gate) = gate {
        // Before the informers start: the Foo informer caches this replica's slots.
        builder = builder.sharded(gate);
    }
    // ANCHOR_END: sharded_builder
    builder.build()
}

/// One Foo: the Go controller's sync. Errors retrying cannot fix (no deployment name) are
/// done, as the Go loop forgets them; the rest back off.
///
/// Counted in the ported loop's counters too (`controller_reconcile_total{controller="foo"}`),
/// so dashboards and the fault suite read either loop the same way.
///
/// What it may do, as kubebuilder writes it on `Reconcile` (the `rbac` generator writes
/// `config/rbac/role.yaml` from these): informers on Foos, and their slot label in a shard
/// group's label mode (patch); status through the status
/// subresource (patch: server-side apply, the default --write-mode; update:
/// --write-mode=update); the owned Deployments (patch: server-side apply; create and update:
/// --write-mode=update); events about Foos (count aggregation patches existing ones).
///
/// +kubebuilder:rbac:groups=samplecontroller.k8s.io,resources=foos,verbs=get;list;watch;patch,roleName=sample-controller
/// +kubebuilder:rbac:groups=samplecontroller.k8s.io,resources=foos/status,verbs=patch;update,roleName=sample-controller
/// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;patch;update,roleName=sample-controller
/// +kubebuilder:rbac:groups=core,resources=events,verbs=create;patch,roleName=sample-controller
pub async fn reconcile(req: Request<Foo>, sync: Arc<foo::Controller>) -> Result<Action, SyncError> {
    let _audit = sync.audit().map(|a| a.begin(&req.key));
    let start = std::time::Instant::now();
    let result = sync.sync_handler(&req.key).await;
    sync.metrics.observe(&result, start.elapsed());
    match result {
        Ok(()) => Ok(Action::Done),
        Err(e) if e.is_permanent() => {
            tracing::warn!(key = %req.key, error = %e, "dropping foo: retrying cannot help");
            Ok(Action::Done)
        }
        Err(e) => Err(e),
    }
}
