//! The round trip of `kube-codegen import crd` (issue 16) on the corpus of
//! `tests/fixtures/crd-corpus/` (73 CRDs of 7 projects): each project's CRDs are imported
//! into one crate, the crate is generated back in process, and every CRD is compared with
//! its original keyword by keyword (`common/crd_compare.rs`, the comparison of the
//! fidelity corpus, descriptions included).
//!
//! Ratchet: `tests/fixtures/crd-corpus/known-differences.txt` lists accepted differences,
//! `<missing|extra|changed> <crd> <path>  # reason` (`*` matches any text). A difference not
//! listed fails the test; listed ones that no longer occur are printed. The target is an
//! empty list.
//!
//! `cargo test -p kube-codegen --test import_crd -- --nocapture` prints the scores.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use kube_codegen::{Config, ImportInput, ImportOptions, KubernetesVersion, import_crds};
use serde_json::Value;

#[path = "common/crd_compare.rs"]
mod crd_compare;
#[path = "common/imported_crate.rs"]
mod imported_crate;
use crd_compare::{Kind, crds_of, diff, leaves, short};
#[path = "common/ratchet.rs"]
mod ratchet;
use ratchet::glob;

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/crd-corpus")
        .canonicalize()
        .expect("the corpus exists")
}

/// Each project directory with its CRD files, sorted.
pub fn projects() -> Vec<(String, Vec<PathBuf>)> {
    let mut out = vec![];
    for e in std::fs::read_dir(corpus()).unwrap() {
        let dir = e.unwrap().path();
        if !dir.is_dir() {
            continue;
        }
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
            .collect();
        files.sort();
        out.push((
            dir.file_name().unwrap().to_string_lossy().into_owned(),
            files,
        ));
    }
    out.sort();
    out
}

/// Import `files` into a fresh crate at `dir`; the crate's files are written there.
pub fn import_into(files: &[PathBuf], dir: &Path, name: &str) -> kube_codegen::Imported {
    let _ = std::fs::remove_dir_all(dir);
    let inputs: Vec<ImportInput> = files
        .iter()
        .map(|f| ImportInput {
            path: f.clone(),
            text: std::fs::read_to_string(f).unwrap(),
        })
        .collect();
    let imported = import_crds(
        &inputs,
        &ImportOptions {
            out: dir.to_owned(),
            crate_name: name.to_owned(),
            kubernetes: KubernetesVersion::NEWEST,
            existing: BTreeMap::new(),
            has_cargo_toml: false,
            has_lib_rs: false,
            runtime: kube_codegen::RuntimeSource::registry(),
        },
    )
    .unwrap_or_else(|e| panic!("import of {name} failed:\n{e}"));
    for f in &imported.files {
        std::fs::create_dir_all(f.path.parent().unwrap()).unwrap();
        std::fs::write(&f.path, &f.contents).unwrap();
    }
    imported
}

/// Known differences: (kind, crd glob, path glob, reason).
fn known() -> Vec<(Kind, String, String, String)> {
    let file = corpus().join("known-differences.txt");
    let Ok(text) = std::fs::read_to_string(&file) else {
        return vec![];
    };
    let mut out = vec![];
    for (n, line) in text.lines().enumerate() {
        let line = line.trim_end();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (body, reason) = line.split_once(" # ").unwrap_or((line, ""));
        let mut parts = body.trim().splitn(3, ' ');
        let (Some(k), Some(crd), Some(path)) = (parts.next(), parts.next(), parts.next()) else {
            panic!(
                "{}:{}: expected `<kind> <crd> <path>  # reason`",
                file.display(),
                n + 1
            );
        };
        let kind = Kind::parse(k)
            .unwrap_or_else(|| panic!("{}:{}: bad kind `{k}`", file.display(), n + 1));
        out.push((
            kind,
            crd.to_owned(),
            path.trim().to_owned(),
            reason.to_owned(),
        ));
    }
    out
}

