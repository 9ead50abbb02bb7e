//! Input from elsewhere, as real APIs write it (issue 28): what controller-gen and the API
//! server take, `generate` and `import go` take too, and what they change or drop is said.
//! Each case checks the value written or the warning, where an earlier release stopped, or
//! silently wrote something else.

use std::path::{Path, PathBuf};

use kube_codegen::{Config, GoImportOptions, GoPackageInput, KubernetesVersion, import_go};

/// A crate whose `src/lib.rs` is `lib`, under a fresh temporary directory.
fn krate(name: &str, lib: &str) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join(name);
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(
        dir.join("Cargo.toml"),
        format!("[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2024\"\n"),
    )
    .unwrap();
    std::fs::write(dir.join("src/lib.rs"), lib).unwrap();
    (tmp, dir)
}

const HEAD: &str = "//! +groupName=meaning.example.com\n//! +versionName=v1\n\n\
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;\n\
    use kube::core::TypeMeta;\nuse serde::{Deserialize, Serialize};\n\n\
    /// +genclient\n/// +kubebuilder:object:root=true\n\
    #[derive(Clone, Serialize, Deserialize)]\npub struct Thing {\n    #[serde(flatten)]\n    \
    pub types: TypeMeta,\n    pub metadata: ObjectMeta,\n    pub spec: ThingSpec,\n}\n\n";

/// The CRD `generate` writes for the crate, as JSON, and the run's warnings.
fn crd(dir: &Path) -> (serde_json::Value, String) {
    let generated = Config::from_crate(dir)
        .unwrap()
        .emit_rust(false)
        .generate()
        .unwrap_or_else(|e| panic!("{e}"));
    let file = generated
        .files
        .iter()
        .find(|f| {
            f.path.extension().is_some_and(|e| e == "yaml")
                && f.contents.contains("kind: CustomResourceDefinition")
        })
        .expect("a CRD");
    let yaml: serde_yaml::Value = serde_yaml::from_str(&file.contents).unwrap();
    (
        serde_json::to_value(yaml).unwrap(),
        generated.render_warnings(),
    )
}

fn spec_props(crd: &serde_json::Value) -> &serde_json::Value {
    &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
}

/// `Enum=a;b;""` keeps the empty value: Go clients send `""` for a field without
/// `omitempty`, and an enum without it makes the API server refuse them.
#[test]
fn an_enum_keeps_its_empty_value() {
    let lib = format!(
        "{HEAD}#[derive(Clone, Serialize, Deserialize)]\npub struct ThingSpec {{\n    \
         /// +kubebuilder:validation:Enum=a;b;\"\"\n    pub mode: String,\n    \
         /// +kubebuilder:validation:Enum=a;b;\n    pub trailing: String,\n}}\n"
    );
    let (_tmp, dir) = krate("enums", &lib);
    let (crd, _) = crd(&dir);
    let props = spec_props(&crd);
    assert_eq!(props["mode"]["enum"], serde_json::json!(["a", "b", ""]));
    // An empty item without quotes is no value (a trailing `;`).
    assert_eq!(props["trailing"]["enum"], serde_json::json!(["a", "b"]));
}

/// controller-gen ignores `+kubebuilder:default` on a type (a field marker): applying it
/// would default every field of that type. Ignored here too, with a warning.
#[test]
fn a_default_on_a_type_is_ignored_with_a_warning() {
    let lib = format!(
        "{HEAD}#[derive(Clone, Serialize, Deserialize)]\npub struct ThingSpec {{\n    \
         pub mode: Mode,\n    /// +kubebuilder:default=b\n    pub other: Mode,\n}}\n\n\
         /// +kubebuilder:default=a\npub type Mode = String;\n"
    );
    let (_tmp, dir) = krate("defaults", &lib);
    let (crd, warnings) = crd(&dir);
    let props = spec_props(&crd);
    assert!(props["mode"].get("default").is_none(), "{}", props["mode"]);
    assert_eq!(props["other"]["default"], "b");
    assert!(
        warnings.contains("on a type is ignored, as controller-gen ignores it"),
        "{warnings}"
    );
}

/// A Go doc line that starts with `/` (`/// ALB keeps ...`) stays a doc line in the port
/// (`////` would be a plain comment in Rust) and the description is Go's text.
#[test]
fn a_go_doc_line_starting_with_a_slash_keeps_its_description() {
    let go = "// +groupName=meaning.example.com\n// +versionName=v1\npackage v1\n\n\
        import metav1 \"k8s.io/apimachinery/pkg/apis/meta/v1\"\n\n\
        // +kubebuilder:object:root=true\ntype Thing struct {\n\
        \tmetav1.TypeMeta `json:\",inline\"`\n\
        \tmetav1.ObjectMeta `json:\"metadata,omitempty\"`\n\
        \tSpec ThingSpec `json:\"spec\"`\n}\n\n\
        type ThingSpec struct {\n\
        \t/// ALB keeps the connection open.\n\
        \tIdle string `json:\"idle\"`\n}\n";
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("ported");
    let imported = import_go(
        &[GoPackageInput {
            dir: tmp.path().join("v1"),
            files: vec![(tmp.path().join("v1/types.go"), go.to_owned())],
            import_path: Some("meaning.example.com/api/v1".into()),
        }],
        &GoImportOptions {
            out: out.clone(),
            crate_name: "ported".into(),
            kubernetes: KubernetesVersion::NEWEST,
            runtime: kube_codegen::RuntimeSource::registry(),
            crd: Default::default(),
            conversion_hub: false,
        },
    )
    .unwrap_or_else(|e| panic!("{e}"));
    imported.write().unwrap();
    let rust = imported
        .files
        .iter()
        .find(|f| f.path.ends_with("types.rs"))
        .expect("types.rs");
    assert!(
        rust.contents
            .contains("/// / ALB keeps the connection open."),
        "{}",
        rust.contents
    );
    let (crd, _) = crd(&out);
    assert_eq!(
        spec_props(&crd)["idle"]["description"],
        "/ ALB keeps the connection open."
    );
}

