//! Differential test of defaulting and validation (kube-codegen-runtime's `validation`, the
//! code every generated `Validate` impl runs) against the real API server: objects
//! generated from each CRD's schema (valid ones, and ones a keyword or rule away from
//! valid) plus hand-picked edge cases go to a server dry-run create and to
//! `default_value` + `validate_value`. Verdicts, the field paths and classes of every
//! violation, and the defaulted objects must agree.
//!
//! CRDs: the sample API, the generator's fixtures, the fidelity fixtures' golden CRDs
//! (controller-gen's) and the CRDs of tests/fixtures/crd-corpus. A CRD whose rules the
//! evaluator cannot run (a function it lacks) is left out, by name in the output.
//! One envtest control plane, requests batched. `VALIDATION_DIFF_OBJECTS` sets objects
//! per CRD version (default 12); `VALIDATION_DIFF_REPORT=1` prints every disagreement.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use futures::StreamExt;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube_codegen_envtest::Environment;
use kube_codegen_runtime::validation::{ErrorType, Schema, validate_scale};
use kube_codegen_tests::*;
use serde_json::{Value, json};

const STRINGS: &[&str] = &[
    "",
    "a",
    "abc",
    "echo hello",
    "my-name",
    "My_Name",
    "x.y.z",
    "1.2.3",
    "v1.2.3",
    "10.0.0.1",
    "::1",
    "192.168.0.0/16",
    "https://example.com/path?q=1",
    "http://",
    "1Gi",
    "500m",
    "-1",
    "550e8400-e29b-41d4-a716-446655440000",
    "2020-01-01T00:00:00Z",
    "2020-13-01",
    "aGVsbG8=",
    "not base64!",
    "TCP",
    "UDP",
    "Always",
    "None",
    "foo@example.com",
    "*",
    "a/b",
    "ns/name",
    "True",
    "False",
    "Unknown",
    "30s",
    "5m",
    "gold",
];

/// The seed of a CRD version's objects: FNV-1a of its name (never 0, which xorshift
/// keeps).
fn seed(crd: &str, version: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in crd.bytes().chain([b'/']).chain(version.bytes()) {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h.max(1)
}

/// A value for `s`: usually one the schema admits, sometimes one a keyword away.
fn gen_value(rng: &mut Rng, s: &Value, depth: usize) -> Value {
    if let Some(e) = s
        .get("enum")
        .and_then(Value::as_array)
        .filter(|e| !e.is_empty())
        && rng.chance(90)
    {
        return rng.pick(e).clone();
    }
    if let Some(d) = s.get("default")
        && rng.chance(15)
    {
        return d.clone();
    }
    if s.get("nullable") == Some(&Value::Bool(true)) && rng.chance(5) {
        return Value::Null;
    }
    if s.get("x-kubernetes-int-or-string") == Some(&Value::Bool(true)) {
        return if rng.chance(50) {
            json!(rng.pick(&[0, 1, 80, 8080, 65536, -1]))
        } else {
            json!(rng.pick(&["80", "http", "50%", "1Gi", "abc", ""]))
        };
    }
    let t = s.get("type").and_then(Value::as_str).unwrap_or("");
    match t {
        "object" => gen_object(rng, s, depth),
        "array" => gen_array(rng, s, depth),
        "string" => gen_string(rng, s),
        "integer" => {
            let mut c: Vec<i64> = vec![0, 1, 2, 3, 5, 10, 100, -1, 65535];
            for k in ["minimum", "maximum"] {
                if let Some(b) = s.get(k).and_then(Value::as_f64) {
                    let b = b as i64;
                    c.extend([b - 1, b, b + 1, b, b]);
                }
            }
            json!(*rng.pick(&c))
        }
        "number" => {
            let mut c: Vec<f64> = vec![0.0, 0.5, 1.0, 1.5, -0.25, 100.0];
            for k in ["minimum", "maximum"] {
                if let Some(b) = s.get(k).and_then(Value::as_f64) {
                    c.extend([b - 0.5, b, b + 0.5, b]);
                }
            }
            json!(*rng.pick(&c))
        }
        "boolean" => json!(rng.chance(50)),
        _ if s.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true)) => {
            if rng.chance(50) {
                json!({})
            } else {
                json!({"k": "v", "n": 1})
            }
        }
        _ => json!({}),
    }
}

fn gen_string(rng: &mut Rng, s: &Value) -> Value {
    let mut c: Vec<String> = STRINGS.iter().map(|s| s.to_string()).collect();
    for (k, delta) in [("minLength", [-1i64, 0]), ("maxLength", [0, 1])] {
        if let Some(n) = s.get(k).and_then(Value::as_i64) {
            for d in delta {
                let len = (n + d).clamp(0, 300) as usize;
                c.push("a".repeat(len));
                c.push("a".repeat(len));
            }
        }
    }
    if let Some(e) = s.get("enum").and_then(Value::as_array) {
        c.extend(e.iter().filter_map(|v| v.as_str().map(str::to_owned)));
    }
    match s.get("format").and_then(Value::as_str) {
        Some("date-time") => {
            c.extend(["2021-06-01T12:00:00Z".into(), "2021-06-01T12:00:00Z".into()])
        }
        Some("uuid") => c.push("550e8400-e29b-41d4-a716-446655440000".into()),
        Some("byte") => c.push("aGVsbG8=".into()),
        _ => {}
    }
    json!(rng.pick(&c))
}