#[test]
fn every_corpus_crd_round_trips_keyword_by_keyword() {
    let tmp = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("import_crd_roundtrip");
    let known = known();
    let mut used = vec![false; known.len()];
    let mut report = String::new();
    let mut failures = vec![];
    let (mut matched_all, mut total_all, mut equal, mut count) = (0, 0, 0, 0);
    for (project, files) in projects() {
        let dir = tmp.join(&project);
        let imported = import_into(&files, &dir, &project);
        let mut originals = BTreeMap::new();
        for f in &files {
            crds_of(
                &std::fs::read_to_string(f).unwrap(),
                &f.display().to_string(),
                &mut originals,
            );
        }
        let generated = Config::from_crate(&dir)
            .unwrap_or_else(|e| panic!("{project}: {e}"))
            .emit_rust(false)
            .generate()
            .unwrap_or_else(|e| panic!("{project}: the imported crate does not generate:\n{e}"));
        let mut ours: BTreeMap<String, Value> = BTreeMap::new();
        for f in &generated.files {
            if f.path.extension().is_some_and(|e| e == "yaml") {
                crds_of(&f.contents, &f.path.display().to_string(), &mut ours);
            }
        }
        let _ = writeln!(
            report,
            "{project}: {} ({} patch markers)",
            imported.summary(),
            imported.stats.patches
        );
        for (name, original) in &originals {
            count += 1;
            let total = leaves(original).len();
            let one_g: BTreeMap<String, Value> = [(name.clone(), original.clone())].into();
            let one_o: BTreeMap<String, Value> = ours
                .get(name)
                .map(|o| (name.clone(), o.clone()))
                .into_iter()
                .collect();
            let diffs = diff(&one_g, &one_o);
            let missing = diffs.iter().filter(|d| d.kind != Kind::Extra).count();
            matched_all += total - missing;
            total_all += total;
            if diffs.is_empty() {
                equal += 1;
            }
            let _ = writeln!(
                report,
                "  {name}: {}/{total} leaves match, {} difference{}",
                total - missing,
                diffs.len(),
                if diffs.len() == 1 { "" } else { "s" }
            );
            for d in &diffs {
                let listed = known
                    .iter()
                    .position(|(k, c, p, _)| *k == d.kind && glob(c, &d.crd) && glob(p, &d.path));
                match listed {
                    Some(i) => used[i] = true,
                    None => failures.push(format!(
                        "{} (original {}, ours {})",
                        d.key(),
                        short(&d.golden),
                        short(&d.ours)
                    )),
                }
            }
        }
    }
    let _ = writeln!(
        report,
        "import round trip: {matched_all}/{total_all} keywords ({:.2}%), {equal} of {count} CRDs equal",
        100.0 * matched_all as f64 / total_all.max(1) as f64
    );
    for (i, (k, c, p, _)) in known.iter().enumerate() {
        if !used[i] {
            let _ = writeln!(
                report,
                "no longer occurs (remove from known-differences.txt): {} {c} {p}",
                k.as_str()
            );
        }
    }
    println!("{report}");
    assert!(
        failures.is_empty(),
        "{} differences not in known-differences.txt:\n{}",
        failures.len(),
        failures
            .iter()
            .take(60)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// One CRD per project by default (a kind with a status, a multi-version kind, an
/// int-or-string, maps of structs, CEL rules); `KUBE_CODEGEN_IMPORT_ALL=1` takes all 73,
/// which compile too (about four minutes more on two cores, so not in every run).
const COMPILED: &[&str] = &[
    "cert-manager/certificates.cert-manager.io.yaml",
    "gateway-api/httproutes.gateway.networking.k8s.io.yaml",
    "cluster-api/machinedeployments.cluster.x-k8s.io.yaml",
    "keda/scaledobjects.keda.sh.yaml",
    "source-controller/gitrepositories.source.toolkit.fluxcd.io.yaml",
    "cloudnative-pg/backups.postgresql.cnpg.io.yaml",
    "crossplane/compositions.apiextensions.crossplane.io.yaml",
];

/// A kind with a top-level field besides `spec` and `status`.
const TOP_LEVEL_FIELD: &str = "tests/fixtures/import_crd/applications.example.io.yaml";

/// Imported types and everything `generate` writes for them (clientset, fake, listers,
/// informers, apply configurations, deep copy) compile together, in one crate, against the
/// real runtime. The dependencies' target directory is shared with kubernetes_versions.rs.
#[test]
fn imported_crates_compile_with_their_generated_clients() {
    let all = std::env::var_os("KUBE_CODEGEN_IMPORT_ALL").is_some();
    let mut files: Vec<PathBuf> = if all {
        projects().into_iter().flat_map(|(_, f)| f).collect()
    } else {
        COMPILED.iter().map(|f| corpus().join(f)).collect()
    };
    // A top-level field besides spec and status (Argo CD's `operation`): `new` all the same.
    files.push(Path::new(TOP_LEVEL_FIELD).canonicalize().unwrap());
    let root = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let krate = root.join("import_crd_compile");
    let imported = import_into(&files, &krate, "imported");
    assert!(imported.stats.kinds >= files.len());
    let written = Config::from_crate(&krate)
        .unwrap()
        .write()
        .unwrap_or_else(|e| panic!("generate on the imported crate: {e}"));
    assert!(written.written.iter().any(|p| p.ends_with("clientset.rs")));
    imported_crate::use_workspace_runtime(&krate, "src/apis");
    let kinds = write_sample_tests(&krate);
    assert!(kinds >= files.len(), "{kinds} sample objects");
    let out = std::process::Command::new(env!("CARGO"))
        .args(["test", "--offline", "--quiet"])
        .current_dir(&krate)
        .env("CARGO_TARGET_DIR", root.join("kubernetes_versions/target"))
        .env_remove("RUSTFLAGS")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "the imported crate does not compile, or a sample object does not come back unchanged:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// An object for schema `node` with every property set: the first enum value, a
/// date-time for `format: date-time`, one item per list, one entry per map.
fn sample(node: &Value) -> Value {
    let empty = serde_json::Map::new();
    let n = node.as_object().unwrap_or(&empty);
    if let Some(e) = n
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|e| e.first())
    {
        return e.clone();
    }
    if n.get("x-kubernetes-int-or-string") == Some(&Value::Bool(true)) {
        return Value::String("1".into());
    }
    match n.get("type").and_then(Value::as_str) {
        Some("string") => match n.get("format").and_then(Value::as_str) {
            Some("date-time") => "2024-01-02T03:04:05Z".into(),
            Some("byte") => "eA==".into(),
            _ => "x".into(),
        },
        Some("integer") => 1.into(),
        Some("number") => 1.5.into(),
        Some("boolean") => true.into(),
        Some("array") => Value::Array(n.get("items").map(sample).into_iter().collect()),
        Some("object") | None => {
            let mut out = serde_json::Map::new();
            for (k, v) in n
                .get("properties")
                .and_then(Value::as_object)
                .into_iter()
                .flatten()
            {
                out.insert(k.clone(), sample(v));
            }
            if let Some(v) = n.get("additionalProperties").filter(|v| v.is_object()) {
                out.insert("key".into(), sample(v));
            }
            if out.is_empty()
                && n.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true))
            {
                out.insert("any".into(), serde_json::json!({"thing": [1, "two"]}));
            }
            Value::Object(out)
        }
        Some(_) => Value::Null,
    }
}

