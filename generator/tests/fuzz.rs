//! Property tests: the generator never panics, whatever it is given. Marker parsing gets
//! arbitrary lines and marker-shaped lines; whole generation gets random small API crates
//! (random structs, enums, field types and markers with random values, many of them wrong)
//! and must return files or located diagnostics.
//!
//! Quick by default (a few seconds). `KUBE_CODEGEN_FUZZ_SECONDS=N` runs each target for N
//! seconds instead (CI: 60, `hack/test.sh`); failures are kept in `tests/fuzz/<target>.txt`
//! and replayed first (`common/fuzz.rs`).

use std::path::Path;

use kube_codegen::__private::markers::{Level, MARKERS, parse_line};
use kube_codegen::{Config, Error, Location};
use proptest::prelude::*;

#[path = "common/fuzz.rs"]
mod fuzz_driver;
use fuzz_driver::fuzz;

fn level() -> impl Strategy<Value = Level> {
    prop::sample::select(vec![Level::Package, Level::Type, Level::Field])
}

/// Values markers are given, right and wrong.
const VALUES: &[&str] = &[
    "",
    "1",
    "-1",
    "0",
    "1.5",
    "1e400",
    "99999999999999999999",
    "true",
    "false",
    "maybe",
    "abc",
    "\"quoted\"",
    "\"unterminated",
    "`^[a-z]+$`",
    "`unterminated",
    "`(`",
    "\"\\u00e9\\n\"",
    "{a,b}",
    "{a,\"b,c\"}",
    "a;b;c",
    "[1, 2]",
    "{\"k\": 1}",
    "{",
    "}",
    "[",
    "é",
    "=",
    ":",
    ",",
    "name=x,type=string,JSONPath=.spec.x",
    "rule=\"self > 0\"",
    "rule=\"self >\"",
    "rule=\"self.all(x, x != '')\",message=\"m\"",
    "rule=\"\",messageExpression=\"'a' +\"",
    "path=things,scope=Cluster,shortName=t;tt",
    "scope=Nowhere",
    "specpath=.spec.replicas,statuspath=.status.replicas",
    "atomic",
    "set",
    "map",
    "granular",
    "Cluster",
    "int-or-string",
    "string",
    "object",
];

/// A marker line: a known marker name (or a mangled one), a separator and a value.
fn marker_line() -> impl Strategy<Value = String> {
    let names: Vec<&'static str> = MARKERS.iter().map(|m| m.name.as_str()).collect();
    (
        prop::sample::select(names),
        prop::sample::select(vec!["", "=", ":", ":=", "=:", " = ", "::"]),
        prop_oneof![
            prop::sample::select(VALUES.to_vec()).prop_map(str::to_owned),
            "[ -~]{0,24}",
            any::<String>(),
        ],
        0..4usize,
    )
        .prop_map(|(name, sep, value, mangle)| {
            let name = match mangle {
                // A typo: drop a character.
                1 if name.len() > 3 => {
                    let mut n = name.to_owned();
                    n.remove(name.len() / 2);
                    n
                }
                // Wrong case.
                2 => name.to_uppercase(),
                _ => name.to_owned(),
            };
            format!("+{name}{sep}{value}")
        })
}

#[test]
fn parse_line_never_panics_on_arbitrary_text() {
    fuzz(
        "parse_line_text",
        512,
        (any::<String>(), level()),
        |(line, level)| {
            check_line(&line, level);
            Ok(())
        },
    );
}

#[test]
fn parse_line_never_panics_on_marker_shaped_text() {
    fuzz(
        "parse_line_marker",
        512,
        (marker_line(), level()),
        |(line, level)| {
            check_line(&line, level);
            Ok(())
        },
    );
}

