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
