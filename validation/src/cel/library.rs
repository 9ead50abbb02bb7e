//! The Kubernetes CEL libraries CRD rules may call (declared in `functions`), on top of
//! the standard functions (`stdlib`): one handler per function name, dispatching on the
//! receiver's and the arguments' types as the overloads of cel-go and
//! k8s.io/apiserver/pkg/cel/library do.

use std::cmp::Ordering;
use std::sync::Arc;

use std::collections::HashMap;
use std::sync::OnceLock;

use super::value::{ExecutionError, Opaque, Value, downcast, opaque, optional};

use super::value::type_name;

type Result<T> = std::result::Result<T, ExecutionError>;

/// A library function: the call's context (its name), the receiver, the arguments.
type Handler = fn(&FunctionContext, Option<Value>, Vec<Value>) -> Result<Value>;

/// What a library function knows of its call: its name, for its errors.
pub(super) struct FunctionContext {
    name: &'static str,
}

impl FunctionContext {
    fn error(&self, message: impl ToString) -> ExecutionError {
        ExecutionError::function_error(self.name, message)
    }
}

/// The library function `name` (qualified for namespaced ones: `sets.contains`), if the
/// library has one of that name.
pub(super) fn function(name: &str) -> Option<Function> {
    static TABLE: OnceLock<HashMap<&'static str, Handler>> = OnceLock::new();
    let (name, handler) = TABLE.get_or_init(table).get_key_value(name)?;
    Some(Function {
        name,
        handler: *handler,
    })
}

/// A library function, ready to call.
pub(super) struct Function {
    name: &'static str,
    handler: Handler,
}

impl Function {
    /// Calls it with the receiver (if any) and the arguments.
    pub(super) fn call(&self, this: Option<Value>, args: Vec<Value>) -> Result<Value> {
        (self.handler)(&FunctionContext { name: self.name }, this, args)
    }
}

