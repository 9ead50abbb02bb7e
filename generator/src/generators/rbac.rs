//! The `rbac` generator: the roles a controller needs, from `+kubebuilder:rbac` markers, as
//! controller-gen's `rbac` generator writes them (`role.yaml`: a ClusterRole per role name,
//! a Role per namespace and role name), rules merged and ordered by its normalization so the
//! output equals controller-gen's for the same markers.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Value, json};

use super::{Context, Generator, GeneratorName, Output, RenderYaml};
use crate::markers::{Args, MarkerSpec, Name, PT, RBAC_ARGS};
use crate::model::RbacRule;

pub(super) const GENERATOR: Generator = Generator {
    name: GeneratorName::Rbac,
    id: "rbac",
    about: "A ClusterRole (a Role per namespace) from `+kubebuilder:rbac` markers (controller-gen's `rbac`).",
    requires: &[],
    markers: MARKERS,
    checks: &[],
    output: Output::Yaml {
        dir: "rbac",
        default_dir: "config/rbac",
        prepare,
    },
};

/// The role name of rules without `roleName=`: kubebuilder's scaffold passes
/// `rbac:roleName=manager-role` to controller-gen.
pub(crate) const DEFAULT_ROLE_NAME: &str = "manager-role";

/// controller-gen writes every role into one file.
const FILE_NAME: &str = "role.yaml";

fn prepare(cx: &Context) -> RenderYaml {
    super::yaml_documents(FILE_NAME, roles(&cx.api.rbac_rules))
}

/// One rule as controller-gen keeps it while merging: every list deduplicated and sorted.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
struct Rule {
    groups: BTreeSet<String>,
    resources: BTreeSet<String>,
    resource_names: BTreeSet<String>,
    urls: BTreeSet<String>,
    verbs: BTreeSet<String>,
}

/// Rules with equal keys merge into one: `key` is the rule with the list being merged
/// emptied, `merge` moves that list of a rule into the one already kept.
fn merge_by(
    rules: Vec<Rule>,
    key: impl Fn(&Rule) -> Rule,
    merge: impl Fn(&mut Rule, Rule),
) -> Vec<Rule> {
    let mut kept: BTreeMap<Rule, Rule> = BTreeMap::new();
    for r in rules {
        match kept.get_mut(&key(&r)) {
            Some(existing) => merge(existing, r),
            None => {
                kept.insert(key(&r), r);
            }
        }
    }
    kept.into_values().collect()
}

/// controller-gen's `NormalizeRules`: one rule per resource; rules with the same groups,
/// resources, names and URLs share verbs; then rules equal but for their resources, then
/// their groups, then their URLs merge; ordered by `groups + resources + names + urls`.
fn normalize(rules: Vec<Rule>) -> Vec<Rule> {
    let without = |f: fn(&mut Rule) -> &mut BTreeSet<String>| {
        move |r: &Rule| {
            let mut k = r.clone();
            f(&mut k).clear();
            k
        }
    };
    let rules = merge_by(rules, without(|r| &mut r.verbs), |e, r| {
        e.verbs.extend(r.verbs)
    });
    let rules = merge_by(rules, without(|r| &mut r.resources), |e, r| {
        e.resources.extend(r.resources)
    });
    let rules = merge_by(rules, without(|r| &mut r.groups), |e, r| {
        e.groups.extend(r.groups)
    });
    let mut rules = merge_by(rules, without(|r| &mut r.urls), |e, r| {
        e.urls.extend(r.urls)
    });
    let joined = |s: &BTreeSet<String>| s.iter().cloned().collect::<Vec<_>>().join("&");
    rules.sort_by_cached_key(|r| {
        format!(
            "{} + {} + {} + {}",
            joined(&r.groups),
            joined(&r.resources),
            joined(&r.resource_names),
            joined(&r.urls)
        )
    });
    for r in &mut rules {
        if r.verbs.contains("*") {
            r.verbs = BTreeSet::from(["*".to_owned()]);
        }
    }
    rules
}

/// The roles of the markers, as JSON objects in controller-gen's order: by namespace
/// (cluster-wide first), then role name.
fn roles(markers: &[RbacRule]) -> Vec<Value> {
    let mut by_role: BTreeMap<(String, String), Vec<Rule>> = BTreeMap::new();
    for m in markers {
        let role = m
            .role_name
            .clone()
            .unwrap_or_else(|| DEFAULT_ROLE_NAME.to_owned());
        let namespace = m.namespace.clone().unwrap_or_default();
        let set = |v: &[String]| v.iter().cloned().collect::<BTreeSet<String>>();
        let groups: BTreeSet<String> = m
            .groups
            .iter()
            .map(|g| {
                if g == "core" {
                    String::new()
                } else {
                    g.clone()
                }
            })
            .collect();
        let base = Rule {
            groups,
            resources: BTreeSet::new(),
            resource_names: set(&m.resource_names),
            urls: set(&m.urls),
            verbs: set(&m.verbs),
        };
        let rules = by_role.entry((namespace, role)).or_default();
        if m.resources.is_empty() {
            rules.push(base);
        } else {
            for resource in &m.resources {
                rules.push(Rule {
                    resources: BTreeSet::from([resource.clone()]),
                    ..base.clone()
                });
            }
        }
    }
    let list = |s: &BTreeSet<String>| s.iter().cloned().collect::<Vec<_>>();
    by_role
        .into_iter()
        .filter_map(|((namespace, name), rules)| {
            let rules: Vec<Value> = normalize(rules)
                .iter()
                .map(|r| {
                    // Empty lists are left out, as Go's `omitempty` leaves nil slices out.
                    let mut rule = serde_json::Map::new();
                    for (field, values) in [
                        ("apiGroups", &r.groups),
                        ("nonResourceURLs", &r.urls),
                        ("resourceNames", &r.resource_names),
                        ("resources", &r.resources),
                        ("verbs", &r.verbs),
                    ] {
                        if !values.is_empty() || field == "verbs" {
                            rule.insert(field.to_owned(), json!(list(values)));
                        }
                    }
                    Value::Object(rule)
                })
                .collect();
            if rules.is_empty() {
                return None;
            }
            Some(if namespace.is_empty() {
                json!({
                    "apiVersion": "rbac.authorization.k8s.io/v1",
                    "kind": "ClusterRole",
                    "metadata": { "name": name },
                    "rules": rules,
                })
            } else {
                json!({
                    "apiVersion": "rbac.authorization.k8s.io/v1",
                    "kind": "Role",
                    "metadata": { "name": name, "namespace": namespace },
                    "rules": rules,
                })
            })
        })
        .collect()
}

/// controller-gen's RBAC marker.
pub(super) const MARKERS: &[MarkerSpec] = &[MarkerSpec {
    name: Name::Rbac,
    args: Args::Named(RBAC_ARGS),
    levels: PT,
}];
