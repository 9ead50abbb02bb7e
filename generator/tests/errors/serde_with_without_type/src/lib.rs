// Custom serialization: the Rust type says nothing of the wire form, so markers must.
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
pub struct ThingSpec {
    #[serde(with = "humantime_serde")]
    pub timeout: std::time::Duration,
    //~^ ERROR the schema of field `timeout` cannot be inferred: `#[serde(with = ...)]`
    #[serde(serialize_with = "as_text")]
    pub retries: u32,
    //~^ ERROR the schema of field `retries` cannot be inferred: `#[serde(serialize_with = ...)]`
}
