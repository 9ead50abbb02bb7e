//! Markers that become cluster manifests other than CRDs: `+kubebuilder:rbac` rules and
//! `+kubebuilder:webhook`/`webhookconfiguration` admission webhooks, read into the model
//! with every check controller-gen makes.

use crate::diagnostics::Diagnostic;
use crate::markers::{Marker, Name};
use crate::model::*;

/// A `+kubebuilder:rbac` marker as controller-gen reads it (pkg/rbac `Rule`).
pub fn rbac_rule(m: &Marker) -> Result<RbacRule, Diagnostic> {
    let rule = RbacRule {
        groups: m.list_arg("groups"),
        resources: m.list_arg("resources"),
        resource_names: m.list_arg("resourceNames"),
        verbs: m.list_arg("verbs"),
        urls: m.list_arg("urls"),
        namespace: m.arg("namespace").map(str::to_owned),
        role_name: m.arg("roleName").map(str::to_owned),
        loc: m.loc.clone(),
    };
    if rule.verbs.iter().all(|v| v.trim().is_empty()) {
        return Err(m
            .error(format!("`+{}` grants no verbs", Name::Rbac))
            .with_hint("e.g. `verbs=get;list;watch`"));
    }
    if rule.resources.is_empty() && rule.urls.is_empty() {
        return Err(m
            .error(format!(
                "`+{}` names neither resources nor urls",
                Name::Rbac
            ))
            .with_hint(
                "e.g. `groups=apps,resources=deployments,verbs=get` or `urls=/metrics,verbs=get`",
            ));
    }
    if !rule.urls.is_empty() && (!rule.resources.is_empty() || rule.namespace.is_some()) {
        return Err(m
            .error(format!(
                "`+{}` mixes non-resource `urls` with resources or a namespace",
                Name::Rbac
            ))
            .with_hint("non-resource URLs are cluster-wide; write two markers"));
    }
    Ok(rule)
}

/// A `+kubebuilder:webhook` marker as controller-gen reads it (pkg/webhook `Config`), with the
/// checks controller-gen makes when it writes the v1 configuration.
pub fn webhook(m: &Marker) -> Result<Webhook, Diagnostic> {
    let kind = if m.bool_arg("mutating")? {
        WebhookKind::Mutating
    } else {
        WebhookKind::Validating
    };
    // Required by the marker's grammar, so the parser has made sure it is there.
    let failure_policy = m
        .choice_arg("failurePolicy", FailurePolicy::CHOICES)?
        .ok_or_else(|| m.error(format!("`+{}` needs `failurePolicy`", Name::Webhook)))?;
    let side_effects = match m.arg("sideEffects").map(str::trim) {
        None => {
            return Err(m
                .error(format!("`+{}` needs `sideEffects`", Name::Webhook))
                .with_hint("admissionregistration.k8s.io/v1 requires it: None or NoneOnDryRun"));
        }
        Some(v) => match SideEffects::CHOICES
            .iter()
            .find(|(s, _)| s.eq_ignore_ascii_case(v))
        {
            Some((_, s)) => *s,
            None => {
                // admissionregistration.k8s.io/v1beta1's values, named so the error can say why.
                const V1BETA1_ONLY: &[&str] = &["Some", "Unknown"];
                return Err(match V1BETA1_ONLY.iter().find(|s| s.eq_ignore_ascii_case(v)) {
                    Some(s) => m
                        .error(format!(
                            "sideEffects `{s}` is not allowed in admissionregistration.k8s.io/v1"
                        ))
                        .with_hint("use None or NoneOnDryRun"),
                    None => m
                        .error(format!("invalid sideEffects `{v}`"))
                        .with_hint("allowed values: None, NoneOnDryRun, Some, Unknown"),
                });
            }
        },
    };
    let timeout_seconds = m.int_arg("timeoutSeconds")?;
    if let Some(t) = timeout_seconds
        && !(1..=30).contains(&t)
    {
        return Err(m
            .error(format!("timeoutSeconds {t} is out of range"))
            .with_hint("the API server takes 1 to 30 seconds"));
    }
    let mut operations = vec![];
    for v in m.list_arg("verbs") {
        match Operation::CHOICES
            .iter()
            .find(|(o, _)| o.eq_ignore_ascii_case(&v))
        {
            Some((_, o)) => operations.push(*o),
            None => {
                let allowed: Vec<String> = Operation::CHOICES
                    .iter()
                    .map(|(o, _)| o.to_lowercase())
                    .collect();
                return Err(m
                    .error(format!("invalid webhook verb `{v}`"))
                    .with_hint(format!("allowed values: {}", allowed.join(", "))));
            }
        }
    }
    let path = m.arg("path").map(str::to_owned);
    let url = m.arg("url").map(str::to_owned);
    if path.is_some() == url.is_some() {
        return Err(m
            .error(format!("`+{}` needs exactly one of `path` and `url`", Name::Webhook))
            .with_hint("`path=/validate-...` for a webhook served by the service, `url=` for one outside the cluster"));
    }
    let webhook_versions = m.list_arg("webhookVersions");
    if let Some(v) = webhook_versions.iter().find(|v| *v != "v1") {
        return Err(m
            .error(format!("unsupported webhookVersions `{v}`"))
            .with_hint("only v1 is supported"));
    }
    let admission_review_versions = m.list_arg("admissionReviewVersions");
    if admission_review_versions
        .iter()
        .all(|v| v.trim().is_empty())
    {
        return Err(m
            .error("`admissionReviewVersions` is empty")
            .with_hint("e.g. `admissionReviewVersions=v1`"));
    }
    Ok(Webhook {
        kind,
        name: m.arg("name").unwrap_or_default().to_owned(),
        failure_policy,
        match_policy: m.choice_arg("matchPolicy", MatchPolicy::CHOICES)?,
        side_effects,
        timeout_seconds,
        groups: m
            .list_arg("groups")
            .into_iter()
            // controller-gen lets `core` stand for the core group.
            .map(|g| if g == "core" { String::new() } else { g })
            .collect(),
        resources: m.list_arg("resources"),
        operations,
        versions: m.list_arg("versions"),
        service_name: m.arg("serviceName").map(str::to_owned),
        service_namespace: m.arg("serviceNamespace").map(str::to_owned),
        path,
        url,
        service_port: m.int_arg("servicePort")?,
        webhook_versions,
        admission_review_versions,
        reinvocation_policy: m.choice_arg("reinvocationPolicy", ReinvocationPolicy::CHOICES)?,
        patch: match m.arg("patch") {
            Some(p) => Some(webhook_patch(m, p, kind)?),
            None => None,
        },
        loc: m.loc.clone(),
    })
}

