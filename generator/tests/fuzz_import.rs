//! Fuzz targets of the importers (issue 30): random CRDs (YAML and JSON, one line or
//! pretty) into `import crd`, random Go packages into `import go`, and arbitrary text into
//! both. The properties: no panic, no abort, no hang (each case has a deadline), and the
//! output is either an error located in the input or a crate that `generate` takes: an
//! importer never exits 0 with a crate `generate` refuses.
//!
//! Quick by default (a few dozen cases). `KUBE_CODEGEN_FUZZ_SECONDS=N` runs each target
//! for N seconds instead (CI: 60, `hack/test.sh`). Failures are shrunk and kept in
//! `tests/fuzz/<target>.txt`, which every later run replays first.

use std::path::{Path, PathBuf};

use kube_codegen::{
    Config, Error, GoImportOptions, GoPackageInput, ImportInput, ImportOptions, KubernetesVersion,
    RuntimeSource,
};
use proptest::prelude::*;
use serde_json::{Value, json};

#[path = "common/fuzz.rs"]
mod fuzz_driver;
use fuzz_driver::fuzz;

/// An import's result: a crate that `generate` takes, or errors located in `input`.
fn crate_generates_or_error_located(
    result: Result<(Vec<kube_codegen::GeneratedFile>, PathBuf), Error>,
    input: &Path,
    text: &str,
) -> Result<(), TestCaseError> {
    match result {
        Ok((files, out)) => {
            for f in &files {
                std::fs::create_dir_all(f.path.parent().unwrap()).unwrap();
                std::fs::write(&f.path, &f.contents).unwrap();
            }
            match Config::from_crate(&out).and_then(|c| c.generate()) {
                Ok(_) => {}
                Err(e) => prop_assert!(
                    false,
                    "the import wrote a crate generate refuses:\n{e}\ninput:\n{text}"
                ),
            }
        }
        Err(Error::Input {
            diagnostics,
            rendered,
        }) => {
            prop_assert!(!diagnostics.is_empty(), "{rendered}");
            // YAML breaks lines at U+2028, U+2029 and U+0085 too (the parser's lines).
            let lines = text
                .split(['\n', '\r', '\u{2028}', '\u{2029}', '\u{85}'])
                .count()
                .max(1);
            for d in diagnostics.iter().filter(|d| d.is_error()) {
                prop_assert!(
                    d.loc.file.starts_with(input)
                        && d.loc.line >= 1
                        && d.loc.line <= lines + 1
                        && d.loc.column >= 1,
                    "an error not located in the input: {d}\ninput:\n{text}"
                );
            }
        }
        Err(other) => prop_assert!(false, "not an input error: {other:?}\ninput:\n{text}"),
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// `import crd`

fn name() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "Widget",
            "Self",
            "Option",
            "String",
            "Vec",
            "Box",
            "Value",
            "",
            "type",
            "a-b",
            "X",
            "Thing2",
            "WidgetList",
            "Écrou",
            "self",
        ])
        .prop_map(str::to_owned),
        "[A-Z][a-zA-Z0-9]{0,8}",
    ]
}

fn label() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "widgets", "self", "crate", "1things", "type", "a-b", ""
        ])
        .prop_map(str::to_owned),
        "[a-z][a-z0-9]{0,7}",
    ]
}

/// Keywords of a schema node, right and wrong, by what they go with.
fn keyword() -> impl Strategy<Value = (String, Value)> {
    let pairs: Vec<(&str, Value)> = vec![
        ("format", json!("int32")),
        ("format", json!("date-time")),
        ("format", json!("x-custom")),
        ("pattern", json!("^[a-z]+$")),
        ("pattern", json!("(")),
        ("enum", json!(["a", "b"])),
        ("enum", json!([1, "a", null])),
        ("minimum", json!(0)),
        ("maximum", json!(1e300)),
        ("minLength", json!(3)),
        ("maxLength", json!(-1)),
        ("minItems", json!(1)),
        ("maxProperties", json!(2)),
        ("multipleOf", json!(0.5)),
        ("default", json!("x")),
        ("default", json!({"a": 1})),
        ("default", json!(3)),
        ("nullable", json!(true)),
        ("description", json!("a description")),
        ("description", json!("+kubebuilder:validation:Minimum=1")),
        ("description", json!("two\nlines := here")),
        ("x-kubernetes-preserve-unknown-fields", json!(true)),
        ("x-kubernetes-int-or-string", json!(true)),
        ("x-kubernetes-embedded-resource", json!(true)),
        ("x-kubernetes-list-type", json!("map")),
        ("x-kubernetes-list-type", json!("set")),
        ("x-kubernetes-list-map-keys", json!(["name"])),
        ("x-kubernetes-map-type", json!("atomic")),
        (
            "x-kubernetes-validations",
            json!([{"rule": "self.size() > 0"}]),
        ),
        ("x-kubernetes-validations", json!([{"rule": "self >"}])),
        (
            "x-kubernetes-validations",
            json!([{"rule": "self == oldSelf", "message": "immutable"}]),
        ),
        ("required", json!(["a", "missing"])),
        ("type", json!("banana")),
        ("type", json!(7)),
        ("$ref", json!("#/definitions/x")),
    ];
    prop::sample::select(pairs).prop_map(|(k, v)| (k.to_owned(), v))
}

