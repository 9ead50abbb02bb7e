// A kind must be a struct.
//! +groupName=errors.example.com
//! +versionName=v1

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::core::TypeMeta;
use serde::{Deserialize, Serialize};

/// +kubebuilder:object:root=true
#[derive(Serialize, Deserialize)]
pub enum Thing {
    //~^ ERROR kind `Thing` must be a struct
    A { metadata: ObjectMeta },
    B { metadata: ObjectMeta },
}
