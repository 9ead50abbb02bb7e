//! Reading a selector's wire form with the API server's rules (`k8s.io/apiserver`
//! v0.37.2 `pkg/sharding.Parse`).
//!
//! The server parses the selector as a CEL expression and walks the tree; this reads the
//! part of CEL such a selector uses: `shardRange(<field path>, <string>, <string>)` calls
//! joined by `||`, parentheses, single- or double-quoted strings. Anything else is an error
//! at the character at fault. Stricter than the server on purpose: string escapes, raw and
//! triple-quoted strings, and `x.shardRange(...)` (a method call, whose receiver the server
//! ignores) are refused, since nobody means them in a selector.

use std::fmt;

use super::{HASH_SPACE_END, ShardKey, ShardRange, ShardSelector};

/// Why a selector string was refused: the message, where (a character column, from 1),
/// and a hint when one helps. Its `Display` shows the input with a marker under the
/// column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShardSelectorError {
    input: String,
    column: usize,
    message: String,
    hint: Option<String>,
}

impl ShardSelectorError {
    /// The column (in characters, from 1) of the fault.
    #[must_use]
    pub fn column(&self) -> usize {
        self.column
    }

    /// What is wrong.
    #[must_use]
    pub fn message(&self) -> &str {
        &self.message
    }

    /// How to fix it, if there is an obvious way.
    #[must_use]
    pub fn hint(&self) -> Option<&str> {
        self.hint.as_deref()
    }
}

impl fmt::Display for ShardSelectorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "invalid shard selector at column {}: {}",
            self.column, self.message
        )?;
        // The input on one line, so the marker lines up.
        let line: String = self
            .input
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect();
        writeln!(f, "  {line}")?;
        write!(f, "  {}^", " ".repeat(self.column.saturating_sub(1)))?;
        if let Some(hint) = &self.hint {
            write!(f, "\n  hint: {hint}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ShardSelectorError {}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Tok {
    Ident(String),
    Str(String),
    Dot,
    Comma,
    LParen,
    RParen,
    Or,
    End,
    /// A character or token this grammar has no use for (`&&`, a number, `[`...).
    Other(String),
}

impl fmt::Display for Tok {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Tok::Ident(s) => write!(f, "`{s}`"),
            Tok::Str(s) => write!(f, "the string '{s}'"),
            Tok::Dot => f.write_str("`.`"),
            Tok::Comma => f.write_str("`,`"),
            Tok::LParen => f.write_str("`(`"),
            Tok::RParen => f.write_str("`)`"),
            Tok::Or => f.write_str("`||`"),
            Tok::End => f.write_str("the end of the selector"),
            Tok::Other(s) => write!(f, "`{s}`"),
        }
    }
}

struct Parser {
    /// Tokens with the byte offset each starts at.
    toks: Vec<(usize, Tok)>,
    pos: usize,
}

pub(super) fn parse(input: &str) -> Result<ShardSelector, ShardSelectorError> {
    let err_at = |offset: usize, message: String, hint: Option<String>| ShardSelectorError {
        input: input.to_owned(),
        column: input[..offset].chars().count() + 1,
        message,
        hint,
    };
    if input.trim().is_empty() {
        return Err(err_at(
            0,
            "the selector is empty".into(),
            Some("omit the shard selector to list everything".into()),
        ));
    }
    let toks = lex(input).map_err(|(at, msg, hint)| err_at(at, msg, hint))?;
    let mut p = Parser { toks, pos: 0 };
    let calls = p.expr().map_err(|(at, msg, hint)| err_at(at, msg, hint))?;
    let (at, tok) = p.peek();
    if *tok != Tok::End {
        return Err(err_at(
            at,
            format!("expected `||` or the end of the selector, found {tok}"),
            (matches!(tok, Tok::Other(s) if s == "&&"))
                .then(|| "ranges combine with `||` only".into()),
        ));
    }
    let (key_at, key) = calls[0].0;
    let mut ranges = Vec::with_capacity(calls.len());
    for &((at, k), range) in &calls {
        if k != key {
            return Err(err_at(
                at,
                format!("all shard ranges must use the same field: `{key}` and `{k}`"),
                Some(format!(
                    "the first range (column {}) hashes `{key}`",
                    input[..key_at].chars().count() + 1
                )),
            ));
        }
        ranges.push(range);
    }
    Ok(ShardSelector { key, ranges })
}

/// A parsed `shardRange(...)`: where its field path starts and the key, and the range.
type Call = ((usize, ShardKey), ShardRange);
type Fault = (usize, String, Option<String>);

impl Parser {
    fn peek(&self) -> (usize, &Tok) {
        let (at, t) = &self.toks[self.pos];
        (*at, t)
    }

    fn next(&mut self) -> (usize, Tok) {
        let t = self.toks[self.pos].clone();
        if t.1 != Tok::End {
            self.pos += 1;
        }
        t
    }

