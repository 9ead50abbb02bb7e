//! Field paths and sets of field paths, as structured-merge-diff (`sigs.k8s.io/
//! structured-merge-diff/v6/fieldpath`) defines them, with the `FieldsV1` encoding the API
//! server writes into `metadata.managedFields`.
//!
//! The ordering of path elements and of values is SMD's, because it decides the key order
//! of `fieldsV1` and the order in which conflicts are listed.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde_json::{Map, Value};

/// A JSON value with SMD's total order (`value.Compare`): numbers (ints and floats compared
/// numerically), then strings, booleans, lists, maps, and null last.
#[derive(Clone, Debug)]
pub(crate) struct OrdValue(pub Value);

fn rank(v: &Value) -> u8 {
    match v {
        Value::Number(_) => 0,
        Value::String(_) => 1,
        Value::Bool(_) => 2,
        Value::Array(_) => 3,
        Value::Object(_) => 4,
        Value::Null => 5,
    }
}

fn cmp_numbers(a: &serde_json::Number, b: &serde_json::Number) -> Ordering {
    // SMD keeps ints as int64 and compares them exactly; any float on either side makes it
    // a float comparison.
    match (a.as_i64(), b.as_i64()) {
        (Some(x), Some(y)) => x.cmp(&y),
        _ => {
            let (x, y) = (a.as_f64().unwrap_or(0.0), b.as_f64().unwrap_or(0.0));
            x.partial_cmp(&y).unwrap_or(Ordering::Equal)
        }
    }
}

/// SMD's `value.Compare` on JSON values.
pub(crate) fn compare_values(a: &Value, b: &Value) -> Ordering {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => cmp_numbers(x, y),
        (Value::String(x), Value::String(y)) => x.cmp(y),
        (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
        (Value::Array(x), Value::Array(y)) => {
            for (l, r) in x.iter().zip(y) {
                let c = compare_values(l, r);
                if c != Ordering::Equal {
                    return c;
                }
            }
            x.len().cmp(&y.len())
        }
        (Value::Object(x), Value::Object(y)) => {
            let mut xs: Vec<_> = x.iter().collect();
            let mut ys: Vec<_> = y.iter().collect();
            xs.sort_by(|l, r| l.0.cmp(r.0));
            ys.sort_by(|l, r| l.0.cmp(r.0));
            for ((lk, lv), (rk, rv)) in xs.iter().zip(&ys) {
                let c = lk.cmp(rk).then_with(|| compare_values(lv, rv));
                if c != Ordering::Equal {
                    return c;
                }
            }
            xs.len().cmp(&ys.len())
        }
        (Value::Null, Value::Null) => Ordering::Equal,
        _ => rank(a).cmp(&rank(b)),
    }
}

impl PartialEq for OrdValue {
    fn eq(&self, other: &Self) -> bool {
        compare_values(&self.0, &other.0) == Ordering::Equal
    }
}
impl Eq for OrdValue {}
impl PartialOrd for OrdValue {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for OrdValue {
    fn cmp(&self, other: &Self) -> Ordering {
        compare_values(&self.0, &other.0)
    }
}

/// One step of a field path. The variant order is SMD's element order (field names sort
/// before keys, keys before values, values before indexes).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum PathElement {
    /// A field of a struct or a key of a map: `f:name`, `.name`.
    Field(String),
    /// An item of a `listType=map` list, by its key fields sorted by name:
    /// `k:{"name":"a"}`, `[name="a"]`.
    Key(Vec<(String, OrdValue)>),
    /// An item of a `listType=set` list: `v:"a"`, `[="a"]`.
    Value(OrdValue),
    /// An item of a list by position (never written by the API server for the schemas
    /// emulated here, but valid in `fieldsV1`): `i:0`, `[0]`.
    Index(usize),
}

/// SMD's `value.ToString`: how values appear in path strings of conflict messages.
fn value_string(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::String(s) => serde_json::to_string(s).unwrap_or_default(),
        Value::Array(a) => format!(
            "[{}]",
            a.iter().map(value_string).collect::<Vec<_>>().join(",")
        ),
        Value::Object(m) => m
            .iter()
            .map(|(k, v)| format!("{k}={}", value_string(v)))
            .collect::<String>(),
        other => other.to_string(),
    }
}

