//! Shared informers: client-go's `SharedIndexInformer` and `SharedInformerFactory` on top
//! of kube-runtime's `watcher` (which owns list, watch, relist and backoff).
//!
//! - one list-watch per (kind, namespace, selectors), shared by every handler;
//! - handlers get `on_add`, `on_update(old, new)`, `on_delete(object or tombstone)`, each
//!   through its own queue and task, so a slow handler does not stall the watch or others;
//! - a handler added late first receives synthetic adds for every cached object;
//! - resync delivers `on_update(o, o)` for every object at the handler's period;
//! - objects are `Arc<K>`: shared, read-only; mutate a deep copy.
//! - opt-in, [`SharedInformerFactory::compact`]: caches that keep each object as its JSON
//!   (a fraction of the typed size) and decode it on every lister read.
//!
//! ```no_run
//! # async fn run(client: kube::Client) -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use std::time::Duration;
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use kube_codegen_runtime::informer::{HandlerFuncs, SharedInformerFactory, drop_managed_fields};
//! use kube_codegen_runtime::store::{ObjectKey, key_of};
//! use kube_codegen_runtime::workqueue::WorkQueue;
//!
//! let factory = SharedInformerFactory::builder(client)
//!     .with_namespace("default")
//!     .with_transform(drop_managed_fields)
//!     .build();
//! let config_maps = factory.informer_for::<ConfigMap>();
//! let queue: WorkQueue<ObjectKey> = WorkQueue::new("configmaps");
//! let q = queue.clone();
//! config_maps.add_event_handler(HandlerFuncs::new().on_add(move |cm: Arc<ConfigMap>, _| {
//!     q.add(key_of(cm.as_ref()))
//! }));
//! factory.start();
//! factory.wait_for_cache_sync(Duration::from_secs(60)).await?;
//! let lister = config_maps.lister();
//! while let Some(key) = queue.get().await {
//!     if let Some(cm) = lister.get(&key) {
//!         println!("{key}: {} keys", cm.data.as_ref().map_or(0, |d| d.len()));
//!     }
//!     queue.done(&key);
//! }
//! # Ok(()) }
//! ```

use std::any::{Any, TypeId};
use std::collections::BTreeMap;
use std::fmt::Debug;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{Api, ApiResource, DynamicObject};
use kube::core::{ClusterResourceScope, NamespaceResourceScope, PartialObjectMeta};
use kube::runtime::WatchStreamExt;
use kube::runtime::watcher::{self, Event};
use kube::{Client, Resource};
use parking_lot::Mutex;
use serde::Serialize;
use serde::de::DeserializeOwned;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;

use crate::sharding::{
    DynamicShards, Observed, ServerFiltering, ShardSelector, SlotQuery, and_labels, sharded_client,
};
use crate::store::{Batch, Entry, IndexExists, IndexFn, ObjectKey, Store, key_of};

/// An object that disappeared while the watch was down: its last known state
/// (client-go's `DeletedFinalStateUnknown`).
#[derive(Debug)]
pub struct Tombstone<K> {
    /// The key of the deleted object.
    pub key: ObjectKey,
    /// The object as last cached; it may have changed before it was deleted.
    pub last_known: Arc<K>,
}

/// What `on_delete` receives.
#[derive(Debug)]
pub enum DeleteEvent<K> {
    /// The object as the watch reported its deletion.
    Object(Arc<K>),
    /// Missed deletion, noticed on relist.
    Tombstone(Tombstone<K>),
}

impl<K> DeleteEvent<K> {
    /// The object, unwrapping a tombstone.
    #[must_use]
    pub fn object(&self) -> &Arc<K> {
        match self {
            DeleteEvent::Object(o) => o,
            DeleteEvent::Tombstone(t) => &t.last_known,
        }
    }
}

/// Where an added object comes from (client-go's `isInInitialList` argument of `OnAdd`).
///
/// Controllers that only enqueue ignore it; it matters to handlers that treat the initial
/// state differently from changes, e.g. to not count pre-existing objects as creations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AddKind {
    /// Part of the informer's first list, or a synthetic add that replays the cache to a
    /// handler registered after the informer started.
    InitialList,
    /// Seen after the first list: created while watching, or found by a later relist.
    Watch,
}

impl AddKind {
    /// Whether this is [`AddKind::InitialList`] (client-go's `isInInitialList`).
    #[must_use]
    pub fn is_initial_list(self) -> bool {
        self == AddKind::InitialList
    }
}

/// Receives informer notifications. Every method has an empty default.
pub trait EventHandler<K>: Send + Sync + 'static {
    /// A new object, from the first list or not (see [`AddKind`]).
    fn on_add(&self, _obj: Arc<K>, _kind: AddKind) {}
    /// A changed object; on resync `old` and `new` are the same object.
    fn on_update(&self, _old: Arc<K>, _new: Arc<K>) {}
    /// A deleted object: as the watch reported it, or a [`Tombstone`] if the deletion was
    /// only noticed on relist.
    fn on_delete(&self, _obj: DeleteEvent<K>) {}
}

type AddFn<K> = Box<dyn Fn(Arc<K>, AddKind) + Send + Sync>;
type UpdateFn<K> = Box<dyn Fn(Arc<K>, Arc<K>) + Send + Sync>;
type DeleteFn<K> = Box<dyn Fn(DeleteEvent<K>) + Send + Sync>;

/// An [`EventHandler`] made of closures (client-go's `ResourceEventHandlerFuncs`).
pub struct HandlerFuncs<K> {
    add: Option<AddFn<K>>,
    update: Option<UpdateFn<K>>,
    delete: Option<DeleteFn<K>>,
}

impl<K> Default for HandlerFuncs<K> {
    fn default() -> Self {
        HandlerFuncs {
            add: None,
            update: None,
            delete: None,
        }
    }
}

impl<K> HandlerFuncs<K> {
    /// A handler that ignores every notification until closures are set.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }
    /// Call `f` for [`EventHandler::on_add`].
    #[must_use]
    pub fn on_add(mut self, f: impl Fn(Arc<K>, AddKind) + Send + Sync + 'static) -> Self {
        self.add = Some(Box::new(f));
        self
    }
    /// Call `f` for [`EventHandler::on_update`].
    #[must_use]
    pub fn on_update(mut self, f: impl Fn(Arc<K>, Arc<K>) + Send + Sync + 'static) -> Self {
        self.update = Some(Box::new(f));
        self
    }
    /// Call `f` for [`EventHandler::on_delete`].
    #[must_use]
    pub fn on_delete(mut self, f: impl Fn(DeleteEvent<K>) + Send + Sync + 'static) -> Self {
        self.delete = Some(Box::new(f));
        self
    }
}

