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
//! `GO_CORPUS_BLESS=1` rewrites the lists from the current differences (reasons kept),
//! `GO_CORPUS_ONLY=a,b` checks those packages only;
//! `cargo test -p kube-codegen --test go_corpus -- --nocapture` prints the scores.

use std::path::{Path, PathBuf};

#[path = "common/crd_compare.rs"]
mod crd_compare;
#[path = "common/import_go.rs"]
mod import_go;
#[path = "common/ratchet.rs"]
mod ratchet;

use kube_codegen::Config;

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
    let mut out: Vec<PathBuf> = std::fs::read_dir(corpus())
        .expect("tests/fixtures/go-corpus readable")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.join("go").is_dir() && p.join("golden").is_dir())
        .collect();
    out.sort();
    out
}

/// The `crd:` options of the package's ORIGIN (`crd options: crd:a=b,c=d (where from)`) as
/// `(name, value)` pairs.
fn crd_options(package: &Path) -> Vec<(String, String)> {
    let origin = std::fs::read_to_string(package.join("ORIGIN")).expect("ORIGIN");
    let line = origin
        .lines()
        .find_map(|l| l.strip_prefix("crd options: "))
        .unwrap_or_else(|| panic!("{}/ORIGIN: no `crd options:` line", package.display()));
    let opts = line.split(' ').next().unwrap_or_default();
    let opts = opts
        .strip_prefix("crd:")
        .or_else(|| (opts == "crd").then_some(""))
        .unwrap_or_else(|| panic!("{}/ORIGIN: `{line}` is not `crd[:...]`", package.display()));
    opts.split(',')
        .filter(|o| !o.is_empty())
        .map(|o| {
            let (k, v) = o.split_once('=').unwrap_or((o, "true"));
            (k.to_owned(), v.to_owned())
        })
        .collect()
}

/// controller-gen's `crd:` options as `Config` settings.
fn configure(options: &[(String, String)], config: Config) -> Config {
    let mut c = config;
    for (k, v) in options {
        c = match (k.as_str(), v.as_str()) {
            // The only CRD version there is.
            ("crdVersions", "v1") => c,
            // kube-codegen writes floats always; controller-gen needs this option for them.
            ("allowDangerousTypes", "true") => c,
            ("maxDescLen", n) => c.max_description_len(n.parse().expect("maxDescLen=<number>")),
            ("generateEmbeddedObjectMeta", b) => {
                c.generate_embedded_object_meta(b.parse().expect("true or false"))
            }
            _ => panic!("crd option {k}={v}: not mapped to a kube-codegen setting"),
        };
    }
    c
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
    if let Err(e) = import_go::try_import_go_fixtures(std::slice::from_ref(&p.to_owned()), &krate) {
        out.failures.push(format!("{name}: {e}"));
        return out;
    }
    let options = crd_options(p);
    // The CRDs of the groups controller-gen was run on: not those of other modules'
    // packages in go-deps/ (Gateway API's, for cert-manager).
    let groups: Vec<String> = golden
        .values()
        .filter_map(|c| c["spec"]["group"].as_str().map(str::to_owned))
        .collect();
    let keep = |name: &str| groups.iter().any(|g| name.ends_with(&format!(".{g}")));
    let o = ratchet::check_only(p, &krate, &|c| configure(&options, c), &keep, bless);
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