fn table() -> HashMap<&'static str, Handler> {
    let mut table: HashMap<&'static str, Handler> = HashMap::new();
    macro_rules! reg {
        ($($name:literal => $f:expr),* $(,)?) => {
            $(table.insert($name, |ftx: &FunctionContext, this: Option<Value>, args: Vec<Value>| -> Result<Value> {
                $f(ftx, this, args)
            });)*
        };
    }
    reg! {
        "dyn" => |_: &FunctionContext, _this: Option<Value>, args: Vec<Value>| one(args),
        "string" => string,
        "min" => |ftx: &FunctionContext, this, args| extreme(ftx, this, args, Ordering::Less),
        "max" => |ftx: &FunctionContext, this, args| extreme(ftx, this, args, Ordering::Greater),
        "isSorted" => is_sorted,
        "sum" => sum,
        "indexOf" => |ftx: &FunctionContext, this, args| index_of(ftx, this, args, false),
        "lastIndexOf" => |ftx: &FunctionContext, this, args| index_of(ftx, this, args, true),
        "getFullYear" => |ftx: &FunctionContext, this, args| time_part(ftx, this, args, TimePart::FullYear),
        "getMonth" => |ftx: &FunctionContext, this, args| time_part(ftx, this, args, TimePart::Month),
        "getDayOfYear" => |ftx: &FunctionContext, this, args| time_part(ftx, this, args, TimePart::DayOfYear),
        "getDayOfMonth" => |ftx: &FunctionContext, this, args| time_part(ftx, this, args, TimePart::DayOfMonth),
        "getDate" => |ftx: &FunctionContext, this, args| time_part(ftx, this, args, TimePart::Date),
        "getDayOfWeek" => |ftx: &FunctionContext, this, args| time_part(ftx, this, args, TimePart::DayOfWeek),
        "getHours" => |ftx: &FunctionContext, this, args| time_part(ftx, this, args, TimePart::Hours),
        "getMinutes" => |ftx: &FunctionContext, this, args| time_part(ftx, this, args, TimePart::Minutes),
        "getSeconds" => |ftx: &FunctionContext, this, args| time_part(ftx, this, args, TimePart::Seconds),
        "getMilliseconds" => |ftx: &FunctionContext, this, args| time_part(ftx, this, args, TimePart::Milliseconds),
        "charAt" => char_at,
        "lowerAscii" => |ftx: &FunctionContext, this, _| Ok(Value::from(recv_str(ftx, this)?.to_ascii_lowercase())),
        "upperAscii" => |ftx: &FunctionContext, this, _| Ok(Value::from(recv_str(ftx, this)?.to_ascii_uppercase())),
        "replace" => replace,
        "split" => split,
        "substring" => substring,
        "trim" => |ftx: &FunctionContext, this, _| Ok(Value::from(recv_str(ftx, this)?.trim())),
        "join" => join,
        "strings.quote" => |_: &FunctionContext, _, args: Vec<Value>| Ok(Value::from(quote(&as_str(&one(args)?)?))),
        "reverse" => |ftx: &FunctionContext, this, _| Ok(Value::from(recv_str(ftx, this)?.chars().rev().collect::<String>())),
        "format" => format_string,
        "find" => |ftx: &FunctionContext, this, args| find(ftx, this, args, false),
        "findAll" => |ftx: &FunctionContext, this, args| find(ftx, this, args, true),
        "sets.contains" => |_: &FunctionContext, _, args: Vec<Value>| sets(args, SetOp::Contains),
        "sets.equivalent" => |_: &FunctionContext, _, args: Vec<Value>| sets(args, SetOp::Equivalent),
        "sets.intersects" => |_: &FunctionContext, _, args: Vec<Value>| sets(args, SetOp::Intersects),
        "url" => |ftx: &FunctionContext, _, args: Vec<Value>| {
            let s = as_str(&one(args)?)?;
            Url::parse(&s).map(opaque).ok_or_else(|| ftx.error(format!("URL parse error during conversion from string: {s}")))
        },
        "isURL" => |_: &FunctionContext, _, args: Vec<Value>| Ok(Value::Bool(Url::parse(&as_str(&one(args)?)?).is_some())),
        "getScheme" => |ftx: &FunctionContext, this, _| Ok(Value::from(recv::<Url>(ftx, this)?.scheme)),
        "getHost" => |ftx: &FunctionContext, this, _| Ok(Value::from(recv::<Url>(ftx, this)?.host)),
        "getHostname" => |ftx: &FunctionContext, this, _| Ok(Value::from(recv::<Url>(ftx, this)?.hostname())),
        "getPort" => |ftx: &FunctionContext, this, _| Ok(Value::from(recv::<Url>(ftx, this)?.port())),
        "getEscapedPath" => |ftx: &FunctionContext, this, _| Ok(Value::from(recv::<Url>(ftx, this)?.path)),
        "getQuery" => |ftx: &FunctionContext, this, _| Ok(recv::<Url>(ftx, this)?.query_map()),
        "quantity" => |ftx: &FunctionContext, _, args: Vec<Value>| {
            let s = as_str(&one(args)?)?;
            Quantity::parse(&s).map(opaque).ok_or_else(|| ftx.error("quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"))
        },
        "isQuantity" => |_: &FunctionContext, _, args: Vec<Value>| Ok(Value::Bool(Quantity::parse(&as_str(&one(args)?)?).is_some())),
        "sign" => |ftx: &FunctionContext, this, _| Ok(Value::Int(recv::<Quantity>(ftx, this)?.mantissa.signum() as i64)),
        "isInteger" => |ftx: &FunctionContext, this, _| Ok(Value::Bool(recv::<Quantity>(ftx, this)?.as_i64().is_some())),
        "asInteger" => |ftx: &FunctionContext, this, _| recv::<Quantity>(ftx, this)?.as_i64().map(Value::Int).ok_or_else(|| ftx.error("cannot convert value to integer")),
        "asApproximateFloat" => |ftx: &FunctionContext, this, _| Ok(Value::Float(recv::<Quantity>(ftx, this)?.as_f64())),
        "add" => |ftx: &FunctionContext, this, args| quantity_arith(ftx, this, args, 1),
        "sub" => |ftx: &FunctionContext, this, args| quantity_arith(ftx, this, args, -1),
        "isGreaterThan" => |ftx: &FunctionContext, this, args| compare(ftx, this, args).map(|o| Value::Bool(o == Ordering::Greater)),
        "isLessThan" => |ftx: &FunctionContext, this, args| compare(ftx, this, args).map(|o| Value::Bool(o == Ordering::Less)),
        "compareTo" => |ftx: &FunctionContext, this, args| compare(ftx, this, args).map(|o| Value::Int(o as i64)),
        "ip" => ip,
        "isIP" => |_: &FunctionContext, _, args: Vec<Value>| Ok(Value::Bool(parse_ip(&as_str(&one(args)?)?).is_some())),
        "ip.isCanonical" => |ftx: &FunctionContext, _, args: Vec<Value>| {
            let s = as_str(&one(args)?)?;
            let ip = parse_ip(&s).ok_or_else(|| ftx.error(format!("IP Address {s:?} parse error during conversion from string")))?;
            Ok(Value::Bool(ip.to_string() == *s))
        },
        "family" => |ftx: &FunctionContext, this, _| Ok(Value::Int(if recv::<Ip>(ftx, this)?.0.is_ipv4() { 4 } else { 6 })),
        "isUnspecified" => |ftx: &FunctionContext, this, _| Ok(Value::Bool(recv::<Ip>(ftx, this)?.0.is_unspecified())),
        "isLoopback" => |ftx: &FunctionContext, this, _| Ok(Value::Bool(recv::<Ip>(ftx, this)?.0.is_loopback())),
        "isLinkLocalMulticast" => |ftx: &FunctionContext, this, _| Ok(Value::Bool(recv::<Ip>(ftx, this)?.is_link_local_multicast())),
        "isLinkLocalUnicast" => |ftx: &FunctionContext, this, _| Ok(Value::Bool(recv::<Ip>(ftx, this)?.is_link_local_unicast())),
        "isGlobalUnicast" => |ftx: &FunctionContext, this, _| Ok(Value::Bool(recv::<Ip>(ftx, this)?.is_global_unicast())),
        "cidr" => |ftx: &FunctionContext, _, args: Vec<Value>| {
            let s = as_str(&one(args)?)?;
            Cidr::parse(&s).map(opaque).ok_or_else(|| ftx.error(format!("network address parse error during conversion from string: {s}")))
        },
        "isCIDR" => |_: &FunctionContext, _, args: Vec<Value>| Ok(Value::Bool(Cidr::parse(&as_str(&one(args)?)?).is_some())),
        "containsIP" => |ftx: &FunctionContext, this, args: Vec<Value>| {
            let c = recv::<Cidr>(ftx, this)?;
            let ip = match one(args)? {
                Value::String(s) => parse_ip(&s).ok_or_else(|| ftx.error(format!("IP Address {s:?} parse error during conversion from string")))?,
                v => downcast::<Ip>(&v).ok_or_else(|| no_overload(ftx, &v))?.0,
            };
            Ok(Value::Bool(c.contains(ip)))
        },
        "containsCIDR" => |ftx: &FunctionContext, this, args: Vec<Value>| {
            let c = recv::<Cidr>(ftx, this)?;
            let other = match one(args)? {
                Value::String(s) => Cidr::parse(&s).ok_or_else(|| ftx.error(format!("network address parse error during conversion from string: {s}")))?,
                v => downcast::<Cidr>(&v).ok_or_else(|| no_overload(ftx, &v))?.clone(),
            };
            Ok(Value::Bool(other.prefix >= c.prefix && c.contains(other.addr)))
        },
        "masked" => |ftx: &FunctionContext, this, _| Ok(opaque(recv::<Cidr>(ftx, this)?.masked())),
        "prefixLength" => |ftx: &FunctionContext, this, _| Ok(Value::Int(recv::<Cidr>(ftx, this)?.prefix as i64)),
        "format.named" => |ftx: &FunctionContext, _, args: Vec<Value>| {
            let name = as_str(&one(args)?)?;
            let _ = ftx;
            Ok(optional(NamedFormat::from_name(&name).map(opaque)))
        },
        "format.dns1123Label" => |_: &FunctionContext, _, _| Ok(opaque(NamedFormat::Dns1123Label)),
        "format.dns1123Subdomain" => |_: &FunctionContext, _, _| Ok(opaque(NamedFormat::Dns1123Subdomain)),
        "format.dns1035Label" => |_: &FunctionContext, _, _| Ok(opaque(NamedFormat::Dns1035Label)),
        "format.qualifiedName" => |_: &FunctionContext, _, _| Ok(opaque(NamedFormat::QualifiedName)),
        "format.dns1123LabelPrefix" => |_: &FunctionContext, _, _| Ok(opaque(NamedFormat::Dns1123LabelPrefix)),
        "format.dns1123SubdomainPrefix" => |_: &FunctionContext, _, _| Ok(opaque(NamedFormat::Dns1123SubdomainPrefix)),
        "format.dns1035LabelPrefix" => |_: &FunctionContext, _, _| Ok(opaque(NamedFormat::Dns1035LabelPrefix)),
        "format.labelValue" => |_: &FunctionContext, _, _| Ok(opaque(NamedFormat::LabelValue)),
        "format.uri" => |_: &FunctionContext, _, _| Ok(opaque(NamedFormat::Uri)),
        "format.uuid" => |_: &FunctionContext, _, _| Ok(opaque(NamedFormat::Uuid)),
        "format.byte" => |_: &FunctionContext, _, _| Ok(opaque(NamedFormat::Byte)),
        "format.date" => |_: &FunctionContext, _, _| Ok(opaque(NamedFormat::Date)),
        "format.datetime" => |_: &FunctionContext, _, _| Ok(opaque(NamedFormat::Datetime)),
        "validate" => |ftx: &FunctionContext, this, args: Vec<Value>| {
            let f = recv::<NamedFormat>(ftx, this)?;
            let errs = f.validate(&as_str(&one(args)?)?);
            Ok(optional((!errs.is_empty()).then(|| Value::List(Arc::new(errs.iter().map(|e| Value::from(e.as_str())).collect())))))
        },
        "semver" => |ftx: &FunctionContext, _, args: Vec<Value>| {
            let s = as_str(args.first().ok_or_else(|| ftx.error("missing argument"))?)?;
            let normalize = matches!(args.get(1), Some(Value::Bool(true)));
            parse_semver(&s, normalize).map(opaque).ok_or_else(|| ftx.error(format!("invalid semver: {s}")))
        },
        "isSemver" => |ftx: &FunctionContext, _, args: Vec<Value>| {
            let s = as_str(args.first().ok_or_else(|| ftx.error("missing argument"))?)?;
            let normalize = matches!(args.get(1), Some(Value::Bool(true)));
            Ok(Value::Bool(parse_semver(&s, normalize).is_some()))
        },
        "major" => |ftx: &FunctionContext, this, _| Ok(Value::Int(recv::<Semver>(ftx, this)?.0.major as i64)),
        "minor" => |ftx: &FunctionContext, this, _| Ok(Value::Int(recv::<Semver>(ftx, this)?.0.minor as i64)),
        "patch" => |ftx: &FunctionContext, this, _| Ok(Value::Int(recv::<Semver>(ftx, this)?.0.patch as i64)),
    }
    table
}