impl<K: Send + Sync + 'static> EventHandler<K> for HandlerFuncs<K> {
    fn on_add(&self, obj: Arc<K>, kind: AddKind) {
        if let Some(f) = &self.add {
            f(obj, kind)
        }
    }
    fn on_update(&self, old: Arc<K>, new: Arc<K>) {
        if let Some(f) = &self.update {
            f(old, new)
        }
    }
    fn on_delete(&self, obj: DeleteEvent<K>) {
        if let Some(f) = &self.delete {
            f(obj)
        }
    }
}

enum Notification<K> {
    /// An add; the entry is decoded when delivered (a list's adds share the cache's slots).
    Add(Entry<K>, AddKind),
    Update(Arc<K>, Arc<K>),
    Delete(DeleteEvent<K>),
    /// A resync of the object cached under this key, read from the store when delivered:
    /// a compact store decodes it then, so a resync holds one decoded object at a time
    /// rather than a decoded copy of the whole cache queued for the handler.
    Resync(ObjectKey),
}

/// The key suffix of metadata-only informers: a whole-object informer of the same kind may
/// live beside one, and each needs its own list-watch.
const METADATA_ONLY: &str = "#metadata";

/// The resource-key suffix of informers with a compact cache ([`CompactInformers`]): they
/// cache the same objects as the typed ones, in another store.
const COMPACT: &str = "#compact";
const METADATA_COMPACT: &str = "#metadata#compact";

/// An informer's resource key, `<plural>.<group><suffix>`.
fn resource_key<T: Resource<DynamicType = ()>>(suffix: &str) -> String {
    format!("{}.{}{suffix}", T::plural(&()), T::group(&()))
}

/// A metadata transform applied to every object before it is cached.
pub type MetaTransform = Arc<dyn Fn(&mut ObjectMeta) + Send + Sync>;
type TypedTransform<K> = Arc<dyn Fn(&mut K) + Send + Sync>;
/// Makes the informer's `Api` on a client: the factory's, or the sharded one made when the
/// watch starts (a `kube::Client` must be made inside the runtime).
type ApiFor<K> = Box<dyn Fn(Client) -> Api<K> + Send + Sync>;

/// What one list-watch of an informer lists and keeps.
enum Scope {
    /// Every object, or those of the factory's shard selector.
    Whole(Option<ShardSelector>),
    /// One slot of a shard group ([`Informer::set_dynamic_shards`]); `synced` is told when
    /// its first list is cached.
    Slot {
        slot: usize,
        query: SlotQuery,
        shards: DynamicShards,
        synced: mpsc::UnboundedSender<usize>,
    },
}

/// A sharded informer's selector and what the server did with it.
struct Shard {
    selector: ShardSelector,
    observed: Observed,
    /// The filtering last logged, so each change is said once.
    reported: Mutex<Option<ServerFiltering>>,
}

struct InformerInner<K: Resource> {
    name: String,
    client: Client,
    api_for: ApiFor<K>,
    shard: Option<Shard>,
    /// Set before start: the informer caches the slots of a shard group's gate, one
    /// list-watch per slot (see [`Informer::set_dynamic_shards`]).
    dynamic: Mutex<Option<DynamicShards>>,
    /// What the server did with the per-slot selectors, and what was last logged.
    dynamic_observed: Observed,
    dynamic_reported: Mutex<Option<ServerFiltering>>,
    config: watcher::Config,
    store: Store<K>,
    handlers: Mutex<Vec<mpsc::UnboundedSender<Notification<K>>>>,
    synced_tx: watch::Sender<bool>,
    started: AtomicBool,
    meta_transform: Option<MetaTransform>,
    transform: Mutex<Option<TypedTransform<K>>>,
    default_resync: Option<Duration>,
    stop: watch::Receiver<bool>,
    tasks: Mutex<Vec<JoinHandle<()>>>,
}

/// A shared informer for one kind (and namespace and selectors). Cloning shares it; get one
/// from a [`SharedInformerFactory`].
pub struct Informer<K: Resource> {
    inner: Arc<InformerInner<K>>,
}

impl<K: Resource> Clone for Informer<K> {
    fn clone(&self) -> Self {
        Informer {
            inner: self.inner.clone(),
        }
    }
}

