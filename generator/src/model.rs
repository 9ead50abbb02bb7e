//! The explicit model between parsing and rendering: group/version packages, their kinds
//! with every type-level setting resolved, and the Rust types reachable from them with
//! field types resolved to [`TypeRef`]s. Renderers (CRD YAML, Rust templates) read only this.

use std::collections::BTreeMap;

use crate::diagnostics::Location;
use crate::markers::Marker;
/// What serde's container attributes say, as the read stage found them.
pub use crate::read::SerdeContainer;
/// The client verbs are the templates' own: one enum from marker to generated code.
pub use kube_codegen_templates::input::{ClientVerb, SubresourceVerb};

/// Everything found in one crate.
#[derive(Debug, Default)]
pub struct Api {
    /// Keyed by (group, version): deterministic order everywhere downstream.
    pub packages: BTreeMap<(String, String), Package>,
    /// Every struct/enum of the scanned modules, by full module path (`apis::v1::FooSpec`).
    pub types: BTreeMap<String, TypeDecl>,
    /// `+kubebuilder:rbac` rules, validated (the `rbac` generator writes them).
    pub rbac_rules: Vec<RbacRule>,
    /// `+kubebuilder:webhook` markers, validated (the `webhook` generator writes them).
    pub webhooks: Vec<Webhook>,
    /// `+kubebuilder:webhookconfiguration` markers (names of the generated configurations).
    pub webhook_configurations: Vec<WebhookConfiguration>,
    /// The Kubernetes version generated for: the schemas of embedded k8s-openapi types.
    pub kubernetes: crate::KubernetesVersion,
    /// The CRDs, built and checked (when the `crd` generator runs): one per group and kind.
    pub crds: std::sync::Arc<Vec<Crd>>,
    /// The schema of each kind opted into generated validation, as JSON text without
    /// descriptions, by the kind's type key (when the `validation` generator runs).
    pub validation: BTreeMap<String, String>,
    /// Where the admission configurations' `caBundle` comes from (the CRDs' conversion
    /// takes it from the schema options, the same value).
    pub webhook_ca: CaSource,
    /// The ValidatingAdmissionPolicies of kinds marked `+kube-codegen:admissionpolicy`
    /// (when the `admission-policy` generator runs).
    pub admission_policies: Vec<AdmissionPolicyFile>,
}

/// One file of the `admission-policy` generator: a group and kind's policies and bindings.
#[derive(Clone, Debug, PartialEq)]
pub struct AdmissionPolicyFile {
    pub file_name: String,
    pub documents: Vec<serde_json::Value>,
}

/// Where the API server gets the CA of a webhook's serving certificate, for every webhook
/// client config the tool writes: the CRDs' conversion and the admission configurations.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum CaSource {
    /// Nothing: `caBundle` is left out, as controller-gen leaves it, for kustomize or the
    /// cluster's tooling to fill.
    #[default]
    None,
    /// A literal `caBundle`: the PEM bytes of the CA (base64 on the wire).
    Bundle(Vec<u8>),
    /// cert-manager's CA injector fills `caBundle` from this Certificate
    /// (`namespace/name`): the objects carry `cert-manager.io/inject-ca-from`, as
    /// kubebuilder's kustomize patches (`cainjection_in_*.yaml`,
    /// `webhookcainjection_patch.yaml`) give them.
    CertManager(String),
}

/// The annotation cert-manager's CA injector reads on CRDs and webhook configurations.
pub const INJECT_CA_FROM: &str = "cert-manager.io/inject-ca-from";

/// One CRD and the file it goes to.
#[derive(Debug)]
pub struct Crd {
    pub file_name: String,
    pub crd: crate::apiext::CustomResourceDefinition,
}

impl Api {
    /// Kinds grouped by group and kind name, across versions: one CRD each.
    pub fn crd_groups(&self) -> BTreeMap<(String, String), Vec<(&Package, &Kind)>> {
        let mut out: BTreeMap<(String, String), Vec<(&Package, &Kind)>> = BTreeMap::new();
        for p in self.packages.values() {
            for k in &p.kinds {
                out.entry((p.group.clone(), k.name.clone()))
                    .or_default()
                    .push((p, k));
            }
        }
        out
    }
}

