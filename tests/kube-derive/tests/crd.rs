//! kube-derive types as input: for every fixture of `tests/fixtures/kube-derive/`, the CRDs
//! `kube-codegen generate` writes equal kube-derive's own `crd()` of the same types,
//! keyword by keyword, with the comparison of the fidelity corpus
//! (`generator/tests/common/crd_compare.rs`). Numbers are compared by value: kube-derive's
//! `minimum: 0.0` and our `minimum: 0` are one bound.
//!
//! `cargo test -p kube-codegen-kube-derive --test crd -- --nocapture` prints the counts.

#[path = "../../../generator/tests/common/crd_compare.rs"]
mod crd_compare;

use std::collections::BTreeMap;
use std::path::PathBuf;

use crd_compare::{crds_of, diff, leaves, short};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::CustomResourceExt;
use serde_json::Value;

use kube_codegen_kube_derive as fx;

/// Each fixture with kube-derive's CRDs of its kinds.
fn fixtures() -> Vec<(&'static str, Vec<CustomResourceDefinition>)> {
    vec![
        (
            "basic",
            vec![fx::basic::Document::crd(), fx::basic::Shelf::crd()],
        ),
        ("edge", vec![fx::edge::EdgeResource::crd()]),
        ("kube_complex_enum", fx::kube_complex_enum::crds()),
        ("kube_enum", fx::kube_enum::crds()),
        ("kube_mixed_enum", fx::kube_mixed_enum::crds()),
        (
            "multi",
            vec![
                kube::core::crd::merge_crds(
                    vec![fx::multi::v1::Multi::crd(), fx::multi::v2::Multi::crd()],
                    "v2",
                )
                .expect("one kind, two versions"),
            ],
        ),
        ("kube_schema", fx::kube_schema::crds()),
        ("kube_typed_subresource", fx::kube_typed_subresource::crds()),
    ]
}

/// Differences where ours is deliberately better (FIDELITY.md, "kube-derive types as
/// input"): `(kind, CRD, path)` and why.
const BETTER: &[(&str, &str, &str, &str)] = &[
    (
        "changed",
        "shelves.basic.example.com",
        ".spec.versions[name=v1alpha1].storage",
        STORAGE,
    ),
    (
        "changed",
        "foos.clux.dev",
        ".spec.versions[name=v1].storage",
        STORAGE,
    ),
];

const STORAGE: &str = "a CRD's only version is its storage version: kube-derive writes `storage: false` as asked, and the apiserver rejects that CRD";

fn fixture_dir(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures/kube-derive")
        .join(name)
}

/// `1.0` -> `1`, as a number's value (our YAML writes whole numbers as integers).
fn integral(v: &mut Value) {
    match v {
        Value::Number(n) => {
            if let Some(f) = n
                .as_f64()
                .filter(|f| n.is_f64() && f.fract() == 0.0 && f.abs() < 9.0e15)
            {
                *n = serde_json::Number::from(f as i64);
            }
        }
        Value::Array(a) => a.iter_mut().for_each(integral),
        Value::Object(o) => o.values_mut().for_each(integral),
        _ => {}
    }
}

fn ours(name: &str) -> (BTreeMap<String, Value>, usize) {
    let dir = fixture_dir(name);
    let generated = kube_codegen::Config::new()
        .crate_dir(&dir)
        .input(dir.join("src"))
        .emit_rust(false)
        .generate()
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    for w in &generated.warnings {
        println!("  {name}: warning: {w}");
    }
    let mut out = BTreeMap::new();
    for f in &generated.files {
        if f.path.extension().is_some_and(|e| e == "yaml") {
            crds_of(&f.contents, &f.path.display().to_string(), &mut out);
        }
    }
    (out, generated.warnings.len())
}

#[test]
fn generated_crds_equal_kube_derives_crd() {
    let (mut crds, mut keywords, mut differences, mut listed) = (0, 0, vec![], 0);
    for (name, reference) in fixtures() {
        let mut golden = BTreeMap::new();
        for crd in reference {
            let mut v = serde_json::to_value(&crd).expect("a CRD serializes");
            integral(&mut v);
            let n = v["metadata"]["name"].as_str().expect("named").to_owned();
            golden.insert(n, v);
        }
        let (ours, warnings) = ours(name);
        crds += golden.len();
        keywords += golden.values().map(|c| leaves(c).len()).sum::<usize>();
        let (better, found): (Vec<_>, Vec<_>) = diff(&golden, &ours).into_iter().partition(|d| {
            BETTER
                .iter()
                .any(|(k, c, p, _)| d.kind.as_str() == *k && d.crd == *c && d.path == *p)
        });
        for d in &better {
            println!("  better: {}", d.key());
        }
        listed += better.len();
        println!(
            "{name}: {} CRDs, {} differences, {warnings} warnings",
            golden.len(),
            found.len()
        );
        for d in &found {
            println!(
                "  {} {} {}: kube-derive {} | ours {}",
                d.kind.as_str(),
                d.crd,
                d.path,
                short(&d.golden),
                short(&d.ours)
            );
        }
        differences.extend(found);
    }
    println!(
        "total: {crds} CRDs, {keywords} keywords of kube-derive's, {} differences, {listed} where ours is better (FIDELITY.md)",
        differences.len()
    );
    assert!(
        differences.is_empty(),
        "{} keyword differences (listed above)",
        differences.len()
    );
}
