// A generic alias has no schema until its parameters are known; we do not substitute them.
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

pub type Map<T> = std::collections::BTreeMap<String, T>;

#[derive(Clone, Serialize, Deserialize)]
pub struct ThingSpec {
    pub counts: Map<i32>,
    //~^ ERROR generic alias `Map` cannot be an API type
}
