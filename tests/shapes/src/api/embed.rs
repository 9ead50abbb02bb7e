//! A kind that embeds Kubernetes types, for their generated apply configurations.
//!
//! +groupName=embed.kube-codegen.dev
//! +versionName=v1

use k8s_openapi::api::core::v1::PodTemplateSpec;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, LabelSelector, ObjectMeta};
use kube::core::TypeMeta;
use serde::{Deserialize, Serialize};

/// Renders pods from a template and reports conditions, as a workload controller's kind does.
///
/// +genclient
/// +kubebuilder:subresource:status
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Workload {
    #[serde(flatten)]
    pub types: TypeMeta,
    pub metadata: ObjectMeta,
    pub spec: WorkloadSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<WorkloadStatus>,
}

/// What to run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkloadSpec {
    pub template: PodTemplateSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<LabelSelector>,
    /// Placement fields sit in the spec itself.
    #[serde(flatten)]
    pub placement: Placement,
}

/// Where to run, flattened into the spec.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Placement {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zone: Option<String>,
}

/// What happened.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct WorkloadStatus {
    /// +listType=map
    /// +listMapKey=type
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
}
