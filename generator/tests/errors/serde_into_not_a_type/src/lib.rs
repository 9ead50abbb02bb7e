// The string of `into` must name a type.
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
#[serde(into = "not a type!", from = "String")]
//~^ ERROR `into = ...` on `Version` does not name a type
pub struct Version {
    pub major: u32,
}

#[derive(Clone, Serialize, Deserialize)]
pub struct ThingSpec {
    pub version: Version,
}
