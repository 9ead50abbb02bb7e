//! Marker parsing: `+name`, `+name=value` and `+name:key=value,key=value` lines in doc
//! comments, following controller-gen's and code-generator's syntax.
//!
//! Every marker we understand is listed in [`MARKERS`]. A comment line that starts with `+`
//! and names a known *prefix* (kubebuilder, genclient, listType, ...) but no known marker is
//! an error with a "did you mean" hint: a typo must never be silently ignored, because the
//! generated CRD would then lack the validation the author asked for.

use crate::diagnostics::{Diagnostic, Location};

/// Where a marker may appear.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    /// Inner doc comment of a group/version module (`//! +groupName=...`).
    Package,
    /// Doc comment of a struct or enum.
    Type,
    /// Doc comment of a field (most validation markers also work on types).
    Field,
}

/// The shape of a marker's arguments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Args {
    /// `+name` and nothing else.
    Flag,
    /// `+name=value`.
    Value,
    /// `+name` alone, or `+name=true|false`.
    OptionalBool,
    /// `+name:key=value,key=value`; the listed keys are the allowed ones, `!` marks a required key.
    Named(&'static [&'static str]),
}

/// A known marker.
#[derive(Debug)]
pub struct MarkerSpec {
    /// The name after `+`, up to its arguments (`kubebuilder:validation:Minimum`).
    pub name: &'static str,
    /// The shape of its arguments.
    pub args: Args,
    /// Where it may appear.
    pub levels: &'static [Level],
}

pub(crate) const P: &[Level] = &[Level::Package];
pub(crate) const T: &[Level] = &[Level::Type];
pub(crate) const F: &[Level] = &[Level::Field];
pub(crate) const TF: &[Level] = &[Level::Type, Level::Field];
pub(crate) const PF: &[Level] = &[Level::Package, Level::Field];
pub(crate) const PT: &[Level] = &[Level::Package, Level::Type];

/// The prefix of controller-gen's array-item forms: `+kubebuilder:validation:items:MaxLength=5`
/// applies `MaxLength` to the items of the array it is on.
pub const ITEMS_PREFIX: &str = "kubebuilder:validation:items:";

/// The validation markers that have an `items:` form: controller-gen's `ValidationMarkers`
/// (pkg/crd/markers/validation.go), each also registered as `kubebuilder:validation:items:<X>`.
pub const ITEMS_MARKERS: &[&str] = &[
    "kubebuilder:validation:Maximum",
    "kubebuilder:validation:Minimum",
    "kubebuilder:validation:ExclusiveMaximum",
    "kubebuilder:validation:ExclusiveMinimum",
    "kubebuilder:validation:MultipleOf",
    "kubebuilder:validation:MinProperties",
    "kubebuilder:validation:MaxProperties",
    "kubebuilder:validation:MaxLength",
    "kubebuilder:validation:MinLength",
    "kubebuilder:validation:Pattern",
    "kubebuilder:validation:MaxItems",
    "kubebuilder:validation:MinItems",
    "kubebuilder:validation:UniqueItems",
    "kubebuilder:validation:Enum",
    "kubebuilder:validation:Format",
    "kubebuilder:validation:Type",
    "kubebuilder:validation:XPreserveUnknownFields",
    "kubebuilder:validation:XEmbeddedResource",
    "kubebuilder:validation:XIntOrString",
    "kubebuilder:validation:XValidation",
];

/// Arguments of `+kubebuilder:rbac` (controller-gen pkg/rbac `Rule`).
pub const RBAC_ARGS: &[&str] = &[
    "groups",
    "resources",
    "resourceNames",
    "!verbs",
    "urls",
    "namespace",
    "roleName",
];

/// Arguments of `+kubebuilder:webhook` (controller-gen pkg/webhook `Config`).
pub const WEBHOOK_ARGS: &[&str] = &[
    "!mutating",
    "!failurePolicy",
    "matchPolicy",
    "sideEffects",
    "timeoutSeconds",
    "!groups",
    "!resources",
    "!verbs",
    "!versions",
    "!name",
    "serviceName",
    "serviceNamespace",
    "path",
    "servicePort",
    "webhookVersions",
    "!admissionReviewVersions",
    "reinvocationPolicy",
    "url",
    "patch",
];

