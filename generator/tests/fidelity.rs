//! Fidelity on real Go APIs (issue 13): for each fixture in `tests/fixtures/fidelity/<name>/`,
//! the CRDs generated from `rust/` (the Rust port of a real Go API package) are compared,
//! keyword by keyword, with `golden/` (what controller-gen v0.23.0 generates for the Go
//! original in `go/`, rebuilt by `tests/fixtures/fidelity/regen-golden.sh`).
//!
//! A CRD is flattened into leaves `path -> value`: every scalar is a leaf named by its JSON
//! path (the last segment is the keyword, descriptions included); arrays of scalars
//! (`required`, `enum`, `shortNames`, ...) are sets, one leaf per element; `default` and
//! `example` are one leaf each (their whole value); versions, printer columns, selectable
//! fields and CEL rules are keyed by name, JSON path and rule, so order does not matter.
//! The score of a fixture is the number of golden leaves we reproduce exactly over the
//! number of golden leaves; leaves we add are differences too, outside the score.
//!
//! Ratchet: `known-differences.txt` of each fixture lists accepted differences, one a line,
//! `<missing|extra|changed> <crd> <path>  # reason`, where `*` in the crd or path matches any
//! text (one line can cover a class), or `generate-error  # reason` when the port does not
//! generate yet. The test fails on a difference (or a generation failure) not listed, and
//! prints listed ones that no longer occur. `FIDELITY_BLESS=1` rewrites the lists from the
//! current differences, keeping the reasons of lines that still apply.
//!
//! `cargo test -p kube-codegen --test fidelity -- --nocapture` prints the scores.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[path = "common/crd_compare.rs"]
mod crd_compare;
use crd_compare::flatten;
#[path = "common/ratchet.rs"]
mod ratchet;
use ratchet::{as_is, check, glob, golden, ours};
#[path = "common/import_go.rs"]
mod import_go;
use import_go::import_go_fixture;

/// `FIDELITY_FIXTURES_DIR` points the test at another corpus (to try a changed port
/// without touching the committed one).
fn fixtures_dir() -> PathBuf {
    let dir = match std::env::var_os("FIDELITY_FIXTURES_DIR") {
        Some(d) => PathBuf::from(d),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/fidelity"),
    };
    // Canonical: a crate path with `..` in it changes the module paths the generator derives
    // (found with this corpus; reported, not this test's subject).
    dir.canonicalize()
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
}

/// Every fixture: a directory with `rust/` and `golden/`.
fn fixtures() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(fixtures_dir())
        .expect("tests/fixtures/fidelity exists")
        .map(|e| e.expect("readable dir entry").path())
        .filter(|p| p.join("rust").is_dir() && p.join("golden").is_dir())
        .collect();
    out.sort();
    out
}

