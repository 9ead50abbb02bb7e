//! Kubernetes types in imported schemas: an object node equal to the schema
//! `generate` embeds for a k8s-openapi type (controller-gen's, of the chosen Kubernetes
//! version, from `kubernetes/schemas`) becomes that type instead of a copy. Only an
//! exact match counts (every keyword below the node, descriptions included): anything less
//! stays a generated struct, so the round trip holds.

use std::collections::BTreeMap;
use std::sync::{Arc, LazyLock, Mutex};

use serde_json::{Map, Value};

use crate::KubernetesVersion;

/// Candidates by signature (the sorted top-level property names): (k8s-openapi path, the
/// inlined schema without its top-level description, that description).
type Index = BTreeMap<String, Vec<(String, Value, Option<String>)>>;

static INDEXES: LazyLock<Mutex<BTreeMap<KubernetesVersion, Arc<Index>>>> =
    LazyLock::new(|| Mutex::new(BTreeMap::new()));

fn signature(n: &Map<String, Value>) -> Option<String> {
    let props = n.get("properties")?.as_object()?;
    let mut keys: Vec<&str> = props.keys().map(String::as_str).collect();
    keys.sort_unstable();
    Some(keys.join(","))
}

/// Whether the schema holds CEL rules that compare with `oldSelf`: `generate` drops such
/// rules of embedded types where the API server cannot correlate them, so only the
/// position decides the output; such types are left to structs.
fn has_transition_rules(v: &Value) -> bool {
    match v {
        Value::String(s) => s.contains("oldSelf"),
        Value::Array(a) => a.iter().any(has_transition_rules),
        Value::Object(o) => o.values().any(has_transition_rules),
        _ => false,
    }
}

fn index(v: KubernetesVersion) -> Arc<Index> {
    let mut cache = INDEXES.lock().unwrap_or_else(|e| e.into_inner());
    cache
        .entry(v)
        .or_insert_with(|| {
            let data = crate::kubernetes::schemas::data(v);
            let mut index = Index::new();
            for path in data.types.keys() {
                let Ok(Value::Object(mut schema)) = crate::kubernetes::schemas::schema(v, path)
                else {
                    continue;
                };
                if has_transition_rules(&Value::Object(schema.clone())) {
                    continue;
                }
                let Some(sig) = signature(&schema) else {
                    continue;
                };
                let description = schema
                    .remove("description")
                    .and_then(|d| d.as_str().map(str::to_owned));
                index.entry(sig).or_default().push((
                    path.clone(),
                    Value::Object(schema),
                    description,
                ));
            }
            Arc::new(index)
        })
        .clone()
}

/// The k8s-openapi type whose schema equals node `n` (without its description and the
/// keywords a field sets: default, nullable), with the type's own description. When
/// several types match, the one whose description the node has, else the first by path.
pub fn matching(v: KubernetesVersion, n: &Map<String, Value>) -> Option<(String, Option<String>)> {
    let sig = signature(n)?;
    let index = index(v);
    let candidates = index.get(&sig)?;
    let mut stripped = n.clone();
    for k in ["description", "default", "nullable"] {
        stripped.remove(k);
    }
    let stripped = Value::Object(stripped);
    let found: Vec<&(String, Value, Option<String>)> = candidates
        .iter()
        .filter(|(_, schema, _)| *schema == stripped)
        .collect();
    let wanted = n.get("description").and_then(Value::as_str);
    let best = found
        .iter()
        .find(|(_, _, d)| d.as_deref() == wanted)
        .or(found.first())?;
    Some((format!("::k8s_openapi::{}", best.0), best.2.clone()))
}
