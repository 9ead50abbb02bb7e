//! The informer cache: objects by `namespace/name` key, shared read-only as `Arc<K>`, with
//! named indexes (client-go's `cache.Indexer`). One lock guards objects and indexes
//! together, so readers always see a consistent snapshot while the watch applies events.
//!
//! Layout: a hash table (foldhash) of `(key, Arc<K>)` for `get`, the only place a key is
//! kept (inline in the table when it has at most 30 bytes); a B-tree of the same `Arc`s in
//! key order for `list`, namespaces and the order of index results, which compares objects
//! by the namespace and name in their own metadata. The namespace index is that B-tree's key
//! ranges (`ns/...` keys are contiguous), so it costs nothing per object; other indexes map
//! each value to the objects that have it (a value with one object, such as an owner UID,
//! holds it inline). For 10,000 objects that is about 80 bytes per object (a table bucket
//! with the key, a B-tree slot), plus the indexes.
//!
//! [`Store::compact`] keeps the same structures over packed slots instead of the objects:
//! each object's JSON with its key beside it (`store/compact.rs`), decoded on every read.

use std::borrow::Borrow;
use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::hash::BuildHasher;
use std::ops::Bound;
use std::str::FromStr;
use std::sync::Arc;

use hashbrown::HashTable;
use kube::Resource;
use parking_lot::RwLock;
use serde::Serialize;
use serde::de::DeserializeOwned;

mod compact;

/// An index function: the index values of an object (client-go's `IndexFunc`).
pub type IndexFn<K> = Arc<dyn Fn(&K) -> Vec<String> + Send + Sync>;

/// The name of the index every store has: objects by namespace.
pub const NAMESPACE_INDEX: &str = "namespace";

/// The key of a cached object: its namespace (none for cluster-scoped objects) and name.
///
/// kube-runtime's `ObjectRef<K>` plays this part there; this key is not generic over the
/// kind because one work queue or log line often carries keys of one kind whose type is
/// clear from context, and a plain key is cheaper to hash and clone. Its string form
/// ([`Display`](fmt::Display), [`FromStr`]) is client-go's `MetaNamespaceKeyFunc` key,
/// `namespace/name` or `name`, for logs, events and anything that interoperates with Go
/// tooling. Keys order as those strings do, so stores list objects in client-go's order.
///
/// An empty namespace is the same key as no namespace (as in client-go, where both give
/// the key `name`).
///
/// ```
/// use kube_codegen_runtime::store::ObjectKey;
///
/// let key = ObjectKey::namespaced("default", "example");
/// assert_eq!(key.to_string(), "default/example");
/// assert_eq!("default/example".parse::<ObjectKey>().unwrap(), key);
/// assert_eq!(key.namespace(), Some("default"));
/// assert_eq!(ObjectKey::cluster("node-1").to_string(), "node-1");
/// assert!("a/b/c".parse::<ObjectKey>().is_err());
/// ```
// The key is client-go's string plus where the namespace ends: as cheap to clone, hash and
// compare as the `String` keys it replaces (one allocation; work queues clone keys on every
// `get`), and the parts are slices of it. The derived order is the strings' order (then the
// split, for keys of names with a `/`, which Kubernetes never has), as `Eq` needs.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ObjectKey {
    /// `namespace/name`, or `name` for cluster-scoped objects.
    text: String,
    /// The namespace's length in `text`; 0: cluster-scoped (no `/` either).
    ns_len: usize,
}

impl ObjectKey {
    /// The key of the object `name` in `namespace` (an empty `namespace` makes the key of
    /// a cluster-scoped object).
    #[must_use]
    pub fn namespaced(namespace: impl AsRef<str>, name: impl AsRef<str>) -> Self {
        let (ns, name) = (namespace.as_ref(), name.as_ref());
        if ns.is_empty() {
            return ObjectKey::cluster(name);
        }
        let mut text = String::with_capacity(ns.len() + 1 + name.len());
        text.push_str(ns);
        text.push('/');
        text.push_str(name);
        ObjectKey {
            text,
            ns_len: ns.len(),
        }
    }

    /// The key of the cluster-scoped object `name`.
    #[must_use]
    pub fn cluster(name: impl Into<String>) -> Self {
        ObjectKey {
            text: name.into(),
            ns_len: 0,
        }
    }

    /// The key of `obj`, from its metadata (missing namespace or name count as empty).
    #[must_use]
    pub fn of<K: Resource>(obj: &K) -> Self {
        let (ns, name) = parts_of(obj);
        ObjectKey::namespaced(ns, name)
    }

    /// The namespace; `None` for cluster-scoped objects.
    #[must_use]
    pub fn namespace(&self) -> Option<&str> {
        (self.ns_len > 0).then(|| &self.text[..self.ns_len])
    }

    /// The name.
    #[must_use]
    pub fn name(&self) -> &str {
        match self.ns_len {
            0 => &self.text,
            n => &self.text[n + 1..],
        }
    }

    /// The string form, `namespace/name` or `name` (client-go's key).
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// (namespace or `""`, name): how the store looks keys up.
    fn parts(&self) -> (&str, &str) {
        (self.namespace().unwrap_or_default(), self.name())
    }
}

impl From<ObjectKey> for String {
    /// The string form, without copying it.
    fn from(key: ObjectKey) -> String {
        key.text
    }
}

impl fmt::Display for ObjectKey {
    /// `namespace/name`, or `name` for cluster-scoped objects.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl fmt::Debug for ObjectKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The string form reads best in assertion failures and `{:?}` log fields.
        fmt::Debug::fmt(&self.text, f)
    }
}

/// A string that is not an object key: it has more than one `/`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unexpected key format: {0:?} (want `namespace/name` or `name`)")]
pub struct InvalidKey(pub String);

impl FromStr for ObjectKey {
    type Err = InvalidKey;

    /// client-go's `SplitMetaNamespaceKey`: `namespace/name` or `name` (`/name` is `name`).
    ///
    /// # Errors
    /// [`InvalidKey`] if `s` has more than one `/`.
    fn from_str(s: &str) -> Result<Self, InvalidKey> {
        match s.split_once('/') {
            Some((_, name)) if name.contains('/') => Err(InvalidKey(s.to_owned())),
            Some((ns, name)) => Ok(ObjectKey::namespaced(ns, name)),
            None => Ok(ObjectKey::cluster(s)),
        }
    }
}

impl PartialEq<str> for ObjectKey {
    /// Whether `other` is this key's string form.
    fn eq(&self, other: &str) -> bool {
        self.text == other
    }
}

impl PartialEq<&str> for ObjectKey {
    fn eq(&self, other: &&str) -> bool {
        self.text == *other
    }
}

impl PartialEq<String> for ObjectKey {
    fn eq(&self, other: &String) -> bool {
        self.text == *other
    }
}

/// `namespace/name`, or `name` for cluster-scoped objects: client-go's
/// `MetaNamespaceKeyFunc`, for the few places that want the string (as Go tools print it).
#[must_use]
pub fn meta_namespace_key<K: Resource>(obj: &K) -> String {
    ObjectKey::of(obj).into()
}

/// The key of `obj` (the same as [`ObjectKey::of`]).
#[must_use]
pub fn key_of<K: Resource>(obj: &K) -> ObjectKey {
    ObjectKey::of(obj)
}

