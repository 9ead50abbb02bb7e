//! The keyword-by-keyword CRD comparison of the fidelity corpus (`fidelity.rs`) and the
//! import round trip (`import_crd.rs`): a CRD flattened into leaves `path -> value`.
//!
//! Every scalar is a leaf named by its JSON path (the last segment is the keyword,
//! descriptions included); arrays of scalars (`required`, `enum`, `shortNames`, ...) are
//! sets, one leaf per element; `default` and `example` are one leaf each (their whole
//! value); versions, printer columns, selectable fields and CEL rules are keyed by name,
//! JSON path and rule, so order does not matter.

#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

/// Every YAML document of `text`, as JSON, keyed by the CRD's `metadata.name`.
pub fn crds_of(text: &str, from: &str, into: &mut BTreeMap<String, Value>) {
    for doc in serde_yaml::Deserializer::from_str(text) {
        let v: Value = serde::Deserialize::deserialize(doc)
            .unwrap_or_else(|e| panic!("{from}: not YAML: {e}"));
        if v.is_null() {
            continue;
        }
        let name = v["metadata"]["name"]
            .as_str()
            .unwrap_or_else(|| panic!("{from}: a document without metadata.name"))
            .to_owned();
        assert!(
            into.insert(name.clone(), v).is_none(),
            "{from}: CRD {name} twice"
        );
    }
}

/// One leaf value in its canonical text form.
fn text(v: &Value) -> String {
    serde_json::to_string(v).expect("JSON value serializes")
}

/// Arrays whose elements are objects identified by one of their fields, not by position.
fn element_key(key: &str) -> Option<&'static str> {
    match key {
        "versions" | "additionalPrinterColumns" => Some("name"),
        "selectableFields" => Some("jsonPath"),
        "x-kubernetes-validations" => Some("rule"),
        _ => None,
    }
}

/// Flatten `v` (found at `path` under `key`) into `out`.
pub fn flatten(path: &str, key: &str, v: &Value, out: &mut BTreeMap<String, String>) {
    match v {
        // A default or example is one value: controller-gen and we must agree on all of it.
        _ if key == "default" || key == "example" => {
            out.insert(path.to_owned(), text(v));
        }
        Value::Object(map) => {
            for (k, child) in map {
                flatten(&format!("{path}.{k}"), k, child, out);
            }
        }
        Value::Array(items) if items.iter().all(|i| !i.is_object() && !i.is_array()) => {
            // A set of scalars: one leaf per element, so a missing `required` entry is one
            // difference, and order (meaningless here) is ignored.
            if items.is_empty() {
                out.insert(path.to_owned(), "[]".to_owned());
            }
            for i in items {
                let elem = i.as_str().map(str::to_owned).unwrap_or_else(|| text(i));
                out.insert(format!("{path}[{elem}]"), text(i));
            }
        }
        Value::Array(items) => {
            let by = element_key(key);
            for (n, item) in items.iter().enumerate() {
                let id = by
                    .and_then(|f| item.get(f))
                    .and_then(Value::as_str)
                    .map(|s| format!("{}={s}", by.unwrap_or_default()))
                    .unwrap_or_else(|| n.to_string());
                flatten(&format!("{path}[{id}]"), key, item, out);
            }
        }
        _ => {
            out.insert(path.to_owned(), text(v));
        }
    }
}

/// The leaves of a CRD that a generator decides: everything but the CRD's status and the
/// generator's own version stamp.
pub fn leaves(crd: &Value) -> BTreeMap<String, String> {
    let mut crd = crd.clone();
    if let Some(obj) = crd.as_object_mut() {
        obj.remove("status");
    }
    // `get_mut`, not `[]`: indexing a JSON object mutably inserts a null for a missing key.
    if let Some(meta) = crd.get_mut("metadata").and_then(Value::as_object_mut) {
        if let Some(ann) = meta.get_mut("annotations").and_then(Value::as_object_mut) {
            ann.remove("controller-gen.kubebuilder.io/version");
        }
        if meta
            .get("annotations")
            .and_then(Value::as_object)
            .is_some_and(|a| a.is_empty())
        {
            meta.remove("annotations");
        }
    }
    let mut out = BTreeMap::new();
    flatten("", "", &crd, &mut out);
    out
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    /// controller-gen has the leaf, we do not.
    Missing,
    /// We have the leaf, controller-gen does not.
    Extra,
    /// Both have it, with different values.
    Changed,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Missing => "missing",
            Kind::Extra => "extra",
            Kind::Changed => "changed",
        }
    }

    pub fn parse(s: &str) -> Option<Kind> {
        match s {
            "missing" => Some(Kind::Missing),
            "extra" => Some(Kind::Extra),
            "changed" => Some(Kind::Changed),
            _ => None,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Difference {
    pub kind: Kind,
    pub crd: String,
    pub path: String,
    /// What controller-gen and we have, for the report only (not part of the identity).
    pub golden: Option<String>,
    pub ours: Option<String>,
}

impl Difference {
    /// The text of its line in known-differences.txt.
    pub fn key(&self) -> String {
        format!("{} {} {}", self.kind.as_str(), self.crd, self.path)
    }
}

pub fn diff(golden: &BTreeMap<String, Value>, ours: &BTreeMap<String, Value>) -> Vec<Difference> {
    let mut out = vec![];
    let names: BTreeSet<&String> = golden.keys().chain(ours.keys()).collect();
    for name in names {
        let g = golden.get(name).map(leaves).unwrap_or_default();
        let o = ours.get(name).map(leaves).unwrap_or_default();
        let paths: BTreeSet<&String> = g.keys().chain(o.keys()).collect();
        for path in paths {
            let (gv, ov) = (g.get(path), o.get(path));
            let kind = match (gv, ov) {
                (Some(a), Some(b)) if a == b => continue,
                (Some(_), Some(_)) => Kind::Changed,
                (Some(_), None) => Kind::Missing,
                (None, Some(_)) => Kind::Extra,
                (None, None) => unreachable!("path comes from one of the two"),
            };
            out.push(Difference {
                kind,
                crd: name.clone(),
                path: path.clone(),
                golden: gv.cloned(),
                ours: ov.cloned(),
            });
        }
    }
    out
}

pub fn short(v: &Option<String>) -> String {
    match v {
        None => "-".to_owned(),
        Some(s) if s.chars().count() > 100 => {
            format!("{}...", s.chars().take(100).collect::<String>())
        }
        Some(s) => s.clone(),
    }
}