    fn expect(&mut self, want: &Tok, context: &str) -> Result<usize, Fault> {
        let (at, t) = self.next();
        if &t == want {
            Ok(at)
        } else {
            Err((at, format!("expected {want} {context}, found {t}"), None))
        }
    }

    /// `term ('||' term)*`
    fn expr(&mut self) -> Result<Vec<Call>, Fault> {
        let mut calls = self.term()?;
        while *self.peek().1 == Tok::Or {
            self.next();
            calls.extend(self.term()?);
        }
        Ok(calls)
    }

    /// `'(' expr ')' | call`
    fn term(&mut self) -> Result<Vec<Call>, Fault> {
        let (at, t) = self.next();
        match t {
            Tok::LParen => {
                let calls = self.expr()?;
                self.expect(&Tok::RParen, "to close the parenthesis")?;
                Ok(calls)
            }
            Tok::Ident(name) if name == "shardRange" => Ok(vec![self.call()?]),
            Tok::Ident(name) if *self.peek().1 == Tok::LParen => Err((
                at,
                format!("unsupported function `{name}`; only shardRange() and || are allowed"),
                None,
            )),
            other => Err((
                at,
                format!("expected a shardRange() call, found {other}"),
                Some(
                    "write shardRange(object.metadata.uid, '0x0000000000000000', '0x10000000000000000')"
                        .into(),
                ),
            )),
        }
    }

    /// After `shardRange`: `'(' path ',' bound ',' bound ')'`.
    fn call(&mut self) -> Result<Call, Fault> {
        let open = self.expect(&Tok::LParen, "after shardRange")?;
        let (path_at, path) = self.path()?;
        let key = ShardKey::from_field_path(&path).ok_or_else(|| {
            (
                path_at,
                format!("unsupported field path `{path}`"),
                Some("shard by object.metadata.uid or object.metadata.namespace".into()),
            )
        })?;
        let mut bounds = vec![];
        loop {
            let (at, t) = self.next();
            match t {
                Tok::RParen => {
                    if bounds.len() != 2 {
                        return Err((
                            open,
                            format!(
                                "shardRange() takes 3 arguments (field, start, end), got {}",
                                bounds.len() + 1
                            ),
                            None,
                        ));
                    }
                    break;
                }
                Tok::Comma => {
                    let (at, t) = self.next();
                    let name = if bounds.is_empty() { "start" } else { "end" };
                    let Tok::Str(s) = t else {
                        return Err((
                            at,
                            format!("the {name} bound must be a string literal, found {t}"),
                            Some("quote it: '0x8000000000000000'".into()),
                        ));
                    };
                    // Past the opening quote.
                    bounds.push(bound(&s, name).map_err(|(m, h)| (at + 1, m, h))?);
                    if bounds.len() > 2 {
                        return Err((
                            at,
                            "shardRange() takes 3 arguments (field, start, end), got more".into(),
                            None,
                        ));
                    }
                }
                t => {
                    return Err((
                        at,
                        format!("expected `,` or `)` in shardRange(), found {t}"),
                        None,
                    ));
                }
            }
        }
        let range = ShardRange::new(bounds[0], bounds[1]).map_err(|_| {
            (
                open,
                format!(
                    "shard range start {:#018x} must be less than end {:#018x}",
                    bounds[0], bounds[1]
                ),
                None,
            )
        })?;
        Ok(((path_at, key), range))
    }

    /// `ident ('.' ident)*`, joined with dots.
    fn path(&mut self) -> Result<(usize, String), Fault> {
        let (at, t) = self.next();
        let Tok::Ident(first) = t else {
            return Err((
                at,
                format!("expected a field path (object.metadata.uid), found {t}"),
                None,
            ));
        };
        let mut path = first;
        while *self.peek().1 == Tok::Dot {
            self.next();
            let (at, t) = self.next();
            let Tok::Ident(part) = t else {
                return Err((
                    at,
                    format!("expected a field name after `.`, found {t}"),
                    None,
                ));
            };
            path.push('.');
            path.push_str(&part);
        }
        if let (at, Tok::Other(s)) = self.peek()
            && s == "["
        {
            return Err((
                at,
                "a field path selects with `.` only".into(),
                Some(format!("write {path}.<field>")),
            ));
        }
        Ok((at, path))
    }
}