fn one(args: Vec<Value>) -> Result<Value> {
    let n = args.len();
    let mut it = args.into_iter();
    match (it.next(), n) {
        (Some(v), 1) => Ok(v),
        _ => Err(ExecutionError::invalid_argument_count(1, n)),
    }
}

fn no_overload(ftx: &FunctionContext, v: &Value) -> ExecutionError {
    ftx.error(format!("no such overload for {}", type_name(v)))
}

fn as_str(v: &Value) -> Result<Arc<String>> {
    match v {
        Value::String(s) => Ok(s.clone()),
        v => Err(ExecutionError::UnexpectedType {
            got: type_name(v),
            want: "string".into(),
        }),
    }
}

fn as_int(v: &Value) -> Result<i64> {
    match v {
        Value::Int(i) => Ok(*i),
        Value::UInt(u) => {
            i64::try_from(*u).map_err(|_| ExecutionError::function_error("int", "overflow"))
        }
        v => Err(ExecutionError::UnexpectedType {
            got: type_name(v),
            want: "int".into(),
        }),
    }
}

fn recv_str(ftx: &FunctionContext, this: Option<Value>) -> Result<Arc<String>> {
    match this {
        Some(Value::String(s)) => Ok(s),
        Some(v) => Err(no_overload(ftx, &v)),
        None => Err(ExecutionError::missing_argument_or_target()),
    }
}

fn recv<T: Opaque + Clone>(ftx: &FunctionContext, this: Option<Value>) -> Result<T> {
    match this {
        Some(v) => downcast::<T>(&v)
            .cloned()
            .ok_or_else(|| no_overload(ftx, &v)),
        None => Err(ExecutionError::missing_argument_or_target()),
    }
}

/// `string(x)`: the standard conversions, plus the library types' string forms.
fn string(ftx: &FunctionContext, this: Option<Value>, args: Vec<Value>) -> Result<Value> {
    let v = match this {
        Some(v) => v,
        None => one(args)?,
    };
    if let Some(ip) = downcast::<Ip>(&v) {
        return Ok(Value::from(ip.0.to_string()));
    }
    if let Some(c) = downcast::<Cidr>(&v) {
        return Ok(Value::from(format!("{}/{}", c.addr, c.prefix)));
    }
    if let Some(u) = downcast::<Url>(&v) {
        return Ok(Value::from(u.raw.as_str()));
    }
    if let Some(q) = downcast::<Quantity>(&v) {
        return Ok(Value::from(q.raw.as_str()));
    }
    if let Some(s) = downcast::<Semver>(&v) {
        return Ok(Value::from(s.0.to_string()));
    }
    let _ = ftx;
    super::stdlib::to_string(&v)
}

fn cmp_values(a: &Value, b: &Value) -> Result<Ordering> {
    a.partial_cmp(b)
        .ok_or_else(|| ExecutionError::ValuesNotComparable(a.clone(), b.clone()))
}

/// `min`/`max`: of a list receiver (Kubernetes lists library) or of the arguments.
fn extreme(
    ftx: &FunctionContext,
    this: Option<Value>,
    args: Vec<Value>,
    want: Ordering,
) -> Result<Value> {
    let items: Vec<Value> = match (this, args.len()) {
        (Some(Value::List(l)), 0) => l.to_vec(),
        (None, 1) => match &args[0] {
            Value::List(l) => l.to_vec(),
            v => vec![v.clone()],
        },
        (None, _) => args,
        (Some(v), _) => return Err(no_overload(ftx, &v)),
    };
    let mut it = items.into_iter();
    let mut best = it.next().ok_or_else(|| {
        ftx.error(format!(
            "{} called on empty list",
            if want == Ordering::Less { "min" } else { "max" }
        ))
    })?;
    for v in it {
        if cmp_values(&v, &best)? == want {
            best = v;
        }
    }
    Ok(best)
}

fn list(ftx: &FunctionContext, this: Option<Value>) -> Result<Arc<Vec<Value>>> {
    match this {
        Some(Value::List(l)) => Ok(l),
        Some(v) => Err(no_overload(ftx, &v)),
        None => Err(ExecutionError::missing_argument_or_target()),
    }
}

fn is_sorted(ftx: &FunctionContext, this: Option<Value>, _: Vec<Value>) -> Result<Value> {
    let l = list(ftx, this)?;
    for w in l.windows(2) {
        if cmp_values(&w[0], &w[1])? == Ordering::Greater {
            return Ok(Value::Bool(false));
        }
    }
    Ok(Value::Bool(true))
}

