//! Differential test of the CEL runtime cost (kube-codegen-runtime's metered evaluator and
//! the validation walk's per-object budget) against the real API server.
//!
//! Each case is a CRD whose rules cost more as the object grows (nested comprehensions over
//! a list, string scans of long strings, many costly rules over many items, a costly
//! messageExpression). Its schema bounds (maxItems, maxLength) keep the server's *static*
//! estimate under its limits, so the CRD installs, while the runtime cost can still pass
//! the per-call limit or the per-object budget. For each case the test bisects the object
//! size at which the server's dry-run create starts refusing, and requires that ours
//! accepts the size below and refuses that size with the same causes: field path, reason
//! and message.

use std::sync::Arc;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube_codegen_envtest::Environment;
use kube_codegen_runtime::validation::Schema;
use kube_codegen_tests::{apply_crd, send_json};
use serde_json::{Value, json};

const GROUP: &str = "cost.example.com";

/// One case: a kind, its spec schema, and the spec of size `n`.
struct Case {
    kind: &'static str,
    spec: Value,
    object: fn(usize) -> Value,
    /// The window bisected: the server has no cost error at `lo` and one at `hi`. The
    /// windows are the flips found by bisecting each case's whole range (1 to its maxItems
    /// or maxLength); kept one apart, as each request near a flip runs ~10⁶-10⁷ cost
    /// units on the server. Widen one to bisect again.
    lo: usize,
    hi: usize,
}

fn cases() -> Vec<Case> {
    vec![
        // The per-call limit: a nested comprehension, ~5n² on n items.
        Case {
            kind: "CallLimit",
            spec: json!({
                "type": "object",
                "properties": {
                    "l": {"type": "array", "maxItems": 1000, "items": {"type": "integer"}},
                },
                "x-kubernetes-validations": [
                    {"rule": "self.l.all(x, self.l.all(y, x >= 0))"},
                ],
            }),
            object: |n| json!({"l": vec![1; n]}),
            lo: 446,
            hi: 447,
        },
        // String scans (lowerAscii, string inequality): each rounded up per string as cel-go
        // rounds, in a nested comprehension over 100 strings whose length grows.
        Case {
            kind: "StringScan",
            spec: json!({
                "type": "object",
                "properties": {
                    "l": {
                        "type": "array",
                        "maxItems": 100,
                        "items": {"type": "string", "maxLength": 700},
                    },
                },
                "x-kubernetes-validations": [
                    {"rule": "self.l.all(x, self.l.all(y, x.lowerAscii() != y + 'b'))", "message": "scan"},
                ],
            }),
            object: |n| json!({"l": vec!["a".repeat(n); 100]}),
            lo: 310,
            hi: 311,
        },
        // Library call costs (split, matches, lowerAscii, upperAscii, string equality)
        // in a nested comprehension that never stops early.
        Case {
            kind: "LibraryCalls",
            spec: json!({
                "type": "object",
                "properties": {
                    "l": {
                        "type": "array",
                        "maxItems": 500,
                        "items": {"type": "string", "maxLength": 20},
                    },
                },
                "x-kubernetes-validations": [
                    {"rule": "self.l.all(x, x.split(',').size() <= 8 && x.matches('^[a-z,]+$') && !self.l.exists(y, y.lowerAscii() == x.upperAscii()))"},
                ],
            }),
            object: |n| json!({"l": vec!["ab,cd,ab,cd,ab,cd,ab"; n]}),
            lo: 287,
            hi: 288,
        },
        // The per-object budget: costly rules on every item (the spec's own rule runs first);
        // the rules of the items after the overrun do not run.
        Case {
            kind: "Budget",
            spec: json!({
                "type": "object",
                "properties": {
                    "items": {
                        "type": "array",
                        "maxItems": 30,
                        "items": {
                            "type": "object",
                            "properties": {
                                "l": {"type": "array", "maxItems": 200, "items": {"type": "integer"}},
                            },
                            // Three rules: the server's static check bounds each rule (times
                            // its cardinality), not their sum.
                            "x-kubernetes-validations": [
                                {"rule": "self.l.all(x, self.l.all(y, x >= 0))"},
                                {"rule": "self.l.all(x, self.l.all(y, x >= -1))"},
                                {"rule": "self.l.all(x, self.l.all(y, x >= -2))"},
                            ],
                        },
                    },
                    "last": {"type": "string"},
                },
                "x-kubernetes-validations": [
                    {"rule": "self.last == 'ok'"},
                ],
            }),
            object: |n| json!({"items": vec![json!({"l": vec![1; 200]}); n], "last": "ok"}),
            lo: 16,
            hi: 17,
        },
        // A messageExpression is charged to the budget too: each item fails its rule and
        // its message runs the comprehension again.
        Case {
            kind: "MessageBudget",
            spec: json!({
                "type": "object",
                "properties": {
                    "items": {
                        "type": "array",
                        "maxItems": 30,
                        "items": {
                            "type": "object",
                            "properties": {
                                "l": {"type": "array", "maxItems": 200, "items": {"type": "integer"}},
                            },
                            "x-kubernetes-validations": [
                                {
                                    "rule": "!self.l.all(x, self.l.all(y, x >= 0))",
                                    "messageExpression": "self.l.all(x, self.l.all(y, x >= 0)) ? 'all' : 'none'",
                                },
                            ],
                        },
                    },
                },
            }),
            object: |n| json!({"items": vec![json!({"l": vec![1; 200]}); n]}),
            lo: 24,
            hi: 25,
        },
    ]
}

fn plural(kind: &str) -> String {
    format!("{}s", kind.to_lowercase())
}

