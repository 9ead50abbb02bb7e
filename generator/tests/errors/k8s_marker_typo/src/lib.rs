// A typo in a declarative-validation marker is an error, not another tool's marker.
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
    /// +k8s:listtype=atomic
    //~^ ERROR unknown marker `+k8s:listtype`
    pub hosts: Vec<String>,
    /// +kubebuilder:validation:item:MaxLength=3
    //~^ ERROR unknown marker `+kubebuilder:validation:item:MaxLength`
    pub tags: Vec<String>,
}