impl<K> Informer<K>
where
    K: Resource + Cacheable,
{
    #[allow(clippy::too_many_arguments)]
    fn new(
        name: String,
        client: Client,
        api_for: ApiFor<K>,
        shard: Option<ShardSelector>,
        config: watcher::Config,
        meta_transform: Option<MetaTransform>,
        default_resync: Option<Duration>,
        stop: watch::Receiver<bool>,
        store: Store<K>,
    ) -> Self {
        let (synced_tx, _) = watch::channel(false);
        Informer {
            inner: Arc::new(InformerInner {
                name,
                client,
                api_for,
                shard: shard.map(|selector| Shard {
                    selector,
                    observed: Arc::new(Mutex::new(ServerFiltering::Unknown)),
                    reported: Mutex::new(None),
                }),
                dynamic: Mutex::new(None),
                dynamic_observed: Arc::new(Mutex::new(ServerFiltering::Unknown)),
                dynamic_reported: Mutex::new(None),
                config,
                store,
                handlers: Mutex::new(vec![]),
                synced_tx,
                started: AtomicBool::new(false),
                meta_transform,
                transform: Mutex::new(None),
                default_resync,
                stop,
                tasks: Mutex::new(vec![]),
            }),
        }
    }

    /// The informer's name, `<plural>.<group>[/<namespace>]`.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// The shard selector this informer lists and watches with, if it is sharded
    /// ([`SharedInformerFactoryBuilder::with_shard_selector`]).
    #[must_use]
    pub fn shard_selector(&self) -> Option<&ShardSelector> {
        self.inner.shard.as_ref().map(|s| &s.selector)
    }

    /// What the API server did with the shard selector, as the informer's list responses
    /// show it (`None` if the informer is not sharded). Whatever it says, the cache holds
    /// only the selected objects: the informer checks every object itself as well.
    #[must_use]
    pub fn server_filtering(&self) -> Option<ServerFiltering> {
        self.inner.shard.as_ref().map(|s| s.observed.lock().clone())
    }

    /// The cache, with its indexes.
    #[must_use]
    pub fn store(&self) -> &Store<K> {
        &self.inner.store
    }

    /// Add named indexes (e.g. [`crate::store::owner_uid_index`]).
    ///
    /// # Errors
    /// [`IndexExists`] if an index of that name exists (nothing is added then).
    pub fn add_indexers(
        &self,
        indexers: impl IntoIterator<Item = (String, IndexFn<K>)>,
    ) -> Result<(), IndexExists> {
        self.inner.store.add_indexers(indexers)
    }

    /// Transform objects before caching (client-go's `SetTransform`); set before start.
    pub fn set_transform(&self, f: impl Fn(&mut K) + Send + Sync + 'static) {
        *self.inner.transform.lock() = Some(Arc::new(f));
    }

    /// Cache only the slots of `shards` (a [`crate::sharding::ShardGate`]'s
    /// [`cache_shards`](crate::sharding::ShardGate::cache_shards) for the primary kind,
    /// [`owned_shards`](crate::sharding::ShardGate::owned_shards) for owned kinds), as they
    /// change: one list-watch per slot, with the slot's `shardSelector` (primary objects in
    /// [`ShardMode::Selector`](crate::sharding::ShardMode::Selector)) or with the label
    /// selector `<slot label>=<slot>` (primary objects in
    /// [`ShardMode::Label`](crate::sharding::ShardMode::Label), owned objects always). Primary
    /// objects are listed only once the group's member decided the mode. A slot that joins the set
    /// starts its own list-watch (its objects arrive as adds); a slot that leaves stops its
    /// list-watch and its objects leave the cache without delete notifications (they were
    /// not deleted, this replica stopped caching them). The other slots' watches go on:
    /// only the moved ranges restart.
    ///
    /// Per-slot watches rather than one watch whose selector changes, because a change of
    /// one selector restarts the whole list; the price is one watch per owned slot (about
    /// 22 of 64 slots for each of three replicas), which the API server's watch cache
    /// serves from memory. Each slot's watch also checks every object against its slot
    /// (the uid's hash, or the owner's label): a selector sent to a server without the
    /// feature gate would bring every object to every slot's watch, and the cache would
    /// still be right, at the traffic of that many full watches. A
    /// [`ShardMember`](crate::sharding::ShardMember) avoids it: it chooses the label mode
    /// on such a server.
    ///
    /// Set it before the informer starts (it is read once, at start), and not with a
    /// factory-wide shard selector. The informer counts as synced once every slot of the
    /// set it first got has listed.
    pub fn set_dynamic_shards(&self, shards: DynamicShards) {
        *self.inner.dynamic.lock() = Some(shards);
    }

    /// The informer's `Api` on its factory's client (namespaced as the informer is).
    pub(crate) fn api(&self) -> Api<K> {
        (self.inner.api_for)(self.inner.client.clone())
    }

    /// The factory's client.
    pub(crate) fn client(&self) -> &Client {
        &self.inner.client
    }

    /// The label selector every list and watch of this informer carries, if any.
    pub(crate) fn label_selector(&self) -> Option<String> {
        self.inner.config.label_selector.clone()
    }

    /// Whether the first full list has been cached.
    #[must_use]
    pub fn has_synced(&self) -> bool {
        *self.inner.synced_tx.borrow()
    }

    /// Wait until the first list is cached, at most `timeout` (client-go's
    /// `WaitForCacheSync` for one informer; the same contract as
    /// [`SharedInformerFactory::wait_for_cache_sync`]).
    ///
    /// # Errors
    /// [`NotSynced`] naming this informer if `timeout` passed first
    /// ([`SyncFailure::Timeout`]) or the factory was shut down ([`SyncFailure::Stopped`]).
    pub async fn wait_for_sync(&self, timeout: Duration) -> Result<(), NotSynced> {
        let failure = |cause| NotSynced {
            pending: vec![self.inner.name.clone()],
            cause,
        };
        let mut rx = self.inner.synced_tx.subscribe();
        let mut stop = self.inner.stop.clone();
        let deadline = tokio::time::sleep(timeout);
        tokio::pin!(deadline);
        loop {
            if *rx.borrow_and_update() {
                return Ok(());
            }
            if *stop.borrow_and_update() {
                return Err(failure(SyncFailure::Stopped));
            }
            tokio::select! {
                r = rx.changed() => if r.is_err() { return Err(failure(SyncFailure::Stopped)) },
                r = stop.changed() => if r.is_err() { return Err(failure(SyncFailure::Stopped)) },
                () = &mut deadline => return Err(failure(SyncFailure::Timeout)),
            }
        }
    }

    /// Add a handler with the factory's default resync period.
    pub fn add_event_handler(&self, handler: impl EventHandler<K>) {
        self.add_event_handler_with_resync(handler, self.inner.default_resync)
    }

    /// Add a handler; `resync` (if any) redelivers every cached object as an update.
    /// A handler added after the informer started first gets an add per cached object.
    pub fn add_event_handler_with_resync(
        &self,
        handler: impl EventHandler<K>,
        resync: Option<Duration>,
    ) {
        let (tx, mut rx) = mpsc::unbounded_channel::<Notification<K>>();
        let handler = Arc::new(handler);
        let h = handler.clone();
        let mut stop = self.inner.stop.clone();
        let store = self.inner.store.clone();
        let delivery = tokio::spawn(async move {
            loop {
                tokio::select! {
                    n = rx.recv() => match n {
                        Some(Notification::Add(o, kind)) => h.on_add(o.get(), kind),
                        Some(Notification::Update(old, new)) => h.on_update(old, new),
                        Some(Notification::Delete(d)) => h.on_delete(d),
                        // Gone since the tick: its delete notification is on its way.
                        Some(Notification::Resync(key)) => if let Some(o) = store.get(&key) {
                            h.on_update(o.clone(), o);
                        },
                        None => return,
                    },
                    _ = stop.changed() => return,
                }
            }
        });
        {
            // Holding the handler lock while snapshotting keeps the backlog and the live
            // stream consistent: the watch loop notifies under the same lock.
            let mut handlers = self.inner.handlers.lock();
            if self.inner.started.load(Ordering::SeqCst) {
                for entry in self.inner.store.entries() {
                    let _ = tx.send(Notification::Add(entry, AddKind::InitialList));
                }
            }
            handlers.push(tx.clone());
        }
        let mut tasks = vec![delivery];
        if let Some(period) = resync.filter(|p| !p.is_zero()) {
            let inner = self.inner.clone();
            let mut stop = self.inner.stop.clone();
            tasks.push(tokio::spawn(async move {
                let mut tick =
                    tokio::time::interval_at(tokio::time::Instant::now() + period, period);
                loop {
                    tokio::select! {
                        _ = tick.tick() => {
                            if !*inner.synced_tx.borrow() {
                                continue;
                            }
                            for key in inner.store.keys() {
                                if tx.send(Notification::Resync(key)).is_err() {
                                    return;
                                }
                            }
                        }
                        _ = stop.changed() => return,
                    }
                }
            }));
        }
        self.inner.tasks.lock().extend(tasks);
    }

    fn notify(
        handlers: &[mpsc::UnboundedSender<Notification<K>>],
        make: impl Fn() -> Notification<K>,
    ) {
        for h in handlers {
            let _ = h.send(make());
        }
    }

    fn prepare(&self, mut obj: K) -> Arc<K> {
        if let Some(t) = &self.inner.meta_transform {
            t(obj.meta_mut());
        }
        // serde grows the managedFields Vec to 4 slots for the usual one entry; the cache
        // keeps the object for its lifetime, so give the spare capacity back.
        if let Some(managed) = obj.meta_mut().managed_fields.as_mut() {
            managed.shrink_to_fit();
        }
        if let Some(t) = self.inner.transform.lock().clone() {
            t(&mut obj);
        }
        Arc::new(obj)
    }

    /// Start the list-watch (idempotent). Called by the factory's `start`.
    pub fn run(&self) {
        if self.inner.started.swap(true, Ordering::SeqCst) {
            return;
        }
        let this = self.clone();
        let dynamic = self.inner.dynamic.lock().clone();
        let task = match dynamic {
            Some(d) => tokio::spawn(async move { this.dynamic_loop(d).await }),
            None => {
                let selector = self.inner.shard.as_ref().map(|s| s.selector.clone());
                tokio::spawn(this.watch_loop(Scope::Whole(selector)))
            }
        };
        self.inner.tasks.lock().push(task);
    }

    /// Runs one list-watch per slot of the changing set.
    async fn dynamic_loop(self, mut shards: DynamicShards) {
        let inner = self.inner.clone();
        let mut stop = inner.stop.clone();
        let mut mode = shards.mode.clone();
        let (synced_tx, mut synced_rx) = mpsc::unbounded_channel::<usize>();
        let mut running: BTreeMap<usize, JoinHandle<()>> = BTreeMap::new();
        let mut synced: std::collections::BTreeSet<usize> = std::collections::BTreeSet::new();
        loop {
            let now = *mode.borrow_and_update();
            let slots = shards.slots.borrow_and_update().clone();
            // Primary objects wait until the member decided how to list them.
            let want: std::collections::BTreeSet<usize> = slots
                .iter()
                .copied()
                .filter(|&s| shards.query(s, now).is_some())
                .collect();
            let gone: Vec<usize> = running
                .keys()
                .filter(|s| !want.contains(s))
                .copied()
                .collect();
            for slot in gone {
                if let Some(task) = running.remove(&slot) {
                    task.abort();
                    let _ = task.await;
                }
                synced.remove(&slot);
                let dropped = inner
                    .store
                    .list_filtered(|o| shards.slot_of(o.meta()) == Some(slot));
                for obj in dropped {
                    inner.store.remove(&key_of(obj.as_ref()));
                }
            }
            for &slot in want.iter() {
                if running.contains_key(&slot) {
                    continue;
                }
                let query = shards.query(slot, now).expect("filtered above");
                let scope = Scope::Slot {
                    slot,
                    query,
                    shards: shards.clone(),
                    synced: synced_tx.clone(),
                };
                let this = self.clone();
                running.insert(slot, tokio::spawn(this.watch_loop(scope)));
            }
            if !*inner.synced_tx.borrow() && slots.iter().all(|s| synced.contains(s)) {
                inner.synced_tx.send_replace(true);
                tracing::debug!(informer = %inner.name, slots = want.len(), objects = inner.store.len(), "cache synced");
            }
            tokio::select! {
                r = shards.slots.changed() => if r.is_err() { break },
                r = mode.changed() => if r.is_err() { break },
                Some(slot) = synced_rx.recv() => { synced.insert(slot); }
                _ = stop.changed() => break,
            }
        }
        for (_, task) in running {
            task.abort();
        }
    }

    /// Whether a list-watch keeps `obj`. The server's filtering is checked as well: one
    /// hash of a short field (or one label lookup) per event buys a partition that holds
    /// against a server with the gate off, an HA control plane half through turning it on,
    /// or an object whose label someone edited.
    fn selected(scope: &Scope, obj: &K) -> bool {
        match scope {
            Scope::Whole(selector) => selector.as_ref().is_none_or(|s| s.matches(obj.meta())),
            Scope::Slot { slot, shards, .. } => shards.slot_of(obj.meta()) == Some(*slot),
        }
    }

    /// Logs, once per change, how a sharded informer's selector is applied.
    fn report_filtering(&self, selector: &ShardSelector) {
        let (observed, reported) = match &self.inner.shard {
            Some(shard) => (&shard.observed, &shard.reported),
            None => (&self.inner.dynamic_observed, &self.inner.dynamic_reported),
        };
        let now = observed.lock().clone();
        let mut reported = reported.lock();
        if reported.as_ref() == Some(&now) {
            return;
        }
        let name = &self.inner.name;
        match &now {
            ServerFiltering::Applied => tracing::info!(
                informer = %name, %selector,
                "sharded list and watch: the API server filters by the shard selector"
            ),
            ServerFiltering::Ignored => tracing::warn!(
                informer = %name, %selector,
                "the API server ignored the shard selector (its feature gate ShardedListAndWatch is off): it sends every object; this informer filters them client-side"
            ),
            ServerFiltering::Different(echo) => tracing::warn!(
                informer = %name, %selector, echo = %echo,
                "the API server echoed another shard selector than the one sent; this informer filters client-side"
            ),
            ServerFiltering::Unconfirmed => tracing::info!(
                informer = %name, %selector,
                "the API server's list carried no shardInfo (kube-apiserver 1.37 drops it from custom resource and metadata-only lists) but held only selected objects; this informer filters client-side as well"
            ),
            ServerFiltering::Unknown => tracing::warn!(
                informer = %name, %selector,
                "no list response showed whether the API server filters by the shard selector (streaming list?); this informer filters client-side"
            ),
        }
        *reported = Some(now);
    }

    /// One list-watch: of everything, of the factory's shard, or of one slot of a
    /// dynamically sharded informer, whose relists replace only that slot's objects.
    async fn watch_loop(self, scope: Scope) {
        let inner = self.inner.clone();
        let selector = match &scope {
            Scope::Whole(s) => s.clone(),
            Scope::Slot {
                query: SlotQuery::Selector(s),
                ..
            } => Some(s.clone()),
            Scope::Slot { .. } => None,
        };
        let client = match (&selector, &inner.shard) {
            (Some(sel), Some(s)) => sharded_client(inner.client.clone(), sel, s.observed.clone()),
            (Some(sel), None) => {
                sharded_client(inner.client.clone(), sel, inner.dynamic_observed.clone())
            }
            (None, _) => inner.client.clone(),
        };
        let mut config = inner.config.clone();
        if let Scope::Slot {
            query: SlotQuery::Label(label),
            ..
        } = &scope
        {
            let labels = and_labels(config.label_selector.as_deref(), label);
            config = config.labels(&labels);
        }
        let selector = selector.as_ref();
        let api = (inner.api_for)(client);
        let mut stream = watcher::watcher(api, config).default_backoff().boxed();
        let mut stop = inner.stop.clone();
        let whole = matches!(scope, Scope::Whole(_));
        // The list so far. A whole list is encoded as it arrives, so a compact store never
        // holds it decoded; a slot's relist is upserted object by object, which encodes each
        // once, so its objects stay typed until then.
        let new_batch = || {
            if whole {
                inner.store.batch()
            } else {
                Batch::Typed(vec![])
            }
        };
        let mut batch = new_batch();
        loop {
            let event = tokio::select! {
                e = stream.next() => e,
                _ = stop.changed() => None,
            };
            let Some(event) = event else { return };
            match event {
                Ok(Event::Init) => batch = new_batch(),
                Ok(Event::InitApply(o)) => {
                    if Self::selected(&scope, &o) {
                        batch.push(self.prepare(o))
                    }
                }
                Ok(Event::InitDone) => {
                    if let Some(sel) = selector {
                        self.report_filtering(sel);
                    }
                    let kind = if *inner.synced_tx.borrow() && whole {
                        AddKind::Watch
                    } else {
                        AddKind::InitialList
                    };
                    let handlers = inner.handlers.lock();
                    let fresh = std::mem::replace(&mut batch, new_batch());
                    let (mut old, fresh) = match &scope {
                        // One slot's relist: the other slots' objects stay.
                        Scope::Slot { .. } => {
                            let old: BTreeMap<ObjectKey, Arc<K>> = inner
                                .store
                                .list_filtered(|o| Self::selected(&scope, o))
                                .into_iter()
                                .map(|o| (key_of(o.as_ref()), o))
                                .collect();
                            // Fresh first, then the gone: a reader never misses an object
                            // that stays.
                            let fresh = fresh.into_entries();
                            for entry in &fresh {
                                inner.store.upsert(entry.get());
                            }
                            let fresh_keys: std::collections::BTreeSet<ObjectKey> =
                                fresh.iter().map(Entry::key).collect();
                            for key in old.keys().filter(|k| !fresh_keys.contains(k)) {
                                inner.store.remove(key);
                            }
                            (old, fresh)
                        }
                        Scope::Whole(_) => inner.store.replace_batch(fresh),
                    };
                    for entry in fresh {
                        match old.remove(&entry.key()) {
                            Some(prev) => {
                                let obj = entry.get();
                                if prev.meta().resource_version != obj.meta().resource_version {
                                    Self::notify(&handlers, || {
                                        Notification::Update(prev.clone(), obj.clone())
                                    })
                                }
                            }
                            None => {
                                Self::notify(&handlers, || Notification::Add(entry.clone(), kind))
                            }
                        }
                    }
                    // Whatever the relist no longer has was deleted while we were not watching.
                    for (key, last) in old {
                        Self::notify(&handlers, || {
                            Notification::Delete(DeleteEvent::Tombstone(Tombstone {
                                key: key.clone(),
                                last_known: last.clone(),
                            }))
                        });
                    }
                    drop(handlers);
                    match &scope {
                        Scope::Slot { slot, synced, .. } => {
                            let _ = synced.send(*slot);
                        }
                        Scope::Whole(_) => {
                            inner.synced_tx.send_replace(true);
                            tracing::debug!(informer = %inner.name, objects = inner.store.len(), "cache synced");
                        }
                    }
                }
                // A shard key (uid, namespace) never changes, so an object never moves into
                // or out of the selection by hash: events of others are dropped whole. (A
                // slot label that changes makes the label selector's watch send a deletion.)
                Ok(Event::Apply(o) | Event::Delete(o)) if !Self::selected(&scope, &o) => {}
                Ok(Event::Apply(o)) => {
                    let obj = self.prepare(o);
                    let handlers = inner.handlers.lock();
                    match inner.store.upsert(obj.clone()) {
                        Some(prev) => Self::notify(&handlers, || {
                            Notification::Update(prev.clone(), obj.clone())
                        }),
                        None => Self::notify(&handlers, || {
                            Notification::Add(Entry::Typed(obj.clone()), AddKind::Watch)
                        }),
                    }
                }
                Ok(Event::Delete(o)) => {
                    let obj = self.prepare(o);
                    let handlers = inner.handlers.lock();
                    inner.store.remove(&key_of(obj.as_ref()));
                    Self::notify(&handlers, || {
                        Notification::Delete(DeleteEvent::Object(obj.clone()))
                    });
                }
                Err(e) => {
                    tracing::warn!(informer = %inner.name, error = %e, "watch failed; kube-runtime retries with backoff")
                }
            }
        }
    }

    /// A lister over this informer's cache.
    #[must_use]
    pub fn lister(&self) -> crate::lister::Lister<K> {
        crate::lister::Lister::new(self.inner.store.clone())
    }
}