/// One sample object per kind and version of the crate at `krate` (from the CRDs
/// `generate` wrote), and `tests/samples.rs` that reads each into its Rust type and writes
/// it back: the JSON must come back unchanged. A kind with a `spec` has `new(name, spec)`
/// (README promises it for every kind), which sets its `apiVersion` and `kind`. Returns
/// the number of samples.
fn write_sample_tests(krate: &Path) -> usize {
    let mut crds = BTreeMap::new();
    for f in std::fs::read_dir(krate.join("crds")).unwrap() {
        let f = f.unwrap().path();
        crds_of(
            &std::fs::read_to_string(&f).unwrap(),
            &f.display().to_string(),
            &mut crds,
        );
    }
    // The front door every kube-codegen crate has, from the lib.rs the import wrote.
    let mut tests = String::from(
        "#[test]\nfn front_door() {\n    \
         let _: fn(kube::Client) -> imported::Clientset = imported::Clientset::new;\n    \
         let _: fn(kube::Client) -> imported::SharedInformerFactory = imported::SharedInformerFactory::new;\n}\n\n\
         // Each imported kind: a sample object in, the same JSON out.\n",
    );
    let mut count = 0;
    std::fs::create_dir_all(krate.join("tests/samples")).unwrap();
    for g in std::fs::read_dir(krate.join("src/apis")).unwrap() {
        let g = g.unwrap().path();
        if !g.is_dir() {
            continue;
        }
        for v in std::fs::read_dir(&g).unwrap() {
            let v = v.unwrap().path();
            if !v.is_dir() {
                continue;
            }
            let text = std::fs::read_to_string(v.join("mod.rs")).unwrap();
            let group = text
                .lines()
                .find_map(|l| l.strip_prefix("//! +groupName="))
                .unwrap();
            let vm = v.file_name().unwrap().to_string_lossy().into_owned();
            let version = text
                .lines()
                .find_map(|l| l.strip_prefix("//! +versionName="))
                .map_or(vm.clone(), str::to_owned);
            let gm = g.file_name().unwrap().to_string_lossy().into_owned();
            for crd in crds.values().filter(|c| c["spec"]["group"] == group) {
                let kind = crd["spec"]["names"]["kind"].as_str().unwrap();
                let Some(ver) = crd["spec"]["versions"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|x| x["name"] == version.as_str())
                else {
                    continue;
                };
                let mut obj = sample(&ver["schema"]["openAPIV3Schema"]);
                obj["apiVersion"] = format!("{group}/{version}").into();
                obj["kind"] = kind.into();
                obj["metadata"] = serde_json::json!({"name": "sample", "labels": {"a": "b"}});
                let file = format!("{gm}__{vm}__{kind}.json");
                std::fs::write(
                    krate.join("tests/samples").join(&file),
                    serde_json::to_string_pretty(&obj).unwrap(),
                )
                .unwrap();
                let new = if ver["schema"]["openAPIV3Schema"]["properties"]["spec"].is_object() {
                    format!(
                        "    let built = imported::apis::{gm}::{vm}::{kind}::new(\"sample\", Default::default());\n    \
                         assert_eq!((built.types.api_version.as_str(), built.types.kind.as_str()), ({api_version:?}, {kind:?}));\n",
                        api_version = format!("{group}/{version}"),
                    )
                } else {
                    String::new()
                };
                tests += &format!(
                    "\n#[test]\nfn {gm}_{vm}_{lower}() {{\n    \
                     let json: serde_json::Value = serde_json::from_str(include_str!(\"samples/{file}\")).unwrap();\n    \
                     let typed: imported::apis::{gm}::{vm}::{kind} = serde_json::from_value(json.clone()).unwrap();\n    \
                     assert_eq!(serde_json::to_value(&typed).unwrap(), json);\n{new}}}\n",
                    lower = kind.to_lowercase(),
                );
                count += 1;
            }
        }
    }
    std::fs::write(krate.join("tests/samples.rs"), tests).unwrap();
    count
}

