//! Schemas of embedded Kubernetes types, exactly as controller-gen emits them for each
//! supported Kubernetes version (validations, defaults, list and map semantics included),
//! from the data files `schemas/v1_NN.json` that `hack/gen-k8s-schemas.sh` derives from
//! upstream (k8s.io/api of that version). The newest version's file holds every type; an
//! older version's holds what differs from it ([`Data::base`]), which keeps five versions
//! about the size of one.
//!
//! The data is de-inlined to stay small: each type stores its own level, and where a nested
//! position holds another stored type it stores `{"$ref": "<path>", ...overlay}` instead.
//! The overlay's keywords replace the referenced schema's top-level ones (what controller-gen
//! takes from the field rather than the type: the field's description, listType, defaults);
//! a `null` removes one. [`inline`] expands a type; the script checks, for every type, that
//! expanding it reproduces controller-gen's output exactly.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::KubernetesVersion;

/// The key of a reference to another stored type.
pub const REF: &str = "$ref";

/// The data file's content.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Data {
    /// Where the data comes from (tool versions), for humans.
    pub source: String,
    /// For an older version: the newest version's `source`, whose types this data changes.
    /// `None` in the newest version's file, which holds every type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base: Option<String>,
    /// Schemas by k8s-openapi path (`api::core::v1::PodSpec`), de-inlined. For an older
    /// version, only those that differ from the newest version's or that it lacks.
    pub types: BTreeMap<String, Value>,
    /// For an older version: the newest version's types it does not have.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub removed: Vec<String>,
    /// Types controller-gen cannot render, with the reason (complete in every file).
    pub unsupported: BTreeMap<String, String>,
}

impl Data {
    /// This (older) version's full data: `newest` with this file's changes applied.
    #[must_use]
    pub fn apply_to(&self, newest: &Data) -> Data {
        let mut types = newest.types.clone();
        for p in &self.removed {
            types.remove(p);
        }
        types.extend(self.types.iter().map(|(k, v)| (k.clone(), v.clone())));
        Data {
            source: self.source.clone(),
            base: None,
            types,
            removed: vec![],
            unsupported: self.unsupported.clone(),
        }
    }
}

/// The data file of `v`, as embedded.
fn file(v: KubernetesVersion) -> &'static str {
    match v {
        KubernetesVersion::V1_33 => include_str!("schemas/v1_33.json"),
        KubernetesVersion::V1_34 => include_str!("schemas/v1_34.json"),
        KubernetesVersion::V1_35 => include_str!("schemas/v1_35.json"),
        KubernetesVersion::V1_36 => include_str!("schemas/v1_36.json"),
        KubernetesVersion::V1_37 => include_str!("schemas/v1_37.json"),
    }
}

fn parse(v: KubernetesVersion) -> Data {
    serde_json::from_str(file(v)).unwrap_or_else(|e| {
        panic!(
            "schemas/{}.json is written by hack/gen-k8s-schemas.sh and checked there: {e}",
            v.k8s_openapi_feature()
        )
    })
}

static DATA: [LazyLock<Data>; 5] = [
    LazyLock::new(|| load(KubernetesVersion::ALL[0])),
    LazyLock::new(|| load(KubernetesVersion::ALL[1])),
    LazyLock::new(|| load(KubernetesVersion::ALL[2])),
    LazyLock::new(|| load(KubernetesVersion::ALL[3])),
    LazyLock::new(|| load(KubernetesVersion::ALL[4])),
];

fn load(v: KubernetesVersion) -> Data {
    let d = parse(v);
    if v == KubernetesVersion::NEWEST {
        d
    } else {
        d.apply_to(data(KubernetesVersion::NEWEST))
    }
}

/// The embedded data of Kubernetes `v`, parsed once per process (and only for the versions a
/// process uses).
pub fn data(v: KubernetesVersion) -> &'static Data {
    let i = KubernetesVersion::ALL
        .iter()
        .position(|x| *x == v)
        .expect("ALL lists every version");
    &DATA[i]
}

/// A data file indexed by type, each type's JSON kept as text until it is first asked
/// for: a run needs the names (which paths are Kubernetes types) and the few types its API
/// embeds, and parsing the newest file whole cost 19 M instructions, 3.6% of a 100-kind
/// CRD run. [`data`] still parses everything, for the callers that walk every type.
struct Index {
    /// `Data::types`, each parsed on first use.
    types: BTreeMap<&'static str, Stored>,
    /// `Data::removed`.
    removed: Vec<&'static str>,
    /// `Data::unsupported`.
    unsupported: BTreeMap<String, String>,
}

