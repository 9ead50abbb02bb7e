//! +groupName=errors.example.com
//! +versionName=v1

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::core::TypeMeta;
use serde::{Deserialize, Serialize};

/// +kubebuilder:object:root=true
/// +kubebuilder:storageversion
/// +kube-codegen:conversion=hub
//~^ ERROR has one version (v1), so there is nothing to convert
#[derive(Serialize, Deserialize)]
pub struct Thing {
    #[serde(flatten)]
    pub types: TypeMeta,
    pub metadata: ObjectMeta,
    pub spec: ThingSpec,
}

#[derive(Serialize, Deserialize)]
pub struct ThingSpec {
    pub a: i32,
}