impl fmt::Display for PathElement {
    /// `PathElement.String()`: `.name`, `[k=v,k2="s"]`, `[="v"]`, `[3]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PathElement::Field(name) => write!(f, ".{name}"),
            PathElement::Key(fields) => {
                let parts: Vec<String> = fields
                    .iter()
                    .map(|(k, v)| format!("{k}={}", value_string(&v.0)))
                    .collect();
                write!(f, "[{}]", parts.join(","))
            }
            PathElement::Value(v) => write!(f, "[={}]", value_string(&v.0)),
            PathElement::Index(i) => write!(f, "[{i}]"),
        }
    }
}

impl PathElement {
    /// The `fieldsV1` key: `f:name`, `k:{"a":1,"b":"x"}`, `v:"x"`, `i:0`.
    pub(crate) fn to_fields_key(&self) -> String {
        match self {
            PathElement::Field(name) => format!("f:{name}"),
            PathElement::Key(fields) => {
                let body: Vec<String> = fields
                    .iter()
                    .map(|(k, v)| {
                        format!(
                            "{}:{}",
                            serde_json::to_string(k).unwrap_or_default(),
                            serde_json::to_string(&v.0).unwrap_or_default()
                        )
                    })
                    .collect();
                format!("k:{{{}}}", body.join(","))
            }
            PathElement::Value(v) => {
                format!("v:{}", serde_json::to_string(&v.0).unwrap_or_default())
            }
            PathElement::Index(i) => format!("i:{i}"),
        }
    }

    /// Parses a `fieldsV1` key (`DeserializePathElement`).
    pub(crate) fn from_fields_key(s: &str) -> Result<Self, String> {
        let (kind, rest) = s
            .split_once(':')
            .filter(|(k, _)| k.len() == 1)
            .ok_or_else(|| format!("invalid path element {s:?}: missing type prefix"))?;
        match kind {
            "f" => Ok(PathElement::Field(rest.to_string())),
            "v" => serde_json::from_str::<Value>(rest)
                .map(|v| PathElement::Value(OrdValue(v)))
                .map_err(|e| format!("invalid value in {s:?}: {e}")),
            "k" => {
                let map: Map<String, Value> =
                    serde_json::from_str(rest).map_err(|e| format!("invalid key in {s:?}: {e}"))?;
                let mut fields: Vec<(String, OrdValue)> =
                    map.into_iter().map(|(k, v)| (k, OrdValue(v))).collect();
                fields.sort_by(|a, b| a.0.cmp(&b.0));
                Ok(PathElement::Key(fields))
            }
            "i" => rest
                .parse()
                .map(PathElement::Index)
                .map_err(|e| format!("invalid index in {s:?}: {e}")),
            _ => Err(format!("unknown path element type in {s:?}")),
        }
    }
}

/// A path from the object's root.
pub(crate) type Path = Vec<PathElement>;

/// `Path.String()`: the elements' strings concatenated, e.g. `.spec.items[name="a"].value`.
pub(crate) fn path_string(path: &[PathElement]) -> String {
    path.iter().map(ToString::to_string).collect()
}

/// A set of field paths as a tree (SMD's `fieldpath.Set`): `members` are the paths that end
/// here, `children` the sets below each element. Children are never empty.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Set {
    pub members: BTreeSet<PathElement>,
    pub children: BTreeMap<PathElement, Set>,
}

impl Set {
    pub(crate) fn new() -> Self {
        Set::default()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.members.is_empty() && self.children.values().all(Set::is_empty)
    }

    /// Adds a path; the empty path is ignored, as in SMD.
    pub(crate) fn insert(&mut self, path: &[PathElement]) {
        match path {
            [] => {}
            [last] => {
                self.members.insert(last.clone());
            }
            [first, rest @ ..] => self.children.entry(first.clone()).or_default().insert(rest),
        }
    }

