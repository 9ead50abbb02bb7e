//! Listers: read the informer cache by namespace and label selector (client-go's
//! generated listers). Reads never touch the API server.

use std::sync::Arc;

use kube::Resource;
use kube::core::{Selector, SelectorExt};

use crate::store::{NAMESPACE_INDEX, Store};

/// Reads one kind's cache.
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
    pub fn new(store: Store<K>) -> Self {
        Lister { store }
    }

    /// Every cached object the selector matches, in every namespace, ordered by key.
    pub fn list(&self, selector: &Selector) -> Vec<Arc<K>> {
        self.store.list_filtered(|o| matches(o, selector))
    }

    /// Every cached object, ordered by key.
    pub fn list_all(&self) -> Vec<Arc<K>> {
        self.store.list()
    }

    /// A cluster-scoped object by name (or a namespaced one by `namespace/name` key).
    pub fn get(&self, key: &str) -> Option<Arc<K>> {
        self.store.get(key)
    }

    /// Objects in one namespace.
    pub fn namespaced(&self, namespace: &str) -> NamespaceLister<K> {
        NamespaceLister {
            store: self.store.clone(),
            namespace: namespace.to_owned(),
        }
    }

    /// Objects whose index `index` has `value`, ordered by key.
    pub fn by_index(&self, index: &str, value: &str) -> Vec<Arc<K>> {
        self.store.by_index(index, value)
    }

    /// The underlying store.
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
    pub fn get(&self, name: &str) -> Option<Arc<K>> {
        self.store.get_in(&self.namespace, name)
    }

    /// Objects in this namespace matching the selector (served by the namespace index),
    /// ordered by name.
    pub fn list(&self, selector: &Selector) -> Vec<Arc<K>> {
        self.store
            .by_index_filtered(NAMESPACE_INDEX, &self.namespace, |o| matches(o, selector))
    }
}