/// Parse, and use every accessor: nothing panics; errors point where they were told to.
fn check_line(line: &str, level: Level) {
    let loc = Location::new("fuzz.rs", 7, 5);
    match parse_line(line, level, loc.clone()) {
        Ok(None) => {}
        Ok(Some(m)) => {
            assert_eq!(m.loc, loc);
            let _ = m.string_value();
            let _ = m.bool_value();
            let _ = m.parse_value::<i64>("an integer");
            let _ = m.parse_value::<f64>("a number");
            for (k, _) in &m.args {
                assert!(m.arg(k).is_some());
            }
            let _ = kube_codegen::__private::markers::split_list(
                m.value.as_deref().unwrap_or_default(),
            );
        }
        Err(d) => {
            assert_eq!(d.loc, loc, "{d}");
            assert!(!d.message.is_empty());
            let _ = d.render(Some(line));
        }
    }
}

// ---------------------------------------------------------------------------------------
// Whole generation over random API crates.

/// Field types, supported and not.
const TYPES: &[&str] = &[
    "String",
    "i32",
    "i64",
    "u8",
    "u64",
    "f64",
    "bool",
    "Option<String>",
    "Option<i32>",
    "Vec<String>",
    "Vec<u8>",
    "Vec<Vec<i32>>",
    "BTreeMap<String, String>",
    "BTreeMap<String, Vec<i64>>",
    "HashMap<String, bool>",
    "BTreeMap<i32, String>",
    "BTreeSet<String>",
    "Option<Inner>",
    "Vec<Inner>",
    "BTreeMap<String, Inner>",
    "Box<Inner>",
    "Color",
    "Option<Color>",
    "Vec<Color>",
    "Shape",
    "(i32, String)",
    "[u8; 4]",
    "serde_json::Value",
    "k8s_openapi::apimachinery::pkg::api::resource::Quantity",
    "k8s_openapi::apimachinery::pkg::util::intstr::IntOrString",
    "k8s_openapi::api::core::v1::PodSpec",
    "k8s_openapi::apimachinery::pkg::apis::meta::v1::Time",
    "Unknown",
    "some_crate::Thing",
    "T",
    "&'static str",
];

/// Serde attributes on fields (and their absence).
const FIELD_ATTRS: &[&str] = &[
    "",
    "",
    "",
    "",
    "",
    "",
    "#[serde(default)]",
    "#[serde(default, skip_serializing_if = \"Option::is_none\")]",
    "#[serde(rename = \"renamed\")]",
    "#[serde(skip)]",
    "#[serde(flatten)]",
    "#[serde(default = \"nope\")]",
];

/// Type-level serde attributes.
const TYPE_ATTRS: &[&str] = &[
    "#[serde(rename_all = \"camelCase\")]",
    "#[serde(rename_all = \"camelCase\")]",
    "#[serde(rename_all = \"camelCase\")]",
    "#[serde(rename_all = \"snake_case\")]",
    "#[serde(rename_all = \"Bogus\")]",
    "",
];

#[derive(Clone, Debug)]
struct FieldDef {
    ty: &'static str,
    attr: &'static str,
    markers: Vec<String>,
}

/// A DNS label as Kubernetes takes it in a group name or a resource's plural, including
/// the ones Rust cannot take as they are: a leading digit (`1password`), a keyword that
/// cannot be raw (`self`, `crate`, `super`), one that can (`type`, `gen`), a dash. The
/// harness once named every group `fuzz.example.com` and every resource by the
/// generator's own plural, so names like these never reached the renderers (issue 30).
fn dns_label() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "fuzz",
            "1password",
            "0",
            "9x",
            "self",
            "crate",
            "super",
            "type",
            "gen",
            "fn",
            "r",
            "a-b",
            "x--1",
        ])
        .prop_map(str::to_owned),
        "[a-z0-9]([a-z0-9-]{0,6}[a-z0-9])?",
    ]
}

#[derive(Clone, Debug)]
struct KindDef {
    /// `+kubebuilder:resource:path=` (the plural), when set.
    plural: Option<String>,
    markers: Vec<String>,
    spec_attr: &'static str,
    fields: Vec<FieldDef>,
    with_status: bool,
    with_type_meta: bool,
}