/// What the importer writes for two representative CRDs, file by file: cert-manager's
/// Certificate (one version, int-or-string, enums, defaults, CEL) and Gateway API's
/// HTTPRoute (two versions, list-map keys, nested CEL rules, aliases for described items).
#[test]
fn snapshots_of_imported_crates() {
    for (name, file) in [
        (
            "certificate",
            "cert-manager/certificates.cert-manager.io.yaml",
        ),
        (
            "httproute",
            "gateway-api/httproutes.gateway.networking.k8s.io.yaml",
        ),
    ] {
        // Relative to the test's directory (generator/), so warnings name the file the
        // same way on every machine.
        let path = Path::new("../tests/fixtures/crd-corpus").join(file);
        let imported = import_crds(
            &[ImportInput {
                text: std::fs::read_to_string(&path).unwrap(),
                path,
            }],
            &ImportOptions {
                out: PathBuf::from("imported"),
                crate_name: "imported".into(),
                kubernetes: KubernetesVersion::NEWEST,
                existing: BTreeMap::new(),
                has_cargo_toml: false,
                has_lib_rs: false,
                runtime: kube_codegen::RuntimeSource::registry(),
            },
        )
        .unwrap();
        for f in &imported.files {
            let rel = f
                .path
                .strip_prefix("imported")
                .unwrap()
                .display()
                .to_string();
            insta::assert_snapshot!(
                format!("import_{name}__{}", rel.replace('/', "__")),
                &f.contents
            );
        }
        insta::assert_snapshot!(
            format!("import_{name}__summary"),
            format!("{}\n{}", imported.summary(), imported.render_warnings())
        );
    }
}

