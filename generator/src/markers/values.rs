//! The grammar of marker values: Go-style quoting, controller-gen's "any type" literals
//! (`{a,b}`, `{k: v}`, bare words), and lists (`a;b` or `{a,b}`).

/// Why a quoted marker value does not decode, and how to write it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QuoteError {
    /// What is wrong.
    pub message: String,
    /// How to write it instead.
    pub hint: Option<String>,
}

/// Remove Go-style quoting: `"..."` (with escapes) or `` `...` ``; bare text stays as it is.
pub fn unquote(raw: &str) -> Result<String, QuoteError> {
    let raw = raw.trim();
    let plain = |message: String| QuoteError {
        message,
        hint: None,
    };
    if let Some(inner) = raw.strip_prefix('`') {
        return inner
            .strip_suffix('`')
            .map(str::to_owned)
            .ok_or_else(|| plain(format!("unterminated raw string `{raw}`")));
    }
    if raw.starts_with('"') {
        if raw.len() < 2 || !raw.ends_with('"') {
            return Err(plain(format!("unterminated string {raw}")));
        }
        // Go and JSON string escapes agree on everything markers use.
        return serde_json::from_str::<String>(raw).map_err(|e| {
            // A backslash that is no escape (`"^\d+$"`): the author meant it literally, as
            // regular expressions do, which backticks say without escaping.
            let inner = &raw[1..raw.len() - 1];
            let mut chars = inner.chars();
            let mut bad = None;
            while let Some(c) = chars.next() {
                if c == '\\' {
                    match chars.next() {
                        Some('"' | '\\' | '/' | 'b' | 'f' | 'n' | 'r' | 't' | 'u') => {}
                        other => {
                            bad = Some(other.map_or("\\".to_owned(), |o| format!("\\{o}")));
                            break;
                        }
                    }
                }
            }
            match bad {
                Some(escape) if !inner.contains('`') => QuoteError {
                    message: format!("`{escape}` is not an escape in the double-quoted value {raw}"),
                    hint: Some(format!(
                        "quote it with backticks, which keep every backslash as written: `{inner}` (or double each backslash: \"{}\")",
                        inner.replace('\\', "\\\\")
                    )),
                },
                _ => plain(format!("bad string {raw}: {e}")),
            }
        });
    }
    Ok(raw.to_owned())
}

/// Parse a value the way controller-gen parses `+kubebuilder:default`, `+kubebuilder:example`
/// and every other "any type" marker argument (controller-tools pkg/markers/parse.go): Go
/// literals, not JSON. `{a,b}` is a list, `{}` an empty object, `{k: v, k2: {n: 1}}` an object,
/// `{{a: 1},{a: 2}}` a list of objects, `a;b` a legacy list, bare words are strings, and a list
/// takes its item type from its first item (`{1, 2}` numbers, `{a, 1}` strings). JSON objects
/// parse the same way. `Err` says what is wrong, for the caller to place.
pub fn parse_any(raw: &str) -> Result<serde_json::Value, String> {
    let mut p = AnyParser {
        s: raw.as_bytes(),
        raw,
        pos: 0,
    };
    let v = p.any(true)?;
    p.skip_ws();
    if p.pos < p.s.len() {
        return Err(format!("extra text after the value: `{}`", &raw[p.pos..]));
    }
    Ok(v)
}

/// The item type controller-gen guesses from the first token(s) of a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Guess {
    String,
    Bool,
    Int,
    Number,
    /// `{...}` whose first item is the given type.
    Slice(GuessItem),
    /// `{key: value, ...}` with values of any type.
    Map,
}

/// A slice's item type: one level is enough to parse, since items re-guess their insides.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum GuessItem {
    String,
    Bool,
    Int,
    Number,
    Slice,
    Map,
}

struct AnyParser<'a> {
    s: &'a [u8],
    raw: &'a str,
    pos: usize,
}