/// What the factory needs from an informer of any type.
trait ErasedInformer: Send + Sync {
    fn run(&self);
    fn has_synced(&self) -> bool;
    fn name(&self) -> String;
    fn as_any(&self) -> &dyn Any;
}

impl<K> ErasedInformer for Informer<K>
where
    K: Resource + Cacheable,
{
    fn run(&self) {
        Informer::run(self)
    }
    fn has_synced(&self) -> bool {
        Informer::has_synced(self)
    }
    fn name(&self) -> String {
        self.inner.name.clone()
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// Tweak the list options (label and field selectors) of every informer of a factory.
pub type TweakListOptions = Arc<dyn Fn(&mut watcher::Config) + Send + Sync>;

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct InformerKey {
    resource: String,
    namespace: Option<String>,
    labels: Option<String>,
    fields: Option<String>,
    shard: Option<String>,
}

/// An informer of some type, with its type for safe downcasting.
type RegisteredInformer = (TypeId, Arc<dyn ErasedInformer>);

struct FactoryInner {
    client: Client,
    namespace: Option<String>,
    tweak: Option<TweakListOptions>,
    shard: Option<ShardSelector>,
    transform: Option<MetaTransform>,
    default_resync: Option<Duration>,
    informers: Mutex<BTreeMap<InformerKey, RegisteredInformer>>,
    started: AtomicBool,
    stop_tx: watch::Sender<bool>,
}

/// Hands out shared informers: asking twice for the same kind (and namespace and list
/// options) returns the same informer, so every consumer shares one watch.
#[derive(Clone)]
pub struct SharedInformerFactory {
    inner: Arc<FactoryInner>,
}

/// Why a wait for caches to sync gave up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SyncFailure {
    /// The timeout passed.
    Timeout,
    /// The factory was shut down.
    Stopped,
}

impl std::fmt::Display for SyncFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            SyncFailure::Timeout => "timed out",
            SyncFailure::Stopped => "informers stopped",
        })
    }
}

