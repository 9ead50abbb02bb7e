//! types.go: the kinds of the package.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ListMeta, ObjectMeta};
use kube::core::TypeMeta;
use serde::{Deserialize, Serialize};

/// Gizmo is a specification for a Gizmo resource.
///
/// +genclient
/// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
/// +kubebuilder:subresource:status
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Gizmo {
    #[serde(flatten)]
    pub types: TypeMeta,
    pub metadata: ObjectMeta,
    pub spec: GizmoSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<GizmoStatus>,
}

/// GizmoSpec is the spec for a Gizmo resource.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GizmoSpec {
    pub deployment_name: String,
    /// +kubebuilder:validation:Minimum=1
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
}

/// GizmoStatus is the status for a Gizmo resource.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GizmoStatus {
    pub available_replicas: i32,
}

/// GizmoList is a list of Gizmo resources (Go's list type; the generator makes its own).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GizmoList {
    #[serde(flatten)]
    pub types: TypeMeta,
    pub metadata: ListMeta,
    pub items: Vec<Gizmo>,
}
