// Markers of a custom-serialized value must give a whole structural schema.
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

#[derive(Clone, Serialize, Deserialize)]
pub struct ThingSpec {
    /// +kubebuilder:validation:Type=array
    //~^ ERROR so `Type=array` has no item schema
    #[serde(with = "as_list")]
    pub items: std::collections::HashSet<u8>,
    /// +kubebuilder:validation:Type=object
    //~^ ERROR so `Type=object` has no properties
    #[serde(with = "as_object")]
    pub config: Config,
}

#[derive(Clone)]
pub struct Config;
