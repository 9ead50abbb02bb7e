//! +groupName=self.example.com
//! +versionName=v1

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::core::TypeMeta;
use serde::{Deserialize, Serialize};

/// +genclient
/// +kubebuilder:resource:path=self
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Own {
    #[serde(flatten)]
    pub types: TypeMeta,
    pub metadata: ObjectMeta,
    pub spec: OwnSpec,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct OwnSpec {
    #[serde(default)]
    pub name: String,
}