/// `import go` of Go packages, each a directory below a temporary root (import path
/// `meaning.example.com/<dir>`) with its files (name, text), written into `<root>/ported`
/// (the root lives as long as the returned guard).
fn import_packages(
    packages: &[(&str, &[(&str, &str)])],
) -> (tempfile::TempDir, PathBuf, kube_codegen::GoImported) {
    import_packages_with(packages, false)
}

/// [`import_packages`], with `import go --conversion-hub` when `conversion_hub`.
fn import_packages_with(
    packages: &[(&str, &[(&str, &str)])],
    conversion_hub: bool,
) -> (tempfile::TempDir, PathBuf, kube_codegen::GoImported) {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("ported");
    let inputs: Vec<GoPackageInput> = packages
        .iter()
        .map(|(dir, files)| GoPackageInput {
            dir: tmp.path().join(dir),
            files: files
                .iter()
                .map(|(n, t)| (tmp.path().join(dir).join(n), (*t).to_owned()))
                .collect(),
            import_path: Some(format!("meaning.example.com/{dir}")),
        })
        .collect();
    let imported = import_go(
        &inputs,
        &GoImportOptions {
            out: out.clone(),
            crate_name: "ported".into(),
            kubernetes: KubernetesVersion::NEWEST,
            runtime: kube_codegen::RuntimeSource::registry(),
            crd: Default::default(),
            conversion_hub,
        },
    )
    .unwrap_or_else(|e| panic!("{e}"));
    imported.write().unwrap_or_else(|e| panic!("{e}"));
    (tmp, out, imported)
}

/// `import go` of `files` (name, text) as one package, then `generate` on the port.
fn import_and_generate(
    files: &[(&str, &str)],
) -> (kube_codegen::GoImported, serde_json::Value, String) {
    let (_tmp, out, imported) = import_packages(&[("api/v1", files)]);
    let (crd, warnings) = crd(&out);
    (imported, crd, warnings)
}

const GO_KIND: &str = "// +groupName=meaning.example.com\npackage v1\n\n\
    import metav1 \"k8s.io/apimachinery/pkg/apis/meta/v1\"\n\n\
    // +kubebuilder:object:root=true\ntype Thing struct {\n\
    \tmetav1.TypeMeta `json:\",inline\"`\n\
    \tmetav1.ObjectMeta `json:\"metadata,omitempty\"`\n\
    \tSpec ThingSpec `json:\"spec\"`\n}\n\n\
    type ThingSpec struct {\n\
    \tName string `json:\"name\"`\n\
    \t// Cache is the controller's, not the API's.\n\
    \tCache map[string]any `json:\"-\"`\n}\n";

/// controller-gen walks only what the kinds reach: register.go's unexported helper (with
/// a `runtime.Object` field, which has no port) and a type nothing uses with an interface
/// field are left out, said in the summary, instead of stopping the import. A field that
/// is not serialized (`json:"-"`) is not part of the schema, whatever its type.
#[test]
fn what_no_kind_reaches_does_not_stop_an_import() {
    let register = "package v1\n\n\
        import \"k8s.io/apimachinery/pkg/runtime\"\n\n\
        type typeInfo struct {\n\tItemType runtime.Object\n}\n\n\
        // Hook is the controller's; no kind holds one.\n\
        type Hook struct {\n\tRun Runner `json:\"run\"`\n}\n\n\
        type Runner interface{ Run() }\n";
    let (imported, crd, _) =
        import_and_generate(&[("thing_types.go", GO_KIND), ("register.go", register)]);
    assert!(
        imported
            .summary
            .contains("not ported, as no kind reaches them: v1.typeInfo (unexported); v1.Hook ("),
        "{}",
        imported.summary
    );
    let props = spec_props(&crd);
    assert!(
        props.get("cache").is_none() && props["name"]["type"] == "string",
        "{props}"
    );
    let warnings = imported.render_warnings();
    assert!(
        warnings.contains("field `Cache` is not ported: it is not serialized (`json:\"-\"`)"),
        "{warnings}"
    );
}

/// A printer column to a field the schema lacks: the API server and controller-gen take
/// it (kubectl shows the column empty), so it is a warning, not an error.
#[test]
fn a_printer_column_to_a_missing_field_is_a_warning() {
    let lib = HEAD.replace(
        "/// +genclient\n",
        "/// +genclient\n/// +kubebuilder:printcolumn:name=\"Replicas\",type=integer,JSONPath=\".spec.replica\"\n",
    ) + "#[derive(Clone, Serialize, Deserialize)]\npub struct ThingSpec {\n    pub replicas: i32,\n}\n";
    let (_tmp, dir) = krate("columns", &lib);
    let (crd, warnings) = crd(&dir);
    assert_eq!(
        crd["spec"]["versions"][0]["additionalPrinterColumns"][0]["jsonPath"],
        ".spec.replica"
    );
    assert!(
        warnings.contains(
            "printcolumn `Replicas` JSONPath `.spec.replica`: `.spec` has no field `replica`"
        ),
        "{warnings}"
    );
}

/// The importer never writes Rust that `generate` refuses: a marker controller-gen
/// ignores (a package marker on a struct, as kubebuilder's CronJob tutorial writes
/// `+versionName`; a typo such as `+optional.`; `UniqueItems:true` with a colon) is carried
/// as a plain comment, with a warning, and the port generates.
#[test]
fn markers_controller_gen_ignores_are_carried_as_comments() {
    let go = "// +groupName=meaning.example.com\npackage v1\n\n\
        import metav1 \"k8s.io/apimachinery/pkg/apis/meta/v1\"\n\n\
        // +kubebuilder:object:root=true\n// +versionName=v1\ntype Thing struct {\n\
        \tmetav1.TypeMeta `json:\",inline\"`\n\
        \tmetav1.ObjectMeta `json:\"metadata,omitempty\"`\n\
        \tSpec ThingSpec `json:\"spec\"`\n}\n\n\
        type ThingSpec struct {\n\
        \t// +optional.\n\
        \tName string `json:\"name,omitempty\"`\n\
        \t// +kubebuilder:validation:UniqueItems:true\n\
        \tTags []string `json:\"tags,omitempty\"`\n}\n";
    let (imported, crd, _) = import_and_generate(&[("types.go", go)]);
    let rust = &imported
        .files
        .iter()
        .find(|f| f.path.ends_with("types.rs"))
        .expect("types.rs")
        .contents;
    for marker in [
        "+versionName=v1",
        "+optional.",
        "+kubebuilder:validation:UniqueItems:true",
    ] {
        assert!(
            rust.contains(&format!("// Go marker `{marker}` not carried over")),
            "{marker}:\n{rust}"
        );
        assert!(
            !rust.contains(&format!("/// {marker}")),
            "{marker} is still a doc marker:\n{rust}"
        );
    }
    let warnings = imported.render_warnings();
    assert_eq!(
        warnings
            .matches("is not carried over, as controller-gen ignores it")
            .count(),
        3,
        "{warnings}"
    );
    let props = spec_props(&crd);
    assert!(
        props["tags"].get("uniqueItems").is_none(),
        "{}",
        props["tags"]
    );
}

