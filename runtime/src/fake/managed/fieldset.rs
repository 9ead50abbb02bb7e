//! Field paths and sets of field paths, as structured-merge-diff (`sigs.k8s.io/
//! structured-merge-diff/v6/fieldpath`) defines them: the set algebra and the path strings
//! of conflict messages. The elements, their order and the `FieldsV1` encoding the API
//! server writes into `metadata.managedFields` are the runtime's one codec,
//! [`crate::apply::fieldpath`], which extraction reads managedFields with too.

use std::fmt;

use serde_json::Value;

pub(crate) use crate::apply::fieldpath::{OrdValue, PathElement, Set};

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

/// A path from the object's root.
pub(crate) type Path = Vec<PathElement>;

/// `Path.String()`: the elements' strings concatenated, e.g. `.spec.items[name="a"].value`.
pub(crate) fn path_string(path: &[PathElement]) -> String {
    path.iter().map(ToString::to_string).collect()
}

/// SMD's set algebra on the codec's [`Set`]: what the field manager computes ownership
/// with.
impl Set {
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