struct Stored {
    /// The type's JSON text.
    raw: &'static str,
    parsed: std::sync::OnceLock<Value>,
}

impl Stored {
    fn value(&self) -> &Value {
        self.parsed.get_or_init(|| {
            serde_json::from_str(self.raw).expect("a type's text in the data file is JSON")
        })
    }
}

/// The data file indexed by its lines rather than by a JSON parser: scanning the newest
/// file's 1.4 MB as JSON (serde_json's `RawValue`) cost 10 M instructions, 2.5% of a
/// 100-kind CRD run, where searching it for the lines of its 768 types costs a tenth. The
/// files are serde_json's pretty output, as `hack/gen-k8s-schemas.sh` writes them; a unit
/// test holds this index to serde_json's for every embedded file.
fn index_file(v: KubernetesVersion) -> Index {
    let bad = || -> ! {
        panic!(
            "schemas/{}.json is not the pretty-printed JSON hack/gen-k8s-schemas.sh writes",
            v.k8s_openapi_feature()
        )
    };
    let top = pretty_members(file(v), 2).unwrap_or_else(|| bad());
    let member = |name: &str| top.iter().find(|(k, _)| *k == name).map(|&(_, v)| v);
    let types = pretty_members(member("types").unwrap_or_else(|| bad()), 4)
        .unwrap_or_else(|| bad())
        .into_iter()
        .map(|(k, raw)| {
            let parsed = std::sync::OnceLock::new();
            (k, Stored { raw, parsed })
        })
        .collect();
    let removed = member("removed").map_or_else(Vec::new, |r| {
        serde_json::from_str(r).unwrap_or_else(|_| bad())
    });
    let unsupported = serde_json::from_str(member("unsupported").unwrap_or_else(|| bad()))
        .unwrap_or_else(|_| bad());
    Index {
        types,
        removed,
        unsupported,
    }
}

/// The members of a JSON object `text` (from its `{` to its `}`) as serde_json's pretty
/// printer writes it (two spaces a level, one member a line, no raw newline inside a
/// string), whose member lines are indented by `indent`: each key and its value's text.
/// A member's line is the only kind of line that starts with `indent` spaces and a `"`
/// (deeper lines have more spaces, a value's closing line a bracket), so they are found by
/// that pattern alone, and each value runs to the line before the next member's (less its
/// comma), the last one to the line that closes the object. `None` when a key is not plain
/// (an escape) or a member's line does not hold its key.
fn pretty_members(text: &'static str, indent: usize) -> Option<Vec<(&'static str, &'static str)>> {
    let body = text.trim_end().strip_suffix('}')?;
    let pattern = format!("\n{:indent$}\"", "");
    let starts: Vec<usize> = memchr::memmem::find_iter(body.as_bytes(), pattern.as_bytes())
        .map(|i| i + 1)
        .collect();
    let ends = starts.iter().skip(1).copied().chain([body.len()]);
    starts
        .iter()
        .zip(ends)
        .map(|(&start, end)| {
            let member = body[start + indent + 1..end].trim_end();
            let member = member.strip_suffix(',').unwrap_or(member);
            let (key, value) = member.split_once("\": ")?;
            (!key.contains(['\\', '"', '\n'])).then_some((key, value))
        })
        .collect()
}

static INDEX: [LazyLock<Index>; 5] = [
    LazyLock::new(|| index_file(KubernetesVersion::ALL[0])),
    LazyLock::new(|| index_file(KubernetesVersion::ALL[1])),
    LazyLock::new(|| index_file(KubernetesVersion::ALL[2])),
    LazyLock::new(|| index_file(KubernetesVersion::ALL[3])),
    LazyLock::new(|| index_file(KubernetesVersion::ALL[4])),
];

fn index(v: KubernetesVersion) -> &'static Index {
    let i = KubernetesVersion::ALL
        .iter()
        .position(|x| *x == v)
        .expect("ALL lists every version");
    &INDEX[i]
}