/// An object's key as (namespace, name); the namespace is empty for cluster-scoped objects
/// (as in [`ObjectKey`], an empty namespace and no namespace are the same key).
fn parts_of<K: Resource>(obj: &K) -> (&str, &str) {
    let meta = obj.meta();
    (
        meta.namespace.as_deref().unwrap_or_default(),
        meta.name.as_deref().unwrap_or_default(),
    )
}

/// A key as the store's hash table keeps it: inline when it fits (most `namespace/name`
/// keys do), so that `get` compares it without following a pointer; the table's buckets
/// are then as large as a boxed key plus its allocation would be.
enum StoredKey {
    Inline { len: u8, bytes: [u8; INLINE_KEY] },
    Heap(Box<str>),
}

/// With the tag, an inline key is 32 bytes.
const INLINE_KEY: usize = 30;

impl StoredKey {
    fn new((ns, name): (&str, &str)) -> Self {
        let sep: &[u8] = if ns.is_empty() { b"" } else { b"/" };
        let len = ns.len() + sep.len() + name.len();
        if len <= INLINE_KEY {
            let mut bytes = [0; INLINE_KEY];
            let mut at = 0;
            for part in [ns.as_bytes(), sep, name.as_bytes()] {
                bytes[at..at + part.len()].copy_from_slice(part);
                at += part.len();
            }
            StoredKey::Inline {
                len: len as u8,
                bytes,
            }
        } else {
            let mut key = String::with_capacity(len);
            key.push_str(ns);
            key.push_str(if ns.is_empty() { "" } else { "/" });
            key.push_str(name);
            StoredKey::Heap(key.into_boxed_str())
        }
    }

    fn as_bytes(&self) -> &[u8] {
        match self {
            StoredKey::Inline { len, bytes } => &bytes[..usize::from(*len)],
            StoredKey::Heap(key) => key.as_bytes(),
        }
    }

    /// Whether this is the key of (namespace, name).
    fn is(&self, (ns, name): (&str, &str)) -> bool {
        let key = self.as_bytes();
        if ns.is_empty() {
            key == name.as_bytes()
        } else {
            key.len() == ns.len() + 1 + name.len()
                && key[ns.len()] == b'/'
                && key.starts_with(ns.as_bytes())
                && key.ends_with(name.as_bytes())
        }
    }
}

/// Orders keys given as (namespace, name) exactly as their `namespace/name` strings
/// ([`ObjectKey`]'s `Display`) would, without building them.
fn cmp_parts(a: (&str, &str), b: (&str, &str)) -> Ordering {
    if a.0 == b.0 {
        return a.1.cmp(b.1);
    }
    fn bytes<'a>((ns, name): (&'a str, &'a str)) -> impl Iterator<Item = u8> + 'a {
        let sep: &[u8] = if ns.is_empty() { b"" } else { b"/" };
        ns.bytes().chain(sep.iter().copied()).chain(name.bytes())
    }
    bytes(a).cmp(bytes(b))
}

/// What the key-ordered sets are searched by: a key as (namespace, name).
trait KeyParts {
    fn parts(&self) -> (&str, &str);
}

/// A key to search for.
struct Key<'a>(&'a str, &'a str);

impl KeyParts for Key<'_> {
    fn parts(&self) -> (&str, &str) {
        (self.0, self.1)
    }
}

impl PartialEq for dyn KeyParts + '_ {
    fn eq(&self, other: &Self) -> bool {
        self.parts() == other.parts()
    }
}

impl Eq for dyn KeyParts + '_ {}

impl PartialOrd for dyn KeyParts + '_ {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for dyn KeyParts + '_ {
    fn cmp(&self, other: &Self) -> Ordering {
        cmp_parts(self.parts(), other.parts())
    }
}

/// What a store keeps per object: the object itself (the typed store) or a packed copy
/// (`compact`). Stores order, hash and look up slots by the key they read from the slot,
/// so neither needs to decode anything to find an object.
pub(crate) trait Slot: Clone {
    /// The key as (namespace or `""`, name).
    fn parts(&self) -> (&str, &str);
    /// The namespace as the object has it: `None` unset, `Some("")` set but empty.
    fn namespace(&self) -> Option<&str>;
}

impl<K: Resource> Slot for Arc<K> {
    fn parts(&self) -> (&str, &str) {
        parts_of(self.as_ref())
    }

    fn namespace(&self) -> Option<&str> {
        self.meta().namespace.as_deref()
    }
}

/// What a store's slots are (with no bounds, so that [`Store`] needs none).
pub(crate) trait Holds<K> {
    type Slot;
}

/// How a store turns objects into slots and back.
pub(crate) trait Encoding<K>: Holds<K, Slot: Slot> {
    fn encode(&self, obj: &Arc<K>) -> Self::Slot;

    fn decode(&self, slot: &Self::Slot) -> Arc<K>;

    /// The object of `slot` if `keep` returns true for it.
    fn decode_if(&self, slot: &Self::Slot, keep: &mut impl FnMut(&K) -> bool) -> Option<Arc<K>> {
        let obj = self.decode(slot);
        keep(&obj).then_some(obj)
    }

    /// `f` of the object of `slot`.
    fn with_object<R>(&self, slot: &Self::Slot, f: impl FnOnce(&K) -> R) -> R {
        f(&self.decode(slot))
    }

    /// A handle on `slot` that decodes it when read, apart from the store.
    fn entry(&self, slot: &Self::Slot) -> Entry<K>;
}

/// The default store keeps the objects themselves: decoding is a reference count.
struct Typed;

impl<K> Holds<K> for Typed {
    type Slot = Arc<K>;
}

impl<K: Resource> Encoding<K> for Typed {
    fn encode(&self, obj: &Arc<K>) -> Arc<K> {
        obj.clone()
    }

    fn decode(&self, slot: &Arc<K>) -> Arc<K> {
        slot.clone()
    }

    // Filters read the cached object in place and copy only what they keep.
    fn decode_if(&self, slot: &Arc<K>, keep: &mut impl FnMut(&K) -> bool) -> Option<Arc<K>> {
        keep(slot).then(|| slot.clone())
    }

    fn with_object<R>(&self, slot: &Arc<K>, f: impl FnOnce(&K) -> R) -> R {
        f(slot)
    }

    fn entry(&self, slot: &Arc<K>) -> Entry<K> {
        Entry::Typed(slot.clone())
    }
}

/// One cached object as its store keeps it: the typed store's `Arc` itself, or a compact
/// store's packed form, decoded by each [`get`](Entry::get). An informer's notifications of
/// a list carry these rather than objects, so that a compact informer never holds its whole
/// list decoded: each handler decodes one object at a time as it is delivered. Unlike a key,
/// an entry still reads the object as listed after the store has dropped it.
pub(crate) enum Entry<K> {
    Typed(Arc<K>),
    Packed(Arc<compact::Packed<K>>, compact::Compact<K>),
}

impl<K> Clone for Entry<K> {
    fn clone(&self) -> Self {
        match self {
            Entry::Typed(obj) => Entry::Typed(obj.clone()),
            Entry::Packed(slot, encoding) => Entry::Packed(slot.clone(), *encoding),
        }
    }
}

impl<K: Resource> Entry<K> {
    /// The object (a new decoded copy for a packed entry).
    pub(crate) fn get(&self) -> Arc<K> {
        match self {
            Entry::Typed(obj) => obj.clone(),
            Entry::Packed(slot, encoding) => encoding.decode(slot),
        }
    }

