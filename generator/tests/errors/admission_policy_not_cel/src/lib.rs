// A kind marked for a ValidatingAdmissionPolicy whose schema holds what CEL does not state
// here (a checked string format, list uniqueness, a transition rule).
//! +groupName=errors.example.com
//! +versionName=v1

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::core::TypeMeta;
use serde::{Deserialize, Serialize};

/// +kubebuilder:object:root=true
/// +kube-codegen:admissionpolicy
//~^ ERROR cannot be enforced by a ValidatingAdmissionPolicy alone: spec: the transition rule `self.id == oldSelf.id`; spec.id: format `uuid`; spec.tags: x-kubernetes-list-type "set" (uniqueness)
#[derive(Clone, Serialize, Deserialize)]
pub struct Thing {
    #[serde(flatten)]
    pub types: TypeMeta,
    pub metadata: ObjectMeta,
    pub spec: ThingSpec,
}

/// +kubebuilder:validation:XValidation:rule="self.id == oldSelf.id",message="id is immutable"
#[derive(Clone, Serialize, Deserialize)]
pub struct ThingSpec {
    /// +kubebuilder:validation:Format=uuid
    pub id: String,
    /// +listType=set
    pub tags: Vec<String>,
}
