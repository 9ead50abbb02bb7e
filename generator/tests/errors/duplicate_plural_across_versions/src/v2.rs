//! +groupName=errors.example.com

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::core::TypeMeta;
use serde::{Deserialize, Serialize};

/// +kubebuilder:object:root=true
/// +kubebuilder:resource:path=things
#[derive(Serialize, Deserialize)]
pub struct Gadget {
    //~^ ERROR kinds `Thing` and `Gadget` of group errors.example.com share the plural `things`
    #[serde(flatten)]
    pub types: TypeMeta,
    pub metadata: ObjectMeta,
}
