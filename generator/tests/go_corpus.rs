//! The Go API corpus (issue 28): real API packages nobody here wrote, taken from the Go module
//! proxy in their authors' layout (`tests/fixtures/go-corpus/<name>/go/`, rebuilt with
//! controller-gen's CRDs by `tests/fixtures/go-corpus/regen.sh`). For each, `import go` of
//! its package directories and `generate` on the imported crate, with no hand edit and the
//! `crd:` options of the project's Makefile (from its ORIGIN), then the CRDs compared keyword
//! by keyword with controller-gen's (`golden/`), by the fidelity test's ratchet
//! (`common/ratchet.rs`): every difference is listed with its reason in the package's
//! `known-differences.txt`, and one not listed fails. Every package imports and generates
//! (no `generate-error` line) and matches at least 99% of controller-gen's leaves.
//!
//! `imported_crates_build` builds a sample of the imported crates with everything `generate`
//! writes (`KUBE_CODEGEN_GO_CORPUS_COMPILE=all`: every package; `=a,b`: those).
//!
//! `GO_CORPUS_BLESS=1` rewrites the lists from the current differences (reasons kept),
//! `GO_CORPUS_ONLY=a,b` checks those packages only;
//! `cargo test -p kube-codegen --test go_corpus -- --nocapture` prints the scores.

use std::path::{Path, PathBuf};

#[path = "common/crd_compare.rs"]
mod crd_compare;
#[path = "common/import_go.rs"]
mod import_go;
#[path = "common/imported_crate.rs"]
mod imported_crate;
#[path = "common/ratchet.rs"]
mod ratchet;

/// Each package's share of controller-gen's leaves that must match.
const MIN_MATCH: f64 = 0.99;

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/go-corpus")
        .canonicalize()
        .expect("tests/fixtures/go-corpus")
}

/// Every package: a directory with `go/` and `golden/`.
fn packages() -> Vec<PathBuf> {
    import_go::corpus_packages(&corpus())
}

/// One package's result.
struct Checked {
    report: String,
    failures: Vec<String>,
    matched: usize,
    total: usize,
    crds: usize,
}

/// `import go` and `generate` of one package, against its goldens by the ratchet.
fn check_package(p: &Path, root: &Path, bless: bool) -> Checked {
    let name = p.file_name().expect("named").to_string_lossy().into_owned();
    let mut out = Checked {
        report: String::new(),
        failures: vec![],
        matched: 0,
        total: 0,
        crds: 0,
    };
    let golden = ratchet::golden(p);
    if golden.is_empty() {
        out.failures.push(format!(
            "{name}: golden/ has no CRD (rebuild it with tests/fixtures/go-corpus/regen.sh {name})"
        ));
        return out;
    }
    let krate = root.join(&name);
    // The options go into the imported crate's metadata, which `generate` reads.
    let options = import_go::crd_options_of_origin(p);
    if let Err(e) = import_go::try_import_go_fixtures_with(
        std::slice::from_ref(&p.to_owned()),
        &krate,
        &options,
    ) {
        out.failures.push(format!("{name}: {e}"));
        return out;
    }
    // The CRDs of the groups controller-gen was run on: not those of other modules'
    // packages in go-deps/ (Gateway API's, for cert-manager).
    let groups: Vec<String> = golden
        .values()
        .filter_map(|c| c["spec"]["group"].as_str().map(str::to_owned))
        .collect();
    let keep = |name: &str| groups.iter().any(|g| name.ends_with(&format!(".{g}")));
    let o = ratchet::check_only(p, &krate, &|c| c, &keep, bless);
    out.report = format!("go corpus: {}", o.report);
    out.failures.extend(o.failures);
    if ratchet::parse_known(p)
        .iter()
        .any(|k| matches!(k, ratchet::Known::GenerateError { .. }))
    {
        out.failures.push(format!(
            "{name}: `generate-error` is listed: every package of the corpus must generate"
        ));
    }
    let share = o.matched as f64 / o.total.max(1) as f64;
    if share < MIN_MATCH {
        out.failures.push(format!(
            "{name}: {}/{} leaves match ({:.2}%), below {:.0}%",
            o.matched,
            o.total,
            100.0 * share,
            100.0 * MIN_MATCH
        ));
    }
    out.matched = o.matched;
    out.total = o.total;
    out.crds = golden.len();
    out
}

