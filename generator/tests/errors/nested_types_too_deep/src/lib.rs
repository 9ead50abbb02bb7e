// A chain of structs nested past resolve's limit (MAX_TYPE_NESTING, 256 levels below a
// kind): each struct is 10 levels below the one before (its field, eight wrappers, its name).
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
pub struct ThingSpec {
    pub a: Option<Vec<Option<Vec<Option<Vec<Option<Vec<S0>>>>>>>>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct S0 {
    pub a: Option<Vec<Option<Vec<Option<Vec<Option<Vec<S1>>>>>>>>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct S1 {
    pub a: Option<Vec<Option<Vec<Option<Vec<Option<Vec<S2>>>>>>>>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct S2 {
    pub a: Option<Vec<Option<Vec<Option<Vec<Option<Vec<S3>>>>>>>>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct S3 {
    pub a: Option<Vec<Option<Vec<Option<Vec<Option<Vec<S4>>>>>>>>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct S4 {
    pub a: Option<Vec<Option<Vec<Option<Vec<Option<Vec<S5>>>>>>>>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct S5 {
    pub a: Option<Vec<Option<Vec<Option<Vec<Option<Vec<S6>>>>>>>>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct S6 {
    pub a: Option<Vec<Option<Vec<Option<Vec<Option<Vec<S7>>>>>>>>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct S7 {
    pub a: Option<Vec<Option<Vec<Option<Vec<Option<Vec<S8>>>>>>>>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct S8 {
    pub a: Option<Vec<Option<Vec<Option<Vec<Option<Vec<S9>>>>>>>>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct S9 {
    pub a: Option<Vec<Option<Vec<Option<Vec<Option<Vec<S10>>>>>>>>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct S10 {
    pub a: Option<Vec<Option<Vec<Option<Vec<Option<Vec<S11>>>>>>>>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct S11 {
    pub a: Option<Vec<Option<Vec<Option<Vec<Option<Vec<S12>>>>>>>>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct S12 {
    pub a: Option<Vec<Option<Vec<Option<Vec<Option<Vec<S13>>>>>>>>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct S13 {
    pub a: Option<Vec<Option<Vec<Option<Vec<Option<Vec<S14>>>>>>>>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct S14 {
    pub a: Option<Vec<Option<Vec<Option<Vec<Option<Vec<S15>>>>>>>>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct S15 {
    pub a: Option<Vec<Option<Vec<Option<Vec<Option<Vec<S16>>>>>>>>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct S16 {
    pub a: Option<Vec<Option<Vec<Option<Vec<Option<Vec<S17>>>>>>>>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct S17 {
    pub a: Option<Vec<Option<Vec<Option<Vec<Option<Vec<S18>>>>>>>>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct S18 {
    pub a: Option<Vec<Option<Vec<Option<Vec<Option<Vec<S19>>>>>>>>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct S19 {
    pub a: Option<Vec<Option<Vec<Option<Vec<Option<Vec<S20>>>>>>>>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct S20 {
    pub a: Option<Vec<Option<Vec<Option<Vec<Option<Vec<S21>>>>>>>>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct S21 {
    pub a: Option<Vec<Option<Vec<Option<Vec<Option<Vec<S22>>>>>>>>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct S22 {
    pub a: Option<Vec<Option<Vec<Option<Vec<Option<Vec<S23>>>>>>>>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct S23 {
    pub a: Option<Vec<Option<Vec<Option<Vec<Option<Vec<S24>>>>>>>>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct S24 {
    pub a: Option<Vec<Option<Vec<Option<Vec<Option<Vec<S25>>>>>>>>,
    //~^ ERROR the types of kind `Thing` nest 303 levels deep, more than 256
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct S25 {
    pub a: Option<Vec<Option<Vec<Option<Vec<Option<Vec<S26>>>>>>>>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct S26 {
    pub a: Option<Vec<Option<Vec<Option<Vec<Option<Vec<S27>>>>>>>>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct S27 {
    pub a: Option<Vec<Option<Vec<Option<Vec<Option<Vec<S28>>>>>>>>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct S28 {
    pub a: Option<Vec<Option<Vec<Option<Vec<Option<Vec<S29>>>>>>>>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct S29 {
    pub leaf: String,
}
