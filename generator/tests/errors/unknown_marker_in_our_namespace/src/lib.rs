// A marker kube-codegen does not know, in a namespace it reads, is an error even when it is
// no near typo: left alone, `MinValue` would leave the bound out of the CRD. Other tools'
// markers (the Go toolchain's, kubebuilder's scaffold and docs markers) pass without a word.
// validation-gen's tags that kube-codegen does not read are errors too, naming the marker
// that says the same.
//! +groupName=errors.example.com
//! +versionName=v1
//! +kubebuilder:scaffold:imports

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::core::TypeMeta;
use serde::{Deserialize, Serialize};

/// +kubebuilder:object:root=true
/// +genclient
/// +genclient:namespaced
//~^ ERROR unknown marker `+genclient:namespaced`
/// +kubebuilder:docs-gen:collapse=Advanced
/// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
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
    /// +kubebuilder:validation:MinValue=1
    //~^ ERROR unknown marker `+kubebuilder:validation:MinValue`
    pub replicas: i32,
    /// +kubebuilder:validation:Min=0
    //~^ ERROR unknown marker `+kubebuilder:validation:Min`
    pub surge: i32,
    /// +kube-codegen:crd=false
    //~^ ERROR unknown marker `+kube-codegen:crd`
    /// +listType=map
    /// +listMapKey=name
    /// +patchMergeKey=name
    /// +patchStrategy=merge
    /// +protobuf=true
    pub ports: Vec<Port>,
    /// +enum
    /// +featureGate=Gates
    /// +k8s:maxLength=3
    //~^ ERROR unknown marker `+k8s:maxLength`
    pub gate: Option<String>,
    /// +k8s:listtype=atomic
    //~^ ERROR unknown marker `+k8s:listtype`
    /// +k8s:minItems=1
    //~^ ERROR unknown marker `+k8s:minItems`
    pub hosts: Vec<String>,
}

#[derive(Serialize, Deserialize)]
pub struct Port {
    pub name: String,
}
