//! The packed encoding of [`Store::compact`](super::Store::compact): each object as its
//! JSON, with its key beside it so that the store orders, hashes and indexes by namespace
//! without decoding.
//!
//! Why JSON: k8s-openapi's types cost several times their JSON in memory (inline
//! `Option`s, B-tree maps of 11 slots per node, managedFields' `FieldsV1` decoded to a
//! `serde_json::Value` tree), and the JSON is what the server sent, so it reads back
//! exactly; serde_json writes and reads it with no other dependency.

use std::marker::PhantomData;
use std::sync::Arc;

use kube::Resource;
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::{Encoding, Holds, Slot, parts_of};

/// A packed object: its key and encoded body.
pub(crate) struct Packed<K> {
    /// `namespace/name`, or `name` (as [`ObjectKey`](super::ObjectKey) prints it).
    key: Box<str>,
    /// The namespace's length in `key`; [`NO_NAMESPACE`] when the object has none (0: an
    /// empty one, which keys like none but lists under the namespace `""`).
    ns_len: u32,
    body: Body<K>,
}

/// `ns_len` of an object without a namespace.
const NO_NAMESPACE: u32 = u32::MAX;

enum Body<K> {
    Json(Box<[u8]>),
    /// An object that did not serialize, kept as it is.
    Object(Arc<K>),
}

impl<K> Slot for Arc<Packed<K>> {
    fn parts(&self) -> (&str, &str) {
        match self.ns_len {
            0 | NO_NAMESPACE => ("", &self.key),
            n => {
                let n = n as usize;
                (&self.key[..n], &self.key[n + 1..])
            }
        }
    }

    fn namespace(&self) -> Option<&str> {
        match self.ns_len {
            NO_NAMESPACE => None,
            n => Some(&self.key[..n as usize]),
        }
    }
}

/// The encoding: serde_json's, monomorphized for `K` where the store is made (the store
/// itself does not require `K: Serialize`). A copy decodes apart from its store (entries
/// and batches carry one).
pub(crate) struct Compact<K> {
    to_json: fn(&K) -> serde_json::Result<Vec<u8>>,
    from_json: fn(&[u8]) -> serde_json::Result<K>,
    kind: PhantomData<fn() -> K>,
}

impl<K> Clone for Compact<K> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<K> Copy for Compact<K> {}

impl<K: Resource + Serialize + DeserializeOwned> Compact<K> {
    pub(crate) fn new() -> Self {
        Compact {
            to_json: |obj| serde_json::to_vec(obj),
            from_json: |bytes| serde_json::from_slice(bytes),
            kind: PhantomData,
        }
    }
}

impl<K> Holds<K> for Compact<K> {
    type Slot = Arc<Packed<K>>;
}

impl<K: Resource> Encoding<K> for Compact<K> {
    fn encode(&self, obj: &Arc<K>) -> Arc<Packed<K>> {
        let meta = obj.meta();
        let (ns, name) = parts_of(obj.as_ref());
        let key = super::ObjectKey::namespaced(ns, name);
        let ns_len = match &meta.namespace {
            None => NO_NAMESPACE,
            Some(ns) => u32::try_from(ns.len()).unwrap_or(NO_NAMESPACE - 1),
        };
        let body = match (self.to_json)(obj) {
            Ok(json) => Body::Json(json.into_boxed_slice()),
            Err(error) => {
                tracing::warn!(key = %key, %error, "compact cache: object does not serialize; cached as it is");
                Body::Object(obj.clone())
            }
        };
        Arc::new(Packed {
            key: String::from(key).into_boxed_str(),
            ns_len,
            body,
        })
    }

    fn decode(&self, slot: &Arc<Packed<K>>) -> Arc<K> {
        match &slot.body {
            Body::Object(obj) => obj.clone(),
            Body::Json(json) => match (self.from_json)(json) {
                Ok(obj) => Arc::new(obj),
                Err(error) => panic!(
                    "compact cache: {} {} does not deserialize from the JSON it serialized to ({error}); \
                     cache this kind with the typed store",
                    std::any::type_name::<K>(),
                    slot.key
                ),
            },
        }
    }

    fn entry(&self, slot: &Arc<Packed<K>>) -> super::Entry<K> {
        super::Entry::Packed(slot.clone(), *self)
    }
}
