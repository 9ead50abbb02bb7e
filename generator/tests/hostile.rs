//! Hostile input (issue 30): names Kubernetes allows and Rust does not, nesting deep enough
//! to overflow a stack, symlink loops, non-UTF-8 files, CRDs too large for the API server.
//! Each case once panicked, aborted, hung or said nothing; now it generates, or fails with
//! a located error.

use std::path::{Path, PathBuf};
use std::process::Output;

use kube_codegen::{Config, Error};

/// A crate in a temporary directory: `<tmp>/crate` with the given files.
fn api_crate(files: &[(&str, String)]) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    for (rel, text) in files {
        let path = tmp.path().join("crate").join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    tmp
}

/// A group/version module of kinds, each `(struct name, plural)`.
fn group_module(group: &str, kinds: &[(&str, &str)]) -> String {
    let mut s = format!(
        "//! +groupName={group}\n//! +versionName=v1\n\n\
         use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;\n\
         use kube::core::TypeMeta;\nuse serde::{{Deserialize, Serialize}};\n"
    );
    for (kind, plural) in kinds {
        s.push_str(&format!(
            "\n/// +genclient\n/// +kubebuilder:resource:path={plural}\n\
             #[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]\n\
             pub struct {kind} {{\n    #[serde(flatten)]\n    pub types: TypeMeta,\n    \
             pub metadata: ObjectMeta,\n    pub spec: {kind}Spec,\n}}\n\n\
             #[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]\n\
             pub struct {kind}Spec {{\n    pub name: String,\n}}\n"
        ));
    }
    s
}

fn kube_codegen(cwd: &Path, args: &[&str]) -> Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_kube-codegen"))
        .args(args)
        .current_dir(cwd)
        .output()
        .unwrap()
}

fn generated_text(dir: &Path) -> Vec<(PathBuf, String)> {
    match Config::new().crate_dir(dir).generate() {
        Ok(g) => g.files.into_iter().map(|f| (f.path, f.contents)).collect(),
        Err(Error::Input { rendered, .. }) => panic!("input errors:\n{rendered}"),
        Err(e) => panic!("{e:?}"),
    }
}

// ---------------------------------------------------------------------------------------
// Item 2: names.

/// Group labels that start with a digit or are keywords, and plurals like them, generate:
/// every generated name is an identifier (`_1password_v1`, `self_`, `r#type`). They
/// panicked in the renderers ("`1password_v1` is not a valid Ident", "`r#self` cannot be
/// a raw identifier"). tests/shapes compiles such names with `#![deny(warnings)]`.
#[test]
fn names_kubernetes_allows_and_rust_does_not_generate() {
    let tmp = api_crate(&[
        (
            "src/lib.rs",
            "pub mod digit;\npub mod own;\npub mod krate;\npub mod sup;\n".into(),
        ),
        (
            "src/digit.rs",
            group_module(
                "1password.example.com",
                &[("Thing", "1things"), ("Typed", "type"), ("Gen", "gen")],
            ),
        ),
        (
            "src/own.rs",
            group_module("self.example.com", &[("Own", "self")]),
        ),
        (
            "src/krate.rs",
            group_module("crate.example.com", &[("Krate", "crate")]),
        ),
        (
            "src/sup.rs",
            group_module("super.example.com", &[("Sup", "super")]),
        ),
    ]);
    let files = generated_text(&tmp.path().join("crate"));
    let clientset = &files
        .iter()
        .find(|(p, _)| p.ends_with("clientset.rs"))
        .expect("clientset.rs")
        .1;
    for name in [
        "pub fn _1password_v1(&self) -> _1password_v1::_1passwordV1Client",
        "pub fn _1things(&self, namespace: &str)",
        "pub fn r#type(&self, namespace: &str)",
        "pub fn r#gen(&self, namespace: &str)",
        "pub fn self_(&self, namespace: &str)",
        "pub fn crate_(&self, namespace: &str)",
        "pub fn super_(&self, namespace: &str)",
    ] {
        assert!(clientset.contains(name), "no `{name}` in\n{clientset}");
    }
}

