// An alias's target is checked where the alias is, whatever uses it.
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

pub type Pair = (String, String);
//~^ ERROR unsupported type `(String, String)`

#[derive(Clone, Serialize, Deserialize)]
pub struct ThingSpec {
    pub pair: Pair,
}