fn gen_object(rng: &mut Rng, s: &Value, depth: usize) -> Value {
    let mut out = serde_json::Map::new();
    if s.get("x-kubernetes-embedded-resource") == Some(&Value::Bool(true)) {
        out.insert("apiVersion".into(), json!("v1"));
        out.insert("kind".into(), json!("ConfigMap"));
        // The server checks and rewrites embedded metadata (`objectmeta`).
        if rng.chance(50) {
            let meta = rng
                .pick(&[
                    json!({"name": "a"}),
                    json!({"name": "a/b"}),
                    json!({"generateName": "x-", "labels": {"app": "a"}}),
                    json!({"labels": {"bad key!": "v"}}),
                    json!({"namespace": "Bad", "unknown": 1}),
                    json!({"annotations": {}, "finalizers": []}),
                ])
                .clone();
            out.insert("metadata".into(), meta);
        }
    }
    let required: Vec<&str> = s
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if let Some(props) = s.get("properties").and_then(Value::as_object) {
        for (k, p) in props {
            if k == "metadata" || k == "apiVersion" || k == "kind" {
                continue;
            }
            let want = if required.contains(&k.as_str()) {
                rng.chance(96)
            } else if depth > 4 {
                false
            } else {
                rng.chance(45)
            };
            if want {
                out.insert(k.clone(), gen_value(rng, p, depth + 1));
            }
        }
    }
    if let Some(a) = s.get("additionalProperties").filter(|a| a.is_object()) {
        for _ in 0..rng.below(if depth > 4 { 1 } else { 3 }) {
            let key = rng
                .pick(&["a", "b", "key-1", "x.y", "app.kubernetes.io/name"])
                .to_string();
            out.insert(key, gen_value(rng, a, depth + 1));
        }
    }
    Value::Object(out)
}

fn gen_array(rng: &mut Rng, s: &Value, depth: usize) -> Value {
    let Some(items) = s.get("items") else {
        return json!([]);
    };
    let mut lens = vec![0usize, 1, 1, 2, 3];
    if let Some(n) = s.get("maxItems").and_then(Value::as_u64) {
        lens.extend([n as usize, n as usize + 1]);
    }
    if let Some(n) = s.get("minItems").and_then(Value::as_u64) {
        lens.extend([n as usize, (n as usize).saturating_sub(1)]);
    }
    let len = (*rng.pick(&lens)).min(if depth > 4 { 1 } else { 12 });
    let mut out: Vec<Value> = (0..len).map(|_| gen_value(rng, items, depth + 1)).collect();
    // Duplicates now and then: sets and map keys must be unique.
    if out.len() >= 2 && rng.chance(20) {
        out[1] = out[0].clone();
    }
    Value::Array(out)
}

/// Hand-picked edge cases the other CRDs do not reach, in a CRD of their own: the time
/// zones of the timestamp getters (`checks`: each item's getters in its `zone` must equal
/// its fields), runs of unary operators (`truthy`, `negated`), transition rules under
/// atomic and granular maps (`atomicCounts`, `granularCounts`), and embedded resources (`template`, `typed`, `objects`, `byName`), whose
/// apiVersion, kind and metadata the server checks.
const EDGE_CRD: &str = r#"
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: edgecases.edge.kube-codegen.dev
spec:
  group: edge.kube-codegen.dev
  names: {kind: EdgeCase, plural: edgecases, singular: edgecase, listKind: EdgeCaseList}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              checks:
                type: array
                maxItems: 40
                items:
                  type: object
                  required: [at, zone]
                  properties:
                    at: {type: string, format: date-time}
                    zone: {type: string, maxLength: 64}
                    fullYear: {type: integer}
                    month: {type: integer}
                    dayOfYear: {type: integer}
                    dayOfMonth: {type: integer}
                    date: {type: integer}
                    dayOfWeek: {type: integer}
                    hours: {type: integer}
                    minutes: {type: integer}
                    seconds: {type: integer}
                    milliseconds: {type: integer}
                  x-kubernetes-validations:
                  - {rule: "!has(self.fullYear) || self.at.getFullYear(self.zone) == self.fullYear", message: fullYear}
                  - {rule: "!has(self.month) || self.at.getMonth(self.zone) == self.month", message: month}
                  - {rule: "!has(self.dayOfYear) || self.at.getDayOfYear(self.zone) == self.dayOfYear", message: dayOfYear}
                  - {rule: "!has(self.dayOfMonth) || self.at.getDayOfMonth(self.zone) == self.dayOfMonth", message: dayOfMonth}
                  - {rule: "!has(self.date) || self.at.getDate(self.zone) == self.date", message: date}
                  - {rule: "!has(self.dayOfWeek) || self.at.getDayOfWeek(self.zone) == self.dayOfWeek", message: dayOfWeek}
                  - {rule: "!has(self.hours) || self.at.getHours(self.zone) == self.hours", message: hours}
                  - {rule: "!has(self.minutes) || self.at.getMinutes(self.zone) == self.minutes", message: minutes}
                  - {rule: "!has(self.seconds) || self.at.getSeconds(self.zone) == self.seconds", message: seconds}
                  - {rule: "!has(self.milliseconds) || self.at.getMilliseconds(self.zone) == self.milliseconds", message: milliseconds}
              template:
                type: object
                x-kubernetes-embedded-resource: true
                x-kubernetes-preserve-unknown-fields: true
                x-kubernetes-validations:
                - {rule: "self.kind != 'Secret'", message: no secrets}
              typed:
                type: object
                x-kubernetes-embedded-resource: true
                properties:
                  apiVersion: {type: string}
                  kind: {type: string}
                  metadata:
                    type: object
                    properties:
                      name: {type: string, maxLength: 10}
                  data: {type: object, additionalProperties: {type: string}}
              objects:
                type: array
                maxItems: 10
                items:
                  type: object
                  x-kubernetes-embedded-resource: true
                  x-kubernetes-preserve-unknown-fields: true
              byName:
                type: object
                additionalProperties:
                  type: object
                  x-kubernetes-embedded-resource: true
                  x-kubernetes-preserve-unknown-fields: true
              truthy:
                type: boolean
                x-kubernetes-validations:
                - {rule: "!!self", message: must be true}
                - {rule: "!!!self == !self", message: parity}
              negated:
                type: integer
                x-kubernetes-validations:
                - {rule: "--self == self && 1 - --self == 1 - self", message: double negation}
                - {rule: "- - -self < 0 || self <= 0", message: positive}
              atomicCounts:
                type: object
                x-kubernetes-map-type: atomic
                additionalProperties:
                  type: integer
                  x-kubernetes-validations:
                  - {rule: "self >= oldSelf", message: no decrease}
              granularCounts:
                type: object
                additionalProperties:
                  type: integer
                  x-kubernetes-validations:
                  - {rule: "self >= oldSelf", message: no decrease}
              wait:
                type: string
                format: duration
                x-kubernetes-validations:
                - {rule: "self == duration('2000000003ns')", message: 2000000003ns}
              names:
                type: object
                properties:
                  want: {type: string, maxLength: 16}
                  "1st": {type: string, maxLength: 4}
                  "1a-b": {type: string, maxLength: 4}
                  "a-b": {type: string, maxLength: 4}
                  "a.b": {type: string, maxLength: 4}
                  "a b": {type: string, maxLength: 4}
                  namespace: {type: string, maxLength: 4}
                x-kubernetes-validations:
                - {rule: "!has(self.want) || dyn(self).exists(k, k == self.want)", message: want names a key}
