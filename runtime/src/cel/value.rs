//! JSON to CEL values, as the API server binds `self` for a schemaless value.

use std::collections::HashMap;
use std::sync::Arc;

use cel::Value;
use cel::objects::{Key, Map};

/// A JSON value as CEL sees it without a schema: integers as `int`, other numbers as
/// `double`, objects as maps with string keys. (The validation module converts with the
/// schema, where `type: number` makes every number a `double`.)
pub fn json_to_cel(v: &serde_json::Value) -> Value {
    match v {
        serde_json::Value::Null => Value::Null,
        serde_json::Value::Bool(b) => Value::Bool(*b),
        serde_json::Value::Number(n) => match n.as_i64() {
            Some(i) => Value::Int(i),
            None => match n.as_u64() {
                Some(u) => Value::UInt(u),
                None => Value::Float(n.as_f64().unwrap_or(f64::NAN)),
            },
        },
        serde_json::Value::String(s) => Value::String(Arc::new(s.clone())),
        serde_json::Value::Array(a) => Value::List(Arc::new(a.iter().map(json_to_cel).collect())),
        serde_json::Value::Object(o) => object(o.iter().map(|(k, v)| (k, json_to_cel(v)))),
    }
}

/// A CEL map from string keys.
pub fn object<'a>(entries: impl Iterator<Item = (&'a String, Value)>) -> Value {
    let map: HashMap<Key, Value> = entries
        .map(|(k, v)| (Key::String(Arc::new(k.clone())), v))
        .collect();
    Value::Map(Map { map: Arc::new(map) })
}

/// CEL's name of a value's type, as error messages print it.
pub fn type_name(v: &Value) -> String {
    match v {
        Value::Opaque(o) => o.runtime_type_name().to_owned(),
        v => v.type_of().to_string(),
    }
}
