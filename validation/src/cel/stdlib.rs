//! CEL's standard functions and operators, as cel-go implements them for the values of
//! [`super::value`]: arithmetic with cel-go's overflow and division errors, heterogeneous
//! equality and numeric comparison, indexing, `in`, conversions, string functions, `matches`
//! (RE2, [`crate::re2`]), timestamps and durations, and the optional type's functions. The
//! Kubernetes libraries are in `library`, which this falls back from.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;

use chrono::{DateTime, Datelike, FixedOffset, TimeZone, Timelike};

use super::value::{ExecutionError, Value, as_optional, compare, equals, optional};

type Result<T> = std::result::Result<T, ExecutionError>;

fn overload() -> ExecutionError {
    ExecutionError::NoSuchOverload
}

fn int_overflow() -> ExecutionError {
    ExecutionError::msg("integer overflow")
}

fn uint_overflow() -> ExecutionError {
    ExecutionError::msg("unsigned integer overflow")
}

/// Calls a standard function or operator: `Ok(None)` when `name` is none of them.
pub(super) fn call(name: &str, this: Option<&Value>, args: &[Value]) -> Result<Option<Value>> {
    use super::syntax::ast::operators as op;
    let v = match (name, this, args) {
        (op::ADD, None, [a, b]) => add(a, b)?,
        (op::SUBSTRACT, None, [a, b]) => sub(a, b)?,
        (op::MULTIPLY, None, [a, b]) => mul(a, b)?,
        (op::DIVIDE, None, [a, b]) => div(a, b)?,
        (op::MODULO, None, [a, b]) => rem(a, b)?,
        (op::NEGATE, None, [a]) => match a {
            Value::Int(i) => Value::Int(i.checked_neg().ok_or_else(int_overflow)?),
            Value::Float(f) => Value::Float(-f),
            Value::Duration(d) => Value::Duration(-*d),
            _ => return Err(overload()),
        },
        (op::LOGICAL_NOT, None, [a]) => match a {
            Value::Bool(b) => Value::Bool(!b),
            _ => return Err(overload()),
        },
        (op::EQUALS, None, [a, b]) => Value::Bool(equals(a, b)),
        (op::NOT_EQUALS, None, [a, b]) => Value::Bool(!equals(a, b)),
        (op::LESS | op::LESS_EQUALS | op::GREATER | op::GREATER_EQUALS, None, [a, b]) => {
            let Some(o) = compare(a, b) else {
                // NaN against a number is false, not an error. Anything else without an
                // order (lists, maps, null, a type without `<`) has no overload, as in
                // cel-go: `[1] < [2]` is an error, not false.
                if is_number(a) && is_number(b) {
                    return Ok(Some(Value::Bool(false)));
                }
                return Err(overload());
            };
            use std::cmp::Ordering::*;
            Value::Bool(match name {
                op::LESS => o == Less,
                op::LESS_EQUALS => o != Greater,
                op::GREATER => o == Greater,
                _ => o != Less,
            })
        }
        (op::IN, None, [a, b]) => Value::Bool(contains_value(b, a)?),
        (op::INDEX, None, [a, b]) => index(a, b)?,
        (op::OPT_INDEX, None, [a, b]) => opt_index(a, b)?,
        (op::OPT_SELECT, None, [a, Value::String(f)]) => opt_select(a, f)?,
        ("size", None, [a]) | ("size", Some(a), []) => Value::Int(size(a)?),
        ("contains", Some(Value::String(s)), [Value::String(t)]) => {
            Value::Bool(s.contains(t.as_str()))
        }
        ("startsWith", Some(Value::String(s)), [Value::String(t)]) => {
            Value::Bool(s.starts_with(t.as_str()))
        }
        ("endsWith", Some(Value::String(s)), [Value::String(t)]) => {
            Value::Bool(s.ends_with(t.as_str()))
        }
        ("matches", Some(Value::String(s)), [Value::String(re)])
        | ("matches", None, [Value::String(s), Value::String(re)]) => {
            Value::Bool(with_regex(re, |r| r.is_match(s))?)
        }
        ("int", None, [a]) => to_int(a)?,
        ("uint", None, [a]) => to_uint(a)?,
        ("double", None, [a]) => to_double(a)?,
        ("string", None, [a]) => to_string(a)?,
        ("bytes", None, [a]) => match a {
            Value::Bytes(_) => a.clone(),
            Value::String(s) => Value::Bytes(Arc::new(s.as_bytes().to_vec())),
            _ => return Err(overload()),
        },
        ("bool", None, [a]) => match a {
            Value::Bool(_) => a.clone(),
            Value::String(s) => Value::Bool(match s.as_str() {
                "1" | "t" | "T" | "true" | "TRUE" | "True" => true,
                "0" | "f" | "F" | "false" | "FALSE" | "False" => false,
                _ => {
                    return Err(ExecutionError::msg(
                        "type conversion error from 'string' to 'bool'",
                    ));
                }
            }),
            _ => return Err(overload()),
        },
        ("dyn", None, [a]) => a.clone(),
        ("timestamp", None, [a]) => match a {
            Value::Timestamp(_) => a.clone(),
            Value::String(s) => timestamp(s)?,
            Value::Int(i) => {
                let t = chrono::Utc
                    .timestamp_opt(*i, 0)
                    .single()
                    .ok_or_else(|| ExecutionError::msg("timestamp out of range"))?;
                checked_timestamp(t.fixed_offset())?
            }
            _ => return Err(overload()),
        },
        // Go's `time.ParseDuration`, to the nanosecond.
        ("duration", None, [a]) => match a {
            Value::Duration(_) => a.clone(),
            Value::String(s) => super::duration::parse_go(s)
                .map(|n| Value::Duration(chrono::Duration::nanoseconds(n)))
                .map_err(|_| ExecutionError::msg(format!("time: invalid duration {s:?}")))?,
            Value::Int(i) => Value::Duration(chrono::Duration::nanoseconds(*i)),
            _ => return Err(overload()),
        },
        ("optional.of", None, [a]) => optional(Some(a.clone())),
        ("optional.none", None, []) => optional(None),
        ("optional.ofNonZeroValue", None, [a]) => optional((!a.is_zero()).then(|| a.clone())),
        ("hasValue", Some(o), []) => {
            Value::Bool(as_optional(o).ok_or_else(overload)?.value().is_some())
        }
        ("value", Some(o), []) => as_optional(o)
            .ok_or_else(overload)?
            .value()
            .cloned()
            .ok_or_else(|| ExecutionError::msg("optional.none() dereference"))?,
        ("orValue", Some(o), [d]) => as_optional(o)
            .ok_or_else(overload)?
            .value()
            .cloned()
            .unwrap_or_else(|| d.clone()),
        ("or", Some(o), [other]) => {
            let opt = as_optional(o).ok_or_else(overload)?;
            if as_optional(other).is_none() {
                return Err(overload());
            }
            if opt.value().is_some() {
                o.clone()
            } else {
                other.clone()
            }
        }
        _ => return Ok(None),
    };
    Ok(Some(v))
}

