// XValidation rules (and message expressions) that are not valid CEL: caught at generation
// time, not when the apiserver rejects the CRD. Schema errors stop at the first one per
// kind, so each bad expression has a kind of its own.
//! +groupName=errors.example.com
//! +versionName=v1

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::core::TypeMeta;
use serde::{Deserialize, Serialize};

/// +kubebuilder:object:root=true
/// +kubebuilder:validation:XValidation:rule="self.spec.min <= self.spec.max &&",message="min must not exceed max"
//~^ ERROR invalid CEL in XValidation `rule`: mismatched input '<EOF>'
#[derive(Serialize, Deserialize)]
pub struct Range {
    #[serde(flatten)]
    pub types: TypeMeta,
    pub metadata: ObjectMeta,
    pub spec: RangeSpec,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RangeSpec {
    pub min: i32,
    pub max: i32,
}

/// +kubebuilder:object:root=true
#[derive(Serialize, Deserialize)]
pub struct Command {
    #[serde(flatten)]
    pub types: TypeMeta,
    pub metadata: ObjectMeta,
    pub spec: CommandSpec,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CommandSpec {
    /// +kubebuilder:validation:XValidation:rule="self.startsWith('echo'",message="must start with echo"
    //~^ ERROR invalid CEL in XValidation `rule`: missing ')'
    pub command: String,
}

/// +kubebuilder:object:root=true
#[derive(Serialize, Deserialize)]
pub struct List {
    #[serde(flatten)]
    pub types: TypeMeta,
    pub metadata: ObjectMeta,
    pub spec: ListSpec,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListSpec {
    /// +kubebuilder:validation:XValidation:rule="self.size() > 0",messageExpression="'got ' +* string(self.size())"
    //~^ ERROR invalid CEL in XValidation `messageExpression`: extraneous input '*'
    pub items: Vec<String>,
    /// Valid CEL passes: macros, ternaries, has().
    /// +kubebuilder:validation:XValidation:rule="self.all(k, k.size() < 64) && (has(self.a) ? self.a != '' : true)"
    pub labels: std::collections::BTreeMap<String, String>,
}
