// Two kinds of one group/version with the same plural.
//! +groupName=errors.example.com
//! +versionName=v1

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::core::TypeMeta;
use serde::{Deserialize, Serialize};

/// +kubebuilder:object:root=true
/// +kubebuilder:resource:path=things
#[derive(Serialize, Deserialize)]
pub struct Thing {
    //~^ ERROR share the plural `things`
    #[serde(flatten)]
    pub types: TypeMeta,
    pub metadata: ObjectMeta,
    pub spec: ThingSpec,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ThingSpec {
    pub a: i32,
}

/// +kubebuilder:object:root=true
/// +kubebuilder:resource:path=things
#[derive(Serialize, Deserialize)]
pub struct OtherThing {
    #[serde(flatten)]
    pub types: TypeMeta,
    pub metadata: ObjectMeta,
    pub spec: OtherThingSpec,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OtherThingSpec {
    pub b: i32,
}
