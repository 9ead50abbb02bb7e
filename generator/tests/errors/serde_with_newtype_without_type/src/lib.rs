// A newtype serialized by custom code takes its schema from its own markers.
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
pub struct Timeout(#[serde(with = "humantime_serde")] pub std::time::Duration);
//~^ ERROR the schema of `Timeout` cannot be inferred

#[derive(Clone, Serialize, Deserialize)]
pub struct ThingSpec {
    pub timeout: Timeout,
}
