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
    /// The client verbs; `None` without `+genclient`.
    pub verbs: Option<Vec<ClientVerb>>,
    /// Custom verbs (`+genclient:method=...`).
    pub methods: Vec<Method>,
    /// The type of the kind's `spec` field, for `HasSpec`.
    pub spec_type: Option<String>,
    /// What `new(name, spec)` takes and how it starts the kind's other fields; `None` when
    /// the kind has no `new` (no `spec`, or a field with nothing to start from: not an
    /// `Option`, no serde default, and the kind is not `Default`).
    pub constructor: Option<Constructor>,
    /// The `T` of `status: Option<T>`, for `HasStatus`.
    pub status_type: Option<String>,
    /// The kind struct is kube-derive's (`#[derive(CustomResource)]`), which already
    /// implements `kube::Resource`, `HasSpec`, `HasStatus` and `new`: those are not generated.
    pub derived: bool,
    /// Path of the kind's apply configuration as the clientset's group/version module
    /// names it (`super::super::applyconfigurations::samplecontroller_v1alpha1::FooApplyConfiguration`).
    pub apply_configuration: String,
}

/// What `new(name, spec)` takes and writes besides `types` and `metadata`.
#[derive(Clone, Debug, Default)]
pub struct Constructor {
    /// The Rust path of the `spec` argument's type: the field's, or the `T` of an
    /// `Option<T>` field, which `new` sets to `Some(spec)`.
    pub spec: String,
    /// The field is `spec: Option<T>` (a CRD that does not require `spec`).
    pub spec_optional: bool,
    /// Each other field and how it starts, in declaration order.
    pub fields: Vec<(String, FieldStart)>,
    /// The fields not listed come from the kind's `Default` (`..Default::default()`).
    pub rest_from_default: bool,
}

/// How `new(name, spec)` starts one field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldStart {
    /// An `Option`: `None`.
    None,
    /// A field with `#[serde(default)]`: its type's `Default`, the value serde reads for
    /// it when it is missing.
    Default,
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

/// A verb of a typed client (client-go's), as `+genclient:onlyVerbs`/`skipVerbs` name it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ClientVerb {
    /// `create`
    Create,
    /// `update`
    Update,
    /// `updateStatus`
    UpdateStatus,
    /// `delete`
    Delete,
    /// `deleteCollection`
    DeleteCollection,
    /// `get`
    Get,
    /// `list`
    List,
    /// `watch`
    Watch,
    /// `patch`
    Patch,
    /// `apply`
    Apply,
    /// `applyStatus`
    ApplyStatus,
}

impl ClientVerb {
    /// Every verb, in client-go's order.
    pub const ALL: [ClientVerb; 11] = [
        ClientVerb::Create,
        ClientVerb::Update,
        ClientVerb::UpdateStatus,
        ClientVerb::Delete,
        ClientVerb::DeleteCollection,
        ClientVerb::Get,
        ClientVerb::List,
        ClientVerb::Watch,
        ClientVerb::Patch,
        ClientVerb::Apply,
        ClientVerb::ApplyStatus,
    ];

    /// The name as the markers write it (`updateStatus`).
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            ClientVerb::Create => "create",
            ClientVerb::Update => "update",
            ClientVerb::UpdateStatus => "updateStatus",
            ClientVerb::Delete => "delete",
            ClientVerb::DeleteCollection => "deleteCollection",
            ClientVerb::Get => "get",
            ClientVerb::List => "list",
            ClientVerb::Watch => "watch",
            ClientVerb::Patch => "patch",
            ClientVerb::Apply => "apply",
            ClientVerb::ApplyStatus => "applyStatus",
        }
    }

    /// The verb a marker names (`updateStatus`), if any.
    #[must_use]
    pub fn parse(s: &str) -> Option<ClientVerb> {
        ClientVerb::ALL.into_iter().find(|v| v.as_str() == s)
    }

    /// A verb on the status subresource.
    #[must_use]
    pub fn is_status(self) -> bool {
        matches!(self, ClientVerb::UpdateStatus | ClientVerb::ApplyStatus)
    }

    /// The verbs `+genclient:readonly` keeps.
    #[must_use]
    pub fn is_read(self) -> bool {
        matches!(self, ClientVerb::Get | ClientVerb::List | ClientVerb::Watch)
    }

    /// The typed client's method for the verb (`update_status`).
    #[must_use]
    pub fn method_name(self) -> &'static str {
        match self {
            ClientVerb::Create => "create",
            ClientVerb::Update => "update",
            ClientVerb::UpdateStatus => "update_status",
            ClientVerb::Delete => "delete",
            ClientVerb::DeleteCollection => "delete_collection",
            ClientVerb::Get => "get",
            ClientVerb::List => "list",
            ClientVerb::Watch => "watch",
            ClientVerb::Patch => "patch",
            ClientVerb::Apply => "apply",
            ClientVerb::ApplyStatus => "apply_status",
        }
    }
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
    /// Every verb.
    pub const ALL: [SubresourceVerb; 4] = [
        SubresourceVerb::Get,
        SubresourceVerb::Create,
        SubresourceVerb::Update,
        SubresourceVerb::Patch,
    ];

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

