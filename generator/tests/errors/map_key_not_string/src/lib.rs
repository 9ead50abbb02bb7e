// Map keys must serialize as strings: a struct or a data enum does not.
//! +groupName=errors.example.com
//! +versionName=v1

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::core::TypeMeta;
use serde::{Deserialize, Serialize};

/// +kubebuilder:object:root=true
#[derive(Clone, Serialize, Deserialize)]
pub struct Thing {
    #[serde(flatten)]
    pub types: TypeMeta,
    pub metadata: ObjectMeta,
    pub spec: ThingSpec,
}

use std::collections::BTreeMap;

#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Point {
    pub x: i32,
    pub y: i32,
}

#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Slot {
    Named(String),
    Numbered(i32),
}

/// A newtype of an integer serializes as the integer.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Id(pub u32);

#[derive(Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ThingSpec {
    pub by_point: BTreeMap<Point, String>,
    //~^ ERROR map keys must be strings, not `Point`
    pub by_slot: BTreeMap<Slot, String>,
    //~^ ERROR map keys must be strings, not `Slot`
    pub by_id: BTreeMap<Id, String>,
    //~^ ERROR map keys must be strings, not `Id`
}
