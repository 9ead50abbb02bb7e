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

/// The CEL value of a `date-time`, `date` or `duration` string, as the API server types
/// those formats in rules: a timestamp (strfmt's date-time layouts: `T`, `t` or a space
/// between date and time, `z` for `Z`, an offset with or without its colon, no zone meaning
/// UTC; a date is its midnight UTC) or a duration (Go's `time.ParseDuration`, or strfmt's
/// `<n> <unit>` with days and weeks). `None` if `s` is none of these.
pub fn time_value(format: &str, s: &str) -> Option<Value> {
    match format {
        "date-time" => cel::functions::timestamp(std::sync::Arc::new(rfc3339(s)?)).ok(),
        "date" => cel::functions::timestamp(std::sync::Arc::new(format!("{s}T00:00:00Z"))).ok(),
        "duration" => go_duration(s),
        _ => None,
    }
}

/// strfmt's date-time layouts rewritten as RFC 3339.
fn rfc3339(s: &str) -> Option<String> {
    let (date, rest) = (s.get(..10)?, s.get(10..)?);
    let rest = rest.strip_prefix(['T', 't', ' '])?;
    let mut time = rest.replace('z', "Z");
    let zone_at = time.rfind(['Z', '+', '-']);
    match zone_at {
        Some(i) if &time[i..] == "Z" => {}
        Some(i) => {
            let zone = &time[i + 1..];
            if zone.len() == 4 && zone.bytes().all(|b| b.is_ascii_digit()) {
                time = format!("{}{}:{}", &time[..=i], &zone[..2], &zone[2..]);
            }
        }
        None => time.push('Z'),
    }
    Some(format!("{date}T{time}"))
}

/// Go's `time.ParseDuration` (`1h30m`, `1.5s`, `-2m`), or strfmt's single `<n> <unit>`
/// form (`3 days`, `1w`), as strfmt's `ParseDuration` reads `format: duration`.
fn go_duration(s: &str) -> Option<Value> {
    super::duration::parse_strfmt(s).map(|n| Value::Duration(chrono::Duration::nanoseconds(n)))
}