    /// The object's key, read without decoding it.
    pub(crate) fn key(&self) -> ObjectKey {
        match self {
            Entry::Typed(obj) => key_of(obj.as_ref()),
            Entry::Packed(slot, _) => slot_key(slot),
        }
    }
}

/// Objects encoded for one store as they arrive, to replace its contents at once
/// ([`Store::replace_batch`]): an informer's initial list, which a compact store would
/// otherwise hold decoded in full until the list ends.
pub(crate) enum Batch<K> {
    Typed(Vec<Arc<K>>),
    Packed(Vec<Arc<compact::Packed<K>>>, compact::Compact<K>),
}

impl<K: Resource> Batch<K> {
    /// Encode `obj` into the batch; a packed batch keeps only the encoding.
    pub(crate) fn push(&mut self, obj: Arc<K>) {
        match self {
            Batch::Typed(objects) => objects.push(obj),
            Batch::Packed(slots, encoding) => slots.push(encoding.encode(&obj)),
        }
    }

    /// How many objects were pushed.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        match self {
            Batch::Typed(objects) => objects.len(),
            Batch::Packed(slots, _) => slots.len(),
        }
    }

    /// The batch's objects as entries, in the order pushed.
    pub(crate) fn into_entries(self) -> Vec<Entry<K>> {
        match self {
            Batch::Typed(objects) => objects.into_iter().map(Entry::Typed).collect(),
            Batch::Packed(slots, encoding) => slots
                .into_iter()
                .map(|slot| Entry::Packed(slot, encoding))
                .collect(),
        }
    }
}

/// A cached object's slot, ordered by its key.
struct ByKey<S>(S);

impl<S: Clone> Clone for ByKey<S> {
    fn clone(&self) -> Self {
        ByKey(self.0.clone())
    }
}

impl<S: Slot> KeyParts for ByKey<S> {
    fn parts(&self) -> (&str, &str) {
        self.0.parts()
    }
}

impl<'a, S: Slot + 'a> Borrow<dyn KeyParts + 'a> for ByKey<S> {
    fn borrow(&self) -> &(dyn KeyParts + 'a) {
        self
    }
}

impl<S: Slot> PartialEq for ByKey<S> {
    fn eq(&self, other: &Self) -> bool {
        self.parts() == other.parts()
    }
}

impl<S: Slot> Eq for ByKey<S> {}

impl<S: Slot> PartialOrd for ByKey<S> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<S: Slot> Ord for ByKey<S> {
    fn cmp(&self, other: &Self) -> Ordering {
        cmp_parts(self.parts(), other.parts())
    }
}

/// The objects that have one index value, in key order.
enum IndexSet<S> {
    /// Most values of an index by owner or by UID have one object: no node for it.
    One(ByKey<S>),
    Many(BTreeSet<ByKey<S>>),
}

impl<S: Slot> IndexSet<S> {
    fn insert(&mut self, obj: ByKey<S>) {
        match self {
            IndexSet::One(one) if *one == obj => *one = obj,
            IndexSet::One(one) => {
                let one = one.clone();
                *self = IndexSet::Many(BTreeSet::from([one, obj]));
            }
            IndexSet::Many(set) => {
                set.replace(obj);
            }
        }
    }

    /// Removes the object with key `key`; returns whether the set is now empty.
    fn remove(&mut self, key: &dyn KeyParts) -> bool {
        match self {
            IndexSet::One(one) => {
                let one: &dyn KeyParts = one;
                one == key
            }
            IndexSet::Many(set) => {
                set.remove(key);
                match set.len() {
                    0 => true,
                    1 => {
                        let last = set.pop_first().expect("one element");
                        *self = IndexSet::One(last);
                        false
                    }
                    _ => false,
                }
            }
        }
    }

    fn iter(&self) -> impl Iterator<Item = &S> {
        let (one, many) = match self {
            IndexSet::One(one) => (Some(one), None),
            IndexSet::Many(set) => (None, Some(set)),
        };
        one.into_iter()
            .chain(many.into_iter().flatten())
            .map(|o| &o.0)
    }
}

type Hasher = foldhash::fast::RandomState;

/// One index: value -> the objects with that value.
type Index<S> = HashMap<String, IndexSet<S>, Hasher>;

struct Inner<K, E: Holds<K>> {
    encoding: E,
    /// Every object with its key, found by the hash of its (namespace, name). The key is
    /// here so that `get` compares it without reading the object (two cache misses less
    /// than comparing the object's namespace and name strings).
    objects: HashTable<(StoredKey, E::Slot)>,
    hasher: Hasher,
    /// Every object again, in key order.
    ordered: BTreeSet<ByKey<E::Slot>>,
    /// Index functions other than the namespace index.
    indexers: HashMap<String, IndexFn<K>, Hasher>,
    /// index name -> index value -> objects; an entry for every indexer.
    indices: HashMap<String, Index<E::Slot>, Hasher>,
}

impl<K: Resource, E: Encoding<K>> Inner<K, E> {
    fn new(encoding: E) -> Self {
        Inner {
            encoding,
            objects: HashTable::new(),
            hasher: Hasher::default(),
            ordered: BTreeSet::new(),
            indexers: HashMap::default(),
            indices: HashMap::default(),
        }
    }

    fn hash(&self, (ns, name): (&str, &str)) -> u64 {
        self.hasher.hash_one((ns, name))
    }

    fn get(&self, key: (&str, &str)) -> Option<&E::Slot> {
        self.objects
            .find(self.hash(key), |o| o.0.is(key))
            .map(|o| &o.1)
    }

    fn unindex(&mut self, obj: &K) {
        let key = parts_of(obj);
        for (name, f) in &self.indexers {
            let Some(index) = self.indices.get_mut(name) else {
                continue;
            };
            for value in f(obj) {
                if let Some(set) = index.get_mut(&value)
                    && set.remove(&Key(key.0, key.1))
                {
                    index.remove(&value);
                }
            }
        }
    }

    fn index(&mut self, obj: &K, slot: &E::Slot) {
        for (name, f) in &self.indexers {
            // Every indexer has its index (`add_indexers` and `replace` build them).
            let Some(index) = self.indices.get_mut(name) else {
                continue;
            };
            for value in f(obj) {
                match index.get_mut(&value) {
                    Some(set) => set.insert(ByKey(slot.clone())),
                    None => {
                        index.insert(value, IndexSet::One(ByKey(slot.clone())));
                    }
                }
            }
        }
    }