/// Caches that had not synced: what [`Informer::wait_for_sync`] and
/// [`SharedInformerFactory::wait_for_cache_sync`] return when they give up.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("caches not synced ({cause}): {}", .pending.join(", "))]
pub struct NotSynced {
    /// The names of the informers that had not synced ([`Informer::name`]), sorted.
    pub pending: Vec<String>,
    /// Why the wait ended.
    pub cause: SyncFailure,
}

impl SharedInformerFactory {
    /// A factory with default options: every namespace, no selectors, no transform, no
    /// resync.
    #[must_use]
    pub fn new(client: Client) -> Self {
        SharedInformerFactoryBuilder::new(client).build()
    }

    /// Options as informer-gen has them.
    #[must_use]
    pub fn builder(client: Client) -> SharedInformerFactoryBuilder {
        SharedInformerFactoryBuilder::new(client)
    }

    /// The client informers list and watch with.
    #[must_use]
    pub fn client(&self) -> &Client {
        &self.inner.client
    }

    fn config(&self) -> watcher::Config {
        let mut c = watcher::Config::default();
        if let Some(t) = &self.inner.tweak {
            t(&mut c);
        }
        c
    }

    fn get_or_create<K>(
        &self,
        resource: String,
        namespace: Option<String>,
        api_for: impl Fn(Client) -> Api<K> + Send + Sync + 'static,
        store: fn() -> Store<K>,
    ) -> Informer<K>
    where
        K: Resource + Cacheable,
    {
        let config = self.config();
        let key = InformerKey {
            resource: resource.clone(),
            namespace: namespace.clone(),
            labels: config.label_selector.clone(),
            fields: config.field_selector.clone(),
            shard: self.inner.shard.as_ref().map(ToString::to_string),
        };
        let mut informers = self.inner.informers.lock();
        if let Some((type_id, existing)) = informers.get(&key)
            && *type_id == TypeId::of::<K>()
        {
            return existing
                .as_any()
                .downcast_ref::<Informer<K>>()
                .expect("type checked")
                .clone();
        }
        let name = match &namespace {
            Some(ns) => format!("{resource}/{ns}"),
            None => resource,
        };
        let informer = Informer::new(
            name,
            self.inner.client.clone(),
            Box::new(api_for),
            self.inner.shard.clone(),
            config,
            self.inner.transform.clone(),
            self.inner.default_resync,
            self.inner.stop_tx.subscribe(),
            store(),
        );
        informers.insert(key, (TypeId::of::<K>(), Arc::new(informer.clone())));
        // Informers asked for after start() start at once, so late callers cannot forget.
        if self.inner.started.load(Ordering::SeqCst) {
            informer.run();
        }
        informer
    }

