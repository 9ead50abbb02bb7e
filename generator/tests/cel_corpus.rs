//! No false refusals: every CRD the API server accepts (the CRD corpus, the fidelity
//! goldens controller-gen wrote) and every CRD this crate's snapshots hold must pass the CEL
//! compile checks (`kube_codegen_validation::cel::check`, which the `crd` generator runs: type checking, cost estimation) without a problem.

use std::path::{Path, PathBuf};

use kube_codegen_validation::cel::check::check_schema;
use serde_json::Value;

fn files(dir: &Path, ext: &str, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files(&path, ext, out);
        } else if path.to_string_lossy().ends_with(ext) {
            out.push(path);
        }
    }
}

fn count_rules(v: &Value) -> usize {
    match v {
        Value::Object(m) => {
            let own = m
                .get("x-kubernetes-validations")
                .and_then(Value::as_array)
                .map_or(0, Vec::len);
            own + m
                .iter()
                .filter(|(k, _)| *k != "default" && *k != "enum")
                .map(|(_, x)| count_rules(x))
                .sum::<usize>()
        }
        Value::Array(a) => a.iter().map(count_rules).sum(),
        _ => 0,
    }
}

/// Checks every CRD version schema in `text` (YAML, one or more documents); returns the
/// number of schemas and rules seen.
fn check(text: &str, origin: &Path, failures: &mut Vec<String>) -> (usize, usize) {
    let (mut schemas, mut rules) = (0, 0);
    for doc in serde_yaml::Deserializer::from_str(text) {
        let Ok(v) = Value::deserialize_from(doc) else {
            continue;
        };
        if v.get("kind").and_then(Value::as_str) != Some("CustomResourceDefinition") {
            continue;
        }
        let versions = v
            .pointer("/spec/versions")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        for ver in versions {
            let Some(schema) = ver.pointer("/schema/openAPIV3Schema") else {
                continue;
            };
            schemas += 1;
            rules += count_rules(schema);
            for p in check_schema(schema) {
                failures.push(format!(
                    "{} ({}): {}",
                    origin.display(),
                    ver["name"],
                    p.message
                ));
            }
        }
    }
    (schemas, rules)
}

trait FromDoc: Sized {
    fn deserialize_from(doc: serde_yaml::Deserializer) -> Result<Self, serde_yaml::Error>;
}

impl FromDoc for Value {
    fn deserialize_from(doc: serde_yaml::Deserializer) -> Result<Self, serde_yaml::Error> {
        serde::Deserialize::deserialize(doc)
    }
}

#[test]
fn accepted_and_generated_crds_check_clean() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let mut yaml = vec![];
    files(&root.join("tests/fixtures/crd-corpus"), ".yaml", &mut yaml);
    files(&root.join("tests/fixtures/fidelity"), ".yaml", &mut yaml);
    let mut snaps = vec![];
    files(
        &root.join("generator/tests/snapshots"),
        ".yaml.snap",
        &mut snaps,
    );
    let mut failures = vec![];
    let (mut schemas, mut rules) = (0, 0);
    for f in yaml.iter().chain(&snaps) {
        let text = std::fs::read_to_string(f).unwrap();
        // insta's header is a YAML document of its own: skipped as not a CRD.
        let (s, r) = check(&text, f, &mut failures);
        schemas += s;
        rules += r;
    }
    eprintln!(
        "cel corpus: {} files, {schemas} CRD version schemas, {rules} CEL rules",
        yaml.len() + snaps.len()
    );
    assert!(
        failures.is_empty(),
        "false refusals:\n{}",
        failures.join("\n")
    );
    // Not vacuous: the corpus has hundreds of rules (Gateway API, cluster-api...).
    assert!(rules > 300, "only {rules} rules seen");
    assert!(schemas > 100, "only {schemas} schemas seen");
}

/// A rule no marker wrote (an embedded Kubernetes type's `+k8s:immutable` rules, nested in
/// unbounded lists of `WorkloadSpec`) over the budget: the server refuses the CRD (so says
/// tests/tests/k8s_embedded.rs), nothing here can change the rule, so generation warns and
/// goes on.
#[test]
fn an_embedded_types_rule_over_budget_is_a_warning() {
    let generated = kube_codegen::Config::new()
        .crate_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/k8s_embedded"))
        .generate()
        .expect("the fixture generates");
    let w: Vec<String> = generated.warnings.iter().map(|d| d.to_string()).collect();
    assert!(
        w.iter().any(
            |w| w.contains("estimated rule cost exceeds budget by factor of 2.0x")
                && w.contains("embedded Kubernetes type's schema")
        ),
        "{w:#?}"
    );
}