/// The fields of admissionregistration/v1's MutatingWebhook (ValidatingWebhook has all but
/// `reinvocationPolicy`), which a `patch=` may set.
const WEBHOOK_FIELDS: &[&str] = &[
    "admissionReviewVersions",
    "clientConfig",
    "failurePolicy",
    "matchConditions",
    "matchPolicy",
    "name",
    "namespaceSelector",
    "objectSelector",
    "reinvocationPolicy",
    "rules",
    "sideEffects",
    "timeoutSeconds",
];

/// A webhook's `patch=`: a JSON object over the generated webhook, as controller-gen takes
/// it (a strategic merge patch: objects merge, `null` removes, lists are replaced but
/// `matchConditions`, merged by name). controller-gen decodes it strictly, so a key the
/// webhook does not have is an error here too; strategic-merge directives (`$patch`,
/// `$retainKeys`, ...) are refused, as the generator applies none.
fn webhook_patch(m: &Marker, patch: &str, kind: WebhookKind) -> Result<String, Diagnostic> {
    let value: serde_json::Value = serde_json::from_str(patch).map_err(|e| {
        m.error(format!("`patch` is not JSON: {e}"))
            .with_hint("quote the patch with backticks: patch=`{\"namespaceSelector\":{...}}`")
    })?;
    let Some(fields) = value.as_object() else {
        return Err(m
            .error("`patch` is not a JSON object")
            .with_hint("the patch is merged into the webhook: `{\"objectSelector\":{...}}`"));
    };
    for key in fields.keys() {
        let known = WEBHOOK_FIELDS.contains(&key.as_str())
            && (key != "reinvocationPolicy" || kind == WebhookKind::Mutating);
        if key.starts_with('$') {
            return Err(m
                .error(format!(
                    "`patch` uses the strategic-merge directive `{key}`"
                ))
                .with_hint("write the fields as they should be; `null` removes one"));
        }
        if !known {
            let which = if key == "reinvocationPolicy" {
                "a validating webhook"
            } else {
                "a webhook"
            };
            return Err(m
                .error(format!("`patch` sets `{key}`, which {which} does not have"))
                .with_hint(format!("the fields are {}", WEBHOOK_FIELDS.join(", "))));
        }
    }
    fn has_directive(v: &serde_json::Value) -> bool {
        match v {
            serde_json::Value::Object(o) => {
                o.keys().any(|k| k.starts_with('$')) || o.values().any(has_directive)
            }
            serde_json::Value::Array(a) => a.iter().any(has_directive),
            _ => false,
        }
    }
    if has_directive(&value) {
        return Err(m
            .error("`patch` uses a strategic-merge directive (a `$` key)")
            .with_hint("write the fields as they should be; `null` removes one"));
    }
    Ok(patch.to_owned())
}

