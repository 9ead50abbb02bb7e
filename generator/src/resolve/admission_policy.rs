//! ValidatingAdmissionPolicies for kinds marked `+kube-codegen:admissionpolicy`: the kind
//! version's validation (its CRD schema, from the same markers the CRD and the generated
//! `validate()` come from) as CEL over `object`, so a cluster enforces it at admission with
//! no webhook server. Built and checked here; the `admission-policy` generator only writes
//! what this builds.
//!
//! What qualifies is what CEL states exactly as the API server's schema validation does:
//! bounds (`minimum`, `maximum` and their exclusive forms, integer `multipleOf`), lengths
//! and sizes (`minLength`, `maxLength`, `minItems`, `maxItems`, `minProperties`,
//! `maxProperties`), `pattern`, scalar `enum`, `required`, and `x-kubernetes-validations`
//! rules without `oldSelf` or `messageExpression`, all through properties, list items and
//! map values. Each becomes one validation whose expression binds the value at its path to
//! `self` (`[object.spec].all(self, <rule>)`), so a rule written for the CRD reads the same
//! here. `metadata` is the API server's, and `status` is left out when the kind has the
//! status subresource (a write to the main resource cannot change it). Defaults are not
//! validation: the API server applies them from the CRD before admission, so they need
//! no policy, nor do the `format`s the API server strips (`int32`). Anything else (the
//! string `format`s it checks, list-type uniqueness, transition rules,
//! `anyOf`/`allOf`/`oneOf`/`not`, `nullable`, a property name CEL cannot spell) does not
//! qualify, and the marker is refused with the list, rather than a policy that checks less
//! than the schema says.

use serde_json::{Value, json};

use crate::diagnostics::Diagnostics;
use crate::markers::Name;
use crate::model::{AdmissionPolicyFile, Api, Kind, Package};
use crate::schema::{SchemaBuilder, SchemaOptions};

/// The policies of every marked kind, a file per group and kind with a policy and a
/// binding per marked version.
pub(super) fn policies(
    api: &Api,
    options: &SchemaOptions,
    diags: &mut Diagnostics,
) -> Vec<AdmissionPolicyFile> {
    let mut files: Vec<AdmissionPolicyFile> = vec![];
    for p in api.packages.values() {
        for k in &p.kinds {
            let Some(marker) = api
                .types
                .get(&k.type_key)
                .and_then(|d| d.markers.iter().find(|m| m.name == Name::AdmissionPolicy))
            else {
                continue;
            };
            // Problems building the schema are reported where the CRD is built (the `crd`
            // generator runs whenever this one does).
            let Some(schema) = SchemaBuilder::new(api, p, options).kind_schema(k) else {
                continue;
            };
            let schema = serde_json::to_value(&schema).expect("schemas serialize");
            let mut rules = Rules::default();
            rules.object(&schema, "object", "", k.status_subresource);
            if !rules.refused.is_empty() {
                diags.push(
                    marker
                        .error(format!(
                            "{} {}/{} cannot be enforced by a ValidatingAdmissionPolicy alone: {}",
                            k.name,
                            p.group,
                            p.version,
                            rules.refused.join("; ")
                        ))
                        .with_hint("state those constraints as `+kubebuilder:validation:XValidation` CEL rules (without oldSelf), or drop the marker and serve the validating webhook"),
                );
                continue;
            }
            let file_name = format!("{}_{}.yaml", p.group, k.plural);
            let documents = policy_documents(p, k, rules.validations);
            match files.iter_mut().find(|f| f.file_name == file_name) {
                Some(f) => f.documents.extend(documents),
                None => files.push(AdmissionPolicyFile {
                    file_name,
                    documents,
                }),
            }
        }
    }
    files
}

/// The policy and its binding for one kind version: CREATE and UPDATE of the resource in
/// that version (others converted to it, `matchPolicy: Equivalent`), denied on failure.
fn policy_documents(p: &Package, k: &Kind, validations: Vec<Value>) -> Vec<Value> {
    let name = format!("{}-{}.{}", k.plural, p.version, p.group);
    vec![
        json!({
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingAdmissionPolicy",
            "metadata": { "name": name },
            "spec": {
                "failurePolicy": "Fail",
                "matchConstraints": {
                    "matchPolicy": "Equivalent",
                    "resourceRules": [{
                        "apiGroups": [p.group],
                        "apiVersions": [p.version],
                        "operations": ["CREATE", "UPDATE"],
                        "resources": [k.plural],
                    }],
                },
                "validations": validations,
            },
        }),
        json!({
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingAdmissionPolicyBinding",
            "metadata": { "name": name },
            "spec": {
                "policyName": name,
                "validationActions": ["Deny"],
            },
        }),
    ]
}

