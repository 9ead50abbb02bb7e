// minItems/maxItems of an array are its length, which must be a literal to be read.
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

pub const N: usize = 4;

#[derive(Clone, Serialize, Deserialize)]
pub struct ThingSpec {
    pub slots: [i32; N],
    //~^ ERROR the length of `[i32; N]` is not an integer literal
}