/// One group/version's apply configurations.
#[derive(Clone, Debug)]
pub struct ApplyPackage {
    /// The API group.
    pub group: String,
    /// The version.
    pub version: String,
    /// The module name, as the clientset's: `samplecontroller_v1alpha1`.
    pub accessor: String,
    /// An apply configuration per struct the kinds reach, kinds included, in a stable order.
    pub structs: Vec<ApplyStruct>,
}

/// The apply configuration of one struct.
#[derive(Clone, Debug)]
pub struct ApplyStruct {
    /// The configuration's name: `FooSpecApplyConfiguration`.
    pub name: String,
    /// Full Rust path of the type it configures (for the docs).
    pub source_path: String,
    /// Its fields, in declaration order.
    pub fields: Vec<ApplyField>,
    /// Whether it can derive `Debug` (every type it holds as is does).
    pub debug: bool,
    /// Whether it can derive `PartialEq` (every type it holds as is does).
    pub partial_eq: bool,
    /// Set for a kind's own configuration: constructor, metadata helpers, extraction.
    pub kind: Option<ApplyKind>,
}

/// What a kind's apply configuration adds to a struct's.
#[derive(Clone, Debug)]
pub struct ApplyKind {
    /// `Foo`
    pub name: String,
    /// `samplecontroller.k8s.io/v1alpha1`
    pub api_version: String,
    /// Namespaced: `new(name, namespace)`; else `new(name)`.
    pub namespaced: bool,
    /// With a status subresource: `extract_foo_status` too.
    pub status_subresource: bool,
}

/// One field of an apply configuration.
#[derive(Clone, Debug)]
pub struct ApplyField {
    /// The Rust name of the struct's field (`r#type` as `type`).
    pub rust_name: String,
    /// The name on the wire.
    pub json_name: String,
    /// The first paragraph of the field's doc, if any.
    pub doc: String,
    /// What it holds.
    pub ty: ApplyType,
    /// How the field sits in the struct.
    pub role: ApplyRole,
}

/// How a field of an apply configuration is laid out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ApplyRole {
    /// A named field on the wire: `Option<T>`, absent when unset.
    Field,
    /// `#[serde(flatten)]` of a struct: its fields are this struct's on the wire.
    Flatten,
    /// A flattened `TypeMeta`: `apiVersion` and `kind` fields.
    TypeMeta,
}

/// The type an apply configuration holds at a field.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ApplyType {
    /// A type used as it is (scalars, enums, newtypes, k8s-openapi types): its full path.
    Plain(String),
    /// `String`: setters take `impl Into<String>`.
    String,
    /// Another apply configuration, by its path from the module of the one holding it
    /// (`FooSpecApplyConfiguration`, `super::k8s::PodSpecApplyConfiguration`).
    Config(String),
    /// A configuration that contains itself through this field (a schema type whose
    /// `items` is a schema type): held in a `Box`, as a recursive Rust type must be; its
    /// setter takes the configuration and boxes it.
    Boxed(String),
    /// `metadata`: the runtime's `ObjectMetaApplyConfiguration`.
    ObjectMeta,
    /// A list: `with_x(values)` appends, as client-go's `WithX(values...)`.
    List(Box<ApplyType>),
    /// A map with string keys: `with_x(entries)` merges.
    Map(Box<ApplyType>),
}
