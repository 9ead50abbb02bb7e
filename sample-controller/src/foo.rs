//! The Foo controller: every Foo owns a Deployment named `spec.deploymentName` running
//! `spec.replicas` nginx pods, and reports the Deployment's available replicas in its status.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec};
use k8s_openapi::api::core::v1::{Container, PodSpec, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta, OwnerReference};
use kube::Resource;
use kube::api::{Patch, PatchParams, PostParams};
use kube_codegen_runtime::DeepCopy;
use kube_codegen_runtime::client::{ApplyOptions, ResourceClient};
use kube_codegen_runtime::events::{EventType, Recorder, object_ref};
use kube_codegen_runtime::informer::{DeleteEvent, HandlerFuncs, Informer};
use kube_codegen_runtime::lister::Lister;
use kube_codegen_runtime::sharding::ShardGate;
use kube_codegen_runtime::store::{ObjectKey, key_of};
use kube_codegen_runtime::workqueue::WorkQueue;
use sample_api::Clientset;
use sample_api::apis::samplecontroller::v1alpha1::{Foo, FooStatus};
use sample_api::generated::applyconfigurations::samplecontroller_v1alpha1::{
    FooApplyConfiguration, FooStatusApplyConfiguration,
};
use sample_api::generated::listers::samplecontroller_v1alpha1::FooLister;

use crate::FIELD_MANAGER;

/// Event reasons and messages, as in the Go controller.
pub const SUCCESS_SYNCED: &str = "Synced";
pub const ERR_RESOURCE_EXISTS: &str = "ErrResourceExists";
pub const MESSAGE_RESOURCE_SYNCED: &str = "Foo synced successfully";
pub const INVALID_SPEC: &str = "InvalidSpec";

pub fn message_resource_exists(name: &str) -> String {
    format!("Resource {name:?} already exists and is not managed by Foo")
}

/// How the controller writes the Deployment and the Foo's status.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum WriteMode {
    /// Server-side apply under one field manager: the Deployment as the controller wants
    /// it, the status through the generated `FooApplyConfiguration`. The controller owns
    /// exactly the fields it sets; others' fields (a scaler's, a user's label) stay.
    #[default]
    Apply,
    /// Create, then update the whole object, as the Go sample-controller does.
    Update,
}

impl std::str::FromStr for WriteMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "apply" => Ok(WriteMode::Apply),
            "update" => Ok(WriteMode::Update),
            _ => Err(format!("`{s}`: expected `apply` or `update`")),
        }
    }
}

/// Why a sync failed. `Permanent` errors are dropped (retrying cannot help); the rest are
/// requeued with rate limiting.
#[derive(Debug, thiserror::Error)]
pub enum SyncError {
    #[error("invalid key {0:?}")]
    InvalidKey(String),
    #[error("{0}: deployment name must be specified")]
    MissingDeploymentName(String),
    #[error("{0}")]
    NotOwned(String),
    #[error(transparent)]
    Api(#[from] kube_codegen_runtime::Error),
}

impl SyncError {
    pub fn is_permanent(&self) -> bool {
        matches!(
            self,
            SyncError::InvalidKey(_) | SyncError::MissingDeploymentName(_)
        )
    }
}

/// Reconcile counters for `/metrics`.
#[derive(Debug, Default)]
pub struct ReconcileMetrics {
    pub success: AtomicU64,
    pub errors: AtomicU64,
    pub dropped: AtomicU64,
    duration_micros: AtomicU64,
}

impl ReconcileMetrics {
    /// Count one sync: done, dropped (a permanent error) or failed (to be retried).
    pub fn observe(&self, result: &Result<(), SyncError>, elapsed: Duration) {
        let counter = match result {
            Ok(()) => &self.success,
            Err(e) if e.is_permanent() => &self.dropped,
            Err(_) => &self.errors,
        };
        counter.fetch_add(1, Ordering::Relaxed);
        self.duration_micros
            .fetch_add(elapsed.as_micros() as u64, Ordering::Relaxed);
    }

