//! RE2's syntax (the API server's Go regexps: a schema's `pattern`, the literal pattern of
//! CEL's `matches` as the checker compiles it, `find`) read with Rust's regex crate, which follows RE2 but for its character classes:
//! there `[` opens a nested class and `&&`, `--`, `~~` are set operations, while in RE2
//! they are literals. [`regex()`] escapes them inside classes (keeping POSIX `[:name:]`
//! classes) before compiling, so a pattern means what it means to the API server.

use std::borrow::Cow;

/// Compiles an RE2 pattern.
///
/// # Errors
///
/// The regex crate's, for a pattern RE2 refuses too (an unclosed class, lookaround...).
pub fn regex(pattern: &str) -> Result<regex::Regex, regex::Error> {
    regex::Regex::new(&rust_syntax(pattern))
}

/// `pattern` in the regex crate's syntax: the same pattern, with `[`, `&`, `~` and a
/// second `-` inside a character class escaped.
pub fn rust_syntax(pattern: &str) -> Cow<'_, str> {
    if !pattern.contains('[') {
        return Cow::Borrowed(pattern);
    }
    let chars: Vec<char> = pattern.chars().collect();
    let mut out = String::with_capacity(pattern.len() + 8);
    let mut i = 0;
    let mut in_class = false;
    while i < chars.len() {
        let c = chars[i];
        if c == '\\' {
            out.push(c);
            if let Some(&n) = chars.get(i + 1) {
                out.push(n);
            }
            i += 2;
            continue;
        }
        if !in_class {
            out.push(c);
            if c == '[' {
                in_class = true;
                // `[^` and a `]` right after the opening are part of the class.
                if chars.get(i + 1) == Some(&'^') {
                    out.push('^');
                    i += 1;
                }
                if chars.get(i + 1) == Some(&']') {
                    out.push(']');
                    i += 1;
                }
            }
            i += 1;
            continue;
        }
        match c {
            ']' => {
                in_class = false;
                out.push(c);
            }
            // A POSIX class, `[:alpha:]` or `[:^alpha:]`, as both read it.
            '[' if chars.get(i + 1) == Some(&':') => {
                let end = (i + 2..chars.len().saturating_sub(1))
                    .find(|&j| chars[j] == ':' && chars[j + 1] == ']');
                match end {
                    Some(j) => {
                        out.extend(&chars[i..j + 2]);
                        i = j + 2;
                        continue;
                    }
                    None => out.push_str("\\["),
                }
            }
            '[' | '&' | '~' => {
                out.push('\\');
                out.push(c);
            }
            '-' if out.ends_with('-') => out.push_str("\\-"),
            _ => out.push(c),
        }
        i += 1;
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_read_as_re2_reads_them() {
        let header = regex(r#"^[^()<>@,;:\\"\/[\]?={} \t\x7f]+$"#).unwrap();
        assert!(header.is_match("x-header"));
        assert!(!header.is_match("a[b"));
        assert!(!header.is_match("a]b"));
        assert!(regex("^[[:alpha:]]+$").unwrap().is_match("abc"));
        assert!(regex("^[[:^digit:]]$").unwrap().is_match("a"));
        let ops = regex("^[a&&b~~c]+$").unwrap();
        assert!(ops.is_match("&~abc"));
        // A range up to `-`.
        assert!(regex("^[!--]$").unwrap().is_match(","));
        assert!(regex("^[]a]$").unwrap().is_match("]"));
        assert!(regex("^[^]a]$").unwrap().is_match("b"));
        assert!(regex(r"^\[[a]$").unwrap().is_match("[a"));
        assert_eq!(rust_syntax("^[a-z]+$"), "^[a-z]+$");
        assert!(regex("^[a").is_err());
        assert!(regex("(?=a)").is_err());
    }
}