/// One `+kubebuilder:rbac:...` marker: a rule of the ClusterRole (or, with `namespace`, Role).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RbacRule {
    /// `""` is the core group.
    pub groups: Vec<String>,
    pub resources: Vec<String>,
    pub resource_names: Vec<String>,
    pub verbs: Vec<String>,
    pub urls: Vec<String>,
    pub namespace: Option<String>,
    pub role_name: Option<String>,
    pub loc: Location,
}

/// Whether an admission webhook may change the object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WebhookKind {
    Mutating,
    Validating,
}

/// Declares a closed set of values that markers and manifests write as text: the enum,
/// its spellings for parsing ([`Marker::choice_arg`](crate::markers::Marker::choice_arg))
/// and the spelling a manifest takes.
macro_rules! closed_set {
    ($(#[$m:meta])* $name:ident { $($(#[$vm:meta])* $v:ident = $t:literal,)* }) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum $name {
            $($(#[$vm])* $v,)*
        }

        impl $name {
            /// Every value with its spelling.
            pub const CHOICES: &[(&str, $name)] = &[$(($t, $name::$v),)*];

            /// The spelling in manifests.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$v => $t,)*
                }
            }
        }
    };
}

closed_set!(
    /// A webhook's `failurePolicy`: what the API server does when the call fails.
    FailurePolicy { Fail = "Fail", Ignore = "Ignore", }
);

closed_set!(
    /// A webhook's `sideEffects`, as admissionregistration.k8s.io/v1 allows them.
    SideEffects { None = "None", NoneOnDryRun = "NoneOnDryRun", }
);

closed_set!(
    /// A webhook's `matchPolicy`.
    MatchPolicy { Exact = "Exact", Equivalent = "Equivalent", }
);

closed_set!(
    /// A mutating webhook's `reinvocationPolicy`.
    ReinvocationPolicy { Never = "Never", IfNeeded = "IfNeeded", }
);

closed_set!(
    /// An operation a webhook rule matches (`verbs=` of the marker, in any case).
    Operation {
        Create = "CREATE",
        Update = "UPDATE",
        Delete = "DELETE",
        Connect = "CONNECT",
        All = "*",
    }
);

/// One `+kubebuilder:webhook:...` marker.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Webhook {
    pub kind: WebhookKind,
    pub name: String,
    pub failure_policy: FailurePolicy,
    pub match_policy: Option<MatchPolicy>,
    pub side_effects: SideEffects,
    pub timeout_seconds: Option<i32>,
    pub groups: Vec<String>,
    pub resources: Vec<String>,
    pub operations: Vec<Operation>,
    pub versions: Vec<String>,
    pub service_name: Option<String>,
    pub service_namespace: Option<String>,
    /// Exactly one of `path` (served by the service) and `url`.
    pub path: Option<String>,
    pub url: Option<String>,
    pub service_port: Option<i32>,
    pub webhook_versions: Vec<String>,
    pub admission_review_versions: Vec<String>,
    pub reinvocation_policy: Option<ReinvocationPolicy>,
    /// A strategic merge patch over the generated webhook, kept as written.
    pub patch: Option<String>,
    pub loc: Location,
}

/// One `+kubebuilder:webhookconfiguration:...` marker.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WebhookConfiguration {
    pub kind: WebhookKind,
    pub name: Option<String>,
    pub loc: Location,
}

/// A group/version module: the Rust analogue of a Go `doc.go` package.
#[derive(Debug)]
pub struct Package {
    pub group: String,
    pub version: String,
    pub loc: Location,
    /// Package-wide `+kubebuilder:validation:Optional` / `Required`.
    pub default_optional: Option<(bool, Location)>,
    /// Whether every kind of the package gets generated defaulting and validation, and why.
    pub validation: Option<ValidationScope>,
    pub kinds: Vec<Kind>,
}