    pub fn render_prometheus(&self, controller: &str) -> String {
        let (ok, err, dropped) = (
            self.success.load(Ordering::Relaxed),
            self.errors.load(Ordering::Relaxed),
            self.dropped.load(Ordering::Relaxed),
        );
        let secs = self.duration_micros.load(Ordering::Relaxed) as f64 / 1e6;
        format!(
            "# TYPE controller_reconcile_total counter\n\
             controller_reconcile_total{{controller=\"{controller}\",result=\"success\"}} {ok}\n\
             controller_reconcile_total{{controller=\"{controller}\",result=\"error\"}} {err}\n\
             controller_reconcile_total{{controller=\"{controller}\",result=\"dropped\"}} {dropped}\n\
             # TYPE controller_reconcile_time_seconds summary\n\
             controller_reconcile_time_seconds_sum{{controller=\"{controller}\"}} {secs}\n\
             controller_reconcile_time_seconds_count{{controller=\"{controller}\"}} {}\n",
            ok + err + dropped
        )
    }
}

/// The Foo controller. Built from listers (not informers) so tests can fill caches by hand.
pub struct Controller {
    clientset: Clientset,
    foos: FooLister,
    deployments: Lister<Deployment>,
    pub queue: WorkQueue<ObjectKey>,
    recorder: Recorder,
    pub metrics: Arc<ReconcileMetrics>,
    write_mode: WriteMode,
    audit: Option<Arc<crate::audit::Audit>>,
    /// With --shards auto: the group's gate, whose slot label goes on every Deployment.
    shard: Option<ShardGate>,
}

impl Controller {
    pub fn new(
        clientset: Clientset,
        foos: FooLister,
        deployments: Lister<Deployment>,
        recorder: Recorder,
        queue: WorkQueue<ObjectKey>,
    ) -> Self {
        Controller {
            clientset,
            foos,
            deployments,
            queue,
            recorder,
            metrics: Arc::default(),
            write_mode: WriteMode::default(),
            audit: None,
            shard: None,
        }
    }

    /// In a shard group: label every Deployment with its Foo's slot
    /// ([`ShardGate::owner_label`]), the label its replica's Deployment informer lists by.
    pub fn with_shard_gate(mut self, gate: Option<ShardGate>) -> Self {
        self.shard = gate;
        self
    }

    /// The Deployment `foo` wants: [`new_deployment`], and in a shard group the Foo's slot
    /// label on the Deployment itself (not on its selector or pod template: the label is
    /// the controller's bookkeeping, not the pods').
    // ANCHOR: owner_label
    pub fn desired_deployment(&self, foo: &Foo) -> Deployment {
        let mut d = new_deployment(foo);
        if let Some(gate) = &self.shard {
            let (key, value) = gate.owner_label(&foo.metadata);
            d.metadata.labels.get_or_insert_default().insert(key, value);
        }
        d
    }
    // ANCHOR_END: owner_label

    /// A Deployment of this Foo's name that exists but is not cached: created before the
    /// controller labelled its Deployments, or by another version of it. Read from the API
    /// server; if this Foo controls it, give it the Foo's slot label so that its replica's
    /// informer (which lists by that label) caches it from now on.
    async fn adopt_unlabelled(
        &self,
        deployments: &ResourceClient<Deployment>,
        foo: &Foo,
        name: &str,
    ) -> Result<Deployment, SyncError> {
        let existing = deployments.get(name).await?;
        let Some(gate) = &self.shard else {
            return Ok(existing);
        };
        let (key, value) = gate.owner_label(&foo.metadata);
        let labelled = existing.metadata.labels.as_ref().and_then(|l| l.get(&key)) == Some(&value);
        if labelled || !is_controlled_by(&existing, foo) {
            return Ok(existing);
        }
        tracing::info!(deployment = %name, label = %key, slot = %value, "labelling an existing Deployment with its Foo's slot");
        // The resourceVersion read: the label goes on the object just checked, or the
        // patch fails with a conflict and the sync retries.
        let patch = serde_json::json!({"metadata": {
            "resourceVersion": existing.metadata.resource_version,
            "labels": {key: value},
        }});
        Ok(deployments
            .patch(name, &Patch::Merge(patch), &PatchParams::default())
            .await?)
    }

