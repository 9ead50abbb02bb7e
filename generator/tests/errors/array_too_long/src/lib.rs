// serde implements Serialize and Deserialize for arrays of up to 32 items.
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
    pub digest: [u8; 64],
    //~^ ERROR serde (de)serializes arrays of at most 32 items
}