fn sum(ftx: &FunctionContext, this: Option<Value>, _: Vec<Value>) -> Result<Value> {
    let l = list(ftx, this)?;
    let mut acc = Value::Int(0);
    for (i, v) in l.iter().enumerate() {
        acc = match (i, &acc, v) {
            (0, _, v) => v.clone(),
            (_, Value::Int(a), Value::Int(b)) => Value::Int(
                a.checked_add(*b)
                    .ok_or_else(|| ftx.error("integer overflow"))?,
            ),
            (_, Value::UInt(a), Value::UInt(b)) => Value::UInt(
                a.checked_add(*b)
                    .ok_or_else(|| ftx.error("unsigned integer overflow"))?,
            ),
            (_, Value::Float(a), Value::Float(b)) => Value::Float(a + b),
            (_, _, v) => return Err(no_overload(ftx, v)),
        };
    }
    Ok(acc)
}

fn index_of(
    ftx: &FunctionContext,
    this: Option<Value>,
    args: Vec<Value>,
    last: bool,
) -> Result<Value> {
    match this {
        Some(Value::List(l)) => {
            let x = one(args)?;
            let pos = if last {
                l.iter().rposition(|v| *v == x)
            } else {
                l.iter().position(|v| *v == x)
            };
            Ok(Value::Int(pos.map(|p| p as i64).unwrap_or(-1)))
        }
        Some(Value::String(s)) => {
            let needle = as_str(args.first().ok_or_else(|| ftx.error("missing argument"))?)?;
            let chars: Vec<char> = s.chars().collect();
            let n: Vec<char> = needle.chars().collect();
            let offset = match args.get(1) {
                Some(v) => as_int(v)?,
                None if last => chars.len() as i64,
                None => 0,
            };
            if offset < 0 || offset as usize > chars.len() {
                return Err(ftx.error(format!("index out of range: {offset}")));
            }
            let offset = offset as usize;
            let matches_at =
                |i: usize| i + n.len() <= chars.len() && chars[i..i + n.len()] == n[..];
            let found = if last {
                (0..=offset.min(chars.len().saturating_sub(n.len())))
                    .rev()
                    .find(|&i| matches_at(i))
            } else {
                (offset..=chars.len()).find(|&i| matches_at(i))
            };
            Ok(Value::Int(found.map(|i| i as i64).unwrap_or(-1)))
        }
        Some(v) => Err(no_overload(ftx, &v)),
        None => Err(ExecutionError::missing_argument_or_target()),
    }
}

fn char_at(ftx: &FunctionContext, this: Option<Value>, args: Vec<Value>) -> Result<Value> {
    let s = recv_str(ftx, this)?;
    let i = as_int(&one(args)?)?;
    let chars: Vec<char> = s.chars().collect();
    if i < 0 || i as usize > chars.len() {
        return Err(ftx.error(format!("index out of range: {i}")));
    }
    Ok(Value::from(
        chars
            .get(i as usize)
            .map(|c| c.to_string())
            .unwrap_or_default(),
    ))
}

fn replace(ftx: &FunctionContext, this: Option<Value>, args: Vec<Value>) -> Result<Value> {
    let s = recv_str(ftx, this)?;
    let (from, to) = match (args.first(), args.get(1)) {
        (Some(a), Some(b)) => (as_str(a)?, as_str(b)?),
        _ => return Err(ExecutionError::invalid_argument_count(2, args.len())),
    };
    let n = args.get(2).map(as_int).transpose()?.unwrap_or(-1);
    Ok(Value::from(if n < 0 {
        s.replace(from.as_str(), &to)
    } else {
        s.replacen(from.as_str(), &to, n as usize)
    }))
}

fn split(ftx: &FunctionContext, this: Option<Value>, args: Vec<Value>) -> Result<Value> {
    let s = recv_str(ftx, this)?;
    let sep = as_str(args.first().ok_or_else(|| ftx.error("missing argument"))?)?;
    let n = args.get(1).map(as_int).transpose()?.unwrap_or(-1);
    let parts: Vec<String> = match n {
        0 => vec![],
        n if sep.is_empty() => {
            let chars: Vec<String> = s.chars().map(|c| c.to_string()).collect();
            if n > 0 && (n as usize) < chars.len() {
                let mut head: Vec<String> = chars[..n as usize - 1].to_vec();
                head.push(chars[n as usize - 1..].concat());
                head
            } else {
                chars
            }
        }
        n if n < 0 => s.split(sep.as_str()).map(str::to_owned).collect(),
        n => s
            .splitn(n as usize, sep.as_str())
            .map(str::to_owned)
            .collect(),
    };
    Ok(Value::List(Arc::new(
        parts.iter().map(|p| Value::from(p.as_str())).collect(),
    )))
}

fn substring(ftx: &FunctionContext, this: Option<Value>, args: Vec<Value>) -> Result<Value> {
    let s = recv_str(ftx, this)?;
    let chars: Vec<char> = s.chars().collect();
    let start = as_int(args.first().ok_or_else(|| ftx.error("missing argument"))?)?;
    let end = args
        .get(1)
        .map(as_int)
        .transpose()?
        .unwrap_or(chars.len() as i64);
    if start < 0 || start as usize > chars.len() {
        return Err(ftx.error(format!("index out of range: {start}")));
    }
    if end < 0 || end as usize > chars.len() {
        return Err(ftx.error(format!("index out of range: {end}")));
    }
    if start > end {
        return Err(ftx.error(format!(
            "invalid substring range. start: {start}, end: {end}"
        )));
    }
    Ok(Value::from(
        chars[start as usize..end as usize]
            .iter()
            .collect::<String>(),
    ))
}

fn join(ftx: &FunctionContext, this: Option<Value>, args: Vec<Value>) -> Result<Value> {
    let l = list(ftx, this)?;
    let sep = match args.first() {
        Some(v) => as_str(v)?.to_string(),
        None => String::new(),
    };
    let parts = l.iter().map(as_str).collect::<Result<Vec<_>>>()?;
    Ok(Value::from(
        parts
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join(&sep),
    ))
}

