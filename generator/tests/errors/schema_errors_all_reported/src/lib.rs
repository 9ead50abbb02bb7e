// Every schema-value error of a kind in one run: two fields with the same mistake, two
// mistakes on one field, one in a nested struct, two in an enum's variants. Only the first
// of each kind was reported ("1 error").
//! +groupName=errors.example.com
//! +versionName=v1

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::core::TypeMeta;
use serde::{Deserialize, Serialize};

/// +kubebuilder:object:root=true
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Thing {
    #[serde(flatten)]
    pub types: TypeMeta,
    pub metadata: ObjectMeta,
    pub spec: ThingSpec,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ThingSpec {
    /// +kubebuilder:validation:MaxLength=-1
    //~^ ERROR must not be negative
    pub first: String,
    /// +kubebuilder:validation:MaxLength=-2
    //~^ ERROR must not be negative
    pub second: String,
    /// +kubebuilder:validation:Minimum=NaN
    //~^ ERROR is not a finite number
    /// +kubebuilder:validation:MultipleOf=0
    //~^ ERROR must be greater than 0
    pub ratio: f64,
    pub inner: Inner,
    pub shape: Shape,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Inner {
    /// +kubebuilder:validation:Pattern=`(`
    //~^ ERROR invalid regular expression
    pub name: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind")]
pub enum Shape {
    Circle(String), //~ ERROR must hold a struct to be internally tagged
    Square(i64),    //~ ERROR must hold a struct to be internally tagged
    Point { x: i64 },
}

impl Default for Shape {
    fn default() -> Self {
        Shape::Point { x: 0 }
    }
}
