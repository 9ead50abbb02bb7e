// Written as one type and read as another: which would the schema describe?
//! +groupName=errors.example.com
//! +versionName=v1

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::core::TypeMeta;
use serde::{Deserialize, Serialize};

/// +kubebuilder:object:root=true
#[derive(Clone, Serialize, Deserialize)]
pub struct Thing {
    #[serde(flatten)]
    pub types: TypeMeta,
    pub metadata: ObjectMeta,
    pub spec: ThingSpec,
}

#[derive(Clone, Serialize, Deserialize)]
#[serde(into = "String", from = "i64")]
//~^ ERROR serializes as `String` (`into`) but deserializes from `i64` (`from`)
pub struct Version {
    pub major: u32,
}

#[derive(Clone, Serialize, Deserialize)]
pub struct ThingSpec {
    pub version: Version,
}
