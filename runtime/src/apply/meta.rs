//! `metadata` of every apply configuration: client-go's `ObjectMetaApplyConfiguration`.
//!
//! It lives here rather than in generated code because every kind of every crate shares
//! it. Fields the API server sets and no manager applies (creation and deletion
//! timestamps, managedFields itself) are left out, as client-go leaves them out.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The `metadata` a field manager applies: every field optional, absent when unset.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ObjectMetaApplyConfiguration {
    /// `metadata.name`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// `metadata.generateName` (used only when the apply creates the object).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generate_name: Option<String>,
    /// `metadata.namespace`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// `metadata.uid`: applied only as a precondition (the apply fails if it differs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uid: Option<String>,
    /// `metadata.resourceVersion`: applied only as a precondition (optimistic
    /// concurrency); not owned by anyone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_version: Option<String>,
    /// `metadata.generation` (server-set; kept for client-go parity).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generation: Option<i64>,
    /// `metadata.labels`: a granular map, each key owned separately.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels: Option<BTreeMap<String, String>>,
    /// `metadata.annotations`: a granular map, each key owned separately.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<BTreeMap<String, String>>,
    /// `metadata.ownerReferences`: a list map keyed by `uid`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner_references: Option<Vec<OwnerReferenceApplyConfiguration>>,
    /// `metadata.finalizers`: a set, each item owned separately.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finalizers: Option<Vec<String>>,
}

impl ObjectMetaApplyConfiguration {
    /// Metadata with only a name.
    #[must_use]
    pub fn named(name: impl Into<String>) -> Self {
        ObjectMetaApplyConfiguration::default().with_name(name)
    }

    /// Set `name`.
    #[must_use]
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// Set `generateName`.
    #[must_use]
    pub fn with_generate_name(mut self, prefix: impl Into<String>) -> Self {
        self.generate_name = Some(prefix.into());
        self
    }

    /// Set `namespace`.
    #[must_use]
    pub fn with_namespace(mut self, namespace: impl Into<String>) -> Self {
        self.namespace = Some(namespace.into());
        self
    }

    /// Set `uid` (a precondition).
    #[must_use]
    pub fn with_uid(mut self, uid: impl Into<String>) -> Self {
        self.uid = Some(uid.into());
        self
    }

    /// Set `resourceVersion` (a precondition).
    #[must_use]
    pub fn with_resource_version(mut self, resource_version: impl Into<String>) -> Self {
        self.resource_version = Some(resource_version.into());
        self
    }

    /// Set `generation`.
    #[must_use]
    pub fn with_generation(mut self, generation: i64) -> Self {
        self.generation = Some(generation);
        self
    }

    /// Add labels (merged into those already set; a key set twice keeps the last value),
    /// as client-go's `WithLabels`.
    #[must_use]
    pub fn with_labels<K: Into<String>, V: Into<String>>(
        mut self,
        entries: impl IntoIterator<Item = (K, V)>,
    ) -> Self {
        let map = self.labels.get_or_insert_with(BTreeMap::new);
        map.extend(entries.into_iter().map(|(k, v)| (k.into(), v.into())));
        self
    }

    /// Add annotations (merged, as [`with_labels`](Self::with_labels)).
    #[must_use]
    pub fn with_annotations<K: Into<String>, V: Into<String>>(
        mut self,
        entries: impl IntoIterator<Item = (K, V)>,
    ) -> Self {
        let map = self.annotations.get_or_insert_with(BTreeMap::new);
        map.extend(entries.into_iter().map(|(k, v)| (k.into(), v.into())));
        self
    }

    /// Append owner references, as client-go's `WithOwnerReferences`.
    #[must_use]
    pub fn with_owner_references(
        mut self,
        references: impl IntoIterator<Item = OwnerReferenceApplyConfiguration>,
    ) -> Self {
        self.owner_references
            .get_or_insert_with(Vec::new)
            .extend(references);
        self
    }

    /// Append finalizers, as client-go's `WithFinalizers`.
    #[must_use]
    pub fn with_finalizers<S: Into<String>>(
        mut self,
        finalizers: impl IntoIterator<Item = S>,
    ) -> Self {
        self.finalizers
            .get_or_insert_with(Vec::new)
            .extend(finalizers.into_iter().map(Into::into));
        self
    }
}

/// One entry of `metadata.ownerReferences` to apply. The API server requires
/// `apiVersion`, `kind`, `name` and `uid` of each; they are optional here only so that
/// extraction can represent what a manager owns.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OwnerReferenceApplyConfiguration {
    /// The owner's `apiVersion`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    /// The owner's `kind`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// The owner's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The owner's uid: the list-map key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uid: Option<String>,
    /// Whether this owner is the managing controller.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub controller: Option<bool>,
    /// Whether foreground deletion of the owner waits for this object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_owner_deletion: Option<bool>,
}

impl OwnerReferenceApplyConfiguration {
    /// A reference to `owner`, not marked as controller: client-go's
    /// `OwnerReference().WithAPIVersion(..).WithKind(..).WithName(..).WithUID(..)`.
    #[must_use]
    pub fn to<K: kube::Resource<DynamicType = ()>>(owner: &K) -> Self {
        let meta = owner.meta();
        OwnerReferenceApplyConfiguration {
            api_version: Some(K::api_version(&()).into_owned()),
            kind: Some(K::kind(&()).into_owned()),
            name: meta.name.clone(),
            uid: meta.uid.clone(),
            controller: None,
            block_owner_deletion: None,
        }
    }

    /// Set `controller`.
    #[must_use]
    pub fn with_controller(mut self, controller: bool) -> Self {
        self.controller = Some(controller);
        self
    }

    /// Set `blockOwnerDeletion`.
    #[must_use]
    pub fn with_block_owner_deletion(mut self, block: bool) -> Self {
        self.block_owner_deletion = Some(block);
        self
    }
}

impl From<k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference>
    for OwnerReferenceApplyConfiguration
{
    fn from(r: k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference) -> Self {
        OwnerReferenceApplyConfiguration {
            api_version: Some(r.api_version),
            kind: Some(r.kind),
            name: Some(r.name),
            uid: Some(r.uid),
            controller: r.controller,
            block_owner_deletion: r.block_owner_deletion,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unset_fields_are_absent_and_collections_accumulate() {
        assert_eq!(
            serde_json::to_value(ObjectMetaApplyConfiguration::default()).unwrap(),
            serde_json::json!({})
        );
        let m = ObjectMetaApplyConfiguration::named("a")
            .with_labels([("x", "1")])
            .with_labels([("y", "2"), ("x", "3")])
            .with_finalizers(["f1"])
            .with_finalizers(["f2"]);
        assert_eq!(
            serde_json::to_value(&m).unwrap(),
            serde_json::json!({"name": "a", "labels": {"x": "3", "y": "2"}, "finalizers": ["f1", "f2"]})
        );
    }
}
