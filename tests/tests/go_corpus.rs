//! E2E: the Go API corpus (`tests/fixtures/go-corpus/<package>/`, issue 28) on a real
//! kube-apiserver. Every CRD kube-codegen generates for a package (`import go` of its
//! directories with the `crd:` options of its ORIGIN, no hand edit, then `generate`), and
//! every CRD controller-gen v0.23.0 generated for it (`golden/`), is applied with a
//! server-side dry run (server-side apply, `dryRun=All`: the server validates the CRD as it
//! would store it, and stores nothing). The verdicts, accepted or refused with the server's
//! reason, must be those recorded in `tests/fixtures/go-corpus/server-verdicts.tsv`: a
//! verdict that changes fails the test. `GO_CORPUS_BLESS=1` rewrites the file from the
//! server's answers.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::Client;
use kube::api::{Api, Patch, PatchParams};
use kube_codegen_tests::*;
use serde_json::Value;

#[path = "../../generator/tests/common/import_go.rs"]
mod import_go;

fn corpus() -> PathBuf {
    repo_root().join("tests/fixtures/go-corpus")
}

fn verdicts_file() -> PathBuf {
    corpus().join("server-verdicts.tsv")
}

/// Every package: a directory with `go/` and `golden/`.
fn packages() -> Vec<PathBuf> {
    import_go::corpus_packages(&corpus())
}

fn yaml_value(text: &str) -> Value {
    serde_json::to_value(serde_yaml::from_str::<serde_yaml::Value>(text).expect("YAML"))
        .expect("JSON")
}

/// controller-gen's CRDs of a package, by name.
fn golden(package: &Path) -> BTreeMap<String, Value> {
    let mut out = BTreeMap::new();
    for e in std::fs::read_dir(package.join("golden")).expect("golden/") {
        let p = e.expect("dir entry").path();
        if p.extension().is_some_and(|x| x == "yaml") {
            let crd = yaml_value(&std::fs::read_to_string(&p).expect("golden file"));
            let name = crd["metadata"]["name"].as_str().expect("named").to_owned();
            out.insert(name, crd);
        }
    }
    out
}

/// kube-codegen's CRDs of a package, by name: `import go` with the ORIGIN's options,
/// then `generate`; only those of the groups controller-gen was run on (not those of
/// other modules' packages in `go-deps/`).
fn ours(package: &Path, golden: &BTreeMap<String, Value>) -> BTreeMap<String, Value> {
    let name = package.file_name().expect("named").to_string_lossy();
    let krate = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("go_corpus_e2e")
        .join(&*name);
    let options = import_go::crd_options_of_origin(package);
    import_go::try_import_go_fixtures_with(&[package.to_owned()], &krate, &options)
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    let generated = kube_codegen::Config::from_crate(&krate)
        .and_then(|c| c.emit_rust(false).generate())
        .unwrap_or_else(|e| panic!("{name}: generate: {e}"));
    let groups: Vec<&str> = golden
        .values()
        .filter_map(|c| c["spec"]["group"].as_str())
        .collect();
    let mut out = BTreeMap::new();
    for f in generated
        .files
        .iter()
        .filter(|f| f.path.extension().is_some_and(|e| e == "yaml"))
    {
        let crd = yaml_value(&f.contents);
        if crd["kind"] != "CustomResourceDefinition" {
            continue;
        }
        if groups.iter().any(|g| crd["spec"]["group"] == *g) {
            let n = crd["metadata"]["name"].as_str().expect("named").to_owned();
            out.insert(n, crd);
        }
    }
    out
}

/// The server's verdict on a CRD: `accepted`, or `refused: <its message>` on one line.
async fn verdict(client: &Client, crd: &Value) -> String {
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let name = crd["metadata"]["name"].as_str().expect("named");
    let params = PatchParams::apply("kube-codegen-go-corpus").dry_run();
    match crds.patch(name, &params, &Patch::Apply(crd)).await {
        Ok(_) => "accepted".to_owned(),
        Err(kube::Error::Api(e)) => format!(
            "refused: {}",
            e.message.split_whitespace().collect::<Vec<_>>().join(" ")
        ),
        Err(e) => panic!("{name}: dry run: {e}"),
    }
}

/// `package \t crd \t kube-codegen's verdict \t controller-gen's verdict` lines.
fn parse_verdicts(text: &str) -> BTreeMap<(String, String), (String, String)> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            assert_eq!(f.len(), 4, "server-verdicts.tsv: `{l}` has not 4 fields");
            (
                (f[0].to_owned(), f[1].to_owned()),
                (f[2].to_owned(), f[3].to_owned()),
            )
        })
        .collect()
}

#[tokio::test]
async fn go_corpus_crds_server_verdicts_are_the_recorded_ones() {
    let client = client().await;
    let mut found = BTreeMap::new();
    for package in packages() {
        let name = package.file_name().unwrap().to_string_lossy().into_owned();
        let golden = golden(&package);
        let ours = ours(&package, &golden);
        assert_eq!(
            ours.keys().collect::<Vec<_>>(),
            golden.keys().collect::<Vec<_>>(),
            "{name}: kube-codegen and controller-gen generate different CRDs"
        );
        for (crd, theirs) in &golden {
            let v_ours = verdict(&client, &ours[crd]).await;
            let v_theirs = verdict(&client, theirs).await;
            found.insert((name.clone(), crd.clone()), (v_ours, v_theirs));
        }
    }
    let mut text = String::from(
        "# Server-side dry run (kube-apiserver v1.37.2) of every CRD of the Go corpus: package, CRD,\n\
         # kube-codegen's verdict (import go + generate, no hand edit), controller-gen v0.23.0's\n\
         # (golden/). Checked by tests/tests/go_corpus.rs; GO_CORPUS_BLESS=1 rewrites it.\n",
    );
    for ((p, c), (o, t)) in &found {
        text.push_str(&format!("{p}\t{c}\t{o}\t{t}\n"));
    }
    let accepted = |theirs: bool| {
        found
            .values()
            .filter(|(o, t)| if theirs { t } else { o } == "accepted")
            .count()
    };
    println!(
        "go corpus on the API server: {} CRDs; kube-codegen's accepted: {}, controller-gen's accepted: {}",
        found.len(),
        accepted(false),
        accepted(true)
    );
    if std::env::var_os("GO_CORPUS_BLESS").is_some_and(|v| v == "1") {
        std::fs::write(verdicts_file(), &text).expect("server-verdicts.tsv written");
        return;
    }
    let recorded = parse_verdicts(
        &std::fs::read_to_string(verdicts_file())
            .expect("tests/fixtures/go-corpus/server-verdicts.tsv"),
    );
    let mut changed = vec![];
    for (key, now) in &found {
        match recorded.get(key) {
            Some(was) if was == now => {}
            Some(was) => changed.push(format!(
                "{} {}: recorded kube-codegen `{}`, controller-gen `{}`; now `{}`, `{}`",
                key.0, key.1, was.0, was.1, now.0, now.1
            )),
            None => changed.push(format!("{} {}: no recorded verdict", key.0, key.1)),
        }
    }
    for key in recorded.keys().filter(|k| !found.contains_key(*k)) {
        changed.push(format!(
            "{} {}: recorded, no longer generated",
            key.0, key.1
        ));
    }
    assert!(
        changed.is_empty(),
        "server verdicts changed (GO_CORPUS_BLESS=1 rewrites tests/fixtures/go-corpus/server-verdicts.tsv):\n{}",
        changed.join("\n")
    );
}
