//! Where each JSON path (`spec.versions[0].schema`) of a CRD document is in its text, for
//! the lines of `import crd`'s warnings and errors.
//!
//! The index is built in one pass over the document when a location is first asked for,
//! then each lookup is a hash lookup: a CRD with thousands of warnings (a 20 MB CRD has
//! tens of thousands) costs one pass, where a search per warning cost a pass each.
//! Block YAML is followed by indentation, JSON and flow YAML by their brackets; a path the
//! text does not spell plainly (an anchor, a key in a flow mapping inside block YAML) is
//! not found, and the caller names the document instead.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

/// The positions of one document's JSON paths, indexed on first use.
pub struct Positions {
    /// The whole input text the document is in.
    text: Arc<str>,
    /// The 1-based line the document starts on.
    first_line: usize,
    index: OnceLock<HashMap<String, (usize, usize)>>,
}

impl std::fmt::Debug for Positions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Positions")
            .field("first_line", &self.first_line)
            .finish_non_exhaustive()
    }
}

impl Positions {
    /// The document of `text` that starts on line `first_line`.
    pub fn new(text: Arc<str>, first_line: usize) -> Self {
        Positions {
            text,
            first_line,
            index: OnceLock::new(),
        }
    }

    /// The 1-based line and column of `path`'s key (of its `- ` for a list item).
    pub fn locate(&self, path: &str) -> Option<(usize, usize)> {
        self.index
            .get_or_init(|| index(&self.text, self.first_line))
            .get(path)
            .copied()
    }
}

/// Every path of the document starting on `first_line`, with its line and column.
fn index(text: &str, first_line: usize) -> HashMap<String, (usize, usize)> {
    // The document: from its first line to the next `---`.
    let mut start = 0;
    for _ in 1..first_line {
        match text[start..].find('\n') {
            Some(i) => start += i + 1,
            None => return HashMap::new(),
        }
    }
    let rest = &text[start..];
    let mut end = rest.len();
    let mut at = 0;
    for line in rest.split_inclusive('\n') {
        if at > 0 && line.starts_with("---") {
            end = at;
            break;
        }
        at += line.len();
    }
    let doc = &rest[..end];
    let mut out = HashMap::new();
    let first = doc
        .lines()
        .map(str::trim_start)
        .find(|l| !l.is_empty() && !l.starts_with('#'));
    if first.is_some_and(|l| l.starts_with('{') || l.starts_with('[')) {
        index_flow(doc, first_line, &mut out);
    } else {
        index_block(doc, first_line, &mut out);
    }
    out
}

/// `parent.key`, or `key` at the top.
fn child(parent: &str, key: &str) -> String {
    if parent.is_empty() {
        key.to_owned()
    } else {
        format!("{parent}.{key}")
    }
}

/// A mapping or a list open in block YAML.
struct Frame {
    /// The column its key (or `- `) starts at; -1 for the document.
    indent: isize,
    path: String,
    /// A list item (`- `), rather than a key.
    item: bool,
    /// The index its next `- ` child gets.
    next_item: usize,
}

/// Block-style YAML, by indentation: a key line `key: …` (keys plain or quoted), a list
/// item `- …` (whose content may be a key), block scalars (`|`, `>`) and quoted scalars
/// over several lines skipped.
fn index_block(doc: &str, first_line: usize, out: &mut HashMap<String, (usize, usize)>) {
    let mut stack = vec![Frame {
        indent: -1,
        path: String::new(),
        item: false,
        next_item: 0,
    }];
    // Inside a block scalar: lines indented past this column are its text.
    let mut block_scalar: Option<isize> = None;
    // Inside a quoted scalar that goes on to later lines, and its quote.
    let mut open_quote: Option<char> = None;
    for (n, line) in doc.lines().enumerate() {
        let line_no = first_line + n;
        if let Some(q) = open_quote {
            if closes(line, q) {
                open_quote = None;
            }
            continue;
        }
        let mut t = line.trim_start();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        // Indentation is spaces, so bytes are columns.
        let mut c = (line.len() - t.len()) as isize;
        if let Some(b) = block_scalar {
            if c > b {
                continue;
            }
            block_scalar = None;
        }
        while t == "-" || t.starts_with("- ") {
            while stack
                .last()
                .is_some_and(|f| f.indent > c || (f.indent == c && f.item))
            {
                stack.pop();
            }
            let parent = stack.last_mut().expect("the document's frame stays");
            let path = format!("{}[{}]", parent.path, parent.next_item);
            parent.next_item += 1;
            out.entry(path.clone()).or_insert((line_no, c as usize + 1));
            stack.push(Frame {
                indent: c,
                path,
                item: true,
                next_item: 0,
            });
            let after = &t[1..];
            let content = after.trim_start();
            c += 1 + (after.len() - content.len()) as isize;
            t = content;
        }
        let Some((key, value)) = key_of(t) else {
            continue;
        };
        while stack.last().is_some_and(|f| f.indent >= c) {
            stack.pop();
        }
        let parent = stack.last().expect("the document's frame stays");
        let path = child(&parent.path, &key);
        out.entry(path.clone()).or_insert((line_no, c as usize + 1));
        stack.push(Frame {
            indent: c,
            path,
            item: false,
            next_item: 0,
        });
        let value = value.trim_start();
        if value.starts_with('|') || value.starts_with('>') {
            block_scalar = Some(c);
        } else if let Some(q) = value.chars().next().filter(|q| *q == '"' || *q == '\'')
            && !closes(&value[1..], q)
        {
            open_quote = Some(q);
        }
    }
}

