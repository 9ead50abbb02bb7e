//! Walks over JSON objects guided by a [`Schema`], ported from structured-merge-diff's
//! `typed` package: the field set of an object (`ToFieldSet`), the merge of an applied
//! configuration into a live object (`Merge`), the difference between two objects
//! (`Compare`) and the removal of a set of fields (`RemoveItems`).
//!
//! The ports keep SMD's quirks on purpose (empty maps and lists compared as leaves, the
//! list-merge order, `null` for a map or list emptied by removal), because the fake must
//! produce the objects and managedFields the API server produces.

use serde_json::{Map, Value};

use super::fieldset::{OrdValue, Path, PathElement, Set, path_string};
use super::schema::{ListSchema, ListType, MapSchema, Resolved, Schema};

/// Why an item of an associative list has no path element.
pub(crate) type ItemError = String;

/// The path element of a list item: its key fields (with schema defaults for missing ones)
/// for `listType=map`, its value for `listType=set`.
pub(crate) fn item_element(list: &ListSchema, item: &Value) -> Result<PathElement, ItemError> {
    match &list.list_type {
        ListType::Atomic => Err("invalid indexing of non-associative list".into()),
        ListType::Map(keys) => {
            let Value::Object(m) = item else {
                return Err(if item.is_null() {
                    "associative list with keys may not have a null element".into()
                } else {
                    "associative list with keys may not have non-map elements".into()
                });
            };
            let element = match list.element.resolve(Some(item)) {
                Resolved::Map(s) => Some(s.into_owned()),
                _ => None,
            };
            let mut fields: Vec<(String, OrdValue)> = Vec::new();
            for k in keys {
                if let Some(v) = m.get(k) {
                    fields.push((k.clone(), OrdValue(v.clone())));
                } else if let Some(d) = element
                    .as_ref()
                    .and_then(|e| e.fields.get(k))
                    .and_then(|f| f.default.clone())
                {
                    fields.push((k.clone(), OrdValue(d)));
                }
            }
            if fields.is_empty() {
                return Err(format!(
                    "associative list with keys has an element that omits all key fields {keys:?} (and doesn't have default values for any key fields)"
                ));
            }
            fields.sort_by(|a, b| a.0.cmp(&b.0));
            Ok(PathElement::Key(fields))
        }
        ListType::Set => match item {
            Value::Object(_) => {
                Err("associative list without keys has an element that's a map type".into())
            }
            Value::Array(_) => Err("not supported: associative list with lists as elements".into()),
            Value::Null => {
                Err("associative list without keys has an element that's an explicit null".into())
            }
            v => Ok(PathElement::Value(OrdValue(v.clone()))),
        },
    }
}

fn with(path: &Path, pe: PathElement) -> Path {
    let mut p = path.clone();
    p.push(pe);
    p
}

// ----- ToFieldSet -----

/// The fields of `v` (SMD `TypedValue.ToFieldSet`), typing it strictly as the API server
/// types an apply body. Errors (all of them, worded as SMD's validation): list items
/// without a valid key, duplicate keys, fields a CRD schema does not declare.
pub(crate) fn to_field_set(schema: &Schema, v: &Value) -> Result<Set, ItemError> {
    let mut set = Set::new();
    let mut errors = Vec::new();
    field_set_walk(schema, v, &Vec::new(), &mut set, false, &mut errors);
    match errors.len() {
        0 => Ok(set),
        1 => Err(errors.remove(0)),
        _ => Err(format!("errors:\n  {}", errors.join("\n  "))),
    }
}

/// Like [`to_field_set`] for stored objects, which may hold duplicate list keys: those are
/// owned as a whole (SMD's `AllowDuplicates`); other problems are skipped.
pub(crate) fn to_field_set_lenient(schema: &Schema, v: &Value) -> Set {
    let mut set = Set::new();
    field_set_walk(schema, v, &Vec::new(), &mut set, true, &mut Vec::new());
    set
}

