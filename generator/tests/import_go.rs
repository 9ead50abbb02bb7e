//! `kube-codegen import go` (issue 17) beyond the CRD comparison (which is
//! `go_importer_against_controller_gen` in tests/fidelity.rs): the Rust it writes
//! (snapshots), that the port of the whole fidelity corpus compiles with everything
//! `generate` writes and reads the fixtures' sample objects, and that an import never
//! writes over a hand-written file.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use kube_codegen::{Config, Error};

#[path = "common/crd_compare.rs"]
mod crd_compare;
#[path = "common/imported_crate.rs"]
mod imported_crate;

#[path = "common/import_go.rs"]
mod import_go;
use import_go::import_go_fixture;

fn fidelity() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/fidelity")
        .canonicalize()
        .expect("tests/fixtures/fidelity")
}

/// `tests/fixtures/import_go`: a package with one field of each Go shape (`shapes/`).
fn shapes() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/import_go")
}

/// The `crd:` options `fixtures/import_go/regen-golden.sh` gives controller-gen: the shapes
/// include a float on purpose.
fn shapes_options() -> kube_codegen::CrdOptions {
    "crd:allowDangerousTypes=true".parse().unwrap()
}

/// Every Go shape the importer maps: the Rust it writes, its warnings, and the CRD
/// `generate` makes of it (reviewed by hand: required-ness and formats as controller-gen
/// gives them for the Go original).
#[test]
fn shapes_of_go() {
    let krate = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("import_go_shapes");
    let imported = import_go::try_import_go_fixtures_with(&[shapes()], &krate, &shapes_options())
        .unwrap_or_else(|e| panic!("{e}"));
    let dir = krate.join("src/apis/shapes/v1");
    for f in ["mod.rs", "types.rs"] {
        insta::assert_snapshot!(
            format!("shapes__{f}"),
            std::fs::read_to_string(dir.join(f)).unwrap()
        );
    }
    let warnings = imported.render_warnings();
    assert!(
        warnings.contains("`Item` has its own MarshalJSON"),
        "{warnings}"
    );
    let generated = Config::from_crate(&krate)
        .unwrap()
        .emit_rust(false)
        .generate()
        .unwrap_or_else(|e| panic!("{e}"));
    let crd = generated
        .files
        .iter()
        .find(|f| f.path.ends_with("shapes.example.com_shapes.yaml"))
        .expect("the Shape CRD");
    insta::assert_snapshot!("shapes__crd", crd.contents);
    // Against controller-gen's CRDs for the Go original (fixtures/import_go/regen-golden.sh):
    // every one of them.
    let mut golden = BTreeMap::new();
    let mut files: Vec<PathBuf> = std::fs::read_dir(shapes().join("golden"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    for file in &files {
        crd_compare::crds_of(
            &std::fs::read_to_string(file).unwrap(),
            &file.display().to_string(),
            &mut golden,
        );
    }
    let mut ours = BTreeMap::new();
    for f in generated
        .files
        .iter()
        .filter(|f| f.contents.contains("kind: CustomResourceDefinition"))
    {
        crd_compare::crds_of(&f.contents, "ours", &mut ours);
    }
    // The fixture's other package (`versions/`) has a test of its own.
    ours.retain(|name, _| golden.contains_key(name));
    assert_eq!(
        golden.keys().collect::<Vec<_>>(),
        ours.keys().collect::<Vec<_>>(),
        "a CRD for each of controller-gen's"
    );
    let diffs = crd_compare::diff(&golden, &ours);
    let total: usize = golden.values().map(|c| crd_compare::leaves(c).len()).sum();
    println!(
        "import go: shapes: {total} golden leaves, {} differences",
        diffs.len()
    );
    let listed: Vec<String> = diffs.iter().map(|d| d.key()).collect();
    assert!(
        listed.is_empty(),
        "differences from controller-gen:\n{}",
        listed.join("\n")
    );
}

/// An older version declaring its kind as `type Widget v1.Widget` (as Gateway API's
/// deprecated versions do): the port copies v1's fields into a struct (a kind must be
/// one), naming v1's types by their crate path, and the CRD gets both versions with one
/// schema.
#[test]
fn an_older_version_naming_the_storage_kind() {
    let krate = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("import_go_versions");
    import_go_fixture(&shapes().join("versions"), &krate);
    let old = std::fs::read_to_string(krate.join("src/apis/versions/v1beta1/types.rs")).unwrap();
    assert!(old.contains("// Go: `type Widget v1.Widget`"), "{old}");
    assert!(old.contains("pub struct Widget {"), "{old}");
    assert!(old.contains("pub spec: WidgetSpec,"), "{old}");
    assert!(
        old.contains("use crate::apis::versions::v1::WidgetSpec;"),
        "{old}"
    );
    let generated = Config::from_crate(&krate)
        .unwrap()
        .emit_rust(false)
        .generate()
        .unwrap_or_else(|e| panic!("{e}"));
    let crd = &generated
        .files
        .iter()
        .find(|f| f.path.ends_with("versions.example.com_widgets.yaml"))
        .expect("the Widget CRD")
        .contents;
    let crd: serde_json::Value = serde_yaml::from_str(crd).unwrap();
    let versions = crd["spec"]["versions"].as_array().unwrap();
    assert_eq!(versions.len(), 2, "{crd}");
    // One spec schema (the description of the kind is each version's own doc).
    let spec = |v: &serde_json::Value| v["schema"]["openAPIV3Schema"]["properties"]["spec"].clone();
    assert_eq!(spec(&versions[0]), spec(&versions[1]));
    assert!(
        spec(&versions[0])["properties"]["size"]["minimum"] == 1,
        "{crd}"
    );
    assert!(versions.iter().any(|v| v["deprecated"] == true));
}

fn rs_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = vec![];
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                if !p.ends_with("generated") {
                    stack.push(p);
                }
            } else if p.extension().is_some_and(|x| x == "rs" || x == "toml") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// Every file the import writes for sample-controller (kind, list, protected group) and
/// flux (two packages, a cross-package reference, constants, interfaces, a struct without
/// `Default`, an empty groupversion_info.rs).
#[test]
fn snapshots_of_imported_go() {
    let root = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("import_go_snapshots");
    for fixture in ["sample-controller", "flux-source-controller"] {
        let krate = root.join(fixture);
        let imported = import_go_fixture(&fidelity().join(fixture), &krate);
        for f in rs_files(&krate) {
            let rel = f.strip_prefix(&krate).unwrap().display().to_string();
            let name = format!("{fixture}__{}", rel.replace('/', "__"));
            insta::assert_snapshot!(name, std::fs::read_to_string(&f).unwrap());
        }
        // The summary names the packages' directories: keep the last part only.
        let summary = imported
            .summary
            .replace(&format!("{}/", fidelity().display()), "");
        insta::assert_snapshot!(format!("{fixture}__summary"), summary);
    }
}

/// A second import replaces only what the first wrote; a file the user took over (its
/// header removed) stops the import before anything is written.
#[test]
fn reimport_never_overwrites_a_hand_written_file() {
    let krate = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("import_go_reimport");
    let fixture = fidelity().join("controller-runtime-chaospod");
    let imported = import_go_fixture(&fixture, &krate);
    // The same import again changes nothing.
    let again = imported.write().unwrap();
    assert!(again.written.is_empty(), "{:?}", again.written);
    let resource = krate.join("src/apis/chaosapps/pkg/resource.rs");
    let mut hand = std::fs::read_to_string(&resource).unwrap();
    hand = hand.split_once('\n').unwrap().1.to_owned();
    std::fs::write(&resource, &hand).unwrap();
    let mod_rs = krate.join("src/apis/chaosapps/pkg/mod.rs");
    std::fs::write(
        &mod_rs,
        "// @generated by kube-codegen import go. changed\n",
    )
    .unwrap();
    let err = imported
        .write()
        .expect_err("a hand-written file is in the way");
    assert!(matches!(err, Error::Output(_)), "{err}");
    assert!(err.to_string().contains("resource.rs"), "{err}");
    assert_eq!(std::fs::read_to_string(&resource).unwrap(), hand);
    assert_eq!(
        std::fs::read_to_string(&mod_rs).unwrap(),
        "// @generated by kube-codegen import go. changed\n",
        "nothing is written when one file is refused"
    );
}

/// The port of the whole corpus (five Go packages, one crate) compiles with every
/// generator's output, and each fixture's sample objects (valid for controller-gen's CRDs)
/// deserialize into the imported Rust types and serialize back unchanged (as Go's would). One cargo build, sharing the target of
/// import_crd.rs and kubernetes_versions.rs.
#[test]
fn imported_go_compiles_and_reads_the_samples() {
    let root = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let krate = root.join("import_go_compile");
    let fixtures: Vec<PathBuf> = [
        "sample-controller",
        "controller-runtime-chaospod",
        "flux-source-controller",
        "gateway-api",
    ]
    .iter()
    .map(|f| fidelity().join(f))
    .chain([shapes()])
    .collect();
    import_go::try_import_go_fixtures_with(&fixtures, &krate, &shapes_options())
        .unwrap_or_else(|e| panic!("{e}"));
    let written = Config::from_crate(&krate)
        .unwrap()
        .write()
        .unwrap_or_else(|e| panic!("generate on the imported crate: {e}"));
    assert!(written.written.iter().any(|p| p.ends_with("clientset.rs")));
    imported_crate::use_workspace_runtime(&krate, "src");
    // A test per sample: the object (YAML read here, JSON in the test) into its kind.
    let mut tests = String::from("// Each fixture's samples into the imported kinds.\n");
    let mut count = 0;
    for f in &fixtures {
        if !f.join("samples").is_dir() {
            continue;
        }
        let mut samples: Vec<PathBuf> = std::fs::read_dir(f.join("samples"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
            .collect();
        samples.sort();
        for s in samples {
            let value: serde_json::Value =
                serde_yaml::from_str(&std::fs::read_to_string(&s).unwrap()).unwrap();
            let kind = value["kind"].as_str().unwrap();
            let group = value["apiVersion"]
                .as_str()
                .unwrap()
                .split('/')
                .next()
                .unwrap();
            let path = kind_path(&krate, kind, group);
            count += 1;
            // Back out unchanged, but for `status: {}`: Go's omitempty never omits a struct,
            // so Go writes it too.
            tests.push_str(&format!(
                "\n#[test]\nfn sample_{count}_{}() {{\n    \
                 let json = {:?};\n    \
                 let object: {path} = serde_json::from_str(json).expect(\"the sample reads\");\n    \
                 let sample: serde_json::Value = serde_json::from_str(json).unwrap();\n    \
                 let mut back = serde_json::to_value(&object).unwrap();\n    \
                 if sample.get(\"status\").is_none() && back[\"status\"] == serde_json::json!({{}}) {{\n        \
                 back.as_object_mut().unwrap().remove(\"status\");\n    \
                 }}\n    \
                 assert_eq!(back, sample);\n}}\n",
                kind.to_lowercase(),
                serde_json::to_string(&value).unwrap(),
            ));
        }
    }
    assert!(count >= 5, "{count} samples");
    std::fs::create_dir_all(krate.join("tests")).unwrap();
    std::fs::write(krate.join("tests/samples.rs"), tests).unwrap();
    let out = std::process::Command::new(env!("CARGO"))
        // Only the samples' test: the library builds once (no unit-test build of it).
        .args(["test", "--offline", "--quiet", "--test", "samples"])
        .current_dir(&krate)
        .env("CARGO_TARGET_DIR", root.join("kubernetes_versions/target"))
        .env_remove("RUSTFLAGS")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "the imported crate does not compile, or a sample does not read:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `imported::apis::<group>::<package>::<Kind>`: the module whose mod.rs names `group`
/// and whose files declare `pub struct <Kind> `.
fn kind_path(krate: &Path, kind: &str, group: &str) -> String {
    for f in rs_files(&krate.join("src/apis")) {
        let Some(dir) = f.parent() else { continue };
        let text = std::fs::read_to_string(&f).unwrap();
        let module_doc = std::fs::read_to_string(dir.join("mod.rs")).unwrap_or_default();
        if text.contains(&format!("pub struct {kind} {{"))
            && module_doc.contains(&format!("+groupName={group}"))
        {
            let rel = dir.strip_prefix(krate.join("src")).unwrap();
            let module: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            return format!("imported::{}::{kind}", module.join("::"));
        }
    }
    panic!("no kind {kind} of group {group} in {}", krate.display())
}

/// The command line: `import go` writes the crate and says what it found and skipped; bad
/// Go fails with located errors and writes nothing.
#[test]
fn cli_import_go() {
    let root = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("import_go_cli");
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).unwrap();
    let pkg = fidelity().join("controller-runtime-chaospod/go/examples/crd/pkg");
    let run = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_kube-codegen"))
            .args(args)
            .current_dir(&root)
            .output()
            .unwrap();
        (out.status.success(), String::from_utf8(out.stderr).unwrap())
    };
    let (ok, err) = run(&["import", "go", pkg.to_str().unwrap(), "--out", "chaos"]);
    assert!(ok, "{err}");
    assert!(err.contains("imported 1 Go package"), "{err}");
    assert!(err.contains("skipped zz_generated.deepcopy.go"), "{err}");
    assert!(
        root.join("chaos/src/apis/chaosapps/pkg/resource.rs")
            .is_file()
    );
    let (ok, err) = run(&["generate", "chaos", "--generators", "crd"]);
    assert!(ok, "{err}");
    assert!(
        root.join("chaos/crds/chaosapps.metamagical.io_chaospods.yaml")
            .is_file()
    );

    // A package of one bad file (the error corpus' files are one package each).
    std::fs::create_dir_all(root.join("badpkg")).unwrap();
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/errors_import_go/interface_field.go"),
        root.join("badpkg/types.go"),
    )
    .unwrap();
    let (ok, err) = run(&["import", "go", "badpkg", "--out", "bad"]);
    assert!(!ok, "{err}");
    assert!(err.contains("badpkg/types.go:6:7"), "{err}");
    assert!(err.contains("nothing was written"), "{err}");
    assert!(!root.join("bad").exists());
}

/// Into a crate whose own src/lib.rs does not declare the imported module: the import
/// leaves lib.rs alone and warns, located at it.
#[test]
fn a_hand_written_lib_rs_is_kept_and_named_in_a_warning() {
    let krate = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("import_go_own_lib");
    let _ = std::fs::remove_dir_all(&krate);
    std::fs::create_dir_all(krate.join("src")).unwrap();
    std::fs::write(krate.join("src/lib.rs"), "// mine\n").unwrap();
    let dir = fidelity().join("controller-runtime-chaospod/go/examples/crd/pkg");
    let mut files: Vec<(PathBuf, String)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "go"))
        .map(|p| {
            let t = std::fs::read_to_string(&p).unwrap();
            (p, t)
        })
        .collect();
    files.sort();
    let imported = kube_codegen::import_go(
        &[kube_codegen::GoPackageInput {
            dir,
            files,
            import_path: None,
        }],
        &kube_codegen::GoImportOptions {
            out: krate.clone(),
            crate_name: "mine".into(),
            kubernetes: kube_codegen::KubernetesVersion::NEWEST,
            runtime: kube_codegen::RuntimeSource::registry(),
            crd: Default::default(),
            conversion_hub: false,
        },
    )
    .unwrap();
    assert!(
        !imported
            .files
            .iter()
            .any(|f| f.path.ends_with("src/lib.rs")),
        "lib.rs is the user's"
    );
    let w = imported.render_warnings();
    assert!(
        w.contains("does not declare the imported module `apis`"),
        "{w}"
    );
    assert!(w.contains("src/lib.rs:1:1"), "{w}");
    assert!(
        imported.summary.contains("1 warning"),
        "{}",
        imported.summary
    );
}

