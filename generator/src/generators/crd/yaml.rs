//! A direct YAML writer for CRDs, byte for byte what `serde_yaml` (libyaml's emitter, as
//! serde_yaml 0.9 drives it: no line folding, block style, indentless sequences in mappings)
//! writes for the same JSON value, for the values it is sure of; `None` for any other, which
//! then goes through `serde_yaml`. The emitter was most of a CRD file's cost (about 2,700
//! instructions per scalar, a fifth of a `generate -o -` run); BENCHMARKS.md (CRDs only) has
//! the figures.
//!
//! Sure of: mappings whose keys are plain identifiers (`x-kubernetes-list-type`,
//! `app.kubernetes.io/name`), sequences of scalars or mappings, integers, booleans, null,
//! and printable ASCII strings that start with a letter, `^`, `/` or `.` and a letter (plain,
//! or single-quoted where YAML would read them as something else), or that span lines
//! (literal blocks, `|-`, as mapping values). Anything else (floats, non-ASCII text,
//! sequences of sequences, a string starting with a digit or an indicator) is left to
//! `serde_yaml`. Debug builds check every document written here against it.

use serde_json::Value;

/// The document, appended to `out`; `None` when it holds a value this writer leaves to
/// `serde_yaml`, with part of it appended (the caller truncates).
pub(super) fn write(v: &Value, out: &mut String) -> Option<()> {
    let Value::Object(m) = v else {
        return None;
    };
    if m.is_empty() {
        return None;
    }
    map(m, 0, false, out)
}

fn indent(n: usize, out: &mut String) {
    const SPACES: &str = "                                                                ";
    let mut n = n;
    while n > 0 {
        let k = n.min(SPACES.len());
        out.push_str(&SPACES[..k]);
        n -= k;
    }
}

/// `null`, `true` or `false` in any case: serde_yaml quotes some spellings (`True`), and
/// the rest are left to it.
fn null_or_bool(s: &str) -> bool {
    ["null", "true", "false"]
        .iter()
        .any(|w| s.eq_ignore_ascii_case(w))
}

/// YAML 1.1's non-strings ([`super::yaml11_reads_as_non_string`]) for a string that
/// starts as [`style`] and [`plain_key`] require: numbers and timestamps start with a
/// digit, a sign or `.` and a digit, so only the booleans (`y`, `yes`, `off`: at most three
/// letters) can be among them.
fn yaml11_word(s: &str) -> bool {
    s.len() <= 3 && super::yaml11_reads_as_non_string(s)
}

/// A block mapping whose keys start at column `at`; `inline`: the first key follows a
/// sequence's `- ` on its line.
fn map(
    m: &serde_json::Map<String, Value>,
    at: usize,
    inline: bool,
    out: &mut String,
) -> Option<()> {
    for (i, (k, v)) in m.iter().enumerate() {
        if i > 0 || !inline {
            indent(at, out);
        }
        if !plain_key(k) {
            return None;
        }
        out.push_str(k);
        out.push(':');
        match v {
            Value::Object(c) if c.is_empty() => out.push_str(" {}\n"),
            Value::Object(c) => {
                out.push('\n');
                map(c, at + 2, false, out)?;
            }
            Value::Array(a) if a.is_empty() => out.push_str(" []\n"),
            // In a mapping, libyaml writes a sequence's dashes at the keys' column.
            Value::Array(a) => {
                out.push('\n');
                seq(a, at, out)?;
            }
            scalar => {
                out.push(' ');
                self::scalar(scalar, Some(at + 2), out)?;
                out.push('\n');
            }
        }
    }
    Some(())
}

/// A block sequence whose dashes are at column `at`.
fn seq(a: &[Value], at: usize, out: &mut String) -> Option<()> {
    for v in a {
        indent(at, out);
        out.push_str("- ");
        match v {
            Value::Object(c) if c.is_empty() => out.push_str("{}\n"),
            Value::Object(c) => map(c, at + 2, true, out)?,
            Value::Array(_) => return None,
            scalar => {
                self::scalar(scalar, None, out)?;
                out.push('\n');
            }
        }
    }
    Some(())
}

/// A scalar; `block`: the indentation of a literal block's lines, where one may stand (a
/// mapping's value).
fn scalar(v: &Value, block: Option<usize>, out: &mut String) -> Option<()> {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) if n.is_i64() || n.is_u64() => {
            use std::fmt::Write;
            write!(out, "{n}").expect("writing to a String");
        }
        Value::String(s) if s.contains('\n') => literal(s, block?, out)?,
        Value::String(s) => match style(s)? {
            Style::Plain => out.push_str(s),
            Style::SingleQuoted => {
                out.push('\'');
                for (i, part) in s.split('\'').enumerate() {
                    if i > 0 {
                        out.push_str("''");
                    }
                    out.push_str(part);
                }
                out.push('\'');
            }
        },
        _ => return None,
    }
    Some(())
}

enum Style {
    Plain,
    SingleQuoted,
}