/// A bound's value, with the server's rules: `0x` then 16 lowercase hex digits, or
/// exactly `0x10000000000000000`.
fn bound(s: &str, name: &str) -> Result<u128, (String, Option<String>)> {
    let Some(hex) = s.strip_prefix("0x") else {
        return Err((
            format!("the {name} bound must start with 0x, got '{s}'"),
            Some("bounds are written 0x and 16 lowercase hex digits".into()),
        ));
    };
    if hex.is_empty() {
        return Err((format!("the {name} bound has no digits after 0x"), None));
    }
    if let Some(c) = hex.chars().find(|c| !matches!(c, '0'..='9' | 'a'..='f')) {
        let hint = c
            .is_ascii_hexdigit()
            .then(|| format!("write '0x{}'", hex.to_ascii_lowercase()));
        return Err((
            format!("the {name} bound '{s}' has `{c}`, not a lowercase hex digit"),
            hint,
        ));
    }
    match hex.len() {
        16 => Ok(u128::from_str_radix(hex, 16).expect("16 hex digits")),
        17 if s == "0x10000000000000000" => Ok(HASH_SPACE_END),
        17 => Err((
            format!("the {name} bound '{s}' is past the hash space"),
            Some("the only 17-digit bound is 0x10000000000000000 (2^64)".into()),
        )),
        n if n > 17 => Err((
            format!("the {name} bound '{s}' has {n} digits, at most 17"),
            None,
        )),
        n => Err((
            format!("the {name} bound '{s}' has {n} hex digits, not 16"),
            Some(format!("write '0x{hex:0>16}'")),
        )),
    }
}

fn lex(input: &str) -> Result<Vec<(usize, Tok)>, Fault> {
    let mut toks = vec![];
    let mut chars = input.char_indices().peekable();
    while let Some(&(at, c)) = chars.peek() {
        match c {
            c if c.is_whitespace() => {
                chars.next();
            }
            '.' | ',' | '(' | ')' => {
                chars.next();
                toks.push((
                    at,
                    match c {
                        '.' => Tok::Dot,
                        ',' => Tok::Comma,
                        '(' => Tok::LParen,
                        _ => Tok::RParen,
                    },
                ));
            }
            '|' | '&' => {
                chars.next();
                if chars.peek().map(|&(_, n)| n) == Some(c) {
                    chars.next();
                    toks.push((
                        at,
                        if c == '|' {
                            Tok::Or
                        } else {
                            Tok::Other("&&".into())
                        },
                    ));
                } else {
                    toks.push((at, Tok::Other(c.to_string())));
                }
            }
            '\'' | '"' => {
                chars.next();
                let mut value = String::new();
                loop {
                    match chars.next() {
                        Some((_, q)) if q == c => break,
                        Some((i, '\\')) => {
                            return Err((
                                i,
                                "escape sequences are not supported in a shard selector".into(),
                                None,
                            ));
                        }
                        Some((i, '\n')) | Some((i, '\r')) => {
                            return Err((i, "unterminated string".into(), None));
                        }
                        Some((_, ch)) => value.push(ch),
                        None => return Err((at, "unterminated string".into(), None)),
                    }
                }
                toks.push((at, Tok::Str(value)));
            }
            c if c.is_ascii_alphabetic() || c == '_' => {
                let mut ident = String::new();
                while let Some(&(_, n)) = chars.peek() {
                    if n.is_ascii_alphanumeric() || n == '_' {
                        ident.push(n);
                        chars.next();
                    } else {
                        break;
                    }
                }
                toks.push((at, Tok::Ident(ident)));
            }
            c if c.is_ascii_digit() => {
                let mut num = String::new();
                while let Some(&(_, n)) = chars.peek() {
                    if n.is_ascii_alphanumeric() {
                        num.push(n);
                        chars.next();
                    } else {
                        break;
                    }
                }
                toks.push((at, Tok::Other(num)));
            }
            c => {
                chars.next();
                toks.push((at, Tok::Other(c.to_string())));
            }
        }
    }
    toks.push((input.len(), Tok::End));
    Ok(toks)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(input: &str) -> ShardSelectorError {
        input.parse::<ShardSelector>().unwrap_err()
    }

    #[test]
    fn errors_point_at_the_fault_with_a_hint() {
        let e = err("shardRange(object.metadata.uid, '0x0', '0x8000000000000000')");
        assert_eq!(e.column(), 34, "{e}");
        assert_eq!(e.hint(), Some("write '0x0000000000000000'"));
        assert_eq!(
            e.to_string(),
            "invalid shard selector at column 34: the start bound '0x0' has 1 hex digits, not 16\n  \
             shardRange(object.metadata.uid, '0x0', '0x8000000000000000')\n                                   \
             ^\n  hint: write '0x0000000000000000'"
        );
        let e = err("shardRange(object.metadata.name, '0x0000000000000000', '0x8000000000000000')");
        assert_eq!(e.column(), 12);
        assert!(e.message().contains("object.metadata.name"), "{e}");
        let e = err("shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000ABC')");
        assert_eq!(e.hint(), Some("write '0x8000000000000abc'"));
        let e =
            err("shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000') && x");
        assert_eq!(e.column(), 77);
        assert_eq!(e.hint(), Some("ranges combine with `||` only"));
        let e = err("shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000'");
        assert!(e.message().contains("end of the selector"), "{e}");
    }

    #[test]
    fn stricter_than_the_server_where_nobody_means_it() {
        for input in [
            r"shardRange(object.metadata.uid, '\x30x0000000000000000', '0x8000000000000000')",
            "x.shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')",
        ] {
            assert!(input.parse::<ShardSelector>().is_err(), "{input}");
        }
    }
}
