// A schema patch that puts `x-kubernetes-list-type: map` on an object: `generate` panicked
// ("set by marker") where the type is used as a field, and the API server refuses the
// CRD. Found by the import fuzzer (`import crd` wrote it for such a CRD; issue 30).
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

/// +kube-codegen:schema={"x-kubernetes-list-type":"map"}
//~^ ERROR the schema patch leaves `x-kubernetes-list-type: map` on a schema of type `object`
#[derive(Serialize, Deserialize)]
pub struct ThingSpec {
    pub name: String,
}