"#;

/// Hand-picked updates of `EDGE_CRD` (old, new spec): transition rules under maps, whose
/// values correlate with their old values by key for atomic maps as for granular ones
/// (apiextensions-apiserver's `MapIsCorrelatable`), so `oldSelf` is bound in both.
fn edge_updates() -> Vec<(Value, Value)> {
    let mut pairs = vec![];
    for field in ["atomicCounts", "granularCounts"] {
        for (old, new) in [
            (json!({"a": 5}), json!({"a": 3})),
            (json!({"a": 5}), json!({"a": 7})),
            (json!({"a": 5}), json!({"b": 1})),
            (json!({"a": 5, "b": 2}), json!({"a": 5, "b": 1})),
        ] {
            pairs.push((json!({ field: old }), json!({ field: new })));
        }
    }
    pairs
}

const EDGE_CRD_NAME: &str = "edgecases.edge.kube-codegen.dev";

/// The getters of `EDGE_CRD`'s checks.
const GETTERS: &[&str] = &[
    "fullYear",
    "month",
    "dayOfYear",
    "dayOfMonth",
    "date",
    "dayOfWeek",
    "hours",
    "minutes",
    "seconds",
    "milliseconds",
];

/// The hand-picked bodies of `EDGE_CRD`: zones (IANA names, summer time, odd offsets, Go's
/// `strconv.Atoi` forms and what it refuses) over instants (around summer time switches, a
/// leap day, before 1970). Each check's fields are what our evaluator computes, so the
/// server accepts it exactly when it computes the same; a copy one hour off must be refused.
fn edge_bodies() -> Vec<Value> {
    let zones = [
        "UTC",
        "",
        "Local",
        "Europe/Paris",
        "America/New_York",
        "America/St_Johns",
        "Asia/Kathmandu",
        "Asia/Kolkata",
        "Australia/Lord_Howe",
        "Pacific/Kiritimati",
        "Pacific/Chatham",
        "Etc/GMT+5",
        "US/Pacific",
        "EST",
        "+05:30",
        "-07:00",
        "05:45",
        "-00:30",
        "+14:00",
        "+99:00",
        "+5:30",
        "-0:59",
        "Mars/Olympus",
        "europe/paris",
        "../UTC",
        "+05:60",
        ":30",
        "01:02:03",
        "+05:-1",
        "5h:30",
    ];
    let instants = [
        "2021-03-28T00:59:59.999Z",
        "2021-03-28T01:00:00Z",
        "2021-10-31T00:30:00Z",
        "2021-11-07T06:30:00Z",
        "2020-02-29T23:30:00-01:00",
        "2020-12-31T23:59:59.5Z",
        "1969-12-31T23:59:59Z",
        "2038-01-19T03:14:08Z",
    ];
    let getters: Vec<(String, kube_codegen_runtime::cel::Program)> = GETTERS
        .iter()
        .map(|g| {
            let method = format!("get{}{}", g[..1].to_uppercase(), &g[1..]);
            let src = format!("timestamp(self.at).{method}(self.zone)");
            (
                g.to_string(),
                kube_codegen_runtime::cel::compile(&src).expect("getter compiles"),
            )
        })
        .collect();
    let mut bodies = vec![];
    for chunk in zones.chunks(5) {
        let mut checks = vec![];
        let mut off = vec![];
        for zone in chunk {
            for at in instants {
                let this = kube_codegen_runtime::cel::json_to_cel(&json!({"at": at, "zone": zone}));
                let mut check = json!({"at": at, "zone": zone});
                for (name, p) in &getters {
                    // A zone the evaluator refuses: any value, the rule fails to evaluate.
                    let n = match p.evaluate(&this, None, false) {
                        Ok(kube_codegen_runtime::cel::Value::Int(n)) => n,
                        _ => 0,
                    };
                    check[name] = json!(n);
                }
                if off.len() < 6 {
                    let mut wrong = check.clone();
                    wrong["hours"] = json!(check["hours"].as_i64().unwrap_or(0) + 1);
                    off.push(wrong);
                }
                checks.push(check);
            }
        }
        bodies.push(json!({"spec": {"checks": checks}}));
        bodies.push(json!({"spec": {"checks": off}}));
    }
    bodies.extend(embedded_bodies());
    bodies
}