fn crd(case: &Case) -> CustomResourceDefinition {
    let plural = plural(case.kind);
    serde_json::from_value(json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("{plural}.{GROUP}")},
        "spec": {
            "group": GROUP,
            "names": {"kind": case.kind, "plural": plural, "singular": case.kind.to_lowercase()},
            "scope": "Namespaced",
            "versions": [{
                "name": "v1",
                "served": true,
                "storage": true,
                "schema": {"openAPIV3Schema": schema(case)},
            }],
        },
    }))
    .expect("a CRD")
}

fn schema(case: &Case) -> Value {
    json!({"type": "object", "properties": {"spec": case.spec}})
}

fn object(case: &Case, n: usize) -> Value {
    json!({
        "apiVersion": format!("{GROUP}/v1"),
        "kind": case.kind,
        "metadata": {"name": format!("n{n}")},
        "spec": (case.object)(n),
    })
}

/// The causes of a refusal as (field, reason, message), sorted; `None` when accepted.
type Causes = Option<Vec<(String, String, String)>>;

async fn server(client: &kube::Client, case: &Case, n: usize) -> Causes {
    let (status, v) = send_json(
        client,
        http::Method::POST,
        &format!(
            "/apis/{GROUP}/v1/namespaces/default/{}?dryRun=All",
            plural(case.kind)
        ),
        &object(case, n),
    )
    .await
    .expect("the API server answers");
    if status.is_success() {
        return None;
    }
    assert_eq!(status.as_u16(), 422, "{}: {v}", case.kind);
    let mut causes: Vec<(String, String, String)> = v["details"]["causes"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .map(|c| {
            let s = |k: &str| c[k].as_str().unwrap_or("").to_owned();
            (s("field"), s("reason"), s("message"))
        })
        .collect();
    causes.sort();
    Some(causes)
}

/// Whether a cause is a runtime cost error (the per-call limit or the budget).
fn cost_error(causes: &Causes) -> bool {
    causes.as_ref().is_some_and(|c| {
        c.iter()
            .any(|(_, _, m)| m.contains("no further validation rules will be run"))
    })
}

fn ours(schema: &Schema, case: &Case, n: usize) -> Causes {
    let mut v = object(case, n);
    schema.default_value(&mut v);
    let errs = schema.validate_value(&v, None).err()?;
    let mut causes: Vec<(String, String, String)> = errs
        .0
        .iter()
        .map(|e| {
            let field = if e.field.is_empty() {
                "<nil>".to_owned()
            } else {
                e.field.clone()
            };
            (field, e.error_type.cause_type().to_owned(), e.body())
        })
        .collect();
    causes.sort();
    Some(causes)
}

// Two workers: our evaluations (CPU-bound, on blocking threads) overlap the server's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runtime_cost_errors_flip_where_the_api_server_flips() {
    let env = Environment::builder().start().await.expect("control plane");
    let client = env.client();
    let installs = cases().into_iter().map(|case| {
        let client = client.clone();
        async move {
            apply_crd(&client, &crd(&case))
                .await
                .unwrap_or_else(|e| panic!("{}: the API server refuses the CRD: {e:#}", case.kind));
        }
    });
    futures::future::join_all(installs).await;
    let checks = cases().into_iter().map(|case| check(client.clone(), case));
    let failures: Vec<String> = futures::future::join_all(checks)
        .await
        .into_iter()
        .flatten()
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// One case's bisection and comparison; the disagreements.
async fn check(client: kube::Client, case: Case) -> Vec<String> {
    let started = std::time::Instant::now();
    let schema = Arc::new(Schema::from_json(&schema(&case).to_string()).expect("schema"));
    let case = Arc::new(case);
    let ours_at = |n: usize| {
        let (schema, case) = (schema.clone(), case.clone());
        tokio::task::spawn_blocking(move || ours(&schema, &case, n))
    };
    // Ours at the window's ends, while the server answers.
    let (mine_lo, mine_hi) = (ours_at(case.lo), ours_at(case.hi));

    // Bisect the smallest size the server refuses on cost, within the case's window.
    let (mut lo, mut hi) = (case.lo, case.hi);
    assert!(
        !cost_error(&server(&client, &case, lo).await),
        "{}: the server refuses size {lo} on cost",
        case.kind
    );
    let mut at_flip = server(&client, &case, hi).await;
    assert!(
        cost_error(&at_flip),
        "{}: the server accepts size {hi}",
        case.kind
    );
    while hi - lo > 1 {
        let mid = (lo + hi) / 2;
        let causes = server(&client, &case, mid).await;
        if cost_error(&causes) {
            hi = mid;
            at_flip = causes;
        } else {
            lo = mid;
        }
    }
    let mine_below = match lo == case.lo {
        true => mine_lo.await,
        false => ours_at(lo).await,
    }
    .expect("ours");
    let mine_at = match hi == case.hi {
        true => mine_hi.await,
        false => ours_at(hi).await,
    }
    .expect("ours");
    eprintln!(
        "{}: the server refuses on cost from size {hi} ({:.1?}): {at_flip:?}",
        case.kind,
        started.elapsed()
    );
    let mut failures = vec![];
    if cost_error(&mine_below) {
        failures.push(format!(
            "{}: ours refuses size {lo} on cost, the server does not: {mine_below:?}",
            case.kind
        ));
    }
    if mine_at != at_flip {
        failures.push(format!(
            "{}: at size {hi}\n  server: {at_flip:?}\n  ours:   {mine_at:?}",
            case.kind
        ));
    }
    failures
}
