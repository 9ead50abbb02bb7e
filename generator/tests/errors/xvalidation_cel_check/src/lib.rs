// XValidation rules that parse but that the API server refuses when it takes the CRD: it
// type checks each expression against the schema and estimates its cost. Caught at
// generation time, at the marker, for every kind (not only `+kube-codegen:validation` ones).
//! +groupName=errors.example.com
//! +versionName=v1

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::core::TypeMeta;
use serde::{Deserialize, Serialize};

/// +kubebuilder:object:root=true
#[derive(Serialize, Deserialize)]
pub struct Gadget {
    //~^ ERROR x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget
    #[serde(flatten)]
    pub types: TypeMeta,
    pub metadata: ObjectMeta,
    pub spec: GadgetSpec,
}

/// +kubebuilder:validation:XValidation:rule="self.replicas == 'three'",message="three replicas"
//~^ ERROR found no matching overload for '_==_' applied to '(int, string)'
/// +kubebuilder:validation:XValidation:rule="self.replicas + 1",message="not a condition"
//~^ ERROR cel expression must evaluate to a bool
/// +kubebuilder:validation:XValidation:rule="self.nope > 0",message="no such field"
//~^ ERROR undefined field 'nope'
/// +kubebuilder:validation:XValidation:rule="self.replicas > 0",messageExpression="self.replicas"
//~^ ERROR messageExpression must evaluate to a string
/// +kubebuilder:validation:XValidation:rule="self.replicas >= 0",message="bad",fieldPath=".replica"
//~^ ERROR the fieldPath `.replica` of the rule `self.replicas >= 0` at `.spec` must be a valid path
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GadgetSpec {
    pub replicas: i32,
    /// `oldSelf` is an optional with `optionalOldSelf`: it does not compare with `self`.
    /// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="immutable",optionalOldSelf=true
    //~^ ERROR found no matching overload for '_==_' applied to '(string, optional_type(string))'
    pub class_name: String,
    /// Every pair of unbounded strings of an unbounded list: far over the cost budget.
    /// +kubebuilder:validation:XValidation:rule="self.all(x, self.all(y, x == y))",message="all equal"
    //~^ ERROR estimated rule cost exceeds budget by factor of more than 100x
    pub names: Vec<String>,
    /// The same rule on a bounded list of bounded strings is cheap.
    /// +kubebuilder:validation:MaxItems=10
    /// +kubebuilder:validation:items:MaxLength=16
    /// +kubebuilder:validation:XValidation:rule="self.all(x, self.all(y, x == y))",message="all equal"
    pub short_names: Vec<String>,
    /// List items do not correlate between old and new object (an atomic list).
    pub ports: Vec<Port>,
}

#[derive(Serialize, Deserialize)]
pub struct Port {
    /// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="immutable"
    //~^ ERROR oldSelf cannot be used on the uncorrelatable portion of the schema
    pub port: i32,
}
