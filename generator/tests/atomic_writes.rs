//! The CLI never leaves a half-written or half-changed tree:
//!
//! - every failing run (each crate of the error corpus, through the binary) exits non-zero
//!   and leaves the crate byte-identical, stale generated files and hand-written files alike;
//! - a run SIGKILLed at any moment leaves every target file with either its old or its new
//!   contents, never a mix; temporary files it leaves behind are removed by the next
//!   successful run;
//! - files without the `@generated` header are never overwritten or removed, in the Rust
//!   output directory as in the CRD directory, even when the header text appears further
//!   down.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::{copy_dir, tree};

const BIN: &str = env!("CARGO_BIN_EXE_kube-codegen");

/// Every file below `dir` with its bytes.
fn contents(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    tree(dir).into_iter().map(|(p, (b, _))| (p, b)).collect()
}

fn run(cwd: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .current_dir(cwd)
        .output()
        .unwrap()
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

// ---------------------------------------------------------------------------------------
// Failing runs change nothing.

/// Each error-corpus crate, through the binary (`generate` and `check`), with generated
/// and hand-written files in both output directories: non-zero exit, nothing on stdout,
/// every file byte-identical with the same mtime.
#[test]
fn every_failing_case_exits_non_zero_and_changes_nothing() {
    let mut cases: Vec<PathBuf> = std::fs::read_dir("tests/errors")
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    cases.sort();
    assert!(cases.len() >= 60, "the error corpus is there");
    let header = kube_codegen::YAML_HEADER;
    let rust_header = kube_codegen::__private::RUST_HEADER.lines().next().unwrap();
    for case in cases {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("crate");
        copy_dir(&case, &dir);
        if !dir.join("Cargo.toml").exists() {
            write(
                &dir.join("Cargo.toml"),
                "[package]\nname = \"case\"\nversion = \"0.0.0\"\n",
            );
        }
        // Files a successful run would overwrite or prune, and files it must never touch.
        write(
            &dir.join("crds/old.example.com_things.yaml"),
            &format!("{header}\nkind: CustomResourceDefinition\n"),
        );
        write(&dir.join("crds/kustomization.yaml"), "resources: []\n");
        write(
            &dir.join("src/generated/register.rs"),
            &format!("{rust_header}\npub const OLD: u8 = 0;\n"),
        );
        write(
            &dir.join("src/generated/handwritten.rs"),
            "pub fn mine() {}\n",
        );
        let before = tree(&dir);
        for cmd in ["generate", "check"] {
            let out = run(tmp.path(), &[cmd, "crate"]);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(
                !out.status.success(),
                "{}: `{cmd}` succeeded:\n{stderr}",
                case.display()
            );
            assert!(out.stdout.is_empty(), "{}: stdout", case.display());
            assert!(
                stderr.contains("  --> crate/"),
                "{}: `{cmd}` gave no location:\n{stderr}",
                case.display()
            );
            assert_eq!(
                tree(&dir),
                before,
                "{}: a failed `{cmd}` changed the crate",
                case.display()
            );
        }
    }
}

// ---------------------------------------------------------------------------------------
// Never overwrite or remove what we did not generate.

fn foo_sandbox() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    copy_dir(Path::new("tests/fixtures/foo"), &tmp.path().join("crate"));
    tmp
}

