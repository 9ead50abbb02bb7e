//! The Kubernetes version is the user's choice: the same API generated for the oldest and
//! the newest supported version embeds each version's schemas, and each output compiles
//! against k8s-openapi built for that version (with the real runtime), as a user's crate
//! on that version would build it.

use std::path::{Path, PathBuf};
use std::process::Command;

use kube_codegen::{ChosenBy, Config, Error, KubernetesVersion};
use serde_json::Value;

const FIXTURE: &str = "tests/fixtures/kubernetes_versions";

fn generate(v: KubernetesVersion) -> kube_codegen::Generated {
    Config::new()
        .crate_dir(FIXTURE)
        .kubernetes_version(v)
        .generate()
        .unwrap_or_else(|e| panic!("Kubernetes {v}: {e}"))
}

/// The pod spec's properties in the CRD of a run.
fn pod_spec_properties(g: &kube_codegen::Generated) -> serde_json::Map<String, Value> {
    let yaml = g
        .files
        .iter()
        .find(|f| f.path.extension().is_some_and(|e| e == "yaml"))
        .expect("a CRD");
    let crd: Value = serde_yaml::from_str(&yaml.contents).unwrap();
    crd.pointer(
        "/spec/versions/0/schema/openAPIV3Schema/properties/spec/properties/template/properties/spec/properties",
    )
    .and_then(Value::as_object)
    .cloned()
    .expect("the template's pod spec")
}

#[test]
fn each_version_embeds_its_own_schemas() {
    let oldest = KubernetesVersion::ALL[0];
    let newest = KubernetesVersion::NEWEST;
    let old = generate(oldest);
    let new = generate(newest);
    assert_eq!(old.kubernetes, (oldest, ChosenBy::Config));
    assert!(
        old.summary().contains(&format!("Kubernetes {oldest}")),
        "{}",
        old.summary()
    );
    let (old_props, new_props) = (pod_spec_properties(&old), pod_spec_properties(&new));
    // PodSpec grew between the two versions: the newer schema has fields the older lacks,
    // and every field the older has is still there.
    let added: Vec<&String> = new_props
        .keys()
        .filter(|k| !old_props.contains_key(*k))
        .collect();
    assert!(
        !added.is_empty(),
        "PodSpec is the same in {oldest} and {newest}"
    );
    assert!(old_props.keys().all(|k| new_props.contains_key(k)));
    // The apply configurations of the embedded types follow the version's schemas too
    // (client-go's are per version as well): the newer PodSpec's configuration has the
    // added fields.
    let apply = |g: &kube_codegen::Generated| -> String {
        g.files
            .iter()
            .find(|f| f.path.ends_with("applyconfigurations.rs"))
            .map(|f| f.contents.clone())
            .expect("apply configurations")
    };
    let renamed = |field: &str| format!("rename = \"{field}\"");
    for field in &added {
        assert!(apply(&new).contains(&renamed(field)), "{field}");
    }
    assert!(!apply(&old).contains(&renamed(added[0])), "{}", added[0]);
    // Nothing else depends on the version: the rest of the Rust is the same text.
    let rust = |g: &kube_codegen::Generated| -> Vec<(PathBuf, String)> {
        g.files
            .iter()
            .filter(|f| f.path.extension().is_some_and(|e| e == "rs"))
            .filter(|f| !f.path.ends_with("applyconfigurations.rs"))
            .map(|f| (f.path.clone(), f.contents.clone()))
            .collect()
    };
    assert_eq!(rust(&old), rust(&new));
}

#[test]
fn a_type_the_chosen_version_lacks_is_a_located_error_naming_the_versions_that_have_it() {
    // The embedded-types fixture uses scheduling/v1beta1's WorkloadSpec, which 1.33 lacks.
    let err = Config::new()
        .crate_dir("tests/fixtures/k8s_embedded")
        .kubernetes_version(KubernetesVersion::V1_33)
        .generate()
        .expect_err("WorkloadSpec is not in Kubernetes 1.33");
    let Error::Input { rendered, .. } = err else {
        panic!("an input error")
    };
    assert!(rendered.contains("src/lib.rs:"), "{rendered}");
    assert!(
        rendered.contains("does not exist in Kubernetes 1.33, the version this run generates for"),
        "{rendered}"
    );
    assert!(
        rendered.contains("it exists in Kubernetes 1.3"),
        "{rendered}"
    );
}