/// At most one `+kubebuilder:webhookconfiguration` of each kind: controller-gen refuses a
/// second ("duplicate mutating ..."), as the webhooks of a kind go into one configuration.
pub fn check_webhook_configurations(configurations: &[WebhookConfiguration]) -> Vec<Diagnostic> {
    let mut out = vec![];
    for (i, c) in configurations.iter().enumerate() {
        if let Some(first) = configurations[..i].iter().find(|f| f.kind == c.kind) {
            let kind = match c.kind {
                WebhookKind::Mutating => "mutating",
                WebhookKind::Validating => "validating",
            };
            out.push(
                Diagnostic::new(
                    c.loc.clone(),
                    format!("a second {kind} `+{}`", Name::WebhookConfiguration),
                )
                .with_hint(format!(
                    "the {kind} webhooks go into one configuration, named at {}",
                    first.loc
                )),
            );
        }
    }
    out
}

/// A `+kubebuilder:webhookconfiguration` marker.
pub fn webhook_configuration(m: &Marker) -> Result<WebhookConfiguration, Diagnostic> {
    Ok(WebhookConfiguration {
        kind: if m.bool_arg("mutating")? {
            WebhookKind::Mutating
        } else {
            WebhookKind::Validating
        },
        name: m.arg("name").map(str::to_owned),
        loc: m.loc.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostics::Location;
    use crate::markers::Level;

    fn loc() -> Location {
        Location::new("x.rs", 1, 1)
    }

    fn parse_line(line: &str, level: Level, loc: Location) -> Result<Option<Marker>, Diagnostic> {
        crate::markers::parse_line(line, level, loc, crate::generators::marker_table())
    }

    #[test]
    fn rbac_and_webhook_markers_read_as_controller_gen_does() {
        let m = parse_line(
            "+kubebuilder:rbac:groups=\"\",resources=pods;services,verbs=get;list,namespace=ns",
            Level::Package,
            loc(),
        )
        .unwrap()
        .unwrap();
        let r = rbac_rule(&m).unwrap();
        assert_eq!(r.groups, vec![""]);
        assert_eq!(r.resources, vec!["pods", "services"]);
        assert_eq!(r.verbs, vec!["get", "list"]);
        assert_eq!(r.namespace.as_deref(), Some("ns"));
        let m = parse_line(
            "+kubebuilder:webhook:path=/mutate,mutating=true,failurePolicy=ignore,sideEffects=none,groups=core;apps,resources=pods,verbs=Create;UPDATE,versions=v1,name=m.example.com,admissionReviewVersions=v1;v1beta1,timeoutSeconds=5",
            Level::Type,
            loc(),
        )
        .unwrap()
        .unwrap();
        let w = webhook(&m).unwrap();
        assert_eq!(w.kind, WebhookKind::Mutating);
        assert_eq!(w.failure_policy, FailurePolicy::Ignore);
        assert_eq!(w.side_effects, SideEffects::None);
        assert_eq!(w.groups, vec!["", "apps"]);
        assert_eq!(w.operations, vec![Operation::Create, Operation::Update]);
        assert_eq!(w.admission_review_versions, vec!["v1", "v1beta1"]);
        assert_eq!(w.timeout_seconds, Some(5));
        let base = "+kubebuilder:webhook:path=/v,mutating=false,failurePolicy=Fail,groups=a,\
                    resources=b,verbs=create,versions=v1,name=v.example.com,\
                    admissionReviewVersions=v1";
        for (bad, says) in [
            ("sideEffects=None,timeoutSeconds=60", "out of range"),
            ("sideEffects=Some", "not allowed"),
            ("sideEffects=None,matchPolicy=Fuzzy", "invalid matchPolicy"),
            (
                "sideEffects=None,webhookVersions=v1beta1",
                "unsupported webhookVersions",
            ),
            ("timeoutSeconds=5", "needs `sideEffects`"),
        ] {
            let m = parse_line(&format!("{base},{bad}"), Level::Package, loc())
                .unwrap()
                .unwrap();
            let e = webhook(&m).unwrap_err();
            assert!(e.message.contains(says), "{bad}: {e}");
        }
    }
}
