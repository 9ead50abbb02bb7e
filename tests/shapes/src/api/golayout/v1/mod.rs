//! Package v1 is the v1 version of the golayout API (Go's doc.go).
//!
//! +groupName=golayout.kube-codegen.dev
//! +k8s:deepcopy-gen=package

mod register;
mod types;
// A file whose name does not follow the module's (`#[path]`), as ported trees sometimes keep.
#[path = "widget_kinds.rs"]
mod widgets;

pub use register::*;
pub use types::*;
pub use widgets::Widget;
pub use widgets::WidgetSpec;

/// Kinds may also sit in an inline child module, re-exported by name.
pub mod inline {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
    use kube::core::TypeMeta;
    use serde::{Deserialize, Serialize};

    /// Gadget is declared in an inline module.
    ///
    /// +genclient
    /// +genclient:nonNamespaced
    #[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
    pub struct Gadget {
        #[serde(flatten)]
        pub types: TypeMeta,
        pub metadata: ObjectMeta,
        pub spec: GadgetSpec,
    }

    #[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
    pub struct GadgetSpec {
        pub size: i32,
    }
}
