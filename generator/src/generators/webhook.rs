//! The `webhook` generator: the admission webhook configurations a controller serves, from
//! `+kubebuilder:webhook` markers, as controller-gen's `webhook` generator writes them
//! (`manifests.yaml`: one MutatingWebhookConfiguration and one ValidatingWebhookConfiguration,
//! each with its webhooks ordered by name, named by `+kubebuilder:webhookconfiguration` or
//! `mutating-webhook-configuration`/`validating-webhook-configuration`), so the output equals
//! controller-gen's for the same markers. The markers were read and checked in resolve
//! (`resolve/manifests.rs`); `patch=` was checked there too and is applied here.

use serde_json::{Map, Value, json};

use super::{Context, Generator, GeneratorName, Output, RenderYaml};
use crate::markers::{Args, MarkerSpec, Name, PT, WEBHOOK_ARGS};
use crate::model::{CaSource, INJECT_CA_FROM, Webhook, WebhookConfiguration, WebhookKind};

pub(super) const GENERATOR: Generator = Generator {
    name: GeneratorName::Webhook,
    id: "webhook",
    about: "Mutating and validating webhook configurations from `+kubebuilder:webhook` markers (controller-gen's `webhook`).",
    requires: &[],
    markers: MARKERS,
    checks: &[],
    output: Output::Yaml {
        dir: "webhook",
        default_dir: "config/webhook",
        prepare,
    },
};

const MARKERS: &[MarkerSpec] = &[
    MarkerSpec {
        name: Name::Webhook,
        args: Args::Named(WEBHOOK_ARGS),
        levels: PT,
    },
    MarkerSpec {
        name: Name::WebhookConfiguration,
        args: Args::Named(&["!mutating", "name"]),
        levels: PT,
    },
];

/// controller-gen writes both configurations into one file (`manifests.<version>.yaml` for a
/// webhook version other than v1, which admissionregistration no longer serves).
const FILE_NAME: &str = "manifests.yaml";

/// controller-gen's defaults, which kubebuilder's kustomize config rewrites.
const DEFAULT_SERVICE_NAME: &str = "webhook-service";
const DEFAULT_SERVICE_NAMESPACE: &str = "system";

fn prepare(cx: &Context) -> RenderYaml {
    super::yaml_documents(
        FILE_NAME,
        configurations(
            &cx.api.webhooks,
            &cx.api.webhook_configurations,
            &cx.api.webhook_ca,
        ),
    )
}

/// The configurations, mutating first, each with its webhooks sorted by name (a stable
/// sort: webhooks of one name keep the order of their markers, as controller-gen's do).
fn configurations(
    webhooks: &[Webhook],
    named: &[WebhookConfiguration],
    ca: &CaSource,
) -> Vec<Value> {
    [
        (
            WebhookKind::Mutating,
            "MutatingWebhookConfiguration",
            "mutating-webhook-configuration",
        ),
        (
            WebhookKind::Validating,
            "ValidatingWebhookConfiguration",
            "validating-webhook-configuration",
        ),
    ]
    .into_iter()
    .filter_map(|(kind, object_kind, default_name)| {
        let mut of_kind: Vec<&Webhook> = webhooks.iter().filter(|w| w.kind == kind).collect();
        if of_kind.is_empty() {
            return None;
        }
        of_kind.sort_by(|a, b| a.name.cmp(&b.name));
        // resolve refuses two configuration markers of one kind, so the last is the only one.
        let name = named
            .iter()
            .rfind(|c| c.kind == kind)
            .and_then(|c| c.name.as_deref())
            .unwrap_or(default_name);
        let mut metadata = json!({ "name": name });
        if let CaSource::CertManager(certificate) = ca {
            metadata["annotations"] = json!({ INJECT_CA_FROM: certificate });
        }
        Some(json!({
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": object_kind,
            "metadata": metadata,
            "webhooks": of_kind.into_iter().map(|w| webhook(w, ca)).collect::<Vec<_>>(),
        }))
    })
    .collect()
}

