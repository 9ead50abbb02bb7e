//! CEL values (cel-go's `ref.Val` types that CRD rules meet), their equality and ordering
//! as cel-go defines them (numbers compare across int, uint and double), the evaluation
//! error, and JSON to CEL values as the API server binds `self` for a schemaless value.

use std::any::Any;
use std::cmp::Ordering;
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use chrono::{DateTime, FixedOffset};

/// A CEL value.
#[derive(Clone, Debug)]
pub enum Value {
    /// `list`
    List(Arc<Vec<Value>>),
    /// `map`
    Map(Map),
    /// `int`
    Int(i64),
    /// `uint`
    UInt(u64),
    /// `double`
    Float(f64),
    /// `string`
    String(Arc<String>),
    /// `bytes`
    Bytes(Arc<Vec<u8>>),
    /// `bool`
    Bool(bool),
    /// `google.protobuf.Duration`
    Duration(chrono::Duration),
    /// `google.protobuf.Timestamp`
    Timestamp(DateTime<FixedOffset>),
    /// A library type (quantities, IPs, CIDRs, URLs, semvers, named formats, optionals).
    Opaque(Arc<dyn Opaque>),
    /// `null_type`
    Null,
}

/// A CEL map.
#[derive(Clone, Debug, Default)]
pub struct Map {
    /// The entries.
    pub map: Arc<HashMap<Key, Value>>,
}

impl Map {
    /// The value of `key`, found as cel-go finds it: a number by its value whatever its
    /// type (`m[1u]` finds the key `1`; a double only when it is integral).
    #[must_use]
    pub fn get(&self, key: &Value) -> Option<&Value> {
        match key {
            Value::String(s) => self.map.get(&Key::String(s.clone())),
            Value::Bool(b) => self.map.get(&Key::Bool(*b)),
            Value::Int(i) => self.get_number(Some(*i), u64::try_from(*i).ok()),
            Value::UInt(u) => self.get_number(i64::try_from(*u).ok(), Some(*u)),
            Value::Float(f) if f.fract() == 0.0 => {
                let i = (*f >= i64::MIN as f64 && *f < i64::MAX as f64).then_some(*f as i64);
                let u = (*f >= 0.0 && *f < u64::MAX as f64).then_some(*f as u64);
                self.get_number(i, u)
            }
            _ => None,
        }
    }

    /// The entry of an int or uint key equal to the number (`i` and `u`: its value as each,
    /// where it is one).
    fn get_number(&self, i: Option<i64>, u: Option<u64>) -> Option<&Value> {
        i.and_then(|i| self.map.get(&Key::Int(i)))
            .or_else(|| u.and_then(|u| self.map.get(&Key::Uint(u))))
    }

    /// The value of a string key.
    #[must_use]
    pub fn get_str(&self, key: &str) -> Option<&Value> {
        // No `Borrow<str>` for `Key`: a lookup by a borrowed key would need one.
        self.map.get(&Key::String(Arc::new(key.to_owned())))
    }
}

/// A map key: CEL allows ints, uints, bools and strings.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Key {
    /// `int`
    Int(i64),
    /// `uint`
    Uint(u64),
    /// `bool`
    Bool(bool),
    /// `string`
    String(Arc<String>),
}

impl Key {
    /// The key of a value, if it can be one.
    #[must_use]
    pub fn of(v: &Value) -> Option<Key> {
        Some(match v {
            Value::Int(i) => Key::Int(*i),
            Value::UInt(u) => Key::Uint(*u),
            Value::Bool(b) => Key::Bool(*b),
            Value::String(s) => Key::String(s.clone()),
            _ => return None,
        })
    }
}

impl From<&Key> for Value {
    fn from(k: &Key) -> Value {
        match k {
            Key::Int(i) => Value::Int(*i),
            Key::Uint(u) => Value::UInt(*u),
            Key::Bool(b) => Value::Bool(*b),
            Key::String(s) => Value::String(s.clone()),
        }
    }
}