fn field_set_walk(
    schema: &Schema,
    v: &Value,
    path: &Path,
    set: &mut Set,
    lenient: bool,
    errors: &mut Vec<ItemError>,
) {
    match schema.resolve(Some(v)) {
        Resolved::Scalar => set.insert(path),
        Resolved::List(l) => {
            if l.list_type == ListType::Atomic {
                set.insert(path);
                return;
            }
            let Value::Array(items) = v else {
                return;
            };
            let mut pes = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                // SMD's validation errors carry the list's path: `.spec.items: element 0: ...`.
                match item_element(&l, item) {
                    Ok(pe) => pes.push(Some(pe)),
                    Err(e) => {
                        errors.push(format!("{}: element {i}: {e}", path_string(path)));
                        pes.push(None);
                    }
                }
            }
            let mut seen = std::collections::BTreeSet::new();
            let mut duplicates = std::collections::BTreeSet::new();
            for pe in pes.iter().flatten() {
                if !seen.insert(pe.clone()) && duplicates.insert(pe.clone()) {
                    if !lenient {
                        errors.push(format!(
                            "{}: duplicate entries for key {pe}",
                            path_string(path)
                        ));
                    }
                    set.insert(&with(path, pe.clone()));
                }
            }
            for (pe, item) in pes.into_iter().zip(items) {
                let Some(pe) = pe.filter(|pe| !duplicates.contains(pe)) else {
                    continue;
                };
                let p = with(path, pe);
                field_set_walk(&l.element, item, &p, set, lenient, errors);
                set.insert(&p);
            }
        }
        Resolved::Map(m) => {
            if m.atomic {
                set.insert(path);
                return;
            }
            let Value::Object(obj) = v else {
                return;
            };
            for (k, val) in obj {
                let (sub, named) = m.lookup(k);
                let p = with(path, PathElement::Field(k.clone()));
                if m.closed && !named && !lenient {
                    errors.push(format!("{}: field not declared in schema", path_string(&p)));
                    continue;
                }
                field_set_walk(&sub, val, &p, set, lenient, errors);
                let empty_map = matches!(val, Value::Object(o) if o.is_empty());
                if val.is_null() || empty_map || !named {
                    set.insert(&p);
                }
            }
        }
    }
}

/// Drops the fields a CRD schema does not declare, as the API server prunes every write
/// of a custom resource (apply bodies with such fields are rejected instead).
pub(crate) fn prune_undeclared(schema: &Schema, v: &mut Value) {
    match (schema.resolve(Some(v)), v) {
        (Resolved::Map(m), Value::Object(obj)) => {
            if m.closed {
                obj.retain(|k, _| m.fields.contains_key(k));
            }
            for (k, val) in obj.iter_mut() {
                prune_undeclared(&m.lookup(k).0, val);
            }
        }
        (Resolved::List(l), Value::Array(items)) => {
            for item in items {
                prune_undeclared(&l.element, item);
            }
        }
        _ => {}
    }
}

/// Fills in the schema's defaults for missing fields of the objects present, as the API
/// server defaults custom resources (and, for the few defaults the hand-written built-in
/// schemas carry, built-ins) on every write: after the merge of an apply, on the decoded
/// body of other writes.
pub(crate) fn apply_defaults(schema: &Schema, v: &mut Value) {
    match (schema.resolve(Some(v)), v) {
        (Resolved::Map(m), Value::Object(obj)) => {
            for (k, f) in &m.fields {
                if let Some(d) = &f.default
                    && !obj.contains_key(k)
                {
                    obj.insert(k.clone(), d.clone());
                }
            }
            for (k, val) in obj.iter_mut() {
                apply_defaults(&m.lookup(k).0, val);
            }
        }
        (Resolved::List(l), Value::Array(items)) => {
            for item in items {
                apply_defaults(&l.element, item);
            }
        }
        _ => {}
    }
}

