//! Listers: read the informer cache by namespace and label selector (client-go's
//! generated listers). Reads never touch the API server.

use std::sync::Arc;

use kube::Resource;
use kube::core::{Selector, SelectorExt};

use crate::store::{NAMESPACE_INDEX, ObjectKey, Store};

/// Reads one kind's cache. Cloning shares the cache.
///
/// ```
/// use std::sync::Arc;
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use kube_codegen_runtime::lister::Lister;
/// use kube_codegen_runtime::store::{ObjectKey, Store};
///
/// let store = Store::new();
/// let mut cm = ConfigMap::default();
/// cm.metadata.namespace = Some("default".into());
/// cm.metadata.name = Some("settings".into());
/// store.upsert(Arc::new(cm));
///
/// let lister = Lister::new(store);
/// assert!(lister.get(&ObjectKey::namespaced("default", "settings")).is_some());
/// assert!(lister.namespaced("default").get("settings").is_some());
/// assert!(lister.namespaced("other").get("settings").is_none());
/// ```
pub struct Lister<K> {
    store: Store<K>,
}

impl<K> Clone for Lister<K> {
    fn clone(&self) -> Self {
        Lister {
            store: self.store.clone(),
        }
    }
}

fn matches<K: Resource>(obj: &K, selector: &Selector) -> bool {
    let empty = Default::default();
    selector.matches(obj.meta().labels.as_ref().unwrap_or(&empty))
}

impl<K: Resource + 'static> Lister<K> {
    /// A lister over `store` (usually [`Informer::lister`](crate::informer::Informer::lister)).
    #[must_use]
    pub fn new(store: Store<K>) -> Self {
        Lister { store }
    }

    /// Every cached object the selector matches, in every namespace, ordered by key.
    #[must_use]
    pub fn list(&self, selector: &Selector) -> Vec<Arc<K>> {
        self.store.list_filtered(|o| matches(o, selector))
    }

    /// Every cached object, ordered by key.
    #[must_use]
    pub fn list_all(&self) -> Vec<Arc<K>> {
        self.store.list()
    }

    /// The object with this key.
    #[must_use]
    pub fn get(&self, key: &ObjectKey) -> Option<Arc<K>> {
        self.store.get(key)
    }

    /// A cluster-scoped object by name: [`get`](Self::get) of
    /// [`ObjectKey::cluster(name)`](ObjectKey::cluster) without building the key (what
    /// generated listers of cluster-scoped kinds call).
    #[must_use]
    pub fn get_by_name(&self, name: &str) -> Option<Arc<K>> {
        self.store.get_in("", name)
    }

    /// Objects in one namespace.
    #[must_use]
    pub fn namespaced(&self, namespace: &str) -> NamespaceLister<K> {
        NamespaceLister {
            store: self.store.clone(),
            namespace: namespace.to_owned(),
        }
    }

    /// Objects whose index `index` has `value`, ordered by key.
    #[must_use]
    pub fn by_index(&self, index: &str, value: &str) -> Vec<Arc<K>> {
        self.store.by_index(index, value)
    }

    /// The underlying store.
    #[must_use]
    pub fn store(&self) -> &Store<K> {
        &self.store
    }
}

/// Reads one namespace of a kind's cache.
pub struct NamespaceLister<K> {
    store: Store<K>,
    namespace: String,
}

impl<K: Resource + 'static> NamespaceLister<K> {
    /// The object `name` in this namespace.
    #[must_use]
    pub fn get(&self, name: &str) -> Option<Arc<K>> {
        self.store.get_in(&self.namespace, name)
    }

    /// Objects in this namespace matching the selector (served by the namespace index),
    /// ordered by name.
    #[must_use]
    pub fn list(&self, selector: &Selector) -> Vec<Arc<K>> {
        self.store
            .by_index_filtered(NAMESPACE_INDEX, &self.namespace, |o| matches(o, selector))
    }
}
