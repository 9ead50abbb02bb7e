//! Embedded Kubernetes types get controller-gen's schemas: the CRD of
//! `fixtures/k8s_embedded` (JobTemplateSpec, PodTemplateSpec, a list of JobSpec, a
//! Condition list) is diffed keyword by keyword against controller-gen's CRD for the Go
//! original (`controller-gen.yaml`, made by `hack/gen-k8s-schemas.sh`).
//!
//! Every keyword must match, except the differences listed in [`allowed`], each with its
//! reason. `cargo test -p kube-codegen --test k8s_embedded -- --nocapture` prints the tally.

use std::collections::BTreeMap;

use kube_codegen::Config;
use serde_json::Value;

/// Keywords compared, matched, and where they differ.
#[derive(Default)]
struct Tally {
    total: usize,
    matched: usize,
    /// The same, `description` left out.
    total_nodoc: usize,
    matched_nodoc: usize,
    /// `path/keyword` with controller-gen's value and ours (None: missing).
    differ: Vec<(String, Value, Option<Value>)>,
    /// Keywords or properties we have and controller-gen does not.
    extra: Vec<String>,
}

impl Tally {
    fn summary(&self) -> String {
        let pct = |a: usize, b: usize| 100.0 * a as f64 / b.max(1) as f64;
        format!(
            "{}/{} keywords match ({:.2}%); without descriptions {}/{} ({:.2}%); {} extra",
            self.matched,
            self.total,
            pct(self.matched, self.total),
            self.matched_nodoc,
            self.total_nodoc,
            pct(self.matched_nodoc, self.total_nodoc),
            self.extra.len()
        )
    }
}

/// Walk controller-gen's schema `cg` and ours in parallel. Every keyword of controller-gen's
/// counts once; `properties`, `items` and `additionalProperties` are walked into instead.
fn diff(path: &str, cg: &Value, ours: Option<&Value>, t: &mut Tally) {
    let Value::Object(cg) = cg else { return };
    let ours = ours.and_then(Value::as_object);
    for (k, v) in cg {
        let theirs = ours.and_then(|o| o.get(k));
        match (k.as_str(), v) {
            ("properties", Value::Object(props)) => {
                for (name, sub) in props {
                    let o = theirs.and_then(|p| p.get(name));
                    diff(&format!("{path}/properties/{name}"), sub, o, t);
                }
                if let Some(Value::Object(o)) = theirs {
                    t.extra.extend(
                        o.keys()
                            .filter(|n| !props.contains_key(*n))
                            .map(|n| format!("{path}/properties/{n}")),
                    );
                }
            }
            ("items" | "additionalProperties", Value::Object(_)) => {
                diff(&format!("{path}/{k}"), v, theirs, t)
            }
            _ => {
                let doc = k == "description";
                t.total += 1;
                t.total_nodoc += usize::from(!doc);
                if theirs == Some(v) {
                    t.matched += 1;
                    t.matched_nodoc += usize::from(!doc);
                } else {
                    t.differ
                        .push((format!("{path}/{k}"), v.clone(), theirs.cloned()));
                }
            }
        }
    }
    if let Some(o) = ours {
        t.extra.extend(
            o.keys()
                .filter(|k| !cg.contains_key(*k))
                .map(|k| format!("{path}/{k}")),
        );
    }
}

fn schema_of(crd: &Value) -> &Value {
    crd.pointer("/spec/versions/0/schema/openAPIV3Schema")
        .expect("a CRD with a schema")
}

fn ours() -> Value {
    ours_with(Config::new())
}

fn ours_with(config: Config) -> Value {
    let generated = config
        .crate_dir("tests/fixtures/k8s_embedded")
        .generate()
        .unwrap_or_else(|e| panic!("the fixture must generate:\n{e}"));
    let file = generated
        .files
        .iter()
        .find(|f| f.path.ends_with("embed.example.com_embeds.yaml"))
        .expect("the CRD");
    serde_yaml::from_str(&file.contents).expect("YAML")
}

fn controller_gen() -> Value {
    let text = std::fs::read_to_string("tests/fixtures/k8s_embedded/controller-gen.yaml")
        .expect("the golden; hack/gen-k8s-schemas.sh writes it");
    serde_yaml::from_str(&text).expect("YAML")
}

/// Whether a difference is one we make on purpose, and why.
fn allowed(path: &str, cg: &Value, ours: Option<&Value>) -> Option<&'static str> {
    // The items of `jobs` (a list that is not listType=map) cannot be correlated between two
    // revisions of an object, and the API server refuses a CRD with a transition rule
    // (`oldSelf`) there. controller-gen keeps the +k8s:immutable rules of JobSpec's fields
    // (`self == oldSelf`); we drop those rules there, and only those.
    if path.starts_with("/properties/spec/properties/jobs/items/")
        && path.ends_with("/x-kubernetes-validations")
    {
        let Value::Array(rules) = cg else { return None };
        let kept: Vec<&Value> = rules
            .iter()
            .filter(|r| {
                !r["rule"]
                    .as_str()
                    .is_some_and(kube_codegen::__private::k8s_schemas::uses_old_self)
            })
            .collect();
        let ok = match ours {
            None => kept.is_empty(),
            Some(Value::Array(o)) => !kept.is_empty() && o.iter().eq(kept.iter().copied()),
            Some(_) => false,
        };
        return ok.then_some("transition rule on an uncorrelatable part of the schema");
    }
    None
}

