// Inline modules nested past what the reader parses (MAX_SOURCE_NESTING, 256 levels): the
// file is refused before syn recurses through it; the kind beside them is not read either.
//! +groupName=errors.example.com
//! +versionName=v1

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::core::TypeMeta;
use serde::{Deserialize, Serialize};

/// +kubebuilder:object:root=true
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Thing {
    #[serde(flatten)]
    pub types: TypeMeta,
    pub metadata: ObjectMeta,
    pub spec: ThingSpec,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ThingSpec {
    pub name: String,
}

pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m {
pub mod m { //~ ERROR nests more than 256 levels deep here
pub mod m {
pub mod m {
pub mod m {
pub struct Inner;
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
