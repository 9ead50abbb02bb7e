//! `import go` of a fidelity fixture's Go packages, shared by tests/fidelity.rs (the CRD
//! comparison) and tests/import_go.rs (snapshots, the compile test).
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// The Go package directories of a fixture: every directory below `go/` and `go-deps/`
/// (packages the API imports, such as flux's `meta`) holding `.go` files.
pub fn go_packages(fixture: &Path) -> Vec<PathBuf> {
    let mut out = vec![];
    let mut stack: Vec<PathBuf> = ["go", "go-deps"]
        .iter()
        .map(|d| fixture.join(d))
        .filter(|d| d.is_dir())
        .collect();
    // Not a fidelity fixture: the packages are below the directory itself.
    if stack.is_empty() {
        stack.push(fixture.to_owned());
    }
    while let Some(d) = stack.pop() {
        let mut has_go = false;
        for e in std::fs::read_dir(&d).expect("readable dir") {
            let p = e.expect("dir entry").path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "go") {
                has_go = true;
            }
        }
        if has_go {
            out.push(d);
        }
    }
    out.sort();
    out
}

/// `import go` of a fixture's Go packages into `out`, written as the CLI writes it.
pub fn import_go_fixture(fixture: &Path, out: &Path) -> kube_codegen::GoImported {
    import_go_fixtures(&[fixture.to_owned()], out)
}

/// `import go` of the Go packages of several fixtures into one crate at `out`.
pub fn import_go_fixtures(fixtures: &[PathBuf], out: &Path) -> kube_codegen::GoImported {
    try_import_go_fixtures(fixtures, out).unwrap_or_else(|e| panic!("{e}"))
}

/// [`import_go_fixtures`], its error as text (`import go <dirs>: <error>`).
pub fn try_import_go_fixtures(
    fixtures: &[PathBuf],
    out: &Path,
) -> Result<kube_codegen::GoImported, String> {
    try_import_go_fixtures_with(fixtures, out, &kube_codegen::CrdOptions::default())
}

/// [`try_import_go_fixtures`] with controller-gen's `crd:` options.
pub fn try_import_go_fixtures_with(
    fixtures: &[PathBuf],
    out: &Path,
    crd: &kube_codegen::CrdOptions,
) -> Result<kube_codegen::GoImported, String> {
    let inputs: Vec<kube_codegen::GoPackageInput> = fixtures
        .iter()
        .flat_map(|f| go_packages(f))
        .map(|dir| {
            let mut files: Vec<(PathBuf, String)> = std::fs::read_dir(&dir)
                .expect("package dir")
                .map(|e| e.expect("dir entry").path())
                .filter(|p| p.extension().is_some_and(|x| x == "go"))
                .map(|p| {
                    let t = std::fs::read_to_string(&p).expect("go file");
                    (p, t)
                })
                .collect();
            files.sort();
            kube_codegen::GoPackageInput {
                import_path: kube_codegen::import_path_of(&dir),
                dir,
                files,
            }
        })
        .collect();
    let _ = std::fs::remove_dir_all(out);
    let imported = kube_codegen::import_go(
        &inputs,
        &kube_codegen::GoImportOptions {
            out: out.to_owned(),
            crate_name: "imported".into(),
            kubernetes: kube_codegen::KubernetesVersion::NEWEST,
            runtime: kube_codegen::RuntimeSource::registry(),
            crd: crd.clone(),
            conversion_hub: false,
        },
    )
    .map_err(|e| format!("import go {fixtures:?}: {e}"))?;
    imported.write().expect("imported crate written");
    Ok(imported)
}

/// The `crd:` options of a Go corpus package's ORIGIN (`crd options: crd:a=b,c=d (where
/// from)`), which `import go` takes as the project's Makefile writes them.
pub fn crd_options_of_origin(package: &Path) -> kube_codegen::CrdOptions {
    let origin = std::fs::read_to_string(package.join("ORIGIN")).expect("ORIGIN");
    let line = origin
        .lines()
        .find_map(|l| l.strip_prefix("crd options: "))
        .unwrap_or_else(|| panic!("{}/ORIGIN: no `crd options:` line", package.display()));
    let opts = line.split(' ').next().unwrap_or_default();
    opts.parse()
        .unwrap_or_else(|e| panic!("{}/ORIGIN: `{line}`: {e}", package.display()))
}

/// The packages of the Go corpus below `corpus`: each directory with `go/` and `golden/`,
/// sorted.
pub fn corpus_packages(corpus: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(corpus)
        .unwrap_or_else(|e| panic!("{}: {e}", corpus.display()))
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.join("go").is_dir() && p.join("golden").is_dir())
        .collect();
    out.sort();
    out
}
