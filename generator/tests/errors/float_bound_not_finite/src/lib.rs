// A bound on a float field that JSON cannot hold (NaN, infinity, a number past f64's range):
// it was written `minimum: null` and lost, without a word.
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
#[serde(rename_all = "camelCase")]
pub struct ThingSpec {
    /// +kubebuilder:validation:Minimum=NaN
    //~^ ERROR `+kubebuilder:validation:Minimum` is not a finite number (it reads as NaN)
    pub ratio: f64,
    /// +kubebuilder:validation:Maximum=inf
    //~^ ERROR `+kubebuilder:validation:Maximum` is not a finite number (it reads as inf)
    /// +kubebuilder:validation:Minimum=-inf
    //~^ ERROR `+kubebuilder:validation:Minimum` is not a finite number (it reads as -inf)
    pub scale: f64,
    /// +kubebuilder:validation:Maximum=1e400
    //~^ ERROR `+kubebuilder:validation:Maximum` is not a finite number (it reads as inf)
    pub huge: f32,
    /// +kubebuilder:validation:MultipleOf=NaN
    //~^ ERROR `+kubebuilder:validation:MultipleOf` is not a finite number (it reads as NaN)
    pub step: f64,
}