/// cel-go's `strings.quote`: Go's `strconv.Quote`-like escaping with double quotes.
fn quote(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\u{b}' => out.push_str("\\v"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// `"...".format([args])`: the `%s`, `%d`, `%f` (with precision), `%e`, `%x`, `%o`, `%b`
/// and `%%` clauses of cel-go's strings extension.
fn format_string(ftx: &FunctionContext, this: Option<Value>, args: Vec<Value>) -> Result<Value> {
    let fmt = recv_str(ftx, this)?;
    let values = match one(args)? {
        Value::List(l) => l,
        v => return Err(no_overload(ftx, &v)),
    };
    let mut out = String::new();
    let mut chars = fmt.chars().peekable();
    let mut next = 0usize;
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let mut precision: Option<usize> = None;
        if chars.peek() == Some(&'.') {
            chars.next();
            let mut digits = String::new();
            while let Some(d) = chars.peek().filter(|d| d.is_ascii_digit()) {
                digits.push(*d);
                chars.next();
            }
            precision = digits.parse().ok();
        }
        let verb = chars
            .next()
            .ok_or_else(|| ftx.error("unterminated format clause"))?;
        if verb == '%' {
            out.push('%');
            continue;
        }
        let v = values
            .get(next)
            .ok_or_else(|| ftx.error(format!("index {next} out of range")))?;
        next += 1;
        match (verb, v) {
            ('s', v) => match string(ftx, None, vec![v.clone()])? {
                Value::String(s) => out.push_str(&s),
                _ => unreachable!("string() returns strings"),
            },
            ('d', Value::Int(i)) => out.push_str(&i.to_string()),
            ('d', Value::UInt(u)) => out.push_str(&u.to_string()),
            ('f', Value::Float(f)) => out.push_str(&format!("{:.*}", precision.unwrap_or(6), f)),
            ('f', Value::Int(i)) => {
                out.push_str(&format!("{:.*}", precision.unwrap_or(6), *i as f64))
            }
            ('e', Value::Float(f)) => out.push_str(&format!("{:.*e}", precision.unwrap_or(6), f)),
            ('x', Value::Int(i)) => out.push_str(&format!("{i:x}")),
            ('X', Value::Int(i)) => out.push_str(&format!("{i:X}")),
            ('x', Value::String(s)) => {
                out.push_str(&s.bytes().map(|b| format!("{b:02x}")).collect::<String>())
            }
            ('o', Value::Int(i)) => out.push_str(&format!("{i:o}")),
            ('b', Value::Int(i)) => out.push_str(&format!("{i:b}")),
            (verb, v) => {
                return Err(ftx.error(format!(
                    "error during formatting: unrecognized formatting clause %{verb} for {}",
                    type_name(v)
                )));
            }
        }
    }
    Ok(Value::from(out))
}

fn find(ftx: &FunctionContext, this: Option<Value>, args: Vec<Value>, all: bool) -> Result<Value> {
    let s = recv_str(ftx, this)?;
    let pattern = as_str(args.first().ok_or_else(|| ftx.error("missing argument"))?)?;
    let re = crate::re2::regex(&pattern).map_err(|e| ftx.error(e))?;
    if !all {
        return Ok(Value::from(re.find(&s).map(|m| m.as_str()).unwrap_or("")));
    }
    let limit = args.get(1).map(as_int).transpose()?.unwrap_or(-1);
    let found: Vec<Value> = re
        .find_iter(&s)
        .take(if limit < 0 {
            usize::MAX
        } else {
            limit as usize
        })
        .map(|m| Value::from(m.as_str()))
        .collect();
    Ok(Value::List(Arc::new(found)))
}

enum SetOp {
    Contains,
    Equivalent,
    Intersects,
}

fn sets(args: Vec<Value>, op: SetOp) -> Result<Value> {
    let (a, b) = match args.as_slice() {
        [Value::List(a), Value::List(b)] => (a.clone(), b.clone()),
        _ => return Err(ExecutionError::function_error("sets", "expected two lists")),
    };
    let contains = |x: &[Value], y: &[Value]| y.iter().all(|v| x.contains(v));
    Ok(Value::Bool(match op {
        SetOp::Contains => contains(&a, &b),
        SetOp::Equivalent => contains(&a, &b) && contains(&b, &a),
        SetOp::Intersects => b.iter().any(|v| a.contains(v)),
    }))
}

fn compare(ftx: &FunctionContext, this: Option<Value>, args: Vec<Value>) -> Result<Ordering> {
    let other = one(args)?;
    match this {
        Some(v) => {
            if let (Some(a), Some(b)) = (downcast::<Quantity>(&v), downcast::<Quantity>(&other)) {
                return Ok(a.cmp(b));
            }
            if let (Some(a), Some(b)) = (downcast::<Semver>(&v), downcast::<Semver>(&other)) {
                return Ok(a.0.cmp_precedence(&b.0));
            }
            Err(no_overload(ftx, &v))
        }
        None => Err(ExecutionError::missing_argument_or_target()),
    }
}

fn quantity_arith(
    ftx: &FunctionContext,
    this: Option<Value>,
    args: Vec<Value>,
    sign: i128,
) -> Result<Value> {
    let q = recv::<Quantity>(ftx, this)?;
    let other = match one(args)? {
        Value::Int(i) => Quantity::from_int(i),
        v => downcast::<Quantity>(&v)
            .cloned()
            .ok_or_else(|| no_overload(ftx, &v))?,
    };
    let exp = q.exp.min(other.exp);
    let a = q
        .scaled(exp)
        .ok_or_else(|| ftx.error("quantity overflow"))?;
    let b = other
        .scaled(exp)
        .ok_or_else(|| ftx.error("quantity overflow"))?;
    let m = a
        .checked_add(sign * b)
        .ok_or_else(|| ftx.error("quantity overflow"))?;
    Ok(opaque(Quantity::new(m, exp)))
}

// ---- Quantity ------------------------------------------------------------------------

/// A Kubernetes resource quantity, exactly: `mantissa * 10^exp`.
#[derive(Clone, Debug)]
pub(crate) struct Quantity {
    mantissa: i128,
    exp: i32,
    raw: String,
}

impl PartialEq for Quantity {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Quantity {}

impl PartialOrd for Quantity {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Quantity {
    fn cmp(&self, other: &Self) -> Ordering {
        let exp = self.exp.min(other.exp);
        match (self.scaled(exp), other.scaled(exp)) {
            (Some(a), Some(b)) => a.cmp(&b),
            _ => self
                .as_f64()
                .partial_cmp(&other.as_f64())
                .unwrap_or(Ordering::Equal),
        }
    }
}

impl Opaque for Quantity {
    fn runtime_type_name(&self) -> &str {
        "kubernetes.Quantity"
    }
}

impl Quantity {
    fn new(mantissa: i128, exp: i32) -> Self {
        let mut q = Quantity {
            mantissa,
            exp,
            raw: String::new(),
        };
        q.raw = q.canonical();
        q
    }

    fn from_int(i: i64) -> Self {
        Quantity::new(i as i128, 0)
    }

    /// The mantissa at a lower (or equal) exponent.
    fn scaled(&self, exp: i32) -> Option<i128> {
        let diff = u32::try_from(self.exp - exp).ok()?;
        10i128.checked_pow(diff)?.checked_mul(self.mantissa)
    }

