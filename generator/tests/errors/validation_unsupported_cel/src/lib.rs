// A kind with generated validation whose CEL rule calls a function the evaluator lacks.
//! +groupName=errors.example.com
//! +versionName=v1

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::core::TypeMeta;
use serde::{Deserialize, Serialize};

/// +kubebuilder:object:root=true
/// +kube-codegen:validation
#[derive(Clone, Serialize, Deserialize)]
pub struct Thing {
    #[serde(flatten)]
    pub types: TypeMeta,
    pub metadata: ObjectMeta,
    pub spec: ThingSpec,
}

#[derive(Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ThingSpec {
    /// +kubebuilder:validation:XValidation:rule="type(self) == string"
    //~^ ERROR calls `type`, which kube-codegen's CEL evaluator does not implement
    pub not_before: String,
    /// Supported functions pass.
    ///
    /// +kubebuilder:validation:XValidation:rule="isQuantity(self) && quantity(self).isLessThan(quantity('1Gi'))"
    pub limit: String,
}
