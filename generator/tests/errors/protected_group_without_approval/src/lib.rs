//! +groupName=widgets.k8s.io
//! +versionName=v1

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::core::TypeMeta;
use serde::{Deserialize, Serialize};

/// +genclient
#[derive(Clone, Serialize, Deserialize)]
pub struct Widget {
    //~^ ERROR group `widgets.k8s.io` is protected
    #[serde(flatten)]
    pub types: TypeMeta,
    pub metadata: ObjectMeta,
    pub spec: WidgetSpec,
}

#[derive(Clone, Serialize, Deserialize)]
pub struct WidgetSpec {
    pub size: i32,
}
