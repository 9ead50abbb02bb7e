// kube-derive input: two versions of one kind, both `storage` (kube-derive's default), and
// kube-codegen cannot see which one the code passes to `merge_crds`.

pub mod v1 {
    use kube::CustomResource;
    use schemars::JsonSchema;
    use serde::{Deserialize, Serialize};

    #[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema)]
    #[kube(group = "errors.example.com", version = "v1", kind = "Thing")]
    pub struct ThingSpec {
    //~^ ERROR Thing.errors.example.com has more than one storage version
        pub a: String,
    }
}

pub mod v2 {
    use kube::CustomResource;
    use schemars::JsonSchema;
    use serde::{Deserialize, Serialize};

    #[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema)]
    #[kube(group = "errors.example.com", version = "v2", kind = "Thing")]
    pub struct ThingSpec {
        pub a: String,
    }
}