/// How a one-line string is written, when this writer is sure.
fn style(s: &str) -> Option<Style> {
    // serde_yaml quotes what it would read back as null or a boolean (YAML 1.2); the
    // crd generator quotes what YAML 1.1 readers would (`yes`, `on`).
    const QUOTED: &[&str] = &[
        "", "null", "Null", "NULL", "true", "True", "TRUE", "false", "False", "FALSE",
    ];
    if QUOTED.contains(&s) {
        return Some(Style::SingleQuoted);
    }
    let b = s.as_bytes();
    // No number, no indicator and no document marker starts with these; digits, signs and
    // the rest are serde_yaml's to judge.
    let start_ok = match b[0] {
        c if c.is_ascii_alphabetic() => true,
        b'^' | b'/' => true,
        // `.inf` and `.nan` (any case) are floats to serde_yaml, quoted there.
        b'.' => {
            b.get(1).is_some_and(u8::is_ascii_alphabetic)
                && !["inf", "nan"]
                    .iter()
                    .any(|w| s[1..].eq_ignore_ascii_case(w))
        }
        _ => false,
    };
    if !start_ok {
        // A YAML 1.1 number (`1_000`) or timestamp is quoted here as before; anything else
        // is serde_yaml's.
        return super::yaml11_reads_as_non_string(s).then_some(Style::SingleQuoted);
    }
    if yaml11_word(s) {
        return Some(Style::SingleQuoted);
    }
    if !b.iter().all(|c| (0x20..=0x7e).contains(c)) || null_or_bool(s) {
        return None;
    }
    // libyaml's plain scalars in block context: no `: ` (or a final `:`), no ` #`, no
    // trailing space; otherwise single-quoted.
    // One pass over the bytes (two `str::contains` searches cost more per description).
    let indicator = s.ends_with(':')
        || s.ends_with(' ')
        || b.windows(2)
            .any(|w| matches!(w, [b':', b' '] | [b' ', b'#']));
    Some(if indicator {
        Style::SingleQuoted
    } else {
        Style::Plain
    })
}

/// A mapping key written plain (a simple key: no flow indicators, short).
fn plain_key(k: &str) -> bool {
    let b = k.as_bytes();
    !b.is_empty()
        && b.len() <= 100
        && b[0].is_ascii_alphabetic()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.' | b'/'))
        && !null_or_bool(k)
        && !yaml11_word(k)
}

/// A string with line breaks as libyaml writes it for serde_yaml (`|-`, lines indented to
/// `at`, empty lines empty), when it needs neither an indentation nor a keep indicator and
/// libyaml allows a block (no space before a break or at the end, printable ASCII).
fn literal(s: &str, at: usize, out: &mut String) -> Option<()> {
    let b = s.as_bytes();
    if matches!(b[0], b' ' | b'\n')
        || b.ends_with(b"\n")
        || b.ends_with(b" ")
        || s.contains(" \n")
        || !b.iter().all(|c| *c == b'\n' || (0x20..=0x7e).contains(c))
    {
        return None;
    }
    out.push_str("|-");
    for line in s.split('\n') {
        out.push('\n');
        if !line.is_empty() {
            indent(at, out);
            out.push_str(line);
        }
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    /// Every string here, as a mapping value, a sequence item and a nested value, is
    /// written as serde_yaml writes it, or left to serde_yaml.
    #[test]
    fn agrees_with_serde_yaml_or_declines() {
        let strings = [
            "",
            "a",
            "y",
            "Y",
            "yes",
            "NO",
            "on",
            "off",
            "true",
            "True",
            "tRUE",
            "null",
            "NULL",
            "~",
            "inf",
            "nan",
            ".inf",
            ".NaN",
            ".Inf",
            ".spec.replicas",
            ".e5",
            "..",
            "...",
            "1",
            "1_000",
            "0x1F",
            "012",
            "1:20",
            "2024-01-01",
            "-",
            "- a",
            "-a",
            "?a",
            ":a",
            "a:",
            "a: b",
            "a:b",
            "a #b",
            "a#b",
            "#a",
            "a ",
            " a",
            "a  b",
            "it's",
            "'a'",
            "\"a\"",
            "^[a-z]+$",
            "/path",
            "*",
            "&a",
            "!a",
            "|",
            ">",
            "%a",
            "@a",
            "`a",
            "a,b",
            "[a]",
            "{a}",
            "a\tb",
            "caf\u{e9}",
            "a\nb",
            "a\n\nb",
            "a\n",
            "\na",
            " a\nb",
            "a \nb",
            "a\n b",
            "a\nb ",
            "line one\n  indented\nthree",
        ];
        for s in strings {
            for v in [
                json!({ "k": s }),
                json!({ "k": [s, "x"] }),
                json!({ "k": { "n": s }, "l": [{ "m": s, "o": 1 }] }),
                json!({ s: 1 }),
            ] {
                if let Some(fast) = written(&v) {
                    assert_eq!(fast, super::super::serde_yaml_body(v.clone()), "{s:?}");
                }
            }
        }
    }

    /// The document alone, as `super::write` appends it to an empty buffer.
    fn written(v: &serde_json::Value) -> Option<String> {
        let mut out = String::new();
        super::write(v, &mut out).map(|()| out)
    }

    #[test]
    fn writes_what_crds_hold() {
        let v = json!({
            "a": "plain text, with commas",
            "b": [{ "c": "x\ny", "d": true, "e": null, "f": -3, "g": {}, "h": [] }],
            "i": "True",
        });
        let fast = written(&v).expect("written directly");
        assert_eq!(fast, super::super::serde_yaml_body(v));
    }
}