/// The markers of the model itself, owned by no generator: group/version and kind identity,
/// field presence, and markers parsed for generators still to come (webhooks, apply
/// configurations). Each generator declares the markers whose meaning it owns
/// (`generators::REGISTRY`); [`MARKERS`] is all of them, so markers are parsed once, by one table.
pub const CORE_MARKERS: &[MarkerSpec] = &[
    MarkerSpec {
        name: "groupName",
        args: Args::Value,
        levels: P,
    },
    MarkerSpec {
        name: "versionName",
        args: Args::Value,
        levels: P,
    },
    MarkerSpec {
        name: "kubebuilder:object:root",
        args: Args::OptionalBool,
        levels: T,
    },
    MarkerSpec {
        name: "kubebuilder:resource",
        args: Args::Named(&["path", "singular", "shortName", "categories", "scope"]),
        levels: T,
    },
    MarkerSpec {
        name: "kubebuilder:validation:Required",
        args: Args::Flag,
        levels: PF,
    },
    MarkerSpec {
        name: "kubebuilder:validation:Optional",
        args: Args::Flag,
        levels: PF,
    },
    MarkerSpec {
        name: "optional",
        args: Args::Flag,
        levels: F,
    },
    MarkerSpec {
        name: "required",
        args: Args::Flag,
        levels: F,
    },
    MarkerSpec {
        name: "kubebuilder:skip",
        args: Args::Flag,
        levels: P,
    },
    MarkerSpec {
        name: "kubebuilder:ac:generate",
        args: Args::OptionalBool,
        levels: PT,
    },
    MarkerSpec {
        name: "kubebuilder:ac:output:package",
        args: Args::Value,
        levels: P,
    },
    MarkerSpec {
        name: "kubebuilder:webhook",
        args: Args::Named(WEBHOOK_ARGS),
        levels: PT,
    },
    MarkerSpec {
        name: "kubebuilder:webhookconfiguration",
        args: Args::Named(&["!mutating", "name"]),
        levels: PT,
    },
    MarkerSpec {
        name: "k8s:required",
        args: Args::Flag,
        levels: F,
    },
    MarkerSpec {
        name: "k8s:optional",
        args: Args::Flag,
        levels: F,
    },
];

/// Every marker kube-codegen understands: the model's and every registered generator's.
/// Order does not matter: the longest name that matches wins, so
/// `kubebuilder:validation:XValidation` is not read as `kubebuilder:validation`.
pub static MARKERS: std::sync::LazyLock<Vec<&'static MarkerSpec>> =
    std::sync::LazyLock::new(|| {
        CORE_MARKERS
            .iter()
            .chain(crate::generators::REGISTRY.iter().flat_map(|g| g.markers))
            .collect()
    });

/// Markers of Kubernetes' code-generator (and its protobuf tooling) that have no meaning for
/// a CRD or for the Rust we generate: accepted without a word, as controller-gen does.
const SILENT_FOREIGN: &[&str] = &[
    "k8s:deepcopy-gen",
    "k8s:openapi-gen",
    "k8s:openapi-model-package",
    "k8s:conversion-gen",
    "k8s:conversion-fn",
    "k8s:defaulter-gen",
    "k8s:prerelease-lifecycle-gen",
    "k8s:protobuf",
    "k8s:validation-gen",
    "k8s:register-gen",
    "groupGoName",
    "protobuf",
    "genconversion",
];

/// One parsed marker occurrence.
#[derive(Clone, Debug)]
pub struct Marker {
    pub name: &'static str,
    /// The `=value` part, unparsed (quotes kept), for `Args::Value` / `Args::OptionalBool`.
    pub value: Option<String>,
    /// The `key=value` pairs, values with quotes removed, in source order.
    pub args: Vec<(String, String)>,
    /// The marker text as written, without the leading `+`.
    pub text: String,
    /// Written in its `kubebuilder:validation:items:<X>` form: `name` is the plain
    /// `kubebuilder:validation:<X>`, and it applies to the array's items.
    pub items: bool,
    pub loc: Location,
}

