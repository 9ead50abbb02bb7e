// Schemaless alone leaves the field without a type: not a structural schema.
//! +groupName=errors.example.com
//! +versionName=v1

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::core::TypeMeta;
use serde::{Deserialize, Serialize};

/// +kubebuilder:object:root=true
#[derive(Serialize, Deserialize)]
pub struct Thing {
    #[serde(flatten)]
    pub types: TypeMeta,
    pub metadata: ObjectMeta,
    pub spec: ThingSpec,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ThingSpec {
    /// +kubebuilder:validation:Schemaless
    //~^ ERROR is schemaless but has no type
    pub raw: String,
}
