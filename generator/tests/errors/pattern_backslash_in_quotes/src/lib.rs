// A Pattern in double quotes with a regex backslash: Go's string escapes reject `\d`, so
// the error says to quote it with backticks, which keep backslashes as written.
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
    pub metadata: ObjectMeta,
    pub spec: ThingSpec,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ThingSpec {
    /// +kubebuilder:validation:Pattern="^\d+$"
    //~^ ERROR `\d` is not an escape in the double-quoted value
    pub port: String,
}