/// A value of a library type.
pub trait Opaque: Any + OpaqueEq + fmt::Debug + Send + Sync {
    /// The CEL type's name (`kubernetes.Quantity`, `net.IP`, `optional_type`).
    fn runtime_type_name(&self) -> &str;
}

/// Equality between library values, of the same type only.
pub trait OpaqueEq {
    /// Whether `other` is of this type and equal to it.
    fn opaque_eq(&self, other: &dyn Opaque) -> bool;
}

impl<T: Eq + Opaque> OpaqueEq for T {
    fn opaque_eq(&self, other: &dyn Opaque) -> bool {
        other.downcast_ref::<T>().is_some_and(|o| self == o)
    }
}

impl dyn Opaque {
    /// The value as its concrete type.
    #[must_use]
    pub fn downcast_ref<T: Opaque>(&self) -> Option<&T> {
        (self as &dyn Any).downcast_ref::<T>()
    }
}

/// `optional_type`: `optional.of(v)` or `optional.none()`.
#[derive(Clone, Debug)]
pub struct OptionalValue(Option<Value>);

impl OptionalValue {
    /// `optional.of(v)`
    #[must_use]
    pub fn of(v: Value) -> Self {
        OptionalValue(Some(v))
    }

    /// `optional.none()`
    #[must_use]
    pub fn none() -> Self {
        OptionalValue(None)
    }

    /// The value, if any.
    #[must_use]
    pub fn value(&self) -> Option<&Value> {
        self.0.as_ref()
    }
}

impl PartialEq for OptionalValue {
    fn eq(&self, other: &Self) -> bool {
        match (&self.0, &other.0) {
            (None, None) => true,
            (Some(a), Some(b)) => equals(a, b),
            _ => false,
        }
    }
}

impl Eq for OptionalValue {}

impl Opaque for OptionalValue {
    fn runtime_type_name(&self) -> &str {
        "optional_type"
    }
}

/// The optional a value holds, if it is one.
pub(crate) fn as_optional(v: &Value) -> Option<&OptionalValue> {
    downcast(v)
}

/// A library value as its concrete type: `None` for any other value.
pub(crate) fn downcast<T: Opaque>(v: &Value) -> Option<&T> {
    match v {
        Value::Opaque(o) => o.downcast_ref::<T>(),
        _ => None,
    }
}

/// A library value.
pub(crate) fn opaque<T: Opaque>(t: T) -> Value {
    Value::Opaque(Arc::new(t))
}

/// `optional.of(v)` or `optional.none()`.
pub(crate) fn optional(v: Option<Value>) -> Value {
    opaque(OptionalValue(v))
}

/// CEL's `_==_`: heterogeneous equality (different types are unequal, not an error), numbers
/// by value across int, uint and double, lists and maps element by element.
#[must_use]
pub fn equals(a: &Value, b: &Value) -> bool {
    use Value::*;
    match (a, b) {
        (Null, Null) => true,
        (Bool(x), Bool(y)) => x == y,
        (String(x), String(y)) => x == y,
        (Bytes(x), Bytes(y)) => x == y,
        (Duration(x), Duration(y)) => x == y,
        (Timestamp(x), Timestamp(y)) => x == y,
        (List(x), List(y)) => {
            x.len() == y.len() && x.iter().zip(y.iter()).all(|(a, b)| equals(a, b))
        }
        (Map(x), Map(y)) => {
            x.map.len() == y.map.len()
                && x.map
                    .iter()
                    .all(|(k, v)| y.get(&Value::from(k)).is_some_and(|w| equals(v, w)))
        }
        (Opaque(x), Opaque(y)) => x.opaque_eq(y.as_ref()),
        _ => match numeric_cmp(a, b) {
            Some(o) => o == Ordering::Equal,
            None => false,
        },
    }
}

