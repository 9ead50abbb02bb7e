//! `init` and `create api` as planned files: every file snapshotted, the edits made at the
//! scaffold markers only, and each refusal. The crate they make is built and run against
//! the real control plane in tests/tests/scaffold.rs.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use kube_codegen::{
    ApiOptions, CrateFiles, RuntimeSource, ScaffoldFile, scaffold_api, scaffold_init,
};

/// A crate in memory.
struct Mem {
    name: String,
    files: BTreeMap<PathBuf, String>,
}

impl CrateFiles for Mem {
    fn package_name(&self) -> &str {
        &self.name
    }
    fn read(&self, path: &Path) -> Option<String> {
        self.files.get(path).cloned()
    }
}

impl Mem {
    fn apply(&mut self, files: Vec<ScaffoldFile>) {
        for f in files {
            assert_eq!(
                f.edit,
                self.files.contains_key(&f.path),
                "{}: edit flag does not match",
                f.path.display()
            );
            self.files.insert(f.path, f.contents);
        }
    }
}

fn initialized() -> Mem {
    let mut m = Mem {
        name: "guestbook-operator".into(),
        files: BTreeMap::new(),
    };
    m.apply(scaffold_init("guestbook-operator", &RuntimeSource::registry()).unwrap());
    m
}

fn api(kind: &str, cluster_scoped: bool) -> ApiOptions {
    ApiOptions {
        group: "webapp.example.com".into(),
        version: "v1".into(),
        kind: kind.into(),
        cluster_scoped,
    }
}

#[test]
fn init_then_two_kinds() {
    let mut m = initialized();
    m.apply(scaffold_api(&m, &api("Guestbook", false)).unwrap());
    m.apply(scaffold_api(&m, &api("GuestbookClass", true)).unwrap());
    for (path, contents) in &m.files {
        let name = path.display().to_string().replace('/', "__");
        insta::assert_snapshot!(name, contents);
    }
    // Markers stay, below what was inserted, so the next `create api` finds them.
    let main = &m.files[Path::new("src/main.rs")];
    assert_eq!(
        main.matches("// +kube-codegen:scaffold:controllers")
            .count(),
        1
    );
    assert!(
        main.find("controllers::guestbook_class::controller")
            .unwrap()
            < main.find("// +kube-codegen:scaffold:controllers").unwrap()
    );
    // The generated module is declared once, however many kinds.
    assert_eq!(
        m.files[Path::new("src/lib.rs")]
            .matches("pub mod generated;")
            .count(),
        1
    );
}

#[test]
fn the_runtime_can_come_from_a_checkout() {
    let files = scaffold_init(
        "op",
        &RuntimeSource::Path("/src/kube-codegen/runtime".into()),
    )
    .unwrap();
    let manifest = &files
        .iter()
        .find(|f| f.path == Path::new("Cargo.toml"))
        .unwrap()
        .contents;
    assert!(
        manifest.contains(r#"kube-codegen-runtime = { path = "/src/kube-codegen/runtime" }"#),
        "{manifest}"
    );
    assert!(
        manifest.contains(r#"kube-codegen-envtest = { path = "/src/kube-codegen/envtest" }"#),
        "{manifest}"
    );
    let manifest: toml::Table = manifest.parse().expect("the manifest is TOML");
    assert_eq!(manifest["package"]["name"].as_str(), Some("op"));
}

#[test]
fn refusals() {
    let err =
        |r: Result<Vec<ScaffoldFile>, kube_codegen::ScaffoldError>| r.unwrap_err().to_string();
    assert!(
        err(scaffold_init("9lives", &RuntimeSource::registry())).contains("is not a crate name")
    );

    let m = initialized();
    let mut bad = api("Guestbook", false);
    bad.group = "webapp".into();
    assert!(err(scaffold_api(&m, &bad)).contains("is not an API group"));
    let mut bad = api("Guestbook", false);
    bad.version = "v1gamma1".into();
    assert!(err(scaffold_api(&m, &bad)).contains("is not a Kubernetes API version"));
    assert!(err(scaffold_api(&m, &api("guestbook", false))).contains("is not a kind"));
    let mut bad = api("Guestbook", false);
    bad.group = "1password.example.com".into();
    assert!(err(scaffold_api(&m, &bad)).contains("cannot name a Rust module"));

    // A kind that exists.
    let mut m = initialized();
    m.apply(scaffold_api(&m, &api("Guestbook", false)).unwrap());
    assert!(err(scaffold_api(&m, &api("Guestbook", false))).contains("already defines Guestbook"));

    // Another group in the same module.
    let mut other = api("Mirror", false);
    other.group = "webapp.other.io".into();
    let e = err(scaffold_api(&m, &other));
    assert!(e.contains("holds the group webapp.example.com"), "{e}");

    // A crate whose main.rs lost its marker: nothing planned, a hint to put it back.
    let mut m = initialized();
    let main = m.files.get_mut(Path::new("src/main.rs")).unwrap();
    *main = main.replace("// +kube-codegen:scaffold:controllers", "");
    let e = err(scaffold_api(&m, &api("Guestbook", false)));
    assert!(
        e.contains("src/main.rs has no `// +kube-codegen:scaffold:controllers` line"),
        "{e}"
    );
    assert!(e.contains("hint:"), "{e}");

    // Not a crate from init at all.
    let empty = Mem {
        name: "x".into(),
        files: BTreeMap::new(),
    };
    assert!(err(scaffold_api(&empty, &api("Guestbook", false))).contains("does not exist"));
}
