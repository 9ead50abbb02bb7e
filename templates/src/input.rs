//! What the renderers need to know, and nothing more. The generator fills these from its
//! model; all Rust paths are full paths as text (`crate::apis::v1::Foo`).

/// One group/version.
#[derive(Clone, Debug)]
pub struct Package {
    /// The API group, e.g. `samplecontroller.k8s.io` (`""` for the core group).
    pub group: String,
    /// The version, e.g. `v1alpha1`.
    pub version: String,
    /// Rust name of the group/version: `samplecontroller_v1alpha1`.
    pub accessor: String,
    /// Rust name of the group alone: `samplecontroller`.
    pub group_accessor: String,
    /// The kinds of this group/version that get clients, listers and informers.
    pub kinds: Vec<Kind>,
}

/// One kind of a group/version.
#[derive(Clone, Debug)]
pub struct Kind {
    /// `Foo`
    pub name: String,
    /// `crate::apis::samplecontroller::v1alpha1::Foo`
    pub type_path: String,
    /// The resource name in URLs: `foos`.
    pub plural: String,
    /// `foo`
    pub singular: String,
    /// `kubectl` short names (`+kubebuilder:resource:shortName=...`).
    pub short_names: Vec<String>,
    /// Namespaced (`true`) or cluster-scoped.
    pub namespaced: bool,
    /// Whether the kind has a `status` subresource (`updateStatus`, `patchStatus`, ...).
    pub status_subresource: bool,
    /// The client verbs (client-go names: `updateStatus`, ...); `None` without `+genclient`.
    pub verbs: Option<Vec<String>>,
    /// Custom verbs (`+genclient:method=...`).
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
    /// The HTTP verb on the subresource.
    pub verb: SubresourceVerb,
    /// The subresource it calls, e.g. `scale`.
    pub subresource: String,
    /// Rust path of the request body type; defaults to the kind.
    pub input: Option<String>,
    /// Rust path of the response type; defaults to the kind.
    pub result: Option<String>,
}

/// The verb of a [`Method`]: which call on the subresource it makes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SubresourceVerb {
    /// GET the subresource.
    Get,
    /// POST a body to it.
    Create,
    /// PUT a body to it.
    Update,
    /// PATCH it.
    Patch,
}

impl SubresourceVerb {
    /// client-go's name: `get`, `create`, `update`, `patch`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            SubresourceVerb::Get => "get",
            SubresourceVerb::Create => "create",
            SubresourceVerb::Update => "update",
            SubresourceVerb::Patch => "patch",
        }
    }
}

/// A type that gets a `DeepCopy` impl.
#[derive(Clone, Debug)]
pub struct CopyType {
    /// Full Rust path of the type.
    pub type_path: String,
    /// How its value is laid out, which decides how it is copied.
    pub shape: CopyShape,
}

/// The layout of a [`CopyType`].
#[derive(Clone, Debug)]
pub enum CopyShape {
    /// Named fields; `deep` means the field's type contains one of our types, so it is
    /// copied through `DeepCopy` rather than `clone_from`.
    Struct(Vec<CopyField>),
    /// `struct X(T);`
    Newtype {
        /// As [`CopyField::deep`].
        deep: bool,
    },
    /// Enums are copied with `clone_from`.
    Enum,
}

/// One named field of a [`CopyShape::Struct`].
#[derive(Clone, Debug)]
pub struct CopyField {
    /// The field's Rust name.
    pub name: String,
    /// Whether the field's type contains one of our types: copied through `DeepCopy`,
    /// not `clone_from`.
    pub deep: bool,
}