/// Embedded resources: metadata the server rewrites through `metav1.ObjectMeta` (the
/// stored object is compared), every check of `ValidateObjectMeta`, apiVersion and kind
/// missing, empty or malformed, and values the server cannot decode (a 400).
fn embedded_bodies() -> Vec<Value> {
    let cm = |meta: Value| json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta});
    let mut bodies = vec![
        json!({"template": cm(json!({
            "name": "ok", "unknown": 1, "labels": {}, "annotations": null, "generation": 0,
            "creationTimestamp": "2021-06-01T12:00:00.123+02:00", "deletionGracePeriodSeconds": 0,
            "resourceVersion": "", "finalizers": [], "uid": null,
            "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "c", "uid": "u", "extra": 1, "controller": null}],
            "managedFields": [{"manager": "m", "operation": "Update", "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {}}, "time": "2021-06-01T12:00:00Z", "x": 1}],
        }))}),
        json!({"template": cm(json!({"creationTimestamp": null, "labels": {"a": "b"}, "annotations": {"k": ""}}))}),
        json!({"template": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": null, "data": {"a": "b"}}}),
        json!({"template": cm(json!({}))}),
        json!({"template": {"data": {"a": "b"}}}),
        json!({"template": {"apiVersion": "", "kind": ""}}),
        json!({"template": {"apiVersion": "a/b/c", "kind": "Not_A_Kind"}}),
        json!({"template": {"apiVersion": "/", "kind": "ConfigMap2"}}),
        json!({"template": {"apiVersion": "v1", "kind": "Secret"}}),
        json!({"template": {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "a/b"}}}),
        json!({"template": cm(json!({
            "name": "..", "generateName": "a/b%", "namespace": "Bad_NS", "generation": -1,
            "labels": {"bad key!": "v", "ok": "bad value!", "example.com/x": "y"},
            "annotations": {"Bad/Key/x": "v", "Example.com/Fine": "z"},
            "finalizers": ["orphan", "foregroundDeletion", "bad finalizer", "example.com/ok"],
            "ownerReferences": [{}, {"apiVersion": "v1", "kind": "Event", "name": "e", "uid": "u", "controller": true},
                                {"apiVersion": "a/b/c", "kind": "K", "name": "n", "uid": "u", "controller": true},
                                {"apiVersion": "apps/", "kind": "K", "name": "n", "uid": "u"}],
            "managedFields": [{"operation": "Bogus", "fieldsType": "FieldsV2", "manager": "a\tb"}, {}],
        }))}),
        json!({"template": cm(json!({"name": ".", "namespace": "ok-ns"}))}),
        json!({"template": cm(json!({"annotations": {"big": "x".repeat(262_142)}}))}),
        json!({"typed": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "much-too-long-a-name", "labels": {"x": "y"}}, "data": {"a": "b"}}}),
        json!({"typed": {"metadata": {"name": "short"}}}),
        json!({"objects": [cm(json!({"name": "a"})), {"apiVersion": "v1"}, cm(json!({"name": "a/b"})), {"kind": "K", "apiVersion": "g/v/x"}]}),
        json!({"byName": {"x": {"kind": "K"}, "y": cm(json!({"namespace": "-bad", "unknown": {}}))}}),
        // Refused while decoding: one error, in a 400.
        json!({"template": {"apiVersion": 1, "kind": "ConfigMap"}}),
        json!({"template": {"apiVersion": "v1", "kind": ["ConfigMap"]}}),
        json!({"template": cm(json!("not an object"))}),
        json!({"template": cm(json!({"name": 5}))}),
        json!({"template": cm(json!({"generation": 1.5}))}),
        json!({"template": cm(json!({"labels": {"a": 1}}))}),
        json!({"template": cm(json!({"creationTimestamp": "yesterday"}))}),
        json!({"template": cm(json!({"ownerReferences": [{"controller": "yes"}]}))}),
        json!({"objects": [cm(json!({"finalizers": [1]}))]}),
        json!({"byName": {"k": cm(json!({"annotations": "a=b"}))}}),
        // Runs of one unary operator count by parity (`!!x` is `x`), as cel-go parses them.
        json!({"truthy": true, "negated": 3}),
        json!({"truthy": false, "negated": -3}),
        // Durations to the nanosecond, as Go adds them (a float product would make
        // `2.000000003s` 2000000002ns), Go's `-0` among them.
        json!({"wait": "2.000000003s"}),
        json!({"wait": "2000000.003us"}),
        json!({"wait": "2s3ns"}),
        json!({"wait": "2.5s"}),
        json!({"wait": "-0"}),
    ];
    // The keys `dyn(self)` sees of an object: the escaped name (`apiservercel.Escape`), or
    // the name as written where CEL cannot name it (led by a digit, a space).
    for (want, key) in [
        ("1st", "1st"),
        ("1a-b", "1a-b"),
        ("1a__dash__b", "1a-b"),
        ("a b", "a b"),
        ("a__dash__b", "a-b"),
        ("a-b", "a-b"),
        ("a__dot__b", "a.b"),
        ("__namespace__", "namespace"),
        ("namespace", "namespace"),
    ] {
        bodies.push(json!({"names": {"want": want, key: "x"}}));
    }
    for b in &mut bodies {
        *b = json!({"spec": b.take()});
    }
    bodies
}

/// A CRD version under test.
struct Target {
    crd: String,
    group: String,
    version: String,
    kind: String,
    plural: String,
    namespaced: bool,
    /// The server drops `status` on create when the status subresource is on.
    status_subresource: bool,
    /// The scale subresource's `specReplicasPath`, checked on create.
    scale_spec_path: Option<String>,
    /// Objects of other versions are stored (and pruned) in this one's schema.
    storage: bool,
    schema_json: Value,
    schema: Schema,
}

fn yaml_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries {
        let p = e.expect("dir entry").path();
        if p.is_dir() {
            yaml_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "yaml") {
            out.push(p);
        }
    }
}