    fn as_i64(&self) -> Option<i64> {
        if self.exp >= 0 {
            i64::try_from(self.scaled(0)?).ok()
        } else {
            let d = 10i128.checked_pow((-self.exp) as u32)?;
            (self.mantissa % d == 0)
                .then(|| i64::try_from(self.mantissa / d).ok())
                .flatten()
        }
    }

    fn as_f64(&self) -> f64 {
        self.mantissa as f64 * 10f64.powi(self.exp)
    }

    fn canonical(&self) -> String {
        match self.as_i64() {
            Some(i) => i.to_string(),
            None => format!("{}", self.as_f64()),
        }
    }

    /// Parses Kubernetes' quantity grammar (`resource.ParseQuantity`).
    fn parse(s: &str) -> Option<Quantity> {
        let re = quantity_re();
        let c = re.captures(s)?;
        let number = c.get(1)?.as_str();
        let suffix = c.get(2).map(|m| m.as_str()).unwrap_or("");
        let (negative, digits) = match number.as_bytes().first()? {
            b'-' => (true, &number[1..]),
            b'+' => (false, &number[1..]),
            _ => (false, number),
        };
        let (int, frac) = digits.split_once('.').unwrap_or((digits, ""));
        if int.is_empty() && frac.is_empty() {
            return None;
        }
        let all: String = format!("{int}{frac}");
        let all = all.trim_start_matches('0');
        let mut mantissa: i128 = if all.is_empty() { 0 } else { all.parse().ok()? };
        let mut exp = -(frac.len() as i32);
        let (mul, exp10): (i128, i32) = match suffix {
            "" => (1, 0),
            "Ki" => (1 << 10, 0),
            "Mi" => (1 << 20, 0),
            "Gi" => (1 << 30, 0),
            "Ti" => (1 << 40, 0),
            "Pi" => (1 << 50, 0),
            "Ei" => (1 << 60, 0),
            "n" => (1, -9),
            "u" => (1, -6),
            "m" => (1, -3),
            "k" => (1, 3),
            "M" => (1, 6),
            "G" => (1, 9),
            "T" => (1, 12),
            "P" => (1, 15),
            "E" => (1, 18),
            s if s.starts_with(['e', 'E']) => (1, s[1..].parse().ok()?),
            _ => return None,
        };
        mantissa = mantissa.checked_mul(mul)?;
        exp += exp10;
        if negative {
            mantissa = -mantissa;
        }
        Some(Quantity {
            mantissa,
            exp,
            raw: s.to_owned(),
        })
    }
}

fn quantity_re() -> &'static regex::Regex {
    static RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    RE.get_or_init(|| {
        regex::Regex::new(r"^([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))((?:[eE][+-]?[0-9]+)|Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)?$")
            .expect("quantity regex compiles")
    })
}

// ---- URL -----------------------------------------------------------------------------

/// A URL as Go's `url.Parse` splits it (absolute URIs and absolute paths only, as the
/// Kubernetes URL library requires).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Url {
    raw: String,
    scheme: String,
    host: String,
    path: String,
    query: String,
}

impl Opaque for Url {
    fn runtime_type_name(&self) -> &str {
        "kubernetes.URL"
    }
}

impl Url {
    fn parse(s: &str) -> Option<Url> {
        if s.chars().any(|c| c.is_ascii_control() || c == ' ') {
            return None;
        }
        let (rest, _fragment) = s.split_once('#').unwrap_or((s, ""));
        let (rest, query) = rest.split_once('?').unwrap_or((rest, ""));
        let (scheme, host, path) = if rest.starts_with('/') {
            if rest.starts_with("//") {
                return None;
            }
            (String::new(), String::new(), rest.to_owned())
        } else {
            let (scheme, after) = rest.split_once(':')?;
            let mut sc = scheme.chars();
            if !sc.next()?.is_ascii_alphabetic()
                || !sc.all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
            {
                return None;
            }
            match after.strip_prefix("//") {
                Some(auth_path) => {
                    let (auth, path) = match auth_path.find('/') {
                        Some(i) => (&auth_path[..i], &auth_path[i..]),
                        None => (auth_path, ""),
                    };
                    let host = auth.rsplit_once('@').map(|(_, h)| h).unwrap_or(auth);
                    (scheme.to_owned(), host.to_owned(), path.to_owned())
                }
                None => (scheme.to_owned(), String::new(), after.to_owned()),
            }
        };
        Some(Url {
            raw: s.to_owned(),
            scheme,
            host,
            path,
            query: query.to_owned(),
        })
    }

    fn hostname(&self) -> String {
        if let Some(rest) = self.host.strip_prefix('[') {
            return rest.split(']').next().unwrap_or("").to_owned();
        }
        self.host.split(':').next().unwrap_or("").to_owned()
    }

    fn port(&self) -> String {
        let after = match self.host.rfind(']') {
            Some(i) => &self.host[i + 1..],
            None => &self.host,
        };
        after
            .rsplit_once(':')
            .map(|(_, p)| p.to_owned())
            .unwrap_or_default()
    }

    fn query_map(&self) -> Value {
        let mut map: std::collections::BTreeMap<String, Vec<Value>> = Default::default();
        for pair in self.query.split('&').filter(|p| !p.is_empty()) {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            map.entry(k.to_owned()).or_default().push(Value::from(v));
        }
        let entries: Vec<(String, Value)> = map
            .into_iter()
            .map(|(k, v)| (k, Value::List(Arc::new(v))))
            .collect();
        super::value::object(entries.iter().map(|(k, v)| (k, v.clone())))
    }
}

// ---- IP and CIDR ---------------------------------------------------------------------

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Ip(std::net::IpAddr);

impl Opaque for Ip {
    fn runtime_type_name(&self) -> &str {
        "net.IP"
    }
}

impl Ip {
    /// Kubernetes' `IP.Size` (the cost model's size): the address's bytes.
    pub(crate) fn byte_len(&self) -> u64 {
        if self.0.is_ipv4() { 4 } else { 16 }
    }
}

impl Ip {
    fn is_link_local_multicast(&self) -> bool {
        match self.0 {
            std::net::IpAddr::V4(a) => a.octets()[..3] == [224, 0, 0],
            std::net::IpAddr::V6(a) => a.segments()[0] & 0xff0f == 0xff02,
        }
    }

    fn is_link_local_unicast(&self) -> bool {
        match self.0 {
            std::net::IpAddr::V4(a) => a.is_link_local(),
            std::net::IpAddr::V6(a) => a.segments()[0] & 0xffc0 == 0xfe80,
        }
    }

