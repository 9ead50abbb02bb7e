//! Extraction: client-go's `ExtractFoo`/`ExtractFooStatus`. The apply configuration a field
//! manager owns, rebuilt from the object's `managedFields`.
//!
//! A manager's entry records the fields it owns as a FieldsV1 set: a JSON object whose
//! keys are `f:<name>` (a field of a struct or a map key), `k:{"name":"x"}` (the item of a
//! list map with these key fields), `v:<json>` (an item of a set), `i:<n>` (an item of an
//! atomic-by-index list) and `.` (the item or entry itself); `{}` is a leaf, owned whole.
//! [`extract_fields`] walks that set alongside the object's JSON and keeps exactly what
//! it names. A controller that reads the object, extracts what it owns, changes that
//! and applies it again never drops or claims a field by accident; applying an unchanged
//! extraction changes nothing.

use std::cmp::Ordering;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

// Keys are parsed by the codec the fake API server writes managedFields with, so a key
// means the same here as there; the walk, the matching and the errors are extraction's.
use super::fieldpath::{self, KeyError, OrdValue, PathElement};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ManagedFieldsEntry;

/// Which part of an object a managedFields entry is about: client-go's `subresource`
/// argument to `ExtractInto`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Subresource {
    /// The main resource (`apply`): entries with no subresource.
    Main,
    /// The status subresource (`apply_status`): entries with subresource `status`.
    Status,
}

impl Subresource {
    /// The subresource as managedFields writes it (`""` for the main resource).
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Subresource::Main => "",
            Subresource::Status => "status",
        }
    }
}