/// The validations found so far, and what does not qualify.
#[derive(Default)]
struct Rules {
    validations: Vec<Value>,
    refused: Vec<String>,
}

/// Keywords that state no constraint a policy must check: types are checked by the API
/// server's decoding against the CRD, defaults applied by it, the rest is documentation
/// or structure read elsewhere here.
const NO_CONSTRAINT: &[&str] = &[
    "type",
    "description",
    "default",
    "example",
    "title",
    "externalDocs",
    "properties",
    "items",
    "additionalProperties",
    "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-embedded-resource",
    "x-kubernetes-int-or-string",
    "x-kubernetes-map-type",
];

impl Rules {
    /// The root object: `metadata` is the API server's, `status` out of reach of the
    /// main resource with the status subresource.
    fn object(&mut self, schema: &Value, expr: &str, path: &str, status_subresource: bool) {
        let mut root = schema.clone();
        if let Some(props) = root.get_mut("properties").and_then(Value::as_object_mut) {
            props.remove("metadata");
            props.remove("apiVersion");
            props.remove("kind");
            if status_subresource {
                props.remove("status");
            }
        }
        if let Some(required) = root.get_mut("required").and_then(Value::as_array_mut) {
            required.retain(|r| {
                let apiserver_owned =
                    matches!(r.as_str(), Some("metadata" | "apiVersion" | "kind"));
                !(apiserver_owned || status_subresource && r == "status")
            });
        }
        self.schema(&root, &format!("[{expr}].all(self, %)"), path);
    }