impl Marker {
    pub fn arg(&self, key: &str) -> Option<&str> {
        self.args
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// An error about this marker, pointing at it.
    pub fn error(&self, message: impl Into<String>) -> Diagnostic {
        Diagnostic::new(self.loc.clone(), message).with_marker(&self.text)
    }

    /// The value with surrounding quotes removed and escapes decoded.
    pub fn string_value(&self) -> Result<String, Diagnostic> {
        match &self.value {
            Some(v) => unquote(v).map_err(|e| self.error(e)),
            None => Err(self.error(format!(
                "`+{}` needs a value: `+{}=...`",
                self.name, self.name
            ))),
        }
    }

    /// For `Args::OptionalBool` markers: absent value means true.
    pub fn bool_value(&self) -> Result<bool, Diagnostic> {
        match self.value.as_deref().map(str::trim) {
            None | Some("true") => Ok(true),
            Some("false") => Ok(false),
            Some(other) => Err(self
                .error(format!(
                    "`+{}` takes true or false, not `{other}`",
                    self.name
                ))
                .with_hint("allowed values: true, false")),
        }
    }

    pub fn parse_value<N: std::str::FromStr>(&self, what: &str) -> Result<N, Diagnostic> {
        let raw = self.string_value()?;
        raw.trim()
            .parse::<N>()
            .map_err(|_| self.error(format!("`+{}` expects {what}, got `{raw}`", self.name)))
    }
}

/// Remove Go-style quoting: `"..."` (with escapes) or `` `...` ``; bare text stays as it is.
pub fn unquote(raw: &str) -> Result<String, String> {
    let raw = raw.trim();
    if let Some(inner) = raw.strip_prefix('`') {
        return inner
            .strip_suffix('`')
            .map(str::to_owned)
            .ok_or_else(|| format!("unterminated raw string `{raw}`"));
    }
    if raw.starts_with('"') {
        if raw.len() < 2 || !raw.ends_with('"') {
            return Err(format!("unterminated string {raw}"));
        }
        // Go and JSON string escapes agree on everything markers use.
        return serde_json::from_str::<String>(raw).map_err(|e| format!("bad string {raw}: {e}"));
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
fn split_top_level(s: &str, sep: char) -> Vec<&str> {
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
    items
        .into_iter()
        .map(|s| unquote(s).unwrap_or_else(|_| s.trim().to_owned()))
        .filter(|s| !s.is_empty())
        .collect()
}

/// Find the spec whose name is the longest prefix of `body` ending at `=`, `:` or the end.
fn lookup(body: &str) -> Option<(&'static MarkerSpec, &str)> {
    MARKERS
        .iter()
        .copied()
        .filter_map(|spec| {
            let rest = body.strip_prefix(spec.name)?;
            (rest.is_empty() || rest.starts_with('=') || rest.starts_with(':'))
                .then_some((spec, rest))
        })
        .max_by_key(|(spec, _)| spec.name.len())
}

/// Every marker name as written, the `items:` forms included: the candidates for a typo.
fn all_names() -> impl Iterator<Item = String> {
    MARKERS.iter().map(|m| m.name.to_owned()).chain(
        ITEMS_MARKERS
            .iter()
            .map(|n| format!("{ITEMS_PREFIX}{}", &n["kubebuilder:validation:".len()..])),
    )
}

/// The known marker `name` is most likely a typo of, by edit distance (case-insensitive,
/// transpositions count once): `kubebuilder:validation:Minimun` is one edit from `Minimum`.
/// Every `:`-prefix of the name is tried, so arguments after the name
/// (`+kubebuilder:printcolum:name=...`) do not hide the typo. `None` when nothing is close:
/// then it is another tool's marker, not a typo of ours.
fn typo_of(name: &str) -> Option<(String, String)> {
    let mut ends: Vec<usize> = name.match_indices(':').map(|(i, _)| i).collect();
    ends.push(name.len());
    let mut best: Option<(usize, String, String)> = None;
    for end in ends {
        let written = &name[..end];
        let lower = written.to_lowercase();
        for candidate in all_names() {
            let d = strsim::damerau_levenshtein(&lower, &candidate.to_lowercase());
            // One edit in a short name, two in a long one: `+optinal` is a typo, while
            // `+kubebuilder:scaffold` (kubebuilder's own) is nowhere near `+kubebuilder:skip`.
            // The last segment decides, so `+k8s:minItems` (declarative validation's, not
            // ours) is not taken for `+k8s:maxItems`.
            let last = candidate.rsplit(':').next().unwrap_or(&candidate);
            let allowed = if last.len() < 9 { 1 } else { 2 };
            if d <= allowed && best.as_ref().is_none_or(|(bd, _, _)| d < *bd) {
                best = Some((d, written.to_owned(), candidate));
            }
        }
    }
    best.map(|(_, written, candidate)| (written, candidate))
}

/// A `+` line that names no marker we know: a typo of ours is an error with a suggestion;
/// another tool's marker (an unknown `+kubebuilder:` form, `+operator-sdk:`, openapi-gen's
/// `+patchStrategy`) is a warning, since it changes nothing here; prose is left alone.
fn unknown_marker(body: &str, loc: Location) -> Result<Option<Marker>, Diagnostic> {
    let name_end = body
        .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, ':' | '-' | '_' | '.' | '/')))
        .unwrap_or(body.len());
    let name = body[..name_end].trim_end_matches(':');
    let after = &body[name_end..];
    // `+1 for this`, `+ a list item`: prose, not a marker.
    if !name.starts_with(|c: char| c.is_ascii_alphabetic()) {
        return Ok(None);
    }
    if SILENT_FOREIGN.iter().any(|f| {
        name.strip_prefix(f)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with(':'))
    }) {
        return Ok(None);
    }
    let typo = typo_of(name);
    if !(after.is_empty() || after.starts_with('=')) {
        // `+foo bar` is prose too, unless it starts with one of our markers.
        return match typo {
            Some((written, candidate)) if written.eq_ignore_ascii_case(&candidate) => Err(
                Diagnostic::new(loc, format!("unexpected text after `+{written}`"))
                    .with_marker(body)
                    .with_hint(format!(
                        "a marker stands alone on its line: `+{candidate}` or `+{candidate}=<value>`; put prose on another line"
                    )),
            ),
            _ => Ok(None),
        };
    }
    if let Some((written, candidate)) = typo {
        return Err(Diagnostic::new(loc, format!("unknown marker `+{written}`"))
            .with_marker(body)
            .with_hint(format!("did you mean `+{candidate}`?")));
    }
    if let Some(rest) = name.strip_prefix(ITEMS_PREFIX) {
        let plain = format!("kubebuilder:validation:{rest}");
        if MARKERS.iter().any(|m| m.name == plain) {
            let forms: Vec<&str> = ITEMS_MARKERS
                .iter()
                .map(|n| &n["kubebuilder:validation:".len()..])
                .collect();
            return Err(
                Diagnostic::new(loc, format!("`+{plain}` has no `items:` form"))
                    .with_marker(body)
                    .with_hint(format!("`items:` forms: {}", forms.join(", "))),
            );
        }
    }
    Err(Diagnostic::warning(
        loc,
        format!("`+{name}` is not a kube-codegen marker; it is ignored"),
    )
    .with_marker(body)
    .with_hint(
        "markers of other tools are left alone, as controller-gen leaves markers it does not \
         know; see the marker reference in README.md for the ones kube-codegen uses",
    ))
}