impl AnyParser<'_> {
    fn skip_ws(&mut self) {
        while self.pos < self.s.len() && self.s[self.pos].is_ascii_whitespace() {
            self.pos += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.skip_ws();
        self.s.get(self.pos).copied()
    }

    fn expect(&mut self, c: u8) -> Result<(), String> {
        match self.peek() {
            Some(got) if got == c => {
                self.pos += 1;
                Ok(())
            }
            Some(_) => Err(format!(
                "expected `{}` at `{}`",
                c as char,
                &self.raw[self.pos..]
            )),
            None => Err(format!("expected `{}`, found the end", c as char)),
        }
    }

    /// The end of the quoted string starting at `at` (after its closing quote).
    fn quoted_end(&self, at: usize) -> Result<usize, String> {
        let q = self.s[at];
        let mut i = at + 1;
        while i < self.s.len() {
            match self.s[i] {
                b'\\' if q != b'`' => i += 2,
                c if c == q => return Ok(i + 1),
                _ => i += 1,
            }
        }
        Err(format!("unterminated string `{}`", &self.raw[at..]))
    }

    /// A number token at `at` (`-`, digits, `.`, exponent): its end and whether it is an
    /// integer, if it is one.
    fn number_at(&self, at: usize) -> Option<(usize, bool)> {
        let mut i = at;
        if self.s.get(i) == Some(&b'-') {
            i += 1;
        }
        let digits_start = i;
        while self.s.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        let mut int = true;
        if self.s.get(i) == Some(&b'.') {
            int = false;
            i += 1;
            while self.s.get(i).is_some_and(u8::is_ascii_digit) {
                i += 1;
            }
        }
        if i == digits_start || (i == digits_start + 1 && !int) {
            return None;
        }
        if matches!(self.s.get(i), Some(b'e' | b'E')) {
            let mut j = i + 1;
            if matches!(self.s.get(j), Some(b'+' | b'-')) {
                j += 1;
            }
            let exp_start = j;
            while self.s.get(j).is_some_and(u8::is_ascii_digit) {
                j += 1;
            }
            if j > exp_start {
                int = false;
                i = j;
            }
        }
        Some((i, int))
    }

    /// controller-gen's `guessType` at the current position.
    fn guess(&mut self, allow_slice: bool) -> Result<Guess, String> {
        let start = self.pos;
        let item = self.guess_one()?;
        self.pos = start;
        if allow_slice {
            // A `;` before any `,` makes a legacy list: `a;b;c`.
            let mut i = self.pos;
            while i < self.s.len() {
                match self.s[i] {
                    b'"' | b'\'' | b'`' => i = self.quoted_end(i)?,
                    b',' => break,
                    b';' => {
                        return Ok(Guess::Slice(item_of(item)));
                    }
                    _ => i += 1,
                }
            }
        }
        Ok(item)
    }

    fn guess_one(&mut self) -> Result<Guess, String> {
        let Some(hint) = self.peek() else {
            return Ok(Guess::String);
        };
        match hint {
            b'"' | b'\'' | b'`' => return Ok(Guess::String),
            b'{' => {
                let start = self.pos;
                self.pos += 1;
                let inner_hint = self.peek();
                let inner_start = self.pos;
                let first = self.guess_one()?;
                self.pos = inner_start;
                let guess = if first == Guess::String {
                    // A string then `:` is a map key; `{}` is an empty map.
                    self.string(true)?;
                    if self.peek() == Some(b':') || inner_hint == Some(b'}') {
                        Guess::Map
                    } else {
                        Guess::Slice(GuessItem::String)
                    }
                } else {
                    Guess::Slice(item_of(first))
                };
                self.pos = start;
                return Ok(guess);
            }
            _ => {}
        }
        let at = self.pos;
        let word_end = self.s[at..]
            .iter()
            .position(|c| !(c.is_ascii_alphanumeric() || *c == b'_'))
            .map_or(self.s.len(), |n| at + n);
        match &self.raw[at..word_end] {
            "true" | "false" => return Ok(Guess::Bool),
            w if w.starts_with(|c: char| c.is_ascii_alphabetic()) => return Ok(Guess::String),
            _ => {}
        }
        if let Some((end, int)) = self.number_at(at) {
            let mut j = end;
            while j < self.s.len() && self.s[j].is_ascii_whitespace() {
                j += 1;
            }
            // `100Mi`, `2024-01-15`, `123/x` start like numbers but are strings.
            if matches!(self.s.get(j), None | Some(b',' | b';' | b'}')) {
                return Ok(if int { Guess::Int } else { Guess::Number });
            }
        }
        Ok(Guess::String)
    }

    fn any(&mut self, allow_slice: bool) -> Result<serde_json::Value, String> {
        let g = self.guess(allow_slice)?;
        self.parse(g)
    }

    fn parse(&mut self, g: Guess) -> Result<serde_json::Value, String> {
        use serde_json::Value;
        Ok(match g {
            Guess::String => Value::String(self.string(false)?),
            Guess::Bool => {
                self.skip_ws();
                let v = self.raw[self.pos..].starts_with("true");
                self.pos += if v { 4 } else { 5 };
                Value::Bool(v)
            }
            Guess::Int => {
                self.skip_ws();
                let (end, _) = self.number_at(self.pos).ok_or("expected an integer")?;
                let text = &self.raw[self.pos..end];
                let n: i64 = text
                    .parse()
                    .map_err(|_| format!("expected an integer, got `{text}`"))?;
                self.pos = end;
                Value::from(n)
            }
            Guess::Number => {
                self.skip_ws();
                let (end, _) = self.number_at(self.pos).ok_or("expected a number")?;
                let text = &self.raw[self.pos..end];
                let n: f64 = text
                    .parse()
                    .map_err(|_| format!("expected a number, got `{text}`"))?;
                self.pos = end;
                json_number(n)
            }
            Guess::Map => {
                self.expect(b'{')?;
                let mut map = serde_json::Map::new();
                while !matches!(self.peek(), Some(b'}') | None) {
                    let key = self.string(true)?;
                    self.expect(b':')?;
                    let value = self.any(true)?;
                    map.insert(key, value);
                    if self.peek() == Some(b'}') {
                        break;
                    }
                    self.expect(b',')?;
                }
                self.expect(b'}')?;
                Value::Object(map)
            }
            Guess::Slice(item) => {
                let item = match item {
                    GuessItem::String => Guess::String,
                    GuessItem::Bool => Guess::Bool,
                    GuessItem::Int => Guess::Int,
                    GuessItem::Number => Guess::Number,
                    GuessItem::Map => Guess::Map,
                    GuessItem::Slice => Guess::Slice(GuessItem::String),
                };
                let mut items = vec![];
                if self.peek() == Some(b'{') {
                    self.pos += 1;
                    while !matches!(self.peek(), Some(b'}') | None) {
                        items.push(self.item(item)?);
                        if self.peek() == Some(b'}') {
                            break;
                        }
                        self.expect(b',')?;
                    }
                    self.expect(b'}')?;
                } else {
                    // The legacy form: `a;b;c`, up to a `,` or `}` or the end.
                    while !matches!(self.peek(), Some(b',' | b'}') | None) {
                        items.push(self.item(item)?);
                        match self.peek() {
                            Some(b';') => self.pos += 1,
                            _ => break,
                        }
                    }
                }
                Value::Array(items)
            }
        })
    }

    /// One list item, of the list's type; a nested list re-guesses its own items.
    fn item(&mut self, g: Guess) -> Result<serde_json::Value, String> {
        match g {
            Guess::Slice(_) => {
                let inner = self.guess(false)?;
                match inner {
                    Guess::Slice(_) => self.parse(inner),
                    _ => Err(format!("expected a list at `{}`", &self.raw[self.pos..])),
                }
            }
            Guess::Bool
                if !self.raw[self.pos..].trim_start().starts_with("true")
                    && !self.raw[self.pos..].trim_start().starts_with("false") =>
            {
                Err(format!(
                    "expected true or false at `{}`",
                    &self.raw[self.pos..]
                ))
            }
            _ => self.parse(g),
        }
    }

    /// A quoted string, or bare text up to `,` `;` `}` (and `:` in a map key), trimmed.
    fn string(&mut self, in_map: bool) -> Result<String, String> {
        self.skip_ws();
        if let Some(&q @ (b'"' | b'\'' | b'`')) = self.s.get(self.pos) {
            let end = self.quoted_end(self.pos)?;
            let text = &self.raw[self.pos..end];
            self.pos = end;
            return match q {
                b'`' => Ok(text[1..text.len() - 1].to_owned()),
                b'\'' => {
                    // A Go rune literal: one character.
                    let inner = &text[1..text.len() - 1];
                    let mut chars = inner.chars();
                    match (chars.next(), chars.next()) {
                        (Some(c), None) => Ok(c.to_string()),
                        _ => Err(format!("invalid character literal {text}")),
                    }
                }
                _ => serde_json::from_str::<String>(text)
                    .map_err(|e| format!("bad string {text}: {e}")),
            };
        }
        let start = self.pos;
        let mut i = self.pos;
        while i < self.s.len() {
            match self.s[i] {
                b',' | b';' | b'}' => break,
                b':' if in_map => break,
                b'"' | b'\'' | b'`' => i = self.quoted_end(i)?,
                _ => i += 1,
            }
        }
        self.pos = i;
        Ok(self.raw[start..i].trim().to_owned())
    }
}