fn property_name() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "a",
            "name",
            "self",
            "type",
            "",
            "a.b",
            "1x",
            "é",
            "metadata",
            "apiVersion",
            "kind",
            "x-y",
            "Self"
        ])
        .prop_map(str::to_owned),
        "[a-z][a-zA-Z0-9]{0,6}",
    ]
}

/// A schema node: a typed leaf, an object of properties, a list or a map, with keywords.
fn schema() -> impl Strategy<Value = Value> {
    let ty = prop::sample::select(vec![
        "string", "integer", "number", "boolean", "object", "array",
    ]);
    let leaf = (ty, prop::collection::vec(keyword(), 0..3)).prop_map(|(t, kws)| {
        let mut n = json!({"type": t});
        if t == "array" {
            n["items"] = json!({"type": "string"});
        }
        for (k, v) in kws {
            n[k] = v;
        }
        n
    });
    leaf.prop_recursive(4, 24, 4, |inner| {
        prop_oneof![
            (
                prop::collection::vec((property_name(), inner.clone()), 0..4),
                prop::collection::vec(keyword(), 0..2)
            )
                .prop_map(|(props, kws)| {
                    let mut n = json!({"type": "object", "properties": {}});
                    for (k, v) in props {
                        n["properties"][k] = v;
                    }
                    for (k, v) in kws {
                        n[k] = v;
                    }
                    n
                }),
            inner
                .clone()
                .prop_map(|i| json!({"type": "array", "items": i})),
            inner.prop_map(|i| json!({"type": "object", "additionalProperties": i})),
        ]
    })
}

#[derive(Clone, Debug)]
enum Form {
    Yaml,
    JsonLine,
    JsonPretty,
}

fn crd() -> impl Strategy<Value = (Value, Form)> {
    let version = (
        prop::sample::select(vec!["v1", "v2", "v1beta1", "v1alpha1", "V1", "", "1"]),
        any::<bool>(),
        any::<bool>(),
        schema(),
    );
    (
        name(),
        label(),
        prop::sample::select(vec!["example.com", "1password.example.com", "self.example.com", "a.k8s.io", ""]),
        prop::sample::select(vec!["Namespaced", "Cluster", "Galaxy"]),
        prop::collection::vec(version, 1..3),
        prop::sample::select(vec![Form::Yaml, Form::JsonLine, Form::JsonPretty]),
    )
        .prop_map(|(kind, plural, group, scope, versions, form)| {
            let versions: Vec<Value> = versions
                .into_iter()
                .enumerate()
                .map(|(i, (name, served, storage, spec))| {
                    json!({
                        "name": name,
                        "served": served || i == 0,
                        "storage": storage || i == 0,
                        "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": spec}}},
                    })
                })
                .collect();
            let crd = json!({
                "apiVersion": "apiextensions.k8s.io/v1",
                "kind": "CustomResourceDefinition",
                "metadata": {"name": format!("{plural}.{group}")},
                "spec": {
                    "group": group,
                    "names": {"kind": kind, "plural": plural, "listKind": format!("{kind}List")},
                    "scope": scope,
                    "versions": versions,
                },
            });
            (crd, form)
        })
}

fn import_crd_text(text: String) -> Result<(), TestCaseError> {
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("crd.yaml");
    std::fs::write(&input, &text).unwrap();
    let out = tmp.path().join("api");
    let result = kube_codegen::import_crds(
        &[ImportInput {
            path: input.clone(),
            text: text.clone(),
        }],
        &ImportOptions {
            out: out.clone(),
            crate_name: "api".into(),
            kubernetes: KubernetesVersion::NEWEST,
            existing: Default::default(),
            has_cargo_toml: false,
            has_lib_rs: false,
            runtime: RuntimeSource::registry(),
        },
    )
    .map(|imported| (imported.files, out));
    crate_generates_or_error_located(result, &input, &text)
}

#[test]
fn import_crd_writes_a_crate_that_generates_or_a_located_error() {
    fuzz("import_crd", 48, crd(), |(crd, form)| {
        let text = match form {
            Form::Yaml => serde_yaml::to_string(&crd).unwrap(),
            Form::JsonLine => crd.to_string(),
            Form::JsonPretty => serde_json::to_string_pretty(&crd).unwrap(),
        };
        import_crd_text(text)
    });
}

