// Defaults that break their own field's validation: the API server refuses such a CRD
// (`ValidateDefaults`), so generation does, at the default marker. `ok` passes.
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
    /// +kubebuilder:validation:Maximum=10
    /// +kubebuilder:default=11
    //~^ ERROR should be less than or equal to 10
    pub replicas: Option<i32>,
    /// +kubebuilder:validation:Enum=Fast;Slow
    /// +kubebuilder:default=Medium
    //~^ ERROR Unsupported value: "Medium"
    pub mode: Option<String>,
    /// +kubebuilder:validation:Pattern=`^[a-z]+$`
    /// +kubebuilder:default="Bad-Name"
    //~^ ERROR should match '^[a-z]+$'
    pub name: Option<String>,
    /// +kubebuilder:validation:MaxLength=3
    /// +default="toolong"
    //~^ ERROR Too long: may not be more than 3 bytes
    pub code: Option<String>,
    /// +kubebuilder:validation:XValidation:rule="self % 2 == 0",message="must be even"
    /// +kubebuilder:default=3
    //~^ ERROR must be even
    pub level: Option<i32>,
    /// +kubebuilder:validation:Minimum=1
    /// +kubebuilder:validation:XValidation:rule="self < 100",message="below 100"
    /// +kubebuilder:default=5
    pub ok: Option<i32>,
}