/// Every CRD under test, conversion webhooks removed (versions convert by apiVersion).
fn crds() -> Vec<CustomResourceDefinition> {
    let root = repo_root();
    let mut yamls: Vec<String> = vec![];
    let crates = [root.join("sample-api"), root.join("tests/shapes")];
    for dir in crates {
        let generated = kube_codegen::Config::from_crate(&dir)
            .and_then(|c| c.generate())
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        for f in generated.files {
            if f.path.extension().is_some_and(|e| e == "yaml")
                && f.contents.contains("CustomResourceDefinition")
            {
                yamls.push(f.contents);
            }
        }
    }
    yamls.push(EDGE_CRD.to_owned());
    // The generator's fixtures, as their CRD snapshots hold them (after insta's header).
    let snaps = root.join("generator/tests/snapshots");
    let mut snap_files: Vec<PathBuf> = std::fs::read_dir(&snaps)
        .expect("snapshots")
        .map(|e| e.expect("entry").path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("crd_snapshots__") && n.ends_with(".yaml.snap"))
        })
        .collect();
    snap_files.sort();
    for f in snap_files {
        let text = std::fs::read_to_string(&f).expect("read snapshot");
        if let Some((_, body)) = text.split_once("\n---\n") {
            yamls.push(body.to_owned());
        }
    }
    let mut files = vec![];
    for fixture in
        std::fs::read_dir(root.join("tests/fixtures/fidelity")).expect("fidelity fixtures")
    {
        yaml_files(&fixture.expect("entry").path().join("golden"), &mut files);
    }
    yaml_files(&root.join("tests/fixtures/crd-corpus"), &mut files);
    files.sort();
    for f in files {
        let text = std::fs::read_to_string(&f).expect("read CRD");
        if text.contains("kind: CustomResourceDefinition") {
            yamls.push(text);
        }
    }
    // The same kind comes from several sources with different schemas (sample-api's Foo,
    // the foo fixture's, the fidelity port's): each gets a group of its own.
    let mut by_name: BTreeMap<String, CustomResourceDefinition> = BTreeMap::new();
    for y in yamls {
        for doc in serde_yaml::Deserializer::from_str(&y) {
            let Ok(v) = serde_yaml::Value::deserialize(doc) else {
                continue;
            };
            let Ok(mut crd) = serde_yaml::from_value::<CustomResourceDefinition>(v) else {
                continue;
            };
            crd.spec.conversion = None;
            let mut n = 0;
            let group = crd.spec.group.clone();
            while by_name.contains_key(&format!("{}.{}", crd.spec.names.plural, crd.spec.group)) {
                n += 1;
                crd.spec.group = format!("d{n}.{group}");
            }
            let name = format!("{}.{}", crd.spec.names.plural, crd.spec.group);
            crd.metadata.name = Some(name.clone());
            let protected = ["k8s.io", "kubernetes.io"]
                .iter()
                .any(|p| crd.spec.group == *p || crd.spec.group.ends_with(&format!(".{p}")));
            if protected {
                crd.metadata
                    .annotations
                    .get_or_insert_default()
                    .entry("api-approved.kubernetes.io".into())
                    .or_insert_with(|| "unapproved, test-only".into());
            }
            by_name.insert(name, crd);
        }
    }
    by_name.into_values().collect()
}

use serde::Deserialize;

fn targets(crds: &[CustomResourceDefinition], skipped: &mut Vec<String>) -> Vec<Target> {
    let mut out = vec![];
    for crd in crds {
        let name = crd.metadata.name.clone().unwrap_or_default();
        for v in &crd.spec.versions {
            if !v.served {
                continue;
            }
            let Some(s) = v
                .schema
                .as_ref()
                .and_then(|s| s.open_api_v3_schema.as_ref())
            else {
                continue;
            };
            let schema_json = serde_json::to_value(s).expect("schema serializes");
            match Schema::from_json(&schema_json.to_string()) {
                Ok(schema) => out.push(Target {
                    crd: name.clone(),
                    group: crd.spec.group.clone(),
                    version: v.name.clone(),
                    kind: crd.spec.names.kind.clone(),
                    plural: crd.spec.names.plural.clone(),
                    namespaced: crd.spec.scope == "Namespaced",
                    status_subresource: v.subresources.as_ref().is_some_and(|s| s.status.is_some()),
                    scale_spec_path: v
                        .subresources
                        .as_ref()
                        .and_then(|s| s.scale.as_ref())
                        .map(|s| s.spec_replicas_path.clone()),
                    storage: v.storage,
                    schema_json,
                    schema,
                }),
                Err(e) => skipped.push(format!("{name} {}: {e}", v.name)),
            }
        }
    }
    out
}

