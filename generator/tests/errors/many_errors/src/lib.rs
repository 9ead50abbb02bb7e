// Every problem of a run is reported, sorted by location.
//! +groupName=errors.example.com
//! +versionName=v1

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::core::TypeMeta;
use serde::{Deserialize, Serialize};

/// +kubebuilder:object:root=true
/// +kubebuilder:resource:scope=Global
//~^ ERROR invalid scope `Global`
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
    /// +kubebuilder:validation:Maximum=ten
    //~^ ERROR expects a number
    pub replicas: i32,
    /// +kubebuilder:validation:MaxLenght=3
    //~^ ERROR unknown marker
    pub name: String,
    pub pair: (i32, i32),
    //~^ ERROR unsupported type
}