    /// The shared informer of a namespaced kind (in the factory's namespace, or all).
    #[must_use]
    pub fn informer_for<K>(&self) -> Informer<K>
    where
        K: Resource<Scope = NamespaceResourceScope, DynamicType = ()> + Cacheable,
    {
        self.namespaced_informer::<K>("", Store::new)
    }

    /// The shared metadata-only informer of a namespaced kind: client-go's
    /// `metadatainformer`, controller-runtime's `OnlyMetadata`. It lists and watches with
    /// `as=PartialObjectMetadata` (kube's `Api<PartialObjectMeta<K>>` asks so), so the server
    /// sends, and the cache keeps, only each object's `metadata`: a controller that reads an
    /// owned object's owner references or labels caches no spec or status. Its lister returns
    /// [`PartialObjectMeta<K>`]. The controller builder's
    /// [`owns_metadata`](crate::controller::Builder::owns_metadata) and
    /// [`watches_metadata`](crate::controller::Builder::watches_metadata) use this informer.
    ///
    /// ```no_run
    /// # fn f(factory: kube_codegen_runtime::informer::SharedInformerFactory) {
    /// use k8s_openapi::api::apps::v1::Deployment;
    /// let deployments = factory.metadata_informer_for::<Deployment>();
    /// // deployments.lister().get(&key) -> Option<Arc<PartialObjectMeta<Deployment>>>
    /// # }
    /// ```
    #[must_use]
    pub fn metadata_informer_for<K>(&self) -> Informer<PartialObjectMeta<K>>
    where
        K: Resource<Scope = NamespaceResourceScope, DynamicType = ()> + Cacheable,
    {
        self.namespaced_informer::<PartialObjectMeta<K>>(METADATA_ONLY, Store::new)
    }

    /// The shared metadata-only informer of a cluster-scoped kind (see
    /// [`metadata_informer_for`](Self::metadata_informer_for)).
    #[must_use]
    pub fn cluster_metadata_informer_for<K>(&self) -> Informer<PartialObjectMeta<K>>
    where
        K: Resource<Scope = ClusterResourceScope, DynamicType = ()> + Cacheable,
    {
        self.cluster_informer::<PartialObjectMeta<K>>(METADATA_ONLY, Store::new)
    }

    /// The shared informer of a cluster-scoped kind.
    #[must_use]
    pub fn cluster_informer_for<K>(&self) -> Informer<K>
    where
        K: Resource<Scope = ClusterResourceScope, DynamicType = ()> + Cacheable,
    {
        self.cluster_informer::<K>("", Store::new)
    }