/// Whether `text` holds the quote `q` that closes a scalar (not escaped: `\"` in double
/// quotes, `''` in single quotes).
fn closes(text: &str, q: char) -> bool {
    let mut chars = text.chars().peekable();
    while let Some(ch) = chars.next() {
        match ch {
            '\\' if q == '"' => {
                chars.next();
            }
            '\'' if q == '\'' && chars.peek() == Some(&'\'') => {
                chars.next();
            }
            ch if ch == q => return true,
            _ => {}
        }
    }
    false
}

/// The key of a block mapping line and what follows its `:`.
fn key_of(t: &str) -> Option<(String, &str)> {
    match t.chars().next()? {
        '"' => {
            let end = closing(t, '"')?;
            let key: String = serde_json::from_str(&t[..=end]).ok()?;
            let rest = t[end + 1..].trim_start().strip_prefix(':')?;
            Some((key, rest))
        }
        '\'' => {
            let end = closing(t, '\'')?;
            let key = t[1..end].replace("''", "'");
            let rest = t[end + 1..].trim_start().strip_prefix(':')?;
            Some((key, rest))
        }
        '{' | '[' | '&' | '*' | '!' | '|' | '>' | '%' | '@' | '`' => None,
        _ => {
            // A plain key ends at the first `: ` (or a `:` ending the line).
            let bytes = t.as_bytes();
            let i = (0..bytes.len()).find(|&i| {
                bytes[i] == b':' && bytes.get(i + 1).is_none_or(|b| *b == b' ' || *b == b'\t')
            })?;
            Some((t[..i].trim_end().to_owned(), &t[i + 1..]))
        }
    }
}

/// The byte index of the quote closing the scalar `t` opens.
fn closing(t: &str, q: char) -> Option<usize> {
    let mut iter = t.char_indices().skip(1).peekable();
    while let Some((i, ch)) = iter.next() {
        match ch {
            '\\' if q == '"' => {
                iter.next();
            }
            '\'' if q == '\'' && iter.peek().is_some_and(|(_, c)| *c == '\'') => {
                iter.next();
            }
            ch if ch == q => return Some(i),
            _ => {}
        }
    }
    None
}

/// A mapping or list open in JSON (or flow YAML).
enum Open {
    Object {
        path: String,
        /// The path of the member whose value comes next.
        member: Option<String>,
    },
    List {
        path: String,
        index: usize,
        /// Whether the current item's position is recorded.
        started: bool,
    },
}

/// JSON, or YAML in flow style, by its brackets, without recursion (the text may nest
/// as deep as the parser allowed): every member's key, every list item's first character.
fn index_flow(doc: &str, first_line: usize, out: &mut HashMap<String, (usize, usize)>) {
    let bytes = doc.as_bytes();
    let mut stack: Vec<Open> = vec![];
    let (mut line, mut col) = (first_line, 1usize);
    let mut i = 0;
    // Move past byte `i`, keeping the line and the column (in characters).
    let step = |i: &mut usize, line: &mut usize, col: &mut usize| {
        let b = bytes[*i];
        if b == b'\n' {
            *line += 1;
            *col = 1;
        } else if b & 0xc0 != 0x80 {
            *col += 1;
        }
        *i += 1;
    };
    while i < bytes.len() {
        let b = bytes[i];
        if b.is_ascii_whitespace() || b == b':' {
            step(&mut i, &mut line, &mut col);
            continue;
        }
        if b == b'#' {
            while i < bytes.len() && bytes[i] != b'\n' {
                step(&mut i, &mut line, &mut col);
            }
            continue;
        }
        match b {
            b',' => {
                match stack.last_mut() {
                    Some(Open::Object { member, .. }) => *member = None,
                    Some(Open::List { index, started, .. }) => {
                        *index += 1;
                        *started = false;
                    }
                    None => {}
                }
                step(&mut i, &mut line, &mut col);
                continue;
            }
            b'}' | b']' => {
                stack.pop();
                step(&mut i, &mut line, &mut col);
                continue;
            }
            _ => {}
        }
        // A key, or the start of a value.
        let here = (line, col);
        let key_expected = matches!(stack.last(), Some(Open::Object { member: None, .. }));
        if key_expected {
            let start = i;
            skip_scalar(bytes, &mut i, &mut line, &mut col, &step);
            let raw = &doc[start..i];
            let key = if raw.starts_with('"') {
                serde_json::from_str::<String>(raw).unwrap_or_default()
            } else if let Some(inner) = raw.strip_prefix('\'').and_then(|r| r.strip_suffix('\'')) {
                inner.replace("''", "'")
            } else {
                raw.to_owned()
            };
            if let Some(Open::Object { path, member }) = stack.last_mut() {
                let p = child(path, &key);
                out.entry(p.clone()).or_insert(here);
                *member = Some(p);
            }
            continue;
        }
        // A value: its path is the member's, or the list item's.
        let path = match stack.last_mut() {
            Some(Open::Object { member, .. }) => member.clone().unwrap_or_default(),
            Some(Open::List {
                path,
                index,
                started,
            }) => {
                let p = format!("{path}[{index}]");
                if !*started {
                    *started = true;
                    out.entry(p.clone()).or_insert(here);
                }
                p
            }
            None => String::new(),
        };
        match b {
            b'{' => {
                stack.push(Open::Object { path, member: None });
                step(&mut i, &mut line, &mut col);
            }
            b'[' => {
                stack.push(Open::List {
                    path,
                    index: 0,
                    started: false,
                });
                step(&mut i, &mut line, &mut col);
            }
            _ => skip_scalar(bytes, &mut i, &mut line, &mut col, &step),
        }
    }
}