/// Why an extraction failed. managedFields come from the API server, but they are data in
/// an object anyone with write access may have written: malformed ones are an error,
/// never a panic.
#[derive(Debug, thiserror::Error)]
pub enum ExtractError {
    /// The manager's entry is not in the only format there is (`FieldsV1`).
    #[error("managedFields entry of {manager:?} has fieldsType {fields_type:?}, not FieldsV1")]
    NotFieldsV1 {
        /// The manager whose entry it is.
        manager: String,
        /// The format it declares.
        fields_type: String,
    },
    /// The FieldsV1 set is malformed at `path`: a key that does not parse, a value that is
    /// not a set, a list key where the object has a struct.
    #[error("malformed managedFields at {path}: {reason}")]
    Malformed {
        /// Where in the set, as `.spec.containers[k:{"name":"a"}]`.
        path: String,
        /// What is wrong.
        reason: String,
    },
    /// The object did not serialize to JSON.
    #[error("the object does not serialize: {0}")]
    Serialize(#[source] serde_json::Error),
    /// What the manager owns does not read as the apply configuration.
    #[error("the fields owned do not read as the apply configuration: {0}")]
    Decode(#[source] serde_json::Error),
}

fn malformed(path: &str, reason: impl Into<String>) -> ExtractError {
    ExtractError::Malformed {
        path: if path.is_empty() {
            ".".into()
        } else {
            path.into()
        },
        reason: reason.into(),
    }
}

/// The parts of `object` (the object's JSON) that `field_manager` owns through `Apply`
/// on `subresource`, by the entries of `managed_fields`. `Value::Object` of nothing when
/// it owns nothing.
///
/// # Errors
/// [`ExtractError::NotFieldsV1`] for an entry in another format, [`ExtractError::Malformed`]
/// for a set that is not one (see the module docs for the format).
pub fn extract_fields(
    object: &Value,
    managed_fields: &[ManagedFieldsEntry],
    field_manager: &str,
    subresource: Subresource,
) -> Result<Value, ExtractError> {
    let mut out = Value::Object(Map::new());
    // client-go's ExtractInto reads the one entry of this manager, operation Apply and
    // subresource; should there be several, what each owns is owned.
    for entry in managed_fields.iter().filter(|e| {
        e.manager.as_deref() == Some(field_manager)
            && e.operation.as_deref() == Some("Apply")
            && e.subresource.as_deref().unwrap_or("") == subresource.as_str()
    }) {
        if let Some(t) = entry.fields_type.as_deref()
            && t != "FieldsV1"
        {
            return Err(ExtractError::NotFieldsV1 {
                manager: field_manager.to_owned(),
                fields_type: t.to_owned(),
            });
        }
        let Some(set) = entry.fields_v1.as_ref().map(|f| &f.0) else {
            continue;
        };
        if let Some(owned) = walk(set, object, &mut String::new())? {
            merge(&mut out, owned);
        }
    }
    Ok(out)
}

/// client-go's `ExtractFoo`: the apply configuration `A` that `field_manager` owns in
/// `obj`, with `apiVersion`, `kind`, `metadata.name` and `metadata.namespace` set so it
/// can be applied as is. Generated `extract_foo`/`extract_foo_status` call it.
///
/// # Errors
/// As [`extract_fields`], plus [`ExtractError::Serialize`] and [`ExtractError::Decode`].
pub fn extract<K, A>(
    obj: &K,
    field_manager: &str,
    subresource: Subresource,
) -> Result<A, ExtractError>
where
    K: kube::Resource<DynamicType = ()> + Serialize,
    A: DeserializeOwned,
{
    let json = serde_json::to_value(obj).map_err(ExtractError::Serialize)?;
    let managed = obj.meta().managed_fields.as_deref().unwrap_or_default();
    let mut owned = extract_fields(&json, managed, field_manager, subresource)?;
    let Value::Object(map) = &mut owned else {
        unreachable!("extract_fields starts from an object")
    };
    map.insert("apiVersion".into(), K::api_version(&()).into_owned().into());
    map.insert("kind".into(), K::kind(&()).into_owned().into());
    let meta = map
        .entry("metadata")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Value::Object(meta) = meta {
        let m = obj.meta();
        if let Some(n) = &m.name {
            meta.insert("name".into(), n.clone().into());
        }
        if let Some(ns) = &m.namespace {
            meta.insert("namespace".into(), ns.clone().into());
        }
    }
    serde_json::from_value(owned).map_err(ExtractError::Decode)
}

/// What `set` names of `value`; `None` when it names nothing that exists.
fn walk(set: &Value, value: &Value, path: &mut String) -> Result<Option<Value>, ExtractError> {
    let Value::Object(set) = set else {
        return Err(malformed(
            path,
            format!("a field set is an object, not {set}"),
        ));
    };
    // `{}` (or only `.`): the value is owned whole (a leaf, an atomic struct or list).
    if fieldpath::entries(set).next().is_none() {
        return Ok(Some(value.clone()));
    }
    let len = path.len();
    let result = match value {
        Value::Object(fields) => {
            let mut out = Map::new();
            for (key, element, child) in fieldpath::entries(set) {
                let Ok(PathElement::Field(name)) = element else {
                    return Err(malformed(
                        path,
                        format!("`{key}` where the object has a struct or map (expected f:<name>)"),
                    ));
                };
                path.push('.');
                path.push_str(&name);
                if let Some(v) = fields.get(&name)
                    && let Some(owned) = walk(child, v, path)?
                {
                    out.insert(name, owned);
                }
                path.truncate(len);
            }
            Some(Value::Object(out))
        }
        Value::Array(items) => {
            // Keep the object's order, not the set's (a set's keys are sorted).
            let mut found: Vec<(usize, Value)> = vec![];
            for (key, element, child) in fieldpath::entries(set) {
                path.push('[');
                path.push_str(key);
                path.push(']');
                match element {
                    Ok(PathElement::Key(keys)) => {
                        // Only the key fields the set names are kept. client-go appends the
                        // others (`WithAppendKeyFields`), but a key the set does not name was
                        // defaulted by the server (an applier sends every key it sets), as
                        // `protocol: TCP` of a container port: applying it back would claim
                        // it and write, breaking "applying the extraction changes nothing"
                        // (tests/tests/apply_configurations.rs shows it on the API server).
                        if let Some(i) = items.iter().position(|item| names_item(&keys, item))
                            && let Some(owned) = walk(child, &items[i], path)?
                        {
                            found.push((i, owned));
                        }
                    }
                    Ok(PathElement::Value(v)) => {
                        // The object's item, not the key's JSON: they are equal as SMD
                        // compares values, not necessarily in how the number is written.
                        if let Some(i) = items.iter().position(|item| same(item, &v.0)) {
                            found.push((i, items[i].clone()));
                        }
                    }
                    Ok(PathElement::Index(i)) => {
                        if let Some(item) = items.get(i)
                            && let Some(owned) = walk(child, item, path)?
                        {
                            found.push((i, owned));
                        }
                    }
                    Err(KeyError::Key(e)) => {
                        return Err(malformed(
                            path,
                            format!("list-map key is not a JSON object: {e}"),
                        ));
                    }
                    Err(KeyError::Value(e)) => {
                        return Err(malformed(path, format!("set item is not JSON: {e}")));
                    }
                    Err(KeyError::Index(e)) => {
                        return Err(malformed(path, format!("list index: {e}")));
                    }
                    Ok(PathElement::Field(_)) | Err(KeyError::NoType | KeyError::UnknownType) => {
                        return Err(malformed(
                            path,
                            format!("`{key}` where the object has a list (expected k:, v: or i:)"),
                        ));
                    }
                }
                path.truncate(len);
            }
            found.sort_by_key(|(i, _)| *i);
            Some(Value::Array(found.into_iter().map(|(_, v)| v).collect()))
        }
        // A scalar with children in the set: the set says more than the value has.
        _ => {
            return Err(malformed(
                path,
                format!("fields under a value that is neither struct, map nor list ({value})"),
            ));
        }
    };
    Ok(result)
}

/// Whether the list-map key `keys` names `item`: every key field it lists has that value
/// in the item. Without the schema, the item's own key fields are unknown, so a key that
/// lists some of them names it (see the caller); a key that lists none names nothing, as
/// in SMD, where an item's key always has a field.
fn names_item(keys: &[(String, OrdValue)], item: &Value) -> bool {
    !keys.is_empty()
        && keys
            .iter()
            .all(|(k, v)| item.get(k).is_some_and(|iv| same(iv, &v.0)))
}

/// Equality as SMD's `value.Equals`: numbers by value, so `80` in the set names the `80.0`
/// of an `f64` field in the object.
fn same(a: &Value, b: &Value) -> bool {
    fieldpath::compare_values(a, b) == Ordering::Equal
}

/// Merge `b` into `a` (objects key by key; anything else: `b` wins). Used only to union
/// the entries of one manager.
fn merge(a: &mut Value, b: Value) {
    match (a, b) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, v) in b {
                match a.get_mut(&k) {
                    Some(existing) => merge(existing, v),
                    None => {
                        a.insert(k, v);
                    }
                }
            }
        }
        (a, b) => *a = b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::FieldsV1;
    use serde_json::json;

