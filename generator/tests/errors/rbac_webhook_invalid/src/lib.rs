// RBAC and webhook markers are checked where they are read, before any manifest is written.
//! +groupName=errors.example.com
//! +versionName=v1

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::core::TypeMeta;
use serde::{Deserialize, Serialize};

/// +kubebuilder:object:root=true
/// +kubebuilder:rbac:groups=apps,resources=deployments,verb=get
//~^ ERROR unknown argument `verb` for `+kubebuilder:rbac`
/// +kubebuilder:rbac:groups=apps,verbs=get
//~^ ERROR names neither resources nor urls
/// +kubebuilder:webhook:path=/validate,url=https://example.com/validate,mutating=false,failurePolicy=fail,sideEffects=None,groups=errors.example.com,resources=things,verbs=create,versions=v1,name=vthing.example.com,admissionReviewVersions=v1
//~^ ERROR needs exactly one of `path` and `url`
/// +kubebuilder:webhook:path=/mutate,mutating=true,failurePolicy=Retry,sideEffects=None,groups=errors.example.com,resources=things,verbs=create,versions=v1,name=mthing.example.com,admissionReviewVersions=v1
//~^ ERROR invalid failurePolicy `Retry`
#[derive(Serialize, Deserialize)]
pub struct Thing {
    #[serde(flatten)]
    pub types: TypeMeta,
    pub metadata: ObjectMeta,
    pub spec: ThingSpec,
}

#[derive(Serialize, Deserialize)]
pub struct ThingSpec {
    pub name: String,
}