fn is_number(v: &Value) -> bool {
    matches!(v, Value::Int(_) | Value::UInt(_) | Value::Float(_))
}

fn add(a: &Value, b: &Value) -> Result<Value> {
    Ok(match (a, b) {
        (Value::Int(x), Value::Int(y)) => Value::Int(x.checked_add(*y).ok_or_else(int_overflow)?),
        (Value::UInt(x), Value::UInt(y)) => {
            Value::UInt(x.checked_add(*y).ok_or_else(uint_overflow)?)
        }
        (Value::Float(x), Value::Float(y)) => Value::Float(x + y),
        (Value::String(x), Value::String(y)) => {
            let mut s = String::with_capacity(x.len() + y.len());
            s.push_str(x);
            s.push_str(y);
            Value::from(s)
        }
        (Value::Bytes(x), Value::Bytes(y)) => {
            Value::Bytes(Arc::new(x.iter().chain(y.iter()).copied().collect()))
        }
        (Value::List(x), Value::List(y)) => {
            if y.is_empty() {
                a.clone()
            } else if x.is_empty() {
                b.clone()
            } else {
                Value::List(Arc::new(x.iter().chain(y.iter()).cloned().collect()))
            }
        }
        (Value::Duration(x), Value::Duration(y)) => {
            Value::Duration(x.checked_add(y).ok_or_else(int_overflow)?)
        }
        (Value::Timestamp(t), Value::Duration(d)) | (Value::Duration(d), Value::Timestamp(t)) => {
            checked_timestamp(t.checked_add_signed(*d).ok_or_else(int_overflow)?)?
        }
        _ => return Err(overload()),
    })
}

