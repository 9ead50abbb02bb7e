//! The informer cache: objects by `namespace/name` key, shared read-only as `Arc<K>`, with
//! named indexes (client-go's `cache.Indexer`). One lock guards objects and indexes
//! together, so readers always see a consistent snapshot while the watch applies events.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use kube::Resource;
use parking_lot::RwLock;

/// An index function: the index values of an object (client-go's `IndexFunc`).
pub type IndexFn<K> = Arc<dyn Fn(&K) -> Vec<String> + Send + Sync>;

/// The name of the index every store has: objects by namespace.
pub const NAMESPACE_INDEX: &str = "namespace";

/// `namespace/name`, or `name` for cluster-scoped objects (client-go's MetaNamespaceKeyFunc).
pub fn key_of<K: Resource>(obj: &K) -> String {
    let meta = obj.meta();
    let name = meta.name.as_deref().unwrap_or_default();
    match meta.namespace.as_deref() {
        Some(ns) if !ns.is_empty() => format!("{ns}/{name}"),
        _ => name.to_owned(),
    }
}

/// Split a key into (namespace, name).
pub fn split_key(key: &str) -> (Option<&str>, &str) {
    match key.split_once('/') {
        Some((ns, name)) => (Some(ns), name),
        None => (None, key),
    }
}

struct Inner<K> {
    items: BTreeMap<String, Arc<K>>,
    indexers: HashMap<String, IndexFn<K>>,
    /// index name -> index value -> keys
    indices: HashMap<String, HashMap<String, BTreeSet<String>>>,
}

impl<K> Inner<K> {
    fn unindex(&mut self, key: &str, obj: &K) {
        for (name, f) in &self.indexers {
            let index = self.indices.entry(name.clone()).or_default();
            for value in f(obj) {
                if let Some(keys) = index.get_mut(&value) {
                    keys.remove(key);
                    if keys.is_empty() {
                        index.remove(&value);
                    }
                }
            }
        }
    }

    fn index(&mut self, key: &str, obj: &K) {
        for (name, f) in &self.indexers {
            let index = self.indices.entry(name.clone()).or_default();
            for value in f(obj) {
                index.entry(value).or_default().insert(key.to_owned());
            }
        }
    }
}

/// A thread-safe, indexed object cache. Cloning shares it.
pub struct Store<K> {
    inner: Arc<RwLock<Inner<K>>>,
}

impl<K> Clone for Store<K> {
    fn clone(&self) -> Self {
        Store {
            inner: self.inner.clone(),
        }
    }
}

impl<K: Resource + 'static> Default for Store<K> {
    fn default() -> Self {
        Self::new()
    }
}

#[derive(Debug, thiserror::Error)]
#[error("index `{0}` already exists")]
pub struct IndexExists(pub String);

