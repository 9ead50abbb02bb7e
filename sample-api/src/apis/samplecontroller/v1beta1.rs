//! The v1beta1 version of the samplecontroller API: v1alpha1's Foo with one field more,
//! `spec.minReadySeconds`, which v1alpha1 cannot hold. v1beta1 is the storage version and
//! the conversion hub; v1alpha1 is served as a spoke, converted by the generated
//! `generated::conversion` (docs/src/guide/conversion.md).
//!
//! v1beta1 only adds: kubectl prefers it to v1alpha1 (beta outranks alpha), so every path
//! v1alpha1 has must mean the same here, or the sample-controller tutorial's
//! `kubectl patch foo ... -p '{"spec":{"replicas":2}}'` would be pruned.
//!
//! +groupName=samplecontroller.k8s.io

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::core::TypeMeta;
use serde::{Deserialize, Serialize};

// ANCHOR: hub
/// Foo is a specification for a Foo resource.
///
/// +genclient
/// +kube-codegen:admissionpolicy
/// +kubebuilder:subresource:status
/// +kubebuilder:resource:shortName=fo,categories=samples
/// +kubebuilder:metadata:annotations="api-approved.kubernetes.io=unapproved, experimental-only"
/// +kubebuilder:storageversion
/// +kube-codegen:conversion=hub
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
// ANCHOR_END: hub

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
    /// Seconds a new pod must be ready before it counts as available. v1alpha1 has no
    /// place for it: it survives a v1alpha1 round trip in the conversion-data annotation.
    ///
    /// +kubebuilder:validation:Minimum=0
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_ready_seconds: Option<i32>,
}

/// FooStatus is the status for a Foo resource.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FooStatus {
    /// Ready replicas of the owned Deployment.
    #[serde(default)]
    pub available_replicas: i32,
}