fn item_of(g: Guess) -> GuessItem {
    match g {
        Guess::String => GuessItem::String,
        Guess::Bool => GuessItem::Bool,
        Guess::Int => GuessItem::Int,
        Guess::Number => GuessItem::Number,
        Guess::Slice(_) => GuessItem::Slice,
        Guess::Map => GuessItem::Map,
    }
}

/// A float as Go's encoding/json writes it: integral values without a fraction (`3`, not
/// `3.0`), so `+kubebuilder:default=3.0` gives the YAML controller-gen gives.
fn json_number(n: f64) -> serde_json::Value {
    if n.fract() == 0.0 && n.abs() < 1e15 {
        serde_json::Value::from(n as i64)
    } else {
        serde_json::Value::from(n)
    }
}

/// Split `a=1,b="x,y",c={p,q}` at top-level commas.
pub(super) fn split_top_level(s: &str, sep: char) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut in_str, mut in_raw, mut escaped, mut start) =
        (0i32, false, false, false, 0);
    for (i, c) in s.char_indices() {
        if in_str {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_str = false,
                _ => {}
            }
            continue;
        }
        if in_raw {
            if c == '`' {
                in_raw = false;
            }
            continue;
        }
        match c {
            '"' => in_str = true,
            '`' => in_raw = true,
            '{' | '[' => depth += 1,
            '}' | ']' => depth -= 1,
            c if c == sep && depth == 0 => {
                parts.push(&s[start..i]);
                start = i + c.len_utf8();
            }
            _ => {}
        }
    }
    parts.push(&s[start..]);
    parts
}

/// Split a list value: `a;b;c` or `{a,b,c}`.
pub fn split_list(raw: &str) -> Vec<String> {
    let raw = raw.trim();
    let items = if let Some(inner) = raw.strip_prefix('{').and_then(|r| r.strip_suffix('}')) {
        split_top_level(inner, ',')
    } else {
        split_top_level(raw, ';')
    };
    // An empty item is dropped (`a;b;`), but a quoted empty string is a value (`a;""`):
    // controller-gen keeps it, and an enum without it refuses what Go clients send for an
    // unset field.
    items
        .into_iter()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| unquote(s).unwrap_or_else(|_| s.to_owned()))
        .collect()
}
