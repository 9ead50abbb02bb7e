//! The name of every marker kube-codegen reads, once: [`Name`]. Code names a marker by its
//! variant, so a typo does not compile; the text users write lives here and nowhere else.
//! Which generator owns a marker, and its arguments and levels, are the owner's
//! [`MarkerSpec`](super::MarkerSpec) table.

/// Declares [`Name`] with the text of each marker.
macro_rules! names {
    ($($(#[$doc:meta])* $variant:ident = $text:literal,)*) => {
        /// A marker kube-codegen understands, by the name users write after `+`.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Name {
            $($(#[$doc])* $variant,)*
        }

        impl Name {
            /// Every marker name.
            pub const ALL: &[Name] = &[$(Name::$variant,)*];

            /// The name as users write it after `+` (`kubebuilder:validation:Minimum`).
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(Name::$variant => $text,)*
                }
            }
        }
    };
}

names! {
    // ---- the model's own (owned by no generator) ----
    /// `+groupName=`: the API group of a group/version module.
    GroupName = "groupName",
    /// `+versionName=`: the version of a group/version module.
    VersionName = "versionName",
    /// `+kubebuilder:object:root`: a top-level type (a kind, or a list).
    ObjectRoot = "kubebuilder:object:root",
    /// `+kubebuilder:resource:path=,singular=,shortName=,categories=,scope=`.
    Resource = "kubebuilder:resource",
    /// `+kubebuilder:validation:Required`: fields required unless marked optional.
    ValidationRequired = "kubebuilder:validation:Required",
    /// `+kubebuilder:validation:Optional`: fields optional unless marked required.
    ValidationOptional = "kubebuilder:validation:Optional",
    /// `+optional`.
    Optional = "optional",
    /// `+required`.
    Required = "required",
    /// `+kubebuilder:skip`: no CRD for the package.
    Skip = "kubebuilder:skip",
    /// `+kubebuilder:ac:generate`.
    AcGenerate = "kubebuilder:ac:generate",
    /// `+kubebuilder:ac:output:package`.
    AcOutputPackage = "kubebuilder:ac:output:package",
    /// `+kubebuilder:webhook:...`: an admission webhook.
    Webhook = "kubebuilder:webhook",
    /// `+kubebuilder:webhookconfiguration:mutating=,name=`.
    WebhookConfiguration = "kubebuilder:webhookconfiguration",
    /// `+k8s:required` (declarative validation).
    K8sRequired = "k8s:required",
    /// `+k8s:optional` (declarative validation).
    K8sOptional = "k8s:optional",

    // ---- crd ----
    /// `+kubebuilder:subresource:status`.
    SubresourceStatus = "kubebuilder:subresource:status",
    /// `+kubebuilder:subresource:scale:specpath=,statuspath=,selectorpath=`.
    SubresourceScale = "kubebuilder:subresource:scale",
    /// `+kubebuilder:printcolumn:name=,type=,JSONPath=,...`.
    PrintColumn = "kubebuilder:printcolumn",
    /// `+kubebuilder:storageversion`.
    StorageVersion = "kubebuilder:storageversion",
    /// `+kubebuilder:deprecatedversion:warning=`.
    DeprecatedVersion = "kubebuilder:deprecatedversion",
    /// `+kubebuilder:skipversion`.
    SkipVersion = "kubebuilder:skipversion",
    /// `+kubebuilder:unservedversion`.
    UnservedVersion = "kubebuilder:unservedversion",
    /// `+kubebuilder:selectablefield:JSONPath=`.
    SelectableField = "kubebuilder:selectablefield",
    /// `+kubebuilder:metadata:annotations=,labels=`.
    Metadata = "kubebuilder:metadata",
    /// `+kubebuilder:validation:Minimum=`.
    Minimum = "kubebuilder:validation:Minimum",
    /// `+kubebuilder:validation:Maximum=`.
    Maximum = "kubebuilder:validation:Maximum",
    /// `+kubebuilder:validation:ExclusiveMinimum`.
    ExclusiveMinimum = "kubebuilder:validation:ExclusiveMinimum",
    /// `+kubebuilder:validation:ExclusiveMaximum`.
    ExclusiveMaximum = "kubebuilder:validation:ExclusiveMaximum",
    /// `+kubebuilder:validation:MultipleOf=`.
    MultipleOf = "kubebuilder:validation:MultipleOf",
    /// `+kubebuilder:validation:MinLength=`.
    MinLength = "kubebuilder:validation:MinLength",
    /// `+kubebuilder:validation:MaxLength=`.
    MaxLength = "kubebuilder:validation:MaxLength",
    /// `+kubebuilder:validation:Pattern=`.
    Pattern = "kubebuilder:validation:Pattern",
    /// `+kubebuilder:validation:MinItems=`.
    MinItems = "kubebuilder:validation:MinItems",
    /// `+kubebuilder:validation:MaxItems=`.
    MaxItems = "kubebuilder:validation:MaxItems",
    /// `+kubebuilder:validation:UniqueItems`.
    UniqueItems = "kubebuilder:validation:UniqueItems",
    /// `+kubebuilder:validation:MinProperties=`.
    MinProperties = "kubebuilder:validation:MinProperties",
    /// `+kubebuilder:validation:MaxProperties=`.
    MaxProperties = "kubebuilder:validation:MaxProperties",
    /// `+kubebuilder:validation:Enum=`.
    Enum = "kubebuilder:validation:Enum",
    /// `+kubebuilder:validation:Format=`.
    Format = "kubebuilder:validation:Format",
    /// `+kubebuilder:validation:Type=`.
    Type = "kubebuilder:validation:Type",
    /// `+kubebuilder:validation:XValidation:rule=,...`: a CEL rule.
    XValidation = "kubebuilder:validation:XValidation",
    /// `+kubebuilder:validation:XPreserveUnknownFields`.
    XPreserveUnknownFields = "kubebuilder:validation:XPreserveUnknownFields",
    /// `+kubebuilder:validation:XEmbeddedResource`.
    XEmbeddedResource = "kubebuilder:validation:XEmbeddedResource",
    /// `+kubebuilder:validation:XIntOrString`.
    XIntOrString = "kubebuilder:validation:XIntOrString",
    /// `+kubebuilder:validation:Schemaless`.
    Schemaless = "kubebuilder:validation:Schemaless",
    /// `+kubebuilder:pruning:PreserveUnknownFields`.
    PreserveUnknownFields = "kubebuilder:pruning:PreserveUnknownFields",
    /// `+kubebuilder:default=`: controller-gen's default (Go literals).
    KubebuilderDefault = "kubebuilder:default",
    /// `+kubebuilder:example=`.
    Example = "kubebuilder:example",
    /// `+kubebuilder:title=`.
    Title = "kubebuilder:title",
    /// `+default=`: Kubernetes' own default marker (JSON).
    Default = "default",
    /// `+nullable`.
    Nullable = "nullable",
    /// `+kube-codegen:schema=<json>`: a JSON merge patch over the node's schema.
    Schema = "kube-codegen:schema",
    /// `+listType=`.
    ListType = "listType",
    /// `+listMapKey=`.
    ListMapKey = "listMapKey",
    /// `+mapType=`.
    MapType = "mapType",
    /// `+structType=`.
    StructType = "structType",
    /// `+kubebuilder:validation:EmbeddedResource`.
    EmbeddedResource = "kubebuilder:validation:EmbeddedResource",
    /// `+kubebuilder:validation:AtMostOneOf=`.
    AtMostOneOf = "kubebuilder:validation:AtMostOneOf",
    /// `+kubebuilder:validation:ExactlyOneOf=`.
    ExactlyOneOf = "kubebuilder:validation:ExactlyOneOf",
    /// `+kubebuilder:validation:AtLeastOneOf=`.
    AtLeastOneOf = "kubebuilder:validation:AtLeastOneOf",
    /// `+kubebuilder:externalDocs:url=,description=`.
    ExternalDocs = "kubebuilder:externalDocs",
    /// `+k8s:listType=`.
    K8sListType = "k8s:listType",
    /// `+k8s:listMapKey=`.
    K8sListMapKey = "k8s:listMapKey",
    /// `+k8s:enum`.
    K8sEnum = "k8s:enum",
    /// `+k8s:immutable`.
    K8sImmutable = "k8s:immutable",
    /// `+k8s:maxItems=`.
    K8sMaxItems = "k8s:maxItems",
    /// `+k8s:minimum=`.
    K8sMinimum = "k8s:minimum",
    /// `+k8s:maximum=`.
    K8sMaximum = "k8s:maximum",

    // ---- client ----
    /// `+genclient`: the kind gets a typed client.
    Genclient = "genclient",
    /// `+genclient:nonNamespaced`.
    GenclientNonNamespaced = "genclient:nonNamespaced",
    /// `+genclient:noStatus`.
    GenclientNoStatus = "genclient:noStatus",
    /// `+genclient:noVerbs`.
    GenclientNoVerbs = "genclient:noVerbs",
    /// `+genclient:readonly`.
    GenclientReadonly = "genclient:readonly",
    /// `+genclient:onlyVerbs=`.
    GenclientOnlyVerbs = "genclient:onlyVerbs",
    /// `+genclient:skipVerbs=`.
    GenclientSkipVerbs = "genclient:skipVerbs",
    /// `+genclient:method=`.
    GenclientMethod = "genclient:method",

    // ---- conversion ----
    /// `+kube-codegen:conversion=hub|spoke`.
    Conversion = "kube-codegen:conversion",
    /// `+k8s:conversion-gen=`.
    ConversionGen = "k8s:conversion-gen",
    /// `+k8s:conversion-gen:explicit-from=`.
    ConversionGenExplicitFrom = "k8s:conversion-gen:explicit-from",

    // ---- deepcopy ----
    /// `+kubebuilder:object:generate`.
    ObjectGenerate = "kubebuilder:object:generate",

    // ---- rbac ----
    /// `+kubebuilder:rbac:groups=,resources=,verbs=,...`.
    Rbac = "kubebuilder:rbac",

    // ---- validation ----
    /// `+kube-codegen:validation`: generated defaulting and validation for a kind.
    Validation = "kube-codegen:validation",
}

impl std::fmt::Display for Name {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The prefix of the validation markers (`kubebuilder:validation:<X>`), whose `items:` forms
/// insert `items:` after it.
pub const VALIDATION_PREFIX: &str = "kubebuilder:validation:";

/// The prefix of controller-gen's array-item forms: `+kubebuilder:validation:items:MaxLength=5`
/// applies `MaxLength` to the items of the array it is on.
pub const ITEMS_PREFIX: &str = "kubebuilder:validation:items:";

/// The validation markers that have an `items:` form: controller-gen's `ValidationMarkers`
/// (pkg/crd/markers/validation.go), each also registered as `kubebuilder:validation:items:<X>`.
pub const ITEMS_MARKERS: &[Name] = &[
    Name::Maximum,
    Name::Minimum,
    Name::ExclusiveMaximum,
    Name::ExclusiveMinimum,
    Name::MultipleOf,
    Name::MinProperties,
    Name::MaxProperties,
    Name::MaxLength,
    Name::MinLength,
    Name::Pattern,
    Name::MaxItems,
    Name::MinItems,
    Name::UniqueItems,
    Name::Enum,
    Name::Format,
    Name::Type,
    Name::XPreserveUnknownFields,
    Name::XEmbeddedResource,
    Name::XIntOrString,
    Name::XValidation,
];

/// The markers of other tools, known and quiet: the one list both `generate` and the
/// importers read. A marker is one of them when its name is an entry, or continues one with
/// `:` or `.` (`k8s:deepcopy-gen:interfaces`, `protobuf.options...`); an entry ending in
/// `:` names a whole namespace (`kubebuilder:scaffold:`). Every other unknown marker in a
/// namespace kube-codegen reads (`+kubebuilder:`, `+k8s:`, `+genclient`, ...) is an error:
/// a typo there would leave a bound out of the CRD. So are validation-gen's declarative
/// validation tags beyond the ones kube-codegen reads (`+k8s:maxLength`, `+k8s:format`):
/// they are not in this list, because an author who writes one on a CRD's field means a
/// bound the CRD would not have.
pub const FOREIGN: &[&str] = &[
    // Kubernetes' code-generator and gengo: generators that do not touch a CRD, or whose
    // Rust counterpart needs no marker.
    "k8s:deepcopy-gen",
    "k8s:openapi-gen",
    "k8s:openapi-model-package",
    "k8s:conversion-gen",
    "k8s:conversion-gen-external-types",
    "k8s:conversion-fn",
    "k8s:defaulter-gen",
    "k8s:defaulter-gen-input",
    "k8s:prerelease-lifecycle-gen",
    "k8s:protobuf",
    "k8s:validation-gen",
    "k8s:validation-gen-input",
    "k8s:validation-gen-scheme-registry",
    "k8s:register-gen",
    "k8s:applyconfiguration-gen",
    "groupGoName",
    "genconversion",
    // The Go toolchain's API conventions, read by openapi-gen, protobuf and strategic merge
    // patch (not by CRDs, which have no patch strategy).
    "protobuf",
    "patchMergeKey",
    "patchStrategy",
    "enum",
    "featureGate",
    "union",
    "unionDiscriminator",
    "unionDeprecated",
    // kubebuilder's own markers that are not CRD markers: its docs generator and the
    // scaffold lines of its main.go (kubebuilder's CronJob tutorial writes both).
    "kubebuilder:docs-gen:",
    "kubebuilder:scaffold:",
    // Operator SDK's OLM metadata.
    "operator-sdk:",
];

/// Whether `name` (a marker's name, without `+` and value) is another tool's, from
/// [`FOREIGN`].
pub fn is_foreign(name: &str) -> bool {
    FOREIGN.iter().any(|f| match f.strip_suffix(':') {
        Some(namespace) => name
            .strip_prefix(namespace)
            .is_some_and(|rest| rest.starts_with(':')),
        None => name
            .strip_prefix(f)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with([':', '.'])),
    })
}

impl Name {
    /// The `items:` form of a validation marker (`kubebuilder:validation:items:MaxLength`),
    /// for those in [`ITEMS_MARKERS`].
    pub fn items_form(self) -> Option<String> {
        if !ITEMS_MARKERS.contains(&self) {
            return None;
        }
        let rest = self.as_str().strip_prefix(VALIDATION_PREFIX)?;
        Some(format!("{ITEMS_PREFIX}{rest}"))
    }

    /// The marker's source text with a value: `+listType=map` without the `+`.
    pub fn with_value(self, value: impl std::fmt::Display) -> String {
        format!("{}={value}", self.as_str())
    }

    /// The marker's source text with named arguments: `kubebuilder:printcolumn:name=a,...`
    /// without the `+` (`args` already joined by `,`).
    pub fn with_args(self, args: impl std::fmt::Display) -> String {
        format!("{}:{args}", self.as_str())
    }

    /// The marker's source text alone (a flag): `genclient`.
    pub fn text(self) -> String {
        self.as_str().to_owned()
    }
}
