// `+genclient:method` makes a call on a subresource: a verb the generated client cannot
// make there, or no subresource, is an error at the marker (it used to point at the kind,
// from the Rust renderer).
//! +groupName=errors.example.com
//! +versionName=v1

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::core::TypeMeta;
use serde::{Deserialize, Serialize};

/// +genclient
/// +genclient:method=ListScales,verb=list,subresource=scale
//~^ ERROR verb `list` is not supported for `+genclient:method`
/// +genclient:method=GetScale,verb=get
//~^ ERROR `+genclient:method=GetScale` needs `subresource=`
#[derive(Clone, Serialize, Deserialize)]
pub struct Thing {
    #[serde(flatten)]
    pub types: TypeMeta,
    pub metadata: ObjectMeta,
    pub spec: ThingSpec,
}

#[derive(Clone, Serialize, Deserialize)]
pub struct ThingSpec {
    pub replicas: i32,
}