/// `import crd` of a CRD whose group and plural are such names writes a crate that
/// generates (it exited 0, and `generate` then panicked).
#[test]
fn an_imported_crd_with_such_names_generates() {
    let tmp = tempfile::tempdir().unwrap();
    for (i, (group, plural)) in [
        ("1password.example.com", "1things"),
        ("self.example.com", "self"),
    ]
    .into_iter()
    .enumerate()
    {
        let crd = format!(
            "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n\
             metadata:\n  name: {plural}.{group}\nspec:\n  group: {group}\n  names:\n    \
             kind: Thing\n    plural: {plural}\n    singular: thing\n  scope: Namespaced\n  \
             versions:\n  - name: v1\n    served: true\n    storage: true\n    schema:\n      \
             openAPIV3Schema:\n        type: object\n        properties:\n          spec:\n            \
             type: object\n            properties:\n              name: {{type: string}}\n"
        );
        std::fs::write(tmp.path().join(format!("crd{i}.yaml")), crd).unwrap();
    }
    let out = kube_codegen(
        tmp.path(),
        &["import", "crd", "crd0.yaml", "crd1.yaml", "--out", "api"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = kube_codegen(tmp.path(), &["generate", "api"]);
    assert!(
        out.status.success(),
        "generate of the imported crate: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let clientset =
        std::fs::read_to_string(tmp.path().join("api/src/generated/clientset.rs")).unwrap();
    assert!(clientset.contains("pub fn _1things("), "{clientset}");
    assert!(clientset.contains("pub fn self_("), "{clientset}");
}

// ---------------------------------------------------------------------------------------
// Item 3: nesting.

use kube_codegen::__private::{MAX_SOURCE_NESTING, MAX_TYPE_NESTING};

/// The head of a group/version module with one kind, `Thing`, whose spec is `spec`.
fn kind_with_spec(spec: &str) -> String {
    format!(
        "//! +groupName=deep.example.com\n//! +versionName=v1\n\n\
         use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;\n\
         use kube::core::TypeMeta;\nuse serde::{{Deserialize, Serialize}};\n\n\
         /// +kubebuilder:object:root=true\n\
         #[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]\n\
         pub struct Thing {{\n    #[serde(flatten)]\n    pub types: TypeMeta,\n    \
         pub metadata: ObjectMeta,\n    pub spec: {spec},\n}}\n"
    )
}

/// A chain of `n` structs `S0`..: each holds the next in an `Option` (3 levels each).
fn struct_chain(n: usize) -> String {
    let mut s = String::new();
    for i in 0..n {
        let field = if i + 1 < n {
            format!("pub next: Option<S{}>", i + 1)
        } else {
            "pub leaf: String".to_owned()
        };
        s.push_str(&format!(
            "\n#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]\n\
             pub struct S{i} {{\n    {field},\n}}\n"
        ));
    }
    s
}

fn wrap(wrapper: &str, n: usize, inner: &str) -> String {
    format!(
        "{}{inner}{}",
        format!("{wrapper}<").repeat(n),
        ">".repeat(n)
    )
}

/// Input nested just within both limits generates, called from a test thread (a 2 MiB
/// stack) and on every worker: a kind whose types nest ~253 levels (84 structs in
/// `Option`s), a field of 250 nested `Vec`s beside it, and code that nests 250 deep.
/// Before, a 40-deep `Vec<Vec<…>>` aborted on 2 MiB worker stacks, and 100 nested structs
/// or 200 nested `Option`s overflowed the calling thread (exit 134).
#[test]
fn nesting_within_the_limits_generates_on_a_small_stack() {
    assert_eq!((MAX_SOURCE_NESTING, MAX_TYPE_NESTING), (256, 256));
    let mut lib = kind_with_spec("Option<S0>");
    lib.push_str(&struct_chain(84));
    lib.push_str(&format!(
        "\n#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]\n\
         pub struct Deep {{\n    pub v: {},\n}}\n",
        wrap("Vec", 250, "u8")
    ));
    lib.push_str(&format!(
        "\npub fn parens() -> i32 {{ {}1{} }}\n",
        "(".repeat(250),
        ")".repeat(250)
    ));
    let tmp = api_crate(&[("src/lib.rs", lib)]);
    let files = generated_text(&tmp.path().join("crate"));
    let crd = &files
        .iter()
        .find(|(p, _)| p.extension().is_some_and(|e| e == "yaml") && !p.ends_with("role.yaml"))
        .expect("the CRD")
        .1;
    // The schema holds every level: 84 `next` properties, one inside the other.
    assert_eq!(crd.matches("next:").count(), 83, "{crd}");
    assert!(crd.contains("leaf:"));
}

/// Past the limits: an error located where the limit is passed, never an abort. The shapes
/// of issue 30 (nested structs, `Option`s, inline modules) and what else `syn` recurses
/// on without brackets.
#[test]
fn nesting_past_the_limits_is_a_located_error() {
    let spec = "ThingSpec";
    let spec_struct = "\n#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]\n\
                       pub struct ThingSpec {\n    pub name: String,\n}\n";
    let cases: Vec<(&str, String, &str)> = vec![
        (
            "100 structs, each in an Option (300 levels)",
            format!("{}{}", kind_with_spec("Option<S0>"), struct_chain(100)),
            "nest 301 levels deep, more than 256",
        ),
        (
            "300 nested Options",
            kind_with_spec(&wrap("Option", 300, "String")),
            "nests more than 256 levels deep here",
        ),
        (
            "300 nested inline modules",
            format!(
                "{}{spec_struct}{}pub struct X;\n{}",
                kind_with_spec(spec),
                "pub mod m {\n".repeat(300),
                "}\n".repeat(300)
            ),
            "nests more than 256 levels deep here",
        ),
        (
            "20,000 nested closures",
            format!(
                "{}{spec_struct}pub fn f() {{ let _ = {}1; }}\n",
                kind_with_spec(spec),
                "|x| ".repeat(20_000)
            ),
            "nests more than 256 levels deep here",
        ),
        (
            "20,000 returns",
            format!(
                "{}{spec_struct}pub fn f() {{ {}; }}\n",
                kind_with_spec(spec),
                "return ".repeat(20_000)
            ),
            "nests more than 256 levels deep here",
        ),
        (
            "20,000 pointer types",
            format!(
                "{}{spec_struct}pub type P = {}u8;\n",
                kind_with_spec(spec),
                "*const ".repeat(20_000)
            ),
            "nests more than 256 levels deep here",
        ),
        (
            "20,000 function types",
            format!(
                "{}{spec_struct}pub type F = {}u8;\n",
                kind_with_spec(spec),
                "fn() -> ".repeat(20_000)
            ),
            "nests more than 256 levels deep here",
        ),
    ];
    for (what, lib, message) in cases {
        let tmp = api_crate(&[("src/lib.rs", lib)]);
        let dir = tmp.path().join("crate");
        match Config::new().crate_dir(&dir).generate() {
            Err(Error::Input {
                diagnostics,
                rendered,
            }) => {
                assert_eq!(diagnostics.len(), 1, "{what}: {rendered}");
                let d = &diagnostics[0];
                assert!(d.message.contains(message), "{what}: {rendered}");
                assert_eq!(d.loc.file, dir.join("src/lib.rs"), "{what}");
                assert!(d.loc.line > 1 && d.loc.column >= 1, "{what}: {rendered}");
            }
            Ok(_) => panic!("{what}: generated"),
            Err(e) => panic!("{what}: {e:?}"),
        }
    }
}

/// `import go` of a field 300 `[]` deep: the import fails with an error at the Go type
/// (the nesting `generate` refuses, found by generating the port before writing it; item
/// 7), where it exited 0 and `generate` then aborted on the stack's end (item 3).
#[test]
fn import_go_of_a_type_nested_300_deep_fails_at_the_go_type() {
    let tmp = tempfile::tempdir().unwrap();
    let pkg = tmp.path().join("deep");
    std::fs::create_dir_all(&pkg).unwrap();
    std::fs::write(
        pkg.join("types.go"),
        format!(
            "// +groupName=deep.example.com\npackage v1\n\n\
             import metav1 \"k8s.io/apimachinery/pkg/apis/meta/v1\"\n\n\
             // +kubebuilder:object:root=true\ntype Thing struct {{\n\
             \tmetav1.TypeMeta   `json:\",inline\"`\n\
             \tmetav1.ObjectMeta `json:\"metadata,omitempty\"`\n\
             \tSpec ThingSpec `json:\"spec\"`\n}}\n\n\
             type ThingSpec struct {{\n\tA {}string `json:\"a\"`\n}}\n",
            "[]".repeat(300)
        ),
    )
    .unwrap();
    let out = kube_codegen(tmp.path(), &["import", "go", "deep", "--out", "api"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("`generate` would refuse the crate this imports to: the code nests more than 256 levels deep here"),
        "{stderr}"
    );
    assert!(stderr.contains("--> deep/types.go:13:6"), "{stderr}");
    assert!(!tmp.path().join("api").exists(), "nothing written");
}

// ---------------------------------------------------------------------------------------
// Item 4: symlink loops.

/// Run the binary, killing it after `secs`: `None` when it did not finish.
fn kube_codegen_within(cwd: &Path, args: &[&str], secs: u64) -> Option<Output> {
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_kube-codegen"))
        .args(args)
        .current_dir(cwd)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            child.kill().unwrap();
            child.wait().unwrap();
            return None;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    Some(child.wait_with_output().unwrap())
}

/// `ln -s . src/a; ln -s . src/b` (and the same in the CRD directory, whose stale files a
/// run looks for, and in a directory `import crd` reads): each directory is read once,
/// with a warning naming the symlink. Walks followed the loops round, through an
/// exponential number of paths, until they were killed.
#[test]
#[cfg(unix)]
fn symlink_loops_are_read_once() {
    use std::os::unix::fs::symlink;
    let tmp = api_crate(&[
        (
            "Cargo.toml",
            "[package]\nname = \"loops\"\nversion = \"0.0.0\"\n".into(),
        ),
        (
            "src/lib.rs",
            group_module("loops.example.com", &[("Thing", "things")]),
        ),
    ]);
    let krate = tmp.path().join("crate");
    for dir in ["src", "crds"] {
        std::fs::create_dir_all(krate.join(dir)).unwrap();
        symlink(".", krate.join(dir).join("a")).unwrap();
        symlink(".", krate.join(dir).join("b")).unwrap();
    }
    let out = kube_codegen_within(tmp.path(), &["generate", "crate"], 60)
        .expect("generate finishes within 60 s");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    for link in ["a", "b"] {
        assert!(
            stderr.contains(&format!(
                "warning: directory read once: it is {} again (a symlink)",
                std::fs::canonicalize(krate.join("src")).unwrap().display()
            )) && stderr.contains(&format!("--> crate/src/{link}:1:1")),
            "{stderr}"
        );
    }
    assert!(krate.join("crds/loops.example.com_things.yaml").is_file());
    let out = kube_codegen_within(tmp.path(), &["check", "crate"], 60)
        .expect("check finishes within 60 s");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // `import crd DIR`, the CRD just generated in a directory that loops.
    let crds = tmp.path().join("in");
    std::fs::create_dir_all(&crds).unwrap();
    std::fs::copy(
        krate.join("crds/loops.example.com_things.yaml"),
        crds.join("things.yaml"),
    )
    .unwrap();
    symlink(".", crds.join("a")).unwrap();
    symlink(".", crds.join("b")).unwrap();
    let out = kube_codegen_within(
        tmp.path(),
        &["import", "crd", "in", "--out", "imported"],
        60,
    )
    .expect("import crd finishes within 60 s");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("imported 1 CRD"), "{stderr}");
    assert!(
        stderr.contains("warning: in/a: directory read once"),
        "{stderr}"
    );
}

// ---------------------------------------------------------------------------------------
// Item 5: bounds that were lost, or that no value meets.

/// A kind whose spec has one field: `doc` its doc lines (markers), `ty` its type.
fn kind_with_field(doc: &[&str], ty: &str) -> String {
    let mut s = kind_with_spec("ThingSpec");
    s.push_str(
        "\n#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]\n\
         pub struct ThingSpec {\n",
    );
    for d in doc {
        s.push_str(&format!("    /// {d}\n"));
    }
    s.push_str(&format!("    pub f: {ty},\n}}\n"));
    s
}

/// The one diagnostic of generating `lib`, which must fail.
fn the_error(lib: String) -> kube_codegen::Diagnostic {
    let tmp = api_crate(&[("src/lib.rs", lib)]);
    match Config::new().crate_dir(tmp.path().join("crate")).generate() {
        Err(Error::Input {
            mut diagnostics,
            rendered,
        }) => {
            assert_eq!(diagnostics.len(), 1, "{rendered}");
            diagnostics.remove(0)
        }
        Ok(_) => panic!("generated"),
        Err(e) => panic!("{e:?}"),
    }
}

/// On a float field, a bound JSON cannot hold is an error at its marker; it was written as
/// `minimum: null` (the bound gone) with exit 0. (Integer fields refused them already.)
#[test]
fn float_bounds_json_cannot_hold_are_errors() {
    for marker in [
        "+kubebuilder:validation:Minimum=NaN",
        "+kubebuilder:validation:Maximum=inf",
        "+kubebuilder:validation:Maximum=1e400",
        "+kubebuilder:validation:Minimum=-inf",
        "+kubebuilder:validation:MultipleOf=NaN",
        "+kubebuilder:validation:Maximum=-Infinity",
    ] {
        let d = the_error(kind_with_field(&[marker], "f64"));
        assert!(d.is_error(), "{marker}: {d}");
        assert!(
            d.message.contains("is not a finite number"),
            "{marker}: {d}"
        );
        // The marker's line: the kind (16 lines), the spec's head (2), the marker.
        assert_eq!((d.loc.line, d.loc.column), (19, 9), "{marker}: {d}");
    }
}

/// What the API server takes (checked against v1.37: `tests/tests/crds.rs`
/// `bounds_that_warn_are_what_the_server_takes`) and controller-gen writes, but is surely
/// not meant: generated as written, with a warning at the marker. Each was exit 0 without
/// a word.
#[test]
fn bounds_no_value_meets_are_warnings() {
    let cases: &[(&[&str], &str, &str)] = &[
        (
            &["+kubebuilder:validation:Enum=a;b;a"],
            "String",
            "lists `a` twice",
        ),
        (
            &[
                "+kubebuilder:validation:MinLength=5",
                "+kubebuilder:validation:MaxLength=2",
            ],
            "String",
            "no value meets these bounds: MinLength 5 is above MaxLength 2",
        ),
        (
            &[
                "+kubebuilder:validation:MinItems=3",
                "+kubebuilder:validation:MaxItems=1",
            ],
            "Vec<String>",
            "no value meets these bounds: MinItems 3 is above MaxItems 1",
        ),
        (
            &[
                "+kubebuilder:validation:MaxProperties=1",
                "+kubebuilder:validation:MinProperties=2",
            ],
            "BTreeMap<String, String>",
            "no value meets these bounds: MinProperties 2 is above MaxProperties 1",
        ),
        (
            &[
                "+kubebuilder:validation:Minimum=10",
                "+kubebuilder:validation:Maximum=5",
            ],
            "i64",
            "no value meets these bounds: Minimum 10 is above Maximum 5",
        ),
        (
            &[
                "+kubebuilder:validation:Minimum=5",
                "+kubebuilder:validation:Maximum=5",
                "+kubebuilder:validation:ExclusiveMaximum=true",
            ],
            "i64",
            "Minimum 5 is equal to the exclusive Maximum 5",
        ),
        (
            &["+kubebuilder:validation:Maximum=99999999999"],
            "i32",
            "is beyond what the field's `i32` holds (-2147483648 to 2147483647)",
        ),
        (
            &["+kubebuilder:validation:Maximum=-1"],
            "Option<u32>",
            "is beyond what the field's `u32` holds (0 to 4294967295)",
        ),
    ];
    for (markers, ty, message) in cases {
        let tmp = api_crate(&[("src/lib.rs", kind_with_field(markers, ty))]);
        let generated = Config::new()
            .crate_dir(tmp.path().join("crate"))
            .generate()
            .unwrap_or_else(|e| panic!("{markers:?}: {e}"));
        let [w] = generated.warnings.as_slice() else {
            panic!("{markers:?}: {:?}", generated.warnings);
        };
        assert!(
            !w.is_error() && w.message.contains(message),
            "{markers:?}: {w}"
        );
        // At the upper bound's marker, or the one marker.
        let at = markers
            .iter()
            .position(|m| m.contains(":Max"))
            .unwrap_or_default();
        assert_eq!(w.loc.line, 19 + at, "{markers:?}: {w}");
    }
    // A printer column of negative priority: kubectl shows it only with `-o wide`.
    let lib = kind_with_spec("ThingSpec").replace(
        "/// +kubebuilder:object:root=true\n",
        "/// +kubebuilder:object:root=true\n\
         /// +kubebuilder:printcolumn:name=\"F\",type=string,JSONPath=\".spec.f\",priority=-1\n",
    ) + "\n#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]\n\
         pub struct ThingSpec {\n    pub f: String,\n}\n";
    let tmp = api_crate(&[("src/lib.rs", lib)]);
    let generated = Config::new()
        .crate_dir(tmp.path().join("crate"))
        .generate()
        .unwrap();
    let [w] = generated.warnings.as_slice() else {
        panic!("{:?}", generated.warnings);
    };
    assert!(
        w.message.contains("printcolumn priority -1 is negative"),
        "{w}"
    );
    assert_eq!(w.loc.line, 9, "{w}");
}

// ---------------------------------------------------------------------------------------
// Item 10: input that is not UTF-8.

/// A CRD whose description holds a Latin-1 `é` (byte 0xe9) on line 8.
fn latin1_crd() -> Vec<u8> {
    let mut crd = [
        "apiVersion: apiextensions.k8s.io/v1",
        "kind: CustomResourceDefinition",
        "metadata:",
        "  name: widgets.example.com",
        "spec:",
        "  group: example.com",
        "  names: {kind: Widget, plural: widgets}",
        "  scope: Namespaced",
        "  versions:",
        "  - name: v1",
        "    served: true",
        "    storage: true",
        "    schema:",
        "      openAPIV3Schema:",
        "        type: object",
        "        description: caf",
    ]
    .join("\n")
    .into_bytes();
    crd.push(0xe9);
    crd.extend_from_slice(b" au lait\n");
    crd
}

/// `import crd` and `import go` of files that are not UTF-8 (Latin-1, UTF-16, from a file,
/// a directory and stdin): an error per file at its first bad byte, with the byte's offset
/// and its line and column, a hint, and nothing written. They said "stream did not contain
/// valid UTF-8", naming no file, or the first file alone.
#[test]
fn input_that_is_not_utf8_is_an_error_at_its_first_bad_byte() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::create_dir_all(dir.join("crds")).unwrap();
    std::fs::write(dir.join("crds/a.yaml"), latin1_crd()).unwrap();
    // UTF-16LE with its byte-order mark, as Windows editors save.
    let utf16: Vec<u8> = [0xff, 0xfe]
        .into_iter()
        .chain("apiVersion: v1\n".encode_utf16().flat_map(u16::to_le_bytes))
        .collect();
    std::fs::write(dir.join("crds/b.yaml"), utf16).unwrap();

    let out = kube_codegen(dir, &["import", "crd", "crds", "--out", "api"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(!stderr.contains("stream did not contain"), "{stderr}");
    assert!(
        stderr
            .contains("file is not valid UTF-8: byte 0xe9 at offset 333\n  --> crds/a.yaml:16:25"),
        "{stderr}"
    );
    assert!(stderr.contains("CRDs are read as UTF-8"), "{stderr}");
    assert!(
        stderr.contains("file is UTF-16 (it starts with a UTF-16 byte-order mark), not UTF-8\n  --> crds/b.yaml:1:1"),
        "{stderr}"
    );
    assert!(stderr.contains("import failed with 2 errors"), "{stderr}");
    assert!(!dir.join("api").exists());

    // From stdin, named as `-`.
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_kube-codegen"))
        .args(["import", "crd", "-", "--out", "api"])
        .current_dir(dir)
        .stdin(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), &latin1_crd()).unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains("offset 333\n  --> -:16:25"), "{stderr}");

    // A Go file: the first bad byte, after a multi-byte character of the same line.
    std::fs::create_dir_all(dir.join("go")).unwrap();
    let mut go = "package v1\n\n// Widget est un café ".as_bytes().to_vec();
    go.push(0xe9);
    go.extend_from_slice(b"\ntype Widget struct{}\n");
    std::fs::write(dir.join("go/types.go"), go).unwrap();
    let out = kube_codegen(dir, &["import", "go", "go", "--out", "api"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("file is not valid UTF-8: byte 0xe9 at offset 35\n  --> go/types.go:3:23"),
        "{stderr}"
    );
    assert!(stderr.contains("Go source is UTF-8"), "{stderr}");
    assert!(!dir.join("api").exists());
}

// ---------------------------------------------------------------------------------------
// Item 1: big CRDs.

/// A CRD of about `size` bytes of JSON: fields with descriptions and keywords, several of
/// which `import crd` keeps as `+kube-codegen:schema` with a warning each (thousands in
/// all), as large real CRDs have.
fn big_crd(size: usize) -> serde_json::Value {
    use serde_json::json;
    let desc =
        "The value of this field, documented at some length as API reference text often is. "
            .repeat(3);
    let mut props = serde_json::Map::new();
    let mut total = 0;
    let mut n = 0;
    while total < size {
        let field = json!({
            "type": "object",
            "description": desc,
            "properties": {
                "name": {"type": "string", "description": desc, "maxLength": 63},
                "count": {"type": "integer", "format": "int32", "description": desc, "minimum": 0},
                "odd": {"type": "string", "format": format!("x-custom-{n}"), "description": desc},
                "tags": {"type": "array", "items": {"type": "string", "description": desc}},
            },
        });
        total += field.to_string().len() + 12;
        props.insert(format!("field{n}"), field);
        n += 1;
    }
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "bigs.big.example.com"},
        "spec": {
            "group": "big.example.com",
            "names": {"kind": "Big", "plural": "bigs", "listKind": "BigList", "singular": "big"},
            "scope": "Namespaced",
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": props},
                }}},
            }],
        },
    })
}