#[test]
fn the_crates_k8s_openapi_feature_chooses_when_nothing_else_does() {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(
        Path::new(FIXTURE).join("src").as_path(),
        &dir.path().join("src"),
    );
    std::fs::write(
        dir.path().join("Cargo.toml"),
        "[package]\nname = \"x\"\nversion = \"0.0.0\"\n\n[dependencies]\nk8s-openapi = { version = \"0.29\", features = [\"v1_35\"] }\n",
    )
    .unwrap();
    let g = Config::from_crate(dir.path()).unwrap().generate().unwrap();
    assert_eq!(
        g.kubernetes,
        (
            KubernetesVersion::V1_35,
            ChosenBy::K8sOpenapiFeature("dependencies".into())
        )
    );
    assert!(
        g.summary()
            .contains("Kubernetes 1.35 (the k8s-openapi feature in [dependencies] of Cargo.toml)"),
        "{}",
        g.summary()
    );
    // Metadata naming another version than the feature is refused: one choice, one place.
    std::fs::write(
        dir.path().join("Cargo.toml"),
        "[package]\nname = \"x\"\nversion = \"0.0.0\"\n\n\
         [package.metadata.kube-codegen]\nkubernetes-version = \"1.36\"\n\n\
         [dependencies]\nk8s-openapi = { version = \"0.29\", features = [\"v1_35\"] }\n",
    )
    .unwrap();
    let e = Config::from_crate(dir.path()).unwrap_err().to_string();
    assert!(
        e.contains(
            "kubernetes-version = \"1.36\", but k8s-openapi in [dependencies] enables v1_35"
        ),
        "{e}"
    );
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dst = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dst);
        } else {
            std::fs::copy(e.path(), dst).unwrap();
        }
    }
}

/// The fixture with everything generated for `v`, as a crate on k8s-openapi's feature of
/// `v`, checked by cargo. Shares one target directory across runs (under cargo's
/// CARGO_TARGET_TMPDIR), so only the first run builds the dependencies.
fn check_crate_for(v: KubernetesVersion) -> std::process::Output {
    let root = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("kubernetes_versions");
    let krate = root.join(v.k8s_openapi_feature());
    let _ = std::fs::remove_dir_all(&krate);
    copy_dir(&Path::new(FIXTURE).join("src"), &krate.join("src"));
    let generated = Config::new()
        .crate_dir(&krate)
        .kubernetes_version(v)
        .write()
        .unwrap_or_else(|e| panic!("Kubernetes {v}: {e}"));
    assert!(!generated.written.is_empty());
    // The generated modules hang below the types, as in sample-api.
    let lib = krate.join("src/lib.rs");
    let text = std::fs::read_to_string(&lib).unwrap();
    std::fs::write(&lib, format!("{text}\npub mod generated;\n")).unwrap();
    let workspace = std::fs::canonicalize("..").unwrap();
    let runtime = workspace.join("runtime");
    std::fs::write(
        krate.join("Cargo.toml"),
        format!(
            "[package]\nname = \"versions-{feature}\"\nversion = \"0.0.0\"\nedition = \"2024\"\n\n\
             [dependencies]\n\
             kube-codegen-runtime = {{ path = {runtime:?}, features = [\"fake\"] }}\n\
             k8s-openapi = {{ version = \"0.29\", default-features = false, features = [\"std\", \"{feature}\"] }}\n\
             kube = {{ version = \"5\", default-features = false, features = [\"client\", \"rustls-tls\", \"ring\", \"runtime\"] }}\n\
             serde = {{ version = \"1\", features = [\"derive\"] }}\n\
             serde_json = \"1\"\n\n[workspace]\n",
            feature = v.k8s_openapi_feature(),
        ),
    )
    .unwrap();
    // The workspace's lock file: the versions this repository builds with, resolved
    // offline (cargo drops what the scratch crate does not use).
    std::fs::copy(workspace.join("Cargo.lock"), krate.join("Cargo.lock")).unwrap();
    Command::new(env!("CARGO"))
        .args(["check", "--offline", "--quiet"])
        .current_dir(&krate)
        .env("CARGO_TARGET_DIR", root.join("target"))
        .env_remove("RUSTFLAGS")
        .output()
        .unwrap()
}

#[test]
fn generated_code_compiles_for_the_oldest_and_the_newest_version() {
    for v in [KubernetesVersion::ALL[0], KubernetesVersion::NEWEST] {
        let out = check_crate_for(v);
        assert!(
            out.status.success(),
            "Kubernetes {v}:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
