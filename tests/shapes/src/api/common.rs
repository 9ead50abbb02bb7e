//! Aliases used from the group/version module through `use`.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

/// A host name.
/// +kubebuilder:validation:MaxLength=253
pub type Hostname = String;

/// An alias of a k8s-openapi type.
pub type Selector = LabelSelector;