    /// Whether the path is a member (not merely a prefix of one).
    pub(crate) fn has(&self, path: &[PathElement]) -> bool {
        match path {
            [] => false,
            [last] => self.members.contains(last),
            [first, rest @ ..] => self.children.get(first).is_some_and(|c| c.has(rest)),
        }
    }

    /// The paths below `pe`, relative to it.
    pub(crate) fn with_prefix(&self, pe: &PathElement) -> Set {
        self.children.get(pe).cloned().unwrap_or_default()
    }

    pub(crate) fn union(&self, other: &Set) -> Set {
        let mut out = self.clone();
        out.members.extend(other.members.iter().cloned());
        for (pe, child) in &other.children {
            let merged = match out.children.get(pe) {
                Some(mine) => mine.union(child),
                None => child.clone(),
            };
            out.children.insert(pe.clone(), merged);
        }
        out
    }

    pub(crate) fn intersection(&self, other: &Set) -> Set {
        let mut out = Set::new();
        out.members = self.members.intersection(&other.members).cloned().collect();
        for (pe, child) in &self.children {
            if let Some(theirs) = other.children.get(pe) {
                let i = child.intersection(theirs);
                if !i.is_empty() {
                    out.children.insert(pe.clone(), i);
                }
            }
        }
        out
    }

    /// Members not in `other`; children subtracted level by level (a member of `other`
    /// does not remove the paths below it: that is [`recursive_difference`](Self::recursive_difference)).
    pub(crate) fn difference(&self, other: &Set) -> Set {
        let mut out = Set::new();
        out.members = self.members.difference(&other.members).cloned().collect();
        for (pe, child) in &self.children {
            let d = match other.children.get(pe) {
                Some(theirs) => child.difference(theirs),
                None => child.clone(),
            };
            if !d.is_empty() {
                out.children.insert(pe.clone(), d);
            }
        }
        out
    }

    /// Like [`difference`](Self::difference), but a member of `other` also removes every
    /// path below it (SMD's exclude filter for reset fields).
    pub(crate) fn recursive_difference(&self, other: &Set) -> Set {
        let mut out = Set::new();
        out.members = self.members.difference(&other.members).cloned().collect();
        for (pe, child) in &self.children {
            if other.members.contains(pe) {
                continue;
            }
            let d = match other.children.get(pe) {
                Some(theirs) => child.recursive_difference(theirs),
                None => child.clone(),
            };
            if !d.is_empty() {
                out.children.insert(pe.clone(), d);
            }
        }
        out
    }

    /// Every member path, in SMD's iteration order: a level's members, then each child's
    /// paths in element order.
    pub(crate) fn paths(&self) -> Vec<Path> {
        let mut out = Vec::new();
        self.collect_paths(&mut Vec::new(), &mut out);
        out
    }

    fn collect_paths(&self, prefix: &mut Path, out: &mut Vec<Path>) {
        for m in &self.members {
            let mut p = prefix.clone();
            p.push(m.clone());
            out.push(p);
        }
        for (pe, child) in &self.children {
            prefix.push(pe.clone());
            child.collect_paths(prefix, out);
            prefix.pop();
        }
    }

    /// The `fieldsV1` object, as `SetToFields` writes it: keys in element order, `{}` for a
    /// member without children, and a `"."` entry for a member that also has children.
    pub(crate) fn to_fields_v1(&self) -> Value {
        Value::Object(self.fields_v1_contents(false))
    }

    fn fields_v1_contents(&self, include_self: bool) -> Map<String, Value> {
        let mut out = Map::new();
        if include_self && !self.is_empty() {
            out.insert(".".into(), Value::Object(Map::new()));
        }
        let mut keys: BTreeSet<&PathElement> = self.members.iter().collect();
        keys.extend(self.children.keys());
        for pe in keys {
            let member = self.members.contains(pe);
            let value = match self.children.get(pe).filter(|c| !c.is_empty()) {
                Some(child) => Value::Object(child.fields_v1_contents(member)),
                None => Value::Object(Map::new()),
            };
            out.insert(pe.to_fields_key(), value);
        }
        out
    }