#[test]
fn import_crd_of_arbitrary_text_never_panics() {
    fuzz(
        "import_crd_text",
        128,
        prop_oneof![
            any::<String>(),
            "(apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n)?[ -~\n]{0,200}",
            "\\{[\"a-z:,\\[\\]{} 0-9]{0,120}",
        ],
        import_crd_text,
    );
}

// ---------------------------------------------------------------------------------------
// `import go`

fn go_type_name() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "Spec", "Inner", "Self", "Option", "String", "Vec", "Box", "Phase", "Count", "Node",
        "Value",
    ])
    .prop_map(str::to_owned)
}

/// A Go field type, over the package's own types and built-ins.
fn go_field_type() -> impl Strategy<Value = String> {
    let base = prop_oneof![
        prop::sample::select(vec![
            "string",
            "int32",
            "int64",
            "bool",
            "float64",
            "int",
            "uint8",
            "[]byte",
            "interface{}",
            "metav1.Time"
        ])
        .prop_map(str::to_owned),
        go_type_name(),
    ];
    (
        base,
        prop::sample::select(vec![
            "",
            "*",
            "[]",
            "[]*",
            "map[string]",
            "map[int]",
            "map[Phase]",
            "[][]",
        ]),
    )
        .prop_map(|(b, wrap)| format!("{wrap}{b}"))
}

fn go_field() -> impl Strategy<Value = String> {
    (
        prop::sample::select(vec!["A", "Name", "Type", "Self", "Items", "Next", "X"]),
        go_field_type(),
        prop::sample::select(vec![
            "a",
            "name",
            "type",
            "self",
            "",
            "-",
            "a,omitempty",
            ",inline",
            "next,omitempty",
        ]),
        prop::sample::select(vec![
            "",
            "// +optional\n\t",
            "// +kubebuilder:validation:MinLength=1\n\t",
            "// +kubebuilder:validation:Minimum=-1\n\t",
            "// +listType=map\n\t",
        ]),
    )
        .prop_map(|(name, ty, tag, doc)| format!("\t{doc}{name} {ty} `json:\"{tag}\"`\n"))
}

fn go_package() -> impl Strategy<Value = String> {
    let decl = (
        go_type_name(),
        prop_oneof![
            prop::collection::vec(go_field(), 0..4)
                .prop_map(|fs| format!("struct {{\n{}}}", fs.concat())),
            go_field_type(),
        ],
    );
    (
        prop::collection::vec(decl, 0..5),
        prop::collection::vec(go_field(), 0..3),
        prop::sample::select(vec!["Widget", "Option", "Self", "Thing"]),
    )
        .prop_map(|(decls, spec_fields, kind)| {
            let mut s = format!(
                "// +groupName=fuzz.example.com\npackage v1\n\nimport metav1 \"k8s.io/apimachinery/pkg/apis/meta/v1\"\n\n\
                 // +kubebuilder:object:root=true\ntype {kind} struct {{\n\tmetav1.TypeMeta `json:\",inline\"`\n\t\
                 metav1.ObjectMeta `json:\"metadata,omitempty\"`\n\tSpec {kind}Spec `json:\"spec,omitempty\"`\n}}\n\n\
                 type {kind}Spec struct {{\n{}}}\n",
                spec_fields.concat()
            );
            let mut seen = std::collections::BTreeSet::new();
            for (name, body) in decls {
                if seen.insert(name.clone()) && name != format!("{kind}Spec") && name != kind {
                    s.push_str(&format!("\ntype {name} {body}\n"));
                }
            }
            s
        })
}

fn import_go_text(text: String) -> Result<(), TestCaseError> {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("v1");
    std::fs::create_dir_all(&dir).unwrap();
    let input = dir.join("types.go");
    std::fs::write(&input, &text).unwrap();
    let out = tmp.path().join("api");
    let result = kube_codegen::import_go(
        &[GoPackageInput {
            dir: dir.clone(),
            files: vec![(input.clone(), text.clone())],
            import_path: None,
        }],
        &GoImportOptions {
            out: out.clone(),
            crate_name: "api".into(),
            kubernetes: KubernetesVersion::NEWEST,
            runtime: RuntimeSource::registry(),
            crd: Default::default(),
            conversion_hub: false,
        },
    )
    .map(|imported| (imported.files, out));
    crate_generates_or_error_located(result, &dir, &text)
}

#[test]
fn import_go_writes_a_crate_that_generates_or_a_located_error() {
    fuzz("import_go", 48, go_package(), import_go_text);
}

#[test]
fn import_go_of_arbitrary_text_never_panics() {
    fuzz(
        "import_go_text",
        128,
        prop_oneof![
            any::<String>(),
            "package v1\n\ntype [A-Za-z]{1,5} (struct \\{[ -~\n]{0,80}\\}|\\[\\][a-z]{1,6}|map\\[[a-z]{1,6}\\][a-z]{1,6})\n",
        ],
        import_go_text,
    );
}
