// A Kubernetes type controller-gen cannot render (JSONSchemaProps has a JSON encoding of its
// own) is refused with the reason, not given a schema that would misstate it.
//! +groupName=errors.example.com
//! +versionName=v1

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::JSONSchemaProps;
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
    pub schema: JSONSchemaProps,
    //~^ ERROR has no CRD schema: it contains `apiextensions_apiserver::pkg::apis::apiextensions::v1::JSONSchemaPropsOrArray`: controller-gen cannot see its JSON encoding
}