    /// Parses a `fieldsV1` object (`FieldsToSet`).
    pub(crate) fn from_fields_v1(v: &Value) -> Result<Set, String> {
        let map = v
            .as_object()
            .ok_or_else(|| "fieldsV1 must be a JSON object".to_string())?;
        let mut set = Set::new();
        for (k, child) in map {
            if k == "." {
                // The parent marks itself a member; handled by the caller.
                continue;
            }
            let pe = PathElement::from_fields_key(k)?;
            let obj = child
                .as_object()
                .ok_or_else(|| format!("fieldsV1 entry {k:?} must be a JSON object"))?;
            if obj.is_empty() || obj.contains_key(".") {
                set.members.insert(pe.clone());
            }
            let sub = Set::from_fields_v1(child)?;
            if !sub.is_empty() {
                set.children.insert(pe, sub);
            }
        }
        Ok(set)
    }
}

/// Builds a path from field names (for tests and fixed sets).
pub(crate) fn fields_path(names: &[&str]) -> Path {
    names
        .iter()
        .map(|n| PathElement::Field((*n).to_string()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn key(pairs: &[(&str, Value)]) -> PathElement {
        PathElement::Key(
            pairs
                .iter()
                .map(|(k, v)| ((*k).to_string(), OrdValue(v.clone())))
                .collect(),
        )
    }

    #[test]
    fn fields_v1_round_trip_with_dot_markers() {
        let v = json!({
            "f:metadata": {"f:labels": {".": {}, "f:app": {}}},
            "f:spec": {"f:items": {
                "k:{\"name\":\"a\"}": {".": {}, "f:name": {}, "f:value": {}},
            }, "f:tags": {"v:\"x\"": {}}},
        });
        let set = Set::from_fields_v1(&v).unwrap();
        assert!(set.has(&fields_path(&["metadata", "labels"])));
        assert!(set.has(&fields_path(&["metadata", "labels", "app"])));
        assert!(!set.has(&fields_path(&["metadata"])));
        let mut p = fields_path(&["spec", "items"]);
        p.push(key(&[("name", json!("a"))]));
        assert!(set.has(&p));
        assert_eq!(set.to_fields_v1(), v);
    }

    #[test]
    fn element_order_and_strings() {
        let f = PathElement::Field("z".into());
        let k = key(&[("containerPort", json!(80)), ("protocol", json!("TCP"))]);
        let v = PathElement::Value(OrdValue(json!("a")));
        assert!(f < k && k < v && v < PathElement::Index(0));
        assert_eq!(
            k.to_fields_key(),
            r#"k:{"containerPort":80,"protocol":"TCP"}"#
        );
        assert_eq!(k.to_string(), r#"[containerPort=80,protocol="TCP"]"#);
        assert_eq!(v.to_string(), r#"[="a"]"#);
        assert_eq!(
            path_string(&[PathElement::Field("spec".into()), k]),
            r#".spec[containerPort=80,protocol="TCP"]"#
        );
        // Numbers before strings; ints compare numerically, not as text.
        assert!(OrdValue(json!(9)) < OrdValue(json!(10)));
        assert!(OrdValue(json!(10)) < OrdValue(json!("1")));
    }

    #[test]
    fn set_algebra() {
        let mut a = Set::new();
        a.insert(&fields_path(&["spec", "a"]));
        a.insert(&fields_path(&["spec", "b"]));
        let mut b = Set::new();
        b.insert(&fields_path(&["spec", "b"]));
        b.insert(&fields_path(&["status"]));
        assert_eq!(
            a.intersection(&b).paths(),
            vec![fields_path(&["spec", "b"])]
        );
        assert_eq!(a.difference(&b).paths(), vec![fields_path(&["spec", "a"])]);
        assert_eq!(a.union(&b).paths().len(), 3);
        let mut spec = Set::new();
        spec.insert(&fields_path(&["spec"]));
        assert!(a.recursive_difference(&spec).is_empty());
        assert_eq!(a.difference(&spec), a);
        assert!(Set::from_fields_v1(&json!({"x:y": {}})).is_err());
        assert!(Set::from_fields_v1(&json!({"f:a": 1})).is_err());
        assert!(Set::from_fields_v1(&json!([])).is_err());
    }
}