fn sub(a: &Value, b: &Value) -> Result<Value> {
    Ok(match (a, b) {
        (Value::Int(x), Value::Int(y)) => Value::Int(x.checked_sub(*y).ok_or_else(int_overflow)?),
        (Value::UInt(x), Value::UInt(y)) => {
            Value::UInt(x.checked_sub(*y).ok_or_else(uint_overflow)?)
        }
        (Value::Float(x), Value::Float(y)) => Value::Float(x - y),
        (Value::Duration(x), Value::Duration(y)) => {
            Value::Duration(x.checked_sub(y).ok_or_else(int_overflow)?)
        }
        (Value::Timestamp(t), Value::Duration(d)) => {
            checked_timestamp(t.checked_sub_signed(*d).ok_or_else(int_overflow)?)?
        }
        (Value::Timestamp(x), Value::Timestamp(y)) => {
            let d = x.signed_duration_since(*y);
            // Go's time.Duration is an int64 of nanoseconds.
            d.num_nanoseconds().ok_or_else(int_overflow)?;
            Value::Duration(d)
        }
        _ => return Err(overload()),
    })
}

fn mul(a: &Value, b: &Value) -> Result<Value> {
    Ok(match (a, b) {
        (Value::Int(x), Value::Int(y)) => Value::Int(x.checked_mul(*y).ok_or_else(int_overflow)?),
        (Value::UInt(x), Value::UInt(y)) => {
            Value::UInt(x.checked_mul(*y).ok_or_else(uint_overflow)?)
        }
        (Value::Float(x), Value::Float(y)) => Value::Float(x * y),
        _ => return Err(overload()),
    })
}

fn div(a: &Value, b: &Value) -> Result<Value> {
    Ok(match (a, b) {
        (Value::Int(_), Value::Int(0)) | (Value::UInt(_), Value::UInt(0)) => {
            return Err(ExecutionError::msg("division by zero"));
        }
        (Value::Int(x), Value::Int(y)) => Value::Int(x.checked_div(*y).ok_or_else(int_overflow)?),
        (Value::UInt(x), Value::UInt(y)) => Value::UInt(x / y),
        (Value::Float(x), Value::Float(y)) => Value::Float(x / y),
        _ => return Err(overload()),
    })
}

fn rem(a: &Value, b: &Value) -> Result<Value> {
    Ok(match (a, b) {
        (Value::Int(_), Value::Int(0)) | (Value::UInt(_), Value::UInt(0)) => {
            return Err(ExecutionError::msg("modulus by zero"));
        }
        (Value::Int(x), Value::Int(y)) => Value::Int(x.checked_rem(*y).ok_or_else(int_overflow)?),
        (Value::UInt(x), Value::UInt(y)) => Value::UInt(x % y),
        _ => return Err(overload()),
    })
}

/// `size()`: code points of a string, bytes, elements, entries.
pub(super) fn size(v: &Value) -> Result<i64> {
    Ok(match v {
        Value::String(s) => s.chars().count() as i64,
        Value::Bytes(b) => b.len() as i64,
        Value::List(l) => l.len() as i64,
        Value::Map(m) => m.map.len() as i64,
        _ => return Err(overload()),
    })
}

/// `x in container`.
fn contains_value(container: &Value, x: &Value) -> Result<bool> {
    match container {
        Value::List(l) => Ok(l.iter().any(|e| equals(e, x))),
        Value::Map(m) => Ok(m.get(x).is_some()),
        _ => Err(overload()),
    }
}

/// A list index (an int, a uint, or an integral double), or `None`.
fn list_index(i: &Value) -> Result<i64> {
    match *i {
        Value::Int(i) => Ok(i),
        Value::UInt(u) => i64::try_from(u).map_err(|_| ExecutionError::msg("index out of range")),
        Value::Float(f) if f.fract() == 0.0 && f.abs() < 9.2e18 => Ok(f as i64),
        Value::Float(f) => Err(ExecutionError::msg(format!(
            "unsupported index value {}",
            fmt_double(f)
        ))),
        _ => Err(overload()),
    }
}

/// `a[i]`
pub(super) fn index(a: &Value, i: &Value) -> Result<Value> {
    if let Some(o) = as_optional(a) {
        return opt_index(&optional_inner(o), i);
    }
    match a {
        Value::List(l) => {
            let n = list_index(i)?;
            usize::try_from(n)
                .ok()
                .and_then(|k| l.get(k))
                .cloned()
                .ok_or_else(|| ExecutionError::msg(format!("index out of bounds: {n}")))
        }
        Value::Map(m) => m.get(i).cloned().ok_or_else(|| {
            // The key as cel-go prints it: a string as is, a number or bool in its form.
            let key = match to_string(i) {
                Ok(Value::String(s)) => s.to_string(),
                _ => i.type_name().to_owned(),
            };
            ExecutionError::NoSuchKey(Arc::new(key))
        }),
        _ => Err(overload()),
    }
}

fn optional_inner(o: &super::value::OptionalValue) -> Value {
    match o.value() {
        Some(v) => v.clone(),
        None => optional(None),
    }
}