    /// The objects in namespace `ns`, in key order.
    fn in_namespace<'a>(&'a self, ns: &'a str) -> Box<dyn Iterator<Item = &'a E::Slot> + 'a> {
        let in_ns = move |o: &&ByKey<E::Slot>| o.0.namespace() == Some(ns);
        if ns.is_empty() {
            // Objects whose namespace is set but empty: keyed like cluster-scoped ones.
            return Box::new(self.ordered.iter().filter(in_ns).map(|o| &o.0));
        }
        // Keys `ns/...` are contiguous, from `ns/` on.
        let from = Key(ns, "");
        let from: &dyn KeyParts = &from;
        Box::new(
            self.ordered
                .range::<dyn KeyParts, _>((Bound::Included(from), Bound::Unbounded))
                .take_while(in_ns)
                .map(|o| &o.0),
        )
    }

    /// The objects whose index `index` has value `value`, in key order.
    fn by_index<'a>(
        &'a self,
        index: &str,
        value: &'a str,
    ) -> Box<dyn Iterator<Item = &'a E::Slot> + 'a> {
        if index == NAMESPACE_INDEX {
            return self.in_namespace(value);
        }
        match self.indices.get(index).and_then(|i| i.get(value)) {
            Some(set) => Box::new(set.iter()),
            None => Box::new(std::iter::empty()),
        }
    }

    fn add_indexers(&mut self, new: Vec<(String, IndexFn<K>)>) -> Result<(), IndexExists> {
        if let Some((name, _)) = new
            .iter()
            .find(|(n, _)| n == NAMESPACE_INDEX || self.indexers.contains_key(n))
        {
            return Err(IndexExists(name.clone()));
        }
        for (name, f) in new {
            let encoding = &self.encoding;
            let index = build_index(
                self.ordered
                    .iter()
                    .map(|o| (&o.0, encoding.with_object(&o.0, |obj| f(obj)))),
            );
            self.indices.insert(name.clone(), index);
            self.indexers.insert(name, f);
        }
        Ok(())
    }

    fn upsert(&mut self, obj: Arc<K>) -> Option<Arc<K>> {
        let slot = self.encoding.encode(&obj);
        let key = parts_of(obj.as_ref());
        let hash = self.hash(key);
        let old = match self.objects.find_mut(hash, |o| o.0.is(key)) {
            Some(entry) => Some(std::mem::replace(&mut entry.1, slot.clone())),
            None => {
                let hasher = &self.hasher;
                self.objects
                    .insert_unique(hash, (StoredKey::new(key), slot.clone()), |o| {
                        hasher.hash_one(o.1.parts())
                    });
                None
            }
        };
        let old = old.map(|o| self.encoding.decode(&o));
        if let Some(o) = &old {
            self.unindex(o);
        }
        self.ordered.replace(ByKey(slot.clone()));
        self.index(&obj, &slot);
        old
    }

    fn remove(&mut self, key: (&str, &str)) -> Option<Arc<K>> {
        let hash = self.hash(key);
        let ((_, old), _) = self
            .objects
            .find_entry(hash, |o| o.0.is(key))
            .ok()?
            .remove();
        self.ordered.remove(&Key(key.0, key.1) as &dyn KeyParts);
        let old = self.encoding.decode(&old);
        self.unindex(&old);
        Some(old)
    }

    /// Replace everything with `fresh`: each object's slot, with the object itself when the
    /// caller has it (indexes then read it as given; a slot alone is decoded for them, only
    /// if the store has indexers). Returns the previous contents by key and the new slots in
    /// key order.
    fn replace(
        &mut self,
        mut fresh: Vec<(E::Slot, Option<Arc<K>>)>,
    ) -> (BTreeMap<ObjectKey, Arc<K>>, Vec<E::Slot>) {
        // In key order, the later of two objects with one key (as with upserts; the sort is
        // stable): the B-trees are built from sorted input (full nodes), and a packed store
        // encodes each object once.
        fresh.sort_by(|a, b| cmp_parts(a.0.parts(), b.0.parts()));
        let mut unique: Vec<(E::Slot, Option<Arc<K>>)> = Vec::with_capacity(fresh.len());
        for one in fresh {
            match unique.last_mut() {
                Some(last) if last.0.parts() == one.0.parts() => *last = one,
                _ => unique.push(one),
            }
        }
        let hasher = &self.hasher;
        let mut table: HashTable<(StoredKey, E::Slot)> = HashTable::with_capacity(unique.len());
        for (slot, _) in &unique {
            let key = slot.parts();
            table.insert_unique(
                hasher.hash_one(key),
                (StoredKey::new(key), slot.clone()),
                |o| hasher.hash_one(o.1.parts()),
            );
        }
        self.objects = table;
        let encoding = &self.encoding;
        self.indices = self
            .indexers
            .iter()
            .map(|(name, f)| {
                let values = unique.iter().map(|(s, o)| match o {
                    Some(o) => (s, f(o.as_ref())),
                    None => (s, encoding.with_object(s, |o| f(o))),
                });
                (name.clone(), build_index(values))
            })
            .collect();
        let slots: Vec<E::Slot> = unique.into_iter().map(|(s, _)| s).collect();
        let ordered: BTreeSet<ByKey<E::Slot>> = slots.iter().cloned().map(ByKey).collect();
        let old = std::mem::replace(&mut self.ordered, ordered);
        let old = old
            .into_iter()
            .map(|o| {
                let obj = self.encoding.decode(&o.0);
                (key_of(obj.as_ref()), obj)
            })
            .collect();
        (old, slots)
    }

    /// The objects of `slots` that `keep` returns true for, decoded.
    fn decode_kept<'a>(
        &self,
        slots: impl Iterator<Item = &'a E::Slot>,
        keep: &mut impl FnMut(&K) -> bool,
    ) -> Vec<Arc<K>>
    where
        E::Slot: 'a,
    {
        slots
            .filter_map(|s| self.encoding.decode_if(s, keep))
            .collect()
    }

    fn index_values(&self, index: &str) -> Vec<String> {
        let mut values: Vec<String> = if index == NAMESPACE_INDEX {
            // Namespaces are contiguous in key order; objects with an empty namespace (not
            // cluster-scoped ones, which have none) are indexed under "".
            let mut values: Vec<String> = vec![];
            let mut empty = false;
            for o in &self.ordered {
                match o.0.namespace() {
                    Some("") => empty = true,
                    Some(ns) if values.last().is_none_or(|last| last != ns) => {
                        values.push(ns.to_owned())
                    }
                    _ => {}
                }
            }
            if empty {
                values.push(String::new());
            }
            values
        } else {
            self.indices
                .get(index)
                .map(|i| i.keys().cloned().collect())
                .unwrap_or_default()
        };
        values.sort();
        values.dedup();
        values
    }
}

/// The key of a slot.
fn slot_key<S: Slot>(slot: &S) -> ObjectKey {
    let (ns, name) = slot.parts();
    ObjectKey::namespaced(ns, name)
}

/// A thread-safe, indexed object cache. Cloning shares it.
///
/// [`Store::new`] keeps the objects themselves; [`Store::compact`] keeps each one packed
/// and decodes it on every read (see there). Both answer every call alike.
///
/// ```
/// use std::sync::Arc;
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use kube_codegen_runtime::store::{ObjectKey, Store, label_index};
///
/// let store: Store<ConfigMap> = Store::new();
/// store.add_indexers([("app".to_string(), label_index::<ConfigMap>("app"))]).unwrap();
/// let mut cm = ConfigMap::default();
/// cm.metadata.namespace = Some("default".into());
/// cm.metadata.name = Some("web-settings".into());
/// cm.metadata.labels = Some([("app".to_string(), "web".to_string())].into());
/// store.upsert(Arc::new(cm));
///
/// assert_eq!(store.index_keys("app", "web"), ["default/web-settings"]);
/// let key = ObjectKey::namespaced("default", "web-settings");
/// assert!(store.get(&key).is_some());
/// assert!(store.remove(&key).is_some());
/// assert!(store.is_empty());
/// ```
pub struct Store<K> {
    inner: Backing<K>,
}

/// The two encodings, each with its own monomorphized code: the typed store's reads are
/// the same code as before packed stores existed, behind one branch.
enum Backing<K> {
    Typed(Arc<RwLock<Inner<K, Typed>>>),
    Compact(Arc<RwLock<Inner<K, compact::Compact<K>>>>),
}

