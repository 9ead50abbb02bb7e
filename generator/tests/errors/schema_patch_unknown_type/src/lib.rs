// A `+kube-codegen:schema` patch that sets a type the API server refuses: it was written
// into the CRD as given, with exit 0 (issue 30, item 7: `import crd` of `type: banana`).
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
pub struct ThingSpec {
    /// +kube-codegen:schema={"type":"banana"}
    //~^ ERROR the schema patch sets `type: banana` at `type`, which the API server refuses
    pub ripe: serde_json::Value,
    /// +kube-codegen:schema={"properties":{"type":{"type":"object","properties":{"x":{"type":7}}}}}
    //~^ ERROR the schema patch sets `type: 7` at `properties.type.properties.x.type`
    pub nested: serde_json::Value,
}