/// One webhook as controller-gen's `ToMutatingWebhook`/`ToValidatingWebhook` builds it, with
/// the configured literal `caBundle`, its `patch=` applied last.
fn webhook(w: &Webhook, ca: &CaSource) -> Value {
    let mut out = Map::new();
    out.insert("name".into(), json!(w.name));
    // Each list of a rule is `omitempty` in admissionregistration/v1, as controller-gen
    // writes it: an empty one is left out.
    let operations: Vec<&str> = w.operations.iter().map(|o| o.as_str()).collect();
    let rule: Map<String, Value> = [
        ("apiGroups", json!(w.groups)),
        ("apiVersions", json!(w.versions)),
        ("operations", json!(operations)),
        ("resources", json!(w.resources)),
    ]
    .into_iter()
    .filter(|(_, v)| v.as_array().is_some_and(|a| !a.is_empty()))
    .map(|(k, v)| (k.to_owned(), v))
    .collect();
    out.insert("rules".into(), json!([rule]));
    out.insert("failurePolicy".into(), json!(w.failure_policy.as_str()));
    if let Some(p) = w.match_policy {
        out.insert("matchPolicy".into(), json!(p.as_str()));
    }
    let client_config = match (&w.path, &w.url) {
        (Some(path), _) => {
            let mut service = Map::new();
            service.insert(
                "name".into(),
                json!(w.service_name.as_deref().unwrap_or(DEFAULT_SERVICE_NAME)),
            );
            service.insert(
                "namespace".into(),
                json!(
                    w.service_namespace
                        .as_deref()
                        .unwrap_or(DEFAULT_SERVICE_NAMESPACE)
                ),
            );
            service.insert("path".into(), json!(path));
            if let Some(port) = w.service_port {
                service.insert("port".into(), json!(port));
            }
            json!({ "service": service })
        }
        // resolve makes sure of exactly one of `path` and `url`.
        (None, url) => json!({ "url": url }),
    };
    let mut client_config = client_config;
    if let CaSource::Bundle(pem) = ca {
        client_config["caBundle"] = json!(crate::resolve::base64(pem));
    }
    out.insert("clientConfig".into(), client_config);
    out.insert("sideEffects".into(), json!(w.side_effects.as_str()));
    if let Some(t) = w.timeout_seconds {
        out.insert("timeoutSeconds".into(), json!(t));
    }
    out.insert(
        "admissionReviewVersions".into(),
        json!(w.admission_review_versions),
    );
    if w.kind == WebhookKind::Mutating
        && let Some(p) = w.reinvocation_policy
    {
        out.insert("reinvocationPolicy".into(), json!(p.as_str()));
    }
    let mut out = Value::Object(out);
    if let Some(patch) = &w.patch {
        let patch: Value = serde_json::from_str(patch).expect("resolve checked the patch");
        merge_patch(&mut out, &patch);
    }
    out
}

/// controller-gen's strategic merge patch over a webhook, for what resolve lets through
/// (`resolve::manifests::check_webhook_patch`): objects merge key by key, `null` removes a
/// key, lists are replaced, except `matchConditions`, merged by `name` (its patch strategy
/// in admissionregistration/v1).
fn merge_patch(target: &mut Value, patch: &Value) {
    let (Value::Object(target), Value::Object(patch)) = (target, patch) else {
        return;
    };
    for (key, value) in patch {
        match value {
            Value::Null => {
                target.remove(key);
            }
            Value::Array(items) if key == "matchConditions" => {
                let existing = target
                    .entry(key.clone())
                    .or_insert_with(|| Value::Array(vec![]));
                let Value::Array(existing) = existing else {
                    *existing = value.clone();
                    continue;
                };
                for item in items {
                    match existing
                        .iter_mut()
                        .find(|e| e.get("name").is_some() && e.get("name") == item.get("name"))
                    {
                        Some(e) => merge_patch(e, item),
                        None => existing.push(item.clone()),
                    }
                }
            }
            Value::Object(_) => {
                let slot = target
                    .entry(key.clone())
                    .or_insert_with(|| Value::Object(Map::new()));
                if !slot.is_object() {
                    *slot = Value::Object(Map::new());
                }
                merge_patch(slot, value);
            }
            _ => {
                target.insert(key.clone(), value.clone());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_patch_merges_objects_replaces_lists_and_merges_match_conditions_by_name() {
        let mut w = json!({
            "name": "w",
            "rules": [{"apiGroups": ["a"]}],
            "timeoutSeconds": 10,
            "matchConditions": [{"name": "a", "expression": "true"}],
        });
        merge_patch(
            &mut w,
            &json!({
                "rules": [{"apiGroups": ["b"]}],
                "timeoutSeconds": null,
                "namespaceSelector": {"matchLabels": {"env": "prod"}},
                "matchConditions": [{"name": "a", "expression": "false"}, {"name": "b", "expression": "true"}],
            }),
        );
        assert_eq!(
            w,
            json!({
                "name": "w",
                "rules": [{"apiGroups": ["b"]}],
                "namespaceSelector": {"matchLabels": {"env": "prod"}},
                "matchConditions": [
                    {"name": "a", "expression": "false"},
                    {"name": "b", "expression": "true"},
                ],
            })
        );
    }
}
