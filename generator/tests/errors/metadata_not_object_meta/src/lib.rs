// metadata must be an ObjectMeta.
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
    pub metadata: std::collections::BTreeMap<String, String>,
    //~^ ERROR `Thing.metadata` must be an ObjectMeta
    pub spec: ThingSpec,
}

#[derive(Serialize, Deserialize)]
pub struct ThingSpec {
    pub replicas: i32,
}