impl<K: Resource + 'static> Store<K> {
    /// An empty store with the namespace index.
    pub fn new() -> Self {
        let mut indexers: HashMap<String, IndexFn<K>> = HashMap::new();
        indexers.insert(
            NAMESPACE_INDEX.to_owned(),
            Arc::new(|o: &K| o.meta().namespace.clone().into_iter().collect()),
        );
        Store {
            inner: Arc::new(RwLock::new(Inner {
                items: BTreeMap::new(),
                indexers,
                indices: HashMap::new(),
            })),
        }
    }

    /// Add named index functions; existing objects are indexed at once.
    pub fn add_indexers(
        &self,
        indexers: impl IntoIterator<Item = (String, IndexFn<K>)>,
    ) -> Result<(), IndexExists> {
        let mut inner = self.inner.write();
        let new: Vec<(String, IndexFn<K>)> = indexers.into_iter().collect();
        if let Some((name, _)) = new.iter().find(|(n, _)| inner.indexers.contains_key(n)) {
            return Err(IndexExists(name.clone()));
        }
        for (name, f) in new {
            let mut index: HashMap<String, BTreeSet<String>> = HashMap::new();
            for (key, obj) in &inner.items {
                for value in f(obj) {
                    index.entry(value).or_default().insert(key.clone());
                }
            }
            inner.indices.insert(name.clone(), index);
            inner.indexers.insert(name, f);
        }
        Ok(())
    }

    /// Insert or replace; returns the previous object.
    pub fn upsert(&self, obj: Arc<K>) -> Option<Arc<K>> {
        let key = key_of(obj.as_ref());
        let mut inner = self.inner.write();
        let old = inner.items.remove(&key);
        if let Some(o) = &old {
            inner.unindex(&key, o);
        }
        inner.index(&key, &obj);
        inner.items.insert(key, obj);
        old
    }

    /// Remove by key; returns the removed object.
    pub fn remove(&self, key: &str) -> Option<Arc<K>> {
        let mut inner = self.inner.write();
        let old = inner.items.remove(key)?;
        inner.unindex(key, &old);
        Some(old)
    }

    /// Replace everything (after a relist); returns the previous contents.
    pub fn replace(&self, objects: Vec<Arc<K>>) -> BTreeMap<String, Arc<K>> {
        let mut inner = self.inner.write();
        let old = std::mem::take(&mut inner.items);
        inner.indices.clear();
        for obj in objects {
            let key = key_of(obj.as_ref());
            inner.index(&key, &obj);
            inner.items.insert(key, obj);
        }
        old
    }

    pub fn get(&self, key: &str) -> Option<Arc<K>> {
        self.inner.read().items.get(key).cloned()
    }

    /// Every object, ordered by key.
    pub fn list(&self) -> Vec<Arc<K>> {
        self.inner.read().items.values().cloned().collect()
    }

    pub fn keys(&self) -> Vec<String> {
        self.inner.read().items.keys().cloned().collect()
    }

    pub fn len(&self) -> usize {
        self.inner.read().items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Objects whose index `index` has value `value` (client-go's `ByIndex`).
    pub fn by_index(&self, index: &str, value: &str) -> Vec<Arc<K>> {
        let inner = self.inner.read();
        let Some(keys) = inner.indices.get(index).and_then(|i| i.get(value)) else {
            return vec![];
        };
        keys.iter()
            .filter_map(|k| inner.items.get(k).cloned())
            .collect()
    }

    /// Keys whose index `index` has value `value` (client-go's `IndexKeys`).
    pub fn index_keys(&self, index: &str, value: &str) -> Vec<String> {
        let inner = self.inner.read();
        inner
            .indices
            .get(index)
            .and_then(|i| i.get(value))
            .map(|k| k.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// The values an index currently holds (client-go's `ListIndexFuncValues`).
    pub fn index_values(&self, index: &str) -> Vec<String> {
        let inner = self.inner.read();
        let mut values: Vec<String> = inner
            .indices
            .get(index)
            .map(|i| i.keys().cloned().collect())
            .unwrap_or_default();
        values.sort();
        values
    }

    pub fn has_index(&self, index: &str) -> bool {
        self.inner.read().indexers.contains_key(index)
    }
}

/// Index objects by the UIDs of their owners (for "which Foo owns this Deployment").
pub fn owner_uid_index<K: Resource>() -> IndexFn<K> {
    Arc::new(|o: &K| {
        o.meta()
            .owner_references
            .iter()
            .flatten()
            .map(|r| r.uid.clone())
            .collect()
    })
}

/// Index objects by the value of one label.
pub fn label_index<K: Resource>(label: &str) -> IndexFn<K> {
    let label = label.to_owned();
    Arc::new(move |o: &K| {
        o.meta()
            .labels
            .as_ref()
            .and_then(|l| l.get(&label))
            .cloned()
            .into_iter()
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::ConfigMap;

    fn cm(ns: &str, name: &str, app: &str) -> Arc<ConfigMap> {
        let mut c = ConfigMap::default();
        c.metadata.namespace = Some(ns.into());
        c.metadata.name = Some(name.into());
        c.metadata.labels = Some([("app".to_string(), app.to_string())].into());
        Arc::new(c)
    }

    #[test]
    fn indexes_follow_updates_and_deletes() {
        let store: Store<ConfigMap> = Store::new();
        store
            .add_indexers([("app".to_string(), label_index::<ConfigMap>("app"))])
            .unwrap();
        store.upsert(cm("a", "x", "web"));
        store.upsert(cm("b", "y", "web"));
        assert_eq!(store.index_keys("app", "web"), ["a/x", "b/y"]);
        assert_eq!(store.by_index(NAMESPACE_INDEX, "a").len(), 1);
        store.upsert(cm("a", "x", "db"));
        assert_eq!(store.index_keys("app", "web"), ["b/y"]);
        assert_eq!(store.index_keys("app", "db"), ["a/x"]);
        store.remove("b/y");
        assert!(store.index_keys("app", "web").is_empty());
        assert_eq!(store.index_values("app"), ["db"]);
        assert!(
            store
                .add_indexers([("app".to_string(), label_index::<ConfigMap>("app"))])
                .is_err()
        );
        store.replace(vec![cm("c", "z", "web")]);
        assert_eq!(store.keys(), ["c/z"]);
        assert_eq!(store.index_keys("app", "web"), ["c/z"]);
        assert!(store.index_keys("app", "db").is_empty());
    }
}
