//! The controller builder (controller-runtime's `builder.ControllerManagedBy`): one kind a
//! controller is *for*, the kinds it *owns* and anything else it *watches*, on the shared
//! informers and the rate-limited work queue, with a typed reconcile.
//!
//! ```no_run
//! # async fn demo(factory: kube_codegen_runtime::informer::SharedInformerFactory) {
//! use std::sync::Arc;
//! use std::time::Duration;
//! use k8s_openapi::api::apps::v1::Deployment;
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use kube_codegen_runtime::controller::{Action, Builder, Predicate, Request};
//!
//! struct Ctx; // clients, recorder, lister of owned objects...
//!
//! async fn reconcile(req: Request<Deployment>, _ctx: Arc<Ctx>) -> Result<Action, kube::Error> {
//!     let Some(deployment) = req.object else {
//!         return Ok(Action::Done); // deleted: owned objects go with it (GC)
//!     };
//!     // ... make the world match `deployment` ...
//!     Ok(Action::RequeueAfter(Duration::from_secs(300)))
//! }
//!
//! let controller = Builder::for_kind(factory.informer_for::<Deployment>())
//!     .owns(factory.informer_for::<ConfigMap>())
//!     .with_predicate(Predicate::GenerationChanged)
//!     .max_concurrent_reconciles(2)
//!     .build();
//! factory.start();
//! factory.wait_for_cache_sync(Duration::from_secs(60)).await.unwrap();
//! controller.run(Arc::new(Ctx), reconcile, std::future::pending()).await;
//! # }
//! ```
//!
//! What the builder does for every controller, so a reconcile does not:
//! - events of the primary kind enqueue its key; an owned object enqueues the key of its
//!   controller owner (the ownerReference with `controller: true` whose kind and API group
//!   are the primary's); a watched object enqueues whatever its mapping returns;
//! - [`Builder::owns_metadata`] and [`Builder::watches_metadata`] cache an owned or watched
//!   kind as metadata only (controller-runtime's `builder.OnlyMetadata`), when the reconcile
//!   reads nothing of its spec or status;
//! - predicates filter updates of the primary (creations and deletions always pass);
//! - the object is read from the informer's cache: a deleted object arrives as
//!   `object: None`, a normal case, not an error;
//! - [`Action::Done`] forgets the key's failures, [`Action::RequeueAfter`] reconciles it
//!   again after the delay, [`Action::Requeue`] and errors requeue it with the queue's
//!   per-key exponential backoff;
//! - a reconcile that panics is caught, logged with its key and counted as an error; the
//!   key is retried with backoff and the controller keeps running;
//! - at most `max_concurrent_reconciles` reconciles run at once, never two for one key
//!   (the work queue hands out a key once until it is done).

mod conditions;
mod finalizer;
mod manager;
mod owned;

pub use finalizer::{FinalizerError, FinalizerEvent, finalizer};
pub use manager::{Manager, StopToken, Stopped};
pub use owned::{
    OperationResult, OwnedError, apply_owned, controller_reference, create_or_update,
    set_controller_reference,
};

pub use conditions::{
    find_status_condition, is_status_condition_true, remove_status_condition, set_status_condition,
};

use std::fmt::{Debug, Display};
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use futures::FutureExt;
use kube::Resource;
use kube::core::PartialObjectMeta;
use serde::de::DeserializeOwned;

use crate::informer::{DeleteEvent, HandlerFuncs, Informer, InformerScope, SharedInformerFactory};
use crate::sharding::ShardGate;
use crate::store::{ObjectKey, key_of};
use crate::task::AbortOnDrop;
use crate::workqueue::WorkQueue;

/// What a reconcile asks for next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[must_use]
pub enum Action {
    /// The object is as it should be: forget its failures, wait for the next event.
    Done,
    /// Reconcile the object again after this delay (a periodic check, a pending condition).
    RequeueAfter(Duration),
    /// Reconcile again with the queue's per-key backoff, as after an error, but without
    /// counting an error.
    Requeue,
}