    fn is_global_unicast(&self) -> bool {
        match self.0 {
            std::net::IpAddr::V4(a) => {
                !(a.is_unspecified()
                    || a.is_loopback()
                    || a.is_multicast()
                    || a.is_link_local()
                    || a.is_broadcast())
            }
            std::net::IpAddr::V6(a) => {
                !(a.is_unspecified()
                    || a.is_loopback()
                    || a.is_multicast()
                    || a.segments()[0] & 0xffc0 == 0xfe80)
            }
        }
    }
}

/// Kubernetes' IP parsing: no IPv4-mapped IPv6 addresses, no zones, no leading zeros.
fn parse_ip(s: &str) -> Option<std::net::IpAddr> {
    let ip: std::net::IpAddr = s.parse().ok()?;
    if let std::net::IpAddr::V6(v6) = ip
        && v6.to_ipv4_mapped().is_some()
    {
        return None;
    }
    Some(ip)
}

fn ip(ftx: &FunctionContext, this: Option<Value>, args: Vec<Value>) -> Result<Value> {
    if let Some(v) = this {
        // `cidr.ip()`: the CIDR's address.
        return Ok(opaque(Ip(recv::<Cidr>(ftx, Some(v))?.addr)));
    }
    let s = as_str(&one(args)?)?;
    parse_ip(&s).map(|a| opaque(Ip(a))).ok_or_else(|| {
        ftx.error(format!(
            "IP Address {s:?} parse error during conversion from string"
        ))
    })
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Cidr {
    addr: std::net::IpAddr,
    prefix: u8,
}

impl Opaque for Cidr {
    fn runtime_type_name(&self) -> &str {
        "net.IPNet"
    }
}

impl Cidr {
    /// Kubernetes' `CIDR.Size` (the cost model's size): the prefix's bytes, rounded up.
    pub(crate) fn prefix_bytes(&self) -> u64 {
        (self.prefix as u64).div_ceil(8)
    }
}

impl Cidr {
    fn parse(s: &str) -> Option<Cidr> {
        let (a, p) = s.split_once('/')?;
        let addr = parse_ip(a)?;
        if p.len() > 1 && p.starts_with('0') {
            return None;
        }
        let prefix: u8 = p.parse().ok()?;
        let max = if addr.is_ipv4() { 32 } else { 128 };
        (prefix <= max).then_some(Cidr { addr, prefix })
    }

    fn bits(ip: std::net::IpAddr) -> (u128, u8) {
        match ip {
            std::net::IpAddr::V4(a) => (u32::from(a) as u128, 32),
            std::net::IpAddr::V6(a) => (u128::from(a), 128),
        }
    }

    fn mask(&self) -> u128 {
        let (_, width) = Self::bits(self.addr);
        if self.prefix == 0 {
            0
        } else {
            let ones = (!0u128) << (128 - self.prefix as u32);
            ones >> (128 - width as u32)
        }
    }

    fn contains(&self, ip: std::net::IpAddr) -> bool {
        let (a, wa) = Self::bits(self.addr);
        let (b, wb) = Self::bits(ip);
        wa == wb && (a & self.mask()) == (b & self.mask())
    }

    fn masked(&self) -> Cidr {
        let (a, w) = Self::bits(self.addr);
        let m = a & self.mask();
        let addr = if w == 32 {
            std::net::IpAddr::V4((m as u32).into())
        } else {
            std::net::IpAddr::V6(m.into())
        };
        Cidr {
            addr,
            prefix: self.prefix,
        }
    }
}

// ---- Named formats -------------------------------------------------------------------

/// The Kubernetes format library's named formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NamedFormat {
    Dns1123Label,
    Dns1123Subdomain,
    Dns1035Label,
    QualifiedName,
    Dns1123LabelPrefix,
    Dns1123SubdomainPrefix,
    Dns1035LabelPrefix,
    LabelValue,
    Uri,
    Uuid,
    Byte,
    Date,
    Datetime,
}

impl Opaque for NamedFormat {
    fn runtime_type_name(&self) -> &str {
        "kubernetes.NamedFormat"
    }
}

impl NamedFormat {
    /// Kubernetes' `Format.MaxRegexSize`, which prices `validate` in the cost model.
    pub(crate) fn max_regex_size(self) -> u64 {
        use NamedFormat::*;
        match self {
            Dns1123Label | Dns1035Label | Dns1123LabelPrefix | Dns1035LabelPrefix => 30,
            Dns1123Subdomain | QualifiedName | Dns1123SubdomainPrefix => 60,
            LabelValue => 40,
            Uri => 1103,
            // len(strfmt.UUIDPattern)
            Uuid => r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$".len()
                as u64,
            Byte => 84,
            // len(strfmt.DateTimePattern)
            Date | Datetime => {
                r"^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$".len()
                    as u64
            }
        }
    }
}

impl NamedFormat {
    fn from_name(name: &str) -> Option<NamedFormat> {
        use NamedFormat::*;
        Some(match name {
            "dns1123Label" => Dns1123Label,
            "dns1123Subdomain" => Dns1123Subdomain,
            "dns1035Label" => Dns1035Label,
            "qualifiedName" => QualifiedName,
            "dns1123LabelPrefix" => Dns1123LabelPrefix,
            "dns1123SubdomainPrefix" => Dns1123SubdomainPrefix,
            "dns1035LabelPrefix" => Dns1035LabelPrefix,
            "labelValue" => LabelValue,
            "uri" => Uri,
            "uuid" => Uuid,
            "byte" => Byte,
            "date" => Date,
            "datetime" => Datetime,
            _ => return None,
        })
    }

    /// The apimachinery validation messages for `s`; empty when valid.
    fn validate(self, s: &str) -> Vec<String> {
        use crate::validation::names;
        use NamedFormat::*;
        match self {
            Dns1123Label => names::dns1123_label(s),
            Dns1123Subdomain => names::dns1123_subdomain(s),
            Dns1035Label => names::dns1035_label(s),
            QualifiedName => names::qualified_name(s),
            Dns1123LabelPrefix => names::dns1123_label(&prefix_form(s)),
            Dns1123SubdomainPrefix => names::dns1123_subdomain(&prefix_form(s)),
            Dns1035LabelPrefix => names::dns1035_label(&prefix_form(s)),
            LabelValue => names::label_value(s),
            Uri => match Url::parse(s) {
                Some(_) => vec![],
                None => vec!["invalid URI".into()],
            },
            Uuid => check(crate::validation::formats::is_uuid(s), "invalid UUID"),
            Byte => check(crate::validation::formats::is_base64(s), "invalid base64"),
            Date => check(crate::validation::formats::is_date(s), "invalid date"),
            Datetime => check(
                crate::validation::formats::is_datetime(s),
                "invalid datetime",
            ),
        }
    }
}

