//! Defaulting and validation the `validation` generator writes: which kinds opted in
//! (`+kube-codegen:validation` on the kind, in its group/version module, or every kind with
//! the global switch), the schema each validates against (its CRD schema without
//! descriptions), and the checks that keep generated validation in step with the API
//! server: the marker only on a kind, and every CEL rule one the runtime's evaluator runs.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use crate::diagnostics::{Diagnostic, Diagnostics};
use crate::markers::Name;
use crate::model::{Api, Kind, Package};
use crate::schema::{SchemaBuilder, SchemaOptions};

/// Check the opt-ins and their rules, and give each opted-in kind its schema as JSON text,
/// by the kind's type key.
pub(super) fn schemas(
    api: &Api,
    options: &SchemaOptions,
    diags: &mut Diagnostics,
) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for p in api.packages.values() {
        for k in p.kinds.iter().filter(|k| opted_in(api, p, k)) {
            // Problems building the schema are reported where the CRD is built (the `crd`
            // generator runs whenever this one does).
            let mut builder = SchemaBuilder::new(api, p, options);
            let Some(schema) = builder.kind_schema(k) else {
                continue;
            };
            let mut json = serde_json::to_value(&schema).expect("schemas serialize");
            strip_docs(&mut json);
            check_rules(api, k, &json, diags);
            out.insert(
                k.type_key.clone(),
                serde_json::to_string(&json).expect("JSON serializes"),
            );
        }
    }
    out
}

/// A kind opted in by its own marker, its package's, or the global switch.
fn opted_in(api: &Api, p: &Package, k: &Kind) -> bool {
    !k.skip
        && (p.validation.is_some()
            || api
                .types
                .get(&k.type_key)
                .is_some_and(|d| d.markers.iter().any(|m| m.name == Name::Validation)))
}

/// Descriptions and examples do not validate anything: left out of the embedded schema.
fn strip_docs(v: &mut Value) {
    match v {
        Value::Object(m) => {
            for k in ["description", "example", "title", "externalDocs"] {
                m.remove(k);
            }
            for (k, x) in m.iter_mut() {
                // `properties` maps names to schemas: a property may be called `description`.
                if k == "properties" {
                    if let Value::Object(props) = x {
                        props.values_mut().for_each(strip_docs);
                    }
                } else if k != "default" && k != "enum" {
                    strip_docs(x);
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(strip_docs),
        _ => {}
    }
}

/// Every CEL expression of the schema must compile and call only functions the runtime's
/// evaluator has; each offender is reported at the marker that wrote it (found by its
/// text), else at the kind.
fn check_rules(api: &Api, k: &Kind, schema: &Value, diags: &mut Diagnostics) {
    let mut exprs = BTreeSet::new();
    collect_exprs(schema, &mut exprs);
    for expr in exprs {
        // The evaluator's own list: the runtime re-exports kube-codegen-validation's `cel`.
        let problem = match kube_codegen_validation::cel::unsupported_functions(&expr) {
            // Syntax errors are reported by the `crd` generator at the marker.
            None => continue,
            Some(missing) if missing.is_empty() => continue,
            Some(missing) => missing
                .iter()
                .map(|f| format!("`{f}`"))
                .collect::<Vec<_>>()
                .join(", "),
        };
        let message = format!(
            "the CEL rule `{expr}` of {} calls {problem}, which kube-codegen's CEL evaluator does not implement",
            k.name
        );
        let d = match super::crd::find_xvalidation_marker(api, &expr, None) {
            Some(m) => m.error(message),
            None => Diagnostic::new(k.loc.clone(), message),
        };
        diags.push(d.with_hint(
            "generated validation would disagree with the API server: rewrite the rule with supported functions (the book's \"Defaulting and validation\", docs/src/guide/validation.md), or do not opt the kind into validation (`+kube-codegen:validation` on it or its group/version, `--validate-all-kinds`)",
        ));
    }
}

fn collect_exprs(v: &Value, out: &mut BTreeSet<String>) {
    match v {
        Value::Object(m) => {
            if let Some(Value::Array(rules)) = m.get("x-kubernetes-validations") {
                for r in rules {
                    for key in ["rule", "messageExpression"] {
                        if let Some(Value::String(s)) = r.get(key) {
                            out.insert(s.clone());
                        }
                    }
                }
            }
            for (k, x) in m {
                if k != "default" && k != "enum" {
                    collect_exprs(x, out);
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|x| collect_exprs(x, out)),
        _ => {}
    }
}
