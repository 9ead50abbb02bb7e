// `mod name;` whose file is not there: rustc refuses the crate; it was ignored.
//! +groupName=errors.example.com
//! +versionName=v1

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::core::TypeMeta;
use serde::{Deserialize, Serialize};

mod nothere; //~ ERROR file not found for module `nothere`

// Under a `cfg` rustc may leave it out: a warning.
#[cfg(feature = "extra")]
mod gated; //~ WARNING file not found for module `gated`

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