// ----- Merge -----

/// Merges `rhs` (the applied configuration) into `lhs` (the live object): SMD `Merge` with
/// the keep-right-hand-side rule. Errors: invalid or duplicate keys in `rhs`.
pub(crate) fn merge(schema: &Schema, lhs: &Value, rhs: &Value) -> Result<Value, ItemError> {
    Ok(merge_walk(schema, Some(lhs), Some(rhs))?.unwrap_or(Value::Null))
}

fn same_shape(a: &Value, b: &Value) -> bool {
    matches!(
        (a, b),
        (Value::Object(_), Value::Object(_)) | (Value::Array(_), Value::Array(_))
    ) || (!a.is_object() && !a.is_array() && !b.is_object() && !b.is_array())
}

fn merge_walk(
    schema: &Schema,
    lhs: Option<&Value>,
    rhs: Option<&Value>,
) -> Result<Option<Value>, ItemError> {
    let leaf = || Ok(rhs.or(lhs).cloned());
    let probe = rhs.or(lhs);
    if let (Some(l), Some(r)) = (lhs, rhs)
        && !same_shape(l, r)
        && !l.is_null()
        && !r.is_null()
    {
        // A value whose shape changed is replaced whole.
        return leaf();
    }
    match schema.resolve(probe) {
        Resolved::Scalar => leaf(),
        Resolved::List(l) => {
            let la = lhs.and_then(Value::as_array);
            let ra = rhs.and_then(Value::as_array);
            let empty = la.is_none_or(Vec::is_empty) && ra.is_none_or(Vec::is_empty);
            if l.list_type == ListType::Atomic || empty {
                return leaf();
            }
            merge_list(&l, la.map(Vec::as_slice), ra.map(Vec::as_slice))
        }
        Resolved::Map(m) => {
            let lm = lhs.and_then(Value::as_object);
            let rm = rhs.and_then(Value::as_object);
            let empty = lm.is_none_or(Map::is_empty) && rm.is_none_or(Map::is_empty);
            if m.atomic || empty {
                return leaf();
            }
            merge_map(&m, lm, rm)
        }
    }
}

fn merge_map(
    m: &MapSchema,
    lhs: Option<&Map<String, Value>>,
    rhs: Option<&Map<String, Value>>,
) -> Result<Option<Value>, ItemError> {
    let mut out = Map::new();
    let mut keys: Vec<&String> = lhs.into_iter().flat_map(|l| l.keys()).collect();
    for k in rhs.into_iter().flat_map(|r| r.keys()) {
        if lhs.is_none_or(|l| !l.contains_key(k)) {
            keys.push(k);
        }
    }
    for k in keys {
        let (sub, _) = m.lookup(k);
        let merged = merge_walk(&sub, lhs.and_then(|l| l.get(k)), rhs.and_then(|r| r.get(k)))?;
        if let Some(v) = merged {
            out.insert(k.clone(), v);
        }
    }
    Ok((!out.is_empty()).then_some(Value::Object(out)))
}

/// Each distinct element of a list with its first item (`None` once duplicated).
type Observed<'a> = Vec<(PathElement, Option<&'a Value>)>;

/// Indexes a list by path element: the elements in order and the first item of each
/// (`Value::Null` for a duplicated element, as SMD does for the live side).
fn index_list<'a>(
    l: &ListSchema,
    items: &'a [Value],
    allow_duplicates: bool,
) -> Result<(Vec<PathElement>, Observed<'a>), ItemError> {
    let mut pes = Vec::with_capacity(items.len());
    let mut observed: Observed<'a> = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let pe = item_element(l, item).map_err(|e| format!("element {i}: {e}"))?;
        match observed.iter_mut().find(|(p, _)| *p == pe) {
            Some(_) if !allow_duplicates => {
                return Err(format!("duplicate entries for key {pe}"));
            }
            Some(entry) => entry.1 = None,
            None => observed.push((pe.clone(), Some(item))),
        }
        pes.push(pe);
    }
    Ok((pes, observed))
}

