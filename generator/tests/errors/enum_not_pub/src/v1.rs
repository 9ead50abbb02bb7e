//! +groupName=errors.example.com

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::core::TypeMeta;

/// +genclient
#[derive(Clone)]
pub struct Thing {
    #[serde(flatten)]
    pub types: TypeMeta,
    pub metadata: ObjectMeta,
    pub spec: ThingSpec,
}

#[derive(Clone)]
pub struct ThingSpec {
    pub mode: Mode,
}

#[derive(Clone)]
enum Mode {
    //~^ ERROR `Mode` must be `pub` or `pub(crate)`
    Fast,
    Slow,
}
