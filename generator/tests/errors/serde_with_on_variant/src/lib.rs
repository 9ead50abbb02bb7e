// A newtype variant serialized by custom code has nowhere for markers to describe it.
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
pub enum Timeout {
    Never,
    After(#[serde(with = "humantime_serde")] std::time::Duration),
    //~^ ERROR the schema of variant `Timeout::After` cannot be inferred
}

#[derive(Clone, Serialize, Deserialize)]
pub struct ThingSpec {
    pub timeout: Timeout,
}