fn lookup<'a>(observed: &Observed<'a>, pe: &PathElement) -> Option<Option<&'a Value>> {
    observed.iter().find(|(p, _)| p == pe).map(|(_, v)| *v)
}

/// SMD's list merge: items of both sides merged by key, in an order that keeps the live
/// order of live items and puts applied items where the applied order says.
fn merge_list(
    l: &ListSchema,
    lhs: Option<&[Value]>,
    rhs: Option<&[Value]>,
) -> Result<Option<Value>, ItemError> {
    static NULL: Value = Value::Null;
    let lhs = lhs.unwrap_or_default();
    let rhs = rhs.unwrap_or_default();
    let (rhs_pes, observed_rhs) = index_list(l, rhs, false)?;
    let (lhs_pes, observed_lhs) = index_list(l, lhs, true)?;
    // A duplicated live element merges as `null`, like SMD's placeholder value.
    let live_item = |pe: &PathElement| -> Option<&Value> {
        lookup(&observed_lhs, pe).map(|v| v.unwrap_or(&NULL))
    };
    let mut shared: std::collections::VecDeque<&PathElement> = rhs_pes
        .iter()
        .filter(|pe| lookup(&observed_lhs, pe).is_some())
        .collect();
    let mut next_shared = shared.pop_front();
    let mut merged_rhs: Vec<&PathElement> = Vec::new();
    let mut out = Vec::new();
    let (mut li, mut ri) = (0, 0);
    while li < lhs_pes.len() || ri < rhs_pes.len() {
        if li < lhs_pes.len() && ri < rhs_pes.len() {
            let pe = &lhs_pes[li];
            if *pe == rhs_pes[ri] {
                merged_rhs.push(pe);
                let r = lookup(&observed_rhs, pe).flatten();
                if let Some(v) = merge_walk(&l.element, live_item(pe), r)? {
                    out.push(v);
                }
                li += 1;
                ri += 1;
                next_shared = shared.pop_front();
                continue;
            }
            if lookup(&observed_rhs, pe).is_some() && next_shared.is_some_and(|n| n != pe) {
                li += 1;
                continue;
            }
        }
        if li < lhs_pes.len() {
            let pe = &lhs_pes[li];
            if lookup(&observed_rhs, pe).is_none() {
                if let Some(v) = merge_walk(&l.element, Some(&lhs[li]), None)? {
                    out.push(v);
                }
                li += 1;
                continue;
            } else if merged_rhs.contains(&pe) {
                li += 1;
            }
        }
        if ri < rhs_pes.len() {
            let pe = &rhs_pes[ri];
            merged_rhs.push(pe);
            let r = lookup(&observed_rhs, pe).flatten();
            if let Some(v) = merge_walk(&l.element, live_item(pe), r)? {
                out.push(v);
            }
            ri += 1;
            if next_shared.is_some_and(|n| n == pe) {
                next_shared = shared.pop_front();
            }
        }
    }
    Ok((!out.is_empty()).then_some(Value::Array(out)))
}

// ----- Compare -----

/// The fields `rhs` removed, changed and added relative to `lhs` (SMD `Comparison`).
#[derive(Debug, Default)]
pub(crate) struct Comparison {
    pub removed: Set,
    pub modified: Set,
    pub added: Set,
}

impl Comparison {
    /// Drops the reset fields (and everything below them) from all three sets.
    pub(crate) fn exclude(&mut self, reset: &Set) {
        self.removed = self.removed.recursive_difference(reset);
        self.modified = self.modified.recursive_difference(reset);
        self.added = self.added.recursive_difference(reset);
    }
}