/// The stored (de-inlined) schema of `path` in Kubernetes `v`: what `data(v).types` holds,
/// as [`Data::apply_to`] makes it (an older version's own entry, else the newest's unless
/// removed), parsing only this type.
fn stored(v: KubernetesVersion, path: &str) -> Option<&'static Value> {
    let own = index(v);
    if let Some(s) = own.types.get(path) {
        return Some(s.value());
    }
    if v == KubernetesVersion::NEWEST || own.removed.contains(&path) {
        return None;
    }
    index(KubernetesVersion::NEWEST)
        .types
        .get(path)
        .map(Stored::value)
}

/// Whether `path` (below `k8s_openapi::`) has a schema in Kubernetes `v`.
pub fn contains(v: KubernetesVersion, path: &str) -> bool {
    let own = index(v);
    own.types.contains_key(path)
        || (v != KubernetesVersion::NEWEST
            && !own.removed.contains(&path)
            && index(KubernetesVersion::NEWEST).types.contains_key(path))
}

/// Why controller-gen has no schema for `path` in Kubernetes `v`, if it is a k8s-openapi
/// type it cannot render.
pub fn unsupported(v: KubernetesVersion, path: &str) -> Option<&'static str> {
    index(v).unsupported.get(path).map(String::as_str)
}

/// The supported versions that have a schema for `path`, for a hint when the chosen one
/// does not.
pub fn versions_with(path: &str) -> Vec<KubernetesVersion> {
    KubernetesVersion::ALL
        .into_iter()
        .filter(|v| contains(*v, path))
        .collect()
}

/// The full (inlined) schema of the type at `path` in Kubernetes `v`, as controller-gen
/// emits it for a field of that type without a doc comment or markers of its own.
pub fn schema(v: KubernetesVersion, path: &str) -> Result<Value, String> {
    inline_memo(&|p| stored(v, p), path, &mut BTreeMap::new(), &mut vec![])
}

/// The path of `ObjectMeta` among the stored types.
pub const OBJECT_META: &str = "apimachinery::pkg::apis::meta::v1::ObjectMeta";

/// What controller-gen's `crd:generateEmbeddedObjectMeta=true` writes for an embedded
/// `ObjectMeta` (pkg/crd/known_types.go, `ObjectMetaPackages`): the fields a CRD may
/// validate, where the default is a bare `type: object`.
pub fn embedded_object_meta() -> Value {
    let strings =
        || serde_json::json!({"type": "object", "additionalProperties": {"type": "string"}});
    serde_json::json!({
        "type": "object",
        "properties": {
            "annotations": strings(),
            "finalizers": {"type": "array", "items": {"type": "string"}},
            "labels": strings(),
            "name": {"type": "string"},
            "namespace": {"type": "string"},
        },
    })
}

/// [`schema`], with every embedded `ObjectMeta` as [`embedded_object_meta`] writes it.
pub fn schema_with_object_meta(v: KubernetesVersion, path: &str) -> Result<Value, String> {
    let mut memo = BTreeMap::from([(OBJECT_META.to_owned(), embedded_object_meta())]);
    inline_memo(&|p| stored(v, p), path, &mut memo, &mut vec![])
}

/// Expand the stored type `path` of `types`, following its references.
pub fn inline(types: &BTreeMap<String, Value>, path: &str) -> Result<Value, String> {
    inline_memo(&|p| types.get(p), path, &mut BTreeMap::new(), &mut vec![])
}

/// A stored type by path: from a parsed map, or parsed on first use ([`stored`]).
type Lookup<'a> = dyn Fn(&str) -> Option<&'a Value> + 'a;

fn inline_memo<'a>(
    types: &Lookup<'a>,
    path: &str,
    memo: &mut BTreeMap<String, Value>,
    stack: &mut Vec<String>,
) -> Result<Value, String> {
    if let Some(v) = memo.get(path) {
        return Ok(v.clone());
    }
    if stack.iter().any(|p| p == path) {
        return Err(format!("`{path}` refers to itself"));
    }
    let stored = types(path).ok_or_else(|| format!("no stored schema for `{path}`"))?;
    stack.push(path.to_owned());
    let v = expand(types, stored, memo, stack);
    stack.pop();
    let v = v?;
    memo.insert(path.to_owned(), v.clone());
    Ok(v)
}

