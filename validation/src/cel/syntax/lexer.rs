//! CEL's tokens (cel-go's `CEL.g4` lexer rules): longest match, keywords before identifiers,
//! whitespace and `//` comments skipped.

/// What a token is. Literal tokens keep their text; the parser decodes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    Eq,
    Ne,
    In,
    Lt,
    Le,
    Ge,
    Gt,
    And,
    Or,
    LBracket,
    RBracket,
    LBrace,
    RBrace,
    LParen,
    RParen,
    Dot,
    Comma,
    Minus,
    Bang,
    Question,
    Colon,
    Plus,
    Star,
    Slash,
    Percent,
    True,
    False,
    Null,
    Float,
    Int,
    Uint,
    String,
    Bytes,
    Ident,
    /// A backquoted field name (`` a.`b-c` ``): cel-go's `ESC_IDENTIFIER`.
    EscIdent,
    Eof,
}

/// A token: its kind, its text's byte range and where it starts (1-based line; column
/// 0-based, in characters, as ANTLR counts).
#[derive(Clone, Copy, Debug)]
pub(super) struct Token {
    pub kind: Kind,
    pub start: usize,
    pub end: usize,
    pub line: usize,
    pub column: usize,
}

/// A character no token starts with, or a literal left open: ANTLR's "token recognition
/// error at: '…'", with the text it gave up on.
#[derive(Debug)]
pub(super) struct LexError {
    pub line: usize,
    pub column: usize,
    pub text: String,
}

/// Splits `src` into tokens, ending with `Eof`.
pub(super) fn tokenize(src: &str) -> Result<Vec<Token>, LexError> {
    let b = src.as_bytes();
    let mut out = Vec::with_capacity(src.len() / 3 + 1);
    let mut i = 0;
    let mut line = 1;
    // Byte offset where the current line starts, and the characters counted up to `mark`.
    let mut line_start = 0;
    let column = |line_start: usize, at: usize| src[line_start..at].chars().count();
    while i < b.len() {
        let c = b[i];
        match c {
            b'\n' => {
                i += 1;
                line += 1;
                line_start = i;
                continue;
            }
            b' ' | b'\t' | b'\r' | 0x0c => {
                i += 1;
                continue;
            }
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            _ => {}
        }
        let start = i;
        let col = column(line_start, start);
        let err = |text: &str| LexError {
            line,
            column: col,
            text: text.to_owned(),
        };
        let at = |k: usize| b.get(i + k).copied();
        let (kind, len) = match c {
            b'=' if at(1) == Some(b'=') => (Kind::Eq, 2),
            b'!' if at(1) == Some(b'=') => (Kind::Ne, 2),
            b'!' => (Kind::Bang, 1),
            b'<' if at(1) == Some(b'=') => (Kind::Le, 2),
            b'<' => (Kind::Lt, 1),
            b'>' if at(1) == Some(b'=') => (Kind::Ge, 2),
            b'>' => (Kind::Gt, 1),
            b'&' if at(1) == Some(b'&') => (Kind::And, 2),
            b'|' if at(1) == Some(b'|') => (Kind::Or, 2),
            b'[' => (Kind::LBracket, 1),
            b']' => (Kind::RBracket, 1),
            b'{' => (Kind::LBrace, 1),
            b'}' => (Kind::RBrace, 1),
            b'(' => (Kind::LParen, 1),
            b')' => (Kind::RParen, 1),
            b',' => (Kind::Comma, 1),
            b'-' => (Kind::Minus, 1),
            b'?' => (Kind::Question, 1),
            b':' => (Kind::Colon, 1),
            b'+' => (Kind::Plus, 1),
            b'*' => (Kind::Star, 1),
            b'/' => (Kind::Slash, 1),
            b'%' => (Kind::Percent, 1),
            b'.' if at(1).is_some_and(|d| d.is_ascii_digit()) => {
                (Kind::Float, number(&b[i..]).expect("a digit follows").1)
            }
            b'.' => (Kind::Dot, 1),
            b'0'..=b'9' => number(&b[i..]).expect("starts with a digit"),
            b'"' | b'\'' => (
                Kind::String,
                string(&b[i..], false).ok_or_else(|| err(&rest_of(src, i)))?,
            ),
            b'r' | b'R' if matches!(at(1), Some(b'"' | b'\'')) => (
                Kind::String,
                1 + string(&b[i + 1..], true).ok_or_else(|| err(&rest_of(src, i)))?,
            ),
            b'b' | b'B' if matches!(at(1), Some(b'"' | b'\'')) => (
                Kind::Bytes,
                1 + string(&b[i + 1..], false).ok_or_else(|| err(&rest_of(src, i)))?,
            ),
            b'b' | b'B'
                if matches!(at(1), Some(b'r' | b'R')) && matches!(at(2), Some(b'"' | b'\'')) =>
            {
                (
                    Kind::Bytes,
                    2 + string(&b[i + 2..], true).ok_or_else(|| err(&rest_of(src, i)))?,
                )
            }
            b'`' => {
                let n = b[i + 1..]
                    .iter()
                    .take_while(|&&c| c.is_ascii_alphanumeric() || b"_.-/ ".contains(&c))
                    .count();
                if n == 0 || b.get(i + 1 + n) != Some(&b'`') {
                    return Err(err(&rest_of(src, i)));
                }
                (Kind::EscIdent, n + 2)
            }
            c if c.is_ascii_alphabetic() || c == b'_' => {
                let n = b[i..]
                    .iter()
                    .take_while(|&&c| c.is_ascii_alphanumeric() || c == b'_')
                    .count();
                let kind = match &src[i..i + n] {
                    "in" => Kind::In,
                    "true" => Kind::True,
                    "false" => Kind::False,
                    "null" => Kind::Null,
                    _ => Kind::Ident,
                };
                (kind, n)
            }
            _ => {
                // ANTLR reports the character it could not start a token with (two for a
                // lone `|`/`&`/`=` followed by a space, as it tried the longer token).
                let ch = src[i..].chars().next().expect("in bounds");
                let mut text = ch.to_string();
                if matches!(c, b'|' | b'&' | b'=')
                    && let Some(next) = src[i + 1..].chars().next()
                {
                    text.push(next);
                }
                return Err(err(&text));
            }
        };
        i += len;
        out.push(Token {
            kind,
            start,
            end: i,
            line,
            column: col,
        });
        // A literal may span lines (triple quotes).
        for (k, &ch) in b[start..i].iter().enumerate() {
            if ch == b'\n' {
                line += 1;
                line_start = start + k + 1;
            }
        }
    }
    out.push(Token {
        kind: Kind::Eof,
        start: b.len(),
        end: b.len(),
        line,
        column: column(line_start, b.len()),
    });
    Ok(out)
}