impl<K> Clone for Store<K> {
    fn clone(&self) -> Self {
        Store {
            inner: match &self.inner {
                Backing::Typed(i) => Backing::Typed(i.clone()),
                Backing::Compact(i) => Backing::Compact(i.clone()),
            },
        }
    }
}

/// Runs `$body` with `$inner` bound to the store's lock, whichever its encoding.
macro_rules! with_inner {
    ($store:expr, $inner:ident => $body:expr) => {
        match &$store.inner {
            Backing::Typed($inner) => $body,
            Backing::Compact($inner) => $body,
        }
    };
}

impl<K: Resource + 'static> Default for Store<K> {
    fn default() -> Self {
        Self::new()
    }
}

/// [`Store::add_indexers`] was given an index name the store already has.
#[derive(Debug, thiserror::Error)]
#[error("index `{0}` already exists")]
pub struct IndexExists(pub String);

impl<K: Resource + Serialize + DeserializeOwned + 'static> Store<K> {
    /// An empty store with the namespace index that keeps each object packed: its JSON,
    /// with the key beside it. Every
    /// read that returns objects (`get`, `list`, `by_index`, the lister's calls) decodes
    /// the ones it returns, into new `Arc`s; a filter (a lister's label selector) decodes
    /// every object it looks at; `upsert` and `remove` decode the object they return, and
    /// `replace` the previous contents. In exchange a cached object takes a fraction of
    /// its typed size (BENCHMARKS.md, "Informer cache"). Keys, the namespace index and
    /// `index_keys` need no decoding.
    ///
    /// The objects must read back from their own JSON, as every Kubernetes type does; an
    /// object that does not serialize is kept whole (with a warning).
    ///
    /// # Panics
    /// A read panics if `K` does not deserialize from the JSON it serialized to (a bug in
    /// `K`'s serde implementations, never the API server's data).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use k8s_openapi::api::core::v1::ConfigMap;
    /// use kube_codegen_runtime::store::{ObjectKey, Store};
    ///
    /// let store: Store<ConfigMap> = Store::compact();
    /// let mut cm = ConfigMap::default();
    /// cm.metadata.namespace = Some("default".into());
    /// cm.metadata.name = Some("settings".into());
    /// cm.data = Some([("mode".to_string(), "production".to_string())].into());
    /// store.upsert(Arc::new(cm.clone()));
    ///
    /// let got = store.get(&ObjectKey::namespaced("default", "settings")).unwrap();
    /// assert_eq!(*got, cm); // a decoded copy, equal to what was stored
    /// assert!(store.is_compact());
    /// ```
    #[must_use]
    pub fn compact() -> Self {
        Store {
            inner: Backing::Compact(Arc::new(RwLock::new(Inner::new(compact::Compact::new())))),
        }
    }
}

impl<K: Resource + 'static> Store<K> {
    /// An empty store with the namespace index that keeps the objects themselves: reads
    /// return the cached `Arc`s.
    #[must_use]
    pub fn new() -> Self {
        Store {
            inner: Backing::Typed(Arc::new(RwLock::new(Inner::new(Typed)))),
        }
    }

    /// Whether this store keeps its objects packed ([`Store::compact`]).
    #[must_use]
    pub fn is_compact(&self) -> bool {
        matches!(self.inner, Backing::Compact(_))
    }

    /// Add named index functions; existing objects are indexed at once (a packed store
    /// decodes each one for that).
    ///
    /// # Errors
    /// [`IndexExists`] if a name is taken (by an index added before, or [`NAMESPACE_INDEX`]);
    /// then nothing is added.
    pub fn add_indexers(
        &self,
        indexers: impl IntoIterator<Item = (String, IndexFn<K>)>,
    ) -> Result<(), IndexExists> {
        let new: Vec<(String, IndexFn<K>)> = indexers.into_iter().collect();
        with_inner!(self, inner => inner.write().add_indexers(new))
    }

    /// Insert or replace; returns the previous object.
    pub fn upsert(&self, obj: Arc<K>) -> Option<Arc<K>> {
        with_inner!(self, inner => inner.write().upsert(obj))
    }

    /// Remove by key; returns the removed object.
    pub fn remove(&self, key: &ObjectKey) -> Option<Arc<K>> {
        with_inner!(self, inner => inner.write().remove(key.parts()))
    }

    /// Replace everything (after a relist); returns the previous contents by key.
    pub fn replace(&self, objects: Vec<Arc<K>>) -> BTreeMap<ObjectKey, Arc<K>> {
        with_inner!(self, inner => {
            let mut inner = inner.write();
            let fresh = objects
                .into_iter()
                .map(|o| (inner.encoding.encode(&o), Some(o)))
                .collect();
            inner.replace(fresh).0
        })
    }

    /// An empty batch of this store's encoding, for [`replace_batch`](Self::replace_batch).
    pub(crate) fn batch(&self) -> Batch<K> {
        match &self.inner {
            Backing::Typed(_) => Batch::Typed(vec![]),
            Backing::Compact(inner) => Batch::Packed(vec![], inner.read().encoding),
        }
    }

    /// [`replace`](Self::replace) with objects already encoded; also returns the new
    /// contents as entries, in key order (one per key: the later of two pushed with one key).
    pub(crate) fn replace_batch(
        &self,
        batch: Batch<K>,
    ) -> (BTreeMap<ObjectKey, Arc<K>>, Vec<Entry<K>>) {
        match (&self.inner, batch) {
            // A typed slot is the object: indexes read it in place.
            (Backing::Typed(inner), Batch::Typed(objects)) => {
                let mut inner = inner.write();
                let (old, slots) = inner.replace(objects.into_iter().map(|o| (o, None)).collect());
                (old, slots.iter().map(|s| inner.encoding.entry(s)).collect())
            }
            (Backing::Compact(inner), Batch::Packed(slots, _)) => {
                let mut inner = inner.write();
                let (old, slots) = inner.replace(slots.into_iter().map(|s| (s, None)).collect());
                (old, slots.iter().map(|s| inner.encoding.entry(s)).collect())
            }
            // A batch of another store's encoding (never made by the informer): by object.
            (_, batch) => {
                let objects = batch.into_entries().iter().map(Entry::get).collect();
                let old = self.replace(objects);
                (old, self.entries())
            }
        }
    }

    /// Every object as an entry, ordered by key: a snapshot that decodes nothing.
    pub(crate) fn entries(&self) -> Vec<Entry<K>> {
        with_inner!(self, inner => {
            let inner = inner.read();
            inner.ordered.iter().map(|o| inner.encoding.entry(&o.0)).collect()
        })
    }

    /// The object with key `key`.
    #[must_use]
    pub fn get(&self, key: &ObjectKey) -> Option<Arc<K>> {
        self.get_in(key.parts().0, key.parts().1)
    }

    /// The object `name` in `namespace` (`""`: a cluster-scoped object); the same as
    /// [`get`](Self::get) of its key, without building the key.
    pub fn get_in(&self, namespace: &str, name: &str) -> Option<Arc<K>> {
        with_inner!(self, inner => {
            let inner = inner.read();
            inner.get((namespace, name)).map(|s| inner.encoding.decode(s))
        })
    }

    /// Every object, ordered by key.
    #[must_use]
    pub fn list(&self) -> Vec<Arc<K>> {
        with_inner!(self, inner => {
            let inner = inner.read();
            inner.ordered.iter().map(|o| inner.encoding.decode(&o.0)).collect()
        })
    }

    /// The objects `keep` returns true for, ordered by key; `keep` runs under the store's
    /// read lock, and only the kept objects are cloned.
    pub fn list_filtered(&self, mut keep: impl FnMut(&K) -> bool) -> Vec<Arc<K>> {
        with_inner!(self, inner => {
            let inner = inner.read();
            inner.decode_kept(inner.ordered.iter().map(|o| &o.0), &mut keep)
        })
    }

    /// Every key, in order.
    #[must_use]
    pub fn keys(&self) -> Vec<ObjectKey> {
        with_inner!(self, inner => inner.read().ordered.iter().map(|o| slot_key(&o.0)).collect())
    }

    /// How many objects are cached.
    #[must_use]
    pub fn len(&self) -> usize {
        with_inner!(self, inner => inner.read().objects.len())
    }

    /// Whether no object is cached.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Objects whose index `index` has value `value` (client-go's `ByIndex`), ordered by
    /// key.
    pub fn by_index(&self, index: &str, value: &str) -> Vec<Arc<K>> {
        self.by_index_filtered(index, value, |_| true)
    }

    /// [`by_index`](Self::by_index) of the objects `keep` returns true for; `keep` runs
    /// under the store's read lock, and only the kept objects are cloned.
    pub fn by_index_filtered(
        &self,
        index: &str,
        value: &str,
        mut keep: impl FnMut(&K) -> bool,
    ) -> Vec<Arc<K>> {
        with_inner!(self, inner => {
            let inner = inner.read();
            inner.decode_kept(inner.by_index(index, value), &mut keep)
        })
    }

    /// Keys whose index `index` has value `value` (client-go's `IndexKeys`), in order.
    #[must_use]
    pub fn index_keys(&self, index: &str, value: &str) -> Vec<ObjectKey> {
        with_inner!(self, inner => inner.read().by_index(index, value).map(slot_key).collect())
    }

    /// The values an index currently holds (client-go's `ListIndexFuncValues`), sorted.
    pub fn index_values(&self, index: &str) -> Vec<String> {
        with_inner!(self, inner => inner.read().index_values(index))
    }

    /// Whether the store has an index of this name ([`NAMESPACE_INDEX`] always).
    #[must_use]
    pub fn has_index(&self, index: &str) -> bool {
        index == NAMESPACE_INDEX
            || with_inner!(self, inner => inner.read().indexers.contains_key(index))
    }
}