#[derive(Clone, Debug)]
struct ApiDef {
    package_markers: Vec<String>,
    kinds: Vec<KindDef>,
    enum_shape: usize,
    inner_fields: Vec<FieldDef>,
}

fn markers(max: usize) -> impl Strategy<Value = Vec<String>> {
    prop::collection::vec(marker_line(), 1..=max)
}

/// Types generation supports, so that a good share of crates generate successfully and
/// exercise type mapping and the Rust renderers, not only the error paths.
const GOOD_TYPES: &[&str] = &[
    "String",
    "i32",
    "i64",
    "f64",
    "bool",
    "Option<String>",
    "Option<i32>",
    "Vec<String>",
    "BTreeMap<String, String>",
    "BTreeMap<String, Vec<i64>>",
    "Option<Inner>",
    "Vec<Inner>",
    "BTreeMap<String, Inner>",
    "Color",
    "Option<Color>",
    "k8s_openapi::apimachinery::pkg::api::resource::Quantity",
    "k8s_openapi::apimachinery::pkg::apis::meta::v1::Time",
];

/// Markers that are right for a field of type `ty`.
fn good_markers(ty: &str) -> Vec<&'static str> {
    let mut out = vec![
        "+optional",
        "+kubebuilder:validation:Optional",
        "+kubebuilder:title=A title",
    ];
    match ty {
        "String" | "Option<String>" => out.extend([
            "+kubebuilder:validation:MaxLength=63",
            "+kubebuilder:validation:MinLength=1",
            "+kubebuilder:validation:Pattern=`^[a-z0-9-]+$`",
            "+kubebuilder:validation:Enum=a;b;c",
            "+kubebuilder:validation:Format=hostname",
            "+kubebuilder:default=\"x\"",
            "+kubebuilder:validation:XValidation:rule=\"self.size() < 64\",message=\"too long\"",
        ]),
        "i32" | "i64" | "Option<i32>" => out.extend([
            "+kubebuilder:validation:Minimum=0",
            "+kubebuilder:validation:Maximum=100",
            "+kubebuilder:validation:ExclusiveMaximum=true",
            "+kubebuilder:validation:MultipleOf=2",
            "+kubebuilder:default=3",
            "+kubebuilder:validation:XValidation:rule=\"self >= 0\"",
        ]),
        "Vec<String>" => out.extend([
            "+listType=set",
            "+kubebuilder:validation:MaxItems=10",
            "+kubebuilder:validation:MinItems=0",
        ]),
        "Vec<Inner>" => out.extend(["+listType=atomic", "+kubebuilder:validation:MaxItems=5"]),
        "BTreeMap<String, String>" | "BTreeMap<String, Inner>" => out.extend([
            "+kubebuilder:validation:MaxProperties=8",
            "+mapType=granular",
            "+kubebuilder:validation:XValidation:rule=\"self.all(k, k.size() < 10)\"",
        ]),
        _ => {}
    }
    out
}

fn field() -> impl Strategy<Value = FieldDef> {
    let ty = prop_oneof![
        8 => prop::sample::select(GOOD_TYPES.to_vec()),
        2 => prop::sample::select(TYPES.to_vec()),
    ];
    (ty, prop::sample::select(FIELD_ATTRS.to_vec())).prop_flat_map(|(ty, attr)| {
        let field_markers = prop_oneof![
            6 => Just(vec![]),
            3 => prop::collection::vec(
                prop::sample::select(good_markers(ty)).prop_map(str::to_owned),
                1..3
            ),
            1 => markers(3),
        ];
        field_markers.prop_map(move |markers| FieldDef { ty, attr, markers })
    })
}