/// The naming rule (README, "Names of imported types"): identical shapes share one type,
/// whatever the description of the node itself, named after the use that ranks first
/// (under `spec` before `status` before the rest, then the shallowest, then by path), and
/// each type says where it is used. Argo CD's shape, where `operation` comes first in the
/// walk: `spec.source`, `spec.sources[*]` and `operation.sync.sources[*]` are one type,
/// `ApplicationSpecSource` (they were `ApplicationSpecSource` and
/// `ApplicationOperationSyncSources`), and the CRD comes back with each node's
/// description. The snapshot lists every type of Gateway API's HTTPRoute with its paths.
#[test]
fn imported_type_names_follow_the_schema() {
    let root = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("import_crd_names");
    let file = Path::new(TOP_LEVEL_FIELD).canonicalize().unwrap();
    let imported = import_into(std::slice::from_ref(&file), &root, "names");
    let types = imported
        .files
        .iter()
        .find(|f| f.path.ends_with("types.rs"))
        .expect("types.rs");
    for field in [
        "pub source: Option<ApplicationSpecSource>,",
        "pub sources: Option<Vec<ApplicationSpecSource>>,",
    ] {
        assert_eq!(
            types.contents.matches(field).count(),
            if field.contains("Vec") { 2 } else { 1 },
            "{field}:\n{}",
            types.contents
        );
    }
    assert!(
        types.contents.contains(
            "// Used at Application.spec.source, Application.spec.sources[*],\n\
             // Application.operation.sync.sources[*].\n"
        ),
        "{}",
        types.contents
    );
    let generated = Config::from_crate(&root)
        .unwrap()
        .emit_rust(false)
        .generate()
        .unwrap_or_else(|e| panic!("{e}"));
    let mut ours = BTreeMap::new();
    for f in &generated.files {
        if f.path.extension().is_some_and(|e| e == "yaml") {
            crds_of(&f.contents, &f.path.display().to_string(), &mut ours);
        }
    }
    let mut original = BTreeMap::new();
    crds_of(
        &std::fs::read_to_string(&file).unwrap(),
        &file.display().to_string(),
        &mut original,
    );
    assert_eq!(
        diff(&original, &ours),
        vec![],
        "the CRD does not round-trip"
    );

    // Every type of a corpus CRD with the schema paths that use it.
    let dir = root.join("httproute");
    let imported = import_into(
        &[corpus().join("gateway-api/httproutes.gateway.networking.k8s.io.yaml")],
        &dir,
        "httproute",
    );
    let v1 = imported
        .files
        .iter()
        .find(|f| f.path.ends_with("gateway/v1/types.rs"))
        .expect("v1 types");
    let mut listing = String::new();
    let mut used_at = String::new();
    for line in v1.contents.lines() {
        if let Some(rest) = line.strip_prefix("// Used at ") {
            used_at = rest.to_owned();
        } else if let Some(rest) = line.strip_prefix("// ").filter(|_| !used_at.is_empty()) {
            used_at.push(' ');
            used_at.push_str(rest);
        } else if let Some(decl) = ["pub struct ", "pub enum ", "pub type "]
            .iter()
            .find_map(|p| line.strip_prefix(p))
        {
            let name = decl.split([' ', '{', '=']).next().unwrap();
            let paths = std::mem::take(&mut used_at);
            let _ = writeln!(listing, "{name}");
            for p in paths
                .trim_end_matches('.')
                .split(", ")
                .filter(|p| !p.is_empty())
            {
                let _ = writeln!(listing, "    {p}");
            }
        } else if !line.starts_with("///") && !line.starts_with("#[") {
            used_at.clear();
        }
    }
    insta::assert_snapshot!("import_httproute_v1_type_uses", listing);
}