/// Numbers compared by value across int, uint and double (`None` for NaN or non-numbers).
fn numeric_cmp(a: &Value, b: &Value) -> Option<Ordering> {
    use Value::*;
    match (a, b) {
        (Int(x), Int(y)) => Some(x.cmp(y)),
        (UInt(x), UInt(y)) => Some(x.cmp(y)),
        (Float(x), Float(y)) => x.partial_cmp(y),
        (Int(x), UInt(y)) => Some(if *x < 0 {
            Ordering::Less
        } else {
            (*x as u64).cmp(y)
        }),
        (UInt(x), Int(y)) => Some(if *y < 0 {
            Ordering::Greater
        } else {
            x.cmp(&(*y as u64))
        }),
        (Int(x), Float(y)) => cmp_int_double(*x as i128, *y),
        (UInt(x), Float(y)) => cmp_int_double(*x as i128, *y),
        (Float(x), Int(y)) => cmp_int_double(*y as i128, *x).map(Ordering::reverse),
        (Float(x), UInt(y)) => cmp_int_double(*y as i128, *x).map(Ordering::reverse),
        _ => None,
    }
}

/// An integer against a double, exactly (cel-go compares through the double's range).
fn cmp_int_double(i: i128, d: f64) -> Option<Ordering> {
    if d.is_nan() {
        return None;
    }
    if d < -9.3e18 {
        return Some(Ordering::Greater);
    }
    if d > 1.9e19 {
        return Some(Ordering::Less);
    }
    let t = d.trunc();
    match i.cmp(&(t as i128)) {
        Ordering::Equal => 0.0f64.partial_cmp(&(d - t)),
        o => Some(o),
    }
}

/// CEL's ordering (`_<_`…): numbers across types, strings, bytes, bools, timestamps and
/// durations; `None` where there is no overload.
pub(crate) fn compare(a: &Value, b: &Value) -> Option<Ordering> {
    use Value::*;
    match (a, b) {
        (String(x), String(y)) => Some(x.cmp(y)),
        (Bytes(x), Bytes(y)) => Some(x.cmp(y)),
        (Bool(x), Bool(y)) => Some(x.cmp(y)),
        (Duration(x), Duration(y)) => Some(x.cmp(y)),
        (Timestamp(x), Timestamp(y)) => Some(x.cmp(y)),
        _ => numeric_cmp(a, b),
    }
}

impl PartialEq for Value {
    fn eq(&self, other: &Value) -> bool {
        equals(self, other)
    }
}

impl PartialOrd for Value {
    fn partial_cmp(&self, other: &Value) -> Option<Ordering> {
        compare(self, other)
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::String(Arc::new(s.to_owned()))
    }
}

impl From<String> for Value {
    fn from(s: String) -> Value {
        Value::String(Arc::new(s))
    }
}

impl Value {
    /// cel-go's type name, as error messages print it.
    #[must_use]
    pub fn type_name(&self) -> &str {
        match self {
            Value::List(_) => "list",
            Value::Map(_) => "map",
            Value::Int(_) => "int",
            Value::UInt(_) => "uint",
            Value::Float(_) => "double",
            Value::String(_) => "string",
            Value::Bytes(_) => "bytes",
            Value::Bool(_) => "bool",
            Value::Duration(_) => "google.protobuf.Duration",
            Value::Timestamp(_) => "google.protobuf.Timestamp",
            Value::Opaque(o) => o.runtime_type_name(),
            Value::Null => "null_type",
        }
    }

    /// Whether it is its type's zero value (`optional.ofNonZeroValue`).
    #[must_use]
    pub fn is_zero(&self) -> bool {
        match self {
            Value::List(l) => l.is_empty(),
            Value::Map(m) => m.map.is_empty(),
            Value::Int(i) => *i == 0,
            Value::UInt(u) => *u == 0,
            Value::Float(f) => *f == 0.0,
            Value::String(s) => s.is_empty(),
            Value::Bytes(b) => b.is_empty(),
            Value::Bool(b) => !b,
            Value::Duration(d) => d.is_zero(),
            Value::Timestamp(t) => t.timestamp() == 0 && t.timestamp_subsec_nanos() == 0,
            Value::Null => true,
            Value::Opaque(_) => false,
        }
    }
}