/// apimachinery's prefix validators accept a trailing dash (a generateName prefix).
fn prefix_form(s: &str) -> String {
    match s.strip_suffix('-') {
        Some(p) => format!("{p}a"),
        None => s.to_owned(),
    }
}

fn check(ok: bool, msg: &str) -> Vec<String> {
    if ok { vec![] } else { vec![msg.to_owned()] }
}

// ---- Semver --------------------------------------------------------------------------

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Semver(semver::Version);

impl Opaque for Semver {
    fn runtime_type_name(&self) -> &str {
        "kubernetes.Semver"
    }
}

fn parse_semver(s: &str, normalize: bool) -> Option<Semver> {
    if !normalize {
        return semver::Version::parse(s).ok().map(Semver);
    }
    // Normalization: a leading `v`, missing minor/patch parts, leading zeros.
    let s = s.strip_prefix('v').unwrap_or(s);
    let (core, rest) = match s.find(['-', '+']) {
        Some(i) => (&s[..i], &s[i..]),
        None => (s, ""),
    };
    let mut parts: Vec<String> = core
        .split('.')
        .map(|p| {
            let t = p.trim_start_matches('0');
            if t.is_empty() {
                "0".to_owned()
            } else {
                t.to_owned()
            }
        })
        .collect();
    while parts.len() < 3 {
        parts.push("0".into());
    }
    semver::Version::parse(&format!("{}{rest}", parts.join(".")))
        .ok()
        .map(Semver)
}

/// A part of a timestamp or a duration, read by the `get*` methods.
#[derive(Clone, Copy)]
enum TimePart {
    FullYear,
    Month,
    DayOfYear,
    DayOfMonth,
    Date,
    DayOfWeek,
    Hours,
    Minutes,
    Seconds,
    Milliseconds,
}

/// `t.getHours()` and the other getters as cel-go has them: a timestamp's parts in UTC
/// (not in the offset the timestamp was written with:
/// `timestamp('2020-01-01T23:00:00-05:00').getHours()` is 4), or in
/// the zone of the argument (`getHours('Europe/Paris')`, `getHours('-07:00')`, see
/// [`zoned`]); a duration's whole hours, minutes, seconds or milliseconds (no zone
/// argument: cel-go has no such overload).
fn time_part(
    ftx: &FunctionContext,
    this: Option<Value>,
    args: Vec<Value>,
    part: TimePart,
) -> Result<Value> {
    use chrono::{Datelike, Timelike};
    let Some(this) = this else {
        return Err(ExecutionError::missing_argument_or_target());
    };
    let zone = match (&this, args.as_slice()) {
        (_, []) => None,
        (Value::Timestamp(_), [Value::String(z)]) => Some(z.clone()),
        (Value::Timestamp(_), [z]) => return Err(no_overload(ftx, z)),
        (_, [_]) => return Err(no_overload(ftx, &this)),
        (_, _) => return Err(ExecutionError::invalid_argument_count(1, args.len())),
    };
    let n: i64 = match (&this, part) {
        (Value::Timestamp(t), part) => {
            let t = match zone {
                None => t.naive_utc(),
                Some(z) => zoned(t, &z).map_err(|e| ftx.error(e))?,
            };
            match part {
                TimePart::FullYear => t.year().into(),
                TimePart::Month => t.month0().into(),
                TimePart::DayOfYear => t.ordinal0().into(),
                TimePart::DayOfMonth => t.day0().into(),
                TimePart::Date => t.day().into(),
                TimePart::DayOfWeek => t.weekday().num_days_from_sunday().into(),
                TimePart::Hours => t.hour().into(),
                TimePart::Minutes => t.minute().into(),
                TimePart::Seconds => t.second().into(),
                TimePart::Milliseconds => (t.nanosecond() / 1_000_000).into(),
            }
        }
        (Value::Duration(d), TimePart::Hours) => d.num_hours(),
        (Value::Duration(d), TimePart::Minutes) => d.num_minutes(),
        (Value::Duration(d), TimePart::Seconds) => d.num_seconds(),
        (Value::Duration(d), TimePart::Milliseconds) => d.num_milliseconds(),
        (v, _) => return Err(no_overload(ftx, v)),
    };
    Ok(Value::Int(n))
}

/// The wall-clock time of `t` in `zone`, as cel-go's `timeZone` reads the getters'
/// argument: without a `:` it is a location for Go's `time.LoadLocation` (an IANA name,
/// `UTC`, or the empty string for UTC; `Local`, the API server's own zone, is read as UTC,
/// the zone API servers run in); with one it is a fixed offset `[+-]H:MM` whose hours and
/// minutes Go's `strconv.Atoi` parses, unchecked (`+05:60` is six hours east, `+05:-1`
/// 299 minutes: cel-go's `common/stdlib` has no range check, unlike its `common/types`
/// copy); the minutes count against the offset when it starts with `-`, so `-00:30` is
/// half an hour west. The errors are Go's.
fn zoned(
    t: &chrono::DateTime<chrono::FixedOffset>,
    zone: &str,
) -> std::result::Result<chrono::NaiveDateTime, String> {
    let Some(colon) = zone.find(':') else {
        if zone.is_empty() || zone == "UTC" || zone == "Local" {
            return Ok(t.naive_utc());
        }
        // Go refuses these before looking the name up.
        if zone.contains("..") || zone.starts_with('/') || zone.starts_with('\\') {
            return Err("time: invalid location name".into());
        }
        #[cfg(feature = "time-zones")]
        {
            let tz: chrono_tz::Tz = zone
                .parse()
                .map_err(|_| format!("unknown time zone {zone}"))?;
            return Ok(t.with_timezone(&tz).naive_local());
        }
        #[cfg(not(feature = "time-zones"))]
        return Err(super::NO_ZONE_DATABASE.into());
    };
    let hours = go_atoi(&zone[..colon])?;
    let minutes = go_atoi(&zone[colon + 1..])?;
    let offset = hours.checked_mul(60).and_then(|h| {
        if zone.starts_with('-') {
            h.checked_sub(minutes)
        } else {
            h.checked_add(minutes)
        }
    });
    offset
        .and_then(chrono::TimeDelta::try_minutes)
        .and_then(|d| t.naive_utc().checked_add_signed(d))
        .ok_or_else(|| format!("timezone offset out of range: {zone}"))
}

/// Go's `strconv.Atoi`: an optional sign and decimal digits, nothing else.
fn go_atoi(s: &str) -> std::result::Result<i64, String> {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("strconv.Atoi: parsing {s:?}: invalid syntax"));
    }
    s.parse::<i64>()
        .map_err(|_| format!("strconv.Atoi: parsing {s:?}: value out of range"))
}