/// What a run of the binary took: its exit status, stderr, and peak RSS in bytes (from
/// `wait4`), or `None` when it was killed at the hang guard.
// The child is reaped by `wait4`, which clippy does not see.
#[allow(clippy::zombie_processes)]
fn kube_codegen_measured(
    cwd: &Path,
    args: &[&str],
    secs: u64,
) -> Option<(std::process::ExitStatus, Vec<u8>, u64)> {
    use std::os::unix::process::ExitStatusExt;
    let stderr = cwd.join("stderr.txt");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_kube-codegen"))
        .args(args)
        .current_dir(cwd)
        .stdout(std::process::Stdio::null())
        .stderr(std::fs::File::create(&stderr).unwrap())
        .spawn()
        .unwrap();
    let pid = child.id() as libc::pid_t;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    loop {
        let mut status = 0;
        // SAFETY: plain out-parameters of the right types; the child is ours and waited
        // for here only (std's `Child` is not waited on afterwards).
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        let got = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
        if got == pid {
            // Linux gives ru_maxrss in KiB.
            let rss = u64::try_from(usage.ru_maxrss).unwrap() * 1024;
            return Some((
                std::process::ExitStatus::from_raw(status),
                std::fs::read(&stderr).unwrap(),
                rss,
            ));
        }
        assert_eq!(got, 0, "wait4: {}", std::io::Error::last_os_error());
        if std::time::Instant::now() > deadline {
            child.kill().unwrap();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// `import crd` of a 5 MB CRD, on one line and pretty-printed, thousands of warnings each:
/// within generous bounds that guard against blow-ups (1 GiB of RSS, 120 s, in a debug
/// build that takes a few seconds and ~200 MB), every warning quoting a bounded excerpt of
/// its line. Each warning quoted the whole line, so a 3 MB line took 2.4 GB (and 2.4 GB of
/// stderr), and each looked for its JSON path from the document's start, so a
/// pretty-printed 3.5 MB CRD took 40 s of CPU. The 20 MB measurements are in
/// RELIABILITY.md.
#[test]
fn import_crd_of_a_5_mb_crd_stays_within_bounds() {
    let tmp = tempfile::tempdir().unwrap();
    let crd = big_crd(5 << 20);
    std::fs::write(tmp.path().join("one-line.json"), crd.to_string()).unwrap();
    std::fs::write(
        tmp.path().join("pretty.json"),
        serde_json::to_string_pretty(&crd).unwrap(),
    )
    .unwrap();
    for input in ["one-line.json", "pretty.json"] {
        let out = format!("out-{input}");
        let (status, stderr, rss) =
            kube_codegen_measured(tmp.path(), &["import", "crd", input, "--out", &out], 120)
                .unwrap_or_else(|| panic!("{input}: still running after 120 s"));
        let stderr = String::from_utf8_lossy(&stderr);
        assert!(
            status.success(),
            "{input}: {status:?}\n{}",
            &stderr[..stderr.len().min(4000)]
        );
        let warnings = stderr.matches("\nwarning: ").count();
        assert!(warnings > 5000, "{input}: {warnings} warnings");
        let longest = stderr.lines().map(str::len).max().unwrap_or(0);
        assert!(
            longest < 1000,
            "{input}: a line of {longest} bytes on stderr"
        );
        eprintln!("{input}: {warnings} warnings, peak RSS {} MiB", rss >> 20);
        assert!(rss < 1 << 30, "{input}: peak RSS {} MiB", rss >> 20);
        assert!(tmp.path().join(&out).join("src/apis").is_dir());
    }
}

// ---------------------------------------------------------------------------------------
// Item 7: importers write what `generate` takes, or fail in their input.

/// Go types named `Self`, `Option`, `String`, `Vec` and `Box` are ported under names with
/// a trailing `_`, each said in a warning at the Go type, and the crate generates (the
/// JSON, and so the CRD, are unchanged: a type's name is in neither). The import exited 0
/// and `generate` then failed on the Rust it wrote ("expected identifier, found keyword
/// `Self`", "type `Option` contains itself"). The refusals (cycles, non-string map keys,
/// two fields of one JSON name, a kind no struct can be named after, and `import crd`'s
/// kinds `Self`, `""`, `Option`, two storage versions, `type: banana`) are in the error
/// corpus (`tests/errors_import*/`), located in the Go and YAML.
#[test]
fn go_types_with_names_rust_reserves_are_ported_renamed() {
    let tmp = tempfile::tempdir().unwrap();
    let go = tmp.path().join("names");
    std::fs::create_dir_all(&go).unwrap();
    std::fs::write(
        go.join("types.go"),
        "// +groupName=names.example.com\npackage v1\n\n\
         import metav1 \"k8s.io/apimachinery/pkg/apis/meta/v1\"\n\n\
         // +kubebuilder:object:root=true\n\
         type Widget struct {\n\tmetav1.TypeMeta   `json:\",inline\"`\n\t\
         metav1.ObjectMeta `json:\"metadata,omitempty\"`\n\tSpec WidgetSpec `json:\"spec,omitempty\"`\n}\n\n\
         type WidgetSpec struct {\n\tA Self `json:\"a,omitempty\"`\n\tB Option `json:\"b,omitempty\"`\n\t\
         C String `json:\"c,omitempty\"`\n\tD Vec `json:\"d,omitempty\"`\n\tE *Box `json:\"e,omitempty\"`\n}\n\n\
         type Self struct {\n\tX string `json:\"x\"`\n}\n\ntype Option string\n\n\
         type String struct {\n\tY int32 `json:\"y\"`\n}\n\ntype Vec []string\n\n\
         type Box struct {\n\tZ bool `json:\"z\"`\n}\n",
    )
    .unwrap();
    let out = kube_codegen(tmp.path(), &["import", "go", "names", "--out", "api"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    for (name, line) in [
        ("Self", 21),
        ("Option", 25),
        ("String", 27),
        ("Vec", 31),
        ("Box", 33),
    ] {
        assert!(
            stderr.contains(&format!(
                "warning: type `{name}` is `{name}_` in the port: it is "
            )) && stderr.contains(&format!("--> names/types.go:{line}:6")),
            "{name}: {stderr}"
        );
    }
    let out = kube_codegen(tmp.path(), &["generate", "api"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let types = std::fs::read_to_string(tmp.path().join("api/src/apis/names/v1/types.rs")).unwrap();
    for decl in [
        "pub struct Self_ {",
        "pub type Option_ = String;",
        "pub struct String_ {",
        "pub type Vec_ = Vec<String>;",
        "pub struct Box_ {",
    ] {
        assert!(types.contains(decl), "{decl} in\n{types}");
    }
}

/// A Go struct that holds itself twice (`A *Value`, `Name Value`; Go refuses the second,
/// the importer reads it): the import finishes. Working out whether such a type can be
/// defaulted walked every path through it, 2^32 of them, and the import hung. Found by
/// the import fuzzer (`fuzz_import.rs`).
#[test]
fn import_go_of_a_struct_holding_itself_twice_finishes() {
    let tmp = tempfile::tempdir().unwrap();
    let pkg = tmp.path().join("twice");
    std::fs::create_dir_all(&pkg).unwrap();
    std::fs::write(
        pkg.join("types.go"),
        "// +groupName=twice.example.com\npackage v1\n\n\
         import metav1 \"k8s.io/apimachinery/pkg/apis/meta/v1\"\n\n\
         // +kubebuilder:object:root=true\ntype Thing struct {\n\
         \tmetav1.TypeMeta   `json:\",inline\"`\n\
         \tmetav1.ObjectMeta `json:\"metadata,omitempty\"`\n\
         \tSpec ThingSpec `json:\"spec\"`\n}\n\n\
         type ThingSpec struct {\n\tX string `json:\"x\"`\n}\n\n\
         type Value struct {\n\tA *Value `json:\"a\"`\n\tName Value `json:\"name\"`\n}\n",
    )
    .unwrap();
    let out = kube_codegen_within(tmp.path(), &["import", "go", "twice", "--out", "api"], 60)
        .expect("the import finishes within 60 s");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
