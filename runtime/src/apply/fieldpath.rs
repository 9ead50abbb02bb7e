//! The one FieldsV1 codec of the runtime: the field sets of `metadata.managedFields`, as
//! structured-merge-diff (`sigs.k8s.io/structured-merge-diff/v6/fieldpath`) reads and
//! writes them.
//!
//! A FieldsV1 set is a JSON object whose keys are path elements: `f:<name>` (a field of a
//! struct or a key of a map), `k:{"name":"x"}` (the item of a `listType=map` list with
//! these key fields), `v:<json>` (an item of a `listType=set` list), `i:<n>` (an item by
//! position) and `.` (the element above is itself a member, not only a prefix of
//! members); `{}` below a key makes that key a member without children.
//!
//! Two parts of the runtime read it: extraction ([`super::extract`]) walks a set beside the
//! object it describes, one level at a time, and the fake API server's field manager
//! (`fake::managed`) decodes whole sets into [`Set`] and writes them back. Both parse keys
//! here, so a key means the same to both; what each makes of a key that does not parse is
//! its own (extraction names the place in the object, the fake answers as a decode error).
//!
//! The ordering of path elements and of values is SMD's, because it decides the key order
//! of `fieldsV1` the API server writes and the order in which conflicts are listed; the
//! equality that follows from it (`80` and `80.0` are the same number) is SMD's too.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};
use std::num::ParseIntError;

use serde_json::{Map, Value};

/// The key that marks the element above as a member of the set (SMD writes it for a
/// member that also has children).
pub(crate) const MEMBER: &str = ".";

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
    /// the fake emulates, but valid in `fieldsV1`): `i:0`, `[0]`.
    Index(usize),
}

/// Why a `fieldsV1` key is not a path element. Each reader words it for its own errors,
/// so the reason is kept whole (the JSON or number error included).
#[derive(Debug)]
pub(crate) enum KeyError {
    /// Not a one-letter type and a colon.
    NoType,
    /// A type other than `f`, `k`, `v` and `i`.
    UnknownType,
    /// The body of a `k:` key is not a JSON object.
    Key(serde_json::Error),
    /// The body of a `v:` key is not JSON.
    Value(serde_json::Error),
    /// The body of an `i:` key is not a list index.
    Index(ParseIntError),
}

impl KeyError {
    /// How the fake's field manager words it, for `key` (extraction words its own).
    fn describe(&self, key: &str) -> String {
        match self {
            KeyError::NoType => format!("invalid path element {key:?}: missing type prefix"),
            KeyError::UnknownType => format!("unknown path element type in {key:?}"),
            KeyError::Key(e) => format!("invalid key in {key:?}: {e}"),
            KeyError::Value(e) => format!("invalid value in {key:?}: {e}"),
            KeyError::Index(e) => format!("invalid index in {key:?}: {e}"),
        }
    }
}

impl PathElement {
    /// Parses a `fieldsV1` key (`DeserializePathElement`). The fields of a `k:` key are
    /// sorted by name, as SMD sorts them, so a key written in another order is the same
    /// element.
    pub(crate) fn from_fields_key(s: &str) -> Result<Self, KeyError> {
        let (kind, rest) = s
            .split_once(':')
            .filter(|(k, _)| k.len() == 1)
            .ok_or(KeyError::NoType)?;
        match kind {
            "f" => Ok(PathElement::Field(rest.to_string())),
            "v" => serde_json::from_str::<Value>(rest)
                .map(|v| PathElement::Value(OrdValue(v)))
                .map_err(KeyError::Value),
            "k" => {
                let map: Map<String, Value> = serde_json::from_str(rest).map_err(KeyError::Key)?;
                let mut fields: Vec<(String, OrdValue)> =
                    map.into_iter().map(|(k, v)| (k, OrdValue(v))).collect();
                fields.sort_by(|a, b| a.0.cmp(&b.0));
                Ok(PathElement::Key(fields))
            }
            "i" => rest
                .parse()
                .map(PathElement::Index)
                .map_err(KeyError::Index),
            _ => Err(KeyError::UnknownType),
        }
    }

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
}

/// The entries of one level of a `fieldsV1` set, [`MEMBER`] left out: each key, the path
/// element it parses to, and the set below it (not checked to be one: the reader decides
/// what a non-object there means).
pub(crate) fn entries(
    level: &Map<String, Value>,
) -> impl Iterator<Item = (&str, Result<PathElement, KeyError>, &Value)> {
    level
        .iter()
        .filter(|(k, _)| *k != MEMBER)
        .map(|(k, child)| (k.as_str(), PathElement::from_fields_key(k), child))
}

/// A set of field paths as a tree (SMD's `fieldpath.Set`): `members` are the paths that end
/// here, `children` the sets below each element. Children are never empty. The set algebra
/// the fake's field manager needs is beside it, in `fake::managed::fieldset`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Set {
    pub members: BTreeSet<PathElement>,
    pub children: BTreeMap<PathElement, Set>,
}