/// Compares two objects (SMD `TypedValue.Compare`).
pub(crate) fn compare(schema: &Schema, lhs: &Value, rhs: &Value) -> Comparison {
    let mut c = Comparison::default();
    compare_walk(schema, Some(lhs), Some(rhs), &Vec::new(), &mut c);
    c
}

/// Returns whether the node was handled as a leaf.
fn compare_leaf(lhs: Option<&Value>, rhs: Option<&Value>, path: &Path, c: &mut Comparison) -> bool {
    match (lhs, rhs) {
        (None, _) => c.added.insert(path),
        (_, None) => c.removed.insert(path),
        (Some(l), Some(r)) if l != r => c.modified.insert(path),
        _ => {}
    }
    true
}

fn compare_walk(
    schema: &Schema,
    lhs: Option<&Value>,
    rhs: Option<&Value>,
    path: &Path,
    c: &mut Comparison,
) {
    let in_leaf = compare_atom(schema, lhs, rhs, path, c);
    if !in_leaf {
        if lhs.is_none() {
            c.added.insert(path);
        } else if rhs.is_none() {
            c.removed.insert(path);
        }
    }
}

fn compare_atom(
    schema: &Schema,
    lhs: Option<&Value>,
    rhs: Option<&Value>,
    path: &Path,
    c: &mut Comparison,
) -> bool {
    if let (Some(l), Some(r)) = (lhs, rhs)
        && !same_shape(l, r)
        && !l.is_null()
        && !r.is_null()
    {
        return compare_leaf(lhs, rhs, path, c);
    }
    match schema.resolve(rhs.or(lhs)) {
        Resolved::Scalar => compare_leaf(lhs, rhs, path, c),
        Resolved::List(l) => {
            let la = lhs.and_then(Value::as_array);
            let ra = rhs.and_then(Value::as_array);
            let empty = la.is_none_or(Vec::is_empty) && ra.is_none_or(Vec::is_empty);
            if l.list_type == ListType::Atomic || empty {
                return compare_leaf(lhs, rhs, path, c);
            }
            compare_list(
                &l,
                la.map_or(&[][..], Vec::as_slice),
                ra.map_or(&[][..], Vec::as_slice),
                path,
                c,
            );
            false
        }
        Resolved::Map(m) => {
            let lm = lhs.and_then(Value::as_object);
            let rm = rhs.and_then(Value::as_object);
            let empty = lm.is_none_or(Map::is_empty) && rm.is_none_or(Map::is_empty);
            if m.atomic || empty {
                return compare_leaf(lhs, rhs, path, c);
            }
            let mut keys: Vec<&String> = lm.into_iter().flat_map(|l| l.keys()).collect();
            for k in rm.into_iter().flat_map(|r| r.keys()) {
                if lm.is_none_or(|l| !l.contains_key(k)) {
                    keys.push(k);
                }
            }
            for k in keys {
                let (sub, _) = m.lookup(k);
                let p = with(path, PathElement::Field(k.clone()));
                compare_walk(
                    &sub,
                    lm.and_then(|l| l.get(k)),
                    rm.and_then(|r| r.get(k)),
                    &p,
                    c,
                );
            }
            false
        }
    }
}