/// Why all the kinds of a package opted into the `validation` generator (a single kind
/// opts in with `+kube-codegen:validation` on itself).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ValidationScope {
    /// `//! +kube-codegen:validation` in the group/version module's inner doc comment.
    Package(Location),
    /// The global switch: `Config::validate_all_kinds(true)`, `--validate-all-kinds`,
    /// `validate-all-kinds = true` in `[package.metadata.kube-codegen]`.
    All,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Scope {
    Namespaced,
    Cluster,
}

impl Scope {
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Namespaced => "Namespaced",
            Scope::Cluster => "Cluster",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scale {
    pub spec_replicas_path: String,
    pub status_replicas_path: String,
    pub label_selector_path: Option<String>,
    /// Where the `+kubebuilder:subresource:scale` marker is.
    pub loc: Location,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PrintColumn {
    pub name: String,
    pub type_: String,
    pub json_path: String,
    pub description: Option<String>,
    pub format: Option<String>,
    pub priority: Option<i32>,
    pub loc: Location,
}

/// A custom verb from `+genclient:method=Name,verb=...,subresource=...`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CustomMethod {
    pub name: String,
    pub verb: SubresourceVerb,
    pub subresource: String,
    pub input: Option<String>,
    pub result: Option<String>,
}

/// What `+genclient...` asked for. `None` on the kind means no client.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClientOptions {
    /// The verbs to generate, after onlyVerbs/skipVerbs/readonly/noStatus/noVerbs.
    pub verbs: Vec<ClientVerb>,
    pub methods: Vec<CustomMethod>,
}

/// A top-level API type: one version of one CRD.
#[derive(Debug)]
pub struct Kind {
    pub name: String,
    /// Key of the kind's struct in [`Api::types`].
    pub type_key: String,
    pub loc: Location,
    pub plural: String,
    pub singular: String,
    pub short_names: Vec<String>,
    pub categories: Vec<String>,
    pub scope: Scope,
    pub status_subresource: bool,
    pub scale: Option<Scale>,
    pub print_columns: Vec<PrintColumn>,
    pub storage: bool,
    pub served: bool,
    pub skip: bool,
    pub deprecation: Deprecation,
    pub selectable_fields: Vec<(String, Location)>,
    pub annotations: BTreeMap<String, String>,
    pub labels: BTreeMap<String, String>,
    pub client: Option<ClientOptions>,
    /// `+kube-codegen:conversion=hub`: this (storage) version is the hub the other versions
    /// convert to and from; where the marker is. Checked by `resolve::check_conversions`.
    pub conversion_hub: Option<Location>,
    /// Whose CRD this kind's must equal: controller-gen's for marker input, kube-derive's
    /// `crd()` for a `#[derive(CustomResource)]` kind.
    pub dialect: SchemaDialect,
}

/// Where a kind came from, which decides the reference its CRD follows.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum SchemaDialect {
    /// A struct marked `+genclient` / `+kubebuilder:object:root`: controller-gen's schema.
    #[default]
    ControllerGen,
    /// A `#[derive(CustomResource)]` spec: the kind struct is kube-derive's (it already
    /// implements `Resource`, `HasSpec`, `HasStatus` and `new`), and the schema is what
    /// kube-derive's `crd()` builds from schemars (`nullable` on every `Option`, ...).
    KubeDerive {
        /// The root schema's description (`#[kube(doc)]` or kube-derive's default text).
        doc: String,
    },
}

/// Whether a version is deprecated (`+kubebuilder:deprecatedversion`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Deprecation {
    /// Served without a warning.
    #[default]
    Current,
    /// Deprecated: the API server warns clients, with this text or its default one.
    Deprecated { warning: Option<String> },
}