/// What a reconcile gets: the key, and the object as the informer's cache holds it.
#[derive(Debug)]
pub struct Request<K> {
    /// The object's key.
    pub key: ObjectKey,
    /// The cached object; `None` once it is deleted.
    pub object: Option<Arc<K>>,
}

/// A closure deciding whether an update (old, new) is reconciled.
pub type UpdateFilter<K> = Box<dyn Fn(&K, &K) -> bool + Send + Sync>;

/// Registers one watched kind's event handlers on the controller's queue, at `build`.
type Source = Box<dyn FnOnce(&WorkQueue<ObjectKey>)>;

/// Makes one owned kind's informer cache by its owners' slots, at `build` of a sharded
/// controller.
type ShardOwned = Box<dyn FnOnce(&ShardGate)>;

/// A filter on updates of the primary kind: an update is reconciled when every predicate
/// passes (controller-runtime's `predicate` package).
pub enum Predicate<K> {
    /// `metadata.generation` changed: spec changes, not status or metadata-only updates.
    GenerationChanged,
    /// `metadata.labels` changed.
    LabelsChanged,
    /// `metadata.annotations` changed.
    AnnotationsChanged,
    /// A closure of the old and the new object.
    Custom(UpdateFilter<K>),
}

impl<K: Resource> Predicate<K> {
    /// Whether the update from `old` to `new` passes.
    ///
    /// ```
    /// use k8s_openapi::api::apps::v1::Deployment;
    /// use kube_codegen_runtime::controller::Predicate;
    ///
    /// let old = Deployment::default();
    /// let mut new = old.clone();
    /// new.metadata.annotations = Some([("note".to_owned(), "x".to_owned())].into());
    /// assert!(!Predicate::GenerationChanged.passes(&old, &new)); // metadata only
    /// assert!(Predicate::AnnotationsChanged.passes(&old, &new));
    /// let replicas = Predicate::<Deployment>::Custom(Box::new(|o, n| {
    ///     o.spec.replicas != n.spec.replicas
    /// }));
    /// assert!(!replicas.passes(&old, &new));
    /// ```
    #[must_use]
    pub fn passes(&self, old: &K, new: &K) -> bool {
        let (o, n) = (old.meta(), new.meta());
        match self {
            Predicate::GenerationChanged => o.generation != n.generation,
            Predicate::LabelsChanged => o.labels != n.labels,
            Predicate::AnnotationsChanged => o.annotations != n.annotations,
            Predicate::Custom(f) => f(old, new),
        }
    }
}

/// controller-runtime's buckets of `controller_runtime_reconcile_time_seconds`, so
/// dashboards and alerts written for Go controllers read ours unchanged.
const TIME_BUCKETS: [f64; 40] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9,
    1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 15.0, 20.0,
    25.0, 30.0, 40.0, 50.0, 60.0,
];

/// Counters of one controller, with controller-runtime's meaning and names
/// ([`render_prometheus`](Self::render_prometheus)): `reconcile_total` by result,
/// `reconcile_errors_total`, `reconcile_panics_total`, and the `reconcile_time_seconds`
/// histogram.
#[derive(Debug)]
pub struct Metrics {
    success: AtomicU64,
    error: AtomicU64,
    requeue: AtomicU64,
    requeue_after: AtomicU64,
    panics: AtomicU64,
    /// Reconciles per bucket of [`TIME_BUCKETS`] (not cumulative), then the sum in µs.
    time_buckets: [AtomicU64; 40],
    time_sum_micros: AtomicU64,
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics {
            success: AtomicU64::new(0),
            error: AtomicU64::new(0),
            requeue: AtomicU64::new(0),
            requeue_after: AtomicU64::new(0),
            panics: AtomicU64::new(0),
            time_buckets: std::array::from_fn(|_| AtomicU64::new(0)),
            time_sum_micros: AtomicU64::new(0),
        }
    }
}