#[test]
fn a_hand_written_rust_file_in_the_output_dir_is_never_overwritten() {
    let tmp = foo_sandbox();
    let dir = tmp.path().join("crate");
    assert!(run(tmp.path(), &["generate", "crate"]).status.success());
    // The user replaced a generated file by their own (header removed).
    let mine = "// my own register.rs\npub const MINE: u8 = 1;\n";
    write(&dir.join("src/generated/register.rs"), mine);
    // And a generated file that a successful run would prune.
    write(
        &dir.join("src/generated/old.rs"),
        &format!(
            "{}\n",
            kube_codegen::__private::RUST_HEADER.lines().next().unwrap()
        ),
    );
    let before = tree(&dir);
    let out = run(tmp.path(), &["generate", "crate"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("refusing to overwrite crate/src/generated/register.rs"),
        "{stderr}"
    );
    assert_eq!(
        tree(&dir),
        before,
        "a refused run writes and removes nothing"
    );
}

#[test]
fn only_files_with_the_header_on_their_first_line_are_pruned() {
    let tmp = foo_sandbox();
    let dir = tmp.path().join("crate");
    assert!(run(tmp.path(), &["generate", "crate"]).status.success());
    let header = kube_codegen::YAML_HEADER;
    let rust_header = kube_codegen::__private::RUST_HEADER.lines().next().unwrap();
    // Not ours: the header text appears, but not as the first line.
    let quoted_yaml = format!("# notes\n# our files start with `{header}`\n");
    let quoted_rust = format!("//! Docs.\n//! Generated files start with `{rust_header}`.\n");
    write(&dir.join("config/crd/notes.yaml"), &quoted_yaml);
    write(&dir.join("src/generated/extra.rs"), &quoted_rust);
    write(&dir.join("src/generated/empty.rs"), "");
    // Ours, and no longer generated: pruned.
    write(
        &dir.join("src/generated/gone.rs"),
        &format!("{rust_header}\npub struct Gone;\n"),
    );
    write(
        &dir.join("config/crd/gone.example.com_things.yaml"),
        &format!("{header}\nkind: CustomResourceDefinition\n"),
    );
    let out = run(tmp.path(), &["generate", "crate"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!dir.join("src/generated/gone.rs").exists(), "{stderr}");
    assert!(!dir.join("config/crd/gone.example.com_things.yaml").exists());
    assert_eq!(
        std::fs::read_to_string(dir.join("config/crd/notes.yaml")).unwrap(),
        quoted_yaml
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("src/generated/extra.rs")).unwrap(),
        quoted_rust
    );
    assert!(dir.join("src/generated/empty.rs").exists());
}

// ---------------------------------------------------------------------------------------
// SIGKILL at any moment: every file old or new.

/// A group/version module with `kinds` kinds of `fields` fields each. `revision` changes
/// every field's description and adds a field to every spec, so every CRD and the
/// deep-copy code differ between revisions.
fn synthetic_api(kinds: usize, fields: usize, revision: u32) -> String {
    let mut s = String::from(
        "//! A large synthetic API.\n//!\n//! +groupName=big.example.com\n\n\
         use std::collections::BTreeMap;\n\n\
         use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;\n\
         use kube::core::TypeMeta;\nuse serde::{Deserialize, Serialize};\n\n",
    );
    for k in 0..kinds {
        s += &format!(
            "/// Kind{k} is kind number {k}.\n///\n/// +genclient\n/// +kubebuilder:subresource:status\n\
             #[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]\n\
             pub struct Kind{k} {{\n    #[serde(flatten)]\n    pub types: TypeMeta,\n    pub metadata: ObjectMeta,\n\
             \x20   pub spec: Kind{k}Spec,\n    #[serde(default, skip_serializing_if = \"Option::is_none\")]\n\
             \x20   pub status: Option<Kind{k}Status>,\n}}\n\n\
             #[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]\n\
             #[serde(rename_all = \"camelCase\")]\npub struct Kind{k}Spec {{\n"
        );
        for f in 0..fields {
            s += &format!("    /// Field {f} of kind {k}, revision {revision}.\n");
            s += match f % 5 {
                0 => "    /// +kubebuilder:validation:MaxLength=64\n",
                1 => "    /// +kubebuilder:validation:Minimum=0\n",
                _ => "",
            };
            let ty = match f % 5 {
                0 => "String",
                1 => "i32",
                2 => "Option<i64>",
                3 => "Vec<String>",
                _ => "BTreeMap<String, String>",
            };
            if f % 5 == 2 {
                s += "    #[serde(default, skip_serializing_if = \"Option::is_none\")]\n";
            }
            s += &format!("    pub field_{f}: {ty},\n");
        }
        for r in 1..=revision {
            s += &format!(
                "    #[serde(default, skip_serializing_if = \"Option::is_none\")]\n    pub added_in_{r}: Option<String>,\n"
            );
        }
        s += &format!(
            "}}\n\n#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]\n\
             #[serde(rename_all = \"camelCase\")]\npub struct Kind{k}Status {{\n    pub ready: bool,\n}}\n\n"
        );
    }
    s
}

fn write_synthetic_crate(dir: &Path, revision: u32) {
    write(
        &dir.join("Cargo.toml"),
        "[package]\nname = \"big\"\nversion = \"0.0.0\"\nedition = \"2024\"\n\n\
         [package.metadata.kube-codegen]\ninput = [\"src/apis\"]\ncrd-dir = \"config/crd\"\n",
    );
    write(&dir.join("src/apis/mod.rs"), "pub mod v1;\n");
    write(
        &dir.join("src/apis/v1.rs"),
        &synthetic_api(40, 40, revision),
    );
}

/// `.<name>.kube-codegen-<pid>.tmp` files below `dir`.
fn temp_files(dir: &Path) -> Vec<PathBuf> {
    tree(dir)
        .into_keys()
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            name.starts_with('.') && name.contains(".kube-codegen-") && name.ends_with(".tmp")
        })
        .collect()
}