    /// Write each reconcile's start and end to `audit` (`--audit-log`).
    pub fn with_audit(mut self, audit: Option<Arc<crate::audit::Audit>>) -> Self {
        self.audit = audit;
        self
    }

    /// The audit log, if any.
    pub fn audit(&self) -> Option<&Arc<crate::audit::Audit>> {
        self.audit.as_ref()
    }

    /// Share reconcile counters with the metrics endpoint.
    pub fn with_metrics(mut self, metrics: Arc<ReconcileMetrics>) -> Self {
        self.metrics = metrics;
        self
    }

    /// Write with server-side apply (the default) or with create/update.
    pub fn with_write_mode(mut self, mode: WriteMode) -> Self {
        self.write_mode = mode;
        self
    }

    /// Wire the informers' handlers to the work queue, as NewController does in Go.
    pub fn register_handlers(
        &self,
        foo_informer: &Informer<Foo>,
        deployment_informer: &Informer<Deployment>,
    ) {
        let (q_add, q_update) = (self.queue.clone(), self.queue.clone());
        foo_informer.add_event_handler(
            HandlerFuncs::new()
                .on_add(move |foo: Arc<Foo>, _| q_add.add(key_of(foo.as_ref())))
                .on_update(move |_, foo: Arc<Foo>| q_update.add(key_of(foo.as_ref()))),
        );
        let owner = OwnerEnqueuer {
            foos: self.foos.clone(),
            queue: self.queue.clone(),
        };
        let (o_add, o_update, o_delete) = (owner.clone(), owner.clone(), owner);
        deployment_informer.add_event_handler(
            HandlerFuncs::new()
                .on_add(move |d: Arc<Deployment>, _| o_add.handle_object(d.as_ref()))
                .on_update(move |old: Arc<Deployment>, new: Arc<Deployment>| {
                    // Periodic resyncs send updates for every Deployment. Two versions of
                    // the same Deployment always have different resourceVersions.
                    if old.metadata.resource_version == new.metadata.resource_version {
                        return;
                    }
                    o_update.handle_object(new.as_ref())
                })
                .on_delete(move |d: DeleteEvent<Deployment>| o_delete.handle_delete(d)),
        );
    }