    /// The rules of `schema`, each put in `context` (a CEL expression with `%` where the
    /// rule over `self` goes) for the value at `path`.
    fn schema(&mut self, schema: &Value, context: &str, path: &str) {
        let Some(s) = schema.as_object() else {
            return;
        };
        let shown = if path.is_empty() { "<root>" } else { path };
        let is_integer = s.get("type") == Some(&json!("integer"));
        for (key, value) in s {
            let rule: Option<(String, String)> = match key.as_str() {
                k if NO_CONSTRAINT.contains(&k) => None,
                "minimum" | "maximum" => {
                    let exclusive = s
                        .get(if key == "minimum" {
                            "exclusiveMinimum"
                        } else {
                            "exclusiveMaximum"
                        })
                        .and_then(Value::as_bool)
                        .unwrap_or(false);
                    let op = match (key.as_str(), exclusive) {
                        ("minimum", false) => ">=",
                        ("minimum", true) => ">",
                        (_, false) => "<=",
                        (_, true) => "<",
                    };
                    let what = if key == "minimum" { "greater" } else { "less" };
                    let or_equal = if exclusive { "" } else { " or equal to" };
                    // CEL compares an `integer` field as an int and a `number` one as a
                    // double, with no implicit conversion: the bound is written in the
                    // field's type (a fractional bound on an integer compares as double).
                    let (shown_bound, rule) = match (bound_text(value), is_integer) {
                        ((Some(int), _), true) => {
                            let rule = format!("self {op} {int}");
                            (int, rule)
                        }
                        ((int, double), true) => (
                            int.unwrap_or_else(|| double.clone()),
                            format!("double(self) {op} {double}"),
                        ),
                        ((int, double), false) => (
                            int.unwrap_or_else(|| double.clone()),
                            format!("self {op} {double}"),
                        ),
                    };
                    Some((
                        rule,
                        format!("should be {what} than{or_equal} {shown_bound}"),
                    ))
                }
                "exclusiveMinimum" | "exclusiveMaximum" => None,
                "multipleOf" => match value.as_i64() {
                    Some(n) if s.get("type") == Some(&json!("integer")) => Some((
                        format!("self % {n} == 0"),
                        format!("should be a multiple of {n}"),
                    )),
                    _ => {
                        self.refused
                            .push(format!("{shown}: multipleOf on a number"));
                        None
                    }
                },
                "minLength" | "minItems" | "minProperties" => Some((
                    format!("self.size() >= {value}"),
                    format!("should have at least {value} {}", unit(key)),
                )),
                "maxLength" | "maxItems" | "maxProperties" => Some((
                    format!("self.size() <= {value}"),
                    format!("should have at most {value} {}", unit(key)),
                )),
                "pattern" => {
                    let literal = serde_json::to_string(value).expect("a string serializes");
                    Some((
                        format!("self.matches({literal})"),
                        format!("should match '{}'", value.as_str().unwrap_or_default()),
                    ))
                }
                "enum" => {
                    let values = value.as_array().cloned().unwrap_or_default();
                    if values
                        .iter()
                        .all(|v| v.is_string() || v.is_number() || v.is_boolean())
                    {
                        let list = serde_json::to_string(&values).expect("JSON serializes");
                        Some((
                            format!("self in {list}"),
                            format!("should be one of {list}"),
                        ))
                    } else {
                        self.refused
                            .push(format!("{shown}: an enum of objects or lists"));
                        None
                    }
                }
                "required" => {
                    for name in value.as_array().into_iter().flatten() {
                        let name = name.as_str().unwrap_or_default();
                        if let Some(field) = self.field(name, shown) {
                            self.push(
                                context,
                                format!("has(self.{field})"),
                                format!("{}: Required value", join(path, name)),
                            );
                        }
                    }
                    None
                }
                "x-kubernetes-validations" => {
                    for r in value.as_array().into_iter().flatten() {
                        let text = r.get("rule").and_then(Value::as_str).unwrap_or_default();
                        if text.contains("oldSelf") {
                            self.refused
                                .push(format!("{shown}: the transition rule `{text}`"));
                        } else if r.get("messageExpression").is_some() {
                            self.refused.push(format!(
                                "{shown}: the rule `{text}` has a messageExpression"
                            ));
                        } else {
                            let message = r
                                .get("message")
                                .and_then(Value::as_str)
                                .map(str::to_owned)
                                .unwrap_or_else(|| format!("failed rule: {text}"));
                            self.push(context, format!("({text})"), message_at(path, &message));
                        }
                    }
                    None
                }
                // A format the API server strips (`int32`, ...) checks nothing: neither does
                // the policy. The formats it checks are not stated in CEL here.
                "format"
                    if kube_codegen_validation::validation::formats::check(
                        value.as_str().unwrap_or_default(),
                        "",
                    )
                    .is_none() =>
                {
                    None
                }
                other => {
                    let what = match other {
                        "format" => format!("format `{}`", value.as_str().unwrap_or_default()),
                        "x-kubernetes-list-type" | "x-kubernetes-list-map-keys" => {
                            if value == "atomic" {
                                continue;
                            }
                            format!("{other} {value} (uniqueness)")
                        }
                        _ => other.to_owned(),
                    };
                    self.refused.push(format!("{shown}: {what}"));
                    None
                }
            };
            if let Some((rule, message)) = rule {
                self.push(context, rule, message_at(path, &message));
            }
        }
        if let Some(props) = s.get("properties").and_then(Value::as_object) {
            for (name, sub) in props {
                let Some(field) = self.field(name, shown) else {
                    continue;
                };
                let inner = context.replace(
                    '%',
                    &format!("!has(self.{field}) || [self.{field}].all(self, %)"),
                );
                self.schema(sub, &inner, &join(path, name));
            }
        }
        if let Some(items) = s.get("items") {
            let inner = context.replace('%', "self.all(self, %)");
            self.schema(items, &inner, &format!("{path}[*]"));
        }
        if let Some(values) = s.get("additionalProperties").filter(|v| v.is_object()) {
            let inner = context.replace('%', "self.all(k, [self[k]].all(self, %))");
            self.schema(values, &inner, &format!("{path}[*]"));
        }
    }

    /// A property as CEL names it, or `None` (and a refusal) when it cannot: a name the API
    /// server would escape (`__dash__`, a reserved word as `__name__`) is refused rather
    /// than escaped.
    fn field(&mut self, name: &str, at: &str) -> Option<String> {
        let plain = name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !kube_codegen_validation::cel::RESERVED.contains(&name);
        if plain {
            Some(name.to_owned())
        } else {
            self.refused.push(format!(
                "{at}: property `{name}` (not a plain CEL identifier)"
            ));
            None
        }
    }

    fn push(&mut self, context: &str, rule: String, message: String) {
        self.validations.push(json!({
            "expression": context.replace('%', &rule),
            "message": message,
        }));
    }
}

