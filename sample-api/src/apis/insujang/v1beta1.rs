//! The TestResource API from the "Programming Kubernetes CRDs" tutorial.
//!
//! +groupName=insujang.github.io

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::core::TypeMeta;
use serde::{Deserialize, Serialize};

/// TestResource describes a TestResource custom resource.
///
/// +genclient
/// +kube-codegen:validation
/// +kubebuilder:resource:shortName=ts
/// +kubebuilder:printcolumn:name="command",type=string,JSONPath=".spec.command"
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TestResource {
    #[serde(flatten)]
    pub types: TypeMeta,
    pub metadata: ObjectMeta,
    pub spec: TestResourceSpec,
    /// What the controller did with the resource, e.g. "HANDLED".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
}

/// TestResourceSpec specifies the 'spec' of TestResource CRD.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TestResourceSpec {
    /// The command to run; only `echo` commands are accepted.
    ///
    /// +kubebuilder:validation:Pattern=`^(echo).*`
    pub command: String,
    pub custom_property: String,
}