    /// The sync handler: compare the actual state with the desired, and converge.
    pub async fn sync_handler(&self, key: &ObjectKey) -> Result<(), SyncError> {
        // Foos are namespaced: a key without a namespace is not one of ours.
        let (Some(namespace), name) = (key.namespace(), key.name()) else {
            return Err(SyncError::InvalidKey(key.to_string()));
        };
        // 1. The Foo may no longer exist: nothing to do.
        let Some(foo) = self.foos.foos(namespace).get(name) else {
            tracing::info!(%key, "foo in work queue no longer exists");
            return Ok(());
        };
        // 2. No deployment name: nothing we can do until the user fixes the spec.
        let deployment_name = foo.spec.deployment_name.as_str();
        if deployment_name.is_empty() {
            self.recorder.record(
                &object_ref(foo.as_ref()),
                EventType::Warning,
                INVALID_SPEC,
                "spec.deploymentName must be specified",
            );
            return Err(SyncError::MissingDeploymentName(key.to_string()));
        }
        let deployments =
            ResourceClient::<Deployment>::namespaced(self.clientset.client().clone(), namespace);
        let params = PostParams {
            field_manager: Some(FIELD_MANAGER.into()),
            ..Default::default()
        };
        // Apply forces: the controller is the one owner of what it applies (a user's
        // conflicting edit of the replicas is undone, as the update path undoes it).
        let apply = ApplyOptions::new(FIELD_MANAGER).force();
        // 3. Create the Deployment when it is missing.
        //    In a shard group the cache holds only Deployments with the Foo's slot label:
        //    one without it (made before) is found by its AlreadyExists and labelled; apply
        //    writes the label with the rest.
        let deployment = match self.deployments.namespaced(namespace).get(deployment_name) {
            Some(d) => d,
            None => Arc::new(match self.write_mode {
                WriteMode::Update => {
                    match deployments
                        .create(&self.desired_deployment(&foo), &params)
                        .await
                    {
                        Ok(d) => d,
                        Err(e) if e.is_already_exists() && self.shard.is_some() => {
                            self.adopt_unlabelled(&deployments, &foo, deployment_name)
                                .await?
                        }
                        Err(e) => return Err(e.into()),
                    }
                }
                WriteMode::Apply => {
                    deployments
                        .apply(&self.desired_deployment(&foo), &apply)
                        .await?
                }
            }),
        };
        // 4. Never take over a Deployment someone else controls.
        if !is_controlled_by(&deployment, &foo) {
            let msg = message_resource_exists(deployment_name);
            self.recorder.record(
                &object_ref(foo.as_ref()),
                EventType::Warning,
                ERR_RESOURCE_EXISTS,
                &msg,
            );
            return Err(SyncError::NotOwned(msg));
        }
        // 5. Scale the Deployment to the Foo's replicas.
        let deployment = match foo.spec.replicas {
            Some(want) if deployment.spec.replicas != Some(want) => {
                tracing::info!(%key, replicas = want, "updating deployment replicas");
                Arc::new(match self.write_mode {
                    WriteMode::Update => {
                        let mut d = self.desired_deployment(&foo);
                        d.metadata.resource_version = deployment.metadata.resource_version.clone();
                        deployments.update(&d, &params).await?
                    }
                    // The whole desired Deployment, fresh: it names only the fields the
                    // controller owns, never the server's (status, defaults).
                    WriteMode::Apply => {
                        deployments
                            .apply(&self.desired_deployment(&foo), &apply)
                            .await?
                    }
                })
            }
            _ => deployment,
        };
        // 6. Report the available replicas through the status subresource (on a copy:
        //    the cached Foo is shared and read-only). Skip writes that change nothing.
        let available = deployment
            .status
            .as_ref()
            .and_then(|s| s.available_replicas)
            .unwrap_or(0);
        if foo.status.as_ref().map(|s| s.available_replicas) != Some(available) {
            let foos = self.clientset.samplecontroller_v1alpha1().foos(namespace);
            match self.write_mode {
                WriteMode::Update => {
                    let mut copy = foo.deep_copy();
                    copy.status = Some(FooStatus {
                        available_replicas: available,
                    });
                    foos.update_status(&copy, &params).await?;
                }
                WriteMode::Apply => {
                    let status = FooApplyConfiguration::new(name, namespace).with_status(
                        FooStatusApplyConfiguration::default().with_available_replicas(available),
                    );
                    foos.apply_status(&status, &apply)
                        .await
                        .map_err(kube_codegen_runtime::Error::from)?;
                }
            }
        }
        // 7. Tell the user.
        self.recorder.record(
            &object_ref(foo.as_ref()),
            EventType::Normal,
            SUCCESS_SYNCED,
            MESSAGE_RESOURCE_SYNCED,
        );
        Ok(())
    }

    /// One work item: sync, then forget (success or permanent error) or requeue.
    /// Returns false once the queue is shut down.
    pub async fn process_next_work_item(&self) -> bool {
        // Shutting down: finish what is in flight, start nothing new (client-go's queue
        // would still hand out the whole backlog).
        let Some(key) = self.queue.get_unless_shutting_down().await else {
            return false;
        };
        let start = Instant::now();
        let result = self.sync_handler(&key).await;
        self.metrics.observe(&result, start.elapsed());
        match result {
            Ok(()) => {
                self.queue.forget(&key);
                tracing::debug!(%key, "successfully synced");
            }
            Err(e) if e.is_permanent() => {
                self.queue.forget(&key);
                tracing::error!(%key, error = %e, "dropping item: retrying cannot fix it");
            }
            Err(e) => {
                tracing::warn!(%key, error = %e, requeues = self.queue.num_requeues(&key), "error syncing; requeuing");
                self.queue.add_rate_limited(key.clone());
            }
        }
        self.queue.done(&key);
        true
    }

