// `+kube-codegen:admissionpolicy` on a type that is not a kind: resolve refuses it with every
// other kind-only marker (a policy is written per kind).
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

/// +kube-codegen:admissionpolicy
//~^ ERROR `+kube-codegen:admissionpolicy` only applies to a kind, and `ThingSpec` is not one
#[derive(Clone, Serialize, Deserialize)]
pub struct ThingSpec {
    pub id: String,
}