/// A Rust field or variant type, resolved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TypeRef {
    String,
    Bool,
    Int32,
    Int64,
    Float,
    Double,
    Option(Box<TypeRef>),
    /// `Vec`, `VecDeque`; `set` for `BTreeSet` / `HashSet`.
    List {
        item: Box<TypeRef>,
        set: bool,
    },
    /// `[T; N]`: serde reads and writes exactly N items.
    Array {
        item: Box<TypeRef>,
        len: usize,
    },
    /// A map whose keys serialize as strings.
    Map(Box<TypeRef>),
    /// `serde_json::Value`: anything goes.
    Json,
    IntOrString,
    Quantity,
    Time,
    ObjectMeta,
    TypeMeta,
    /// `k8s_openapi::ByteString`: base64 string.
    Bytes,
    /// Any other k8s-openapi type, by path below the crate root (`api::core::v1::Container`).
    K8s(String),
    /// A type of the scanned crate, by key into [`Api::types`].
    Local(String),
    /// A `type` alias of the scanned crate (key into [`Api::types`], whose markers and doc
    /// apply) and what it stands for.
    Alias {
        key: String,
        target: Box<TypeRef>,
    },
    /// A field serialized by custom code (`#[serde(with = ...)]`): its Rust type says
    /// nothing about the wire, so its schema comes from its markers alone.
    Opaque,
}

impl TypeRef {
    /// Whether an absent value deserializes (so the field may be optional).
    pub fn is_option(&self) -> bool {
        matches!(self.unalias(), TypeRef::Option(_))
    }

    /// The type an alias (or an alias of an alias) stands for; any other type itself.
    pub fn unalias(&self) -> &TypeRef {
        match self {
            TypeRef::Alias { target, .. } => target.unalias(),
            other => other,
        }
    }
}

#[derive(Clone, Debug)]
pub struct Field {
    pub rust_name: String,
    /// The name on the wire after rename/rename_all.
    pub json_name: String,
    pub ty: TypeRef,
    pub doc: String,
    pub markers: Vec<Marker>,
    pub flatten: bool,
    pub skip: bool,
    /// `#[serde(default)]` on the field (or container).
    pub has_default: bool,
    pub skip_serializing_if: bool,
    /// Visible outside its module (`pub` or `pub(crate)`), as generated code needs.
    pub visible: bool,
    pub loc: Location,
    /// The Rust integer types in the field's type, depth-first as written
    /// (`BTreeMap<String, Vec<u8>>`: `[U8]`): [`TypeRef`] keeps only the wire width, and
    /// schemars' formats and bounds (kube-derive's schema) follow the Rust type.
    pub ints: Vec<RustInt>,
    /// `#[serde(default = "path")]`: the function, and what it returns when its body is a
    /// literal (kube-derive's schema holds that value as `default`).
    pub default_fn: Option<DefaultFn>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct DefaultFn {
    pub path: String,
    pub value: Option<serde_json::Value>,
}

/// A Rust integer type, as schemars describes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RustInt {
    I8,
    I16,
    I32,
    I64,
    I128,
    Isize,
    U8,
    U16,
    U32,
    U64,
    U128,
    Usize,
}

impl RustInt {
    /// schemars' `format`, `minimum` and `maximum` for the type.
    pub fn schemars(self) -> (&'static str, Option<f64>, Option<f64>) {
        match self {
            RustInt::I8 => ("int8", Some(i8::MIN.into()), Some(i8::MAX.into())),
            RustInt::I16 => ("int16", Some(i16::MIN.into()), Some(i16::MAX.into())),
            RustInt::I32 => ("int32", None, None),
            RustInt::I64 => ("int64", None, None),
            RustInt::I128 => ("int128", None, None),
            RustInt::Isize => ("int", None, None),
            RustInt::U8 => ("uint8", Some(0.0), Some(u8::MAX.into())),
            RustInt::U16 => ("uint16", Some(0.0), Some(u16::MAX.into())),
            RustInt::U32 => ("uint32", Some(0.0), None),
            RustInt::U64 => ("uint64", Some(0.0), None),
            RustInt::U128 => ("uint128", Some(0.0), None),
            RustInt::Usize => ("uint", Some(0.0), None),
        }
    }