/// What the API server said: accepted (with the object it would store) or the causes of
/// its 422, as (field, class) pairs, sorted.
#[derive(Debug)]
enum Verdict {
    Accepted(Value),
    /// The causes as (field, reason), sorted; and their messages, for the report.
    Rejected(Vec<(String, String)>, Vec<String>),
    // Read through `Debug` in the report.
    Other(#[allow(dead_code)] String),
}

/// A create (`name` None) or an update of `name`, dry-run unless `persist`.
async fn send(
    client: &kube::Client,
    t: &Target,
    obj: &Value,
    name: Option<&str>,
    persist: bool,
) -> Verdict {
    let ns = if t.namespaced {
        "namespaces/default/"
    } else {
        ""
    };
    let dry = if persist { "" } else { "?dryRun=All" };
    let (method, path) = match name {
        None => (
            http::Method::POST,
            format!("/apis/{}/{}/{ns}{}{dry}", t.group, t.version, t.plural),
        ),
        Some(n) => (
            http::Method::PUT,
            format!("/apis/{}/{}/{ns}{}/{n}{dry}", t.group, t.version, t.plural),
        ),
    };
    let (status, v) = match send_json(client, method, &path, obj).await {
        Ok(answer) => answer,
        Err(e) => return Verdict::Other(e.to_string()),
    };
    if status.is_success() {
        return Verdict::Accepted(v);
    }
    // A body the server cannot decode (an embedded resource's apiVersion that is not a
    // string, metadata that is not ObjectMeta): a 400 naming one field error,
    // `... cannot be handled as a <Kind>: <field>: Invalid value: ...`.
    let message = v["message"].as_str().unwrap_or_default();
    if status.as_u16() == 400
        && let Some((_, rest)) = message.split_once(&format!("cannot be handled as a {}: ", t.kind))
        && let Some((field, _)) = rest.split_once(": Invalid value")
    {
        return Verdict::Rejected(
            vec![(field.to_owned(), "FieldValueInvalid".to_owned())],
            vec![rest.to_owned()],
        );
    }
    if status.as_u16() != 422 {
        return Verdict::Other(format!("{status}: {}", v["message"]));
    }
    let raw = v["details"]["causes"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let mut causes: Vec<(String, String)> = raw
        .iter()
        .map(|c| {
            (
                c["field"].as_str().unwrap_or("").to_owned(),
                c["reason"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect();
    causes.sort();
    let messages = raw
        .iter()
        .map(|c| {
            format!(
                "{}: {}",
                c["field"].as_str().unwrap_or(""),
                c["message"].as_str().unwrap_or("")
            )
        })
        .collect();
    Verdict::Rejected(causes, messages)
}

/// Ours, in the server's terms; `old` is the stored object on an update.
fn ours(t: &Target, obj: &Value, old: Option<&Value>) -> Verdict {
    let mut v = obj.clone();
    if t.status_subresource
        && let Some(m) = v.as_object_mut()
    {
        // The main resource's writes keep the stored status (none on create).
        m.remove("status");
        if let Some(s) = old.and_then(|o| o.get("status")) {
            m.insert("status".into(), s.clone());
        }
    }
    t.schema.default_value(&mut v);
    let mut errs = match t.schema.validate_value(&v, old) {
        Ok(()) => vec![],
        Err(e) => e.0,
    };
    if let Some(p) = &t.scale_spec_path {
        errs.extend(validate_scale(&v, p));
    }
    match errs.is_empty() {
        true => Verdict::Accepted(v),
        false => {
            let mut causes: Vec<(String, String)> = errs
                .iter()
                .map(|e| (server_field(&e.field), e.error_type.cause_type().to_owned()))
                .collect();
            causes.sort();
            Verdict::Rejected(causes, errs.iter().map(ToString::to_string).collect())
        }
    }
}

/// The API server prints the root path (`field.NewPath` of nothing) as `<nil>`.
fn server_field(f: &str) -> String {
    if f.is_empty() {
        "<nil>".into()
    } else {
        f.to_owned()
    }
}

/// The stored object without what the server adds itself (metadata), numbers as the
/// server writes them (Go's float64 `1` for `1.0`).
fn content(v: &Value) -> Value {
    fn numbers(v: &mut Value) {
        match v {
            Value::Number(n) if n.is_f64() => {
                let f = n.as_f64().unwrap_or(f64::NAN);
                if f.fract() == 0.0 && f.abs() < 1e15 {
                    *v = json!(f as i64);
                }
            }
            Value::Array(a) => a.iter_mut().for_each(numbers),
            Value::Object(m) => m.values_mut().for_each(numbers),
            _ => {}
        }
    }
    let mut v = v.clone();
    if let Some(m) = v.as_object_mut() {
        m.remove("metadata");
    }
    numbers(&mut v);
    v
}

fn object(t: &Target, i: usize, body: Value) -> Value {
    let mut obj = body;
    let m = obj.as_object_mut().expect("objects");
    m.insert(
        "apiVersion".into(),
        json!(format!("{}/{}", t.group, t.version)),
    );
    m.insert("kind".into(), json!(t.kind));
    m.insert("metadata".into(), json!({ "name": format!("o-{i}") }));
    obj
}

#[tokio::test]
async fn validation_and_defaulting_agree_with_the_api_server() {
    let per_target: usize = std::env::var("VALIDATION_DIFF_OBJECTS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(12);
    let env = Environment::builder().start().await.expect("control plane");
    let client = env.client();

    // CRDs the API server refuses (a fixture written to test the generator, not the
    // server) are left out, with the server's reason.
    let mut skipped = vec![];
    let installed: Vec<Result<CustomResourceDefinition, String>> = futures::stream::iter(crds())
        .map(|crd| {
            let client = client.clone();
            async move {
                let name = crd.metadata.name.clone().unwrap_or_default();
                match apply_crd(&client, &crd).await {
                    Ok(_) => Ok(crd),
                    // Only a CRD the server refuses as invalid is left out: a transient
                    // failure (a timeout waiting for Established on a loaded machine) would
                    // otherwise change the corpus from run to run without a word.
                    Err(e)
                        if matches!(
                            e.downcast_ref::<kube::Error>(),
                            Some(kube::Error::Api(s)) if s.code == 422
                        ) =>
                    {
                        Err(format!(
                            "{name}: refused by the API server: {}",
                            format!("{e:#}").chars().take(160).collect::<String>()
                        ))
                    }
                    Err(e) => panic!("{name}: {e:#}"),
                }
            }
        })
        .buffer_unordered(8)
        .collect()
        .await;
    let mut crds = vec![];
    for r in installed {
        match r {
            Ok(c) => crds.push(c),
            Err(e) => skipped.push(e),
        }
    }
    crds.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
    let targets = targets(&crds, &mut skipped);

    // The objects: generated from each schema, plus the hand-picked ones.
    let mut cases: Vec<(usize, Value)> = vec![];
    for (ti, t) in targets.iter().enumerate() {
        // Seeded by the CRD version's name, not its place in the list: a CRD added to the
        // corpus (or left out) does not change the objects of the others.
        let mut rng = Rng(seed(&t.crd, &t.version));
        for i in 0..per_target {
            let body = gen_value(&mut rng, &t.schema_json, 0);
            let body = if body.is_object() { body } else { json!({}) };
            cases.push((ti, object(t, i, body)));
        }
        // Hand-picked: the empty object, and no spec at all.
        cases.push((ti, object(t, per_target, json!({ "spec": {} }))));
        cases.push((ti, object(t, per_target + 1, json!({}))));
        if t.crd == EDGE_CRD_NAME {
            for (i, body) in edge_bodies().into_iter().enumerate() {
                cases.push((ti, object(t, per_target + 2 + i, body)));
            }
        }
    }

    let results: Vec<(usize, Value, Verdict)> = futures::stream::iter(cases)
        .map(|(ti, obj)| {
            let client = client.clone();
            let t = &targets[ti];
            async move {
                let v = send(&client, t, &obj, None, false).await;
                (ti, obj, v)
            }
        })
        // In order, so the update phase below is the same on every run.
        .buffered(16)
        .collect()
        .await;

    let (mut agree, mut accepted, mut rejected, mut other) = (0, 0, 0, 0);
    let mut disagreements = vec![];
    for (ti, obj, server) in &results {
        let t = &targets[*ti];
        let mine = ours(t, obj, None);
        let same = match (server, &mine) {
            // Another version's object is stored, and pruned, in the storage version's
            // schema (no conversion): only the verdict is compared.
            (Verdict::Accepted(s), Verdict::Accepted(m)) => !t.storage || content(s) == content(m),
            (Verdict::Rejected(a, _), Verdict::Rejected(b, _)) => a == b,
            _ => false,
        };
        match server {
            Verdict::Accepted(_) => accepted += 1,
            Verdict::Rejected(..) => rejected += 1,
            Verdict::Other(_) => other += 1,
        }
        if same {
            agree += 1;
        } else {
            disagreements.push(format!(
                "{} {}: {}\n  server: {:?}\n  ours:   {:?}",
                t.crd,
                t.version,
                obj,
                match server {
                    Verdict::Accepted(s) => Verdict::Accepted(content(s)),
                    v => Verdict::Other(format!("{v:?}")),
                },
                match &mine {
                    Verdict::Accepted(m) => Verdict::Accepted(content(m)),
                    v => Verdict::Other(format!("{v:?}")),
                }
            ));
        }
    }
    println!(
        "validation differential: {} objects over {} CRD versions ({} CRDs); server accepted {accepted}, rejected {rejected}, other {other}; agreement {agree}/{} ({:.1}%)",
        results.len(),
        targets.len(),
        crds.len(),
        results.len(),
        100.0 * agree as f64 / results.len() as f64
    );
    println!("left out ({}): {}", skipped.len(), skipped.join("; "));
    if std::env::var_os("VALIDATION_DIFF_REPORT").is_some() {
        for d in &disagreements {
            println!("{d}");
        }
    }
    // Messages: reported, not required (cel-go's and cel-rust's error texts differ, and Go
    // prints objects with `%#v`).
    let (mut same_messages, mut both_rejected) = (0, 0);
    for (ti, obj, server) in &results {
        if let (Verdict::Rejected(_, a), Verdict::Rejected(_, b)) =
            (server, ours(&targets[*ti], obj, None))
        {
            both_rejected += 1;
            let norm = |m: &Vec<String>| {
                let mut m: Vec<String> = m
                    .iter()
                    .map(|x| x.trim_start_matches("<nil>: ").to_owned())
                    .collect();
                m.sort();
                m
            };
            if norm(a) == norm(&b) {
                same_messages += 1;
            }
        }
    }
    println!("messages agree on {same_messages} of {both_rejected} rejected objects");

    // Updates, for CRDs with transition rules: objects the server accepted are created for
    // real, then replaced (dry-run) by another generated object of the same CRD version,
    // and by themselves (ratcheting).
    let mut created = vec![];
    for (ti, obj, server) in &results {
        let t = &targets[*ti];
        if !t.storage || !t.schema_json.to_string().contains("oldSelf") {
            continue;
        }
        if let Verdict::Accepted(_) = server {
            let mut obj = obj.clone();
            obj["metadata"]["name"] = json!(format!("u-{}", created.len()));
            if let Verdict::Accepted(stored) = send(&client, t, &obj, None, true).await {
                created.push((*ti, stored));
            }
        }
    }
    let mut updates = vec![];
    // Each stored object is replaced by the object of its own CRD version at its own
    // place among that version's stored objects (not among all of them: so the pairs of
    // one CRD do not depend on the others').
    let mut per_target: BTreeMap<usize, usize> = BTreeMap::new();
    for (ti, stored) in &created {
        let others: Vec<&Value> = results
            .iter()
            .filter(|(t, ..)| t == ti)
            .map(|(_, o, _)| o)
            .collect();
        let i = per_target.entry(*ti).or_default();
        let other = others[*i % others.len()];
        *i += 1;
        for new_body in [Some(other), None] {
            let mut new = match new_body {
                Some(o) => o.clone(),
                None => stored.clone(),
            };
            new["metadata"] = stored["metadata"].clone();
            updates.push((*ti, new, stored.clone()));
        }
    }
    // The hand-picked updates: the old spec created for real, the new one sent as an update.
    if let Some(ti) = targets.iter().position(|t| t.crd == EDGE_CRD_NAME) {
        let t = &targets[ti];
        for (i, (old_spec, new_spec)) in edge_updates().into_iter().enumerate() {
            let old = json!({
                "apiVersion": format!("{}/{}", t.group, t.version),
                "kind": t.kind,
                "metadata": {"name": format!("edge-update-{i}")},
                "spec": old_spec,
            });
            let Verdict::Accepted(stored) = send(&client, t, &old, None, true).await else {
                panic!("the server refused the old object of hand-picked update {i}: {old}");
            };
            let mut new = stored.clone();
            new["spec"] = new_spec;
            updates.push((ti, new, stored));
        }
    }
    let update_results: Vec<(usize, Value, Value, Verdict)> = futures::stream::iter(updates)
        .map(|(ti, new, old)| {
            let client = client.clone();
            let t = &targets[ti];
            async move {
                let name = old["metadata"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned();
                let v = send(&client, t, &new, Some(&name), false).await;
                (ti, new, old, v)
            }
        })
        .buffer_unordered(16)
        .collect()
        .await;
    let mut update_agree = 0;
    for (ti, new, old, server) in &update_results {
        let t = &targets[*ti];
        let mut old_content = old.clone();
        t.schema.default_value(&mut old_content);
        let mine = ours(t, new, Some(&old_content));
        let same = match (server, &mine) {
            (Verdict::Accepted(s), Verdict::Accepted(m)) => content(s) == content(m),
            (Verdict::Rejected(a, _), Verdict::Rejected(b, _)) => a == b,
            _ => false,
        };
        if same {
            update_agree += 1;
        } else {
            disagreements.push(format!(
                "update {} {}: {}\n  old: {}\n  server: {:?}\n  ours:   {:?}",
                t.crd, t.version, new, old, server, mine
            ));
        }
    }
    let update_rejected = update_results
        .iter()
        .filter(|(.., v)| matches!(v, Verdict::Rejected(..)))
        .count();
    println!(
        "updates (CRDs with transition rules): {} dry-run updates, server rejected {update_rejected}; agreement {update_agree}/{}",
        update_results.len(),
        update_results.len()
    );
    if std::env::var_os("VALIDATION_DIFF_REPORT").is_some() {
        for d in disagreements.iter().filter(|d| d.starts_with("update ")) {
            println!("{d}");
        }
    }
    let _ = ErrorType::Invalid;
    assert!(results.len() >= 500, "only {} objects", results.len());
    assert!(
        disagreements.is_empty(),
        "{} of {} objects disagree; the first:\n{}",
        disagreements.len(),
        results.len() + update_results.len(),
        disagreements
            .iter()
            .take(5)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// BENCHMARKS.md, "Validation": `validate()` (defaults + validation, CEL included) per
/// object against the API server's dry-run create round trip, on the same generated
/// objects. Run by bench/validation.sh (release build); ignored in the test suite.
#[tokio::test]
#[ignore = "a benchmark: bench/validation.sh"]
async fn validation_throughput_against_dry_run() {
    let root = repo_root();
    let crd_files = [
        "tests/fixtures/crd-corpus/cloudnative-pg/clusters.postgresql.cnpg.io.yaml",
        "tests/fixtures/crd-corpus/gateway-api/gateways.gateway.networking.k8s.io.yaml",
        "tests/fixtures/crd-corpus/cert-manager/certificates.cert-manager.io.yaml",
    ];
    let mut crds: Vec<CustomResourceDefinition> = vec![];
    for f in crd_files {
        let mut crd: CustomResourceDefinition =
            serde_yaml::from_str(&std::fs::read_to_string(root.join(f)).expect("read"))
                .expect("CRD");
        crd.spec.conversion = None;
        crds.push(crd);
    }
    let env = Environment::builder().start().await.expect("control plane");
    let client = env.client();
    for crd in &crds {
        apply_crd(&client, crd).await.expect("CRD installs");
    }
    let mut skipped = vec![];
    let targets: Vec<Target> = targets(&crds, &mut skipped)
        .into_iter()
        .filter(|t| t.storage)
        .collect();
    let n: usize = std::env::var("BENCH_OBJECTS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(300);
    for (ti, t) in targets.iter().enumerate() {
        let mut rng = Rng(0xDEAD_BEEF ^ (ti as u64 + 7));
        let objects: Vec<Value> = (0..n)
            .map(|i| {
                let body = gen_value(&mut rng, &t.schema_json, 0);
                object(t, i, if body.is_object() { body } else { json!({}) })
            })
            .collect();
        // Ours: what `Validate::validate()` does after serializing (defaults on a copy,
        // then every check); repeated for a stable figure.
        let rounds = 20;
        let start = std::time::Instant::now();
        let mut rejected = 0;
        for _ in 0..rounds {
            for o in &objects {
                let mut v = o.clone();
                t.schema.default_value(&mut v);
                if t.schema.validate_value(&v, None).is_err() {
                    rejected += 1;
                }
            }
        }
        let ours = start.elapsed().as_secs_f64() / (rounds * n) as f64;
        // The API server: sequential round trips (latency), then 16 in flight (throughput).
        let start = std::time::Instant::now();
        for o in &objects {
            let _ = send(&client, t, o, None, false).await;
        }
        let seq = start.elapsed().as_secs_f64() / n as f64;
        let start = std::time::Instant::now();
        let _: Vec<Verdict> = futures::stream::iter(objects.iter())
            .map(|o| send(&client, t, o, None, false))
            .buffer_unordered(16)
            .collect()
            .await;
        let par = start.elapsed().as_secs_f64();
        println!(
            "| {} {} | {n} | {} | {:.1} µs ({:.0}/s) | {:.2} ms | {:.0}/s | {:.0}x |",
            t.kind,
            t.version,
            rejected / rounds,
            ours * 1e6,
            1.0 / ours,
            seq * 1e3,
            n as f64 / par,
            seq / ours
        );
    }
}