#[test]
fn embedded_types_match_controller_gen() {
    let cg = controller_gen();
    let ours = ours();
    let (cg, ours) = (schema_of(&cg), schema_of(&ours));

    let mut report = String::new();
    let mut differ = vec![];
    let mut extra = vec![];
    let regions = [
        ("JobTemplateSpec", "/properties/spec/properties/jobTemplate"),
        ("PodTemplateSpec", "/properties/spec/properties/podTemplate"),
        ("[]JobSpec", "/properties/spec/properties/jobs"),
        ("WorkloadSpec", "/properties/spec/properties/workload"),
        ("[]Condition", "/properties/status/properties/conditions"),
    ];
    for (name, ptr) in regions {
        let c = cg.pointer(ptr).expect("controller-gen has the field");
        let mut t = Tally::default();
        diff(ptr, c, ours.pointer(ptr), &mut t);
        report += &format!("{name}: {}\n", t.summary());
        differ.extend(t.differ);
        extra.extend(t.extra);
    }
    // The whole schema, for information: the kind's own level (apiVersion, kind, metadata)
    // is not an embedded type's and not this test's business.
    let mut all = Tally::default();
    diff("", cg, Some(ours), &mut all);
    report += &format!("whole schema: {}\n", all.summary());
    let mut reasons: BTreeMap<&str, usize> = BTreeMap::new();
    let mut unexplained = vec![];
    for (path, c, o) in &differ {
        match allowed(path, c, o.as_ref()) {
            Some(why) => *reasons.entry(why).or_default() += 1,
            None => unexplained.push(format!(
                "{path}: controller-gen {c}, ours {}",
                o.as_ref().map_or("missing".into(), Value::to_string)
            )),
        }
    }
    for (why, n) in &reasons {
        report += &format!("  allowed: {n} x {why}\n");
    }
    eprint!("{report}");
    let shown: Vec<&String> = unexplained.iter().take(40).collect();
    assert!(
        unexplained.is_empty(),
        "{} keywords differ from controller-gen without a listed reason (first 40):\n{}",
        unexplained.len(),
        shown
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
    // controller-gen cuts a recursive type (WorkloadSpec's CompositePodGroupTemplate lists
    // itself) with `{}`, which is not structural and which the API server refuses; we fill
    // the hole with an object keeping unknown fields, with the list's map keys.
    let (holes, extra): (Vec<String>, Vec<String>) = extra.into_iter().partition(|p| {
        let parent = &p[..p.rfind('/').unwrap_or(0)];
        cg.pointer(parent) == Some(&serde_json::json!({}))
    });
    eprintln!(
        "  allowed: {} keywords filling controller-gen's recursion holes",
        holes.len()
    );
    assert!(
        !holes.is_empty(),
        "the workload's recursion hole must show here"
    );
    assert!(
        extra.is_empty(),
        "keywords controller-gen does not have: {:?}",
        &extra[..extra.len().min(40)]
    );
    assert!(
        reasons.values().sum::<usize>() > 0,
        "the jobs list carries JobSpec's transition rules; dropping them must show here"
    );
}

/// `--max-description-len` applies to the embedded types' descriptions too: a CRD with a
/// pod template is mostly Kubernetes' descriptions, and this is how people keep it small.
#[test]
fn max_description_len_cuts_embedded_descriptions() {
    fn longest(v: &Value) -> usize {
        match v {
            Value::Object(m) => m
                .iter()
                .map(|(k, v)| match (k.as_str(), v) {
                    ("description", Value::String(d)) => d.chars().count(),
                    _ => longest(v),
                })
                .max()
                .unwrap_or(0),
            Value::Array(a) => a.iter().map(longest).max().unwrap_or(0),
            _ => 0,
        }
    }
    fn descriptions<'v>(v: &'v Value, out: &mut Vec<&'v str>) {
        match v {
            Value::Object(m) => {
                for (k, v) in m {
                    match (k.as_str(), v) {
                        ("description", Value::String(d)) => out.push(d),
                        _ => descriptions(v, out),
                    }
                }
            }
            Value::Array(a) => a.iter().for_each(|v| descriptions(v, out)),
            _ => {}
        }
    }
    let full = ours();
    let cut = ours_with(Config::new().max_description_len(40));
    let at = "/properties/spec/properties/jobTemplate";
    assert!(longest(schema_of(&full).pointer(at).unwrap()) > 40);
    // controller-gen's cut: at most 40 bytes, back to a sentence end, else `...` after the
    // last word that fits (so up to 43 bytes), and some were cut that way.
    let mut cut_ones = vec![];
    descriptions(schema_of(&cut).pointer(at).unwrap(), &mut cut_ones);
    for d in &cut_ones {
        assert!(
            d.len() <= 40 || (d.ends_with("...") && d.len() <= 43),
            "not cut as controller-gen cuts: {d:?}"
        );
    }
    assert!(cut_ones.iter().any(|d| d.ends_with("...")), "{cut_ones:?}");
}