/// Kind markers that are right.
const GOOD_KIND_MARKERS: &[&str] = &[
    "+kubebuilder:resource:shortName=k;kk,categories=all",
    "+kubebuilder:printcolumn:name=\"Age\",type=date,JSONPath=\".metadata.creationTimestamp\"",
    "+kubebuilder:resource:scope=Cluster",
    "+genclient:nonNamespaced",
    "+genclient:onlyVerbs=get,list,watch",
    "+kubebuilder:storageversion",
    "+kubebuilder:validation:XValidation:rule=\"self.metadata.name.size() < 20\"",
];

fn kind() -> impl Strategy<Value = KindDef> {
    (
        prop_oneof![
            6 => Just(vec![]),
            3 => prop::collection::vec(
                prop::sample::select(GOOD_KIND_MARKERS.to_vec()).prop_map(str::to_owned),
                1..3
            ),
            1 => markers(3),
        ],
        prop::sample::select(TYPE_ATTRS.to_vec()),
        prop::collection::vec(field(), 0..6),
        any::<bool>(),
        prop::bool::weighted(0.95),
        prop::option::weighted(0.4, dns_label()),
    )
        .prop_map(
            |(markers, spec_attr, fields, with_status, with_type_meta, plural)| KindDef {
                plural,
                markers,
                spec_attr,
                fields,
                with_status,
                with_type_meta,
            },
        )
}

fn api() -> impl Strategy<Value = ApiDef> {
    (
        prop::option::weighted(0.95, dns_label()),
        prop::collection::vec(
            prop_oneof![
                Just("+versionName=v1".to_owned()),
                Just("+versionName=v2beta1".to_owned()),
                marker_line(),
            ],
            0..2,
        ),
        prop::collection::vec(kind(), 1..4),
        0..5usize,
        prop::collection::vec(field(), 0..4),
    )
        .prop_map(
            |(group, mut package_markers, kinds, enum_shape, inner_fields)| {
                if let Some(label) = group {
                    package_markers.insert(0, format!("+groupName={label}.example.com"));
                }
                ApiDef {
                    package_markers,
                    kinds,
                    enum_shape,
                    inner_fields,
                }
            },
        )
}

fn render_fields(out: &mut String, fields: &[FieldDef]) {
    for (i, f) in fields.iter().enumerate() {
        for m in &f.markers {
            // A marker line may not break the doc comment.
            out.push_str(&format!("    /// {}\n", m.replace(['\n', '\r'], " ")));
        }
        if !f.attr.is_empty() {
            out.push_str(&format!("    {}\n", f.attr));
        }
        out.push_str(&format!("    pub field_{i}: {},\n", f.ty));
    }
}