    /// Run `workers` workers until the queue shuts down.
    pub async fn run_workers(self: Arc<Self>, workers: usize) {
        let tasks: Vec<_> = (0..workers.max(1))
            .map(|_| {
                let c = self.clone();
                tokio::spawn(async move { while c.process_next_work_item().await {} })
            })
            .collect();
        for t in tasks {
            let _ = t.await;
        }
    }
}

/// Finds the Foo that controls an object and enqueues it (handleObject in Go).
#[derive(Clone)]
pub struct OwnerEnqueuer {
    foos: FooLister,
    queue: WorkQueue<ObjectKey>,
}

impl OwnerEnqueuer {
    pub fn new(foos: FooLister, queue: WorkQueue<ObjectKey>) -> Self {
        OwnerEnqueuer { foos, queue }
    }

    pub fn handle_delete(&self, d: DeleteEvent<Deployment>) {
        if let DeleteEvent::Tombstone(t) = &d {
            tracing::info!(key = %t.key, "recovered deleted object from tombstone");
        }
        self.handle_object(d.object().as_ref())
    }

    pub fn handle_object<K: Resource>(&self, obj: &K) {
        let meta = obj.meta();
        let Some(owner) = meta
            .owner_references
            .iter()
            .flatten()
            .find(|r| r.controller == Some(true))
        else {
            return;
        };
        // Only Foos: anything else controlling the object is not our business.
        if owner.kind != Foo::KIND {
            return;
        }
        let ns = meta.namespace.as_deref().unwrap_or_default();
        match self.foos.foos(ns).get(&owner.name) {
            Some(foo) if foo.metadata.uid.as_deref() == Some(owner.uid.as_str()) => {
                self.queue.add(key_of(foo.as_ref()))
            }
            _ => tracing::debug!(owner = %owner.name, "ignoring orphaned object"),
        }
    }
}

fn is_controlled_by(d: &Deployment, foo: &Foo) -> bool {
    d.metadata
        .owner_references
        .iter()
        .flatten()
        .any(|r| r.controller == Some(true) && Some(&r.uid) == foo.metadata.uid.as_ref())
}

/// The Deployment a Foo wants: nginx, labels app=nginx and `controller=<foo>`, owned by the Foo.
pub fn new_deployment(foo: &Foo) -> Deployment {
    let labels: std::collections::BTreeMap<String, String> = [
        ("app".to_string(), "nginx".to_string()),
        (
            "controller".to_string(),
            foo.metadata.name.clone().unwrap_or_default(),
        ),
    ]
    .into();
    Deployment {
        metadata: ObjectMeta {
            name: Some(foo.spec.deployment_name.clone()),
            namespace: foo.metadata.namespace.clone(),
            // Go puts these on the selector and pod template only; on the Deployment too,
            // `kubectl get deploy -l controller=<foo>` finds a Foo's Deployment.
            labels: Some(labels.clone()),
            owner_references: Some(vec![OwnerReference {
                api_version: Foo::API_VERSION.into(),
                kind: Foo::KIND.into(),
                name: foo.metadata.name.clone().unwrap_or_default(),
                uid: foo.metadata.uid.clone().unwrap_or_default(),
                controller: Some(true),
                block_owner_deletion: Some(true),
            }]),
            ..Default::default()
        },
        spec: DeploymentSpec {
            replicas: foo.spec.replicas,
            selector: LabelSelector {
                match_labels: Some(labels.clone()),
                ..Default::default()
            },
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels),
                    ..Default::default()
                }),
                spec: Some(PodSpec {
                    containers: vec![Container {
                        name: "nginx".into(),
                        image: Some("nginx:latest".into()),
                        ..Default::default()
                    }],
                    ..Default::default()
                }),
            },
            ..Default::default()
        },
        status: None,
    }
}

/// How long `run` waits for caches before giving up.
pub const CACHE_SYNC_TIMEOUT: Duration = Duration::from_secs(120);
