// kube-derive input: `#[kube(...)]` keys that are wrong, read as kube-derive reads them. An
// unknown key is a warning (kube-derive itself would refuse it; we go on), the rest errors.

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema)]
#[kube(group = "errors.example.com", version = "v1")]
//~^ ERROR needs `kind` in `#[kube(...)]`
pub struct NoKindSpec {
    pub a: String,
}

#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema)]
#[kube(group = "errors.example.com", version = "v1", kind = "Twice", kind = "Again")]
//~^ ERROR `#[kube(kind)]` is set twice
#[kube(shortnme = "tw")]
//~^ WARNING unknown key `shortnme` in `#[kube(...)]`
#[kube(printcolumn = "{not json")]
//~^ ERROR `#[kube(printcolumn)]` is not a JSON object
#[kube(scale(spec_replicas_path = ".spec.a"))]
//~^ ERROR needs `spec_replicas_path` and `status_replicas_path`
#[kube(namespaced = "yes")]
//~^ ERROR `#[kube(namespaced)]` takes `true` or `false`
pub struct TwiceSpec {
    pub a: String,
}

#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema)]
#[kube(group = "Errors_Example", version = "v1", kind = "BadGroup")]
//~^ ERROR invalid group `Errors_Example`
pub struct BadGroupSpec {
    pub a: String,
}

#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema)]
#[kube(group = "errors.example.com", version = "v1", kind = "SameSpec")]
//~^ ERROR `kind = "SameSpec"` names the spec struct itself
pub struct SameSpec {
    pub a: String,
}

#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema)]
#[kube(group = "errors.example.com", version = "v1", kind = "Taken")]
pub struct TakenSpec {
    pub a: String,
}

/// Already here: kube-derive's `Taken` would be a second struct of the name.
pub struct Taken;
//~^ ERROR `Taken` is defined here, and kube-derive generates a struct of that name

#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema)]
#[kube(group = "errors.example.com", version = "v1", kind = "Unread", no_spec)]
//~^ WARNING `#[kube(no_spec)]` is not read by kube-codegen yet
pub struct UnreadSpec {
    #[serde(default = "computed")]
    pub a: String,
    //~^ WARNING `#[serde(default = "computed")]`
    #[x_kube(validation = Rule::new("self != ''").message("empty"))]
    //~^ WARNING `#[x_kube(validation)]` is not read by kube-codegen yet
    pub b: String,
    pub c: Shape,
    /// A marker a kube-derive kind does not read:
    /// +kubebuilder:validation:Enum=a;b
    //~^ WARNING `+kubebuilder:validation:Enum=a;b` is not read for a kube-derive kind
    pub d: String,
    pub e: Either,
}

/// kube-rs' `InvalidEnum7`: one property, two descriptions.
#[derive(Deserialize, Serialize, Clone, Debug, JsonSchema)]
#[serde(untagged)]
pub enum Either {
//~^ WARNING variants of `Either` give property `inner` different schemas
    A {
        /// The inner fields need to have the same schema.
        inner: u32,
        additional: String,
    },
    B {
        /// This description differs!
        inner: u32,
    },
}

fn computed() -> String {
    std::env::var("X").unwrap_or_default()
}

#[derive(Deserialize, Serialize, Clone, Debug, JsonSchema)]
#[serde(tag = "kind")]
pub enum Shape {
//~^ WARNING `Shape` is an internally or adjacently tagged enum
    Circle { r: f64 },
}