/// Expand the references in one schema node and its subschemas. Only schema positions are
/// walked, so a `$ref` key inside a default or enum value stays data.
fn expand<'a>(
    types: &Lookup<'a>,
    node: &Value,
    memo: &mut BTreeMap<String, Value>,
    stack: &mut Vec<String>,
) -> Result<Value, String> {
    let Value::Object(m) = node else {
        return Ok(node.clone());
    };
    if let Some(target) = m.get(REF) {
        let target = target
            .as_str()
            .ok_or_else(|| format!("`{REF}` is not a string: {target}"))?;
        let Value::Object(mut base) = inline_memo(types, target, memo, stack)? else {
            return Err(format!("`{target}` is not an object schema"));
        };
        // Overlay values are controller-gen's own output at that position, never references.
        for (k, v) in m.iter().filter(|(k, _)| *k != REF) {
            if v.is_null() {
                base.remove(k);
            } else {
                base.insert(k.clone(), v.clone());
            }
        }
        return Ok(Value::Object(base));
    }
    let mut out = Map::new();
    for (k, v) in m {
        let v = match (k.as_str(), v) {
            ("properties" | "patternProperties" | "definitions", Value::Object(props)) => {
                let mut o = Map::new();
                for (name, s) in props {
                    o.insert(name.clone(), expand(types, s, memo, stack)?);
                }
                Value::Object(o)
            }
            ("items" | "additionalProperties" | "additionalItems" | "not", _) => {
                expand(types, v, memo, stack)?
            }
            ("allOf" | "anyOf" | "oneOf", Value::Array(alts)) => Value::Array(
                alts.iter()
                    .map(|s| expand(types, s, memo, stack))
                    .collect::<Result<_, _>>()?,
            ),
            _ => v.clone(),
        };
        out.insert(k.clone(), v);
    }
    Ok(Value::Object(out))
}

/// Every distinct `x-kubernetes-validations` entry of the stored types whose rule uses
/// `oldSelf` (a transition rule), as JSON: the `crd` generator's schema builder drops these, and only these,
/// where a CRD puts them on a part of the schema the API server cannot correlate.
///
/// Taken from every supported version at once: a rule is Kubernetes' own whichever version
/// carries it, and one list keeps this independent of the run's version.
pub fn transition_rules() -> &'static [Value] {
    static RULES: LazyLock<Vec<Value>> = LazyLock::new(|| {
        let mut out = vec![];
        for v in KubernetesVersion::ALL {
            for s in data(v).types.values() {
                collect_transition_rules(s, &mut out);
            }
        }
        out
    });
    &RULES
}

fn collect_transition_rules(v: &Value, out: &mut Vec<Value>) {
    match v {
        Value::Object(m) => {
            if let Some(Value::Array(rules)) = m.get("x-kubernetes-validations") {
                for r in rules {
                    if r.get("rule")
                        .and_then(Value::as_str)
                        .is_some_and(uses_old_self)
                        && !out.contains(r)
                    {
                        out.push(r.clone());
                    }
                }
            }
            m.values().for_each(|v| collect_transition_rules(v, out));
        }
        Value::Array(a) => a.iter().for_each(|v| collect_transition_rules(v, out)),
        _ => {}
    }
}