fn level_name(level: Level) -> &'static str {
    match level {
        Level::Package => "a package (module inner doc comment `//!`)",
        Level::Type => "a struct or enum",
        Level::Field => "a field",
    }
}

/// Parse one doc line. Returns `Ok(None)` for ordinary prose.
pub fn parse_line(line: &str, level: Level, loc: Location) -> Result<Option<Marker>, Diagnostic> {
    let trimmed = line.trim();
    let Some(body) = trimmed.strip_prefix('+') else {
        return Ok(None);
    };
    // `+kubebuilder:default:=x` is an accepted spelling in controller-gen; normalise it.
    let body = body.replacen(":=", "=", 1);
    let body = body.trim_end();
    // `+kubebuilder:validation:items:<X>` is `<X>` applied to the items.
    let (plain, items) = match body.strip_prefix(ITEMS_PREFIX) {
        Some(rest) => (format!("kubebuilder:validation:{rest}"), true),
        None => (body.to_owned(), false),
    };
    let Some((spec, rest)) =
        lookup(&plain).filter(|(spec, _)| !items || ITEMS_MARKERS.contains(&spec.name))
    else {
        return unknown_marker(body, loc);
    };
    // Declarative validation tags may end in a `#` comment (gengo's codetags syntax).
    let rest = match (spec.name.starts_with("k8s:"), rest.find('#')) {
        (true, Some(at)) => rest[..at].trim_end(),
        _ => rest,
    };
    let err = |msg: String| Diagnostic::new(loc.clone(), msg).with_marker(body);
    if spec.name == "default"
        && rest
            .trim_start_matches('=')
            .trim_start()
            .starts_with("ref(")
    {
        return Err(Diagnostic::warning(
            loc.clone(),
            "`+default=ref(...)` is not evaluated, so it sets no default (controller-gen skips it too)",
        )
        .with_marker(body)
        .with_hint("write the value itself, e.g. `+default=\"Always\"`, or use `+kubebuilder:default=`"));
    }
    if !spec.levels.contains(&level) {
        let allowed: Vec<_> = spec.levels.iter().map(|l| level_name(*l)).collect();
        return Err(err(format!(
            "`+{}` is not allowed on {}",
            spec.name,
            level_name(level)
        ))
        .with_hint(format!("it belongs on {}", allowed.join(" or "))));
    }
    let mut marker = Marker {
        name: spec.name,
        value: None,
        args: vec![],
        text: body.to_owned(),
        items,
        loc: loc.clone(),
    };
    match spec.args {
        Args::Flag => {
            if !rest.is_empty() {
                return Err(err(format!("`+{}` takes no arguments", spec.name)));
            }
        }
        Args::Value | Args::OptionalBool => {
            if let Some(v) = rest.strip_prefix('=') {
                marker.value = Some(v.to_owned());
                // Checked here, so no reader can take a bad value for false.
                if spec.args == Args::OptionalBool {
                    marker.bool_value()?;
                }
                // The escape hatch is a JSON merge patch: an object, checked here once.
                if spec.name == "kube-codegen:schema"
                    && !matches!(
                        serde_json::from_str::<serde_json::Value>(v.trim()),
                        Ok(serde_json::Value::Object(_))
                    )
                {
                    return Err(err(format!(
                        "`+{}` takes one JSON object on one line",
                        spec.name
                    ))
                    .with_hint(
                        "e.g. `+kube-codegen:schema={\"format\":null}` removes the format",
                    ));
                }
            } else if rest.starts_with(':') {
                return Err(err(format!(
                    "`+{}` takes a value: `+{}=...`",
                    spec.name, spec.name
                )));
            } else if spec.args == Args::Value {
                return Err(err(format!(
                    "`+{}` needs a value: `+{}=...`",
                    spec.name, spec.name
                )));
            }
        }
        Args::Named(allowed) => {
            let names: Vec<&str> = allowed.iter().map(|a| a.trim_start_matches('!')).collect();
            if let Some(args) = rest.strip_prefix(':') {
                for part in split_top_level(args, ',') {
                    let part = part.trim();
                    if part.is_empty() {
                        continue;
                    }
                    let Some((key, value)) = part.split_once('=') else {
                        return Err(err(format!(
                            "argument `{part}` of `+{}` needs a value: `{part}=...`",
                            spec.name
                        )));
                    };
                    let key = key.trim();
                    let Some(canonical) = names.iter().find(|n| n.eq_ignore_ascii_case(key)) else {
                        let mut d = err(format!("unknown argument `{key}` for `+{}`", spec.name));
                        let close = names
                            .iter()
                            .map(|n| {
                                (
                                    strsim::jaro_winkler(&n.to_lowercase(), &key.to_lowercase()),
                                    *n,
                                )
                            })
                            .filter(|(s, _)| *s > 0.8)
                            .max_by(|a, b| a.0.total_cmp(&b.0));
                        d = match close {
                            Some((_, n)) => d.with_hint(format!(
                                "did you mean `{n}`? allowed: {}",
                                names.join(", ")
                            )),
                            None => d.with_hint(format!("allowed arguments: {}", names.join(", "))),
                        };
                        return Err(d);
                    };
                    let value = match unquote(value) {
                        Ok(v) => v,
                        // A list of quoted items (`"a=b";"c=d"`): split_list unquotes each.
                        Err(_) if split_top_level(value.trim(), ';').len() > 1 => {
                            value.trim().to_owned()
                        }
                        Err(e) => return Err(err(e)),
                    };
                    marker.args.push(((*canonical).to_owned(), value));
                }
            } else if rest.starts_with('=') {
                return Err(err(format!(
                    "`+{}` takes named arguments: `+{}:key=value,...`",
                    spec.name, spec.name
                ))
                .with_hint(format!("allowed arguments: {}", names.join(", "))));
            }
            for required in allowed.iter().filter_map(|a| a.strip_prefix('!')) {
                if marker.arg(required).is_none() {
                    return Err(err(format!(
                        "`+{}` is missing its `{required}` argument",
                        spec.name
                    ))
                    .with_hint(format!("arguments: {}", names.join(", "))));
                }
            }
        }
    }
    Ok(Some(marker))
}

