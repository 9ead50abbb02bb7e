//! The TestResource controller from the "Programming Kubernetes CRDs" tutorial: every new
//! TestResource gets status "HANDLED" (set on a copy, never on the cached object) and an
//! `ObjectHandled` event. Written on the runtime's controller builder: the event handlers,
//! the worker loop, backoff and shutdown are the builder's, the reconcile is what is left.

use std::sync::Arc;

use kube::api::PostParams;
use kube_codegen_runtime::DeepCopy;
use kube_codegen_runtime::controller::{Action, Builder, Controller, Metrics, Request};
use kube_codegen_runtime::events::{EventType, Recorder, object_ref};
use kube_codegen_runtime::informer::Informer;
use kube_codegen_runtime::store::ObjectKey;
use kube_codegen_runtime::workqueue::WorkQueue;
use sample_api::Clientset;
use sample_api::apis::insujang::v1beta1::TestResource;

use crate::FIELD_MANAGER;

pub const HANDLED: &str = "HANDLED";
pub const OBJECT_HANDLED: &str = "ObjectHandled";
pub const MESSAGE_HANDLED: &str = "Object is handled by custom controller.";

/// What the reconcile needs besides the object.
pub struct Context {
    pub clientset: Clientset,
    pub recorder: Recorder,
}

/// The controller: TestResources, reconciled on creation and change, on `queue` and
/// counting into `metrics` (both exposed by the binary's /metrics).
pub fn controller(
    informer: Informer<TestResource>,
    queue: WorkQueue<ObjectKey>,
    metrics: Arc<Metrics>,
    workers: usize,
    gate: Option<kube_codegen_runtime::sharding::ShardGate>,
) -> Controller<TestResource> {
    let builder = Builder::for_kind(informer);
    let builder = match gate {
        Some(gate) => builder.sharded(gate),
        None => builder,
    };
    builder
        .named("testresources")
        .with_queue(queue)
        .with_metrics(metrics)
        .max_concurrent_reconciles(workers)
        .build()
}

/// Mark a TestResource handled, once: status on a copy (never on the cached object), then
/// the event. A deleted TestResource needs nothing.
///
/// Its informer, the HANDLED status (no status subresource: update), the slot label in a
/// shard group's label mode (patch) and the event:
///
/// +kubebuilder:rbac:groups=insujang.github.io,resources=testresources,verbs=get;list;watch;update;patch,roleName=sample-controller
/// +kubebuilder:rbac:groups=core,resources=events,verbs=create;patch,roleName=sample-controller
pub async fn reconcile(
    req: Request<TestResource>,
    ctx: Arc<Context>,
) -> Result<Action, kube_codegen_runtime::Error> {
    let Some(tr) = req.object else {
        return Ok(Action::Done);
    };
    let Some(ns) = req.key.namespace() else {
        return Ok(Action::Done);
    };
    if tr.status.as_deref() == Some(HANDLED) {
        return Ok(Action::Done);
    }
    let mut copy = tr.deep_copy();
    copy.status = Some(HANDLED.into());
    let params = PostParams {
        field_manager: Some(FIELD_MANAGER.into()),
        ..Default::default()
    };
    let updated = ctx
        .clientset
        .insujang_v1beta1()
        .testresources(ns)
        .update(&copy, &params)
        .await?;
    ctx.recorder.record(
        &object_ref(&updated),
        EventType::Normal,
        OBJECT_HANDLED,
        MESSAGE_HANDLED,
    );
    Ok(Action::Done)
}
