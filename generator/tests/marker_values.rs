//! Every marker kube-codegen knows, given a bad value (or a value where it takes none, or
//! placed on a field of the wrong type), is a located error at that marker's line. The
//! error corpus has hand-written crates for many markers; this table covers all of them,
//! and fails when a marker is added to `MARKERS` without a row here.

use kube_codegen::__private::markers::{ITEMS_MARKERS, ITEMS_PREFIX, MARKERS};
use kube_codegen::{Config, Error};

#[derive(Clone, Copy)]
enum At {
    /// The module's inner doc comment.
    Package,
    /// The kind's doc comment.
    Kind,
    /// A field of the spec, of this type.
    Field(&'static str),
}

/// (marker, where it goes, the bad line).
const BAD: &[(&str, At, &str)] = &[
    (
        "kube-codegen:conversion",
        At::Kind,
        "+kube-codegen:conversion=spoke",
    ),
    ("k8s:conversion-gen", At::Kind, "+k8s:conversion-gen=maybe"),
    // A flag: a value is an error.
    (
        "kube-codegen:validation",
        At::Kind,
        "+kube-codegen:validation=true",
    ),
    (
        "kube-codegen:admissionpolicy",
        At::Kind,
        "+kube-codegen:admissionpolicy=deny",
    ),
    (
        "k8s:conversion-gen:explicit-from",
        At::Field("i32"),
        "+k8s:conversion-gen:explicit-from=net/url.Values",
    ),
    ("groupName", At::Package, "+groupName=Not_A_Group!"),
    ("versionName", At::Package, "+versionName=Version 1"),
    ("genclient", At::Kind, "+genclient=yes"),
    (
        "genclient:nonNamespaced",
        At::Kind,
        "+genclient:nonNamespaced=true",
    ),
    ("genclient:noStatus", At::Kind, "+genclient:noStatus=1"),
    ("genclient:noVerbs", At::Kind, "+genclient:noVerbs=all"),
    ("genclient:readonly", At::Kind, "+genclient:readonly=yes"),
    (
        "genclient:onlyVerbs",
        At::Kind,
        "+genclient:onlyVerbs=get,explode",
    ),
    (
        "genclient:skipVerbs",
        At::Kind,
        "+genclient:skipVerbs=frobnicate",
    ),
    (
        "genclient:method",
        At::Kind,
        "+genclient:method=Scale,verb=teleport",
    ),
    (
        "kubebuilder:object:root",
        At::Kind,
        "+kubebuilder:object:root=maybe",
    ),
    (
        "kubebuilder:resource",
        At::Kind,
        "+kubebuilder:resource:scope=Nowhere",
    ),
    (
        "kubebuilder:subresource:status",
        At::Kind,
        "+kubebuilder:subresource:status=on",
    ),
    (
        "kubebuilder:subresource:scale",
        At::Kind,
        "+kubebuilder:subresource:scale:specpath=.spec.name,statuspath=.status.ready",
    ),
    (
        "kubebuilder:printcolumn",
        At::Kind,
        "+kubebuilder:printcolumn:name=Age,type=duration,JSONPath=.metadata.creationTimestamp",
    ),
    (
        "kubebuilder:storageversion",
        At::Kind,
        "+kubebuilder:storageversion=v2",
    ),
    (
        "kubebuilder:deprecatedversion",
        At::Kind,
        "+kubebuilder:deprecatedversion=soon",
    ),
    (
        "kubebuilder:skipversion",
        At::Kind,
        "+kubebuilder:skipversion=1",
    ),
    (
        "kubebuilder:unservedversion",
        At::Kind,
        "+kubebuilder:unservedversion=1",
    ),
    (
        "kubebuilder:selectablefield",
        At::Kind,
        "+kubebuilder:selectablefield:JSONPath=.spec.nothing",
    ),
    (
        "kubebuilder:metadata",
        At::Kind,
        "+kubebuilder:metadata:annotations=novalue",
    ),
    (
        "kubebuilder:validation:Minimum",
        At::Field("i32"),
        "+kubebuilder:validation:Minimum=one",
    ),
    (
        "kubebuilder:validation:Maximum",
        At::Field("i32"),
        "+kubebuilder:validation:Maximum=1..2",
    ),
    (
        "kubebuilder:validation:ExclusiveMinimum",
        At::Field("i32"),
        "+kubebuilder:validation:ExclusiveMinimum=maybe",
    ),
    (
        "kubebuilder:validation:ExclusiveMaximum",
        At::Field("i32"),
        "+kubebuilder:validation:ExclusiveMaximum=2",
    ),
    (
        "kubebuilder:validation:MultipleOf",
        At::Field("i32"),
        "+kubebuilder:validation:MultipleOf=x",
    ),
    (
        "kubebuilder:validation:MinLength",
        At::Field("String"),
        "+kubebuilder:validation:MinLength=-1",
    ),
    (
        "kubebuilder:validation:MaxLength",
        At::Field("String"),
        "+kubebuilder:validation:MaxLength=long",
    ),
    (
        "kubebuilder:validation:Pattern",
        At::Field("String"),
        "+kubebuilder:validation:Pattern=`([a-z`",
    ),
    (
        "kubebuilder:validation:MinItems",
        At::Field("Vec<String>"),
        "+kubebuilder:validation:MinItems=-2",
    ),
    (
        "kubebuilder:validation:MaxItems",
        At::Field("Vec<String>"),
        "+kubebuilder:validation:MaxItems=many",
    ),
    (
        "kubebuilder:validation:UniqueItems",
        At::Field("Vec<String>"),
        "+kubebuilder:validation:UniqueItems=perhaps",
    ),
    (
        "kubebuilder:validation:MinProperties",
        At::Field("std::collections::BTreeMap<String, String>"),
        "+kubebuilder:validation:MinProperties=-1",
    ),
    (
        "kubebuilder:validation:MaxProperties",
        At::Field("std::collections::BTreeMap<String, String>"),
        "+kubebuilder:validation:MaxProperties=1.5",
    ),
    (
        "kubebuilder:validation:Enum",
        At::Field("i32"),
        "+kubebuilder:validation:Enum=a;b",
    ),
    (
        "kubebuilder:validation:Format",
        At::Field("bool"),
        "+kubebuilder:validation:Format=date-time",
    ),
    (
        "kubebuilder:validation:Type",
        At::Field("String"),
        "+kubebuilder:validation:Type=text",
    ),
    (
        "kubebuilder:validation:XValidation",
        At::Field("String"),
        "+kubebuilder:validation:XValidation:rule=\"self ==\"",
    ),
    (
        "kubebuilder:validation:XPreserveUnknownFields",
        At::Field("String"),
        "+kubebuilder:validation:XPreserveUnknownFields=yes",
    ),
    (
        "kubebuilder:validation:XEmbeddedResource",
        At::Field("String"),
        "+kubebuilder:validation:XEmbeddedResource",
    ),
    (
        "kubebuilder:validation:XIntOrString",
        At::Field("String"),
        "+kubebuilder:validation:XIntOrString=1",
    ),
    (
        "kubebuilder:validation:Schemaless",
        At::Field("String"),
        "+kubebuilder:validation:Schemaless=true",
    ),
    (
        "kubebuilder:validation:Required",
        At::Field("String"),
        "+kubebuilder:validation:Required=no",
    ),
    (
        "kubebuilder:validation:Optional",
        At::Field("String"),
        "+kubebuilder:validation:Optional=no",
    ),
    (
        "kubebuilder:pruning:PreserveUnknownFields",
        At::Field("String"),
        "+kubebuilder:pruning:PreserveUnknownFields=1",
    ),
    (
        "kubebuilder:default",
        At::Field("i32"),
        "+kubebuilder:default=\"three\"",
    ),
    (
        "kubebuilder:example",
        At::Field("bool"),
        "+kubebuilder:example=42",
    ),
    (
        "kubebuilder:title",
        At::Field("String"),
        "+kubebuilder:title",
    ),
    ("default", At::Field("Vec<String>"), "+default={\"a\": 1}"),
    ("optional", At::Field("String"), "+optional=false"),
    ("required", At::Field("String"), "+required=false"),
    ("nullable", At::Field("String"), "+nullable=sometimes"),
    (
        "kube-codegen:schema",
        At::Field("String"),
        "+kube-codegen:schema=[\"not\", \"an object\"]",
    ),
    ("listType", At::Field("Vec<String>"), "+listType=bag"),
    ("listMapKey", At::Field("Vec<String>"), "+listMapKey=name"),
    (
        "mapType",
        At::Field("std::collections::BTreeMap<String, String>"),
        "+mapType=chunky",
    ),
    ("structType", At::Field("Inner"), "+structType=loose"),
    (
        "kubebuilder:validation:EmbeddedResource",
        At::Field("String"),
        "+kubebuilder:validation:EmbeddedResource",
    ),
    (
        "kubebuilder:validation:AtMostOneOf",
        At::Kind,
        "+kubebuilder:validation:AtMostOneOf=nothing;status",
    ),
    (
        "kubebuilder:validation:ExactlyOneOf",
        At::Kind,
        "+kubebuilder:validation:ExactlyOneOf=spec.name;status",
    ),
    (
        "kubebuilder:validation:AtLeastOneOf",
        At::Kind,
        "+kubebuilder:validation:AtLeastOneOf=spec;status",
    ),
    (
        "kubebuilder:externalDocs",
        At::Field("String"),
        "+kubebuilder:externalDocs:url=\"not a url\"",
    ),
    ("kubebuilder:skip", At::Package, "+kubebuilder:skip=true"),
    (
        "kubebuilder:object:generate",
        At::Kind,
        "+kubebuilder:object:generate=maybe",
    ),
    (
        "kubebuilder:ac:generate",
        At::Kind,
        "+kubebuilder:ac:generate=perhaps",
    ),
    (
        "kubebuilder:ac:output:package",
        At::Package,
        "+kubebuilder:ac:output:package",
    ),
    (
        "kubebuilder:rbac",
        At::Kind,
        "+kubebuilder:rbac:groups=apps,resources=deployments,verb=get",
    ),
    (
        "kubebuilder:webhook",
        At::Package,
        "+kubebuilder:webhook:path=/validate,mutating=false,failurePolicy=fail,sideEffects=None,groups=errors.example.com,resources=things,verbs=create;explode,versions=v1,name=vthing.example.com,admissionReviewVersions=v1",
    ),
    (
        "kubebuilder:webhookconfiguration",
        At::Package,
        "+kubebuilder:webhookconfiguration:mutating=perhaps",
    ),
    (
        "k8s:listType",
        At::Field("Vec<String>"),
        "+k8s:listType=bag",
    ),
    (
        "k8s:listMapKey",
        At::Field("Vec<String>"),
        "+k8s:listMapKey=name",
    ),
    ("k8s:required", At::Field("String"), "+k8s:required=true"),
    ("k8s:optional", At::Field("String"), "+k8s:optional"),
    ("k8s:enum", At::Kind, "+k8s:enum"),
    ("k8s:immutable", At::Field("String"), "+k8s:immutable=yes"),
    ("k8s:maxItems", At::Field("String"), "+k8s:maxItems=3"),
    (
        "k8s:minimum",
        At::Field("i32"),
        "+k8s:minimum=1.5 # a comment",
    ),
    ("k8s:maximum", At::Field("String"), "+k8s:maximum=3"),
];

/// The crate for one row; returns its source and the line of the bad marker. The row's
/// marker replaces the template's good one of the same name (the first would win).
fn source(name: &str, at: At, line: &str) -> (String, usize) {
    let keep = |m: &&&str| {
        let good = m.trim_start_matches('+');
        let good = good.split(['=', ':']).next().unwrap_or(good);
        let row = name.split(':').next().unwrap_or(name);
        // Same marker (or, for `genclient:*`, the `genclient` it needs: keep that one).
        !(good == name || (good == row && !name.contains(':')))
    };
    let mut s = String::new();
    let mut marker_line = 0;
    for m in ["+groupName=errors.example.com", "+versionName=v1"]
        .iter()
        .filter(|m| keep(m))
    {
        s += &format!("//! {m}\n");
    }
    if let At::Package = at {
        s += &format!("//! {line}\n");
        marker_line = s.lines().count();
    }
    s += "\nuse k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;\n\
          use kube::core::TypeMeta;\nuse serde::{Deserialize, Serialize};\n\n";
    for m in [
        "+genclient",
        "+kubebuilder:object:root=true",
        "+kubebuilder:subresource:status",
    ]
    .iter()
    .filter(|m| keep(m))
    {
        s += &format!("/// {m}\n");
    }
    if let At::Kind = at {
        s += &format!("/// {line}\n");
        marker_line = s.lines().count();
    }
    s += "#[derive(Clone, Serialize, Deserialize)]\npub struct Thing {\n    #[serde(flatten)]\n    \
          pub types: TypeMeta,\n    pub metadata: ObjectMeta,\n    pub spec: ThingSpec,\n    \
          #[serde(default, skip_serializing_if = \"Option::is_none\")]\n    \
          pub status: Option<ThingStatus>,\n}\n\n\
          #[derive(Clone, Serialize, Deserialize)]\n#[serde(rename_all = \"camelCase\")]\n\
          pub struct ThingSpec {\n    pub name: String,\n";
    if let At::Field(ty) = at {
        s += &format!("    /// {line}\n");
        marker_line = s.lines().count();
        s += &format!("    pub field: {ty},\n");
    }
    s += "}\n\n#[derive(Clone, Serialize, Deserialize)]\npub struct ThingStatus {\n    pub ready: bool,\n}\n\n\
          #[derive(Clone, Serialize, Deserialize)]\npub struct Inner {\n    pub a: i32,\n}\n";
    (s, marker_line)
}

#[test]
fn every_marker_with_a_bad_value_is_a_located_error() {
    let mut missing: Vec<&str> = MARKERS
        .iter()
        .map(|m| m.name.as_str())
        .filter(|n| !BAD.iter().any(|(name, _, _)| name == n))
        .collect();
    missing.sort();
    assert!(
        missing.is_empty(),
        "markers without a bad-value row: {missing:?}"
    );

    let mut failures = vec![];
    for (name, at, line) in BAD {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("c");
        let (src, marker_line) = source(name, *at, line);
        std::fs::create_dir_all(dir.join("src")).unwrap();
        std::fs::write(dir.join("src/lib.rs"), &src).unwrap();
        match Config::new().crate_dir(&dir).generate() {
            Err(Error::Input { diagnostics, .. }) => {
                if !diagnostics
                    .iter()
                    .any(|d| d.is_error() && d.loc.line == marker_line)
                {
                    failures.push(format!(
                        "{name}: `{line}`: errors, but none at line {marker_line}: {}",
                        diagnostics
                            .iter()
                            .map(|d| d.to_string())
                            .collect::<Vec<_>>()
                            .join("; ")
                    ));
                }
            }
            Err(other) => failures.push(format!("{name}: `{line}`: {other}")),
            Ok(_) => failures.push(format!("{name}: `{line}` was accepted:\n{src}")),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Every `kubebuilder:validation:items:<X>` form is known, and applies to array items only:
/// on a string field each is a located error that says so (the `markers_controller_gen`
/// fixture shows them taken on lists).
#[test]
fn every_items_form_applies_to_array_items() {
    let mut failures = vec![];
    for plain in ITEMS_MARKERS.iter().map(|n| n.as_str()) {
        let form = format!(
            "{ITEMS_PREFIX}{}",
            &plain["kubebuilder:validation:".len()..]
        );
        let value = match plain {
            "kubebuilder:validation:Pattern" => "=`^a`",
            "kubebuilder:validation:Enum" => "=a;b",
            "kubebuilder:validation:Format" => "=date",
            "kubebuilder:validation:Type" => "=string",
            "kubebuilder:validation:XValidation" => ":rule=\"self != ''\"",
            "kubebuilder:validation:ExclusiveMaximum"
            | "kubebuilder:validation:ExclusiveMinimum"
            | "kubebuilder:validation:UniqueItems" => "=false",
            "kubebuilder:validation:XPreserveUnknownFields"
            | "kubebuilder:validation:XEmbeddedResource"
            | "kubebuilder:validation:XIntOrString" => "",
            _ => "=1",
        };
        let line = format!("+{form}{value}");
        let (src, marker_line) = source("items", At::Field("String"), &line);
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("c");
        std::fs::create_dir_all(dir.join("src")).unwrap();
        std::fs::write(dir.join("src/lib.rs"), &src).unwrap();
        match Config::new().crate_dir(&dir).generate() {
            Err(Error::Input { diagnostics, .. })
                if diagnostics.iter().any(|d| {
                    d.is_error()
                        && d.loc.line == marker_line
                        && d.message.contains("applies to the items of an array")
                }) => {}
            Err(other) => failures.push(format!("`{line}` on a String: {other}")),
            Ok(_) => failures.push(format!("`{line}` on a String was accepted")),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
