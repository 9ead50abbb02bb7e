// A default literal that does not parse is refused, with what is wrong.
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
    /// +kubebuilder:default={a: 1
    //~^ ERROR cannot read the value `{a: 1`
    #[serde(default)]
    pub settings: std::collections::BTreeMap<String, i32>,
}
