//! The name of every marker kube-codegen reads, once: [`Name`]. Code names a marker by its
//! variant, so a typo does not compile; the text users write lives here and nowhere else.
//! Which generator owns a marker, and its arguments and levels, are the owner's
//! [`MarkerSpec`](super::MarkerSpec) table.

/// Declares [`Name`] with the text of each marker and its one line of help (the help is
/// also the variant's rustdoc, so the two cannot drift).
macro_rules! names {
    ($($variant:ident = $text:literal, $help:literal,)*) => {
        /// A marker kube-codegen understands, by the name users write after `+`.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Name {
            $(#[doc = concat!("`+", $text, "`: ", $help, ".")] $variant,)*
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

            /// One line of help for users: what the marker means (`kube-codegen markers`
            /// prints it, and the variant's rustdoc is the same text).
            pub const fn help(self) -> &'static str {
                match self {
                    $(Name::$variant => $help,)*
                }
            }
        }
    };
}

names! {
    // ---- the model's own (owned by no generator) ----
    GroupName = "groupName",
        "the API group of a group/version module (required; a DNS subdomain with a dot)",
    VersionName = "versionName",
        "the version of a group/version module (default: the module's name)",
    ObjectRoot = "kubebuilder:object:root",
        "a top-level type: a kind, or with a `ListMeta` (or a `...List` with `items`) a list",
    Resource = "kubebuilder:resource",
        "the CRD's names and scope: `path` (plural), `singular`, `shortName=a;b`, `categories=a;b`, `scope=Namespaced|Cluster`",
    ValidationRequired = "kubebuilder:validation:Required",
        "on a field: required; on a package: fields are required unless marked optional",
    ValidationOptional = "kubebuilder:validation:Optional",
        "on a field: optional; on a package: fields are optional unless marked required",
    Optional = "optional",
        "the field is optional (not in the schema's `required`)",
    Required = "required",
        "the field is required",
    Skip = "kubebuilder:skip",
        "not an API version: no CRD from this module",
    AcGenerate = "kubebuilder:ac:generate",
        "accepted for controller-gen compatibility (its apply-configuration switch); apply configurations are generated per kind",
    AcOutputPackage = "kubebuilder:ac:output:package",
        "accepted for controller-gen compatibility (where its apply configurations go)",
    Webhook = "kubebuilder:webhook",
        "an admission webhook, with controller-gen's arguments (`path` xor `url`, `failurePolicy`, `sideEffects`, `timeoutSeconds` 1-30, operations)",
    WebhookConfiguration = "kubebuilder:webhookconfiguration",
        "the name and kind (`mutating`) of the webhook configuration the package's webhooks go into",
    K8sRequired = "k8s:required",
        "required (declarative validation); also sets `minLength`/`minItems`/`minProperties` 1 unless given",
    K8sOptional = "k8s:optional",
        "optional (declarative validation)",

    // ---- crd ----
    SubresourceStatus = "kubebuilder:subresource:status",
        "the status subresource (without a `status` field: a warning, as controller-gen and the API server take it)",
    SubresourceScale = "kubebuilder:subresource:scale",
        "the scale subresource; `specpath`, `statuspath` and `selectorpath` are checked against the schema",
    PrintColumn = "kubebuilder:printcolumn",
        "a `kubectl get` column: `name`, `type`, `JSONPath` (checked against the schema), `description`, `format`, `priority`",
    StorageVersion = "kubebuilder:storageversion",
        "the stored version, when a kind has several",
    DeprecatedVersion = "kubebuilder:deprecatedversion",
        "the version is deprecated; `warning` is what clients are told",
    SkipVersion = "kubebuilder:skipversion",
        "leave this version out of the CRD",
    UnservedVersion = "kubebuilder:unservedversion",
        "keep this version in the CRD, not served",
    SelectableField = "kubebuilder:selectablefield",
        "a field selector on `JSONPath` (a string, integer or boolean field)",
    Metadata = "kubebuilder:metadata",
        "the CRD's own annotations and labels: `annotations=k=v;k2=v2`, `labels=k=v`",
    Minimum = "kubebuilder:validation:Minimum",
        "the least value of a number",
    Maximum = "kubebuilder:validation:Maximum",
        "the greatest value of a number",
    ExclusiveMinimum = "kubebuilder:validation:ExclusiveMinimum",
        "`Minimum` itself is not allowed",
    ExclusiveMaximum = "kubebuilder:validation:ExclusiveMaximum",
        "`Maximum` itself is not allowed",
    MultipleOf = "kubebuilder:validation:MultipleOf",
        "the number is a multiple of this",
    MinLength = "kubebuilder:validation:MinLength",
        "the least length of a string",
    MaxLength = "kubebuilder:validation:MaxLength",
        "the greatest length of a string",
    Pattern = "kubebuilder:validation:Pattern",
        "a regular expression the string matches (RE2, compiled at generation time; quote with backticks)",
    MinItems = "kubebuilder:validation:MinItems",
        "the least length of an array",
    MaxItems = "kubebuilder:validation:MaxItems",
        "the greatest length of an array",
    UniqueItems = "kubebuilder:validation:UniqueItems",
        "no two items of the array are equal",
    MinProperties = "kubebuilder:validation:MinProperties",
        "the least number of an object's properties",
    MaxProperties = "kubebuilder:validation:MaxProperties",
        "the greatest number of an object's properties",
    Enum = "kubebuilder:validation:Enum",
        "the allowed values, `a;b;c`, typed like the field",
    Format = "kubebuilder:validation:Format",
        "the schema's `format` (`date-time`, `uri`, ...)",
    Type = "kubebuilder:validation:Type",
        "overrides the schema's `type`",
    XValidation = "kubebuilder:validation:XValidation",
        "a CEL rule: `rule`, `message`, `messageExpression`, `reason`, `fieldPath`, `optionalOldSelf` (syntax, types and estimated cost checked as the API server does)",
    XPreserveUnknownFields = "kubebuilder:validation:XPreserveUnknownFields",
        "keep unknown fields (`x-kubernetes-preserve-unknown-fields`)",
    XEmbeddedResource = "kubebuilder:validation:XEmbeddedResource",
        "an embedded object with its own `apiVersion`, `kind` and `metadata`",
    XIntOrString = "kubebuilder:validation:XIntOrString",
        "an integer or a string (`x-kubernetes-int-or-string`)",
    Schemaless = "kubebuilder:validation:Schemaless",
        "no schema for this field",
    PreserveUnknownFields = "kubebuilder:pruning:PreserveUnknownFields",
        "keep unknown fields (`x-kubernetes-preserve-unknown-fields`)",
    KubebuilderDefault = "kubebuilder:default",
        "the default, in controller-gen's Go literals (`{a,b}` a list, `{k: v}` an object) or JSON; type-checked",
    Example = "kubebuilder:example",
        "an example value (controller-gen's literals)",
    Title = "kubebuilder:title",
        "the schema's `title`",
    Default = "default",
        "Kubernetes' default marker, in JSON (`+kubebuilder:default` wins when both are set)",
    Nullable = "nullable",
        "`null` is a value (`nullable: true`)",
    Schema = "kube-codegen:schema",
        "the raw-schema escape hatch: a JSON merge patch (RFC 7386) applied last to the node's schema",
    ListType = "listType",
        "server-side apply topology of a list: `atomic`, `set` or `map`",
    ListMapKey = "listMapKey",
        "a key field of a `listType=map` list (repeat for several)",
    MapType = "mapType",
        "server-side apply topology of a map: `granular` or `atomic`",
    StructType = "structType",
        "server-side apply topology of a struct: `granular` or `atomic`",
    EmbeddedResource = "kubebuilder:validation:EmbeddedResource",
        "as `XEmbeddedResource`",
    AtMostOneOf = "kubebuilder:validation:AtMostOneOf",
        "on a struct: at most one of the fields `a;b` is set (a CEL rule; the fields must be optional)",
    ExactlyOneOf = "kubebuilder:validation:ExactlyOneOf",
        "on a struct: exactly one of the fields `a;b` is set (a CEL rule; the fields must be optional)",
    AtLeastOneOf = "kubebuilder:validation:AtLeastOneOf",
        "on a struct: at least one of the fields `a;b` is set (a CEL rule; the fields must be optional)",
    ExternalDocs = "kubebuilder:externalDocs",
        "the schema's `externalDocs`: `url` (checked) and `description`",
    K8sListType = "k8s:listType",
        "as `+listType` (a trailing `# comment` is allowed)",
    K8sListMapKey = "k8s:listMapKey",
        "as `+listMapKey`",
    K8sEnum = "k8s:enum",
        "on an enum of unit variants: its variants are the allowed values",
    K8sImmutable = "k8s:immutable",
        "the CEL rule `self == oldSelf`; on an optional field the parent also forbids unsetting it",
    K8sMaxItems = "k8s:maxItems",
        "as `MaxItems`",
    K8sMinimum = "k8s:minimum",
        "as `Minimum`",
    K8sMaximum = "k8s:maximum",
        "as `Maximum`",

    // ---- client ----
    Genclient = "genclient",
        "this struct is a kind and gets a typed client",
    GenclientNonNamespaced = "genclient:nonNamespaced",
        "the kind is cluster-scoped",
    GenclientNoStatus = "genclient:noStatus",
        "the client has no status verbs",
    GenclientNoVerbs = "genclient:noVerbs",
        "the client has no verbs",
    GenclientReadonly = "genclient:readonly",
        "the client has only get, list and watch",
    GenclientOnlyVerbs = "genclient:onlyVerbs",
        "the client has only these verbs (`create,get`)",
    GenclientSkipVerbs = "genclient:skipVerbs",
        "the client has every verb but these (`delete`)",
    GenclientMethod = "genclient:method",
        "an extra client method: `Name,verb=get,subresource=scale`, with `input` and `result` types",

    // ---- conversion ----
    Conversion = "kube-codegen:conversion",
        "on the storage version's kind: `hub` generates conversions between the kind's versions, this one the hub",
    ConversionGen = "k8s:conversion-gen",
        "`=false` on a type (not a kind): its conversion to and from the hub's type of that name is hand-written",
    ConversionGenExplicitFrom = "k8s:conversion-gen:explicit-from",
        "accepted for code-generator compatibility (conversion-gen's explicit source type)",

    // ---- deepcopy ----
    ObjectGenerate = "kubebuilder:object:generate",
        "accepted for controller-gen compatibility (its deep-copy switch); deep copies are generated per type",

    // ---- rbac ----
    Rbac = "kubebuilder:rbac",
        "an RBAC rule of the controller's ClusterRole (or a namespaced Role): `groups`, `resources`, `resourceNames`, `verbs`, `urls`, `namespace`, `roleName`",

    // ---- validation ----
    Validation = "kube-codegen:validation",
        "generate defaulting and validation (`Validate`) for this kind, or on a package for every kind of it",

    // ---- admission-policy ----
    AdmissionPolicy = "kube-codegen:admissionpolicy",
        "write a ValidatingAdmissionPolicy and its binding holding this kind version's validation as CEL, so the API server enforces it with no webhook (refused, with the list, when some of it cannot be stated in CEL)",
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
