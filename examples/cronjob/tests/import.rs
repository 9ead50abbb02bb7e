//! The API in `src/apis` is `kube-codegen import go` of go-project's `api/v1` and `api/v2`,
//! unedited: the import, run again here on the Go sources, gives exactly the committed files
//! (and nothing else: no file it writes is missing, no imported file is left over).

use std::path::{Path, PathBuf};

fn krate() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn package(dir: &Path) -> kube_codegen::GoPackageInput {
    let mut files: Vec<(PathBuf, String)> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "go"))
        .map(|p| {
            let text = std::fs::read_to_string(&p).expect("Go source");
            (p, text)
        })
        .collect();
    files.sort();
    kube_codegen::GoPackageInput {
        import_path: kube_codegen::import_path_of(dir),
        dir: dir.to_owned(),
        files,
    }
}

#[test]
fn the_committed_api_is_what_import_go_gives() {
    let root = krate();
    let inputs: Vec<_> = ["api/v1", "api/v2"]
        .iter()
        .map(|p| package(&root.join("go-project").join(p)))
        .collect();
    let imported = kube_codegen::import_go(
        &inputs,
        &kube_codegen::GoImportOptions {
            out: root.clone(),
            crate_name: "cronjob".into(),
            kubernetes: kube_codegen::KubernetesVersion::NEWEST,
            runtime: kube_codegen::RuntimeSource::registry(),
            crd: Default::default(),
            // The project enables kubebuilder's conversion webhook patch
            // (config/crd/kustomization.yaml), and its v2 has the hand-written conversions.
            conversion_hub: true,
        },
    )
    .unwrap_or_else(|e| panic!("import go: {e}"));
    // The crate has its own Cargo.toml and lib.rs, so the import writes only the API.
    let mut written: Vec<PathBuf> = imported.files.iter().map(|f| f.path.clone()).collect();
    written.sort();
    let mut committed: Vec<PathBuf> = walk(&root.join("src/apis"));
    committed.sort();
    assert_eq!(written, committed, "the files the import writes");
    for f in &imported.files {
        let on_disk = std::fs::read_to_string(&f.path).expect("committed file");
        assert!(
            on_disk == f.contents,
            "{} is not what `kube-codegen import go` gives: run `kube-codegen import go \
             examples/cronjob/go-project/api/v1 examples/cronjob/go-project/api/v2 --out examples/cronjob`",
            f.path.display()
        );
    }
    // What the import says about the port: the Go `+versionName` markers on the kinds
    // (controller-gen ignores them there) are carried as comments, with a warning each.
    let warnings = imported.render_warnings();
    assert_eq!(warnings.matches("`+versionName=").count(), 2, "{warnings}");
    // controller-runtime's hub (`func (*CronJob) Hub()` in api/v1) is kube-codegen's.
    let v1 = std::fs::read_to_string(root.join("src/apis/batch/v1/cronjob_types.rs")).unwrap();
    assert!(v1.contains("/// +kube-codegen:conversion=hub\n"), "{v1}");
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = vec![];
    for e in std::fs::read_dir(dir).expect("directory") {
        let p = e.expect("directory entry").path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}