/// Other tools' markers (the Go toolchain's `+patchMergeKey`, `+patchStrategy`,
/// `+protobuf`, `+enum`, `+featureGate`; kubebuilder's `+kubebuilder:docs-gen:` and
/// `+kubebuilder:scaffold:`, which its CronJob tutorial writes) are known, from the list
/// `generate` reads: the port keeps them as written, and neither `import go` nor `generate`
/// says a word (each was a warning of `generate`). A marker kube-codegen does not know in a
/// namespace it reads (`+kubebuilder:validation:MinValue`, validation-gen's `+k8s:maxLength`)
/// is one `generate` refuses, so the port carries it as a comment, with a warning at the Go
/// declaration that says what was meant.
#[test]
fn other_tools_markers_are_quiet_and_unknown_ones_of_ours_carried_as_comments() {
    let go = "// +groupName=meaning.example.com\n\
        // +kubebuilder:docs-gen:collapse=Apache License\npackage v1\n\n\
        import metav1 \"k8s.io/apimachinery/pkg/apis/meta/v1\"\n\n\
        // +kubebuilder:object:root=true\n// +kubebuilder:docs-gen:collapse=Thing\n\
        type Thing struct {\n\
        \tmetav1.TypeMeta `json:\",inline\"`\n\
        \tmetav1.ObjectMeta `json:\"metadata,omitempty\"`\n\
        \tSpec ThingSpec `json:\"spec\"`\n}\n\n\
        // +enum\ntype Mode string\n\n\
        type ThingSpec struct {\n\
        \t// +optional\n\t// +patchMergeKey=name\n\t// +patchStrategy=merge\n\
        \t// +listType=map\n\t// +listMapKey=name\n\
        \tPorts []Port `json:\"ports,omitempty\" patchStrategy:\"merge\" patchMergeKey:\"name\" protobuf:\"bytes,1,rep,name=ports\"`\n\
        \t// +optional\n\t// +featureGate=ThingModes\n\
        \tMode Mode `json:\"mode,omitempty\"`\n\
        \t// +kubebuilder:validation:MinValue=1\n\
        \tReplicas int32 `json:\"replicas\"`\n\
        \t// +optional\n\t// +k8s:maxLength=3\n\
        \tCode string `json:\"code,omitempty\"`\n}\n\n\
        type Port struct {\n\
        \t// +protobuf=true\n\tName string `json:\"name\"`\n}\n\n\
        // +kubebuilder:scaffold:types\n";
    let (imported, crd, generate_warnings) = import_and_generate(&[("types.go", go)]);
    let rust = &imported
        .files
        .iter()
        .find(|f| f.path.ends_with("types.rs"))
        .expect("types.rs")
        .contents;
    for quiet in [
        "+patchMergeKey=name",
        "+patchStrategy=merge",
        "+featureGate=ThingModes",
        "+protobuf=true",
        "+enum",
        "+kubebuilder:docs-gen:collapse=Thing",
    ] {
        assert!(rust.contains(&format!("/// {quiet}\n")), "{quiet}:\n{rust}");
    }
    for carried in ["+kubebuilder:validation:MinValue=1", "+k8s:maxLength=3"] {
        assert!(
            rust.contains(&format!("// Go marker `{carried}` not carried over")),
            "{carried}:\n{rust}"
        );
        assert!(
            !rust.contains(&format!("/// {carried}")),
            "{carried}:\n{rust}"
        );
    }
    let warnings = imported.render_warnings();
    assert_eq!(imported.warnings.len(), 2, "{warnings}");
    assert!(
        warnings.contains("did you mean `+kubebuilder:validation:Minimum`?")
            && warnings.contains("for this one write `+kubebuilder:validation:MaxLength`")
            && warnings.contains("types.go:"),
        "{warnings}"
    );
    assert!(
        generate_warnings.is_empty(),
        "generate warned:\n{generate_warnings}"
    );
    let props = spec_props(&crd);
    assert!(props["replicas"].get("minimum").is_none(), "{props}");
}

/// controller-gen's `crd:maxDescLen=0` writes no description at all, where an earlier
/// release wrote `description: ''` on every node.
#[test]
fn max_description_len_zero_writes_no_description() {
    let lib = format!(
        "{HEAD}/// The spec.\n#[derive(Clone, Serialize, Deserialize)]\npub struct ThingSpec {{\n    \
         /// A name.\n    pub name: String,\n    \
         /// The pod to run.\n    pub pod: k8s_openapi::api::core::v1::PodTemplateSpec,\n}}\n"
    );
    let (_tmp, dir) = krate("descriptions", &lib);
    let generated = Config::from_crate(&dir)
        .unwrap()
        .emit_rust(false)
        .max_description_len(0)
        .generate()
        .unwrap_or_else(|e| panic!("{e}"));
    let crd = generated
        .files
        .iter()
        .find(|f| f.contents.contains("kind: CustomResourceDefinition"))
        .expect("a CRD");
    assert!(!crd.contents.contains("description"), "{}", crd.contents);
}