fn compare_list(l: &ListSchema, lhs: &[Value], rhs: &[Value], path: &Path, c: &mut Comparison) {
    // Items without a valid element are skipped, as SMD records them as errors.
    let mut all: Vec<PathElement> = Vec::new();
    let mut lvals: Vec<(PathElement, Vec<&Value>)> = Vec::new();
    for item in lhs {
        let Ok(pe) = item_element(l, item) else {
            continue;
        };
        match lvals.iter_mut().find(|(p, _)| *p == pe) {
            Some((_, v)) => v.push(item),
            None => {
                lvals.push((pe.clone(), vec![item]));
                all.push(pe);
            }
        }
    }
    let mut rvals: Vec<(PathElement, Vec<&Value>)> = Vec::new();
    for item in rhs {
        let Ok(pe) = item_element(l, item) else {
            continue;
        };
        match rvals.iter_mut().find(|(p, _)| *p == pe) {
            Some((_, v)) => v.push(item),
            None => {
                rvals.push((pe.clone(), vec![item]));
                if !lvals.iter().any(|(p, _)| *p == pe) {
                    all.push(pe);
                }
            }
        }
    }
    let get = |vals: &Vec<(PathElement, Vec<&'_ Value>)>, pe: &PathElement| -> Vec<Value> {
        vals.iter()
            .find(|(p, _)| p == pe)
            .map(|(_, v)| v.iter().map(|x| (*x).clone()).collect())
            .unwrap_or_default()
    };
    for pe in all {
        let ll = get(&lvals, &pe);
        let rl = get(&rvals, &pe);
        let p = with(path, pe);
        match (ll.len(), rl.len()) {
            (0, 0) => return,
            (a, b) if a <= 1 && b <= 1 => compare_walk(&l.element, ll.first(), rl.first(), &p, c),
            (a, b) if a >= 2 && b >= 2 => {
                if ll != rl {
                    c.modified.insert(&p);
                }
            }
            (a, _) if a >= 2 => {
                if let Some(r) = rl.first() {
                    compare_walk(&l.element, None, Some(r), &p, c);
                }
                c.removed.insert(&p);
            }
            _ => {
                if let Some(lv) = ll.first() {
                    compare_walk(&l.element, Some(lv), None, &p, c);
                }
                c.added.insert(&p);
            }
        }
    }
}

// ----- RemoveItems -----

/// `v` without the fields in `to_remove` (SMD `RemoveItems`). A map or list that loses
/// every entry becomes `null`, as in SMD.
pub(crate) fn remove_items(schema: &Schema, v: &Value, to_remove: &Set) -> Value {
    match schema.resolve(Some(v)) {
        Resolved::Scalar => v.clone(),
        Resolved::List(l) => {
            let Value::Array(items) = v else {
                return Value::Null;
            };
            if items.is_empty() || l.list_type == ListType::Atomic {
                return Value::Null;
            }
            let mut out = Vec::new();
            for item in items {
                let Ok(pe) = item_element(&l, item) else {
                    out.push(item.clone());
                    continue;
                };
                if to_remove.has(std::slice::from_ref(&pe)) {
                    continue;
                }
                let sub = to_remove.with_prefix(&pe);
                if sub.is_empty() {
                    out.push(item.clone());
                } else {
                    out.push(remove_items(&l.element, item, &sub));
                }
            }
            if out.is_empty() {
                Value::Null
            } else {
                Value::Array(out)
            }
        }
        Resolved::Map(m) => {
            let Value::Object(obj) = v else {
                return Value::Null;
            };
            if obj.is_empty() || m.atomic {
                return Value::Null;
            }
            let mut out = Map::new();
            for (k, val) in obj {
                let pe = PathElement::Field(k.clone());
                if to_remove.has(std::slice::from_ref(&pe)) {
                    continue;
                }
                let sub = to_remove.with_prefix(&pe);
                if sub.is_empty() {
                    out.insert(k.clone(), val.clone());
                } else {
                    let (schema, _) = m.lookup(k);
                    out.insert(k.clone(), remove_items(&schema, val, &sub));
                }
            }
            if out.is_empty() {
                Value::Null
            } else {
                Value::Object(out)
            }
        }
    }
}