/// `a[?i]`: `optional.of(a[i])`, or `optional.none()` where `a[i]` is missing.
fn opt_index(a: &Value, i: &Value) -> Result<Value> {
    if let Some(o) = as_optional(a) {
        return match o.value() {
            Some(inner) => opt_index(inner, i),
            None => Ok(optional(None)),
        };
    }
    match a {
        Value::List(l) => {
            let n = list_index(i)?;
            Ok(optional(
                usize::try_from(n).ok().and_then(|k| l.get(k)).cloned(),
            ))
        }
        Value::Map(m) => Ok(optional(m.get(i).cloned())),
        _ => Err(overload()),
    }
}

/// `a.?f`
fn opt_select(a: &Value, f: &str) -> Result<Value> {
    if let Some(o) = as_optional(a) {
        return match o.value() {
            Some(inner) => opt_select(inner, f),
            None => Ok(optional(None)),
        };
    }
    match a {
        Value::Map(m) => Ok(optional(m.get_str(f).cloned())),
        _ => Err(overload()),
    }
}

/// `a.f` (`test`: `has(a.f)`), for the evaluator's selections.
pub(super) fn select(a: &Value, f: &str, test: bool) -> Result<Value> {
    if let Some(o) = as_optional(a) {
        // Selection on an optional stays optional (cel-go's optional chaining).
        return match o.value() {
            Some(inner) if test => select(inner, f, true),
            Some(inner) => opt_select(inner, f),
            None if test => Ok(Value::Bool(false)),
            None => Ok(optional(None)),
        };
    }
    match a {
        Value::Map(m) => match (m.get_str(f), test) {
            (Some(_), true) => Ok(Value::Bool(true)),
            (None, true) => Ok(Value::Bool(false)),
            (Some(v), false) => Ok(v.clone()),
            (None, false) => Err(ExecutionError::NoSuchKey(Arc::new(f.to_owned()))),
        },
        _ => Err(overload()),
    }
}

fn to_int(a: &Value) -> Result<Value> {
    Ok(Value::Int(match a {
        Value::Int(i) => *i,
        Value::UInt(u) => i64::try_from(*u).map_err(|_| int_overflow())?,
        Value::Float(f) => {
            if !(*f > -9.223_372_036_854_776e18 && *f < 9.223_372_036_854_776e18) {
                return Err(int_overflow());
            }
            f.trunc() as i64
        }
        Value::String(s) => s
            .parse::<i64>()
            .map_err(|_| ExecutionError::msg("type conversion error from 'string' to 'int'"))?,
        Value::Timestamp(t) => t.timestamp(),
        Value::Duration(d) => d.num_nanoseconds().ok_or_else(int_overflow)?,
        Value::Bool(_)
        | Value::Bytes(_)
        | Value::List(_)
        | Value::Map(_)
        | Value::Null
        | Value::Opaque(_) => return Err(overload()),
    }))
}

fn to_uint(a: &Value) -> Result<Value> {
    Ok(Value::UInt(match a {
        Value::UInt(u) => *u,
        Value::Int(i) => u64::try_from(*i).map_err(|_| uint_overflow())?,
        Value::Float(f) => {
            if !(*f > -1.0 && *f < 1.844_674_407_370_955_2e19) {
                return Err(uint_overflow());
            }
            f.trunc() as u64
        }
        Value::String(s) => s
            .parse::<u64>()
            .map_err(|_| ExecutionError::msg("type conversion error from 'string' to 'uint'"))?,
        _ => return Err(overload()),
    }))
}

fn to_double(a: &Value) -> Result<Value> {
    Ok(Value::Float(match a {
        Value::Float(f) => *f,
        Value::Int(i) => *i as f64,
        Value::UInt(u) => *u as f64,
        Value::String(s) => parse_go_float(s).ok_or_else(|| {
            ExecutionError::msg("type conversion error from 'string' to 'double'")
        })?,
        _ => return Err(overload()),
    }))
}

/// Go's `strconv.ParseFloat(s, 64)`: decimal and special values (`Inf`, `NaN`, any case).
fn parse_go_float(s: &str) -> Option<f64> {
    let lower = s.to_ascii_lowercase();
    let body = lower.trim_start_matches(['+', '-']);
    if matches!(body, "inf" | "infinity" | "nan") {
        return s.parse().ok();
    }
    if body.is_empty()
        || !body
            .bytes()
            .all(|b| b.is_ascii_digit() || b".e+-_".contains(&b))
    {
        return None;
    }
    s.replace('_', "").parse().ok()
}

