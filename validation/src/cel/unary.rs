//! Runs of one unary operator (`!!x`, `--x`), as cel-go parses them.
//!
//! CEL's grammar reads a run of `!` (or of `-`) before an operand as one node: cel-go
//! applies the operator once when the run is odd and not at all when it is even, so `!!x`
//! is `x`. cel-rust's parser applies it once whatever the run's length (`!!true` is
//! `false`), so the source is normalized before it is parsed: each run keeps `len % 2` of
//! its operators. The dropped ones become spaces, so columns in syntax errors stay right.

/// `source` with every run of two or more unary `!` or `-` shortened to its parity.
pub(super) fn collapse_runs(source: &str) -> String {
    let chars: Vec<char> = source.chars().collect();
    let mut out = chars.clone();
    // The last significant character outside literals and comments: whether a `-` is
    // unary depends on it.
    let mut prev: Option<char> = None;
    // The current run: its operator and the indexes of its characters.
    let mut run: Option<(char, Vec<usize>)> = None;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        if c == '/' && chars.get(i + 1) == Some(&'/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
            continue;
        }
        let unary = match c {
            '!' => chars.get(i + 1) != Some(&'='),
            '-' => prev.is_none_or(|p| "([{,:?!-+*/%<>=&|".contains(p)),
            _ => false,
        };
        if unary && run.as_ref().is_some_and(|(op, _)| *op == c) {
            run.as_mut().expect("checked").1.push(i);
        } else {
            end_run(run.take(), &mut out);
            if unary {
                run = Some((c, vec![i]));
            }
        }
        if c == '"' || c == '\'' {
            i = skip_string(&chars, i);
            prev = Some(c);
            continue;
        }
        prev = Some(c);
        i += 1;
    }
    end_run(run, &mut out);
    out.into_iter().collect()
}

/// Blanks all of a run's operators but `len % 2` of them.
fn end_run(run: Option<(char, Vec<usize>)>, out: &mut [char]) {
    if let Some((_, at)) = run
        && at.len() >= 2
    {
        let drop = at.len() - at.len() % 2;
        for &i in &at[..drop] {
            out[i] = ' ';
        }
    }
}

/// The index after the string literal opening at `start` (its `r`/`b` prefixes are
/// identifier characters before it, already passed): single or triple quotes, escapes
/// unless raw.
fn skip_string(chars: &[char], start: usize) -> usize {
    let q = chars[start];
    let raw = start > 0 && matches!(chars[start - 1], 'r' | 'R')
        || start > 1
            && matches!(chars[start - 2], 'r' | 'R')
            && matches!(chars[start - 1], 'b' | 'B');
    let triple = chars.get(start + 1) == Some(&q) && chars.get(start + 2) == Some(&q);
    let mut i = start + if triple { 3 } else { 1 };
    while i < chars.len() {
        if chars[i] == '\\' && !raw {
            i += 2;
            continue;
        }
        if chars[i] == q
            && (!triple || (chars.get(i + 1) == Some(&q) && chars.get(i + 2) == Some(&q)))
        {
            return i + if triple { 3 } else { 1 };
        }
        i += 1;
    }
    chars.len()
}

#[cfg(test)]
mod tests {
    use super::collapse_runs;

    #[test]
    fn runs_keep_their_parity() {
        for (source, want) in [
            ("!!true", "  true"),
            ("!!!x", "  !x"),
            ("! !x", "   x"),
            ("--1", "  1"),
            ("---1", "  -1"),
            ("1 - -1", "1 - -1"),
            ("1 - - -1", "1 -    1"),
            ("a != !!b", "a !=   b"),
            ("[1].all(x, !!x)", "[1].all(x,   x)"),
            (
                "'!!' + \"--\" + r'\\!!' // !!x",
                "'!!' + \"--\" + r'\\!!' // !!x",
            ),
            ("'''a'!!'''.size() > -(-1)", "'''a'!!'''.size() > -(-1)"),
            ("x[-1] - 1", "x[-1] - 1"),
        ] {
            assert_eq!(collapse_runs(source), want, "{source}");
        }
    }
}
