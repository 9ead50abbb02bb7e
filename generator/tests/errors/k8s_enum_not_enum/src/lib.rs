// +k8s:enum marks a string enum; in Rust that is an enum of unit variants.
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
pub struct ThingSpec {
    pub mode: Mode,
}

/// +k8s:enum
//~^ ERROR `+k8s:enum` marks a string enum, and this type is not one
#[derive(Serialize, Deserialize)]
pub struct Mode(pub String);
