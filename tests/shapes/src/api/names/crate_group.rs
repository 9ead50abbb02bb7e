//! +groupName=crate.example.com
//! +versionName=v1

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::core::TypeMeta;
use serde::{Deserialize, Serialize};

/// +genclient
/// +kubebuilder:resource:path=crate
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Krate {
    #[serde(flatten)]
    pub types: TypeMeta,
    pub metadata: ObjectMeta,
    pub spec: KrateSpec,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct KrateSpec {
    #[serde(default)]
    pub name: String,
}