/// One index from each object's slot and index values, given in key order (so every set
/// is built from sorted input).
fn build_index<'a, S: Slot + 'a>(objects: impl Iterator<Item = (&'a S, Vec<String>)>) -> Index<S> {
    let mut grouped: HashMap<String, Vec<ByKey<S>>, Hasher> = HashMap::default();
    for (slot, values) in objects {
        for value in values {
            let objects = grouped.entry(value).or_default();
            // An index function that returns a value twice indexes the object once.
            if objects
                .last()
                .is_none_or(|last| last.parts() != slot.parts())
            {
                objects.push(ByKey(slot.clone()));
            }
        }
    }
    grouped
        .into_iter()
        .map(|(value, mut objects)| {
            let set = if objects.len() == 1 {
                IndexSet::One(objects.pop().expect("one object"))
            } else {
                IndexSet::Many(objects.into_iter().collect())
            };
            (value, set)
        })
        .collect()
}

/// Index objects by the UIDs of their owners (for "which Foo owns this Deployment").
#[must_use]
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
#[must_use]
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

    fn k(key: &str) -> ObjectKey {
        key.parse().unwrap()
    }

    fn cm(ns: &str, name: &str, app: &str) -> Arc<ConfigMap> {
        let mut c = ConfigMap::default();
        c.metadata.namespace = Some(ns.into());
        c.metadata.name = Some(name.into());
        c.metadata.labels = Some([("app".to_string(), app.to_string())].into());
        Arc::new(c)
    }

    /// Both encodings: every test of the store's semantics runs against each.
    const STORES: [fn() -> Store<ConfigMap>; 2] = [Store::new, Store::compact];

    #[test]
    fn indexes_follow_updates_and_deletes() {
        for new in STORES {
            indexes_follow_updates_and_deletes_in(new());
        }
    }

    fn indexes_follow_updates_and_deletes_in(store: Store<ConfigMap>) {
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
        store.remove(&k("b/y"));
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

    #[test]
    fn keys_sort_as_strings_across_namespaces_and_scopes() {
        for new in STORES {
            keys_sort_as_strings_in(new());
        }
    }

    fn keys_sort_as_strings_in(store: Store<ConfigMap>) {
        for (ns, name) in [
            ("a", "x"),
            ("a-b", "x"),
            ("a.b", "y"),
            ("ab", "z"),
            ("a", "w"),
        ] {
            store.upsert(cm(ns, name, "web"));
        }
        let mut cluster = ConfigMap::default();
        cluster.metadata.name = Some("a".into());
        store.upsert(Arc::new(cluster));
        // '-' and '.' sort before '/', so "a-b/x" < "a.b/y" < "a/w".
        let expected = ["a", "a-b/x", "a.b/y", "a/w", "a/x", "ab/z"];
        assert_eq!(store.keys(), expected);
        let mut sorted = expected.map(str::to_owned).to_vec();
        sorted.sort();
        assert_eq!(store.keys(), sorted);
        assert_eq!(store.index_keys(NAMESPACE_INDEX, "a"), ["a/w", "a/x"]);
        assert_eq!(
            store.index_values(NAMESPACE_INDEX),
            ["a", "a-b", "a.b", "ab"]
        );
        assert_eq!(
            store.get_in("a", "x").unwrap().metadata.name.as_deref(),
            Some("x")
        );
        assert!(store.get_in("", "a").is_some());
        assert!(store.get(&k("a/a")).is_none());
        assert!(store.get_in("a", "z").is_none());
        assert!(store.has_index(NAMESPACE_INDEX));
        let ns_again = [(NAMESPACE_INDEX.to_owned(), label_index::<ConfigMap>("app"))];
        assert!(store.add_indexers(ns_again).is_err());
    }

    #[test]
    fn object_keys_parse_print_and_order_as_strings() {
        for text in ["ns/name", "name", "a-b/x", "a.b/y", "a/w", "ab/z"] {
            let key = k(text);
            assert_eq!(key.to_string(), text);
            assert_eq!(key, text);
        }
        assert_eq!(k("/name"), ObjectKey::cluster("name"));
        assert_eq!(ObjectKey::namespaced("", "n"), ObjectKey::cluster("n"));
        assert_eq!(k("ns/name").namespace(), Some("ns"));
        assert_eq!(k("ns/name").name(), "name");
        assert_eq!(k("name").namespace(), None);
        assert_eq!(
            "a/b/c".parse::<ObjectKey>(),
            Err(InvalidKey("a/b/c".into()))
        );
        assert_ne!(k("ns/name"), "ns/nam");
        // Same string, different split (not a valid Kubernetes name): different keys.
        assert_ne!(
            ObjectKey::namespaced("a", "b/c"),
            ObjectKey::namespaced("a/b", "c")
        );
        assert_eq!(ObjectKey::namespaced("a", "b/c").name(), "b/c");
        assert_eq!(String::from(k("ns/name")), "ns/name");
        assert_ne!(k("ns/name"), "nsname");
        let texts = ["a", "a-b/x", "a.b/y", "a/w", "a/x", "ab/z", "b"];
        let mut keys: Vec<ObjectKey> = texts.iter().rev().map(|t| k(t)).collect();
        keys.sort();
        assert_eq!(keys, texts);
        let cm = cm("ns", "name", "web");
        assert_eq!(key_of(cm.as_ref()), k("ns/name"));
        assert_eq!(meta_namespace_key(cm.as_ref()), "ns/name");
    }

    #[test]
    fn keys_are_inline_up_to_30_bytes() {
        assert_eq!(size_of::<StoredKey>(), 32);
        let short = StoredKey::new(("bench-cache", "bench-cm-000123"));
        assert!(matches!(short, StoredKey::Inline { .. }));
        assert_eq!(short.as_bytes(), b"bench-cache/bench-cm-000123");
        assert!(short.is(("bench-cache", "bench-cm-000123")));
        assert!(!short.is(("bench-cach", "e/bench-cm-000123")));
        let long = StoredKey::new(("kube-system", "a-name-longer-than-the-rest"));
        assert!(matches!(long, StoredKey::Heap(_)));
        assert!(long.is(("kube-system", "a-name-longer-than-the-rest")));
        let cluster = StoredKey::new(("", "node-1"));
        assert!(cluster.is(("", "node-1")));
        assert!(!cluster.is(("node-1", "")));
    }

    #[test]
    fn an_index_value_with_one_object_grows_and_shrinks() {
        for new in STORES {
            an_index_value_with_one_object_grows_and_shrinks_in(new());
        }
    }

    fn an_index_value_with_one_object_grows_and_shrinks_in(store: Store<ConfigMap>) {
        store
            .add_indexers([("app".to_string(), label_index::<ConfigMap>("app"))])
            .unwrap();
        store.upsert(cm("a", "x", "web"));
        store.upsert(cm("a", "x", "web")); // same object again: still one
        assert_eq!(store.index_keys("app", "web"), ["a/x"]);
        store.upsert(cm("b", "y", "web"));
        store.upsert(cm("a", "w", "web"));
        assert_eq!(store.index_keys("app", "web"), ["a/w", "a/x", "b/y"]);
        store.remove(&k("a/x"));
        store.remove(&k("a/w"));
        assert_eq!(store.index_keys("app", "web"), ["b/y"]);
        assert!(with_inner!(store, inner => matches!(
            inner.read().indices["app"]["web"],
            IndexSet::One(_)
        )));
        store.remove(&k("b/y"));
        assert!(store.index_values("app").is_empty());
        assert!(store.is_empty());
    }

    // ===== property test against a plain model: a map from key string to object =====

    use proptest::prelude::*;

    /// `None`: no namespace; `Some("")`: an empty one (the same key as none).
    /// Around '/' (0x2f) in byte order: '-' and '.' before it, '0' right after it.
    const NAMESPACES: [Option<&str>; 8] = [
        None,
        Some(""),
        Some("a"),
        Some("a-b"),
        Some("a.b"),
        Some("a0"),
        Some("ab"),
        Some("b"),
    ];
    /// The last one is too long for an inline key.
    const NAMES: [&str; 6] = [
        "x",
        "y",
        "x-1",
        "x.1",
        "z",
        "x-name-too-long-for-an-inline-key",
    ];
    const APPS: [Option<&str>; 3] = [Some("web"), Some("db"), None];

    #[derive(Debug, Clone)]
    enum Op {
        Upsert(usize, usize, usize),
        Remove(usize, usize),
        Replace(Vec<(usize, usize, usize)>),
        /// As an informer replaces: encoded as pushed, entries back.
        ReplaceBatch(Vec<(usize, usize, usize)>),
        AddAppIndex,
    }

    fn object((ns, name, app): (usize, usize, usize)) -> Arc<ConfigMap> {
        let mut c = ConfigMap::default();
        c.metadata.namespace = NAMESPACES[ns].map(str::to_owned);
        c.metadata.name = Some(NAMES[name].to_owned());
        c.metadata.labels = APPS[app].map(|a| [("app".to_owned(), a.to_owned())].into());
        Arc::new(c)
    }

    fn key(ns: usize, name: usize) -> String {
        match NAMESPACES[ns] {
            Some(ns) if !ns.is_empty() => format!("{ns}/{}", NAMES[name]),
            _ => NAMES[name].to_owned(),
        }
    }

    fn op() -> impl Strategy<Value = Op> {
        let obj = || (0..NAMESPACES.len(), 0..NAMES.len(), 0..APPS.len());
        prop_oneof![
            6 => obj().prop_map(|(a, b, c)| Op::Upsert(a, b, c)),
            3 => (0..NAMESPACES.len(), 0..NAMES.len()).prop_map(|(a, b)| Op::Remove(a, b)),
            1 => proptest::collection::vec(obj(), 0..12).prop_map(Op::Replace),
            1 => proptest::collection::vec(obj(), 0..12).prop_map(Op::ReplaceBatch),
            1 => Just(Op::AddAppIndex),
        ]
    }

    fn check(
        store: &Store<ConfigMap>,
        model: &BTreeMap<String, Arc<ConfigMap>>,
        app_index: bool,
    ) -> Result<(), TestCaseError> {
        let keys: Vec<String> = model.keys().cloned().collect();
        let store_keys: Vec<String> = store.keys().iter().map(ObjectKey::to_string).collect();
        prop_assert_eq!(store_keys, keys);
        prop_assert_eq!(store.len(), model.len());
        // The typed store returns the cached objects themselves; the compact one, equal
        // copies.
        let same = |a: &Arc<ConfigMap>, b: &Arc<ConfigMap>| {
            if store.is_compact() {
                a == b
            } else {
                Arc::ptr_eq(a, b)
            }
        };
        let listed = store.list();
        prop_assert_eq!(listed.len(), model.len());
        prop_assert!(listed.iter().zip(model.values()).all(|(a, b)| same(a, b)));
        with_inner!(store, inner => {
            let inner = inner.read();
            prop_assert_eq!(inner.objects.len(), inner.ordered.len());
            for (key, slot) in inner.objects.iter() {
                let expected = meta_namespace_key(inner.encoding.decode(slot).as_ref());
                prop_assert_eq!(key.as_bytes(), expected.as_bytes());
                prop_assert_eq!(slot_key(slot).to_string(), expected);
            }
        });
        for (ns, ns_str) in NAMESPACES.iter().enumerate() {
            for (name, name_str) in NAMES.iter().enumerate() {
                let k = key(ns, name);
                let got = store.get(&k.parse().unwrap());
                prop_assert_eq!(got.is_some(), model.contains_key(&k));
                if let Some(got) = got {
                    prop_assert!(same(&got, &model[&k]));
                }
                prop_assert_eq!(
                    store.get_in(ns_str.unwrap_or_default(), name_str).is_some(),
                    model.contains_key(&k)
                );
            }
        }
        // The namespace index: objects by their namespace, if set (even if empty).
        let mut ns_values: Vec<String> = model
            .values()
            .filter_map(|o| o.metadata.namespace.clone())
            .collect();
        ns_values.sort();
        ns_values.dedup();
        prop_assert_eq!(store.index_values(NAMESPACE_INDEX), ns_values.clone());
        for ns in ns_values.iter().map(String::as_str).chain(["zz", "a/"]) {
            let expected: Vec<String> = model
                .iter()
                .filter(|(_, o)| o.metadata.namespace.as_deref() == Some(ns))
                .map(|(k, _)| k.clone())
                .collect();
            prop_assert_eq!(
                store.index_keys(NAMESPACE_INDEX, ns),
                expected.iter().map(String::as_str).collect::<Vec<_>>()
            );
        }
        if app_index {
            let app_of = |o: &ConfigMap| {
                o.metadata
                    .labels
                    .as_ref()
                    .and_then(|l| l.get("app").cloned())
            };
            let mut values: Vec<String> = model.values().filter_map(|o| app_of(o)).collect();
            values.sort();
            values.dedup();
            prop_assert_eq!(store.index_values("app"), values);
            for app in ["web", "db"] {
                let expected: Vec<String> = model
                    .iter()
                    .filter(|(_, o)| app_of(o).as_deref() == Some(app))
                    .map(|(k, _)| k.clone())
                    .collect();
                prop_assert_eq!(
                    store.index_keys("app", app),
                    expected.iter().map(String::as_str).collect::<Vec<_>>()
                );
                let objects = store.by_index("app", app);
                prop_assert!(objects.iter().all(|o| app_of(o).as_deref() == Some(app)));
            }
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

        /// Every read agrees with a `BTreeMap` of key strings after any sequence of writes.
        #[test]
        fn prop_store_matches_a_map_of_keys(
            ops in proptest::collection::vec(op(), 1..60),
            compact in any::<bool>(),
        ) {
            let store: Store<ConfigMap> = if compact { Store::compact() } else { Store::new() };
            let mut model: BTreeMap<String, Arc<ConfigMap>> = BTreeMap::new();
            let mut app_index = false;
            for op in ops {
                match op {
                    Op::Upsert(ns, name, app) => {
                        let obj = object((ns, name, app));
                        let old = store.upsert(obj.clone());
                        let model_old = model.insert(key(ns, name), obj);
                        prop_assert_eq!(old, model_old);
                    }
                    Op::Remove(ns, name) => {
                        let old = store.remove(&key(ns, name).parse().unwrap());
                        let model_old = model.remove(&key(ns, name));
                        prop_assert_eq!(old, model_old);
                    }
                    Op::Replace(objects) => {
                        let objects: Vec<(String, Arc<ConfigMap>)> = objects
                            .into_iter()
                            .map(|o| (key(o.0, o.1), object(o)))
                            .collect();
                        let old = store.replace(objects.iter().map(|(_, o)| o.clone()).collect());
                        let old_keys: Vec<String> = old.keys().map(ObjectKey::to_string).collect();
                        let model_keys: Vec<String> = model.keys().cloned().collect();
                        prop_assert_eq!(old_keys, model_keys);
                        prop_assert!(old.values().eq(model.values()));
                        model = objects.into_iter().collect();
                    }
                    Op::ReplaceBatch(objects) => {
                        let objects: Vec<(String, Arc<ConfigMap>)> = objects
                            .into_iter()
                            .map(|o| (key(o.0, o.1), object(o)))
                            .collect();
                        let mut batch = store.batch();
                        for (_, o) in &objects {
                            batch.push(o.clone());
                        }
                        prop_assert_eq!(batch.len(), objects.len());
                        let (old, fresh) = store.replace_batch(batch);
                        let old_keys: Vec<String> = old.keys().map(ObjectKey::to_string).collect();
                        let model_keys: Vec<String> = model.keys().cloned().collect();
                        prop_assert_eq!(old_keys, model_keys);
                        prop_assert!(old.values().eq(model.values()));
                        model = objects.into_iter().collect();
                        // One entry per key, in key order, each the object last pushed.
                        let fresh: Vec<(String, Arc<ConfigMap>)> =
                            fresh.iter().map(|e| (e.key().to_string(), e.get())).collect();
                        let expected: Vec<(String, Arc<ConfigMap>)> =
                            model.iter().map(|(k, o)| (k.clone(), o.clone())).collect();
                        prop_assert_eq!(fresh, expected);
                        let entries: Vec<Arc<ConfigMap>> =
                            store.entries().iter().map(Entry::get).collect();
                        prop_assert!(entries.iter().eq(model.values()));
                    }
                    Op::AddAppIndex => {
                        let added = store
                            .add_indexers([("app".to_string(), label_index::<ConfigMap>("app"))]);
                        prop_assert_eq!(added.is_ok(), !app_index);
                        app_index = true;
                    }
                }
                check(&store, &model, app_index)?;
            }
        }
    }

    #[test]
    fn a_compact_store_returns_equal_decoded_copies() {
        let store: Store<ConfigMap> = Store::compact();
        let mut full = (*cm("a", "x", "web")).clone();
        full.data = Some([("mode".to_owned(), "production".to_owned())].into());
        full.metadata.resource_version = Some("7".into());
        let full = Arc::new(full);
        assert!(store.upsert(full.clone()).is_none());
        let got = store.get(&k("a/x")).unwrap();
        assert_eq!(got, full);
        assert!(!Arc::ptr_eq(&got, &full), "a decoded copy");
        // The previous object an update returns is decoded too (the informer's `on_update`
        // old object).
        let newer = cm("a", "x", "db");
        assert_eq!(store.upsert(newer.clone()), Some(full));
        assert_eq!(store.remove(&k("a/x")), Some(newer));

        // An empty namespace keys like none but lists under "", as in the typed store.
        let mut empty_ns = (*cm("", "n", "web")).clone();
        empty_ns.metadata.namespace = Some(String::new());
        store.upsert(Arc::new(empty_ns));
        let mut cluster = ConfigMap::default();
        cluster.metadata.name = Some("c".into());
        store.upsert(Arc::new(cluster));
        assert_eq!(store.keys(), ["c", "n"]);
        assert_eq!(store.index_keys(NAMESPACE_INDEX, ""), ["n"]);
        assert_eq!(store.index_values(NAMESPACE_INDEX), [""]);
    }

    #[test]
    fn a_compact_slot_keeps_a_kind_that_does_not_serialize_as_it_is() {
        use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

        /// A kind whose serialization fails (serde_json refuses non-string map keys).
        #[derive(Clone, Debug, PartialEq, serde::Deserialize)]
        struct Odd {
            metadata: ObjectMeta,
        }
        impl Serialize for Odd {
            fn serialize<S: serde::Serializer>(&self, _: S) -> Result<S::Ok, S::Error> {
                Err(serde::ser::Error::custom("not today"))
            }
        }
        impl Resource for Odd {
            type DynamicType = ();
            type Scope = kube::core::NamespaceResourceScope;
            fn kind(_: &()) -> std::borrow::Cow<'_, str> {
                "Odd".into()
            }
            fn group(_: &()) -> std::borrow::Cow<'_, str> {
                "example.com".into()
            }
            fn version(_: &()) -> std::borrow::Cow<'_, str> {
                "v1".into()
            }
            fn plural(_: &()) -> std::borrow::Cow<'_, str> {
                "odds".into()
            }
            fn meta(&self) -> &ObjectMeta {
                &self.metadata
            }
            fn meta_mut(&mut self) -> &mut ObjectMeta {
                &mut self.metadata
            }
        }
        let store: Store<Odd> = Store::compact();
        let mut odd = Odd {
            metadata: ObjectMeta::default(),
        };
        odd.metadata.namespace = Some("ns".into());
        odd.metadata.name = Some("o".into());
        let odd = Arc::new(odd);
        store.upsert(odd.clone());
        assert!(Arc::ptr_eq(&store.get_in("ns", "o").unwrap(), &odd));
    }
}