/// A list argument that may hold the empty string: `groups=""` is the core group.
fn list_arg(m: &Marker, key: &str) -> Vec<String> {
    match m.arg(key) {
        None => vec![],
        Some(raw) if raw.trim().is_empty() => vec![String::new()],
        Some(raw) => {
            let raw = raw.trim();
            let inner = match raw.strip_prefix('{').and_then(|r| r.strip_suffix('}')) {
                Some(inner) => split_top_level(inner, ','),
                None => split_top_level(raw, ';'),
            };
            inner
                .into_iter()
                .map(|s| unquote(s).unwrap_or_else(|_| s.trim().to_owned()))
                .collect()
        }
    }
}

fn bool_arg(m: &Marker, key: &str) -> Result<bool, Diagnostic> {
    match m.arg(key).map(str::trim) {
        Some("true") => Ok(true),
        Some("false") | None => Ok(false),
        Some(other) => Err(m
            .error(format!("`{key}` takes true or false, not `{other}`"))
            .with_hint("allowed values: true, false")),
    }
}

fn int_arg(m: &Marker, key: &str) -> Result<Option<i32>, Diagnostic> {
    m.arg(key)
        .map(|v| {
            v.trim()
                .parse::<i32>()
                .map_err(|_| m.error(format!("`{key}` takes an integer, not `{v}`")))
        })
        .transpose()
}

/// One of a closed set of values, matched without regard to case as controller-gen does,
/// and returned in its canonical spelling.
fn choice_arg(m: &Marker, key: &str, allowed: &[&str]) -> Result<Option<String>, Diagnostic> {
    let Some(v) = m.arg(key) else {
        return Ok(None);
    };
    match allowed.iter().find(|a| a.eq_ignore_ascii_case(v.trim())) {
        Some(a) => Ok(Some((*a).to_owned())),
        None => Err(m
            .error(format!("invalid {key} `{v}`"))
            .with_hint(format!("allowed values: {}", allowed.join(", ")))),
    }
}

/// A `+kubebuilder:rbac` marker as controller-gen reads it (pkg/rbac `Rule`).
pub fn rbac_rule(m: &Marker) -> Result<crate::model::RbacRule, Diagnostic> {
    let rule = crate::model::RbacRule {
        groups: list_arg(m, "groups"),
        resources: list_arg(m, "resources"),
        resource_names: list_arg(m, "resourceNames"),
        verbs: list_arg(m, "verbs"),
        urls: list_arg(m, "urls"),
        namespace: m.arg("namespace").map(str::to_owned),
        role_name: m.arg("roleName").map(str::to_owned),
        loc: m.loc.clone(),
    };
    if rule.verbs.iter().all(|v| v.trim().is_empty()) {
        return Err(m
            .error("`+kubebuilder:rbac` grants no verbs")
            .with_hint("e.g. `verbs=get;list;watch`"));
    }
    if rule.resources.is_empty() && rule.urls.is_empty() {
        return Err(m
            .error("`+kubebuilder:rbac` names neither resources nor urls")
            .with_hint(
                "e.g. `groups=apps,resources=deployments,verbs=get` or `urls=/metrics,verbs=get`",
            ));
    }
    if !rule.urls.is_empty() && (!rule.resources.is_empty() || rule.namespace.is_some()) {
        return Err(m
            .error("`+kubebuilder:rbac` mixes non-resource `urls` with resources or a namespace")
            .with_hint("non-resource URLs are cluster-wide; write two markers"));
    }
    Ok(rule)
}

