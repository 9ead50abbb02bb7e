// A kind outside every group/version module: it used to be dropped without a word.
pub mod apis;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::core::TypeMeta;

/// +genclient
//~^ ERROR kind `Stray` is outside every group/version module
#[derive(Clone)]
pub struct Stray {
    #[serde(flatten)]
    pub types: TypeMeta,
    pub metadata: ObjectMeta,
}