/// SMD `Set.EnsureNamedFieldsAreMembers`: a set that owns `a.b.c` also owns the named
/// fields `a` and `a.b` (struct fields), but not map keys on the way.
pub(crate) fn ensure_named_fields_are_members(set: &Set, schema: &Schema) -> Set {
    let mut out = Set::new();
    out.members = set.members.clone();
    let resolved = schema.resolve(None);
    for (pe, child) in &set.children {
        let child_schema = match (&resolved, pe) {
            (Resolved::Map(m), PathElement::Field(name)) => {
                let (schema, named) = m.lookup(name);
                if named {
                    out.members.insert(pe.clone());
                }
                schema
            }
            (Resolved::List(l), PathElement::Key(_)) => l.element.clone(),
            _ => std::sync::Arc::new(Schema::Deduced),
        };
        let c = ensure_named_fields_are_members(child, &child_schema);
        out.children.insert(pe.clone(), c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fake::managed::fieldset::fields_path;
    use crate::fake::managed::schema::builtin;
    use serde_json::json;

    fn deployment() -> Schema {
        builtin("apps", "Deployment").unwrap()
    }

    #[test]
    fn field_set_of_an_apply_body() {
        let d = json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "x", "labels": {"a": "b"}},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"a": "b"}},
                "template": {"spec": {"containers": [{"name": "c", "image": "i",
                    "ports": [{"containerPort": 80}]}]}}}});
        let set = to_field_set(&deployment(), &d).unwrap();
        let fields = set.to_fields_v1();
        assert_eq!(
            fields["f:spec"]["f:template"]["f:spec"]["f:containers"]["k:{\"name\":\"c\"}"],
            json!({".": {}, "f:image": {}, "f:name": {}, "f:ports": {
                "k:{\"containerPort\":80,\"protocol\":\"TCP\"}": {".": {}, "f:containerPort": {}}}})
        );
        assert_eq!(fields["f:spec"]["f:selector"], json!({}));
        assert_eq!(fields["f:metadata"]["f:labels"], json!({"f:a": {}}));
        let dup =
            json!({"spec": {"template": {"spec": {"containers": [{"name": "c"}, {"name": "c"}]}}}});
        assert!(
            to_field_set(&deployment(), &dup)
                .unwrap_err()
                .contains("duplicate")
        );
        assert!(!to_field_set_lenient(&deployment(), &dup).is_empty());
    }

    #[test]
    fn merge_keeps_live_order_and_merges_by_key() {
        let s = deployment();
        let live = json!({"spec": {"template": {"spec": {"containers": [
            {"name": "a", "image": "1"}, {"name": "b", "image": "2"}]}}}});
        let cfg = json!({"spec": {"template": {"spec": {"containers": [
            {"name": "c", "image": "3"}, {"name": "a", "image": "9"}]}}}});
        let m = merge(&s, &live, &cfg).unwrap();
        let names: Vec<_> = m["spec"]["template"]["spec"]["containers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| (c["name"].as_str().unwrap(), c["image"].as_str().unwrap()))
            .collect();
        assert_eq!(names, vec![("c", "3"), ("a", "9"), ("b", "2")]);
    }

    #[test]
    fn compare_marks_added_maps_as_members() {
        let s = builtin("", "ConfigMap").unwrap();
        let c = compare(
            &s,
            &json!({"data": {"a": "1"}}),
            &json!({"data": {"a": "2"}, "metadata": {"labels": {"x": "y"}}}),
        );
        assert_eq!(c.modified.paths(), vec![fields_path(&["data", "a"])]);
        assert!(c.added.has(&fields_path(&["metadata", "labels"])));
        assert!(c.added.has(&fields_path(&["metadata", "labels", "x"])));
        assert!(c.removed.is_empty());
    }

    #[test]
    fn remove_and_named_fields() {
        let s = builtin("", "ConfigMap").unwrap();
        let mut set = Set::new();
        set.insert(&fields_path(&["data", "a"]));
        let v = remove_items(&s, &json!({"data": {"a": "1", "b": "2"}}), &set);
        assert_eq!(v, json!({"data": {"b": "2"}}));
        let named = ensure_named_fields_are_members(&set, &s);
        assert!(named.has(&fields_path(&["data"])));
        assert!(named.has(&fields_path(&["data", "a"])));
    }
}