/// A `+kubebuilder:webhook` marker as controller-gen reads it (pkg/webhook `Config`), with the
/// checks controller-gen makes when it writes the v1 configuration.
pub fn webhook(m: &Marker) -> Result<crate::model::Webhook, Diagnostic> {
    use crate::model::WebhookKind;
    let kind = if bool_arg(m, "mutating")? {
        WebhookKind::Mutating
    } else {
        WebhookKind::Validating
    };
    let failure_policy = choice_arg(m, "failurePolicy", &["Fail", "Ignore"])?.unwrap_or_default();
    let side_effects = choice_arg(
        m,
        "sideEffects",
        &["None", "NoneOnDryRun", "Some", "Unknown"],
    )?;
    if side_effects.is_none() {
        return Err(m
            .error("`+kubebuilder:webhook` needs `sideEffects`")
            .with_hint("admissionregistration.k8s.io/v1 requires it: None or NoneOnDryRun"));
    }
    if let Some(s @ ("Some" | "Unknown")) = side_effects.as_deref() {
        return Err(m
            .error(format!(
                "sideEffects `{s}` is not allowed in admissionregistration.k8s.io/v1"
            ))
            .with_hint("use None or NoneOnDryRun"));
    }
    let timeout_seconds = int_arg(m, "timeoutSeconds")?;
    if let Some(t) = timeout_seconds
        && !(1..=30).contains(&t)
    {
        return Err(m
            .error(format!("timeoutSeconds {t} is out of range"))
            .with_hint("the API server takes 1 to 30 seconds"));
    }
    let verbs = list_arg(m, "verbs");
    const OPERATIONS: &[&str] = &["create", "update", "delete", "connect", "*"];
    for v in &verbs {
        if !OPERATIONS.iter().any(|o| o.eq_ignore_ascii_case(v)) {
            return Err(m
                .error(format!("invalid webhook verb `{v}`"))
                .with_hint(format!("allowed values: {}", OPERATIONS.join(", "))));
        }
    }
    let path = m.arg("path").map(str::to_owned);
    let url = m.arg("url").map(str::to_owned);
    if path.is_some() == url.is_some() {
        return Err(m
            .error("`+kubebuilder:webhook` needs exactly one of `path` and `url`")
            .with_hint("`path=/validate-...` for a webhook served by the service, `url=` for one outside the cluster"));
    }
    let webhook_versions = list_arg(m, "webhookVersions");
    if let Some(v) = webhook_versions.iter().find(|v| *v != "v1") {
        return Err(m
            .error(format!("unsupported webhookVersions `{v}`"))
            .with_hint("only v1 is supported"));
    }
    let admission_review_versions = list_arg(m, "admissionReviewVersions");
    if admission_review_versions
        .iter()
        .all(|v| v.trim().is_empty())
    {
        return Err(m
            .error("`admissionReviewVersions` is empty")
            .with_hint("e.g. `admissionReviewVersions=v1`"));
    }
    Ok(crate::model::Webhook {
        kind,
        name: m.arg("name").unwrap_or_default().to_owned(),
        failure_policy,
        match_policy: choice_arg(m, "matchPolicy", &["Exact", "Equivalent"])?,
        side_effects,
        timeout_seconds,
        groups: list_arg(m, "groups")
            .into_iter()
            // controller-gen lets `core` stand for the core group.
            .map(|g| if g == "core" { String::new() } else { g })
            .collect(),
        resources: list_arg(m, "resources"),
        verbs: verbs.iter().map(|v| v.to_lowercase()).collect(),
        versions: list_arg(m, "versions"),
        service_name: m.arg("serviceName").map(str::to_owned),
        service_namespace: m.arg("serviceNamespace").map(str::to_owned),
        path,
        url,
        service_port: int_arg(m, "servicePort")?,
        webhook_versions,
        admission_review_versions,
        reinvocation_policy: choice_arg(m, "reinvocationPolicy", &["Never", "IfNeeded"])?,
        patch: m.arg("patch").map(str::to_owned),
        loc: m.loc.clone(),
    })
}

