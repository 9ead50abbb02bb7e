//! The `kube-codegen` binary on temporary copies of fixture crates.
//!
//! Every command runs with the temp dir as its working directory and the crate given as the
//! relative path `crate`, so paths in its output are short and stable.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::{Duration, SystemTime};

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

mod common;
use common::{copy_dir, tree};

const FOO_CRD: &str = "config/crd/samplecontroller.k8s.io_foos.yaml";

struct Sandbox {
    tmp: tempfile::TempDir,
}

impl Sandbox {
    /// A copy of `from` (relative to the generator crate) as `<tmp>/crate`.
    fn new(from: &str) -> Self {
        let tmp = tempfile::tempdir().unwrap();
        copy_dir(Path::new(from), &tmp.path().join("crate"));
        Sandbox { tmp }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.tmp.path().join("crate").join(rel)
    }

    fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.path(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
    }

    fn write(&self, rel: &str, contents: &str) {
        let p = self.path(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, contents).unwrap();
    }

    fn run(&self, args: &[&str]) -> Output {
        std::process::Command::new(env!("CARGO_BIN_EXE_kube-codegen"))
            .args(args)
            .current_dir(self.tmp.path())
            .output()
            .unwrap()
    }

    /// Run and expect success; returns stderr.
    fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert!(
            out.status.success(),
            "kube-codegen {args:?} failed:\n{stderr}"
        );
        stderr
    }

    /// Run and expect failure; returns stderr.
    fn fails(&self, args: &[&str]) -> String {
        let out = self.run(args);
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert!(
            !out.status.success(),
            "kube-codegen {args:?} should have failed:\n{stderr}"
        );
        assert!(out.stdout.is_empty(), "nothing on stdout when failing");
        stderr
    }

    /// Every file of the crate (paths relative to it) with its contents and mtime.
    fn snapshot(&self) -> BTreeMap<PathBuf, (Vec<u8>, SystemTime)> {
        tree(&self.path(""))
    }
}

fn set_mtime(path: &Path, t: SystemTime) {
    std::fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(t)
        .unwrap();
}

fn mtime(path: &Path) -> SystemTime {
    std::fs::metadata(path).unwrap().modified().unwrap()
}

fn old_time() -> SystemTime {
    SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000_000)
}

/// The counts of `kube-codegen: N written, M unchanged, K removed`.
fn summary(stderr: &str) -> (usize, usize, usize) {
    let line = stderr
        .lines()
        .find(|l| l.starts_with("kube-codegen: ") && l.contains(" written, "))
        .unwrap_or_else(|| panic!("no summary in\n{stderr}"));
    let n: Vec<usize> = line
        .trim_start_matches("kube-codegen: ")
        .split(", ")
        .map(|part| part.split(' ').next().unwrap().parse().unwrap())
        .collect();
    (n[0], n[1], n[2])
}

