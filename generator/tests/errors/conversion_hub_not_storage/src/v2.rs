//! +groupName=errors.example.com
//! +versionName=v2

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::core::TypeMeta;
use serde::{Deserialize, Serialize};

/// +kubebuilder:object:root=true
/// +kube-codegen:conversion=hub
//~^ ERROR the conversion hub of Thing.errors.example.com must be its storage version, and v2 is not
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