// Only the fake API server decodes and writes whole sets (extraction walks them level by
// level), so without the `fake` feature this is unused; what it alone uses is too.
#[cfg_attr(not(feature = "fake"), allow(dead_code))]
impl Set {
    pub(crate) fn new() -> Self {
        Set::default()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.members.is_empty() && self.children.values().all(Set::is_empty)
    }

    /// The `fieldsV1` object, as `SetToFields` writes it: keys in element order, `{}` for a
    /// member without children, and a `"."` entry for a member that also has children.
    pub(crate) fn to_fields_v1(&self) -> Value {
        Value::Object(self.fields_v1_contents(false))
    }

    fn fields_v1_contents(&self, include_self: bool) -> Map<String, Value> {
        let mut out = Map::new();
        if include_self && !self.is_empty() {
            out.insert(MEMBER.into(), Value::Object(Map::new()));
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
        for (k, pe, child) in entries(map) {
            let pe = pe.map_err(|e| e.describe(k))?;
            let obj = child
                .as_object()
                .ok_or_else(|| format!("fieldsV1 entry {k:?} must be a JSON object"))?;
            if obj.is_empty() || obj.contains_key(MEMBER) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(key: &str) -> PathElement {
        PathElement::from_fields_key(key).unwrap()
    }

    #[test]
    fn keys_parse_and_write_back() {
        for key in [
            "f:name",
            "f:a:b",
            "f:",
            r#"k:{"containerPort":80,"protocol":"TCP"}"#,
            r#"v:"x""#,
            "v:1.5",
            r#"v:{"a":[1,null]}"#,
            "i:3",
        ] {
            assert_eq!(parse(key).to_fields_key(), key);
        }
        // SMD sorts the fields of a key by name: the order written is not part of it.
        let k = parse(r#"k:{"protocol":"TCP","containerPort":80}"#);
        assert_eq!(k, parse(r#"k:{"containerPort":80,"protocol":"TCP"}"#));
        assert_eq!(
            k.to_fields_key(),
            r#"k:{"containerPort":80,"protocol":"TCP"}"#
        );
    }

    #[test]
    fn numbers_are_equal_across_int_and_float() {
        // SMD's value.Equals: an int and a float are compared as floats. A key the API
        // server writes as `80` names an item whose client-side JSON has `80.0` (an f64
        // field), and `v:2` names the set item `2.0`.
        assert_eq!(parse(r#"k:{"port":80}"#), parse(r#"k:{"port":80.0}"#));
        assert_eq!(parse("v:2"), parse("v:2.0"));
        assert_ne!(parse("v:2"), parse("v:2.5"));
        assert_ne!(parse("v:2"), parse(r#"v:"2""#));
    }

    #[test]
    fn malformed_keys() {
        let err = |key: &str| PathElement::from_fields_key(key).unwrap_err();
        assert!(matches!(err("name"), KeyError::NoType));
        assert!(matches!(err("ab:c"), KeyError::NoType));
        assert!(matches!(err("x:y"), KeyError::UnknownType));
        assert!(matches!(err("k:{name:one}"), KeyError::Key(_)));
        assert!(matches!(err("k:[1]"), KeyError::Key(_)));
        assert!(matches!(err("v:not json"), KeyError::Value(_)));
        assert!(matches!(err("i:x"), KeyError::Index(_)));
        assert!(matches!(err("i:-1"), KeyError::Index(_)));
        assert_eq!(
            err("x:y").describe("x:y"),
            r#"unknown path element type in "x:y""#
        );
        assert_eq!(
            err("name").describe("name"),
            r#"invalid path element "name": missing type prefix"#
        );
    }

    #[test]
    fn sets_decode_members_and_children() {
        let v = json!({"f:a": {}, "f:b": {".": {}, "f:c": {}}, "f:d": {"f:e": {}}});
        let set = Set::from_fields_v1(&v).unwrap();
        let f = |n: &str| PathElement::Field(n.into());
        assert_eq!(
            set.members,
            [f("a"), f("b")].into_iter().collect::<BTreeSet<_>>()
        );
        assert_eq!(
            set.children.keys().cloned().collect::<Vec<_>>(),
            [f("b"), f("d")]
        );
        assert_eq!(set.to_fields_v1(), v);
        let err = |v: Value| Set::from_fields_v1(&v).unwrap_err();
        assert_eq!(err(json!([])), "fieldsV1 must be a JSON object");
        assert_eq!(
            err(json!({"f:a": 1})),
            r#"fieldsV1 entry "f:a" must be a JSON object"#
        );
        assert!(err(json!({"f:a": {"k:{bad": {}}})).starts_with(r#"invalid key in "k:{bad""#));
    }
}
