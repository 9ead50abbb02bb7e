// Read from a String, written as fields: a CRD has one schema for both directions.
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
#[serde(try_from = "String")]
//~^ ERROR deserializes from `String` (`try_from`) but serializes its own fields
pub struct Version {
    pub major: u32,
}

#[derive(Clone, Serialize, Deserialize)]
pub struct ThingSpec {
    pub version: Version,
}
