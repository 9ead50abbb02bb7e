//! +groupName=super.example.com
//! +versionName=v1

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::core::TypeMeta;
use serde::{Deserialize, Serialize};

/// +genclient
/// +kubebuilder:resource:path=super
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Sup {
    #[serde(flatten)]
    pub types: TypeMeta,
    pub metadata: ObjectMeta,
    pub spec: SupSpec,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SupSpec {
    #[serde(default)]
    pub name: String,
}
