//! The checks Kubernetes adds after type checking (`cel.ASTValidators` in its base
//! environment, cel-go cel/validator.go): list and map literals are homogeneous (except in
//! `format` calls), and literal arguments of `matches`, `duration` and `timestamp` are valid
//! regexes, durations and timestamps.

use crate::cel::syntax::ast::{EntryExpr, Expr, IdedExpr, LiteralValue};

use super::checker::Checked;
use super::types::{OPTIONAL, Type};
use crate::cel::duration::{DurationError, parse_go};
use crate::validation::formats::valid_ymd;

/// The functions whose arguments may mix types (`string.format([...])`).
const EXEMPT: &[&str] = &["format"];

/// The validators' issues, in cel-go's words.
pub fn validate(expr: &IdedExpr, checked: &Checked) -> Vec<String> {
    let mut out = vec![];
    walk(expr, checked, false, &mut out);
    out
}

fn walk(e: &IdedExpr, checked: &Checked, exempt: bool, out: &mut Vec<String>) {
    match &e.expr {
        Expr::List(list) => {
            if !exempt {
                let types = list.elements.iter().enumerate().map(|(i, el)| {
                    let t = checked.type_of(el.id);
                    match t {
                        Type::Opaque(OPTIONAL, ps) if list.optional_indices.contains(&i) => {
                            ps[0].clone()
                        }
                        t => t,
                    }
                });
                homogeneous(types, out);
            }
            for el in &list.elements {
                walk(el, checked, exempt, out);
            }
        }
        Expr::Map(map) => {
            let entries: Vec<_> = map
                .entries
                .iter()
                .filter_map(|en| match &en.expr {
                    EntryExpr::MapEntry(m) => Some(m),
                    EntryExpr::StructField(_) => None,
                })
                .collect();
            if !exempt {
                homogeneous(entries.iter().map(|m| checked.type_of(m.key.id)), out);
                homogeneous(
                    entries.iter().map(|m| match checked.type_of(m.value.id) {
                        Type::Opaque(OPTIONAL, ps) if m.optional => ps[0].clone(),
                        t => t,
                    }),
                    out,
                );
            }
            for m in entries {
                walk(&m.key, checked, exempt, out);
                walk(&m.value, checked, exempt, out);
            }
        }
        Expr::Call(call) => {
            let function = checked
                .calls
                .get(&e.id)
                .map_or(call.func_name.as_str(), |c| c.function.as_str());
            let literal = match call.args.first().map(|a| &a.expr) {
                Some(Expr::Literal(LiteralValue::String(s))) => Some(s.as_str()),
                _ => None,
            };
            let invalid = match (function, literal) {
                ("matches", Some(p)) => super::check_regex(p).is_err(),
                // Only the syntax: a literal out of `int64` nanoseconds is let through.
                ("duration", Some(d)) => parse_go(d) == Err(DurationError::Syntax),
                ("timestamp", Some(t)) => !valid_timestamp(t),
                _ => false,
            };
            if invalid {
                out.push(format!("invalid {function} argument"));
            }
            let exempt = exempt || EXEMPT.contains(&function);
            if let Some(t) = &call.target {
                walk(t, checked, exempt, out);
            }
            for a in &call.args {
                walk(a, checked, exempt, out);
            }
        }
        Expr::Select(s) => walk(&s.operand, checked, exempt, out),
        Expr::Comprehension(c) => {
            for x in [
                &c.iter_range,
                &c.accu_init,
                &c.loop_cond,
                &c.loop_step,
                &c.result,
            ] {
                walk(x, checked, exempt, out);
            }
        }
        Expr::Struct(s) => {
            for en in &s.entries {
                if let EntryExpr::StructField(f) = &en.expr {
                    walk(&f.value, checked, exempt, out);
                }
            }
        }
        Expr::Ident(_) | Expr::Literal(_) | Expr::Unspecified => {}
    }
}

/// `IsEquivalentType` of every element with the first; what the checker does not model is
/// not judged.
fn homogeneous(mut types: impl Iterator<Item = Type>, out: &mut Vec<String>) {
    let Some(first) = types.next() else { return };
    for t in types {
        if first.has_unknown() || t.has_unknown() {
            return;
        }
        if t != first {
            out.push(format!("expected type '{first}' but found '{t}'"));
            return;
        }
    }
}

/// Go's `time.Parse(time.RFC3339, s)`: `YYYY-MM-DDTHH:MM:SS[.frac](Z|±HH:MM)`, with real
/// calendar days.
fn valid_timestamp(s: &str) -> bool {
    let b = s.as_bytes();
    let digits = |r: std::ops::Range<usize>| -> Option<u32> {
        let part = s.get(r)?;
        part.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| part.parse().ok())?
    };
    if b.len() < 20
        || b[4] != b'-'
        || b[7] != b'-'
        || b[10] != b'T'
        || b[13] != b':'
        || b[16] != b':'
    {
        return false;
    }
    let (Some(year), Some(month), Some(day), Some(hour), Some(min), Some(sec)) = (
        digits(0..4),
        digits(5..7),
        digits(8..10),
        digits(11..13),
        digits(14..16),
        digits(17..19),
    ) else {
        return false;
    };
    // cel-go's timestamps start at 0001-01-01.
    if year == 0 || !valid_ymd(year as i32, month, day) || hour > 23 || min > 59 || sec > 59 {
        return false;
    }
    let mut rest = &s[19..];
    if let Some(r) = rest.strip_prefix('.') {
        let n = r.len() - r.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        if n == 0 {
            return false;
        }
        rest = &r[n..];
    }
    if rest == "Z" {
        return true;
    }
    let z = rest.as_bytes();
    z.len() == 6
        && matches!(z[0], b'+' | b'-')
        && z[3] == b':'
        && rest[1..3]
            .bytes()
            .chain(rest[4..6].bytes())
            .all(|c| c.is_ascii_digit())
        && rest[1..3].parse::<u32>().is_ok_and(|h| h < 24)
        && rest[4..6].parse::<u32>().is_ok_and(|m| m < 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_as_rfc3339() {
        for ok in [
            "2020-01-01T00:00:00Z",
            "2020-02-29T23:59:59.123+01:00",
            "0001-01-01T00:00:00Z",
        ] {
            assert!(valid_timestamp(ok), "{ok}");
        }
        for bad in [
            "2020-01-01",
            "2021-02-29T00:00:00Z",
            "2020-01-01T00:00:00",
            "2020-13-01T00:00:00Z",
            "2020-01-01t00:00:00Z",
        ] {
            assert!(!valid_timestamp(bad), "{bad}");
        }
    }
}