    /// The shared informer of `T` (a kind, or its `PartialObjectMeta`) in the factory's
    /// namespace, or all; `suffix` keeps apart informers of one kind's resource that cache
    /// different things.
    fn namespaced_informer<T>(&self, suffix: &str, store: fn() -> Store<T>) -> Informer<T>
    where
        T: Resource<Scope = NamespaceResourceScope, DynamicType = ()> + Cacheable,
    {
        let ns = self.inner.namespace.clone();
        self.get_or_create(
            resource_key::<T>(suffix),
            ns.clone(),
            move |client| match &ns {
                Some(ns) => Api::namespaced(client, ns),
                None => Api::all(client),
            },
            store,
        )
    }

    /// The shared informer of a cluster-scoped `T` (see [`Self::namespaced_informer`]).
    fn cluster_informer<T>(&self, suffix: &str, store: fn() -> Store<T>) -> Informer<T>
    where
        T: Resource<Scope = ClusterResourceScope, DynamicType = ()> + Cacheable,
    {
        self.get_or_create(resource_key::<T>(suffix), None, Api::all, store)
    }

    /// Generic access by `ApiResource` (client-go's `ForResource`); `namespaced` is the
    /// kind's scope.
    #[must_use]
    pub fn for_resource(
        &self,
        resource: &ApiResource,
        namespaced: bool,
    ) -> Informer<DynamicObject> {
        let name = format!("{}.{}", resource.plural, resource.group);
        let ns = if namespaced {
            self.inner.namespace.clone()
        } else {
            None
        };
        let ar = resource.clone();
        self.get_or_create(
            name,
            ns.clone(),
            move |client| match &ns {
                Some(ns) => Api::namespaced_with(client, ns, &ar),
                None => Api::all_with(client, &ar),
            },
            Store::new,
        )
    }

    /// Informers whose caches keep each object as its JSON and decode it on every read
    /// ([`Store::compact`]): an opt-in for kinds cached in large numbers and read seldom,
    /// where memory matters more than the cost of a lister call. Their listers and event
    /// handlers see the same typed objects as [`informer_for`](Self::informer_for)'s; each
    /// is a separate informer (its own watch) from the typed one of the same kind. A resync
    /// decodes every cached object once per handler: give these a long resync period, or none.
    ///
    /// ```no_run
    /// # fn f(factory: kube_codegen_runtime::informer::SharedInformerFactory) {
    /// use k8s_openapi::api::core::v1::ConfigMap;
    /// use kube_codegen_runtime::store::ObjectKey;
    ///
    /// let config_maps = factory.compact().informer_for::<ConfigMap>();
    /// assert!(config_maps.store().is_compact());
    /// // Decodes the object's JSON into a new `Arc<ConfigMap>`.
    /// let cm = config_maps.lister().get(&ObjectKey::namespaced("default", "settings"));
    /// # }
    /// ```
    #[must_use]
    pub fn compact(&self) -> CompactInformers<'_> {
        CompactInformers { factory: self }
    }

    /// Start every informer asked for so far (idempotent); later ones start on creation.
    pub fn start(&self) {
        self.inner.started.store(true, Ordering::SeqCst);
        for (_, informer) in self.inner.informers.lock().values() {
            informer.run();
        }
    }

    /// Wait until every informer asked for so far has synced, at most `timeout`
    /// (client-go's `WaitForCacheSync`).
    ///
    /// # Errors
    /// [`NotSynced`] naming the informers that had not synced, if `timeout` passed first
    /// ([`SyncFailure::Timeout`]) or the factory was shut down ([`SyncFailure::Stopped`]).
    pub async fn wait_for_cache_sync(&self, timeout: Duration) -> Result<(), NotSynced> {
        let deadline = tokio::time::Instant::now() + timeout;
        let mut stop = self.inner.stop_tx.subscribe();
        loop {
            let mut pending: Vec<String> = self
                .inner
                .informers
                .lock()
                .values()
                .filter(|(_, i)| !i.has_synced())
                .map(|(_, i)| i.name())
                .collect();
            if pending.is_empty() {
                return Ok(());
            }
            pending.sort();
            let cause = if *stop.borrow_and_update() {
                SyncFailure::Stopped
            } else if tokio::time::Instant::now() >= deadline {
                SyncFailure::Timeout
            } else {
                // Polled: informers of any type, and ones created while waiting, count.
                tokio::select! {
                    () = tokio::time::sleep(Duration::from_millis(50)) => {}
                    _ = stop.changed() => {}
                }
                continue;
            };
            return Err(NotSynced { pending, cause });
        }
    }

    /// Whether every informer has synced (for readiness probes).
    #[must_use]
    pub fn has_synced(&self) -> bool {
        self.inner
            .informers
            .lock()
            .values()
            .all(|(_, i)| i.has_synced())
    }

    /// Stop every watch and handler task.
    pub fn shutdown(&self) {
        self.inner.stop_tx.send_replace(true);
    }
}

/// What an informer caches: a kind, or its [`PartialObjectMeta`], that decodes from the
/// API server's JSON and is shared by the informer's tasks. A blanket impl makes every type
/// with these bounds one; the trait names the bounds that the factory's constructors share.
pub trait Cacheable: Clone + DeserializeOwned + Debug + Send + Sync + 'static {}

impl<T: Clone + DeserializeOwned + Debug + Send + Sync + 'static> Cacheable for T {}

/// The scope of a kind (`NamespaceResourceScope` or `ClusterResourceScope`): which of the
/// factory's constructors makes its informers. It lets code generic over a kind ask for
/// the right one, as the controller builder's
/// [`owns_metadata`](crate::controller::Builder::owns_metadata) does. Sealed: the two
/// scopes are the only ones.
pub trait InformerScope: sealed::Sealed + Sized + 'static {
    /// The factory's metadata-only informer of `K`
    /// ([`SharedInformerFactory::metadata_informer_for`] or
    /// [`SharedInformerFactory::cluster_metadata_informer_for`]).
    fn metadata_informer<K>(factory: &SharedInformerFactory) -> Informer<PartialObjectMeta<K>>
    where
        K: Resource<Scope = Self, DynamicType = ()> + Cacheable;
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for kube::core::NamespaceResourceScope {}
    impl Sealed for kube::core::ClusterResourceScope {}
}

impl InformerScope for NamespaceResourceScope {
    fn metadata_informer<K>(factory: &SharedInformerFactory) -> Informer<PartialObjectMeta<K>>
    where
        K: Resource<Scope = Self, DynamicType = ()> + Cacheable,
    {
        factory.metadata_informer_for::<K>()
    }
}