/// `tests/fixtures/go-corpus/<name>`: a package of the Go API corpus.
fn go_corpus(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/go-corpus")
        .join(name)
        .canonicalize()
        .expect("tests/fixtures/go-corpus")
}

/// A scratch directory with no `go.mod` above it (the system's temporary directory).
fn flat_root(name: &str) -> PathBuf {
    let root =
        std::env::temp_dir().join(format!("kcg-import-go-flat-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).unwrap();
    assert_eq!(
        kube_codegen::import_path_of(&root),
        None,
        "{}: a go.mod above the scratch directory",
        root.display()
    );
    root
}

/// Copy the `.go` files of `from` into the new directory `to`.
fn copy_go_files(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "go") {
            std::fs::copy(&p, to.join(p.file_name().unwrap())).unwrap();
        }
    }
}

/// The `.rs` files of a crate, relative path -> text, without the line naming the Go
/// package's import path (known only from a `go.mod`).
fn rust_sources(krate: &Path) -> BTreeMap<PathBuf, String> {
    rs_files(&krate.join("src"))
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            let text: Vec<&str> = text
                .lines()
                .filter(|l| !l.starts_with("// Go package `"))
                .collect();
            (p.strip_prefix(krate).unwrap().to_owned(), text.join("\n"))
        })
        .collect()
}

