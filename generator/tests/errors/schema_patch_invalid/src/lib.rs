// Raw-schema escape hatches that are no JSON object, or that make a schema the CRD types
// cannot hold.
//! +groupName=errors.example.com
//! +versionName=v1

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::core::TypeMeta;
use serde::{Deserialize, Serialize};

/// +kubebuilder:object:root=true
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
    /// +kube-codegen:schema={"minimum": "one"}
    //~^ ERROR the schema patch makes an invalid schema
    pub replicas: i32,
    /// +kube-codegen:schema=not json
    //~^ ERROR takes one JSON object on one line
    pub name: String,
}