/// Whether a CEL rule refers to `oldSelf` (the API server asks the compiler; an identifier
/// match is the same for the rules Kubernetes' types carry).
pub fn uses_old_self(rule: &str) -> bool {
    rule.match_indices("oldSelf").any(|(i, m)| {
        let before = rule[..i].chars().next_back();
        let after = rule[i + m.len()..].chars().next();
        let ident = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
        !ident(before) && !ident(after)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The line index of every embedded data file is serde_json's reading of it: the same
    /// types with the same text, the same removed and unsupported types.
    #[test]
    fn the_line_index_is_the_json_parsers() {
        #[derive(Deserialize)]
        struct Raw {
            #[serde(borrow)]
            types: BTreeMap<&'static str, &'static serde_json::value::RawValue>,
            #[serde(default, borrow)]
            removed: Vec<&'static str>,
            unsupported: BTreeMap<String, String>,
        }
        for v in KubernetesVersion::ALL {
            let raw: Raw = serde_json::from_str(file(v)).unwrap();
            let index = index_file(v);
            let ours: Vec<_> = index.types.iter().map(|(k, s)| (*k, s.raw)).collect();
            let json: Vec<_> = raw.types.iter().map(|(k, r)| (*k, r.get())).collect();
            assert!(ours == json, "{v:?}: the types differ");
            assert!(!ours.is_empty());
            assert_eq!(index.removed, raw.removed, "{v:?}");
            assert_eq!(index.unsupported, raw.unsupported, "{v:?}");
        }
        // Not of the printer's shape: a key with an escape.
        assert!(pretty_members("{\n  \"a\\\"\": 1\n}", 2).is_none());
        assert_eq!(
            pretty_members(
                "{\n  \"a\": {\n    \"b\": [\n      1\n    ]\n  },\n  \"c\": \"x: y\"\n}",
                2
            ),
            Some(vec![
                ("a", "{\n    \"b\": [\n      1\n    ]\n  }"),
                ("c", "\"x: y\"")
            ])
        );
    }

    #[test]
    fn inline_applies_overlays_and_removals() {
        let types: BTreeMap<String, Value> = [
            (
                "A".to_owned(),
                json!({"type": "object", "properties": {
                    "b": {"$ref": "B", "description": "field doc", "default": null},
                    "bs": {"type": "array", "items": {"$ref": "B"}},
                }}),
            ),
            (
                "B".to_owned(),
                json!({"type": "object", "description": "type doc", "default": {}}),
            ),
        ]
        .into();
        let a = inline(&types, "A").unwrap();
        assert_eq!(
            a,
            json!({"type": "object", "properties": {
                "b": {"type": "object", "description": "field doc"},
                "bs": {"type": "array", "items": {"type": "object", "description": "type doc", "default": {}}},
            }})
        );
        assert!(inline(&types, "C").is_err());
    }

    #[test]
    fn refs_in_values_are_data() {
        let types: BTreeMap<String, Value> = [(
            "A".to_owned(),
            json!({"type": "object", "default": {"$ref": "X"}}),
        )]
        .into();
        assert_eq!(
            inline(&types, "A").unwrap()["default"],
            json!({"$ref": "X"})
        );
    }

    #[test]
    fn old_self_is_an_identifier() {
        assert!(uses_old_self("self == oldSelf"));
        assert!(uses_old_self("!has(oldSelf.x) || has(self.x)"));
        assert!(!uses_old_self("self.oldSelfish == 1"));
        assert!(!uses_old_self("self.x == 1"));
    }

    /// For every version: every stored type expands, and the data names every k8s-openapi
    /// type (stored, or unsupported with a reason).
    #[test]
    fn embedded_data_is_complete() {
        for v in KubernetesVersion::ALL {
            for path in data(v).types.keys() {
                schema(v, path).unwrap_or_else(|e| panic!("{v} {path}: {e}"));
            }
            assert!(
                data(v).types.len() + data(v).unsupported.len() >= 600,
                "{v}"
            );
            assert!(contains(v, "api::batch::v1::JobTemplateSpec"), "{v}");
            assert!(
                contains(v, "apimachinery::pkg::apis::meta::v1::Condition"),
                "{v}"
            );
        }
    }

    /// The index (each type parsed on first use) holds what the whole parse holds: the same
    /// paths, values and unsupported types for every version, deltas applied.
    #[test]
    fn index_agrees_with_the_whole_parse() {
        let newest = data(KubernetesVersion::NEWEST);
        for v in KubernetesVersion::ALL {
            let d = data(v);
            for (path, value) in &d.types {
                assert!(contains(v, path), "{v} {path}");
                assert_eq!(stored(v, path), Some(value), "{v} {path}");
            }
            for path in newest.types.keys().chain(&parse(v).removed) {
                assert_eq!(contains(v, path), d.types.contains_key(path), "{v} {path}");
            }
            for (path, why) in &d.unsupported {
                assert_eq!(unsupported(v, path), Some(why.as_str()), "{v} {path}");
            }
        }
    }

    /// The versions differ where Kubernetes changed: every older version's data changes
    /// some of the newest's types, and none is the newest's under another name.
    #[test]
    fn older_versions_are_deltas_that_change_something() {
        for v in KubernetesVersion::ALL {
            let raw = parse(v);
            if v == KubernetesVersion::NEWEST {
                assert!(raw.base.is_none());
            } else {
                assert!(raw.base.is_some(), "{v}");
                assert!(!raw.types.is_empty() || !raw.removed.is_empty(), "{v}");
                assert_ne!(data(v).types, data(KubernetesVersion::NEWEST).types, "{v}");
            }
        }
    }
}
