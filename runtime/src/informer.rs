//! Shared informers: client-go's `SharedIndexInformer` and `SharedInformerFactory` on top
//! of kube-runtime's `watcher` (which owns list, watch, relist and backoff).
//!
//! - one list-watch per (kind, namespace, selectors), shared by every handler;
//! - handlers get `on_add`, `on_update(old, new)`, `on_delete(object or tombstone)`, each
//!   through its own queue and task, so a slow handler does not stall the watch or others;
//! - a handler added late first receives synthetic adds for every cached object;
//! - resync delivers `on_update(o, o)` for every object at the handler's period;
//! - objects are `Arc<K>`: shared, read-only; mutate a deep copy.

use std::any::{Any, TypeId};
use std::collections::BTreeMap;
use std::fmt::Debug;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{Api, ApiResource, DynamicObject};
use kube::core::{ClusterResourceScope, NamespaceResourceScope};
use kube::runtime::WatchStreamExt;
use kube::runtime::watcher::{self, Event};
use kube::{Client, Resource};
use parking_lot::Mutex;
use serde::de::DeserializeOwned;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;

use crate::store::{IndexExists, IndexFn, Store, key_of};

/// An object that disappeared while the watch was down: its last known state
/// (client-go's `DeletedFinalStateUnknown`).
#[derive(Debug)]
pub struct Tombstone<K> {
    pub key: String,
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
    pub fn object(&self) -> &Arc<K> {
        match self {
            DeleteEvent::Object(o) => o,
            DeleteEvent::Tombstone(t) => &t.last_known,
        }
    }
}

/// Receives informer notifications. Every method has an empty default.
pub trait EventHandler<K>: Send + Sync + 'static {
    /// A new object; `initial_list` is true for objects of the first list (and for the
    /// synthetic adds a late handler receives).
    fn on_add(&self, _obj: Arc<K>, _initial_list: bool) {}
    /// A changed object; on resync `old` and `new` are the same object.
    fn on_update(&self, _old: Arc<K>, _new: Arc<K>) {}
    fn on_delete(&self, _obj: DeleteEvent<K>) {}
}

type AddFn<K> = Box<dyn Fn(Arc<K>, bool) + Send + Sync>;
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
    pub fn new() -> Self {
        Self::default()
    }
    pub fn on_add(mut self, f: impl Fn(Arc<K>, bool) + Send + Sync + 'static) -> Self {
        self.add = Some(Box::new(f));
        self
    }
    pub fn on_update(mut self, f: impl Fn(Arc<K>, Arc<K>) + Send + Sync + 'static) -> Self {
        self.update = Some(Box::new(f));
        self
    }
    pub fn on_delete(mut self, f: impl Fn(DeleteEvent<K>) + Send + Sync + 'static) -> Self {
        self.delete = Some(Box::new(f));
        self
    }
}