    fn entry(manager: &str, subresource: Option<&str>, fields: Value) -> ManagedFieldsEntry {
        ManagedFieldsEntry {
            manager: Some(manager.into()),
            operation: Some("Apply".into()),
            subresource: subresource.map(Into::into),
            fields_type: Some("FieldsV1".into()),
            fields_v1: Some(FieldsV1(fields)),
            api_version: Some("v1".into()),
            time: None,
        }
    }

    fn object() -> Value {
        json!({
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "d", "labels": {"a": "1", "b": "2"}, "finalizers": ["x", "y"]},
            "spec": {
                "replicas": 3,
                "paused": false,
                "selector": {"matchLabels": {"app": "d"}},
                "template": {"spec": {"containers": [
                    {"name": "one", "image": "i1", "args": ["--a"]},
                    {"name": "two", "image": "i2"}
                ]}}
            },
            "status": {"replicas": 3, "readyReplicas": 2}
        })
    }

    #[test]
    fn keeps_exactly_what_the_manager_owns() {
        let fields = json!({
            "f:metadata": {"f:labels": {"f:a": {}}, "f:finalizers": {"v:\"y\"": {}}},
            "f:spec": {
                "f:replicas": {},
                "f:selector": {},
                "f:template": {"f:spec": {"f:containers": {
                    "k:{\"name\":\"two\"}": {".": {}, "f:name": {}, "f:image": {}},
                    "k:{\"name\":\"one\"}": {".": {}, "f:name": {}, "f:args": {}}
                }}}
            }
        });
        let managed = [
            entry("me", None, fields),
            entry("other", None, json!({"f:spec": {"f:paused": {}}})),
            entry(
                "me",
                Some("status"),
                json!({"f:status": {"f:replicas": {}}}),
            ),
        ];
        let got = extract_fields(&object(), &managed, "me", Subresource::Main).unwrap();
        // Item "one" is owned without its image, item "two" without its args.
        assert_eq!(
            got,
            json!({
                "metadata": {"labels": {"a": "1"}, "finalizers": ["y"]},
                "spec": {
                    "replicas": 3,
                    "selector": {"matchLabels": {"app": "d"}},
                    "template": {"spec": {"containers": [
                        {"name": "one", "args": ["--a"]},
                        {"name": "two", "image": "i2"}
                    ]}}
                }
            })
        );
        let status = extract_fields(&object(), &managed, "me", Subresource::Status).unwrap();
        assert_eq!(status, json!({"status": {"replicas": 3}}));
        let none = extract_fields(&object(), &managed, "nobody", Subresource::Main).unwrap();
        assert_eq!(none, json!({}));
    }

    #[test]
    fn update_entries_are_not_extracted() {
        let mut e = entry("me", None, json!({"f:spec": {"f:replicas": {}}}));
        e.operation = Some("Update".into());
        let got = extract_fields(&object(), &[e], "me", Subresource::Main).unwrap();
        assert_eq!(got, json!({}));
    }

    #[test]
    fn index_items_and_missing_fields() {
        let fields = json!({"f:spec": {"f:template": {"f:spec": {"f:containers": {
            "i:1": {"f:image": {}},
            "i:7": {"f:image": {}}
        }}}, "f:gone": {}}});
        let got = extract_fields(
            &object(),
            &[entry("me", None, fields)],
            "me",
            Subresource::Main,
        )
        .unwrap();
        assert_eq!(
            got,
            json!({"spec": {"template": {"spec": {"containers": [{"image": "i2"}]}}}})
        );
    }

    /// The fake's decoder and SMD compare values with `value.Equals`, where an int and a
    /// float of the same value are equal: the API server writes `80` for a port that an
    /// `f64` field serializes as `80.0`. Extraction compares the same way, and keeps the
    /// object's own JSON of what it finds.
    #[test]
    fn numbers_name_items_by_value() {
        let object = json!({"spec": {
            "ports": [{"port": 443.0, "name": "https"}, {"port": 80.0, "name": "http"}],
            "weights": [1.5, 2.0]
        }});
        let fields = json!({"f:spec": {
            "f:ports": {"k:{\"port\":80}": {".": {}, "f:port": {}, "f:name": {}}},
            "f:weights": {"v:2": {}}
        }});
        let managed = [entry("me", None, fields)];
        let got = extract_fields(&object, &managed, "me", Subresource::Main).unwrap();
        assert_eq!(
            got,
            json!({"spec": {"ports": [{"port": 80.0, "name": "http"}], "weights": [2.0]}})
        );
    }

    /// A list-map key with no fields names no item: SMD builds an item's key from its key
    /// fields, and an item without any is an error, never `k:{}`.
    #[test]
    fn an_empty_list_map_key_names_nothing() {
        let fields = json!({"f:spec": {"f:template": {"f:spec": {"f:containers": {
            "k:{}": {"f:image": {}}
        }}}}});
        let managed = [entry("me", None, fields)];
        let got = extract_fields(&object(), &managed, "me", Subresource::Main).unwrap();
        assert_eq!(
            got,
            json!({"spec": {"template": {"spec": {"containers": []}}}})
        );
    }

    fn error_of(fields: Value) -> String {
        extract_fields(
            &object(),
            &[entry("me", None, fields)],
            "me",
            Subresource::Main,
        )
        .unwrap_err()
        .to_string()
    }

    #[test]
    fn malformed_sets_are_errors() {
        let containers =
            |set: Value| json!({"f:spec": {"f:template": {"f:spec": {"f:containers": set}}}});
        let e = error_of(containers(json!({"k:{name:one}": {}})));
        assert!(e.contains("list-map key is not a JSON object"), "{e}");
        assert!(
            e.contains(".spec.template.spec.containers[k:{name:one}]"),
            "{e}"
        );
        let e = error_of(containers(json!({"k:[1]": {}})));
        assert!(e.contains("list-map key is not a JSON object"), "{e}");
        let e = error_of(containers(json!({"v:not json": {}})));
        assert!(e.contains("set item is not JSON"), "{e}");
        let e = error_of(containers(json!({"i:x": {}})));
        assert!(e.contains("list index"), "{e}");
        let e = error_of(containers(json!({"f:name": {}})));
        assert!(e.contains("where the object has a list"), "{e}");
        let e = error_of(json!({"f:spec": {"k:{\"a\":1}": {}}}));
        assert!(e.contains("where the object has a struct"), "{e}");
        let e = error_of(json!({"f:spec": "yes"}));
        assert!(e.contains("a field set is an object"), "{e}");
        let e = error_of(json!(["f:spec"]));
        assert!(e.contains("malformed managedFields at ."), "{e}");
        let e = error_of(json!({"f:spec": {"f:replicas": {"f:deeper": {}}}}));
        assert!(e.contains("neither struct, map nor list"), "{e}");
        let mut other = entry("me", None, json!({}));
        other.fields_type = Some("FieldsV2".into());
        let e = extract_fields(&object(), &[other], "me", Subresource::Main).unwrap_err();
        assert!(matches!(e, ExtractError::NotFieldsV1 { .. }), "{e}");
    }

    proptest::proptest! {
        /// Any JSON as a field set is an answer or an error, never a panic.
        #[test]
        fn arbitrary_sets_never_panic(set in arb_json()) {
            let _ = extract_fields(&object(), &[entry("me", None, set)], "me", Subresource::Main);
        }
    }

    fn arb_json() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        let key = prop_oneof![
            Just("f:spec".to_owned()),
            Just("f:template".to_owned()),
            Just("f:containers".to_owned()),
            Just("f:replicas".to_owned()),
            Just(".".to_owned()),
            "[fkvi]:[{}\"a-z:0-9]{0,12}",
        ];
        let leaf = prop_oneof![
            Just(json!({})),
            Just(json!(1)),
            Just(json!("s")),
            Just(Value::Null)
        ];
        leaf.prop_recursive(5, 64, 6, move |inner| {
            prop_oneof![
                proptest::collection::btree_map(key.clone(), inner.clone(), 0..5)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
                proptest::collection::vec(inner, 0..3).prop_map(Value::Array),
            ]
        })
    }
}