/// Issue 28, class 10: package directories given flat, outside their module's tree (no
/// `go.mod` above them, named nothing like their import paths), are matched to the import
/// paths that name them by their `package` clause and the names used through each path.
/// cert-manager's seven packages (three of them `package v1`, two of those declaring a
/// `LocalObjectReference`) copied into `p1`..`p7` give the crate their module tree gives.
#[test]
fn go_packages_given_flat_are_matched_by_package_clause() {
    let fx = go_corpus("cert-manager");
    let tree: Vec<PathBuf> = import_go::go_packages(&fx);
    assert_eq!(tree.len(), 7, "{tree:?}");
    let root = flat_root("cert-manager");
    for (i, dir) in tree.iter().enumerate() {
        copy_go_files(dir, &root.join(format!("p{}", i + 1)));
    }
    let target = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let flat = target.join("import_go_flat");
    let imported = import_go::try_import_go_fixtures(std::slice::from_ref(&root), &flat);
    let _ = std::fs::remove_dir_all(&root);
    if let Err(e) = &imported {
        panic!("flat import failed: {e}");
    }
    let moduled = target.join("import_go_flat_tree");
    import_go_fixture(&fx, &moduled);
    let (a, b) = (rust_sources(&flat), rust_sources(&moduled));
    assert_eq!(a.keys().collect::<Vec<_>>(), b.keys().collect::<Vec<_>>());
    for (path, text) in &a {
        assert_eq!(text, &b[path], "{}", path.display());
    }
}

