//! What the renderers need to know, and nothing more. The generator fills these from its
//! model; all Rust paths are full paths as text (`crate::apis::v1::Foo`).

/// One group/version.
#[derive(Clone, Debug)]
pub struct Package {
    pub group: String,
    pub version: String,
    /// Rust name of the group/version: `samplecontroller_v1alpha1`.
    pub accessor: String,
    /// Rust name of the group alone: `samplecontroller`.
    pub group_accessor: String,
    pub kinds: Vec<Kind>,
}

/// One kind of a group/version.
#[derive(Clone, Debug)]
pub struct Kind {
    /// `Foo`
    pub name: String,
    /// `crate::apis::samplecontroller::v1alpha1::Foo`
    pub type_path: String,
    pub plural: String,
    pub singular: String,
    pub short_names: Vec<String>,
    pub namespaced: bool,
    pub status_subresource: bool,
    /// The client verbs (client-go names: `updateStatus`, ...); `None` without `+genclient`.
    pub verbs: Option<Vec<String>>,
    pub methods: Vec<Method>,
    /// Set when the kind has `types`, `metadata`, `spec` and an optional `status`, so a
    /// `new(name, spec)` constructor can be generated.
    pub spec_type: Option<String>,
    /// The `T` of `status: Option<T>`, for `HasStatus`.
    pub status_type: Option<String>,
}

/// A custom verb (`+genclient:method=GetScale,verb=get,subresource=scale,result=...`).
#[derive(Clone, Debug)]
pub struct Method {
    /// `GetScale`
    pub name: String,
    /// `get`, `create`, `update` or `patch`
    pub verb: String,
    pub subresource: String,
    /// Rust path of the request body type; defaults to the kind.
    pub input: Option<String>,
    /// Rust path of the response type; defaults to the kind.
    pub result: Option<String>,
}

/// A type that gets a `DeepCopy` impl.
#[derive(Clone, Debug)]
pub struct CopyType {
    pub type_path: String,
    pub shape: CopyShape,
}

#[derive(Clone, Debug)]
pub enum CopyShape {
    /// Named fields; `deep` means the field's type contains one of our types, so it is
    /// copied through `DeepCopy` rather than `clone_from`.
    Struct(Vec<CopyField>),
    /// `struct X(T);`
    Newtype { deep: bool },
    /// Enums are copied with `clone_from`.
    Enum,
}

#[derive(Clone, Debug)]
pub struct CopyField {
    pub name: String,
    pub deep: bool,
}