fn render(api: &ApiDef) -> String {
    let mut s = String::new();
    for m in &api.package_markers {
        s.push_str(&format!("//! {}\n", m.replace(['\n', '\r'], " ")));
    }
    s.push_str(
        "\nuse std::collections::{BTreeMap, BTreeSet, HashMap};\n\n\
         use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;\n\
         use kube::core::TypeMeta;\nuse serde::{Deserialize, Serialize};\n\n",
    );
    for (k, kind) in api.kinds.iter().enumerate() {
        s.push_str(&format!("/// Kind{k} is a kind.\n///\n"));
        for m in &kind.markers {
            s.push_str(&format!("/// {}\n", m.replace(['\n', '\r'], " ")));
        }
        if let Some(plural) = &kind.plural {
            s.push_str(&format!("/// +kubebuilder:resource:path={plural}\n"));
        }
        s.push_str(&format!(
            "/// +genclient\n/// +kubebuilder:object:root=true\n\
             #[derive(Clone, Debug, Default, Serialize, Deserialize)]\npub struct Kind{k} {{\n"
        ));
        if kind.with_type_meta {
            s.push_str("    #[serde(flatten)]\n    pub types: TypeMeta,\n");
        }
        s.push_str(&format!(
            "    pub metadata: ObjectMeta,\n    pub spec: Kind{k}Spec,\n"
        ));
        if kind.with_status {
            s.push_str(&format!(
                "    #[serde(default, skip_serializing_if = \"Option::is_none\")]\n    pub status: Option<Kind{k}Status>,\n"
            ));
        }
        s.push_str("}\n\n#[derive(Clone, Debug, Default, Serialize, Deserialize)]\n");
        if !kind.spec_attr.is_empty() {
            s.push_str(&format!("{}\n", kind.spec_attr));
        }
        s.push_str(&format!("pub struct Kind{k}Spec {{\n"));
        render_fields(&mut s, &kind.fields);
        s.push_str("}\n\n");
        if kind.with_status {
            s.push_str(&format!(
                "#[derive(Clone, Debug, Default, Serialize, Deserialize)]\npub struct Kind{k}Status {{\n    pub ready: bool,\n}}\n\n"
            ));
        }
    }
    s.push_str("#[derive(Clone, Debug, Default, Serialize, Deserialize)]\npub struct Inner {\n");
    render_fields(&mut s, &api.inner_fields);
    s.push_str("}\n\n");
    s.push_str(match api.enum_shape {
        0 => "#[derive(Clone, Debug, Serialize, Deserialize)]\npub enum Color { Red, Green }\n",
        1 => "#[derive(Clone, Debug, Serialize, Deserialize)]\n#[serde(rename_all = \"lowercase\")]\npub enum Color { Red, #[serde(rename = \"GREEN\")] Green }\n",
        2 => "#[derive(Clone, Debug, Serialize, Deserialize)]\npub enum Color { Red, Rgb(u8, u8, u8) }\n",
        3 => "#[derive(Clone, Debug, Serialize, Deserialize)]\n#[serde(untagged)]\npub enum Color { Name(String), Code(i64) }\n",
        _ => "#[derive(Clone, Debug, Serialize, Deserialize)]\n#[serde(tag = \"kind\", content = \"value\")]\npub enum Color { A { x: i32 }, B(String) }\n",
    });
    s.push_str(
        "\n/// +kubebuilder:validation:XValidation:rule=\"has(self.circle) != has(self.square)\"\n\
         #[derive(Clone, Debug, Serialize, Deserialize)]\n#[serde(rename_all = \"camelCase\")]\n\
         pub enum Shape { Circle { radius: f64 }, Square { side: Option<f64> } }\n",
    );
    s
}

/// Generation's contract: files, or diagnostics that each point into the crate.
fn generate_checks_out(dir: &Path, source: &str) -> Result<(), TestCaseError> {
    match Config::new().crate_dir(dir).generate() {
        Ok(generated) => {
            prop_assert!(!generated.files.is_empty());
            for f in &generated.files {
                prop_assert!(f.path.starts_with(dir));
                prop_assert!(kube_codegen::is_generated(f.contents.as_bytes()));
            }
        }
        Err(Error::Input {
            diagnostics,
            rendered,
        }) => {
            prop_assert!(!diagnostics.is_empty());
            prop_assert!(rendered.ends_with("nothing was written\n"), "{}", rendered);
            for d in &diagnostics {
                prop_assert!(
                    d.loc.file.starts_with(dir) && d.loc.line >= 1 && d.loc.column >= 1,
                    "unlocated diagnostic {} for\n{}",
                    d,
                    source
                );
                let lines = source.lines().count().max(1);
                prop_assert!(
                    d.loc.line <= lines + 1,
                    "diagnostic past the end of the file: {}",
                    d
                );
            }
        }
        Err(other) => prop_assert!(false, "not an input error: {other:?}\n{source}"),
    }
    Ok(())
}

#[test]
fn generation_never_panics() {
    fuzz("generation", 64, api(), |api| {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("crate");
        let source = render(&api);
        std::fs::create_dir_all(dir.join("src")).unwrap();
        std::fs::write(dir.join("src/v1.rs"), &source).unwrap();
        generate_checks_out(&dir, &source)
    });
}