#[test]
fn generate_writes_then_writes_nothing() {
    let sb = Sandbox::new("tests/fixtures/foo");
    let stderr = sb.ok(&["generate", "crate"]);
    assert!(
        stderr.contains(&format!("wrote crate/{FOO_CRD}\n")),
        "{stderr}"
    );
    let (written, unchanged, removed) = summary(&stderr);
    assert!(written >= 1 && unchanged == 0 && removed == 0, "{stderr}");
    assert_eq!(stderr.matches("wrote ").count(), written, "{stderr}");

    // Same bytes as the library produces.
    let expected = kube_codegen::Config::from_crate("tests/fixtures/foo")
        .unwrap()
        .generate()
        .unwrap();
    let crd = expected
        .files
        .iter()
        .find(|f| f.path.ends_with(FOO_CRD))
        .unwrap();
    assert_eq!(sb.read(FOO_CRD), crd.contents);

    // A second run writes nothing: an old mtime survives.
    set_mtime(&sb.path(FOO_CRD), old_time());
    let stderr = sb.ok(&["generate", "crate"]);
    assert_eq!(summary(&stderr), (0, written, 0), "{stderr}");
    assert!(!stderr.contains("wrote "), "{stderr}");
    assert_eq!(
        mtime(&sb.path(FOO_CRD)),
        old_time(),
        "an unchanged file must not be rewritten"
    );

    // No temporary files left behind.
    let names: Vec<_> = std::fs::read_dir(sb.path("config/crd"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 1, "{names:?}");
}

#[test]
fn check_passes_after_generate() {
    let sb = Sandbox::new("tests/fixtures/foo");
    sb.ok(&["generate", "crate"]);
    let before = sb.snapshot();
    let stderr = sb.ok(&["check", "crate"]);
    assert!(stderr.contains("up to date"), "{stderr}");
    assert_eq!(sb.snapshot(), before, "check writes nothing");
}

#[test]
fn check_lists_stale_missing_and_extra() {
    let sb = Sandbox::new("tests/fixtures/foo");

    // Never generated: missing.
    let stderr = sb.fails(&["check", "crate"]);
    assert!(
        stderr.contains(&format!("missing: crate/{FOO_CRD}\n")),
        "{stderr}"
    );
    assert!(!sb.path("config").exists(), "check created the CRD dir");

    sb.ok(&["generate", "crate"]);

    // Edited: stale.
    let good = sb.read(FOO_CRD);
    sb.write(
        FOO_CRD,
        &good
            .replace("minimum", "maximum")
            .replace("type: integer", "type: string"),
    );
    let before = sb.snapshot();
    let stderr = sb.fails(&["check", "crate"]);
    assert!(
        stderr.contains(&format!("stale: crate/{FOO_CRD}\n")),
        "{stderr}"
    );
    assert!(
        stderr.contains("run `kube-codegen generate crate`"),
        "{stderr}"
    );
    assert_eq!(sb.snapshot(), before, "check writes nothing");

    // Deleted: missing.
    std::fs::remove_file(sb.path(FOO_CRD)).unwrap();
    let stderr = sb.fails(&["check", "crate"]);
    assert!(
        stderr.contains(&format!("missing: crate/{FOO_CRD}\n")),
        "{stderr}"
    );

    // A generated file nothing generates any more: extra. A hand-written file is not.
    sb.ok(&["generate", "crate"]);
    sb.write(
        "config/crd/old.example.com_bars.yaml",
        &format!(
            "{}\nkind: CustomResourceDefinition\n",
            kube_codegen::YAML_HEADER
        ),
    );
    sb.write(
        "config/crd/kustomization.yaml",
        "resources:\n- samplecontroller.k8s.io_foos.yaml\n",
    );
    let stderr = sb.fails(&["check", "crate"]);
    assert!(
        stderr.contains("extra: crate/config/crd/old.example.com_bars.yaml\n"),
        "{stderr}"
    );
    assert!(!stderr.contains("kustomization"), "{stderr}");
    assert!(
        !stderr.contains("stale:") && !stderr.contains("missing:"),
        "{stderr}"
    );

    // All three at once.
    sb.write(FOO_CRD, "# @generated by kube-codegen. DO NOT EDIT.\n");
    sb.write(
        "config/crd/sub/nested.yaml",
        &format!("{}\n", kube_codegen::YAML_HEADER),
    );
    let stderr = sb.fails(&["check", "crate"]);
    for line in [
        format!("stale: crate/{FOO_CRD}"),
        "extra: crate/config/crd/old.example.com_bars.yaml".to_owned(),
        "extra: crate/config/crd/sub/nested.yaml".to_owned(),
    ] {
        assert!(
            stderr.lines().any(|l| l == line),
            "no `{line}` in\n{stderr}"
        );
    }
}

#[test]
fn generate_prunes_generated_files_only() {
    let sb = Sandbox::new("tests/fixtures/foo");
    sb.ok(&["generate", "crate"]);
    sb.write(
        "config/crd/old.example.com_bars.yaml",
        &format!(
            "{}\nkind: CustomResourceDefinition\n",
            kube_codegen::YAML_HEADER
        ),
    );
    let hand_written = "# kustomize wants this\nresources:\n- samplecontroller.k8s.io_foos.yaml\n";
    sb.write("config/crd/kustomization.yaml", hand_written);
    sb.write(
        "config/crd/notes.md",
        "Generated by hand, not by kube-codegen.\n",
    );

    let stderr = sb.ok(&["generate", "crate"]);
    assert!(
        stderr.contains("removed crate/config/crd/old.example.com_bars.yaml\n"),
        "{stderr}"
    );
    let (written, _, removed) = summary(&stderr);
    assert_eq!((written, removed), (0, 1), "{stderr}");
    assert!(!sb.path("config/crd/old.example.com_bars.yaml").exists());
    assert_eq!(sb.read("config/crd/kustomization.yaml"), hand_written);
    assert!(sb.path("config/crd/notes.md").exists());
    sb.ok(&["check", "crate"]);
}

#[test]
fn generate_refuses_to_overwrite_a_file_it_did_not_generate() {
    let sb = Sandbox::new("tests/fixtures/foo");
    sb.write(
        FOO_CRD,
        "# my own Foo CRD, written by hand\nkind: CustomResourceDefinition\n",
    );
    // A stale generated file that a successful run would remove.
    sb.write(
        "config/crd/old.example.com_bars.yaml",
        &format!("{}\n", kube_codegen::YAML_HEADER),
    );
    let before = sb.snapshot();
    let stderr = sb.fails(&["generate", "crate"]);
    assert!(
        stderr.contains(&format!("refusing to overwrite crate/{FOO_CRD}")),
        "{stderr}"
    );
    assert_eq!(
        sb.snapshot(),
        before,
        "a refused run writes and removes nothing"
    );
}

/// `-o -` prints CRDs only, so only the crd generator runs: a kind the Rust generators
/// refuse (no `Clone` for its deep copy) still prints, and RBAC markers print nothing.
#[test]
fn stdout_output_runs_only_the_crd_generator() {
    let sb = Sandbox::new("tests/fixtures/testresource");
    sb.write(
        "Cargo.toml",
        "[package]\nname = \"t\"\nversion = \"0.1.0\"\n\n[package.metadata.kube-codegen]\nkubernetes-version = \"1.37\"\n",
    );
    let lib = sb.read("src/lib.rs");
    sb.write(
        "src/lib.rs",
        &lib.replace("#[derive(Clone, ", "#[derive(").replacen(
            "//!",
            "//! +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get\n//!",
            1,
        ),
    );
    let refused = sb.run(&["generate", "crate"]);
    assert!(!refused.status.success(), "the Rust generators refuse it");
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("must derive Clone"), "{stderr}");

    let out = sb.run(&["generate", "crate", "-o", "-"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    for doc in serde_yaml::Deserializer::from_str(&stdout) {
        let _: CustomResourceDefinition = serde::Deserialize::deserialize(doc).unwrap();
    }
    assert!(!stdout.contains("ClusterRole"), "{stdout}");

    let out = sb.run(&["generate", "crate", "-o", "-", "--generators", "rbac"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("does not select `crd`"));
}

#[test]
fn stdout_output_is_a_yaml_stream_and_writes_nothing() {
    // sample-api has two kinds, so two documents.
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("crate");
    copy_dir(Path::new("../sample-api/src"), &dir.join("src"));
    std::fs::copy("../sample-api/Cargo.toml", dir.join("Cargo.toml")).unwrap();
    let sb = Sandbox { tmp };
    let before = sb.snapshot();

    let out = sb.run(&["generate", "crate", "-o", "-"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(sb.snapshot(), before, "-o - writes nothing");
    assert!(!sb.path("crds").exists());

    let docs: Vec<&str> = stdout.split("\n---\n").collect();
    assert_eq!(docs.len(), 2, "{stdout}");
    let mut names = vec![];
    for doc in serde_yaml::Deserializer::from_str(&stdout) {
        let crd: CustomResourceDefinition = serde::Deserialize::deserialize(doc).unwrap();
        names.push(crd.metadata.name.unwrap());
    }
    assert_eq!(
        names,
        [
            "testresources.insujang.github.io",
            "foos.samplecontroller.k8s.io"
        ]
    );
    // The documents are the committed CRDs of sample-api, in file-name order.
    let expected = [
        std::fs::read_to_string("../sample-api/crds/insujang.github.io_testresources.yaml")
            .unwrap(),
        std::fs::read_to_string("../sample-api/crds/samplecontroller.k8s.io_foos.yaml").unwrap(),
    ];
    assert_eq!(stdout, expected.join("---\n"));
}

#[test]
fn unsupported_output_target_is_rejected() {
    let sb = Sandbox::new("tests/fixtures/foo");
    let out = sb.run(&["generate", "crate", "-o", "crds.yaml"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("`-o crds.yaml` is not supported"));
    assert!(!sb.path("crds.yaml").exists() && !sb.path("config").exists());
}

#[test]
fn bad_input_fails_with_locations_and_writes_nothing() {
    let sb = Sandbox::new("tests/errors/many_errors");
    sb.write(
        "Cargo.toml",
        "[package]\nname = \"many-errors\"\nversion = \"0.0.0\"\n",
    );
    let before = sb.snapshot();
    for cmd in ["generate", "check"] {
        let stderr = sb.fails(&[cmd, "crate"]);
        for loc in [
            "crate/src/lib.rs:10:5",
            "crate/src/lib.rs:23:9",
            "crate/src/lib.rs:26:9",
            "crate/src/lib.rs:29:15",
        ] {
            assert!(
                stderr.contains(&format!("  --> {loc}\n")),
                "{cmd}: no {loc} in\n{stderr}"
            );
        }
        assert!(
            stderr.ends_with("error: generation failed with 4 errors; nothing was written\n"),
            "{stderr}"
        );
        let stdout_out = sb.run(&[cmd, "crate", "-o", "-"]);
        assert!(!stdout_out.status.success() && stdout_out.stdout.is_empty());
    }
    assert_eq!(sb.snapshot(), before);
}

#[test]
fn bad_config_fails() {
    let sb = Sandbox::new("tests/fixtures/testresource");
    // No Cargo.toml.
    let stderr = sb.fails(&["generate", "crate"]);
    assert!(stderr.contains("crate/Cargo.toml: cannot read"), "{stderr}");
    // An unknown metadata key.
    sb.write(
        "Cargo.toml",
        "[package]\nname = \"x\"\n\n[package.metadata.kube-codegen]\ncrd-directory = \"crds\"\n",
    );
    let stderr = sb.fails(&["generate", "crate"]);
    assert!(stderr.contains("crd-directory"), "{stderr}");
    // A Kubernetes version this build does not embed.
    sb.write("Cargo.toml", "[package]\nname = \"x\"\n\n[package.metadata.kube-codegen]\nkubernetes-version = \"1.30\"\n");
    let stderr = sb.fails(&["generate", "crate"]);
    assert!(
        stderr.contains("kubernetes-version: unsupported Kubernetes version `1.30`: kube-codegen supports 1.33, 1.34, 1.35, 1.36, 1.37"),
        "{stderr}"
    );
    // The same on the command line.
    sb.write("Cargo.toml", "[package]\nname = \"x\"\n");
    let stderr = sb.fails(&["generate", "crate", "--kubernetes-version", "1.30"]);
    assert!(
        stderr.contains("unsupported Kubernetes version `1.30`"),
        "{stderr}"
    );
    assert!(!sb.path("crds").exists());
}

#[test]
fn flags_override_cargo_metadata() {
    let sb = Sandbox::new("tests/fixtures/foo");
    let stderr = sb.ok(&["generate", "crate", "--crd-dir", "deploy/crds"]);
    assert!(
        stderr.contains("wrote crate/deploy/crds/samplecontroller.k8s.io_foos.yaml"),
        "{stderr}"
    );
    assert!(
        !sb.path("config").exists(),
        "the Cargo.toml crd-dir was not used"
    );
    sb.ok(&["check", "crate", "--crd-dir", "deploy/crds"]);
    // Without the flag, the metadata's directory is what check looks at.
    let stderr = sb.fails(&["check", "crate"]);
    assert!(
        stderr.contains(&format!("missing: crate/{FOO_CRD}")),
        "{stderr}"
    );

    // --input narrows what is scanned: a directory without API types finds nothing.
    sb.write("src/other/mod.rs", "pub struct Unrelated;\n");
    let stderr = sb.fails(&["generate", "crate", "--input", "src/other"]);
    assert!(stderr.contains("no group/version module found"), "{stderr}");

    // --max-description-len cuts descriptions as controller-gen's maxDescLen does: back to
    // the last space within 10 bytes, with `...`.
    let out = sb.run(&[
        "generate",
        "crate",
        "-o",
        "-",
        "--max-description-len",
        "10",
    ]);
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(stdout.contains("description: Foo is a...\n"), "{stdout}");
}

#[test]
fn output_does_not_depend_on_the_number_of_threads() {
    // Parsing and rendering run on a pool of threads; the bytes written must be the same
    // whatever the pool's size (results are collected in input order).
    let generate_with = |threads: &str| {
        let sb = Sandbox::new("../sample-api");
        for generated in ["src/generated", "crds"] {
            let _ = std::fs::remove_dir_all(sb.path(generated));
        }
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_kube-codegen"))
            .args(["generate", "crate"])
            .env("KUBE_CODEGEN_THREADS", threads)
            .current_dir(sb.tmp.path())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        sb.snapshot()
            .into_iter()
            .map(|(path, (contents, _))| (path, contents))
            .collect::<Vec<_>>()
    };
    let single = generate_with("1");
    let pooled = generate_with("4");
    assert!(
        single
            .iter()
            .filter(|(p, _)| p.starts_with("src/generated"))
            .count()
            >= 5,
        "{single:?}"
    );
    assert_eq!(single, pooled);
}

/// Go's file layout, ported as Go teams do: doc.go's markers in `v1/mod.rs`, the kinds in a
/// private `v1/types.rs` re-exported. The kinds are generated, and the closing summary names
/// each group/version with its kinds and counts the files, so a run that found nothing
/// cannot pass for one that worked.
#[test]
fn go_layout_generates_and_the_summary_says_what_was_found() {
    let sb = Sandbox::new("tests/fixtures/foo");
    std::fs::remove_dir_all(sb.path("src/apis")).unwrap();
    sb.write("src/apis/mod.rs", "pub mod samplecontroller;\n");
    sb.write("src/apis/samplecontroller/mod.rs", "pub mod v1alpha1;\n");
    sb.write(
        "src/apis/samplecontroller/v1alpha1/mod.rs",
        "//! Package v1alpha1 is the v1alpha1 version of the API.\n//!\n//! +k8s:deepcopy-gen=package\n//! +groupName=samplecontroller.k8s.io\n\nmod register;\nmod types;\n\npub use register::*;\npub use types::*;\n",
    );
    sb.write(
        "src/apis/samplecontroller/v1alpha1/register.rs",
        "/// GroupName is the group name used in this package.\npub const GROUP_NAME: &str = \"samplecontroller.k8s.io\";\n",
    );
    sb.write(
        "src/apis/samplecontroller/v1alpha1/types.rs",
        "use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;\nuse kube::core::TypeMeta;\nuse serde::{Deserialize, Serialize};\n\n/// Foo is a specification for a Foo resource.\n///\n/// +genclient\n/// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object\n/// +kubebuilder:metadata:annotations=\"api-approved.kubernetes.io=unapproved, experimental-only\"\n#[derive(Clone, Debug, Default, Serialize, Deserialize)]\npub struct Foo {\n    #[serde(flatten)]\n    pub types: TypeMeta,\n    pub metadata: ObjectMeta,\n    pub spec: FooSpec,\n}\n\n/// FooSpec is the spec for a Foo resource.\n#[derive(Clone, Debug, Default, Serialize, Deserialize)]\n#[serde(rename_all = \"camelCase\")]\npub struct FooSpec {\n    pub deployment_name: String,\n}\n",
    );
    let stderr = sb.ok(&["generate", "crate"]);
    assert!(
        stderr.contains("kube-codegen: samplecontroller.k8s.io/v1alpha1 (crate/src/apis/samplecontroller/v1alpha1/mod.rs): Foo\n"),
        "{stderr}"
    );
    assert!(
        stderr.contains("kube-codegen: generated 9 files: crd 1, rbac 0, webhook 0, admission-policy 0, Rust 8 (applyconfigurations, clientset, deepcopy, fake, informers, listers, register)\n"),
        "{stderr}"
    );
    assert!(sb.read(FOO_CRD).contains("deploymentName"));
    assert!(
        sb.read("src/generated/register.rs")
            .contains("crate::apis::samplecontroller::v1alpha1::Foo"),
        "generated code names the kind where `pub use types::*` re-exports it"
    );
}

/// Go packages ported file by file often start each file with `use super::*;` while
/// `mod.rs` re-exports every file with `pub use file::*;`. Those globs form a cycle through
/// the package; finding a sibling's type once took time exponential in the number of files
/// (a port of Gateway API's v1 ran 138 s in resolve). Twelve siblings would not finish
/// without the lookup remembering the paths it tried.
#[test]
fn sibling_files_that_glob_import_their_package_resolve() {
    let sb = Sandbox::new("tests/fixtures/foo");
    std::fs::remove_dir_all(sb.path("src/apis")).unwrap();
    sb.write("src/apis/mod.rs", "pub mod samplecontroller;\n");
    sb.write("src/apis/samplecontroller/mod.rs", "pub mod v1alpha1;\n");
    let siblings: Vec<String> = (0..12).map(|i| format!("part{i}")).collect();
    let mut package =
        String::from("//! +groupName=samplecontroller.k8s.io\n\nmod types;\npub use types::*;\n");
    for (i, s) in siblings.iter().enumerate() {
        package.push_str(&format!("mod {s};\npub use {s}::*;\n"));
        sb.write(
            &format!("src/apis/samplecontroller/v1alpha1/{s}.rs"),
            &format!(
                "use super::*;\nuse serde::{{Deserialize, Serialize}};\n\n/// Part{i}.\n#[derive(Clone, Debug, Default, Serialize, Deserialize)]\npub struct Part{i} {{\n    pub name: String,\n}}\n"
            ),
        );
    }
    sb.write("src/apis/samplecontroller/v1alpha1/mod.rs", &package);
    sb.write(
        "src/apis/samplecontroller/v1alpha1/types.rs",
        "use super::*;\nuse k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;\nuse kube::core::TypeMeta;\nuse serde::{Deserialize, Serialize};\n\n/// Foo.\n///\n/// +genclient\n/// +kubebuilder:metadata:annotations=\"api-approved.kubernetes.io=unapproved, experimental-only\"\n#[derive(Clone, Debug, Default, Serialize, Deserialize)]\npub struct Foo {\n    #[serde(flatten)]\n    pub types: TypeMeta,\n    pub metadata: ObjectMeta,\n    pub spec: FooSpec,\n}\n\n/// FooSpec.\n#[derive(Clone, Debug, Default, Serialize, Deserialize)]\npub struct FooSpec {\n    pub last: Part11,\n    pub missing: Option<Part0>,\n}\n",
    );
    sb.ok(&["generate", "crate"]);
    let crd = sb.read(FOO_CRD);
    assert!(crd.contains("last:"), "{crd}");
    assert!(crd.contains("missing:"), "{crd}");
}

/// One version of a multi-version kind names the short names and categories, another does
/// not (Gateway API's v1alpha3 BackendTLSPolicy): controller-gen applies each version's
/// `+kubebuilder:resource` to the one CRD, so the CRD has them. Two versions naming
/// different ones are a located error.
#[test]
fn short_names_and_categories_come_from_the_versions_that_set_them() {
    let sb = Sandbox::new("tests/fixtures/multiversion");
    sb.write(
        "Cargo.toml",
        "[package]\nname = \"multiversion\"\nversion = \"0.1.0\"\nedition = \"2024\"\n",
    );
    let beta = sb.read("src/stable/v1beta1.rs").replace(
        "/// +kubebuilder:resource:shortName=ct,categories=all\n",
        "",
    );
    assert!(
        !beta.contains("kubebuilder:resource"),
        "the fixture changed"
    );
    sb.write("src/stable/v1beta1.rs", &beta);
    sb.ok(&["generate", "crate", "--crd-dir", "crds"]);
    let crd = sb.read("crds/stable.example.com_crontabs.yaml");
    assert!(crd.contains("shortNames:\n    - ct\n"), "{crd}");
    assert!(crd.contains("categories:\n    - all\n"), "{crd}");

    sb.write(
        "src/stable/v1beta1.rs",
        &beta
            .replace("/// +kubebuilder:storageversion\n", "")
            .replacen(
                "/// CronTab",
                "/// +kubebuilder:resource:shortName=cron\n/// CronTab",
                1,
            ),
    );
    let stderr = sb.fails(&["generate", "crate", "--crd-dir", "crds"]);
    assert!(
        stderr
            .contains("crontabs.stable.example.com shortNames is `cron` in v1beta1 but `ct` in v1")
            || stderr.contains("shortNames is `cron` in v1beta1 but `ct` in v1"),
        "{stderr}"
    );
}

/// `--validate-all-kinds` (and `validate-all-kinds` in the metadata) opt every kind into the
/// `validation` generator; without them the foo fixture, which marks no kind, gets no
/// `validation` module.
#[test]
fn validate_all_kinds_opts_every_kind_in() {
    let sb = Sandbox::new("tests/fixtures/foo");
    let module = "src/generated/validation.rs";
    sb.ok(&["generate", "crate"]);
    assert!(!sb.path(module).exists(), "no kind opted in");
    sb.ok(&["generate", "crate", "--validate-all-kinds"]);
    let code = sb.read(module);
    assert!(
        code.contains("for crate::apis::samplecontroller::v1alpha1::Foo {"),
        "{code}"
    );
    // What `check` compares: the same flag, the same files.
    sb.ok(&["check", "crate", "--validate-all-kinds"]);
    sb.fails(&["check", "crate"]);
    let manifest = sb.read("Cargo.toml");
    sb.write(
        "Cargo.toml",
        &format!("{manifest}validate-all-kinds = true\n"),
    );
    sb.ok(&["check", "crate"]);
}

/// `init` and `create api` write crates that build as written: this kube-codegen, built
/// from a checkout, names the checkout's runtime and envtest by path and says so;
/// `--runtime-version` and `--runtime-path` mean the same on `create api` as on `init`
/// (there they rewrite the crate's entries, undone with the rest if generation fails).
#[test]
fn init_and_create_api_name_the_runtime_they_were_built_with() {
    let sandbox = Sandbox::new("tests/fixtures/foo");
    let dir = sandbox.tmp.path().join("op");
    let dir_s = dir.to_str().unwrap();
    let err = sandbox.ok(&["init", dir_s]);
    let runtime = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .join("runtime");
    assert!(
        err.contains(&format!(
            "the crate takes kube-codegen-runtime from {}: the checkout this kube-codegen was built from",
            runtime.display()
        )),
        "{err}"
    );
    let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
    let envtest = runtime.with_file_name("envtest");
    for line in [
        format!(
            "kube-codegen-runtime = {{ path = {:?} }}",
            runtime.display().to_string()
        ),
        format!(
            "kube-codegen-envtest = {{ path = {:?} }}",
            envtest.display().to_string()
        ),
    ] {
        assert!(manifest.contains(&line), "{line} not in\n{manifest}");
    }

    let api = |extra: &[&str]| {
        let mut args = vec![
            "create",
            "api",
            "--dir",
            dir_s,
            "--group",
            "webapp.example.com",
            "--version",
            "v1",
        ];
        args.extend_from_slice(extra);
        args.iter().map(|s| s.to_string()).collect::<Vec<_>>()
    };
    let args = api(&["--kind", "Guestbook", "--runtime-version", "0.1.0"]);
    let err = sandbox.ok(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(
        err.contains("the crate takes kube-codegen-runtime 0.1.0 from the registry, as asked"),
        "{err}"
    );
    let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
    assert!(
        manifest.contains("kube-codegen-runtime = \"0.1.0\"\n")
            && manifest.contains("kube-codegen-envtest = \"0.1.0\"\n"),
        "{manifest}"
    );
    // A path that is not the runtime: refused before anything is written.
    let before = std::fs::read_to_string(dir.join("src/lib.rs")).unwrap();
    let args = api(&["--kind", "Other", "--runtime-path", dir_s]);
    let err = sandbox.fails(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(err.contains("not the kube-codegen-runtime crate"), "{err}");
    assert_eq!(
        std::fs::read_to_string(dir.join("src/lib.rs")).unwrap(),
        before
    );
    assert!(!dir.join("src/controllers/other.rs").exists());
}

/// `kube-codegen generators` lists every generator with its description, the descriptions
/// in one column.
#[test]
fn generators_are_listed_in_aligned_columns() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kube-codegen"))
        .arg("generators")
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines.len() >= 11, "{text}");
    let starts: std::collections::BTreeSet<usize> = lines
        .iter()
        .map(|l| {
            let name = l.split_whitespace().next().unwrap();
            name.len() + l[name.len()..].len() - l[name.len()..].trim_start().len()
        })
        .collect();
    assert_eq!(
        starts.len(),
        1,
        "descriptions start in different columns:\n{text}"
    );
}

/// A `+kubebuilder:default` that a derived `Default` contradicts is said at the field: an
/// object built from `Default` (as the scaffold's example is) sends the derived value, and
/// the server defaults only absent fields. A hand-written `Default` that agrees is quiet.
#[test]
fn a_default_marker_that_derive_default_contradicts_is_a_warning() {
    let sandbox = Sandbox::new("tests/fixtures/foo");
    let dir = sandbox.tmp.path().join("op");
    let dir_s = dir.to_str().unwrap();
    sandbox.ok(&["init", dir_s]);
    sandbox.ok(&[
        "create",
        "api",
        "--dir",
        dir_s,
        "--group",
        "webapp.example.com",
        "--version",
        "v1",
        "--kind",
        "Widget",
    ]);
    let types = dir.join("src/apis/webapp/v1.rs");
    let text = std::fs::read_to_string(&types).unwrap();
    let field = "    pub foo: Option<String>,\n";
    let with_replicas = text.replacen(
        field,
        &format!(
            "{field}    /// +kubebuilder:validation:Minimum=1\n    /// +kubebuilder:default=1\n    pub replicas: i32,\n"
        ),
        1,
    );
    assert_ne!(with_replicas, text, "the scaffold's example field moved");
    std::fs::write(&types, &with_replicas).unwrap();
    let line = with_replicas
        .lines()
        .position(|l| l == "    pub replicas: i32,")
        .unwrap()
        + 1;
    let err = sandbox.ok(&["generate", dir_s]);
    assert!(
        err.contains(
            "warning: `WidgetSpec`'s derived `Default` starts `spec.replicas` at 0, not at its default 1"
        ),
        "{err}"
    );
    assert!(
        err.contains(&format!("--> {}:{line}:9", types.display())),
        "{err}"
    );
    assert!(
        err.contains("implement `Default` for `WidgetSpec` by hand"),
        "{err}"
    );

    // Made to agree by hand: nothing to say.
    let by_hand = with_replicas
        .replacen(
            "#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]\n#[serde(rename_all = \"camelCase\")]\npub struct WidgetSpec",
            "#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]\n#[serde(rename_all = \"camelCase\")]\npub struct WidgetSpec",
            1,
        )
        + "\nimpl Default for WidgetSpec {\n    fn default() -> Self {\n        WidgetSpec { foo: None, replicas: 1 }\n    }\n}\n";
    assert!(
        !by_hand.contains("Default, PartialEq, Serialize, Deserialize)]\n#[serde(rename_all = \"camelCase\")]\npub struct WidgetSpec"),
        "the scaffold's derive moved:\n{by_hand}"
    );
    std::fs::write(&types, &by_hand).unwrap();
    let err = sandbox.ok(&["generate", dir_s]);
    assert!(!err.contains("derived `Default`"), "{err}");
}
