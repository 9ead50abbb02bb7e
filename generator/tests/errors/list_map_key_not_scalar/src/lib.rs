// A listMapKey must name a scalar property of the items.
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
    /// +listType=map
    /// +listMapKey=name
    /// +listMapKey=selector
    //~^ ERROR listMapKey `selector` must be a scalar, but it is an object
    pub routes: Vec<Route>,
}

#[derive(Serialize, Deserialize)]
pub struct Route {
    pub name: String,
    pub selector: std::collections::BTreeMap<String, String>,
}