impl InformerScope for ClusterResourceScope {
    fn metadata_informer<K>(factory: &SharedInformerFactory) -> Informer<PartialObjectMeta<K>>
    where
        K: Resource<Scope = Self, DynamicType = ()> + Cacheable,
    {
        factory.cluster_metadata_informer_for::<K>()
    }
}

/// The compact-cache informers of a factory ([`SharedInformerFactory::compact`]): the same
/// four as the factory's own, each caching with [`Store::compact`].
///
/// The trade: a cached object takes about its JSON's size instead of its typed size
/// (several times less for Kubernetes types; BENCHMARKS.md, "Informer cache"), and every
/// lister `get` and `list` parses the JSON of the objects it returns (a label selector
/// parses every object it looks at). Use it for kinds a controller caches in large
/// numbers and reads by key now and then, not for its hot primary kind.
#[derive(Clone, Copy)]
pub struct CompactInformers<'a> {
    factory: &'a SharedInformerFactory,
}

impl CompactInformers<'_> {
    /// [`SharedInformerFactory::informer_for`], with a compact cache.
    #[must_use]
    pub fn informer_for<K>(&self) -> Informer<K>
    where
        K: Resource<Scope = NamespaceResourceScope, DynamicType = ()> + Cacheable + Serialize,
    {
        self.factory
            .namespaced_informer::<K>(COMPACT, Store::compact)
    }

    /// [`SharedInformerFactory::metadata_informer_for`], with a compact cache.
    #[must_use]
    pub fn metadata_informer_for<K>(&self) -> Informer<PartialObjectMeta<K>>
    where
        K: Resource<Scope = NamespaceResourceScope, DynamicType = ()> + Cacheable,
    {
        self.factory
            .namespaced_informer::<PartialObjectMeta<K>>(METADATA_COMPACT, Store::compact)
    }

    /// [`SharedInformerFactory::cluster_informer_for`], with a compact cache.
    #[must_use]
    pub fn cluster_informer_for<K>(&self) -> Informer<K>
    where
        K: Resource<Scope = ClusterResourceScope, DynamicType = ()> + Cacheable + Serialize,
    {
        self.factory.cluster_informer::<K>(COMPACT, Store::compact)
    }

    /// [`SharedInformerFactory::cluster_metadata_informer_for`], with a compact cache.
    #[must_use]
    pub fn cluster_metadata_informer_for<K>(&self) -> Informer<PartialObjectMeta<K>>
    where
        K: Resource<Scope = ClusterResourceScope, DynamicType = ()> + Cacheable,
    {
        self.factory
            .cluster_informer::<PartialObjectMeta<K>>(METADATA_COMPACT, Store::compact)
    }
}

/// Builder for [`SharedInformerFactory`] (informer-gen's `WithNamespace`,
/// `WithTweakListOptions`, `WithTransform`, default resync).
pub struct SharedInformerFactoryBuilder {
    client: Client,
    namespace: Option<String>,
    tweak: Option<TweakListOptions>,
    shard: Option<ShardSelector>,
    transform: Option<MetaTransform>,
    default_resync: Option<Duration>,
}

impl SharedInformerFactoryBuilder {
    /// The defaults of [`SharedInformerFactory::new`].
    #[must_use]
    pub fn new(client: Client) -> Self {
        SharedInformerFactoryBuilder {
            client,
            namespace: None,
            tweak: None,
            shard: None,
            transform: None,
            default_resync: None,
        }
    }

    /// Watch only this namespace (namespaced kinds).
    #[must_use]
    pub fn with_namespace(mut self, namespace: impl Into<String>) -> Self {
        let ns = namespace.into();
        self.namespace = (!ns.is_empty()).then_some(ns);
        self
    }

    /// Set label/field selectors on every list and watch.
    #[must_use]
    pub fn with_tweak_list_options(
        mut self,
        f: impl Fn(&mut watcher::Config) + Send + Sync + 'static,
    ) -> Self {
        self.tweak = Some(Arc::new(f));
        self
    }

    /// List and watch only the objects a shard selector selects (sharded list and watch,
    /// Kubernetes 1.36+, feature gate `ShardedListAndWatch` on kube-apiserver): the
    /// informers send `shardSelector` with every list and watch, and cache only the
    /// objects whose key hashes into the selector's ranges.
    ///
    /// On its first list each informer reads whether the server applied the selector
    /// (`metadata.shardInfo`, [`Informer::server_filtering`]) and logs one line saying so. A
    /// server without the gate ignores the parameter and sends every object; the informer
    /// then says so (a warning) and filters on its own, with the server's hash, so the
    /// cache and the handlers see the same objects either way; only the traffic differs.
    ///
    /// A sharded informer's `kube::Client` is made when it starts: start the factory
    /// within a Tokio runtime.
    ///
    /// ```no_run
    /// # fn f(client: kube::Client) -> Result<(), Box<dyn std::error::Error>> {
    /// use kube_codegen_runtime::informer::SharedInformerFactory;
    /// use kube_codegen_runtime::sharding::ShardSelector;
    ///
    /// let lower_half: ShardSelector =
    ///     "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')".parse()?;
    /// let factory = SharedInformerFactory::builder(client).with_shard_selector(lower_half).build();
    /// # Ok(()) }
    /// ```
    #[must_use]
    pub fn with_shard_selector(mut self, selector: ShardSelector) -> Self {
        self.shard = Some(selector);
        self
    }

    /// Transform every object's metadata before caching (e.g. [`drop_managed_fields`]).
    #[must_use]
    pub fn with_transform(mut self, f: impl Fn(&mut ObjectMeta) + Send + Sync + 'static) -> Self {
        self.transform = Some(Arc::new(f));
        self
    }

    /// Resync period for handlers added without their own.
    #[must_use]
    pub fn with_default_resync(mut self, period: Duration) -> Self {
        self.default_resync = Some(period);
        self
    }

    /// The factory.
    #[must_use]
    pub fn build(self) -> SharedInformerFactory {
        let (stop_tx, _) = watch::channel(false);
        SharedInformerFactory {
            inner: Arc::new(FactoryInner {
                client: self.client,
                namespace: self.namespace,
                tweak: self.tweak,
                shard: self.shard,
                transform: self.transform,
                default_resync: self.default_resync,
                informers: Mutex::new(BTreeMap::new()),
                started: AtomicBool::new(false),
                stop_tx,
            }),
        }
    }
}

/// The usual transform: managedFields are large and controllers rarely read them.
pub fn drop_managed_fields(meta: &mut ObjectMeta) {
    meta.managed_fields = None;
}
