// `+kube-codegen:validation` in the inner doc comment of a module that is no group/version.
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
    pub replicas: i32,
}

pub mod helpers {
    //! +kube-codegen:validation
    //~^ ERROR package marker `+kube-codegen:validation` without `+groupName`
}
