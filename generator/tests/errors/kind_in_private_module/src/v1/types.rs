use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::core::TypeMeta;

/// +genclient
#[derive(Clone)]
pub struct Hidden {
    //~^ ERROR `Hidden` cannot be named from generated code
    #[serde(flatten)]
    pub types: TypeMeta,
    pub metadata: ObjectMeta,
}