    /// The Rust name (`i32`).
    pub fn name(self) -> &'static str {
        match self {
            RustInt::I8 => "i8",
            RustInt::I16 => "i16",
            RustInt::I32 => "i32",
            RustInt::I64 => "i64",
            RustInt::I128 => "i128",
            RustInt::Isize => "isize",
            RustInt::U8 => "u8",
            RustInt::U16 => "u16",
            RustInt::U32 => "u32",
            RustInt::U64 => "u64",
            RustInt::U128 => "u128",
            RustInt::Usize => "usize",
        }
    }

    /// The smallest and largest value the type holds (`isize`/`usize` as 64 bits).
    pub fn range(self) -> (f64, f64) {
        match self {
            RustInt::I8 => (i8::MIN.into(), i8::MAX.into()),
            RustInt::I16 => (i16::MIN.into(), i16::MAX.into()),
            RustInt::I32 => (i32::MIN.into(), i32::MAX.into()),
            RustInt::I64 | RustInt::Isize => (i64::MIN as f64, i64::MAX as f64),
            RustInt::I128 => (i128::MIN as f64, i128::MAX as f64),
            RustInt::U8 => (0.0, u8::MAX.into()),
            RustInt::U16 => (0.0, u16::MAX.into()),
            RustInt::U32 => (0.0, u32::MAX.into()),
            RustInt::U64 | RustInt::Usize => (0.0, u64::MAX as f64),
            RustInt::U128 => (0.0, u128::MAX as f64),
        }
    }

    pub fn parse(name: &str) -> Option<RustInt> {
        Some(match name {
            "i8" => RustInt::I8,
            "i16" => RustInt::I16,
            "i32" => RustInt::I32,
            "i64" => RustInt::I64,
            "i128" => RustInt::I128,
            "isize" => RustInt::Isize,
            "u8" => RustInt::U8,
            "u16" => RustInt::U16,
            "u32" => RustInt::U32,
            "u64" => RustInt::U64,
            "u128" => RustInt::U128,
            "usize" => RustInt::Usize,
            _ => return None,
        })
    }
}

#[derive(Clone, Debug)]
pub enum VariantShape {
    Unit,
    /// One unnamed field.
    Newtype(TypeRef),
    /// More than one unnamed field.
    Tuple,
    Struct(Vec<Field>),
}

#[derive(Clone, Debug)]
pub struct Variant {
    pub rust_name: String,
    pub json_name: String,
    pub doc: String,
    pub shape: VariantShape,
    pub loc: Location,
    /// The Rust integer types of a newtype variant's type (see [`Field::ints`]).
    pub ints: Vec<RustInt>,
}

#[derive(Clone, Debug)]
pub enum Shape {
    Struct(Vec<Field>),
    /// `struct Foo(T);` — serialized as T.
    Newtype(TypeRef),
    Enum(Vec<Variant>),
    /// `type Foo = T;`: T, with the alias's markers and doc.
    Alias(TypeRef),
    /// A struct or enum with serde's `into = "T"` and `from`/`try_from = "T"`: on the wire
    /// it is a T, whatever its own fields are.
    Wire(TypeRef),
}

/// A struct or enum from the scanned modules.
#[derive(Clone, Debug)]
pub struct TypeDecl {
    pub name: String,
    pub module_path: Vec<String>,
    pub doc: String,
    /// Type-level markers (validation and kind markers alike).
    pub markers: Vec<Marker>,
    pub serde: SerdeContainer,
    pub shape: Shape,
    /// Traits named in `#[derive(...)]` (last path segment).
    pub derives: Vec<String>,
    /// Visible outside its module (`pub` or `pub(crate)`).
    pub visible: bool,
    /// The module path (without `crate`) and name generated code names the type by; `None`
    /// when no reachable module defines or re-exports it.
    pub rust_path: Option<Vec<String>>,
    pub loc: Location,
}

impl TypeDecl {
    /// Whether server-side apply gets a configuration of its own for the type (every field
    /// optional): a struct serialized field by field. Anything else is applied as it is.
    pub fn has_apply_configuration(&self) -> bool {
        matches!(self.shape, Shape::Struct(_)) && !self.serde.transparent
    }
}
