// The scale subresource's spec path must point at an integer field.
//! +groupName=errors.example.com
//! +versionName=v1

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::core::TypeMeta;
use serde::{Deserialize, Serialize};

/// +kubebuilder:object:root=true
/// +kubebuilder:subresource:status
/// +kubebuilder:subresource:scale:specpath=.spec.name,statuspath=.status.replicas
//~^ ERROR must point at a field of type integer
#[derive(Serialize, Deserialize)]
pub struct Thing {
    #[serde(flatten)]
    pub types: TypeMeta,
    pub metadata: ObjectMeta,
    pub spec: ThingSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<ThingStatus>,
}

#[derive(Serialize, Deserialize)]
pub struct ThingSpec {
    pub name: String,
}

#[derive(Serialize, Deserialize)]
pub struct ThingStatus {
    pub replicas: i32,
}