impl<K: Send + Sync + 'static> EventHandler<K> for HandlerFuncs<K> {
    fn on_add(&self, obj: Arc<K>, initial_list: bool) {
        if let Some(f) = &self.add {
            f(obj, initial_list)
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
    Add(Arc<K>, bool),
    Update(Arc<K>, Arc<K>),
    Delete(DeleteEvent<K>),
}

/// A metadata transform applied to every object before it is cached.
pub type MetaTransform = Arc<dyn Fn(&mut ObjectMeta) + Send + Sync>;
type TypedTransform<K> = Arc<dyn Fn(&mut K) + Send + Sync>;

struct InformerInner<K: Resource> {
    name: String,
    api: Api<K>,
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

/// A shared informer for one kind (and namespace and selectors).
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
    K: Resource + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
{
    fn new(
        name: String,
        api: Api<K>,
        config: watcher::Config,
        meta_transform: Option<MetaTransform>,
        default_resync: Option<Duration>,
        stop: watch::Receiver<bool>,
    ) -> Self {
        let (synced_tx, _) = watch::channel(false);
        Informer {
            inner: Arc::new(InformerInner {
                name,
                api,
                config,
                store: Store::new(),
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
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// The cache, with its indexes.
    pub fn store(&self) -> &Store<K> {
        &self.inner.store
    }

    /// Add named indexes (e.g. [`crate::store::owner_uid_index`]).
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

    /// Whether the first full list has been cached.
    pub fn has_synced(&self) -> bool {
        *self.inner.synced_tx.borrow()
    }

    /// Wait until the first list is cached (or the informer stops).
    pub async fn wait_for_sync(&self) -> bool {
        let mut rx = self.inner.synced_tx.subscribe();
        let mut stop = self.inner.stop.clone();
        loop {
            if *rx.borrow_and_update() {
                return true;
            }
            if *stop.borrow_and_update() {
                return false;
            }
            tokio::select! {
                r = rx.changed() => if r.is_err() { return false },
                r = stop.changed() => if r.is_err() { return false },
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
        let delivery = tokio::spawn(async move {
            loop {
                tokio::select! {
                    n = rx.recv() => match n {
                        Some(Notification::Add(o, initial)) => h.on_add(o, initial),
                        Some(Notification::Update(old, new)) => h.on_update(old, new),
                        Some(Notification::Delete(d)) => h.on_delete(d),
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
                for obj in self.inner.store.list() {
                    let _ = tx.send(Notification::Add(obj, true));
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
                            for obj in inner.store.list() {
                                if tx.send(Notification::Update(obj.clone(), obj)).is_err() {
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
        let task = tokio::spawn(async move { this.watch_loop().await });
        self.inner.tasks.lock().push(task);
    }

    async fn watch_loop(self) {
        let inner = self.inner.clone();
        let mut stream = watcher::watcher(inner.api.clone(), inner.config.clone())
            .default_backoff()
            .boxed();
        let mut stop = inner.stop.clone();
        let mut buffer: Vec<Arc<K>> = vec![];
        loop {
            let event = tokio::select! {
                e = stream.next() => e,
                _ = stop.changed() => None,
            };
            let Some(event) = event else { return };
            match event {
                Ok(Event::Init) => buffer.clear(),
                Ok(Event::InitApply(o)) => buffer.push(self.prepare(o)),
                Ok(Event::InitDone) => {
                    let initial = !*inner.synced_tx.borrow();
                    let handlers = inner.handlers.lock();
                    let fresh = std::mem::take(&mut buffer);
                    let mut old = inner.store.replace(fresh.clone());
                    for obj in fresh {
                        let key = key_of(obj.as_ref());
                        match old.remove(&key) {
                            Some(prev)
                                if prev.meta().resource_version == obj.meta().resource_version => {}
                            Some(prev) => Self::notify(&handlers, || {
                                Notification::Update(prev.clone(), obj.clone())
                            }),
                            None => {
                                Self::notify(&handlers, || Notification::Add(obj.clone(), initial))
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
                    inner.synced_tx.send_replace(true);
                    tracing::debug!(informer = %inner.name, objects = inner.store.len(), "cache synced");
                }
                Ok(Event::Apply(o)) => {
                    let obj = self.prepare(o);
                    let handlers = inner.handlers.lock();
                    match inner.store.upsert(obj.clone()) {
                        Some(prev) => Self::notify(&handlers, || {
                            Notification::Update(prev.clone(), obj.clone())
                        }),
                        None => Self::notify(&handlers, || Notification::Add(obj.clone(), false)),
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
    K: Resource + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
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
}

/// An informer of some type, with its type for safe downcasting.
type RegisteredInformer = (TypeId, Arc<dyn ErasedInformer>);

struct FactoryInner {
    client: Client,
    namespace: Option<String>,
    tweak: Option<TweakListOptions>,
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

/// The informers that had not synced by the deadline.
#[derive(Debug, thiserror::Error)]
#[error("caches not synced before the deadline: {}", .0.join(", "))]
pub struct NotSynced(pub Vec<String>);

impl SharedInformerFactory {
    pub fn new(client: Client) -> Self {
        SharedInformerFactoryBuilder::new(client).build()
    }

    /// Options as informer-gen has them.
    pub fn builder(client: Client) -> SharedInformerFactoryBuilder {
        SharedInformerFactoryBuilder::new(client)
    }

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
        make: impl FnOnce() -> Api<K>,
    ) -> Informer<K>
    where
        K: Resource + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
    {
        let config = self.config();
        let key = InformerKey {
            resource: resource.clone(),
            namespace: namespace.clone(),
            labels: config.label_selector.clone(),
            fields: config.field_selector.clone(),
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
        let api = make();
        let informer = Informer::new(
            name,
            api,
            config,
            self.inner.transform.clone(),
            self.inner.default_resync,
            self.inner.stop_tx.subscribe(),
        );
        informers.insert(key, (TypeId::of::<K>(), Arc::new(informer.clone())));
        // Informers asked for after start() start at once, so late callers cannot forget.
        if self.inner.started.load(Ordering::SeqCst) {
            informer.run();
        }
        informer
    }

    /// The shared informer of a namespaced kind (in the factory's namespace, or all).
    pub fn informer_for<K>(&self) -> Informer<K>
    where
        K: Resource<Scope = NamespaceResourceScope, DynamicType = ()>
            + Clone
            + DeserializeOwned
            + Debug
            + Send
            + Sync
            + 'static,
    {
        let resource = format!("{}.{}", K::plural(&()), K::group(&()));
        let ns = self.inner.namespace.clone();
        let client = self.inner.client.clone();
        self.get_or_create(resource, ns.clone(), move || match &ns {
            Some(ns) => Api::namespaced(client, ns),
            None => Api::all(client),
        })
    }

    /// The shared informer of a cluster-scoped kind.
    pub fn cluster_informer_for<K>(&self) -> Informer<K>
    where
        K: Resource<Scope = ClusterResourceScope, DynamicType = ()>
            + Clone
            + DeserializeOwned
            + Debug
            + Send
            + Sync
            + 'static,
    {
        let resource = format!("{}.{}", K::plural(&()), K::group(&()));
        let client = self.inner.client.clone();
        self.get_or_create(resource, None, move || Api::all(client))
    }

    /// Generic access by `ApiResource` (client-go's `ForResource`); `namespaced` is the
    /// kind's scope.
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
        let client = self.inner.client.clone();
        let ar = resource.clone();
        self.get_or_create(name, ns.clone(), move || match &ns {
            Some(ns) => Api::namespaced_with(client, ns, &ar),
            None => Api::all_with(client, &ar),
        })
    }

    /// Start every informer asked for so far (idempotent); later ones start on creation.
    pub fn start(&self) {
        self.inner.started.store(true, Ordering::SeqCst);
        for (_, informer) in self.inner.informers.lock().values() {
            informer.run();
        }
    }

    /// Wait until every informer has synced, or fail naming those that have not.
    pub async fn wait_for_cache_sync(&self, timeout: Duration) -> Result<(), NotSynced> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let pending: Vec<String> = self
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
            if tokio::time::Instant::now() >= deadline {
                return Err(NotSynced(pending));
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Whether every informer has synced (for readiness probes).
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

/// Builder for [`SharedInformerFactory`] (informer-gen's `WithNamespace`,
/// `WithTweakListOptions`, `WithTransform`, default resync).
pub struct SharedInformerFactoryBuilder {
    client: Client,
    namespace: Option<String>,
    tweak: Option<TweakListOptions>,
    transform: Option<MetaTransform>,
    default_resync: Option<Duration>,
}

impl SharedInformerFactoryBuilder {
    pub fn new(client: Client) -> Self {
        SharedInformerFactoryBuilder {
            client,
            namespace: None,
            tweak: None,
            transform: None,
            default_resync: None,
        }
    }

    /// Watch only this namespace (namespaced kinds).
    pub fn with_namespace(mut self, namespace: impl Into<String>) -> Self {
        let ns = namespace.into();
        self.namespace = (!ns.is_empty()).then_some(ns);
        self
    }

    /// Set label/field selectors on every list and watch.
    pub fn with_tweak_list_options(
        mut self,
        f: impl Fn(&mut watcher::Config) + Send + Sync + 'static,
    ) -> Self {
        self.tweak = Some(Arc::new(f));
        self
    }

    /// Transform every object's metadata before caching (e.g. [`drop_managed_fields`]).
    pub fn with_transform(mut self, f: impl Fn(&mut ObjectMeta) + Send + Sync + 'static) -> Self {
        self.transform = Some(Arc::new(f));
        self
    }

    /// Resync period for handlers added without their own.
    pub fn with_default_resync(mut self, period: Duration) -> Self {
        self.default_resync = Some(period);
        self
    }

    pub fn build(self) -> SharedInformerFactory {
        let (stop_tx, _) = watch::channel(false);
        SharedInformerFactory {
            inner: Arc::new(FactoryInner {
                client: self.client,
                namespace: self.namespace,
                tweak: self.tweak,
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