/// Arbitrary bytes as a source file: not UTF-8, not Rust, or Rust that means nothing.
#[test]
fn generation_never_panics_on_garbage() {
    fuzz(
        "generation_garbage",
        64,
        (prop::collection::vec(any::<u8>(), 0..400), any::<bool>()),
        |(bytes, prefix)| {
            let tmp = tempfile::tempdir().unwrap();
            let dir = tmp.path().join("crate");
            std::fs::create_dir_all(dir.join("src")).unwrap();
            let mut file = if prefix {
                b"//! +groupName=g.example.com\n//! +versionName=v1\n".to_vec()
            } else {
                vec![]
            };
            file.extend_from_slice(&bytes);
            std::fs::write(dir.join("src/lib.rs"), &file).unwrap();
            let source = String::from_utf8_lossy(&file).into_owned();
            generate_checks_out(&dir, &source)
        },
    );
}

// ---------------------------------------------------------------------------------------
// Nesting: as deep as the limits and past them (issue 30: 40 nested `Vec`s aborted on a
// worker's stack, 100 nested structs on the calling thread's).

/// A field type of random wrappers, `depth` deep.
fn wrapped(wrappers: &[u8], inner: &str) -> String {
    let mut ty = inner.to_owned();
    for w in wrappers.iter().rev() {
        ty = match w % 4 {
            0 => format!("Option<{ty}>"),
            1 => format!("Vec<{ty}>"),
            2 => format!("BTreeMap<String, {ty}>"),
            _ => format!("Box<{ty}>"),
        };
    }
    ty
}

/// Code that nests without a type: brackets and prefix operators, `n` deep.
fn nested_code(shapes: &[u8]) -> String {
    let mut open = String::new();
    let mut close = String::new();
    for s in shapes {
        match s % 5 {
            0 => {
                open.push('(');
                close.insert(0, ')');
            }
            1 => open.push_str("- "),
            2 => open.push_str("|x: i32| "),
            3 => {
                open.push_str("{ ");
                close.insert_str(0, " }");
            }
            _ => open.push_str("! "),
        }
    }
    format!("pub fn nested() {{ let _ = {open}1{close}; }}\n")
}

/// A kind with a chain of structs, a field of wrappers and nested code, each from nothing
/// to past its limit: files, or one located error per limit passed.
#[test]
fn nesting_never_aborts() {
    fuzz(
        "nesting",
        32,
        (
            0..120usize,
            prop::collection::vec(any::<u8>(), 0..300),
            prop::collection::vec(any::<u8>(), 0..300),
        ),
        |(chain, wrappers, code)| {
            let mut s = String::from(
                "//! +groupName=fuzz.example.com\n//! +versionName=v1\n\n\
                 use std::collections::BTreeMap;\n\n\
                 use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;\n\
                 use kube::core::TypeMeta;\nuse serde::{Deserialize, Serialize};\n\n\
                 /// +kubebuilder:object:root=true\n\
                 #[derive(Clone, Debug, Default, Serialize, Deserialize)]\n\
                 pub struct Kind0 {\n    #[serde(flatten)]\n    pub types: TypeMeta,\n    \
                 pub metadata: ObjectMeta,\n    pub spec: S0,\n}\n",
            );
            for i in 0..=chain {
                let next = if i == chain {
                    "String".to_owned()
                } else {
                    format!("S{}", i + 1)
                };
                let ty = if i == chain {
                    wrapped(&wrappers, &next)
                } else {
                    format!("Option<{next}>")
                };
                s.push_str(&format!(
                    "\n#[derive(Clone, Debug, Default, Serialize, Deserialize)]\npub struct S{i} {{\n    pub f: {ty},\n}}\n"
                ));
            }
            s.push_str(&nested_code(&code));
            let tmp = tempfile::tempdir().unwrap();
            let dir = tmp.path().join("crate");
            std::fs::create_dir_all(dir.join("src")).unwrap();
            std::fs::write(dir.join("src/lib.rs"), &s).unwrap();
            generate_checks_out(&dir, &s)
        },
    );
}