/// Class 10's message: a directory that was given is never "not among the inputs". Gateway
/// API's `v1beta1` in a directory named `v1` and its `v1` in one named `v2` import; `v1`
/// given twice is an ambiguity naming both; a `go.mod` of another module above the `v1`
/// given is named as the reason it does not match.
#[test]
fn a_given_go_directory_is_never_not_among_the_inputs() {
    let fx = go_corpus("gateway-api").join("go/apis");
    let root = flat_root("gateway");
    copy_go_files(&fx.join("v1beta1"), &root.join("swapped/v1"));
    copy_go_files(&fx.join("v1"), &root.join("swapped/v2"));
    let target = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let out = target.join("import_go_flat_gateway");
    let swapped = import_go::try_import_go_fixtures(&[root.join("swapped")], &out);
    assert!(swapped.is_ok(), "{}", swapped.err().unwrap_or_default());
    assert!(out.join("src/apis/gateway/v1/gateway_types.rs").is_file());
    assert!(
        out.join("src/apis/gateway/v1beta1/gateway_types.rs")
            .is_file()
    );

    copy_go_files(&fx.join("v1beta1"), &root.join("twice/beta"));
    copy_go_files(&fx.join("v1"), &root.join("twice/a"));
    copy_go_files(&fx.join("v1"), &root.join("twice/b"));
    let err = import_go::try_import_go_fixtures(&[root.join("twice")], &out)
        .expect_err("v1 given twice is ambiguous");
    assert!(!err.contains("not among the inputs"), "{err}");
    assert!(
        err.contains("could be any of the given directories"),
        "{err}"
    );
    assert!(
        err.contains("twice/a`") && err.contains("twice/b`"),
        "{err}"
    );

    copy_go_files(&fx.join("v1beta1"), &root.join("moduled/beta"));
    copy_go_files(&fx.join("v1"), &root.join("moduled/mine/v1"));
    std::fs::write(
        root.join("moduled/mine/go.mod"),
        "module example.com/mine\n\ngo 1.22\n",
    )
    .unwrap();
    let err = import_go::try_import_go_fixtures(&[root.join("moduled")], &out)
        .expect_err("a go.mod of another module above v1");
    let _ = std::fs::remove_dir_all(&root);
    assert!(!err.contains("not among the inputs"), "{err}");
    assert!(
        err.contains("the `go.mod` above it makes its import path `example.com/mine/v1`"),
        "{err}"
    );
}