/// Why an evaluation failed (cel-go's error values; their messages are cel-go's where the
/// API server's responses carry them).
#[derive(Clone, Debug, PartialEq)]
pub enum ExecutionError {
    /// `no such key: k`
    NoSuchKey(Arc<String>),
    /// No overload of an operator or function for the operands' types.
    NoSuchOverload,
    /// A function's own error.
    FunctionError {
        /// The function.
        function: String,
        /// What went wrong.
        message: String,
    },
    /// An argument of the wrong type.
    UnexpectedType {
        /// The argument's type.
        got: String,
        /// The type wanted.
        want: String,
    },
    /// Two values with no order between them.
    ValuesNotComparable(Value, Value),
    /// A function called with too many or too few arguments.
    InvalidArgumentCount {
        /// Wanted.
        expected: usize,
        /// Given.
        actual: usize,
    },
    /// A receiver function called without one.
    MissingArgumentOrTarget,
    /// A variable that is not bound.
    UndeclaredReference(String),
    /// Anything else, in cel-go's words (`division by zero`, `integer overflow`…).
    Message(String),
}

impl ExecutionError {
    /// A function's error.
    pub fn function_error(function: &str, message: impl ToString) -> Self {
        ExecutionError::FunctionError {
            function: function.to_owned(),
            message: message.to_string(),
        }
    }

    /// Wrong argument count.
    #[must_use]
    pub fn invalid_argument_count(expected: usize, actual: usize) -> Self {
        ExecutionError::InvalidArgumentCount { expected, actual }
    }

    /// No receiver.
    #[must_use]
    pub fn missing_argument_or_target() -> Self {
        ExecutionError::MissingArgumentOrTarget
    }

    /// An error in cel-go's words.
    pub fn msg(m: impl Into<String>) -> Self {
        ExecutionError::Message(m.into())
    }
}

impl fmt::Display for ExecutionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExecutionError::NoSuchKey(k) => write!(f, "no such key: {k}"),
            ExecutionError::NoSuchOverload => f.write_str("no such overload"),
            ExecutionError::FunctionError { message, .. } => f.write_str(message),
            ExecutionError::UnexpectedType { got, want } => {
                write!(f, "no such overload: got '{got}', want '{want}'")
            }
            ExecutionError::ValuesNotComparable(a, b) => {
                write!(
                    f,
                    "no such overload: {} and {} do not compare",
                    a.type_name(),
                    b.type_name()
                )
            }
            ExecutionError::InvalidArgumentCount { expected, actual } => {
                write!(
                    f,
                    "no such overload: expected {expected} arguments, got {actual}"
                )
            }
            ExecutionError::MissingArgumentOrTarget => {
                f.write_str("no such overload: missing receiver")
            }
            ExecutionError::UndeclaredReference(name) => {
                write!(f, "undeclared reference to '{name}' (in container '')")
            }
            ExecutionError::Message(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for ExecutionError {}

// ---- JSON --------------------------------------------------------------------------------

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
    v.type_name().to_owned()
}

/// The CEL value of a `date-time`, `date` or `duration` string, as the API server types
/// those formats in rules: a timestamp (strfmt's date-time layouts: `T`, `t` or a space
/// between date and time, `z` for `Z`, an offset with or without its colon, no zone meaning
/// UTC; a date is its midnight UTC) or a duration (Go's `time.ParseDuration`, or strfmt's
/// `<n> <unit>` with days and weeks). `None` if `s` is none of these.
pub fn time_value(format: &str, s: &str) -> Option<Value> {
    match format {
        "date-time" => super::stdlib::timestamp(&rfc3339(s)?).ok(),
        "date" => super::stdlib::timestamp(&format!("{s}T00:00:00Z")).ok(),
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