/// A numeric bound as an integer literal (when it is whole) and as a double literal.
fn bound_text(v: &Value) -> (Option<String>, String) {
    let f = v.as_f64().unwrap_or_default();
    let int = (f.fract() == 0.0 && f.abs() < 9.0e15).then(|| format!("{}", f as i64));
    let double = match &int {
        Some(i) => format!("{i}.0"),
        None => format!("{f:?}"),
    };
    (int, double)
}

fn unit(key: &str) -> &'static str {
    match key {
        "minLength" | "maxLength" => "characters",
        "minItems" | "maxItems" => "items",
        _ => "properties",
    }
}

fn join(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_owned()
    } else {
        format!("{path}.{name}")
    }
}

fn message_at(path: &str, message: &str) -> String {
    if path.is_empty() {
        message.to_owned()
    } else {
        format!("{path}: {message}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules_of(schema: Value) -> Rules {
        let mut r = Rules::default();
        r.object(&schema, "object", "", true);
        r
    }

    #[test]
    fn bounds_lengths_patterns_and_rules_bind_self_at_their_path() {
        let r = rules_of(json!({
            "type": "object",
            "required": ["spec"],
            "properties": {
                "metadata": {"type": "object"},
                "status": {"type": "object", "properties": {"n": {"type": "integer", "minimum": 0}}},
                "spec": {
                    "type": "object",
                    "x-kubernetes-validations": [{"rule": "self.a <= self.b", "message": "a above b"}],
                    "properties": {
                        "a": {"type": "integer", "minimum": 1, "maximum": 10, "exclusiveMaximum": true},
                        "b": {"type": "integer", "default": 5},
                        "name": {"type": "string", "maxLength": 63, "pattern": "^[a-z]+$"},
                        "tags": {"type": "array", "maxItems": 3, "items": {"type": "string", "enum": ["x", "y"]}},
                        "labels": {"type": "object", "additionalProperties": {"type": "string", "minLength": 1}},
                    },
                },
            },
        }));
        assert!(r.refused.is_empty(), "{:?}", r.refused);
        let exprs: Vec<(&str, &str)> = r
            .validations
            .iter()
            .map(|v| {
                (
                    v["expression"].as_str().unwrap(),
                    v["message"].as_str().unwrap(),
                )
            })
            .collect();
        assert!(exprs.contains(&("[object].all(self, has(self.spec))", "spec: Required value")));
        assert!(exprs.contains(&(
            "[object].all(self, !has(self.spec) || [self.spec].all(self, (self.a <= self.b)))",
            "spec: a above b"
        )));
        assert!(exprs.contains(&(
            "[object].all(self, !has(self.spec) || [self.spec].all(self, !has(self.a) || [self.a].all(self, self < 10)))",
            "spec.a: should be less than 10"
        )));
        assert!(
            exprs
                .iter()
                .any(|(e, _)| e.ends_with("self.all(self, self in [\"x\",\"y\"]))))"))
        );
        assert!(
            exprs
                .iter()
                .any(|(e, _)| e.contains("self.all(k, [self[k]].all(self, self.size() >= 1))"))
        );
        assert!(
            exprs
                .iter()
                .any(|(e, m)| e.contains("self.matches(\"^[a-z]+$\")")
                    && m.starts_with("spec.name:"))
        );
        // status (with the subresource) and metadata are not the policy's.
        assert!(
            exprs
                .iter()
                .all(|(e, _)| !e.contains("status") && !e.contains("metadata"))
        );
    }

    #[test]
    fn what_cel_cannot_state_is_listed() {
        let r = rules_of(json!({
            "type": "object",
            "properties": {
                "spec": {
                    "type": "object",
                    "x-kubernetes-validations": [{"rule": "self == oldSelf", "message": "immutable"}],
                    "properties": {
                        "when": {"type": "string", "format": "uuid"},
                        "n": {"type": "integer", "format": "int32"},
                        "set": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
                        "odd-name": {"type": "string"},
                        "any": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
                    },
                },
            },
        }));
        let refused = r.refused.join("\n");
        assert!(
            !refused.contains("int32"),
            "a stripped format checks nothing: {refused}"
        );
        for what in [
            "transition rule",
            "format `uuid`",
            "(uniqueness)",
            "`odd-name`",
            "anyOf",
        ] {
            assert!(refused.contains(what), "{what} in {refused}");
        }
    }
}
