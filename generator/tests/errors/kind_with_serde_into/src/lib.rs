// A kind must be written as an object with apiVersion, kind and metadata.
//! +groupName=errors.example.com
//! +versionName=v1

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::core::TypeMeta;
use serde::{Deserialize, Serialize};

/// +kubebuilder:object:root=true
#[derive(Clone, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
//~^ ERROR kind `Thing` cannot be serialized through `into = ...`
pub struct Thing {
    #[serde(flatten)]
    pub types: TypeMeta,
    pub metadata: ObjectMeta,
    pub spec: ThingSpec,
}

#[derive(Clone, Serialize, Deserialize)]
pub struct ThingSpec {
    pub name: String,
}