/// Past one scalar at `i`: a quoted string (escapes and all), or a plain one up to the
/// next `,` `:` `]` `}` or line end.
fn skip_scalar(
    bytes: &[u8],
    i: &mut usize,
    line: &mut usize,
    col: &mut usize,
    step: &impl Fn(&mut usize, &mut usize, &mut usize),
) {
    let q = bytes[*i];
    if q == b'"' || q == b'\'' {
        step(i, line, col);
        while *i < bytes.len() {
            let b = bytes[*i];
            step(i, line, col);
            if b == b'\\' && q == b'"' && *i < bytes.len() {
                step(i, line, col);
            } else if b == q {
                if q == b'\'' && bytes.get(*i) == Some(&b'\'') {
                    step(i, line, col);
                } else {
                    return;
                }
            }
        }
        return;
    }
    // The first byte is none of these (the caller handles them), so this moves on.
    while *i < bytes.len() && !matches!(bytes[*i], b',' | b':' | b']' | b'}' | b'\n') {
        step(i, line, col);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str, first_line: usize, path: &str) -> Option<(usize, usize)> {
        Positions::new(text.into(), first_line).locate(path)
    }

    #[test]
    fn block_yaml_keys_and_items_by_indentation() {
        let text = "a: 1\nspec:\n  versions:\n  - name: v1\n    schema:\n      x: 1\n  - name: v2\n    schema:\n      type: object\n";
        assert_eq!(at(text, 1, "spec"), Some((2, 1)));
        assert_eq!(at(text, 1, "spec.versions[0]"), Some((4, 3)));
        assert_eq!(at(text, 1, "spec.versions[0].name"), Some((4, 5)));
        assert_eq!(at(text, 1, "spec.versions[1].schema.type"), Some((9, 7)));
        assert_eq!(at(text, 1, "spec.versions[2]"), None);
        assert_eq!(at(text, 1, "spec.nope"), None);
    }

    #[test]
    fn block_scalars_quotes_and_later_documents() {
        let text = "x: 1\n---\nspec:\n  description: |\n    not: a key\n    - nor an item\n  \"quoted\": \"a\n    b: c\"\n  'single': 1\n  items:\n    - - deep: 1\n---\nother: 1\n";
        assert_eq!(at(text, 3, "spec.description"), Some((4, 3)));
        assert_eq!(at(text, 3, "spec.description.not"), None);
        assert_eq!(at(text, 3, "spec.quoted"), Some((7, 3)));
        assert_eq!(at(text, 3, "spec.b"), None);
        assert_eq!(at(text, 3, "spec.single"), Some((9, 3)));
        assert_eq!(at(text, 3, "spec.items[0][0].deep"), Some((11, 9)));
        assert_eq!(at(text, 3, "other"), None, "the next document");
        assert_eq!(at(text, 3, "x"), None, "the one before");
    }

    #[test]
    fn json_on_one_line_and_pretty_printed() {
        let one = r#"{"spec":{"versions":[{"name":"v1","schema":{"a\"b":1}},{"name":"é","x":[1,{"y":2}]}]}}"#;
        assert_eq!(at(one, 1, "spec"), Some((1, 2)));
        assert_eq!(at(one, 1, "spec.versions[0]"), Some((1, 22)));
        assert_eq!(at(one, 1, "spec.versions[0].schema.a\"b"), Some((1, 45)));
        assert_eq!(at(one, 1, "spec.versions[1].name"), Some((1, 57)));
        // Columns count characters: `é` is one.
        assert_eq!(at(one, 1, "spec.versions[1].x[1].y"), Some((1, 76)));
        let pretty =
            serde_json::to_string_pretty(&serde_json::from_str::<serde_json::Value>(one).unwrap())
                .unwrap();
        assert_eq!(at(&pretty, 1, "spec.versions[1].name"), Some((11, 9)));
        assert_eq!(at(&pretty, 1, "spec.versions[1]"), Some((10, 7)));
        // Flow YAML.
        assert_eq!(
            at("{spec: {names: [a, {kind: K}]}}", 1, "spec.names[1].kind"),
            Some((1, 21))
        );
    }
}
