//! +groupName=1password.example.com
//! +versionName=v1

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::core::TypeMeta;
use serde::{Deserialize, Serialize};

/// +genclient
/// +kubebuilder:resource:path=1things
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Thing {
    #[serde(flatten)]
    pub types: TypeMeta,
    pub metadata: ObjectMeta,
    pub spec: ThingSpec,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ThingSpec {
    #[serde(default)]
    pub name: String,
}

/// +genclient
/// +kubebuilder:resource:path=type
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Typed {
    #[serde(flatten)]
    pub types: TypeMeta,
    pub metadata: ObjectMeta,
    pub spec: TypedSpec,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TypedSpec {
    #[serde(default)]
    pub name: String,
}

/// +genclient
/// +kubebuilder:resource:path=gen
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Gen {
    #[serde(flatten)]
    pub types: TypeMeta,
    pub metadata: ObjectMeta,
    pub spec: GenSpec,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GenSpec {
    #[serde(default)]
    pub name: String,
}