#[test]
fn go_corpus_against_controller_gen() {
    let bless = std::env::var_os("GO_CORPUS_BLESS").is_some_and(|v| v == "1");
    let root = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("go_corpus");
    // `GO_CORPUS_ONLY=name[,name]`: those packages only (to work on one).
    let only = std::env::var("GO_CORPUS_ONLY").ok();
    let packages: Vec<PathBuf> = packages()
        .into_iter()
        .filter(|p| {
            only.as_deref().is_none_or(|o| {
                o.split(',')
                    .any(|n| p.file_name().is_some_and(|f| f.to_string_lossy() == n))
            })
        })
        .collect();
    assert!(
        !packages.is_empty(),
        "no package in tests/fixtures/go-corpus"
    );
    // The packages on as many threads as there are cores (each import and generate runs
    // on its own), their reports in order.
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results: Vec<std::sync::Mutex<Option<Checked>>> = packages
        .iter()
        .map(|_| std::sync::Mutex::new(None))
        .collect();
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get().min(4));
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    let Some(p) = packages.get(i) else { break };
                    let checked = check_package(p, &root, bless);
                    *results[i].lock().expect("not poisoned") = Some(checked);
                }
            });
        }
    });
    let mut failures = vec![];
    let (mut matched, mut total, mut crds) = (0, 0, 0);
    for r in results {
        let c = r
            .into_inner()
            .expect("not poisoned")
            .expect("every package checked");
        print!("{}", c.report);
        failures.extend(c.failures);
        matched += c.matched;
        total += c.total;
        crds += c.crds;
    }
    println!(
        "go corpus: {} packages, {crds} CRDs: {matched}/{total} leaves match ({:.2}%), imported and generated with no hand edit",
        packages.len(),
        100.0 * matched as f64 / total.max(1) as f64
    );
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The packages whose imported crates CI builds: small ones of three projects.
const COMPILE_SAMPLE: &[&str] = &["clusterctl", "gatekeeper", "metallb"];

/// An imported crate builds (issue 28, class 12): `import go` with the ORIGIN's options,
/// `generate` with every generator, then `cargo build` of the crate on the workspace's
/// runtime, in the target directory the other import tests build theirs in (so the
/// dependencies are built once for all of them).
#[test]
fn imported_crates_build() {
    let wanted = std::env::var("KUBE_CODEGEN_GO_CORPUS_COMPILE").ok();
    let packages: Vec<PathBuf> = packages()
        .into_iter()
        .filter(|p| {
            let name = p.file_name().unwrap_or_default().to_string_lossy();
            match wanted.as_deref() {
                Some("all") => true,
                Some(list) => list.split(',').any(|n| n == name),
                None => COMPILE_SAMPLE.contains(&&*name),
            }
        })
        .collect();
    assert!(!packages.is_empty(), "no package to build");
    let root = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let mut failures = vec![];
    for p in &packages {
        let name = p
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        let krate = root.join("go_corpus_build").join(&name);
        let options = import_go::crd_options_of_origin(p);
        if let Err(e) =
            import_go::try_import_go_fixtures_with(std::slice::from_ref(p), &krate, &options)
        {
            failures.push(format!("{name}: {e}"));
            continue;
        }
        if let Err(e) = kube_codegen::Config::from_crate(&krate).and_then(|c| c.write()) {
            failures.push(format!("{name}: generate: {e}"));
            continue;
        }
        imported_crate::use_workspace_runtime(&krate, "src");
        let start = std::time::Instant::now();
        let out = std::process::Command::new(env!("CARGO"))
            .args(["build", "--offline", "--quiet", "--lib"])
            .current_dir(&krate)
            .env("CARGO_TARGET_DIR", root.join("kubernetes_versions/target"))
            .env_remove("RUSTFLAGS")
            .output()
            .expect("cargo runs");
        println!(
            "go corpus: {name}: cargo build of the imported crate {} in {:.1} s",
            if out.status.success() {
                "passed"
            } else {
                "FAILED"
            },
            start.elapsed().as_secs_f64()
        );
        if !out.status.success() {
            failures.push(format!(
                "{name}: the imported crate does not build:\n{}",
                String::from_utf8_lossy(&out.stderr)
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