/// `string(x)` of the standard types (the library types' forms are the library's).
pub(super) fn to_string(a: &Value) -> Result<Value> {
    Ok(match a {
        Value::String(_) => a.clone(),
        Value::Int(i) => Value::from(i.to_string()),
        Value::UInt(u) => Value::from(u.to_string()),
        Value::Float(f) => Value::from(fmt_double(*f)),
        Value::Bool(b) => Value::from(b.to_string()),
        Value::Bytes(b) => Value::from(String::from_utf8(b.to_vec()).map_err(|_| {
            ExecutionError::msg("invalid UTF-8 in bytes, cannot convert to string")
        })?),
        Value::Timestamp(t) => Value::from(fmt_timestamp(t)),
        Value::Duration(d) => Value::from(fmt_duration(d)),
        _ => return Err(overload()),
    })
}

/// Go's `strconv.FormatFloat(f, 'g', -1, 64)`: the shortest digits, in exponent form when
/// the exponent is below -4 or at least 6 (as `%g` prints it).
pub(crate) fn fmt_double(f: f64) -> String {
    if f.is_nan() {
        return "NaN".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "+Inf" } else { "-Inf" }.into();
    }
    if f == 0.0 {
        return if f.is_sign_negative() { "-0" } else { "0" }.into();
    }
    // Rust's `{:e}` is the shortest round-trip digits: `d.ddde±x`.
    let e = format!("{f:e}");
    let (mantissa, exp) = e.split_once('e').expect("exponent form");
    let exp: i32 = exp.parse().expect("an integer exponent");
    if !(-4..6).contains(&exp) {
        let sign = if exp < 0 { '-' } else { '+' };
        return format!("{mantissa}e{sign}{:02}", exp.abs());
    }
    format!("{f}")
}

/// Go's `time.RFC3339Nano` (`2006-01-02T15:04:05.999999999Z07:00`).
pub(crate) fn fmt_timestamp(t: &DateTime<FixedOffset>) -> String {
    let mut s = format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}",
        t.year(),
        t.month(),
        t.day(),
        t.hour(),
        t.minute(),
        t.second()
    );
    let nanos = t.nanosecond() % 1_000_000_000;
    if nanos != 0 {
        let frac = format!("{nanos:09}");
        s.push('.');
        s.push_str(frac.trim_end_matches('0'));
    }
    let off = t.offset().local_minus_utc();
    if off == 0 {
        s.push('Z');
    } else {
        let sign = if off < 0 { '-' } else { '+' };
        let off = off.abs();
        s.push_str(&format!("{sign}{:02}:{:02}", off / 3600, off % 3600 / 60));
    }
    s
}

/// cel-go's `string(duration)`: the seconds, shortest, and `s`.
pub(crate) fn fmt_duration(d: &chrono::Duration) -> String {
    let nanos = d.num_nanoseconds().unwrap_or(i64::MAX);
    let secs = nanos as f64 / 1e9;
    format!("{secs}s")
}

/// `timestamp(string)`: RFC 3339, within cel-go's range (years 1 to 9999).
pub(crate) fn timestamp(s: &str) -> Result<Value> {
    let t = DateTime::parse_from_rfc3339(s).map_err(|_| {
        ExecutionError::msg("type conversion error from 'string' to 'google.protobuf.Timestamp'")
    })?;
    checked_timestamp(t)
}

fn checked_timestamp(t: DateTime<FixedOffset>) -> Result<Value> {
    let y = t.with_timezone(&chrono::Utc).year();
    if !(1..=9999).contains(&y) {
        return Err(ExecutionError::msg("timestamp out of range"));
    }
    Ok(Value::Timestamp(t))
}

thread_local! {
    /// Compiled patterns of `matches`, per thread: rules repeat theirs on every object.
    static REGEXES: RefCell<HashMap<String, regex::Regex>> = RefCell::new(HashMap::new());
}

/// Runs `f` on the compiled RE2 `pattern`.
pub(super) fn with_regex<R>(pattern: &str, f: impl FnOnce(&regex::Regex) -> R) -> Result<R> {
    REGEXES.with(|cache| {
        if let Some(r) = cache.borrow().get(pattern) {
            return Ok(f(r));
        }
        let r = crate::re2::regex(pattern).map_err(|e| {
            ExecutionError::msg(format!(
                "invalid regular expression: {}",
                e.to_string().lines().last().unwrap_or_default().trim()
            ))
        })?;
        let out = f(&r);
        let mut cache = cache.borrow_mut();
        // Bounded: a rule's pattern may come from the object.
        if cache.len() >= 256 {
            cache.clear();
        }
        cache.insert(pattern.to_owned(), r);
        Ok(out)
    })
}