/// The rest of the line from `i`, as ANTLR quotes an unterminated literal.
fn rest_of(src: &str, i: usize) -> String {
    src[i..].lines().next().unwrap_or_default().to_owned()
}

/// `NUM_FLOAT`, `NUM_INT` or `NUM_UINT` at the start of `b` (which starts with a digit, or
/// with `.` and a digit), by longest match.
fn number(b: &[u8]) -> Option<(Kind, usize)> {
    let digits = |from: usize| b[from..].iter().take_while(|c| c.is_ascii_digit()).count();
    let exponent = |from: usize| -> usize {
        if !matches!(b.get(from), Some(b'e' | b'E')) {
            return 0;
        }
        let sign = usize::from(matches!(b.get(from + 1), Some(b'+' | b'-')));
        let n = digits(from + 1 + sign);
        if n == 0 { 0 } else { 1 + sign + n }
    };
    if b[0] == b'.' {
        let n = digits(1);
        if n == 0 {
            return None;
        }
        return Some((Kind::Float, 1 + n + exponent(1 + n)));
    }
    if b[0] == b'0' && b.get(1) == Some(&b'x') {
        let n = b[2..].iter().take_while(|c| c.is_ascii_hexdigit()).count();
        if n > 0 {
            return Some(if matches!(b.get(2 + n), Some(b'u' | b'U')) {
                (Kind::Uint, 3 + n)
            } else {
                (Kind::Int, 2 + n)
            });
        }
        // `0x` with no hex digit: the `0`, then an identifier.
        return Some((Kind::Int, 1));
    }
    let n = digits(0);
    if b.get(n) == Some(&b'.') {
        let m = digits(n + 1);
        if m > 0 {
            return Some((Kind::Float, n + 1 + m + exponent(n + 1 + m)));
        }
    }
    let e = exponent(n);
    if e > 0 {
        return Some((Kind::Float, n + e));
    }
    if matches!(b.get(n), Some(b'u' | b'U')) {
        return Some((Kind::Uint, n + 1));
    }
    Some((Kind::Int, n))
}

/// The length of a quoted literal at the start of `b` (its quotes included): `'…'`, `"…"`,
/// `'''…'''` or `"""…"""`; escapes are skipped over (decoded by the parser), raw literals
/// have none. `None` when it is not closed (or a one-quote literal meets a line end).
fn string(b: &[u8], raw: bool) -> Option<usize> {
    let q = b[0];
    let triple = b.len() >= 3 && b[1] == q && b[2] == q;
    if triple {
        let mut i = 3;
        while i < b.len() {
            if !raw && b[i] == b'\\' {
                i += 2;
                continue;
            }
            if b[i] == q && b.get(i + 1) == Some(&q) && b.get(i + 2) == Some(&q) {
                return Some(i + 3);
            }
            i += 1;
        }
        return None;
    }
    let mut i = 1;
    while i < b.len() {
        match b[i] {
            b'\n' | b'\r' => return None,
            b'\\' if !raw => {
                if matches!(b.get(i + 1), None | Some(b'\n' | b'\r')) {
                    return None;
                }
                i += 2;
            }
            c if c == q => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}