impl Metrics {
    fn observe(&self, elapsed: Duration) {
        let secs = elapsed.as_secs_f64();
        if let Some(i) = TIME_BUCKETS.iter().position(|b| secs <= *b) {
            self.time_buckets[i].fetch_add(1, Ordering::Relaxed);
        }
        self.time_sum_micros
            .fetch_add(elapsed.as_micros() as u64, Ordering::Relaxed);
    }

    /// The counters in Prometheus' text format, labelled `controller="<name>"`, under
    /// controller-runtime's metric names.
    #[must_use]
    pub fn render_prometheus(&self, controller: &str) -> String {
        use std::fmt::Write;
        let c = controller;
        let mut out = String::from(
            "# HELP controller_runtime_reconcile_total Total number of reconciliations per controller\n\
             # TYPE controller_runtime_reconcile_total counter\n",
        );
        for (result, n) in [
            ("success", self.success()),
            ("error", self.errors()),
            ("requeue", self.requeue()),
            ("requeue_after", self.requeue_after()),
        ] {
            let _ = writeln!(
                out,
                "controller_runtime_reconcile_total{{controller=\"{c}\",result=\"{result}\"}} {n}"
            );
        }
        let _ = write!(
            out,
            "# HELP controller_runtime_reconcile_errors_total Total number of reconciliation errors per controller\n\
             # TYPE controller_runtime_reconcile_errors_total counter\n\
             controller_runtime_reconcile_errors_total{{controller=\"{c}\"}} {}\n\
             # HELP controller_runtime_reconcile_panics_total Total number of reconciliation panics per controller\n\
             # TYPE controller_runtime_reconcile_panics_total counter\n\
             controller_runtime_reconcile_panics_total{{controller=\"{c}\"}} {}\n\
             # HELP controller_runtime_reconcile_time_seconds Length of time per reconciliation per controller\n\
             # TYPE controller_runtime_reconcile_time_seconds histogram\n",
            self.errors(),
            self.panics()
        );
        let mut cumulative = 0;
        for (i, b) in TIME_BUCKETS.iter().enumerate() {
            cumulative += self.time_buckets[i].load(Ordering::Relaxed);
            let _ = writeln!(
                out,
                "controller_runtime_reconcile_time_seconds_bucket{{controller=\"{c}\",le=\"{b}\"}} {cumulative}"
            );
        }
        let total = self.total();
        let sum = self.time_sum_micros.load(Ordering::Relaxed) as f64 / 1e6;
        let _ = write!(
            out,
            "controller_runtime_reconcile_time_seconds_bucket{{controller=\"{c}\",le=\"+Inf\"}} {total}\n\
             controller_runtime_reconcile_time_seconds_sum{{controller=\"{c}\"}} {sum}\n\
             controller_runtime_reconcile_time_seconds_count{{controller=\"{c}\"}} {total}\n"
        );
        out
    }

    /// `controller_runtime_reconcile_total{result="success"}`.
    #[must_use]
    pub fn success(&self) -> u64 {
        self.success.load(Ordering::Relaxed)
    }
    /// `controller_runtime_reconcile_total{result="error"}` (panics included), also
    /// `controller_runtime_reconcile_errors_total`.
    #[must_use]
    pub fn errors(&self) -> u64 {
        self.error.load(Ordering::Relaxed)
    }
    /// `controller_runtime_reconcile_total{result="requeue"}`.
    #[must_use]
    pub fn requeue(&self) -> u64 {
        self.requeue.load(Ordering::Relaxed)
    }
    /// `controller_runtime_reconcile_total{result="requeue_after"}`.
    #[must_use]
    pub fn requeue_after(&self) -> u64 {
        self.requeue_after.load(Ordering::Relaxed)
    }
    /// `controller_runtime_reconcile_panics_total`.
    #[must_use]
    pub fn panics(&self) -> u64 {
        self.panics.load(Ordering::Relaxed)
    }
    /// Every reconcile that finished, whatever its result.
    #[must_use]
    pub fn total(&self) -> u64 {
        self.success() + self.errors() + self.requeue() + self.requeue_after()
    }
}

