// ANCHOR: types
//! The v1alpha1 version of the samplecontroller API: the Rust port of
//! kubernetes/sample-controller's `pkg/apis/samplecontroller/v1alpha1`.
//!
//! +groupName=samplecontroller.k8s.io

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::core::TypeMeta;
use serde::{Deserialize, Serialize};

/// Foo is a specification for a Foo resource.
///
/// +genclient
/// +kube-codegen:validation
/// +kubebuilder:subresource:status
/// +kubebuilder:resource:shortName=fo,categories=samples
/// +kubebuilder:metadata:annotations="api-approved.kubernetes.io=unapproved, experimental-only"
/// +kubebuilder:printcolumn:name="Deployment",type=string,JSONPath=".spec.deploymentName"
/// +kubebuilder:printcolumn:name="Replicas",type=integer,JSONPath=".spec.replicas"
/// +kubebuilder:printcolumn:name="Available",type=integer,JSONPath=".status.availableReplicas"
/// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=".metadata.creationTimestamp"
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Foo {
    /// apiVersion and kind, always on the wire.
    #[serde(flatten)]
    pub types: TypeMeta,
    pub metadata: ObjectMeta,
    pub spec: FooSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<FooStatus>,
}

/// FooSpec is the spec for a Foo resource.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FooSpec {
    /// The name of the Deployment the controller creates and owns for this Foo.
    pub deployment_name: String,
    /// How many replicas the Deployment runs.
    ///
    /// +kubebuilder:validation:Minimum=1
    /// +kubebuilder:validation:Maximum=10
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
}
// ANCHOR_END: types

/// FooStatus is the status for a Foo resource.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FooStatus {
    /// Ready replicas of the owned Deployment.
    #[serde(default)]
    pub available_replicas: i32,
}
