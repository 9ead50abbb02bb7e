// A marker of ours followed by prose is a mistake, not prose.
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
    /// +optional because it has a default
    //~^ ERROR unexpected text after `+optional`
    #[serde(default)]
    pub name: String,
    /// +k8s:minimum=0.5
    //~^ ERROR is not a whole number, but the value is an integer
    pub count: i32,
}