/// Builds a [`Controller`] for the kind `K`.
#[must_use]
pub struct Builder<K: Resource> {
    informer: Informer<K>,
    name: String,
    predicates: Vec<Predicate<K>>,
    max_concurrent: usize,
    sources: Vec<Source>,
    queue: Option<WorkQueue<ObjectKey>>,
    metrics: Option<Arc<Metrics>>,
    gate: Option<ShardGate>,
    /// The owned kinds' informers, to cache by their owners' slots once sharded.
    owned: Vec<ShardOwned>,
}

impl<K> Builder<K>
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
    K::Scope: 'static,
{
    /// A controller for the objects of `informer` (take it from the shared informer
    /// factory, so every controller of the process shares one watch per kind). Named
    /// after the kind, in lower case, as controller-runtime names it.
    pub fn for_kind(informer: Informer<K>) -> Self {
        Builder {
            informer,
            name: K::kind(&()).to_ascii_lowercase(),
            predicates: vec![],
            max_concurrent: 1,
            sources: vec![],
            queue: None,
            metrics: None,
            gate: None,
            owned: vec![],
        }
    }

    /// Reconcile only the objects of the open slots of `gate` (a shard group member's,
    /// [`crate::sharding::ShardMember::gate`]), and make the primary informer cache only
    /// the group's slots for this replica ([`Informer::set_dynamic_shards`]; build before
    /// the informer starts).
    ///
    /// A key is reconciled only when its object is cached and its slot is open; the
    /// reconcile is dropped (its future, at its next await) when the slot closes, and a
    /// slot closes only once every reconcile in it ended, so the replica that takes the
    /// slot next never overlaps with this one. When a slot opens, every cached object of it
    /// is enqueued. A key whose object is not cached is not reconciled: it is another
    /// replica's, or deleted — a sharded controller handles deletion with finalizers or
    /// owner references (the object is cached until it is gone), not with a reconcile of a
    /// missing object.
    ///
    /// The informers of [`owns`](Self::owns) and [`owns_metadata`](Self::owns_metadata)
    /// (before or after this call) cache the owned objects of this replica's slots: those
    /// labelled with their owner's slot ([`ShardGate::owner_label`], which the reconcile
    /// must put on every object it creates), by label selector. In
    /// [`ShardMode::Label`](crate::sharding::ShardMode::Label) the controller also labels
    /// the primary objects of its slots that have no slot label yet. The owned kinds'
    /// informers are the factory's shared ones: whatever else in the process reads them
    /// sees only this replica's slots too.
    pub fn sharded(mut self, gate: ShardGate) -> Self {
        self.informer.set_dynamic_shards(gate.cache_shards());
        self.gate = Some(gate);
        self
    }

    /// The controller's name, in its work queue's and its log lines.
    pub fn named(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// Reconcile an update of the primary kind only when `predicate` passes (several:
    /// all must pass).
    pub fn with_predicate(mut self, predicate: Predicate<K>) -> Self {
        self.predicates.push(predicate);
        self
    }

    /// Count into `metrics` (shared with a metrics endpoint built before the controller)
    /// instead of counters of its own.
    pub fn with_metrics(mut self, metrics: Arc<Metrics>) -> Self {
        self.metrics = Some(metrics);
        self
    }

    /// Use `queue` (its rate limiter, its name, its metrics exposed elsewhere) instead of
    /// a new one named after the controller.
    pub fn with_queue(mut self, queue: WorkQueue<ObjectKey>) -> Self {
        self.queue = Some(queue);
        self
    }

    /// At most `n` reconciles at once (default 1), never two of one key.
    pub fn max_concurrent_reconciles(mut self, n: usize) -> Self {
        self.max_concurrent = n.max(1);
        self
    }

    /// Objects the primary kind creates and owns: each event of one enqueues its
    /// controller owner, if that is a `K`.
    ///
    /// ```no_run
    /// # fn demo(factory: kube_codegen_runtime::informer::SharedInformerFactory) {
    /// use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
    /// use kube_codegen_runtime::controller::Builder;
    ///
    /// // A ReplicaSet's events reconcile the Deployment that controls it.
    /// let controller = Builder::for_kind(factory.informer_for::<Deployment>())
    ///     .owns(factory.informer_for::<ReplicaSet>())
    ///     .build();
    /// # drop(controller); }
    /// ```
    pub fn owns<O>(mut self, informer: Informer<O>) -> Self
    where
        O: Resource + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
    {
        let namespaced = is_namespaced::<K>();
        let owned = informer.clone();
        self.owned.push(Box::new(move |gate: &ShardGate| {
            owned.set_dynamic_shards(gate.owned_shards());
        }));
        self.watches(informer, move |o: &O| {
            controller_owner::<K>(o.meta(), namespaced)
                .into_iter()
                .collect()
        })
    }

    /// Objects the primary kind owns, cached as metadata only (controller-runtime's
    /// `Owns(&O{}, builder.OnlyMetadata)`): [`owns`](Self::owns) on the factory's
    /// metadata-only informer of `O`, which lists and watches with
    /// `as=PartialObjectMetadata`. Owner references are metadata, so the owner is found as
    /// with `owns`; the cache keeps no spec or status. A reconcile that reads the owned
    /// objects takes the same informer from the factory
    /// ([`SharedInformerFactory::metadata_informer_for`]): its lister returns
    /// [`PartialObjectMeta<O>`].
    ///
    /// ```no_run
    /// # fn demo(factory: kube_codegen_runtime::informer::SharedInformerFactory) {
    /// use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
    /// use kube_codegen_runtime::controller::Builder;
    ///
    /// let controller = Builder::for_kind(factory.informer_for::<Deployment>())
    ///     .owns_metadata::<ReplicaSet>(&factory)
    ///     .build();
    /// // The same cache, shared with the controller's handlers:
    /// let replica_sets = factory.metadata_informer_for::<ReplicaSet>().lister();
    /// # drop((controller, replica_sets)); }
    /// ```
    pub fn owns_metadata<O>(self, factory: &SharedInformerFactory) -> Self
    where
        O: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
        O::Scope: InformerScope,
    {
        self.owns(O::Scope::metadata_informer::<O>(factory))
    }

    /// Another kind, cached as metadata only (controller-runtime's `Watches(&O{}, handler,
    /// builder.OnlyMetadata)`): [`watches`](Self::watches) on the factory's metadata-only
    /// informer of `O`; `map` sees each object's [`PartialObjectMeta<O>`].
    ///
    /// ```no_run
    /// # fn demo(factory: kube_codegen_runtime::informer::SharedInformerFactory) {
    /// use k8s_openapi::api::apps::v1::Deployment;
    /// use k8s_openapi::api::core::v1::Secret;
    /// use kube::core::PartialObjectMeta;
    /// use kube_codegen_runtime::controller::Builder;
    /// use kube_codegen_runtime::store::ObjectKey;
    ///
    /// // A Secret labelled `app=<name>` reconciles that Deployment; no Secret data is cached.
    /// let controller = Builder::for_kind(factory.informer_for::<Deployment>())
    ///     .watches_metadata::<Secret>(&factory, |secret: &PartialObjectMeta<Secret>| {
    ///         let app = secret.metadata.labels.as_ref().and_then(|l| l.get("app"));
    ///         match (&secret.metadata.namespace, app) {
    ///             (Some(ns), Some(app)) => vec![ObjectKey::namespaced(ns, app)],
    ///             _ => vec![],
    ///         }
    ///     })
    ///     .build();
    /// # drop(controller); }
    /// ```
    pub fn watches_metadata<O>(
        self,
        factory: &SharedInformerFactory,
        map: impl Fn(&PartialObjectMeta<O>) -> Vec<ObjectKey> + Send + Sync + 'static,
    ) -> Self
    where
        O: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
        O::Scope: InformerScope,
    {
        self.watches(O::Scope::metadata_informer::<O>(factory), map)
    }

    /// Any other kind: each event of one enqueues the keys `map` returns (an index lookup,
    /// a label match, a fixed key). Keys of objects that do not exist are harmless: their
    /// reconcile sees `object: None`.
    ///
    /// ```no_run
    /// # fn demo(factory: kube_codegen_runtime::informer::SharedInformerFactory) {
    /// use k8s_openapi::api::apps::v1::Deployment;
    /// use k8s_openapi::api::core::v1::Secret;
    /// use kube_codegen_runtime::controller::Builder;
    /// use kube_codegen_runtime::store::ObjectKey;
    ///
    /// // A Secret labelled `app=<name>` reconciles the Deployment of that name.
    /// let controller = Builder::for_kind(factory.informer_for::<Deployment>())
    ///     .watches(factory.informer_for::<Secret>(), |secret: &Secret| {
    ///         let app = secret.metadata.labels.as_ref().and_then(|l| l.get("app"));
    ///         match (&secret.metadata.namespace, app) {
    ///             (Some(ns), Some(app)) => vec![ObjectKey::namespaced(ns, app)],
    ///             _ => vec![],
    ///         }
    ///     })
    ///     .build();
    /// # drop(controller); }
    /// ```
    pub fn watches<O>(
        mut self,
        informer: Informer<O>,
        map: impl Fn(&O) -> Vec<ObjectKey> + Send + Sync + 'static,
    ) -> Self
    where
        O: Resource + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
    {
        self.sources
            .push(Box::new(move |queue: &WorkQueue<ObjectKey>| {
                let map = Arc::new(map);
                let (q1, q2, q3) = (queue.clone(), queue.clone(), queue.clone());
                let (m1, m2, m3) = (map.clone(), map.clone(), map);
                informer.add_event_handler(
                    HandlerFuncs::new()
                        .on_add(move |o: Arc<O>, _| m1(&o).into_iter().for_each(|k| q1.add(k)))
                        .on_update(move |old: Arc<O>, new: Arc<O>| {
                            // A resync (same resourceVersion) of a secondary object changes
                            // nothing: the primary kind's own resync already reconciles
                            // every primary object, so this would only double the work (the
                            // Go sample-controller skips these too).
                            if old.meta().resource_version == new.meta().resource_version {
                                return;
                            }
                            // Both: an owner reference or a label can move between them.
                            let mut keys = m2(&old);
                            keys.extend(m2(&new));
                            keys.into_iter().for_each(|k| q2.add(k));
                        })
                        .on_delete(move |d: DeleteEvent<O>| {
                            m3(d.object()).into_iter().for_each(|k| q3.add(k))
                        }),
                );
            }));
        self
    }

    /// The controller, its event handlers registered (start the informer factory after
    /// this, or before: handlers added late are replayed the cache).
    pub fn build(self) -> Controller<K> {
        let queue = self
            .queue
            .unwrap_or_else(|| WorkQueue::new(self.name.clone()));
        for source in self.sources {
            source(&queue);
        }
        if let Some(gate) = &self.gate {
            for owned in self.owned {
                owned(gate);
            }
        }
        let predicates = Arc::new(self.predicates);
        let (q1, q2, q3) = (queue.clone(), queue.clone(), queue.clone());
        self.informer.add_event_handler(
            HandlerFuncs::new()
                .on_add(move |o: Arc<K>, _| q1.add(key_of(o.as_ref())))
                .on_update(move |old: Arc<K>, new: Arc<K>| {
                    if predicates.iter().all(|p| p.passes(&old, &new)) {
                        q2.add(key_of(new.as_ref()));
                    }
                })
                .on_delete(move |d: DeleteEvent<K>| q3.add(key_of(d.object().as_ref()))),
        );
        Controller {
            informer: self.informer,
            queue,
            name: self.name,
            max_concurrent: self.max_concurrent,
            metrics: self.metrics.unwrap_or_default(),
            gate: self.gate,
        }
    }
}

/// The key of the object's controller owner if it is a `K`: the ownerReference with
/// `controller: true` whose kind and API group are `K`'s (any version of the group).
fn controller_owner<K: Resource<DynamicType = ()>>(
    meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
    namespaced: bool,
) -> Option<ObjectKey> {
    let owner = meta
        .owner_references
        .iter()
        .flatten()
        .find(|r| r.controller == Some(true))?;
    let group = owner.api_version.rsplit_once('/').map_or("", |(g, _)| g);
    if owner.kind != K::kind(&()) || group != K::group(&()) {
        return None;
    }
    Some(match (&meta.namespace, namespaced) {
        (Some(ns), true) => ObjectKey::namespaced(ns, &owner.name),
        _ => ObjectKey::cluster(owner.name.clone()),
    })
}

/// A built controller: run it with a reconcile function.
#[must_use]
pub struct Controller<K: Resource> {
    informer: Informer<K>,
    queue: WorkQueue<ObjectKey>,
    name: String,
    max_concurrent: usize,
    metrics: Arc<Metrics>,
    gate: Option<ShardGate>,
}

impl<K> Controller<K>
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
{
    /// The work queue (to enqueue a key by hand, or read its metrics).
    pub fn queue(&self) -> &WorkQueue<ObjectKey> {
        &self.queue
    }

    /// This controller's reconcile counters.
    pub fn metrics(&self) -> Arc<Metrics> {
        self.metrics.clone()
    }

    /// Reconcile until `shutdown` completes, then stop taking keys and wait for the
    /// reconciles in flight (a graceful stop, as on SIGTERM); also returns once the queue
    /// is shut down elsewhere and drained. Start the informers first
    /// and wait for their caches, or early reconciles see objects as missing.
    pub async fn run<C, F, Fut, E>(
        self,
        ctx: Arc<C>,
        reconcile: F,
        shutdown: impl Future<Output = ()>,
    ) where
        F: Fn(Request<K>, Arc<C>) -> Fut,
        Fut: Future<Output = Result<Action, E>>,
        E: Display,
    {
        let workers = futures::future::join_all(
            (0..self.max_concurrent).map(|_| self.worker(&ctx, &reconcile)),
        );
        // A sharded controller enqueues the cached objects of each slot that opens.
        let opened = self.gate.clone().map(|gate| {
            let (store, queue) = (self.informer.store().clone(), self.queue.clone());
            tokio::spawn(async move {
                let mut rx = gate.watch_working();
                let mut before = std::collections::BTreeSet::new();
                loop {
                    let now = rx.borrow_and_update().clone();
                    let new: std::collections::BTreeSet<usize> =
                        now.difference(&before).copied().collect();
                    if !new.is_empty() {
                        for obj in store.list_filtered(|o| new.contains(&gate.slot_of(o.meta()))) {
                            queue.add(key_of(obj.as_ref()));
                        }
                    }
                    before = (*now).clone();
                    if rx.changed().await.is_err() {
                        return;
                    }
                }
            })
        });
        let _abort = opened.map(AbortOnDrop);
        // In label mode, the primary objects of this replica's slots get their slot label.
        let labeler = self.gate.clone().map(|gate| {
            tokio::spawn(crate::sharding::run_labeler(
                self.informer.api(),
                self.informer.client().clone(),
                self.informer.label_selector(),
                gate,
            ))
        });
        let _abort_labeler = labeler.map(AbortOnDrop);
        let shutdown = std::pin::pin!(shutdown);
        // The workers also end when someone else shuts the queue down (a process draining
        // all its queues at once): then there is nothing left to wait for.
        if let futures::future::Either::Right(((), workers)) =
            futures::future::select(workers, shutdown).await
        {
            futures::future::join(workers, self.queue.shutdown_with_drain()).await;
        }
    }

    async fn worker<C, F, Fut, E>(&self, ctx: &Arc<C>, reconcile: &F)
    where
        F: Fn(Request<K>, Arc<C>) -> Fut,
        Fut: Future<Output = Result<Action, E>>,
        E: Display,
    {
        // Shutting down: finish what is in flight, start nothing new.
        while let Some(key) = self.queue.get_unless_shutting_down().await {
            let object = self.informer.store().get(&key);
            let guard = match (&self.gate, &object) {
                (None, _) => None,
                (Some(gate), Some(o)) => match gate.enter(gate.slot_of(o.meta())) {
                    Some(g) => Some(g),
                    None => {
                        // Not an open slot: another replica's, or not handed over yet
                        // (the slot's opening enqueues it again).
                        self.queue.forget(&key);
                        self.queue.done(&key);
                        continue;
                    }
                },
                (Some(_), None) => {
                    self.queue.forget(&key);
                    self.queue.done(&key);
                    continue;
                }
            };
            let request = Request {
                key: key.clone(),
                object,
            };
            // The future is built and polled under catch_unwind: a panic in either is
            // this key's failure, not the process's.
            let started = std::time::Instant::now();
            let run = async {
                match std::panic::catch_unwind(AssertUnwindSafe(|| reconcile(request, ctx.clone())))
                {
                    Ok(fut) => AssertUnwindSafe(fut).catch_unwind().await,
                    Err(p) => Err(p),
                }
            };
            let outcome = match &guard {
                None => run.await,
                Some(guard) => {
                    tokio::select! {
                        biased;
                        () = guard.revoked() => {
                            // The slot is being handed over: the reconcile is dropped here,
                            // and the next owner reconciles the key.
                            tracing::debug!(controller = %self.name, %key, slot = guard.slot(), "slot closed; reconcile dropped");
                            self.queue.forget(&key);
                            self.queue.done(&key);
                            continue;
                        }
                        o = run => o,
                    }
                }
            };
            drop(guard);
            let m = &self.metrics;
            m.observe(started.elapsed());
            match outcome {
                Ok(Ok(Action::Done)) => {
                    m.success.fetch_add(1, Ordering::Relaxed);
                    self.queue.forget(&key);
                }
                Ok(Ok(Action::RequeueAfter(d))) => {
                    m.requeue_after.fetch_add(1, Ordering::Relaxed);
                    self.queue.forget(&key);
                    self.queue.add_after(key.clone(), d);
                }
                Ok(Ok(Action::Requeue)) => {
                    m.requeue.fetch_add(1, Ordering::Relaxed);
                    self.queue.add_rate_limited(key.clone());
                }
                Ok(Err(e)) => {
                    m.error.fetch_add(1, Ordering::Relaxed);
                    tracing::warn!(controller = %self.name, %key, error = %e, "reconcile failed; requeuing with backoff");
                    self.queue.add_rate_limited(key.clone());
                }
                Err(panic) => {
                    m.error.fetch_add(1, Ordering::Relaxed);
                    m.panics.fetch_add(1, Ordering::Relaxed);
                    let msg = panic
                        .downcast_ref::<&str>()
                        .map(|s| (*s).to_owned())
                        .or_else(|| panic.downcast_ref::<String>().cloned())
                        .unwrap_or_else(|| "a non-string panic".to_owned());
                    tracing::error!(controller = %self.name, %key, panic = %msg, "reconcile panicked; requeuing with backoff");
                    self.queue.add_rate_limited(key.clone());
                }
            }
            self.queue.done(&key);
        }
    }
}

/// Whether `K` is namespaced, from its `Resource::Scope` (a dynamic scope counts as
/// namespaced: its objects carry their namespace, or none).
fn is_namespaced<K: Resource>() -> bool
where
    K::Scope: 'static,
{
    std::any::TypeId::of::<K::Scope>()
        != std::any::TypeId::of::<k8s_openapi::ClusterResourceScope>()
}