#[test]
fn a_killed_run_leaves_every_file_old_or_new() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("crate");

    // The new tree: what a complete run of revision 2 writes.
    write_synthetic_crate(&dir, 2);
    assert!(run(tmp.path(), &["generate", "crate"]).status.success());
    let new = contents(&dir);
    // The old tree: revision 1's output, where the run starts from each time.
    std::fs::remove_dir_all(&dir).unwrap();
    write_synthetic_crate(&dir, 1);
    let out = run(tmp.path(), &["generate", "crate"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    write_synthetic_crate(&dir, 2);
    let old = contents(&dir);
    let targets: Vec<&PathBuf> = new
        .keys()
        .filter(|p| p.starts_with("config") || p.starts_with("src/generated"))
        .collect();
    let changed = targets
        .iter()
        .filter(|p| old.get(**p) != new.get(**p))
        .count();
    // Every CRD and the deep-copy code change; a few Rust files do not depend on fields.
    assert!(
        changed >= 41 && targets.len() - changed < 10,
        "{changed} of {} targets change",
        targets.len()
    );

    // How long a full run from the old tree takes, to spread the kills over it.
    let start = Instant::now();
    assert!(run(tmp.path(), &["generate", "crate"]).status.success());
    let full = start.elapsed().max(Duration::from_millis(20));
    assert_eq!(contents(&dir), new, "a complete run writes the new tree");

    let iterations: u32 = std::env::var("KUBE_CODEGEN_KILL_ITERATIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(40);
    let (mut all_old, mut all_new, mut mixed, mut strays) = (0, 0, 0, 0);
    for i in 0..iterations {
        // Back to the old tree (and no temp files).
        for p in temp_files(&dir) {
            std::fs::remove_file(dir.join(p)).unwrap();
        }
        for (p, bytes) in &old {
            if std::fs::read(dir.join(p)).ok().as_ref() != Some(bytes) {
                std::fs::write(dir.join(p), bytes).unwrap();
            }
        }
        // Kill anywhere from at once to after a normal run would have finished.
        let delay = full.mul_f64(1.5 * f64::from(i) / f64::from(iterations));
        let mut child = Command::new(BIN)
            .args(["generate", "crate"])
            .current_dir(tmp.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(delay);
        let _ = child.kill(); // SIGKILL
        let _ = child.wait();

        let now = contents(&dir);
        let (mut o, mut n) = (0, 0);
        for p in &targets {
            match now.get(*p) {
                Some(b) if old.get(*p) == new.get(*p) && Some(b) == old.get(*p) => {}
                Some(b) if Some(b) == old.get(*p) => o += 1,
                Some(b) if Some(b) == new.get(*p) => n += 1,
                Some(b) => panic!(
                    "iteration {i} (killed after {delay:?}): {} is neither old nor new ({} bytes)",
                    p.display(),
                    b.len()
                ),
                None => panic!("iteration {i}: {} disappeared", p.display()),
            }
        }
        // Nothing else changed: inputs and files we do not own are as they were.
        for (p, bytes) in &old {
            if !targets.contains(&p) {
                assert_eq!(now.get(p), Some(bytes), "iteration {i}: {}", p.display());
            }
        }
        match (o, n) {
            (_, 0) => all_old += 1,
            (0, _) => all_new += 1,
            _ => mixed += 1,
        }
        let stray = temp_files(&dir);
        if !stray.is_empty() {
            strays += 1;
            // The next successful run removes them, and leaves the new tree.
            let out = run(tmp.path(), &["generate", "crate"]);
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            assert_eq!(
                temp_files(&dir),
                Vec::<PathBuf>::new(),
                "iteration {i}: a successful run left temp files"
            );
            assert_eq!(contents(&dir), new, "iteration {i}: after the clean-up run");
        }
    }
    eprintln!(
        "{iterations} kills over {full:?}: {all_old} left the old tree, {all_new} the new, {mixed} a mix of whole files; {strays} left temp files"
    );
    // The kills really landed in the middle of runs.
    assert!(all_old > 0 && all_new > 0, "kills did not span a run");
}

/// A temp file that was only created (killed before its first byte) has no header; it is
/// still ours by its name, and the next run removes it. Files that merely look similar stay.
#[test]
fn stray_temp_files_are_removed_by_the_next_run() {
    let tmp = foo_sandbox();
    let dir = tmp.path().join("crate");
    assert!(run(tmp.path(), &["generate", "crate"]).status.success());
    let empty = dir.join("config/crd/.samplecontroller.k8s.io_foos.yaml.kube-codegen-999999.tmp");
    let partial = dir.join("src/generated/.deepcopy.rs.kube-codegen-999998.tmp");
    write(&empty, "");
    write(
        &partial,
        "// @generated by kube-codegen. DO NOT EDIT.\npub fn half",
    );
    let lookalike = dir.join("src/generated/.notes.kube-codegen.tmp");
    let mine = dir.join("config/crd/.mine.kube-codegen-abc.tmp");
    write(&lookalike, "keep\n");
    write(&mine, "keep\n");
    let out = run(tmp.path(), &["generate", "crate"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!empty.exists() && !partial.exists(), "{stderr}");
    assert!(lookalike.exists() && mine.exists(), "{stderr}");
    assert!(run(tmp.path(), &["check", "crate"]).status.success());
}

// ---------------------------------------------------------------------------------------
// A run that fails half-way leaves the old tree (issue 30).

/// A file made impossible to remove, rename or replace while this lives: its directory
/// read-only, or, for root (whom permissions do not stop), `chattr +i` on the file.
struct Stuck {
    path: PathBuf,
    immutable: bool,
}

impl Stuck {
    fn new(path: &Path) -> Stuck {
        use std::os::unix::fs::PermissionsExt;
        let dir = path.parent().unwrap();
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o555)).unwrap();
        let probe = dir.join(".probe");
        if std::fs::write(&probe, "").is_err() {
            return Stuck {
                path: path.to_owned(),
                immutable: false,
            };
        }
        // Root: permissions do not stop it.
        std::fs::remove_file(&probe).unwrap();
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        let out = Command::new("chattr").arg("+i").arg(path).output();
        assert!(
            out.as_ref().is_ok_and(|o| o.status.success()),
            "cannot make {} unremovable (root, and `chattr +i` failed: {out:?}): this test needs a file system with immutable files",
            path.display()
        );
        Stuck {
            path: path.to_owned(),
            immutable: true,
        }
    }
}

impl Drop for Stuck {
    fn drop(&mut self) {
        use std::os::unix::fs::PermissionsExt;
        if self.immutable {
            let _ = Command::new("chattr").arg("-i").arg(&self.path).status();
        } else {
            let dir = self.path.parent().unwrap();
            let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755));
        }
    }
}

