// A webhook's `patch=` is checked as controller-gen checks it (strict JSON of the webhook's
// own fields), and the webhooks of a kind go into one configuration.
//! +groupName=errors.example.com
//! +versionName=v1
//! +kubebuilder:webhookconfiguration:mutating=true,name=first
//! +kubebuilder:webhookconfiguration:mutating=true,name=second
//~^ ERROR a second mutating `+kubebuilder:webhookconfiguration`

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::core::TypeMeta;
use serde::{Deserialize, Serialize};

/// +kubebuilder:object:root=true
/// +kubebuilder:webhook:path=/v,mutating=false,failurePolicy=fail,sideEffects=None,groups=errors.example.com,resources=things,verbs=create,versions=v1,name=a.example.com,admissionReviewVersions=v1,patch=`{"namespaceSelecter":{}}`
//~^ ERROR `patch` sets `namespaceSelecter`, which a webhook does not have
/// +kubebuilder:webhook:path=/v,mutating=false,failurePolicy=fail,sideEffects=None,groups=errors.example.com,resources=things,verbs=create,versions=v1,name=b.example.com,admissionReviewVersions=v1,patch=`{"reinvocationPolicy":"IfNeeded"}`
//~^ ERROR `patch` sets `reinvocationPolicy`, which a validating webhook does not have
/// +kubebuilder:webhook:path=/m,mutating=true,failurePolicy=fail,sideEffects=None,groups=errors.example.com,resources=things,verbs=create,versions=v1,name=c.example.com,admissionReviewVersions=v1,patch=`{"rules":[{"$patch":"replace"}]}`
//~^ ERROR strategic-merge directive
/// +kubebuilder:webhook:path=/m,mutating=true,failurePolicy=fail,sideEffects=None,groups=errors.example.com,resources=things,verbs=create,versions=v1,name=d.example.com,admissionReviewVersions=v1,patch=`{"timeoutSeconds":`
//~^ ERROR `patch` is not JSON
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