#[test]
fn fidelity_against_controller_gen() {
    let bless = std::env::var_os("FIDELITY_BLESS").is_some_and(|v| v == "1");
    let fixtures = fixtures();
    assert!(
        fixtures.len() >= 3,
        "expected at least three fidelity fixtures, found {}",
        fixtures.len()
    );
    let mut failures = vec![];
    let (mut matched, mut total) = (0, 0);
    for f in &fixtures {
        let o = check(f, &f.join("rust"), &as_is, bless);
        print!("{}", o.report);
        failures.extend(o.failures);
        matched += o.matched;
        total += o.total;
    }
    println!(
        "fidelity: all fixtures: {matched}/{total} leaves match ({:.1}%)",
        100.0 * matched as f64 / total.max(1) as f64
    );
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// issue 17's proof: each fixture's Go packages, imported with `import go` and no hand
/// edit, generate controller-gen's CRDs, by the same comparison and the same
/// known-differences.txt as the hand ports (FIDELITY.md "Go importer").
#[test]
fn go_importer_against_controller_gen() {
    let root = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("fidelity_import_go");
    let mut failures = vec![];
    let (mut matched, mut total, mut crds) = (0, 0, 0);
    for f in &fixtures() {
        let name = f.file_name().expect("named").to_string_lossy().into_owned();
        let krate = root.join(&name);
        let imported = import_go_fixture(f, &krate);
        println!("{}", imported.summary);
        let o = check(f, &krate, &as_is, false);
        // Lines of known-differences.txt are the hand port's too: one the import avoids
        // is no reason to remove it.
        print!(
            "import go: {}",
            o.report.replace(
                "listed, does not occur now (remove it unless expected after a pending fix)",
                "listed (for the hand port), does not occur in the import"
            )
        );
        failures.extend(o.failures);
        matched += o.matched;
        total += o.total;
        crds += golden(f).len();
    }
    println!(
        "import go: all fixtures: {matched}/{total} leaves match ({:.1}%), {crds} CRDs, the Rust as imported (no hand edit)",
        100.0 * matched as f64 / total.max(1) as f64
    );
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn glob_matches_like_a_shell_star() {
    assert!(glob("a*c", "abbbc"));
    assert!(glob("*", ""));
    assert!(glob("*.description", ".spec.x.description"));
    assert!(!glob("*.description", ".spec.description.type"));
    assert!(glob("a*b*c", "a-b-c"));
    assert!(!glob("a*b*c", "a-c"));
    assert!(glob("exact", "exact"));
    assert!(!glob("ab*ba", "aba"));
}

#[test]
fn flatten_treats_scalar_arrays_as_sets_and_defaults_as_one_value() {
    let a = serde_json::json!({"required": ["a", "b"], "default": {"x": [1]}, "x-kubernetes-validations": [{"rule": "r", "message": "m"}]});
    let b = serde_json::json!({"required": ["b", "a"], "default": {"x": [1]}, "x-kubernetes-validations": [{"message": "m", "rule": "r"}]});
    let (mut la, mut lb) = (BTreeMap::new(), BTreeMap::new());
    flatten("", "", &a, &mut la);
    flatten("", "", &b, &mut lb);
    assert_eq!(la, lb);
    assert!(la.contains_key(".required[a]"));
    assert!(la.contains_key(".default"));
    assert!(la.contains_key(".x-kubernetes-validations[rule=r].message"));
}

/// The ratchet itself: a difference not listed fails, a listed one passes, a listed one
/// that no longer occurs is reported, and a port that does not generate fails unless listed.
#[test]
fn ratchet_fails_on_unlisted_differences_only() {
    let dir = tempfile::tempdir().expect("temp dir");
    let fx = dir.path().join("tiny");
    std::fs::create_dir_all(fx.join("rust/src")).unwrap();
    std::fs::create_dir_all(fx.join("golden")).unwrap();
    std::fs::write(
        fx.join("rust/Cargo.toml"),
        "[package]\nname = \"tiny\"\nversion = \"0.0.0\"\n\n[package.metadata.kube-codegen]\nrust = false\n",
    )
    .unwrap();
    std::fs::write(fx.join("rust/src/lib.rs"), "pub mod v1;\n").unwrap();
    std::fs::write(
        fx.join("rust/src/v1.rs"),
        r#"//! +groupName=tiny.example.com
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::core::TypeMeta;

/// +genclient
pub struct Thing {
    #[serde(flatten)]
    pub types: TypeMeta,
    pub metadata: ObjectMeta,
    pub spec: ThingSpec,
}

pub struct ThingSpec {
    /// +kubebuilder:validation:MinLength=1
    pub name: String,
}
"#,
    )
    .unwrap();
    // The golden CRD: ours, with one keyword changed and one removed.
    let ours = ours(&fx.join("rust"), &as_is).expect("the tiny port generates");
    let mut crd = ours.values().next().expect("one CRD").clone();
    let spec = &mut crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"];
    spec["properties"]["name"]["minLength"] = serde_json::json!(2);
    spec["properties"]["name"]["maxLength"] = serde_json::json!(9);
    std::fs::write(
        fx.join("golden/tiny.yaml"),
        serde_yaml::to_string(&crd).unwrap(),
    )
    .unwrap();

    let o = check(&fx, &fx.join("rust"), &as_is, false);
    assert_eq!(o.failures.len(), 1, "{}", o.report);
    assert!(o.failures[0].contains("changed ") && o.failures[0].contains(".minLength"));
    assert!(o.failures[0].contains("missing ") && o.failures[0].contains(".maxLength"));
    assert_eq!(o.total - o.matched, 2, "{}", o.report);

    // Listed (one exact line, one pattern): passes; a line matching nothing is reported.
    std::fs::write(
        fx.join("known-differences.txt"),
        "changed * *.properties.name.minLength  # reason one\n\
         missing things.tiny.example.com .spec.versions[name=v1].schema.openAPIV3Schema.properties.spec.properties.name.maxLength  # reason two\n\
         extra * *.nothing  # never occurs\n",
    )
    .unwrap();
    let o = check(&fx, &fx.join("rust"), &as_is, false);
    assert!(o.failures.is_empty(), "{:?}", o.failures);
    assert!(o.report.contains("known: reason one"), "{}", o.report);
    assert!(o.report.contains("does not occur now"), "{}", o.report);

    // Bless keeps the reasons and drops the line that matches nothing.
    check(&fx, &fx.join("rust"), &as_is, true);
    let blessed = std::fs::read_to_string(fx.join("known-differences.txt")).unwrap();
    assert!(blessed.contains("# reason one") && blessed.contains("# reason two"));
    assert!(!blessed.contains("never occurs"), "{blessed}");

    // A port that stops generating fails, unless `generate-error` is listed.
    std::fs::write(
        fx.join("rust/src/v1.rs"),
        "//! +groupName=tiny.example.com\n",
    )
    .unwrap();
    let o = check(&fx, &fx.join("rust"), &as_is, false);
    assert_eq!(o.failures.len(), 1, "{}", o.report);
    std::fs::write(
        fx.join("known-differences.txt"),
        "generate-error  # the port is empty\n",
    )
    .unwrap();
    let o = check(&fx, &fx.join("rust"), &as_is, false);
    assert!(o.failures.is_empty(), "{:?}", o.failures);
    assert_eq!(o.matched, 0);
}