/// A Kubernetes type's transition rules under a list the API server cannot correlate
/// (an atomic list) are left out, as the server refuses them there, and the run says so.
#[test]
fn transition_rules_left_out_under_an_atomic_list_are_said() {
    let lib = format!(
        "{HEAD}#[derive(Clone, Serialize, Deserialize)]\npub struct ThingSpec {{\n    \
         pub jobs: Vec<k8s_openapi::api::batch::v1::JobSchedulingConfiguration>,\n}}\n"
    );
    let (_tmp, dir) = krate("transitions", &lib);
    let (crd, warnings) = crd(&dir);
    let item = &spec_props(&crd)["jobs"]["items"];
    assert!(
        !item.to_string().contains("oldSelf"),
        "no transition rule under the atomic list: {item}"
    );
    assert!(
        warnings.contains(
            "the transition rule `self == oldSelf` of an embedded Kubernetes type at `.spec.jobs[*].disruptionMode` in Thing is left out"
        ),
        "{warnings}"
    );
}

/// controller-gen's `crd:generateEmbeddedObjectMeta=true`: a pod template's `metadata`
/// gets the fields a CRD may validate, so a CEL rule over its labels compiles; without it
/// the rule is refused, as the API server refuses controller-gen's CRD.
#[test]
fn generate_embedded_object_meta_lets_rules_read_a_templates_labels() {
    let lib = format!(
        "{HEAD}#[derive(Clone, Serialize, Deserialize)]\npub struct ThingSpec {{\n    \
         /// +kubebuilder:validation:XValidation:rule=\"has(self.metadata.labels)\",message=\"labels\"\n    \
         pub template: k8s_openapi::api::core::v1::PodTemplateSpec,\n}}\n"
    );
    let (_tmp, dir) = krate("objectmeta", &lib);
    let refused = Config::from_crate(&dir)
        .unwrap()
        .emit_rust(false)
        .generate()
        .expect_err("the rule reads a field a bare metadata object lacks");
    assert!(refused.to_string().contains("labels"), "{refused}");
    let generated = Config::from_crate(&dir)
        .unwrap()
        .emit_rust(false)
        .generate_embedded_object_meta(true)
        .generate()
        .unwrap_or_else(|e| panic!("{e}"));
    let crd = generated
        .files
        .iter()
        .find(|f| f.contents.contains("kind: CustomResourceDefinition"))
        .expect("a CRD");
    let yaml: serde_yaml::Value = serde_yaml::from_str(&crd.contents).unwrap();
    let crd = serde_json::to_value(yaml).unwrap();
    let meta = &spec_props(&crd)["template"]["properties"]["metadata"];
    assert_eq!(
        meta["properties"]["labels"],
        serde_json::json!({"type": "object", "additionalProperties": {"type": "string"}})
    );
    assert_eq!(
        meta["properties"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        ["annotations", "finalizers", "labels", "name", "namespace"]
    );
    // The kind's own metadata stays the API server's.
    assert_eq!(
        crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["metadata"],
        serde_json::json!({"type": "object"})
    );
}

/// `+kubebuilder:validation:Format` on a field replaces the format of its Go type, as
/// controller-gen applies a field's markers over its type's schema (MetalLB's `uint32` AS
/// numbers are `format: int64`).
#[test]
fn a_format_marker_replaces_the_go_types_format() {
    let go = GO_KIND.replace(
        "\tName string `json:\"name\"`\n",
        "\tName string `json:\"name\"`\n\
         \t// +kubebuilder:validation:Format=int64\n\tASN uint32 `json:\"asn\"`\n\
         \tPort uint32 `json:\"port\"`\n",
    );
    let (_, crd, _) = import_and_generate(&[("thing_types.go", &go)]);
    let props = spec_props(&crd);
    assert_eq!(props["asn"]["format"], "int64", "{props}");
    assert_eq!(props["port"]["format"], "int32", "{props}");
}

/// A Kubernetes struct inlined into an API type (Contour's `DetailedCondition` embeds
/// `metav1.Condition` through an alias, `json:",inline"`): its properties and required
/// fields become the type's own, as controller-gen writes them.
#[test]
fn an_inlined_kubernetes_struct_brings_its_properties() {
    let go = GO_KIND.replace(
        "\tName string `json:\"name\"`\n",
        "\tName string `json:\"name\"`\n\tConditions []Detailed `json:\"conditions,omitempty\"`\n",
    ) + "\ntype Condition = metav1.Condition\n\n\
         type Detailed struct {\n\tCondition `json:\",inline\"`\n\
         \t// Errors are the details.\n\tErrors []string `json:\"errors,omitempty\"`\n}\n";
    let (_, crd, _) = import_and_generate(&[("thing_types.go", &go)]);
    let items = &spec_props(&crd)["conditions"]["items"];
    for p in [
        "type",
        "status",
        "reason",
        "message",
        "lastTransitionTime",
        "errors",
    ] {
        assert!(items["properties"].get(p).is_some(), "{p}: {items}");
    }
    let required: Vec<&str> = items["required"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(
        required.contains(&"type") && required.contains(&"status"),
        "{required:?}"
    );
}

/// A pattern in RE2 syntax (the API server's Go regexps) is taken as RE2 reads it: `[`
/// inside a character class is a literal there (Contour's header-name pattern), not the
/// nested class of Rust's regex crate.
#[test]
fn a_pattern_is_read_as_re2() {
    let pattern = r#"^[^()<>@,;:\\"\/[\]?={} \t\x7f]+$"#;
    let lib = format!(
        "{HEAD}#[derive(Clone, Serialize, Deserialize)]\npub struct ThingSpec {{\n    \
         /// +kubebuilder:validation:Pattern=`{pattern}`\n    pub header: String,\n    \
         /// +kubebuilder:validation:Pattern=`^[[:alpha:]][a&&b~~c]$`\n    pub posix: String,\n}}\n"
    );
    let (_tmp, dir) = krate("patterns", &lib);
    let (crd, _) = crd(&dir);
    let props = spec_props(&crd);
    assert_eq!(props["header"]["pattern"], pattern);
    assert_eq!(props["posix"]["pattern"], "^[[:alpha:]][a&&b~~c]$");
}

/// Enum values quoted one by one (`Enum="5xx";gateway-error`, `Enum="gzip";"brotli"`, as
/// Contour writes them) are a list of values, each unquoted, as controller-gen reads them.
#[test]
fn enum_values_quoted_one_by_one() {
    let lib = format!(
        "{HEAD}#[derive(Clone, Serialize, Deserialize)]\npub struct ThingSpec {{\n    \
         /// +kubebuilder:validation:Enum=\"5xx\";gateway-error;reset\n    pub retry: String,\n    \
         /// +kubebuilder:validation:Enum=\"gzip\";\"brotli\"\n    pub compression: String,\n}}\n"
    );
    let (_tmp, dir) = krate("quoted_enums", &lib);
    let (crd, _) = crd(&dir);
    let props = spec_props(&crd);
    assert_eq!(
        props["retry"]["enum"],
        serde_json::json!(["5xx", "gateway-error", "reset"])
    );
    assert_eq!(
        props["compression"]["enum"],
        serde_json::json!(["gzip", "brotli"])
    );
}

/// Go newer than the importer's grammar in a function body (Go 1.26's `new(expr)`, as
/// cluster-api's conversions write it) does not stop an import: it reads no code.
#[test]
fn go_code_in_function_bodies_is_not_read() {
    let conversion = "package v1\n\n\
        func maxReplicas() *int32 {\n\treturn new(int32(5))\n}\n";
    let (_, crd, _) =
        import_and_generate(&[("thing_types.go", GO_KIND), ("conversion.go", conversion)]);
    assert_eq!(spec_props(&crd)["name"]["type"], "string");
}

/// A field of a struct shadowing one of the same JSON name in a struct it inlines (Go's
/// encoding/json takes the shallower; prometheus-operator's `ProbeSpec.Authorization` over
/// its inlined `HTTPConfig`'s): one property, merged as controller-gen merges them (the
/// inlined field's description), not an error.
#[test]
fn a_field_shadowing_an_inlined_one_is_one_property() {
    let go = GO_KIND.replace(
        "\tName string `json:\"name\"`\n",
        "\tName string `json:\"name\"`\n\
         \t// auth section for this endpoint\n\tAuth *string `json:\"auth,omitempty\"`\n\
         \tClient `json:\",inline\"`\n",
    ) + "\ntype Client struct {\n\t// auth configures the credentials.\n\
         \t// +kubebuilder:validation:MinLength=1\n\tAuth *string `json:\"auth,omitempty\"`\n\
         \t// insecure skips TLS checks.\n\tInsecure bool `json:\"insecure,omitempty\"`\n}\n";
    let (_, crd, _) = import_and_generate(&[("thing_types.go", &go)]);
    let props = spec_props(&crd);
    assert_eq!(
        props["auth"]["description"],
        "auth configures the credentials."
    );
    assert_eq!(props["auth"]["minLength"], 1, "{props}");
    assert_eq!(props["insecure"]["type"], "boolean");
}

/// A directive comment in a doc (`//nolint:kubeapilinter`, as prometheus-operator writes
/// them) is no part of the description, as go/ast (so controller-gen) leaves it out; and a
/// struct inlining `metav1.TypeMeta` has `apiVersion` and `kind`, as controller-gen writes.
#[test]
fn directives_stay_out_of_descriptions_and_type_meta_inlines() {
    let go = GO_KIND.replace(
        "\tName string `json:\"name\"`\n",
        "\t// params to append.\n\t// +optional\n\t//nolint:kubeapilinter\n\
         \tParams map[string]string `json:\"params,omitempty\"`\n\
         \tTemplate Embedded `json:\"template\"`\n",
    ) + "\ntype Embedded struct {\n\tmetav1.TypeMeta `json:\",inline\"`\n\
         \tSize string `json:\"size\"`\n}\n";
    let (_, crd, _) = import_and_generate(&[("thing_types.go", &go)]);
    let props = spec_props(&crd);
    assert_eq!(props["params"]["description"], "params to append.");
    let template = &props["template"]["properties"];
    assert_eq!(template["apiVersion"]["type"], "string", "{template}");
    assert_eq!(template["kind"]["type"], "string", "{template}");
}

/// A status subresource on a kind without a `status` field (cluster-api's
/// ClusterResourceSetBinding v1beta1): controller-gen writes it and the API server takes
/// it, so it is written, with a warning.
#[test]
fn a_status_subresource_without_status_is_a_warning() {
    let lib = HEAD.replace(
        "/// +genclient\n",
        "/// +genclient\n/// +kubebuilder:subresource:status\n",
    ) + "#[derive(Clone, Serialize, Deserialize)]\npub struct ThingSpec {\n    pub replicas: i32,\n}\n";
    let (_tmp, dir) = krate("status_without_status", &lib);
    let (crd, warnings) = crd(&dir);
    assert_eq!(
        crd["spec"]["versions"][0]["subresources"],
        serde_json::json!({"status": {}})
    );
    assert!(
        warnings.contains("status subresource on `Thing`, which has no `status` field"),
        "{warnings}"
    );
}

/// Kind markers `generate` refuses where controller-gen goes on are carried as comments,
/// with a warning: `+k8s:conversion-gen=false` on a kind (cluster-api's MachinePool), and
/// a root object in a package without `+groupName` (cluster-api's runtime hook requests:
/// controller-gen writes no CRD for them).
#[test]
fn kind_markers_generate_refuses_are_comments() {
    let go = GO_KIND.replace(
        "// +kubebuilder:object:root=true\ntype Thing",
        "// +kubebuilder:object:root=true\n// +k8s:conversion-gen=false\ntype Thing",
    );
    let (imported, thing, _) = import_and_generate(&[("thing_types.go", &go)]);
    assert_eq!(thing["spec"]["names"]["kind"], "Thing");
    let w = imported.render_warnings();
    assert!(
        w.contains("`+k8s:conversion-gen=false` is not carried over"),
        "{w}"
    );

    let hooks = "package hooks\n\n\
        import metav1 \"k8s.io/apimachinery/pkg/apis/meta/v1\"\n\n\
        // +kubebuilder:object:root=true\n\
        type DiscoveryRequest struct {\n\
        \tmetav1.TypeMeta `json:\",inline\"`\n\
        \tName string `json:\"name\"`\n}\n";
    let (_tmp, out, imported) = import_packages(&[
        ("api/v1", &[("thing_types.go", GO_KIND)]),
        ("api/hooks", &[("discovery.go", hooks)]),
    ]);
    let w = imported.render_warnings();
    assert!(
        w.contains("its package has no `+groupName`, so controller-gen writes no CRD for `DiscoveryRequest`"),
        "{w}"
    );
    let (crd, _) = crd(&out);
    assert_eq!(crd["spec"]["names"]["kind"], "Thing");
}

/// A marker between two paragraphs of a doc (prometheus-operator's `// +optional` between
/// blank lines) leaves one paragraph break in the description, as go/ast reduces runs of
/// blank lines for controller-gen.
#[test]
fn a_marker_between_paragraphs_leaves_one_break() {
    let lib = format!(
        "{HEAD}#[derive(Clone, Serialize, Deserialize)]\npub struct ThingSpec {{\n    \
         /// Cannot be set with `basicAuth`.\n    ///\n    /// +optional\n    ///\n    \
         /// Deprecated: use `authorization`.\n    pub token: Option<String>,\n}}\n"
    );
    let (_tmp, dir) = krate("paragraphs", &lib);
    let (crd, _) = crd(&dir);
    assert_eq!(
        spec_props(&crd)["token"]["description"],
        "Cannot be set with `basicAuth`.\n\nDeprecated: use `authorization`."
    );
}

/// Go's `json:"metadata"` without omitempty: controller-gen requires metadata (Contour's
/// HTTPProxy, cluster-api's MachineDrainRule), and so does the port; with omitempty it
/// does not.
#[test]
fn metadata_without_omitempty_is_required() {
    let go = GO_KIND.replace("`json:\"metadata,omitempty\"`", "`json:\"metadata\"`");
    let (_, crd, _) = import_and_generate(&[("thing_types.go", &go)]);
    let schema = &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"];
    assert_eq!(schema["required"], serde_json::json!(["metadata", "spec"]));
    let (_, crd, _) = import_and_generate(&[("thing_types.go", GO_KIND)]);
    let schema = &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"];
    assert_eq!(schema["required"], serde_json::json!(["spec"]));
}

/// A kind's resource is named by controller-gen's plural (flect's), where it differs from
/// kube-codegen's own: KEDA's `WithTriggers` is `withtriggers`, not `withtriggerses` (and a
/// `+kubebuilder:resource` marker of its own gets the path).
#[test]
fn a_kind_gets_controller_gens_plural() {
    let go = GO_KIND.replace("type Thing struct", "type WithTriggers struct")
        + "\n// +kubebuilder:object:root=true\n// +kubebuilder:resource:shortName=st\n\
           type Settings struct {\n\tmetav1.TypeMeta `json:\",inline\"`\n\
           \tmetav1.ObjectMeta `json:\"metadata,omitempty\"`\n\tSpec ThingSpec `json:\"spec\"`\n}\n";
    let (_tmp, out, _) = import_packages(&[("api/v1", &[("types.go", &go)])]);
    let generated = Config::from_crate(&out)
        .unwrap()
        .emit_rust(false)
        .generate()
        .unwrap_or_else(|e| panic!("{e}"));
    let names: Vec<String> = generated
        .files
        .iter()
        .filter(|f| f.contents.contains("kind: CustomResourceDefinition"))
        .map(|f| f.path.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert!(
        names.contains(&"meaning.example.com_withtriggers.yaml".to_owned()),
        "{names:?}"
    );
    assert!(
        names.contains(&"meaning.example.com_settings.yaml".to_owned()),
        "{names:?}"
    );
}

/// A field marked both `+required` and `+optional` (Envoy Gateway's ancestor conditions):
/// controller-gen takes `+optional` by its precedence, and so does the port, with a
/// warning; and a root type without ObjectMeta (Envoy Gateway's `EnvoyGateway` config
/// file) is no kind, as controller-gen writes no CRD for it.
#[test]
fn requiredness_by_controller_gens_precedence_and_root_types_without_metadata() {
    let go = GO_KIND.replace(
        "\tName string `json:\"name\"`\n",
        "\tName string `json:\"name\"`\n\t// conditions of the thing.\n\t// +required\n\
         \t// +optional\n\tConditions []string `json:\"conditions,omitempty\"`\n",
    ) + "\n// +kubebuilder:object:root=true\ntype Config struct {\n\
         \tmetav1.TypeMeta `json:\",inline\"`\n\tLevel string `json:\"level\"`\n}\n";
    let (imported, crd, _) = import_and_generate(&[("thing_types.go", &go)]);
    let spec = &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"];
    assert_eq!(spec["required"], serde_json::json!(["name"]), "{spec}");
    let w = imported.render_warnings();
    assert!(
        w.contains("field `Conditions` is marked both required and optional: `+required` is not carried over"),
        "{w}"
    );
    assert!(
        w.contains("`Config` does not embed both metav1.TypeMeta and metav1.ObjectMeta"),
        "{w}"
    );
}

/// What Envoy Gateway's API writes, as controller-gen reads it: a rule ending in a space is
/// kept as written (it is the rule's identity); a first doc line indented by a space keeps
/// it; a Pattern on a Quantity goes beside the Quantity's own (`allOf`); an Enum on a named
/// string type wins over the field's.
#[test]
fn rules_docs_and_named_types_as_controller_gen_reads_them() {
    let go = GO_KIND.replace(
        "\tName string `json:\"name\"`\n",
        "\t//  The idle timeout, indented.\n\t// +optional\n\tIdle *string `json:\"idle,omitempty\"`\n\
         \t// +kubebuilder:validation:XIntOrString\n\
         \t// +kubebuilder:validation:Pattern=\"^[1-9]+[0-9]*$\"\n\
         \tLimit resource.Quantity `json:\"limit\"`\n\
         \t// +kubebuilder:validation:Enum=HTTP;Image;ConfigMap\n\tSource SourceType `json:\"source\"`\n\
         \tName string `json:\"name\"`\n",
    )
    .replace(
        "type ThingSpec struct",
        "// +kubebuilder:validation:XValidation:rule=\"has(self.name) ? self.name != '' : true \",message=\"named\"\n\
         type ThingSpec struct",
    )
    .replace(
        "import metav1 \"k8s.io/apimachinery/pkg/apis/meta/v1\"",
        "import (\n\t\"k8s.io/apimachinery/pkg/api/resource\"\n\tmetav1 \"k8s.io/apimachinery/pkg/apis/meta/v1\"\n)",
    ) + "\n// +kubebuilder:validation:Enum=HTTP;Image\ntype SourceType string\n";
    let (_, crd, _) = import_and_generate(&[("thing_types.go", &go)]);
    let spec = &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"];
    assert_eq!(
        spec["x-kubernetes-validations"][0]["rule"], "has(self.name) ? self.name != '' : true ",
        "{spec}"
    );
    let props = &spec["properties"];
    assert_eq!(props["idle"]["description"], " The idle timeout, indented.");
    let patterns: Vec<&str> = props["limit"]["allOf"]
        .as_array()
        .unwrap_or_else(|| panic!("{}", props["limit"]))
        .iter()
        .map(|p| p["pattern"].as_str().unwrap())
        .collect();
    assert_eq!(patterns.len(), 2, "{patterns:?}");
    assert!(patterns.contains(&"^[1-9]+[0-9]*$"), "{patterns:?}");
    assert_eq!(
        props["source"]["enum"],
        serde_json::json!(["HTTP", "Image"])
    );
}

/// A package without a group named `apis` (network-policy-api's `apis/doc.go`, above its
/// versions) beside API packages, whose modules live under `apis`: it gets another name,
/// and the crate is written.
#[test]
fn a_package_named_apis_beside_api_packages() {
    let (_tmp, out, _) = import_packages(&[
        (
            "apis",
            &[(
                "doc.go",
                "// Package apis holds the versions.\npackage apis\n",
            )],
        ),
        ("apis/v1", &[("types.go", GO_KIND)]),
    ]);
    assert!(out.join("src/apis_2/mod.rs").is_file());
    let (crd, _) = crd(&out);
    assert_eq!(crd["spec"]["names"]["kind"], "Thing");
}

/// A marker of kinds only on a type that is none (KubeRay's `+kubebuilder:printcolumn` on
/// `RayServiceStatuses`, External Secrets' on `PushSecretList`): controller-gen ignores it there, so the port carries it as a
/// comment, with a warning, and generates.
#[test]
fn a_kind_marker_on_a_type_that_is_none_is_a_comment() {
    let go = GO_KIND.replace(
        "type ThingSpec struct",
        "// +kubebuilder:printcolumn:name=\"Ready\",type=string,JSONPath=\".status.ready\"\n\
         type ThingSpec struct",
    ) + "\n// +kubebuilder:object:root=true\n\
         // +kubebuilder:printcolumn:name=\"Ready\",type=string,JSONPath=\".status.ready\"\n\
         type ThingList struct {\n\tmetav1.TypeMeta `json:\",inline\"`\n\
         \tmetav1.ListMeta `json:\"metadata,omitempty\"`\n\tItems []Thing `json:\"items\"`\n}\n";
    let (imported, crd, _) = import_and_generate(&[("thing_types.go", &go)]);
    assert_eq!(crd["spec"]["names"]["kind"], "Thing");
    let w = imported.render_warnings();
    assert!(
        w.contains("it applies to a kind only, and `ThingSpec` is none"),
        "{w}"
    );
    assert!(
        w.contains("it applies to a kind only, and `ThingList` is none"),
        "{w}"
    );
}

/// A marker line inside a `/* */` comment (External Secrets' `+kubebuilder:validation:
/// Enum=DSM`): controller-gen does not read it as a marker, so the port carries it as a
/// comment, with a warning, and the CRD has no enum.
#[test]
fn a_marker_in_a_block_comment_is_not_read() {
    let go = GO_KIND.replace(
        "\tName string `json:\"name\"`\n",
        "\tName string `json:\"name\"`\n\t/* Module to use */\n\tModule ModuleType `json:\"module\"`\n",
    ) + "\n/*\nModuleType is the module.\n+kubebuilder:validation:Enum=DSM\n*/\ntype ModuleType string\n";
    let (imported, crd, _) = import_and_generate(&[("thing_types.go", &go)]);
    let module = &spec_props(&crd)["module"];
    assert!(module.get("enum").is_none(), "{module}");
    assert_eq!(module["description"], "Module to use");
    let w = imported.render_warnings();
    assert!(
        w.contains("`+kubebuilder:validation:Enum=DSM` is inside a /* */ comment"),
        "{w}"
    );
}

/// A kind controller-gen finds by its embedded TypeMeta and ObjectMeta, with no
/// `+kubebuilder:object:root` (KEDA's `CloudEventSource`, marked with
/// `+kubebuilder:resource` only): its printer column stays.
#[test]
fn a_kind_without_a_root_marker_keeps_its_printer_column() {
    let go = GO_KIND.replace(
        "// +kubebuilder:object:root=true\ntype Thing struct",
        "// +kubebuilder:resource:path=things,scope=Namespaced\n\
         // +kubebuilder:printcolumn:name=\"Name\",type=string,JSONPath=\".spec.name\"\ntype Thing struct",
    );
    let (_, crd, _) = import_and_generate(&[("thing_types.go", &go)]);
    assert_eq!(
        crd["spec"]["versions"][0]["additionalPrinterColumns"][0]["name"], "Name",
        "{crd}"
    );
}

/// A Go alias of a named type (Flux's `type DependencyReference = meta.DependencyReference`)
/// is that type to controller-gen: a list of it is described by the aliased type's doc, not
/// the alias's; an alias of a basic type (`type Name = string`) keeps its own doc.
#[test]
fn an_alias_of_a_named_type_is_that_type() {
    let go = GO_KIND.replace(
        "\tName string `json:\"name\"`\n",
        "\tName string `json:\"name\"`\n\tDependsOn []Dependency `json:\"dependsOn,omitempty\"`\n\
         \tMode Mode `json:\"mode\"`\n",
    ) + "\n// Dependency is the alias's doc.\ntype Dependency = Reference\n\n\
         // Reference names an object.\ntype Reference struct {\n\tName string `json:\"name\"`\n}\n\n\
         // Mode is how it runs.\ntype Mode = string\n";
    let (imported, crd, _) = import_and_generate(&[("thing_types.go", &go)]);
    let props = spec_props(&crd);
    assert_eq!(
        props["dependsOn"]["items"]["description"],
        "Reference names an object."
    );
    assert_eq!(props["mode"]["description"], "Mode is how it runs.");
    let rust = imported
        .files
        .iter()
        .find(|f| f.path.ends_with("thing_types.rs"))
        .unwrap();
    assert!(
        rust.contents.contains("// Dependency is the alias's doc."),
        "{}",
        rust.contents
    );
}

/// A struct inlined into another brings its own keywords too (Trust Manager's
/// `+kubebuilder:validation:MinProperties=0` on the `PKCS12` its `TargetKeyValue` inlines),
/// as controller-gen's flattener copies each one the embedding struct does not set.
#[test]
fn an_inlined_struct_brings_its_keywords() {
    let go = GO_KIND.replace(
        "\tName string `json:\"name\"`\n",
        "\tName string `json:\"name\"`\n\tData []KeyValue `json:\"data,omitempty\"`\n",
    ) + "\ntype KeyValue struct {\n\tKey string `json:\"key\"`\n\tPKCS12 `json:\",inline\"`\n}\n\n\
         // +kubebuilder:validation:MinProperties=0\ntype PKCS12 struct {\n\
         \tPassword *string `json:\"password,omitempty\"`\n}\n";
    let (_, crd, _) = import_and_generate(&[("thing_types.go", &go)]);
    let items = &spec_props(&crd)["data"]["items"];
    assert_eq!(items["minProperties"], 0, "{items}");
    assert!(items["properties"].get("password").is_some(), "{items}");
}

/// A Go kind `Thing` in package `version`, marked `storage` or not, with controller-runtime's
/// `Hub()` or not.
fn versioned_kind(version: &str, storage: bool, hub: bool) -> String {
    format!(
        "// +groupName=meaning.example.com\npackage {version}\n\n\
        import metav1 \"k8s.io/apimachinery/pkg/apis/meta/v1\"\n\n\
        // +kubebuilder:object:root=true\n{}type Thing struct {{\n\
        \tmetav1.TypeMeta `json:\",inline\"`\n\
        \tmetav1.ObjectMeta `json:\"metadata,omitempty\"`\n\
        \tSpec ThingSpec `json:\"spec\"`\n}}\n\n\
        type ThingSpec struct {{\n\tName string `json:\"name\"`\n}}\n\n{}",
        if storage {
            "// +kubebuilder:storageversion\n"
        } else {
            ""
        },
        if hub {
            "// Hub marks this type as a conversion hub.\nfunc (*Thing) Hub() {}\n"
        } else {
            ""
        },
    )
}

/// controller-runtime's hub is the kind with a `Hub()` method (kubebuilder's multi-version
/// tutorial, api/v1/cronjob_conversion.go); the port marks it `+kube-codegen:conversion=hub`,
/// and a new crate gets the conversion webhook where kubebuilder's kustomize patch puts it,
/// so the CRD has webhook conversion and `generate` writes the conversions. A `Hub()` on a
/// version that is not the storage version is not made the hub (kube-codegen's hub is the
/// storage version): a warning says so.
#[test]
fn a_go_hub_becomes_the_conversion_hub() {
    // Neither the hub marker nor a conversion webhook in any file the import wrote.
    let no_hub = |imported: &kube_codegen::GoImported| {
        imported.files.iter().all(|f| {
            !f.contents.contains("conversion=hub") && !f.contents.contains("conversion-webhook")
        })
    };
    let v1 = versioned_kind("v1", true, true);
    let v2 = versioned_kind("v2", false, false);
    let (_tmp, out, imported) = import_packages_with(
        &[
            ("api/v1", &[("thing_types.go", &v1)]),
            ("api/v2", &[("thing_types.go", &v2)]),
        ],
        true,
    );
    let rust = |path: &str| {
        imported
            .files
            .iter()
            .find(|f| f.path.ends_with(path))
            .unwrap_or_else(|| panic!("{path}"))
            .contents
            .clone()
    };
    assert!(rust("v1/thing_types.rs").contains("/// +kube-codegen:conversion=hub\n"));
    assert!(!rust("v2/thing_types.rs").contains("conversion=hub"));
    assert!(
        rust("Cargo.toml").contains(
            "conversion-webhook = { service = \"system/webhook-service\", path = \"/convert\" }"
        ),
        "{}",
        rust("Cargo.toml")
    );
    let (crd, _) = crd(&out);
    assert_eq!(crd["spec"]["conversion"]["strategy"], "Webhook");
    assert_eq!(
        crd["spec"]["conversion"]["webhook"]["clientConfig"]["service"],
        serde_json::json!({"name": "webhook-service", "namespace": "system", "path": "/convert"})
    );

    // `Hub()` on the version that is not stored: no hub, a warning at the method.
    let v1 = versioned_kind("v1", true, false);
    let v2 = versioned_kind("v2", false, true);
    let (_tmp, _out, imported) = import_packages_with(
        &[
            ("api/v1", &[("thing_types.go", &v1)]),
            ("api/v2", &[("thing_types.go", &v2)]),
        ],
        true,
    );
    assert!(no_hub(&imported));
    let warnings = imported.render_warnings();
    assert!(
        warnings
            .contains("`Thing` has controller-runtime's `Hub()` but is not the storage version"),
        "{warnings}"
    );

    // Without `--conversion-hub`, as controller-gen: no conversion, a warning at `Hub()`.
    let v1 = versioned_kind("v1", true, true);
    let v2 = versioned_kind("v2", false, false);
    let (_tmp, out, imported) = import_packages(&[
        ("api/v1", &[("thing_types.go", &v1)]),
        ("api/v2", &[("thing_types.go", &v2)]),
    ]);
    assert!(no_hub(&imported));
    let warnings = imported.render_warnings();
    assert!(
        warnings.contains("`Thing` has controller-runtime's `Hub()`: not made the conversion hub")
            && warnings.contains("--conversion-hub"),
        "{warnings}"
    );
    let (crd, _) = crate::crd(&out);
    assert!(crd["spec"].get("conversion").is_none(), "{crd}");
}