/// A synthetic crate generated at revision 0, then changed to revision 1, whose run
/// rewrites every CRD and Rust file. Returns the temp dir (the crate is `crate` in it).
fn crate_between_revisions() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("crate");
    write_synthetic_crate(&dir, 0);
    std::fs::write(dir.join("src/apis/v1.rs"), synthetic_api(3, 5, 0)).unwrap();
    let out = run(tmp.path(), &["generate", "crate"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::write(dir.join("src/apis/v1.rs"), synthetic_api(3, 5, 1)).unwrap();
    tmp
}

/// The run fails, and the tree (bytes and mtimes) is what it was, without temp files.
fn fails_leaving(
    tmp: &Path,
    before: &BTreeMap<PathBuf, (Vec<u8>, std::time::SystemTime)>,
    says: &str,
) {
    let out = run(tmp, &["generate", "crate"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains(says), "{stderr}");
    let dir = tmp.join("crate");
    assert_eq!(temp_files(&dir), Vec::<PathBuf>::new());
    let after = tree(&dir);
    for (path, old) in before {
        assert!(after.get(path) == Some(old), "{} changed", path.display());
    }
    assert_eq!(after.len(), before.len(), "files were added or removed");
    assert!(
        stderr.contains("nothing was changed (what the run had written was undone)"),
        "{stderr}"
    );
}

/// Then, the fault gone, the next run writes the new tree and leaves no temp file.
fn succeeds_after(tmp: &Path) {
    let out = run(tmp, &["generate", "crate"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(temp_files(&tmp.join("crate")), Vec::<PathBuf>::new());
    let out = run(tmp, &["check", "crate"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A stale generated file that cannot be removed: the run stops before the tree changes.
/// It exited 1 after renaming every new file into place (the tree half new).
#[test]
#[cfg(unix)]
fn a_stale_file_that_cannot_be_removed_leaves_the_old_tree() {
    let tmp = crate_between_revisions();
    let dir = tmp.path().join("crate");
    let stale = dir.join("config/crd/big.example.com_gones.yaml");
    write(
        &stale,
        &format!(
            "{}\nkind: CustomResourceDefinition\n",
            kube_codegen::YAML_HEADER
        ),
    );
    let before = tree(&dir);
    {
        let _stuck = Stuck::new(&stale);
        fails_leaving(
            tmp.path(),
            &before,
            "removing crate/config/crd/big.example.com_gones.yaml",
        );
    }
    succeeds_after(tmp.path());
    assert!(!stale.exists());
}

/// A generated file that cannot be replaced, the last the run writes: the files renamed
/// into place before it are put back. It exited 1 with those already new.
#[test]
#[cfg(unix)]
fn a_target_that_cannot_be_replaced_leaves_the_old_tree() {
    let tmp = crate_between_revisions();
    let dir = tmp.path().join("crate");
    let generated = kube_codegen::Config::from_crate(&dir)
        .unwrap()
        .generate()
        .unwrap();
    let changed: Vec<&PathBuf> = generated
        .files
        .iter()
        .filter(|f| std::fs::read(&f.path).ok().as_deref() != Some(f.contents.as_bytes()))
        .map(|f| &f.path)
        .collect();
    assert!(changed.len() >= 3, "{changed:?}");
    let last = changed.last().unwrap().to_path_buf();
    let before = tree(&dir);
    {
        let stuck = Stuck::new(&last);
        let rel = last.strip_prefix(tmp.path()).unwrap().display().to_string();
        // As root the rename into place fails, after the others (undone); otherwise its
        // directory refuses the temp file before any rename.
        let says = if stuck.immutable {
            format!("renaming into place {rel}")
        } else {
            "writing".to_owned()
        };
        fails_leaving(tmp.path(), &before, &says);
    }
    succeeds_after(tmp.path());
}
