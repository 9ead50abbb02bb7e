//! String and bytes literals decoded as cel-go's `unescape` does: quotes (one or three)
//! dropped, raw literals kept as written, escapes `\a \b \f \n \r \t \v \\ \' \" \` \?`,
//! `\xHH`, `\ooo` (first digit 0-3), `\uHHHH` and `\UHHHHHHHH`. In a string `\x` and octal
//! escapes are code points; in bytes they are bytes, and `\u` escapes are refused.

use super::ast::LiteralValue;

/// Decodes a `STRING` or `BYTES` token's text (prefixes included).
pub(super) fn decode(text: &str, bytes: bool) -> Result<LiteralValue, String> {
    let mut s = text;
    if bytes {
        s = &s[1..];
    }
    let raw = s.starts_with(['r', 'R']);
    if raw {
        s = &s[1..];
    }
    let q = if s.len() >= 6 && (s.starts_with("'''") || s.starts_with("\"\"\"")) {
        3
    } else {
        1
    };
    let body = &s[q..s.len() - q];
    let kind = if bytes { "bytes" } else { "string" };
    let mut out: Vec<u8> = Vec::with_capacity(body.len());
    if raw {
        out.extend_from_slice(body.as_bytes());
    } else {
        unescape(body, bytes, &mut out).map_err(|e| format!("invalid {kind} literal: {e}"))?;
    }
    Ok(if bytes {
        LiteralValue::Bytes(out.into())
    } else {
        // Every escape pushed a whole char, and the rest is the source's UTF-8.
        LiteralValue::String(String::from_utf8(out).expect("decoded as chars").into())
    })
}

fn unescape(body: &str, bytes: bool, out: &mut Vec<u8>) -> Result<(), String> {
    let mut chars = body.char_indices().peekable();
    let push_char = |out: &mut Vec<u8>, c: char| {
        let mut buf = [0; 4];
        out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
    };
    while let Some((i, c)) = chars.next() {
        if c != '\\' {
            push_char(out, c);
            continue;
        }
        let Some((_, e)) = chars.next() else {
            return Err("a backslash ends it".to_owned());
        };
        let simple = match e {
            'a' => Some('\u{7}'),
            'b' => Some('\u{8}'),
            'f' => Some('\u{c}'),
            'n' => Some('\n'),
            'r' => Some('\r'),
            't' => Some('\t'),
            'v' => Some('\u{b}'),
            '\\' | '\'' | '"' | '`' | '?' => Some(e),
            _ => None,
        };
        if let Some(c) = simple {
            push_char(out, c);
            continue;
        }
        let mut take = |n: usize, radix: u32| -> Result<u32, String> {
            let mut v = 0u32;
            for _ in 0..n {
                let d = chars
                    .next()
                    .and_then(|(_, c)| c.to_digit(radix))
                    .ok_or_else(|| format!("bad escape at offset {i}"))?;
                v = v * radix + d;
            }
            Ok(v)
        };
        match e {
            'x' | 'X' => {
                let v = take(2, 16)?;
                if bytes {
                    out.push(v as u8);
                } else {
                    push_char(out, char::from_u32(v).expect("below 256"));
                }
            }
            '0'..='3' => {
                let rest = take(2, 8)?;
                let v = (e as u32 - '0' as u32) * 64 + rest;
                if bytes {
                    out.push(v as u8);
                } else {
                    push_char(out, char::from_u32(v).expect("below 256"));
                }
            }
            'u' | 'U' if bytes => return Err(format!("\\{e} in bytes at offset {i}")),
            'u' | 'U' => {
                let v = take(if e == 'u' { 4 } else { 8 }, 16)?;
                let c = char::from_u32(v)
                    .ok_or_else(|| format!("invalid code point in escape at offset {i}"))?;
                push_char(out, c);
            }
            _ => return Err(format!("unknown escape \\{e} at offset {i}")),
        }
    }
    Ok(())
}