fn kube_codegen(dir: &Path, args: &[&str], stdin: Option<&str>) -> (bool, String) {
    use std::io::Write as _;
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_kube-codegen"))
        .args(args)
        .current_dir(dir)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    if let Some(text) = stdin {
        input.write_all(text.as_bytes()).unwrap();
    }
    drop(input);
    let out = child.wait_with_output().unwrap();
    (out.status.success(), String::from_utf8(out.stderr).unwrap())
}

fn files_below(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.insert(p.clone(), std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

/// An imported crate builds as `import crd` writes it, with no hand edit: this
/// kube-codegen, built from a checkout, names the checkout's runtime by path (and says so),
/// and k8s-openapi gets the feature of the crate's `kubernetes-version` (without one its
/// build script panics). Flags choose otherwise, and amend an existing crate's Cargo.toml.
#[test]
fn an_imported_crate_builds_as_written() {
    let root = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("import_crd_as_written");
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).unwrap();
    let crd = corpus().join("cert-manager/certificates.cert-manager.io.yaml");
    let (ok, err) = kube_codegen(
        &root,
        &["import", "crd", crd.to_str().unwrap(), "--out", "api"],
        None,
    );
    assert!(ok, "{err}");
    let runtime = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .join("runtime");
    assert!(
        err.contains(&format!(
            "the crate takes kube-codegen-runtime from {}: the checkout this kube-codegen was built from",
            runtime.display()
        )),
        "{err}"
    );
    let manifest = std::fs::read_to_string(root.join("api/Cargo.toml")).unwrap();
    assert!(
        manifest.contains(&format!(
            "kube-codegen-runtime = {{ path = {:?} }}",
            runtime.display().to_string()
        )),
        "{manifest}"
    );
    assert!(
        manifest.contains(r#"features = ["std", "v1_37"]"#),
        "{manifest}"
    );
    let (ok, err) = kube_codegen(&root, &["generate", "api"], None);
    assert!(ok, "{err}");
    // Offline, with the versions this repository resolves; the build is shared with
    // kubernetes_versions.rs and the other compile tests.
    std::fs::copy("../Cargo.lock", root.join("api/Cargo.lock")).unwrap();
    let out = std::process::Command::new(env!("CARGO"))
        .args(["build", "--offline", "--quiet"])
        .current_dir(root.join("api"))
        .env(
            "CARGO_TARGET_DIR",
            PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("kubernetes_versions/target"),
        )
        .env_remove("RUSTFLAGS")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "the imported crate does not build as written:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // Asked for a registry release: a re-import into the crate rewrites its entry.
    let (ok, err) = kube_codegen(
        &root,
        &[
            "import",
            "crd",
            crd.to_str().unwrap(),
            "--out",
            "api",
            "--runtime-version",
            "0.1.0",
        ],
        None,
    );
    assert!(ok, "{err}");
    assert!(
        err.contains("the crate takes kube-codegen-runtime 0.1.0 from the registry, as asked"),
        "{err}"
    );
    let manifest = std::fs::read_to_string(root.join("api/Cargo.toml")).unwrap();
    assert!(
        manifest.contains("kube-codegen-runtime = \"0.1.0\"\n"),
        "{manifest}"
    );
    // A path that is not the runtime: refused, nothing written.
    let (ok, err) = kube_codegen(
        &root,
        &[
            "import",
            "crd",
            crd.to_str().unwrap(),
            "--out",
            "other",
            "--runtime-path",
            ".",
        ],
        None,
    );
    assert!(!ok);
    assert!(err.contains("not the kube-codegen-runtime crate"), "{err}");
    assert!(!root.join("other").exists());
}

/// The CLI: import a directory, generate, import again (nothing changes), refuse to
/// overwrite a hand-written file (and write nothing at all then), read stdin, and fail on
/// bad input without creating the crate.
#[test]
fn cli_import_then_generate_then_reimport() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let certs = corpus().join("cert-manager");
    let certs = certs.to_str().unwrap();
    let (ok, err) = kube_codegen(dir, &["import", "crd", certs, "--out", "api"], None);
    assert!(ok, "{err}");
    assert!(
        err.contains("kube-codegen: imported 6 CRDs: 6 versions, 6 kinds, "),
        "{err}"
    );
    assert!(err.contains("next: kube-codegen generate api"), "{err}");
    let (ok, err) = kube_codegen(dir, &["generate", "api"], None);
    assert!(ok, "{err}");
    assert!(
        dir.join("api/crds/cert-manager.io_certificates.yaml")
            .is_file()
    );
    assert!(dir.join("api/src/generated/clientset.rs").is_file());

    // Again: every file is what the import makes already.
    let (ok, err) = kube_codegen(dir, &["import", "crd", certs, "--out", "api"], None);
    assert!(ok, "{err}");
    assert!(err.contains(" 0 written,"), "{err}");

    // A hand-written file in the way: refused, and nothing else written either.
    let types = dir.join("api/src/apis/certmanager/v1/types.rs");
    let hand = std::fs::read_to_string(&types).unwrap().replacen(
        "// @generated by kube-codegen",
        "// edited by hand",
        1,
    );
    std::fs::write(&types, &hand).unwrap();
    std::fs::remove_file(dir.join("api/src/apis/acme/v1/types.rs")).unwrap();
    let before = files_below(&dir.join("api"));
    let (ok, err) = kube_codegen(dir, &["import", "crd", certs, "--out", "api"], None);
    assert!(!ok);
    assert!(
        err.contains("refusing to overwrite api/src/apis/certmanager/v1/types.rs"),
        "{err}"
    );
    assert_eq!(
        files_below(&dir.join("api")),
        before,
        "a refused import wrote something"
    );

    // stdin.
    let text = std::fs::read_to_string(
        corpus().join("gateway-api/referencegrants.gateway.networking.k8s.io.yaml"),
    )
    .unwrap();
    let (ok, err) = kube_codegen(dir, &["import", "crd", "-", "--out", "grants"], Some(&text));
    assert!(ok, "{err}");
    assert!(err.contains("imported 1 CRD: 2 versions, 2 kinds"), "{err}");

    // Bad input: located error, no crate created.
    let v1beta1 = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/errors_import/v1beta1.yaml");
    let (ok, err) = kube_codegen(
        dir,
        &["import", "crd", v1beta1.to_str().unwrap(), "--out", "bad"],
        None,
    );
    assert!(!ok);
    assert!(err.contains("v1beta1.yaml:1:1"), "{err}");
    assert!(
        err.contains("import failed with 1 error; nothing was written"),
        "{err}"
    );
    assert!(!dir.join("bad").exists());
}

/// A CRD as `kubectl get crd NAME -o yaml` prints it (status, server-set metadata, the
/// defaulted `conversion: {strategy: None}`): imported without a warning about any of it.
#[test]
fn a_crd_read_from_a_cluster_imports_quietly() {
    let path = corpus().join("source-controller/gitrepositories.source.toolkit.fluxcd.io.yaml");
    let mut crd: Value = serde_yaml::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    crd["metadata"]["uid"] = "0b3a".into();
    crd["metadata"]["resourceVersion"] = "42".into();
    crd["metadata"]["generation"] = 1.into();
    crd["spec"]["conversion"] = serde_json::json!({"strategy": "None"});
    crd["status"] =
        serde_json::json!({"acceptedNames": {"kind": "GitRepository"}, "storedVersions": ["v1"]});
    let imported = import_crds(
        &[ImportInput {
            path: PathBuf::from("-"),
            text: serde_yaml::to_string(&crd).unwrap(),
        }],
        &ImportOptions {
            out: PathBuf::from("out"),
            crate_name: "out".into(),
            kubernetes: KubernetesVersion::NEWEST,
            existing: BTreeMap::new(),
            has_cargo_toml: false,
            has_lib_rs: false,
            runtime: kube_codegen::RuntimeSource::registry(),
        },
    )
    .unwrap();
    assert!(
        imported.warnings.is_empty(),
        "{}",
        imported.render_warnings()
    );
    assert_eq!(imported.stats.kinds, 1);
}

/// The kopium side by side (FIDELITY.md): with `KOPIUM_CRDS=<file>` (the CRDs kube-derive's
/// `crd()` writes for kopium's types, one JSON document a line, from
/// `bench/kopium-compare.sh`), the share of the originals' keywords they keep, by the same
/// comparison as the round trip. Without the variable it checks nothing.
#[test]
fn kopium_side_by_side() {
    let Some(file) = std::env::var_os("KOPIUM_CRDS") else {
        return;
    };
    let mut theirs = BTreeMap::new();
    for line in std::fs::read_to_string(&file).unwrap().lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        theirs.insert(v["metadata"]["name"].as_str().unwrap().to_owned(), v);
    }
    let mut originals = BTreeMap::new();
    for (_, files) in projects() {
        for f in files {
            crds_of(
                &std::fs::read_to_string(&f).unwrap(),
                &f.display().to_string(),
                &mut originals,
            );
        }
    }
    let (mut matched, mut total, mut equal, mut extra) = (0, 0, 0, 0);
    let mut by_keyword: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for (name, original) in &originals {
        let g = leaves(original);
        total += g.len();
        let one_g: BTreeMap<String, Value> = [(name.clone(), original.clone())].into();
        let one_t: BTreeMap<String, Value> = theirs
            .get(name)
            .map(|o| (name.clone(), o.clone()))
            .into_iter()
            .collect();
        let diffs = diff(&one_g, &one_t);
        let missing: std::collections::BTreeSet<&str> = diffs
            .iter()
            .filter(|d| d.kind != Kind::Extra)
            .map(|d| d.path.as_str())
            .collect();
        extra += diffs.iter().filter(|d| d.kind == Kind::Extra).count();
        matched += g.len() - missing.len();
        if diffs.is_empty() {
            equal += 1;
        }
        for path in g.keys() {
            let kw = [
                "default",
                "x-kubernetes-validations",
                "x-kubernetes-list-map-keys",
                "additionalPrinterColumns",
                "shortNames",
                "categories",
                "description",
            ]
            .into_iter()
            .find(|k| path.ends_with(&format!(".{k}")) || path.contains(&format!(".{k}[")));
            if let Some(k) = kw {
                let e = by_keyword.entry(k).or_default();
                e.1 += 1;
                if !missing.contains(path.as_str()) {
                    e.0 += 1;
                }
            }
        }
    }
    println!(
        "kopium: {matched}/{total} keywords ({:.1}%), {equal} of {} CRDs equal, {extra} keywords added; {} CRDs without output",
        100.0 * matched as f64 / total as f64,
        originals.len(),
        originals
            .keys()
            .filter(|n| !theirs.contains_key(*n))
            .count()
    );
    for (k, (kept, all)) in by_keyword {
        println!("  {k}: {kept} of {all} kept");
    }
}
