//! +groupName=shapes.kube-codegen.dev

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::core::TypeMeta;
use serde::{Deserialize, Serialize};

/// Namespaced, status subresource, every verb.
///
/// +genclient
/// +kubebuilder:subresource:status
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Full {
    #[serde(flatten)]
    pub types: TypeMeta,
    pub metadata: ObjectMeta,
    pub spec: FullSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<FullStatus>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FullSpec {
    pub name: String,
    #[serde(default)]
    pub items: Vec<Item>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub primary: Option<Item>,
    #[serde(default)]
    pub by_name: BTreeMap<String, Item>,
    #[serde(default)]
    pub mode: Mode,
    /// A raw identifier field.
    #[serde(default, rename = "type")]
    pub r#type: String,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Item {
    pub value: i64,
    #[serde(default)]
    pub tags: Vec<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub enum Mode {
    #[default]
    Fast,
    Safe,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FullStatus {
    #[serde(default)]
    pub ready: bool,
}

/// Cluster-scoped, no status verbs.
///
/// +genclient
/// +genclient:nonNamespaced
/// +genclient:noStatus
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Cluster {
    #[serde(flatten)]
    pub types: TypeMeta,
    pub metadata: ObjectMeta,
    pub spec: Label,
}

/// A newtype, copied through its inner value.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Label(pub String);

/// get, list and watch only.
///
/// +genclient
/// +genclient:readonly
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ReadOnly {
    #[serde(flatten)]
    pub types: TypeMeta,
    pub metadata: ObjectMeta,
    pub spec: Label,
}

/// A chosen subset, and custom verbs on the scale subresource.
///
/// +genclient
/// +genclient:onlyVerbs=create,get,delete
/// +genclient:method=GetScale,verb=get,subresource=scale,result=k8s.io/api/autoscaling/v1.Scale
/// +genclient:method=UpdateScale,verb=update,subresource=scale,input=k8s.io/api/autoscaling/v1.Scale,result=k8s.io/api/autoscaling/v1.Scale
/// +kubebuilder:subresource:status
/// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Scaled {
    #[serde(flatten)]
    pub types: TypeMeta,
    pub metadata: ObjectMeta,
    pub spec: Replicas,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<Replicas>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Replicas {
    #[serde(default)]
    pub replicas: i32,
}

/// Everything but delete and the status verbs.
///
/// +genclient
/// +genclient:skipVerbs=delete,deleteCollection,updateStatus,applyStatus
/// +kubebuilder:subresource:status
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Skipper {
    #[serde(flatten)]
    pub types: TypeMeta,
    pub metadata: ObjectMeta,
    pub spec: Replicas,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<Replicas>,
}

/// A typed client with no verbs at all.
///
/// +genclient
/// +genclient:noVerbs
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Silent {
    #[serde(flatten)]
    pub types: TypeMeta,
    pub metadata: ObjectMeta,
    pub spec: Replicas,
}

/// A kind without a client: register, deep-copy, informer and lister only.
///
/// +kubebuilder:object:root=true
/// +kubebuilder:resource:scope=Cluster
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct NoClient {
    #[serde(flatten)]
    pub types: TypeMeta,
    pub metadata: ObjectMeta,
    pub spec: Replicas,
}