/// A `+kubebuilder:webhookconfiguration` marker.
pub fn webhook_configuration(m: &Marker) -> Result<crate::model::WebhookConfiguration, Diagnostic> {
    Ok(crate::model::WebhookConfiguration {
        kind: if bool_arg(m, "mutating")? {
            crate::model::WebhookKind::Mutating
        } else {
            crate::model::WebhookKind::Validating
        },
        name: m.arg("name").map(str::to_owned),
        loc: m.loc.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loc() -> Location {
        Location::new("x.rs", 1, 1)
    }

    #[test]
    fn parses_value_named_and_flags() {
        let m = parse_line(
            " +kubebuilder:validation:Pattern=`^(echo).*`",
            Level::Field,
            loc(),
        )
        .unwrap()
        .unwrap();
        assert_eq!(m.name, "kubebuilder:validation:Pattern");
        assert_eq!(m.string_value().unwrap(), "^(echo).*");

        let m = parse_line(
            r#"+kubebuilder:printcolumn:name="Cmd",type=string,JSONPath=".spec.command",description="a, b""#,
            Level::Type,
            loc(),
        )
        .unwrap()
        .unwrap();
        assert_eq!(m.arg("name"), Some("Cmd"));
        assert_eq!(m.arg("JSONPath"), Some(".spec.command"));
        assert_eq!(m.arg("description"), Some("a, b"));

        let m = parse_line("+kubebuilder:subresource:status", Level::Type, loc())
            .unwrap()
            .unwrap();
        assert_eq!(m.name, "kubebuilder:subresource:status");
        let m = parse_line(
            "+kubebuilder:validation:XValidation:rule=\"self > 1\"",
            Level::Field,
            loc(),
        )
        .unwrap()
        .unwrap();
        assert_eq!(m.name, "kubebuilder:validation:XValidation");
        assert_eq!(m.arg("rule"), Some("self > 1"));
    }

    #[test]
    fn prose_and_foreign_markers_are_ignored() {
        assert!(
            parse_line("just text", Level::Field, loc())
                .unwrap()
                .is_none()
        );
        assert!(
            parse_line("+k8s:deepcopy-gen=package", Level::Package, loc())
                .unwrap()
                .is_none()
        );
        assert!(
            parse_line("+1 for this", Level::Field, loc())
                .unwrap()
                .is_none()
        );
    }

    #[test]
    fn typos_are_errors_with_suggestions() {
        let e = parse_line("+kubebuilder:validation:Minimun=1", Level::Field, loc()).unwrap_err();
        assert!(e.message.contains("unknown marker"), "{e:?}");
        assert_eq!(
            e.hint.as_deref(),
            Some("did you mean `+kubebuilder:validation:Minimum`?")
        );
        let e = parse_line(
            "+kubebuilder:printcolumn:name=a,typ=string,JSONPath=.x",
            Level::Type,
            loc(),
        )
        .unwrap_err();
        assert!(e.hint.unwrap().contains("did you mean `type`"));
    }

    #[test]
    fn level_and_required_args_are_checked() {
        let e = parse_line("+groupName=x.io", Level::Field, loc()).unwrap_err();
        assert!(e.message.contains("not allowed on a field"));
        let e = parse_line(
            "+kubebuilder:printcolumn:name=a,type=string",
            Level::Type,
            loc(),
        )
        .unwrap_err();
        assert!(e.message.contains("missing its `JSONPath`"));
    }

    fn any(raw: &str) -> serde_json::Value {
        parse_any(raw).unwrap_or_else(|e| panic!("{raw}: {e}"))
    }

    /// controller-gen v0.23's readings of these values, from its output on the same markers.
    #[test]
    fn go_literals_parse_as_controller_gen_does() {
        use serde_json::json;
        assert_eq!(any("{a,b}"), json!(["a", "b"]));
        assert_eq!(any("{}"), json!({}));
        assert_eq!(any("{80, 443}"), json!([80, 443]));
        assert_eq!(any("{a, 1}"), json!(["a", "1"]));
        assert_eq!(
            any("{{name: x, n: 1},{name: y}}"),
            json!([{"name": "x", "n": 1}, {"name": "y"}])
        );
        assert_eq!(
            any("{a: {b: 1, c: x;y}, d: true}"),
            json!({"a": {"b": 1, "c": ["x", "y"]}, "d": true})
        );
        assert_eq!(any(r#"{"policy": "delete"}"#), json!({"policy": "delete"}));
        assert_eq!(any("a;b;c"), json!(["a", "b", "c"]));
        assert_eq!(any("ClusterIP"), json!("ClusterIP"));
        assert_eq!(any("\"Cluster IP\""), json!("Cluster IP"));
        assert_eq!(any("`raw, text`"), json!("raw, text"));
        assert_eq!(any("'x'"), json!("x"));
        assert_eq!(any("true"), json!(true));
        assert_eq!(any("trueish"), json!("trueish"));
        assert_eq!(any("-3"), json!(-3));
        assert_eq!(any("2.0"), json!(2));
        assert_eq!(any("1.5"), json!(1.5));
        assert_eq!(any("100Mi"), json!("100Mi"));
        assert_eq!(any("2024-01-15"), json!("2024-01-15"));
        assert_eq!(any("null"), json!("null"));
        assert!(
            parse_any("{1, two}")
                .unwrap_err()
                .contains("expected an integer")
        );
        assert!(parse_any("{a: 1").is_err());
        assert!(parse_any("a, b").unwrap_err().contains("extra text"));
    }

    #[test]
    fn items_forms_name_the_plain_marker() {
        let m = parse_line(
            "+kubebuilder:validation:items:MaxLength=3",
            Level::Field,
            loc(),
        )
        .unwrap()
        .unwrap();
        assert_eq!(m.name, "kubebuilder:validation:MaxLength");
        assert!(m.items);
        assert_eq!(m.value.as_deref(), Some("3"));
        let m = parse_line(
            "+kubebuilder:validation:items:XValidation:rule=\"self != ''\"",
            Level::Type,
            loc(),
        )
        .unwrap()
        .unwrap();
        assert_eq!(m.name, "kubebuilder:validation:XValidation");
        assert!(m.items);
        let e = parse_line(
            "+kubebuilder:validation:items:Required",
            Level::Field,
            loc(),
        )
        .unwrap_err();
        assert!(
            e.is_error() && e.message.contains("has no `items:` form"),
            "{e}"
        );
    }

    #[test]
    fn declarative_markers_drop_trailing_comments() {
        let m = parse_line("+k8s:maxItems=16 # the cap", Level::Field, loc())
            .unwrap()
            .unwrap();
        assert_eq!(m.parse_value::<i64>("n").unwrap(), 16);
    }

    #[test]
    fn other_tools_markers_warn_and_typos_fail() {
        for foreign in [
            "+operator-sdk:csv:customresourcedefinitions:displayName=\"Thing\"",
            "+kubebuilder:scaffold:imports",
            "+kubebuilder:docs-gen:collapse=Advanced",
            "+patchStrategy=merge",
            "+k8s:unionMember",
            "+k8s:format=k8s-short-name",
            "+k8s:minItems=1",
            "+enum",
        ] {
            let d = parse_line(foreign, Level::Field, loc()).unwrap_err();
            assert!(!d.is_error(), "{foreign}: {d}");
            assert!(d.message.contains("not a kube-codegen marker"), "{d}");
        }
        for silent in [
            "+k8s:deepcopy-gen=package",
            "+k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object",
            "+k8s:openapi-gen=true",
            "+k8s:prerelease-lifecycle-gen:introduced=1.20",
            "+groupGoName=Things",
        ] {
            assert!(
                parse_line(silent, Level::Type, loc()).unwrap().is_none(),
                "{silent}"
            );
        }
        for (typo, meant) in [
            (
                "+kubebuilder:validation:MaxLenght=3",
                "kubebuilder:validation:MaxLength",
            ),
            (
                "+kubebuilder:validation:minimum=3",
                "kubebuilder:validation:Minimum",
            ),
            (
                "+kubebuilder:printcolum:name=a,type=string,JSONPath=.x",
                "kubebuilder:printcolumn",
            ),
            ("+k8s:requried", "k8s:required"),
            ("+optinal", "optional"),
            (
                "+kubebuilder:validation:items:MaxLenght=3",
                "kubebuilder:validation:items:MaxLength",
            ),
        ] {
            let d = parse_line(typo, Level::Field, loc()).unwrap_err();
            assert!(d.is_error(), "{typo}: {d}");
            assert_eq!(
                d.hint.as_deref(),
                Some(format!("did you mean `+{meant}`?").as_str()),
                "{typo}"
            );
        }
        let d = parse_line("+default=ref(DefaultPolicy)", Level::Field, loc()).unwrap_err();
        assert!(!d.is_error() && d.message.contains("not evaluated"), "{d}");
    }

    #[test]
    fn rbac_and_webhook_markers_read_as_controller_gen_does() {
        let m = parse_line(
            "+kubebuilder:rbac:groups=\"\",resources=pods;services,verbs=get;list,namespace=ns",
            Level::Package,
            loc(),
        )
        .unwrap()
        .unwrap();
        let r = rbac_rule(&m).unwrap();
        assert_eq!(r.groups, vec![""]);
        assert_eq!(r.resources, vec!["pods", "services"]);
        assert_eq!(r.verbs, vec!["get", "list"]);
        assert_eq!(r.namespace.as_deref(), Some("ns"));
        let m = parse_line(
            "+kubebuilder:webhook:path=/mutate,mutating=true,failurePolicy=ignore,sideEffects=none,groups=core;apps,resources=pods,verbs=Create;UPDATE,versions=v1,name=m.example.com,admissionReviewVersions=v1;v1beta1,timeoutSeconds=5",
            Level::Type,
            loc(),
        )
        .unwrap()
        .unwrap();
        let w = webhook(&m).unwrap();
        assert_eq!(w.kind, crate::model::WebhookKind::Mutating);
        assert_eq!(w.failure_policy, "Ignore");
        assert_eq!(w.side_effects.as_deref(), Some("None"));
        assert_eq!(w.groups, vec!["", "apps"]);
        assert_eq!(w.verbs, vec!["create", "update"]);
        assert_eq!(w.admission_review_versions, vec!["v1", "v1beta1"]);
        assert_eq!(w.timeout_seconds, Some(5));
        let base = "+kubebuilder:webhook:path=/v,mutating=false,failurePolicy=Fail,groups=a,\
                    resources=b,verbs=create,versions=v1,name=v.example.com,\
                    admissionReviewVersions=v1";
        for (bad, says) in [
            ("sideEffects=None,timeoutSeconds=60", "out of range"),
            ("sideEffects=Some", "not allowed"),
            ("sideEffects=None,matchPolicy=Fuzzy", "invalid matchPolicy"),
            (
                "sideEffects=None,webhookVersions=v1beta1",
                "unsupported webhookVersions",
            ),
            ("timeoutSeconds=5", "needs `sideEffects`"),
        ] {
            let m = parse_line(&format!("{base},{bad}"), Level::Package, loc())
                .unwrap()
                .unwrap();
            let e = webhook(&m).unwrap_err();
            assert!(e.message.contains(says), "{bad}: {e}");
        }
    }

    #[test]
    fn lists_split_both_ways() {
        assert_eq!(split_list("a;b;c"), vec!["a", "b", "c"]);
        assert_eq!(split_list("{a,\"b,c\"}"), vec!["a", "b,c"]);
    }
}
