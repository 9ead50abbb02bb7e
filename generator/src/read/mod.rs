//! Stage 1: read the crate's Rust files and split them into modules with their `use`
//! imports, doc comments and items. Nothing here knows about Kubernetes. Which files
//! make the crate, and at which module paths, is [`tree`]'s.

mod doc_comments;
mod fast;
mod tree;

pub use tree::{module_path_of, module_tree, normalize, rust_files};

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use syn::spanned::Spanned;

use crate::diagnostics::{Diagnostic, Diagnostics, Location};
use doc_comments::Shortened;

/// serde container attributes that change the wire shape.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SerdeContainer {
    pub rename_all: Option<String>,
    pub rename_all_fields: Option<String>,
    pub tag: Option<String>,
    pub content: Option<String>,
    pub untagged: bool,
    pub transparent: bool,
    pub deny_unknown_fields: bool,
    pub default: bool,
}

/// A `mod name;` declaration, whose module lives in another file.
#[derive(Clone, Debug)]
pub struct ModDecl {
    pub name: String,
    /// `#[path = "..."]`, as written.
    pub path_attr: Option<String>,
    pub visible: bool,
    /// Names of the inline modules around the declaration inside its file
    /// (`mod a { mod b; }` in `x.rs` loads `x/a/b.rs`).
    pub inline_parents: Vec<String>,
    /// Under `#[cfg(…)]` (or `#[cfg_attr(…)]`): rustc may leave it out.
    pub cfg: bool,
    /// The declaration's name, where it is written.
    pub loc: Location,
}

/// One doc comment line with where it starts.
#[derive(Clone, Debug)]
pub struct DocLine {
    pub text: String,
    pub loc: Location,
}

/// A Rust module: a file or an inline `mod x { ... }`.
#[derive(Debug)]
pub struct Module {
    /// Path inside the crate, without `crate`.
    pub path: Vec<String>,
    pub file: PathBuf,
    /// Declared `pub` or `pub(crate)` (a file module: by the `mod` declaration that loads
    /// it; a crate root, or a file no scanned declaration reaches, counts as visible).
    pub visible: bool,
    /// `mod name;` declarations: the files that hold child modules.
    pub file_children: Vec<ModDecl>,
    /// Names imported by `pub use` (or `pub(crate) use`): re-exports.
    pub reexports: std::collections::BTreeSet<String>,
    /// Absolute paths of `pub use path::*;` glob re-exports.
    pub reexported_globs: Vec<Vec<String>>,
    /// Inner doc lines (`//!`), where package markers live.
    pub inner_docs: Vec<DocLine>,
    /// The doc comments of the module's other items (functions, impl blocks and their
    /// items, traits, statics, consts, `mod` declarations): where Go teams write RBAC and
    /// webhook markers (on `Reconcile`, on a webhook type's methods), which controller-gen
    /// reads from any comment of a package. One entry per item that has a doc comment.
    pub other_docs: Vec<Vec<DocLine>>,
    /// `use` imports: local name -> absolute path (crate-local paths start with `crate`).
    pub uses: BTreeMap<String, Vec<String>>,
    /// Absolute paths of `use path::*;` imports.
    pub globs: Vec<Vec<String>>,
    pub structs: Vec<Item>,
    pub enums: Vec<Item>,
    /// `type Name = Target;` items.
    pub aliases: Vec<Item>,
    /// Names of child modules, to resolve `child::Type` paths.
    pub children: Vec<String>,
    /// Functions without arguments whose body is a literal (`"x".into()`, `Some(1)`,
    /// `true`), by name (`f`, `Type::f` for an associated one), with the JSON value they
    /// return: what `#[serde(default = "f")]` puts in kube-derive's schema.
    pub literal_fns: BTreeMap<String, serde_json::Value>,
}

impl Module {
    /// A module at `path` in `file` with nothing in it yet.
    fn empty(path: Vec<String>, file: &Path, visible: bool) -> Self {
        Module {
            inner_docs: vec![],
            other_docs: vec![],
            path,
            file: file.to_owned(),
            visible,
            file_children: vec![],
            reexports: Default::default(),
            reexported_globs: vec![],
            uses: BTreeMap::new(),
            globs: vec![],
            structs: vec![],
            enums: vec![],
            aliases: vec![],
            children: vec![],
            literal_fns: BTreeMap::new(),
        }
    }
}

/// A struct or enum, read out of its syntax tree: what resolution needs, locations
/// included. Plain data, unlike syn's trees (which cannot leave the thread that parsed
/// them, and whose spans resolve to lines only there), so files are parsed in parallel.
#[derive(Clone, Debug)]
pub struct Item {
    /// The identifier as written (a raw identifier keeps its `r#`).
    pub ident: String,
    pub loc: Location,
    pub docs: Vec<DocLine>,
    pub serde: SerdeContainer,
    /// The trait names of `#[derive(...)]`.
    pub derives: Vec<String>,
    /// serde's `into`, `from` and `try_from` container attributes: the type is
    /// serialized as (or deserialized from) another one.
    pub conversions: Vec<Conversion>,
    /// Has type parameters.
    pub generic: bool,
    /// `pub` or `pub(crate)`.
    pub visible: bool,
    pub body: Body,
    /// `#[kube(...)]`, `#[schemars(...)]` and the other derives' attributes that
    /// [`crate::resolve`] reads for kube-derive kinds.
    pub tool_attrs: Vec<ToolAttr>,
}

#[derive(Clone, Debug)]
pub enum Body {
    Struct(Fields),
    Enum(Vec<Variant>),
    /// `type Name = Target;`
    Alias(Ty),
}

/// Which serde conversion attribute.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConversionKind {
    Into,
    From,
    TryFrom,
}

impl ConversionKind {
    pub fn attr(self) -> &'static str {
        match self {
            ConversionKind::Into => "into",
            ConversionKind::From => "from",
            ConversionKind::TryFrom => "try_from",
        }
    }
}

/// `#[serde(into = "T")]` (or `from`, `try_from`).
#[derive(Clone, Debug)]
pub struct Conversion {
    pub kind: ConversionKind,
    /// Where the attribute's string is.
    pub loc: Location,
    /// The type named in the string; `None` if it does not parse as a type.
    pub ty: Option<Ty>,
}

#[derive(Clone, Debug)]
pub enum Fields {
    Named(Vec<Field>),
    Unnamed(Vec<Field>),
    Unit,
}

#[derive(Clone, Debug)]
pub struct Field {
    /// The identifier as written; `None` for a tuple field.
    pub ident: Option<String>,
    /// Where the identifier is (the type, for a tuple field).
    pub loc: Location,
    pub docs: Vec<DocLine>,
    pub serde: SerdeField,
    pub ty: Ty,
    pub visible: bool,
    pub tool_attrs: Vec<ToolAttr>,
}

#[derive(Clone, Debug)]
pub struct Variant {
    /// The identifier as written.
    pub ident: String,
    pub loc: Location,
    pub serde: SerdeField,
    /// The variant's own container attributes (`rename_all` for its named fields).
    pub container: SerdeContainer,
    pub docs: Vec<DocLine>,
    pub fields: Fields,
    pub tool_attrs: Vec<ToolAttr>,
}

/// A field's type.
#[derive(Clone, Debug)]
pub struct Ty {
    pub loc: Location,
    /// The type as written, with prettyplease's spacing, for messages: kept for
    /// unsupported types and for maps and their keys (map keys must be strings).
    pub text: Option<String>,
    pub kind: TyKind,
}

#[derive(Clone, Debug)]
pub enum TyKind {
    /// A path, `r#` removed from its segments, with the type arguments of its last segment.
    Path {
        leading_colon: bool,
        segments: Vec<String>,
        args: Vec<Ty>,
    },
    /// `[T; N]`; `len` is `None` when N is not an integer literal.
    Array { elem: Box<Ty>, len: Option<usize> },
    /// Anything else (a reference, tuple, `<T as Trait>::X`...): not an API type.
    Other,
}

impl Ty {
    /// The type as written, for a message.
    pub fn text(&self) -> String {
        match (&self.text, &self.kind) {
            (Some(t), _) => t.clone(),
            (None, TyKind::Path { segments, .. }) => segments.join("::"),
            (None, TyKind::Array { elem, len }) => match len {
                Some(n) => format!("[{}; {n}]", elem.text()),
                None => format!("[{}; _]", elem.text()),
            },
            (None, TyKind::Other) => String::new(),
        }
    }
}

/// Doc comment lines of some attributes, each with its location. A `///` comment's span
/// starts at the slashes, so the text begins three columns later.
fn doc_lines<'a>(
    file: &Path,
    docs: Option<&Shortened>,
    attrs: impl IntoIterator<Item = &'a syn::Attribute>,
) -> Vec<DocLine> {
    let mut out = Vec::new();
    // Each comment's text, in one buffer for them all: each line is copied out of it.
    let mut value = String::new();
    for attr in attrs.into_iter().filter(|a| a.path().is_ident("doc")) {
        let syn::Meta::NameValue(nv) = &attr.meta else {
            continue;
        };
        let syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(s),
            ..
        }) = &nv.value
        else {
            continue;
        };
        // The `#` starts the attribute (a `///` comment's tokens all carry the comment's
        // span): `attr.span()` would print the whole attribute to tokens to join their spans.
        // Its line and column as `Location::of_span` counts them, without a `Location`
        // (and its copy of the path) per comment.
        let start = attr.pound_token.span.start();
        let (start_line, start_column) = (start.line.max(1), start.column + 1);
        match docs.and_then(|d| d.text(start.line)) {
            Some(text) => {
                debug_assert!(s.token().to_string() == "\"\"", "a shortened `///` comment");
                value.clear();
                value.push_str(text);
            }
            None => str_value(s, &mut value),
        }
        push_doc_lines(&mut out, file, (start_line, start_column), &value);
    }
    out
}

/// The lines of one doc comment (or `#[doc = "…"]`) whose `///` (or `#`) is at `start`
/// (1-based line and column): a `///` comment's text begins three columns after it.
fn push_doc_lines(out: &mut Vec<DocLine>, file: &Path, start: (usize, usize), value: &str) {
    let (start_line, start_column) = start;
    for (i, line) in value.split('\n').enumerate() {
        let lead = line.len() - line.trim_start().len();
        let column = if i == 0 {
            start_column + 3 + lead
        } else {
            lead + 1
        };
        out.push(DocLine {
            text: line.to_owned(),
            loc: Location::new(file, start_line + i, column),
        });
    }
}

/// Some line of a doc comment starts (after spaces) with `+`: it may hold a marker. The
/// doc comments of items other than types are kept only then (`Module::other_docs`).
fn may_hold_markers(lines: &[DocLine]) -> bool {
    lines.iter().any(|l| l.text.trim_start().starts_with('+'))
}

/// A string literal's value, into `buf` (its old text replaced). A literal without escapes
/// or carriage returns (every `///` comment without a `"` or `\\`, most
/// `#[serde(rename = "…")]`) is the text between its quotes; syn's `LitStr::value` decodes
/// it char by char, about 2,000 instructions a doc line, 3% of a CRD run. The literal's
/// source text is printed into `buf` and cut to the quotes' inside: no string of its own
/// per literal.
fn str_value(lit: &syn::LitStr, buf: &mut String) {
    use std::fmt::Write as _;
    buf.clear();
    write!(buf, "{}", lit.token()).expect("a String takes any text");
    match plain_str(buf).map(str::len) {
        Some(len) => {
            buf.truncate(1 + len);
            buf.remove(0);
        }
        None => *buf = lit.value(),
    }
}

/// The text between the quotes of a string literal's source text `repr`, when that is its
/// value: a plain `"…"` (not raw, no suffix) without `\\` or a carriage return, which are
/// all a string literal decodes.
fn plain_str(repr: &str) -> Option<&str> {
    let inner = repr.strip_prefix('"')?.strip_suffix('"')?;
    (!inner.contains(['\\', '\r'])).then_some(inner)
}

/// Prose of a doc comment: marker lines removed, one leading space stripped, runs of
/// blank lines reduced to one (as go/ast's `CommentGroup.Text` does, so a marker between
/// two paragraphs leaves one break, as in controller-gen's description), surrounding blank
/// lines dropped (a first line's leading spaces stay, as controller-gen keeps them).
pub fn doc_text(lines: &[DocLine]) -> String {
    let mut kept: Vec<&str> = vec![];
    for t in lines
        .iter()
        .map(|l| l.text.strip_prefix(' ').unwrap_or(&l.text))
        .filter(|t| !t.trim_start().starts_with('+'))
        .map(str::trim_end)
    {
        if !(t.is_empty() && kept.last().is_some_and(|l| l.is_empty())) {
            kept.push(t);
        }
    }
    // Blank lines around go; spaces that start the first line stay, as in Go's doc text.
    while kept.first().is_some_and(|l| l.trim().is_empty()) {
        kept.remove(0);
    }
    while kept.last().is_some_and(|l| l.trim().is_empty()) {
        kept.pop();
    }
    kept.join("\n")
}

/// A description as controller-gen reads a doc comment (markers/zip.go, after Kubernetes'
/// `fmtRawDoc`): outside fenced code blocks, a line starting with `TODO` is left out and one
/// starting with `---` ends the description, so notes for maintainers stay out of the CRD.
pub fn doc_conventions(doc: &str) -> std::borrow::Cow<'_, str> {
    let mut in_code = false;
    let mut kept = Vec::new();
    let mut changed = false;
    for line in doc.split('\n') {
        if line.starts_with("```") || line.starts_with("~~~") {
            in_code = !in_code;
        }
        if !in_code && line.starts_with("TODO") {
            changed = true;
            continue;
        }
        if !in_code && line.starts_with("---") {
            changed = true;
            break;
        }
        kept.push(line);
    }
    if changed {
        std::borrow::Cow::Owned(kept.join("\n"))
    } else {
        std::borrow::Cow::Borrowed(doc)
    }
}

/// How deep a file's tokens may nest, counting what `syn` recurses on: brackets of any
/// kind, generic arguments (`Vec<Vec<…>>`), and the tokens that start a nested
/// expression, type or pattern without brackets (`- - x`, `|x| |y| x`, `return return`,
/// `&&T`, `*const *const T`, `fn() -> fn() -> T`). `syn` parses by recursion, and its
/// stack (see `parallel::STACK_SIZE`) is sized for this; a file that nests deeper is
/// refused before it is parsed. API types nest a few levels: resolve refuses types nested
/// deeper than `resolve::MAX_TYPE_NESTING` below a kind, with a located error of its own.
pub const MAX_SOURCE_NESTING: usize = 256;

/// Keywords that start a nested expression, type or pattern.
const NESTING_KEYWORDS: &[&str] = &[
    "async", "become", "box", "break", "const", "dyn", "fn", "impl", "let", "move", "mut", "ref",
    "return", "static", "yield",
];

/// The text of `ident` when it is short enough to be one of [`NESTING_KEYWORDS`], written
/// to a buffer on the stack rather than to a `String` per identifier.
fn keyword_text(ident: &proc_macro2::Ident) -> Option<KeywordText> {
    use std::fmt::Write;
    let mut text = KeywordText::default();
    write!(text, "{ident}").ok()?;
    Some(text)
}

/// Up to 8 bytes of text (the longest nesting keyword has 6); writing more fails.
#[derive(Default)]
struct KeywordText {
    bytes: [u8; 8],
    len: usize,
}

impl std::fmt::Write for KeywordText {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let end = self.len + s.len();
        self.bytes
            .get_mut(self.len..end)
            .ok_or(std::fmt::Error)?
            .copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

impl KeywordText {
    /// The text, as a `str` when it is ASCII (every keyword is); checking that is cheaper
    /// than validating UTF-8, and a non-ASCII identifier is no keyword anyway.
    fn as_str(&self) -> &str {
        let bytes = &self.bytes[..self.len];
        if bytes.is_ascii() {
            std::str::from_utf8(bytes).unwrap_or_default()
        } else {
            ""
        }
    }
}

/// The first place `tokens` nest deeper than [`MAX_SOURCE_NESTING`], as an error; `None`
/// when they do not. They are walked with a stack of our own: lexing (`proc_macro2`'s)
/// and this walk do not recurse.
///
/// Per open bracket the walk counts the `<` open in it and the prefix tokens (`&`, `*`,
/// `-`, `!`, `|`, `@`, [`NESTING_KEYWORDS`]) since the last place `syn` has returned from
/// what they opened: a `,` (prefixes), and `;`, `=>` or a `{…}` block (both). A `<` or an
/// operator that compares or combines counts as well: an over-count, never an under-count,
/// of what syn recurses on.
fn too_deep(
    file: &Path,
    tokens: &proc_macro2::TokenStream,
    mut docs: Option<&mut Shortened>,
) -> Option<Diagnostic> {
    use proc_macro2::{Delimiter, Spacing, TokenTree};
    struct Open {
        tokens: proc_macro2::token_stream::IntoIter,
        angles: usize,
        prefixes: usize,
    }
    // A token stream's clone shares its tokens.
    let mut stack = vec![Open {
        tokens: tokens.clone().into_iter(),
        angles: 0,
        prefixes: 0,
    }];
    // The previous token was `=` or `-` joined to what follows: the `>` of `=>` or `->`
    // closes no generic argument, and `=>` ends a match arm's pattern.
    let mut arrow: Option<char> = None;
    loop {
        let open = stack.last_mut()?;
        let Some(token) = open.tokens.next() else {
            stack.pop();
            continue;
        };
        let after_arrow = arrow.take();
        let span = token.span();
        match token {
            TokenTree::Group(g) => {
                if g.delimiter() == Delimiter::Brace {
                    (open.angles, open.prefixes) = (0, 0);
                }
                stack.push(Open {
                    tokens: g.stream().into_iter(),
                    angles: 0,
                    prefixes: 0,
                });
            }
            TokenTree::Punct(p) => match (p.as_char(), after_arrow) {
                ('<', _) => open.angles += 1,
                ('>', Some('=')) | (';', _) => (open.angles, open.prefixes) = (0, 0),
                ('>', Some(_)) => {}
                ('>', None) => open.angles = open.angles.saturating_sub(1),
                (',', _) => open.prefixes = 0,
                (c @ ('=' | '-'), _) if p.spacing() == Spacing::Joint => {
                    arrow = Some(c);
                    open.prefixes += usize::from(c == '-');
                }
                ('&' | '*' | '-' | '!' | '|' | '@', _) => open.prefixes += 1,
                // This walk visits every token in source order: it checks the shortened
                // `///` lines for `doc_comments` on the way.
                ('#', _) => {
                    if let Some(docs) = docs.as_deref_mut() {
                        docs.seen(span);
                    }
                    continue;
                }
                _ => continue,
            },
            TokenTree::Ident(i) => {
                // The text once, then a string match: comparing the identifier with each
                // keyword in turn cost about 2% of a CRD run's instructions. The text goes
                // to a buffer on the stack, not to a `String` per identifier.
                if !keyword_text(&i).is_some_and(|t| NESTING_KEYWORDS.contains(&t.as_str())) {
                    continue;
                }
                open.prefixes += 1;
            }
            TokenTree::Literal(_) => continue,
        }
        let depth: usize = stack
            .iter()
            .map(|o| 1 + o.angles + o.prefixes)
            .sum::<usize>()
            - 1;
        if depth > MAX_SOURCE_NESTING {
            return Some(
                Diagnostic::new(
                    Location::of_span(file, span),
                    format!("the code nests more than {MAX_SOURCE_NESTING} levels deep here"),
                )
                .with_hint("kube-codegen parses a file only when it nests less deeply: brackets, generic arguments and what starts an expression or type inside another (`&`, `-`, `|x|`, `return`, `fn() ->`) each count; an API type nests a few levels"),
            );
        }
    }
}

/// Read and parse one file into its modules; `path` is the file's module path and
/// `visible` whether its declaration makes it reachable from outside its parent.
pub fn parse_file(
    path: Vec<String>,
    visible: bool,
    file: &Path,
    diags: &mut Diagnostics,
) -> Vec<Module> {
    let bytes = match std::fs::read(file) {
        Ok(b) => b,
        Err(e) => {
            diags.push(Diagnostic::new(
                Location::new(file, 1, 1),
                format!("cannot read file: {e}"),
            ));
            return vec![];
        }
    };
    let text = match crate::utf8::input_text(file, bytes, crate::utf8::InputLanguage::Rust) {
        Ok(t) => t,
        Err(d) => {
            diags.push(d);
            return vec![];
        }
    };
    let body = rust_body(&text);
    // Files of type declarations only are read without syn; anything else goes to it.
    if let Some(modules) = fast::read(path.clone(), visible, file, body) {
        return modules;
    }
    read_body(path, visible, file, body, true, diags)
}

/// A file's text without what `syn::parse_file` sets apart before it parses: a byte-order
/// mark and a shebang line (`#!/usr/bin/env …`, not `#![attr]`) are no Rust. The
/// shebang's newline stays, so lines keep their numbers.
fn rust_body(text: &str) -> &str {
    let body = text.strip_prefix('\u{feff}').unwrap_or(text);
    match body.strip_prefix("#!") {
        Some(rest) if !rest.trim_start().starts_with('[') => {
            &body[body.find('\n').unwrap_or(body.len())..]
        }
        _ => body,
    }
}

/// [`parse_file`] after the file's text is read; `shorten` lexes `///` comments without
/// their text (tests compare with the plain path).
fn read_body(
    path: Vec<String>,
    visible: bool,
    file: &Path,
    body: &str,
    shorten: bool,
    diags: &mut Diagnostics,
) -> Vec<Module> {
    // The `///` comments lexed without their text (see `doc_comments`), when the copy
    // checks out; anything else (no such comment, a failed check, an error) is read from
    // the original text, which gives any error its message.
    let shortened = Shortened::new(body)
        .filter(|_| shorten)
        .and_then(|(text, mut docs)| {
            let tokens = text.parse::<proc_macro2::TokenStream>().ok()?;
            if too_deep(file, &tokens, Some(&mut docs)).is_some() || !docs.all_seen() {
                return None;
            }
            Some((syn::parse2::<syn::File>(tokens).ok()?, docs))
        });
    let (parsed, docs) = match shortened {
        Some((f, docs)) => (Ok(Ok(f)), Some(docs)),
        None => (
            body.parse::<proc_macro2::TokenStream>()
                .map_err(syn::Error::from)
                .and_then(|tokens| match too_deep(file, &tokens, None) {
                    Some(d) => Ok(Err(d)),
                    None => syn::parse2::<syn::File>(tokens).map(Ok),
                }),
            None,
        ),
    };
    let parsed = match parsed {
        Ok(Ok(f)) => f,
        Ok(Err(too_deep)) => {
            diags.push(too_deep);
            return vec![];
        }
        Err(e) => {
            diags.push(
                Diagnostic::new(
                    Location::of_span(file, e.span()),
                    format!("cannot parse Rust: {e}"),
                )
                .with_hint("the file must compile; run `cargo check` for details"),
            );
            return vec![];
        }
    };
    let mut out = Vec::new();
    collect_module(
        file,
        docs.as_ref(),
        ModuleAt {
            path,
            visible,
            inline_parents: vec![],
        },
        &parsed.attrs,
        parsed.items,
        &mut out,
    );
    out
}

/// Where a module sits: its path, declaration and the inline modules around it in its file.
struct ModuleAt {
    path: Vec<String>,
    visible: bool,
    inline_parents: Vec<String>,
}

fn collect_module(
    file: &Path,
    docs: Option<&Shortened>,
    at: ModuleAt,
    attrs: &[syn::Attribute],
    items: Vec<syn::Item>,
    out: &mut Vec<Module>,
) {
    let ModuleAt {
        path,
        visible,
        inline_parents,
    } = at;
    let inner = attrs
        .iter()
        .filter(|a| matches!(a.style, syn::AttrStyle::Inner(_)));
    let mut module = Module::empty(path.clone(), file, visible);
    module.inner_docs = doc_lines(file, docs, inner);
    let mut nested = Vec::new();
    // The doc comments of items that are not types, read as each item goes by (syn's tree
    // is built without `Clone`: the install compiles less).
    let mut other_docs: Vec<Vec<DocLine>> = Vec::new();
    let lines = |attrs: &[syn::Attribute]| doc_lines(file, docs, attrs);
    let mut structs = Vec::new();
    let mut enums = Vec::new();
    let mut aliases = Vec::new();
    for item in items {
        match item {
            syn::Item::Struct(s) => structs.push(s),
            syn::Item::Enum(e) => enums.push(e),
            syn::Item::Type(t) => aliases.push(t),
            syn::Item::Fn(f) => {
                other_docs.push(lines(&f.attrs));
                if let Some(v) = literal_fn(&f.sig, &f.block) {
                    module.literal_fns.insert(f.sig.ident.to_string(), v);
                }
            }
            syn::Item::Impl(i) => {
                other_docs.push(lines(&i.attrs));
                for item in &i.items {
                    match item {
                        syn::ImplItem::Fn(f) => other_docs.push(lines(&f.attrs)),
                        syn::ImplItem::Const(c) => other_docs.push(lines(&c.attrs)),
                        syn::ImplItem::Type(t) => other_docs.push(lines(&t.attrs)),
                        _ => {}
                    }
                }
                if i.trait_.is_none()
                    && let syn::Type::Path(tp) = &*i.self_ty
                    && let Some(last) = tp.path.segments.last()
                {
                    for item in &i.items {
                        if let syn::ImplItem::Fn(f) = item
                            && let Some(v) = literal_fn(&f.sig, &f.block)
                        {
                            module
                                .literal_fns
                                .insert(format!("{}::{}", last.ident, f.sig.ident), v);
                        }
                    }
                }
            }
            syn::Item::Use(u) => {
                let export = is_visible(&u.vis);
                collect_use(&path, &u.tree, vec![], export, &mut module)
            }
            syn::Item::Trait(t) => other_docs.push(lines(&t.attrs)),
            syn::Item::Static(st) => other_docs.push(lines(&st.attrs)),
            syn::Item::Const(c) => other_docs.push(lines(&c.attrs)),
            syn::Item::Mod(m) => {
                other_docs.push(doc_lines(
                    file,
                    docs,
                    m.attrs
                        .iter()
                        .filter(|a| matches!(a.style, syn::AttrStyle::Outer)),
                ));
                // As written (`r#type` stays raw): generated code spells module paths with it.
                let name = m.ident.to_string();
                module.children.push(name.clone());
                let mod_visible = is_visible(&m.vis);
                if let Some((_, items)) = m.content {
                    let mut child = path.clone();
                    child.push(name.clone());
                    let mut child_inline = inline_parents.clone();
                    child_inline.push(name);
                    nested.push((
                        ModuleAt {
                            path: child,
                            visible: mod_visible,
                            inline_parents: child_inline,
                        },
                        m.attrs,
                        items,
                    ));
                } else {
                    module.file_children.push(ModDecl {
                        name,
                        path_attr: path_attr(&m.attrs),
                        visible: mod_visible,
                        inline_parents: inline_parents.clone(),
                        cfg: m
                            .attrs
                            .iter()
                            .any(|a| a.path().is_ident("cfg") || a.path().is_ident("cfg_attr")),
                        loc: Location::of_span(file, m.ident.span()),
                    });
                }
            }
            _ => {}
        }
    }
    module.other_docs = other_docs
        .into_iter()
        // Only comments that may hold a marker are kept (most have none).
        .filter(|lines| may_hold_markers(lines))
        .collect();
    // Items are read into plain data once the module is complete (locations need its file).
    module.structs = structs
        .iter()
        .map(|s| {
            let fields = fields_of(&module, docs, &s.fields);
            item_of(
                &module,
                docs,
                &s.attrs,
                &s.ident,
                &s.generics,
                &s.vis,
                Body::Struct(fields),
            )
        })
        .collect();
    module.enums = enums
        .iter()
        .map(|e| {
            let variants = e
                .variants
                .iter()
                .map(|v| variant_of(&module, docs, v))
                .collect();
            item_of(
                &module,
                docs,
                &e.attrs,
                &e.ident,
                &e.generics,
                &e.vis,
                Body::Enum(variants),
            )
        })
        .collect();
    module.aliases = aliases
        .iter()
        .map(|a| {
            let target = ty_of(&module, &a.ty);
            item_of(
                &module,
                docs,
                &a.attrs,
                &a.ident,
                &a.generics,
                &a.vis,
                Body::Alias(target),
            )
        })
        .collect();
    out.push(module);
    for (at, attrs, items) in nested {
        collect_module(file, docs, at, &attrs, items, out);
    }
}

/// The value of a `#[path = "..."]` attribute.
fn path_attr(attrs: &[syn::Attribute]) -> Option<String> {
    attrs.iter().find_map(|a| match &a.meta {
        syn::Meta::NameValue(nv) if nv.path.is_ident("path") => match &nv.value {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) => Some(s.value()),
            _ => None,
        },
        _ => None,
    })
}

fn item_of(
    module: &Module,
    docs: Option<&Shortened>,
    attrs: &[syn::Attribute],
    ident: &syn::Ident,
    generics: &syn::Generics,
    vis: &syn::Visibility,
    body: Body,
) -> Item {
    Item {
        ident: ident.to_string(),
        loc: Location::of_span(&module.file, ident.span()),
        docs: doc_lines(&module.file, docs, attrs),
        serde: serde_container(attrs),
        derives: derives(attrs),
        conversions: conversions(module, attrs),
        generic: generics.type_params().next().is_some(),
        visible: is_visible(vis),
        body,
        tool_attrs: tool_attrs(&module.file, attrs),
    }
}

fn fields_of(module: &Module, docs: Option<&Shortened>, fields: &syn::Fields) -> Fields {
    let each = |f: &syn::Field| {
        let ty = ty_of(module, &f.ty);
        let serde = serde_field_attrs(&f.attrs);
        let ident = f.ident.as_ref().map(|i| i.to_string());
        Field {
            loc: f
                .ident
                .as_ref()
                .map(|i| Location::of_span(&module.file, i.span()))
                .unwrap_or_else(|| ty.loc.clone()),
            ident,
            docs: doc_lines(&module.file, docs, &f.attrs),
            serde,
            ty,
            visible: is_visible(&f.vis),
            tool_attrs: tool_attrs(&module.file, &f.attrs),
        }
    };
    match fields {
        syn::Fields::Named(named) => Fields::Named(named.named.iter().map(each).collect()),
        syn::Fields::Unnamed(u) => Fields::Unnamed(u.unnamed.iter().map(each).collect()),
        syn::Fields::Unit => Fields::Unit,
    }
}

fn variant_of(module: &Module, docs: Option<&Shortened>, v: &syn::Variant) -> Variant {
    Variant {
        ident: v.ident.to_string(),
        loc: Location::of_span(&module.file, v.ident.span()),
        serde: serde_field_attrs(&v.attrs),
        container: serde_container(&v.attrs),
        docs: doc_lines(&module.file, docs, &v.attrs),
        fields: fields_of(module, docs, &v.fields),
        tool_attrs: tool_attrs(&module.file, &v.attrs),
    }
}

fn ty_of(module: &Module, ty: &syn::Type) -> Ty {
    let loc = Location::of_span(&module.file, ty_start(ty));
    let tp = match ty {
        syn::Type::Path(tp) if tp.qself.is_none() => tp,
        syn::Type::Array(a) => {
            let len = match &a.len {
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Int(n),
                    ..
                }) => n.base10_parse::<usize>().ok(),
                _ => None,
            };
            return Ty {
                loc,
                text: Some(type_text(ty)),
                kind: TyKind::Array {
                    elem: Box::new(ty_of(module, &a.elem)),
                    len,
                },
            };
        }
        syn::Type::Paren(p) => return ty_of(module, &p.elem),
        _ => {
            return Ty {
                loc,
                text: Some(type_text(ty)),
                kind: TyKind::Other,
            };
        }
    };
    let segments: Vec<String> = tp
        .path
        .segments
        .iter()
        .map(|s| ident_str(&s.ident))
        .collect();
    let last = tp.path.segments.last().expect("paths have a segment");
    let arg_types: Vec<&syn::Type> = match &last.arguments {
        syn::PathArguments::AngleBracketed(a) => a
            .args
            .iter()
            .filter_map(|g| match g {
                syn::GenericArgument::Type(t) => Some(t),
                _ => None,
            })
            .collect(),
        _ => vec![],
    };
    let mut args: Vec<Ty> = arg_types.iter().map(|t| ty_of(module, t)).collect();
    let leading_colon = tp.path.leading_colon.is_some();
    // Messages about a map's key quote the map and the key as written. Which paths are
    // maps is resolution's business (one path resolver, in `resolve`); here every type with
    // two type arguments keeps its text, which covers every map without knowing the names.
    let mut text = None;
    if arg_types.len() == 2 {
        text = Some(type_text(ty));
        if let (Some(key), Some(key_ty)) = (args.first_mut(), arg_types.first()) {
            key.text.get_or_insert_with(|| type_text(key_ty));
        }
    }
    Ty {
        loc,
        text,
        kind: TyKind::Path {
            leading_colon,
            segments,
            args,
        },
    }
}

/// The attributes of other derives that kube-derive input carries: kube-derive's own
/// `#[kube(...)]`, schemars' `#[schemars(...)]` (and the `#[validate(...)]`/`#[garde(...)]`
/// it reads too) and kube's `#[x_kube(...)]`.
pub const TOOL_ATTRS: &[&str] = &["kube", "schemars", "validate", "garde", "x_kube"];

/// One such attribute as plain data: its arguments as written, each located, so resolve
/// can judge every one (and warn about those it does not understand).
#[derive(Clone, Debug)]
pub struct ToolAttr {
    /// `kube`, `schemars`, ...
    pub tool: String,
    pub loc: Location,
    pub args: Vec<AttrArg>,
    /// Where and why the arguments did not parse as `key`, `key = value` or `key(...)`.
    pub unparsed: Option<(Location, String)>,
}

/// `key`, `key = value` or `key(args...)` inside an attribute.
#[derive(Clone, Debug, PartialEq)]
pub struct AttrArg {
    /// The key's path as written (`type_`, `crate::x`).
    pub key: String,
    pub loc: Location,
    pub value: AttrValue,
}

#[derive(Clone, Debug, PartialEq)]
pub enum AttrValue {
    /// `key` alone.
    Flag,
    Str(String),
    Bool(bool),
    /// An integer or float literal, possibly negated, as written (`-1`, `2.5`).
    Number(String),
    /// Any other expression, as its tokens' text (`ListMerge::Set`, `Rule::new(...)`).
    Expr(String),
    /// `key(...)`: nested arguments; string literals in it become arguments keyed `""`.
    List(Vec<AttrArg>),
}

fn tool_attrs(file: &Path, attrs: &[syn::Attribute]) -> Vec<ToolAttr> {
    let mut out = vec![];
    for attr in attrs {
        let Some(tool) = TOOL_ATTRS.iter().find(|t| attr.path().is_ident(t)) else {
            continue;
        };
        let mut args = vec![];
        let unparsed = match &attr.meta {
            syn::Meta::List(list) => list
                .parse_args_with(|input: syn::parse::ParseStream| attr_args(file, input))
                .map(|a| args = a)
                .err()
                .map(|e| (Location::of_span(file, e.span()), e.to_string())),
            _ => Some((
                Location::of_span(file, attr.span()),
                format!("expected `#[{tool}(...)]`"),
            )),
        };
        out.push(ToolAttr {
            tool: (*tool).to_owned(),
            loc: Location::of_span(file, attr.span()),
            args,
            unparsed,
        });
    }
    out
}

/// A comma-separated list of `key`, `key = expr`, `key(...)` or a bare literal (darling's
/// `annotation("k", "v")`).
fn attr_args(file: &Path, input: syn::parse::ParseStream) -> syn::Result<Vec<AttrArg>> {
    let mut out = vec![];
    while !input.is_empty() {
        if input.peek(syn::Lit) {
            let lit: syn::Lit = input.parse()?;
            out.push(AttrArg {
                key: String::new(),
                loc: Location::of_span(file, lit.span()),
                value: lit_value(&syn::Expr::Lit(syn::ExprLit { attrs: vec![], lit })),
            });
        } else {
            let path = input.call(syn::Path::parse_mod_style)?;
            let key = path
                .segments
                .iter()
                .map(|s| s.ident.to_string())
                .collect::<Vec<_>>()
                .join("::");
            let loc = Location::of_span(file, path.span());
            let value = if input.peek(syn::Token![=]) {
                let _: syn::Token![=] = input.parse()?;
                let expr: syn::Expr = input.parse()?;
                lit_value(&expr)
            } else if input.peek(syn::token::Paren) {
                let content;
                syn::parenthesized!(content in input);
                AttrValue::List(attr_args(file, &content)?)
            } else {
                AttrValue::Flag
            };
            out.push(AttrArg { key, loc, value });
        }
        if input.is_empty() {
            break;
        }
        let _: syn::Token![,] = input.parse()?;
    }
    Ok(out)
}

fn lit_value(expr: &syn::Expr) -> AttrValue {
    match expr {
        syn::Expr::Lit(syn::ExprLit { lit, .. }) => match lit {
            syn::Lit::Str(s) => AttrValue::Str(s.value()),
            syn::Lit::Bool(b) => AttrValue::Bool(b.value),
            syn::Lit::Int(i) => AttrValue::Number(i.base10_digits().to_owned()),
            syn::Lit::Float(f) => AttrValue::Number(f.base10_digits().to_owned()),
            _ => AttrValue::Expr(quote::ToTokens::to_token_stream(expr).to_string()),
        },
        syn::Expr::Unary(syn::ExprUnary {
            op: syn::UnOp::Neg(_),
            expr: inner,
            ..
        }) => match lit_value(inner) {
            AttrValue::Number(n) => AttrValue::Number(format!("-{n}")),
            _ => AttrValue::Expr(quote::ToTokens::to_token_stream(expr).to_string()),
        },
        _ => AttrValue::Expr(quote::ToTokens::to_token_stream(expr).to_string()),
    }
}

/// Field-level serde attributes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SerdeField {
    pub rename: Option<String>,
    pub flatten: bool,
    pub skip: bool,
    pub default: bool,
    pub skip_serializing_if: bool,
    pub untagged: bool,
    /// The function of `default = "path"`: its value is known only when it runs.
    pub default_fn: Option<String>,
    /// `with`, `serialize_with` or `deserialize_with`: custom code decides the wire form.
    pub with: Option<&'static str>,
}

/// Skip the value of a serde attribute we do not care about.
fn skip_meta_value(meta: &syn::meta::ParseNestedMeta) -> syn::Result<()> {
    if meta.input.peek(syn::Token![=]) {
        let _: syn::Expr = meta.value()?.parse()?;
    } else if meta.input.peek(syn::token::Paren) {
        meta.parse_nested_meta(|inner| skip_meta_value(&inner))?;
    }
    Ok(())
}

/// `rename = "x"` or `rename(serialize = "x", deserialize = "y")`: we want the serialize name.
fn meta_name(meta: &syn::meta::ParseNestedMeta) -> syn::Result<Option<String>> {
    if meta.input.peek(syn::Token![=]) {
        let s: syn::LitStr = meta.value()?.parse()?;
        return Ok(Some(s.value()));
    }
    let mut out = None;
    meta.parse_nested_meta(|inner| {
        if inner.path.is_ident("serialize") {
            let s: syn::LitStr = inner.value()?.parse()?;
            out = Some(s.value());
        } else {
            skip_meta_value(&inner)?;
        }
        Ok(())
    })?;
    Ok(out)
}

/// One `name` or `name = "text"` of a serde attribute, read by [`simple_serde_args`] (or
/// the [`fast`] reader, whose names are `&str`s).
struct SimpleArg<N> {
    name: N,
    /// The value's text, between its quotes.
    value: Option<String>,
}

/// The arguments of `#[serde(…)]` when every one is `name` or `name = "plain string"`
/// (see [`plain_str`]), the shape of nearly every field attribute; `None` for anything
/// else, which syn's parser reads. Parsing each attribute's tokens again with syn cost
/// about 10,000 instructions an attribute, 4% of a CRD run.
fn simple_serde_args(attr: &syn::Attribute) -> Option<Vec<SimpleArg<proc_macro2::Ident>>> {
    use proc_macro2::TokenTree;
    let syn::Meta::List(list) = &attr.meta else {
        return None;
    };
    if !matches!(list.delimiter, syn::MacroDelimiter::Paren(_)) {
        return None;
    }
    let mut out = vec![];
    let mut tokens = list.tokens.clone().into_iter().peekable();
    while let Some(token) = tokens.next() {
        let TokenTree::Ident(name) = token else {
            return None;
        };
        let mut value = None;
        match tokens.next() {
            None => {}
            Some(TokenTree::Punct(p)) if p.as_char() == ',' => {}
            Some(TokenTree::Punct(p)) if p.as_char() == '=' => {
                let Some(TokenTree::Literal(lit)) = tokens.next() else {
                    return None;
                };
                value = Some(plain_str(&lit.to_string())?.to_owned());
                match tokens.next() {
                    None => {}
                    Some(TokenTree::Punct(p)) if p.as_char() == ',' => {}
                    Some(_) => return None,
                }
            }
            Some(_) => return None,
        }
        out.push(SimpleArg { name, value });
    }
    Some(out)
}

/// The last identifier of each path of `#[derive(a::B, C)]` when the arguments are plain
/// paths (`a::b`, no leading `::`) separated by commas, as they nearly always are; `None`
/// for anything else, which syn's parser reads. A parse per attribute cost about 9,000
/// instructions.
fn simple_paths(attr: &syn::Attribute) -> Option<Vec<proc_macro2::Ident>> {
    use proc_macro2::{Spacing, TokenTree};
    let syn::Meta::List(list) = &attr.meta else {
        return None;
    };
    if !matches!(list.delimiter, syn::MacroDelimiter::Paren(_)) {
        return None;
    }
    let mut out = vec![];
    let mut tokens = list.tokens.clone().into_iter();
    while let Some(token) = tokens.next() {
        let TokenTree::Ident(mut last) = token else {
            return None;
        };
        loop {
            match tokens.next() {
                None => break,
                Some(TokenTree::Punct(p)) if p.as_char() == ',' => break,
                Some(TokenTree::Punct(p))
                    if p.as_char() == ':' && p.spacing() == Spacing::Joint =>
                {
                    match (tokens.next(), tokens.next()) {
                        (Some(TokenTree::Punct(p)), Some(TokenTree::Ident(i)))
                            if p.as_char() == ':' =>
                        {
                            last = i;
                        }
                        _ => return None,
                    }
                }
                Some(_) => return None,
            }
        }
        out.push(last);
    }
    Some(out)
}

fn serde_field_attrs(attrs: &[syn::Attribute]) -> SerdeField {
    let mut out = SerdeField::default();
    for attr in attrs.iter().filter(|a| a.path().is_ident("serde")) {
        if simple_serde_args(attr).is_some_and(|args| serde_field_simple(&args, &mut out)) {
            continue;
        }
        serde_field_parsed(attr, &mut out);
    }
    out
}

/// [`serde_field_attrs`] of one attribute's arguments in the simple shape; `false` (and
/// `out` untouched) when they do not fit it: what the parser makes of the same arguments
/// differs there (a flag given a value, or a value where a flag belongs: it stops, as
/// serde would).
fn serde_field_simple<N: for<'s> PartialEq<&'s str>>(
    args: &[SimpleArg<N>],
    out: &mut SerdeField,
) -> bool {
    let fits = args.iter().all(|a| {
        let flag = ["flatten", "skip", "skip_serializing", "untagged"]
            .iter()
            .any(|f| a.name == *f);
        if flag {
            a.value.is_none()
        } else {
            a.name != "rename" || a.value.is_some()
        }
    });
    if !fits {
        return false;
    }
    for SimpleArg { name, value } in args {
        if *name == "rename" {
            out.rename.clone_from(value);
        } else if *name == "flatten" {
            out.flatten = true;
        } else if *name == "skip" || *name == "skip_serializing" {
            out.skip = true;
        } else if *name == "default" {
            out.default = true;
            if value.is_some() {
                out.default_fn.clone_from(value);
            }
        } else if *name == "skip_serializing_if" {
            out.skip_serializing_if = true;
        } else if *name == "untagged" {
            out.untagged = true;
        } else if let Some(attr) = ["with", "serialize_with", "deserialize_with"]
            .into_iter()
            .find(|a| *name == *a)
        {
            out.with.get_or_insert(attr);
        }
    }
    true
}

/// [`serde_field_attrs`] of one attribute, by syn's parser.
fn serde_field_parsed(attr: &syn::Attribute, out: &mut SerdeField) {
    let _ = attr.parse_nested_meta(|meta| {
        let p = &meta.path;
        if p.is_ident("rename") {
            out.rename = meta_name(&meta)?;
        } else if p.is_ident("flatten") {
            out.flatten = true;
        } else if p.is_ident("skip") || p.is_ident("skip_serializing") {
            out.skip = true;
        } else if p.is_ident("default") {
            out.default = true;
            if meta.input.peek(syn::Token![=]) {
                let s: syn::LitStr = meta.value()?.parse()?;
                out.default_fn = Some(s.value());
            }
        } else if p.is_ident("skip_serializing_if") {
            out.skip_serializing_if = true;
            skip_meta_value(&meta)?;
        } else if p.is_ident("untagged") {
            out.untagged = true;
        } else if let Some(attr) = ["with", "serialize_with", "deserialize_with"]
            .into_iter()
            .find(|a| p.is_ident(a))
        {
            out.with.get_or_insert(attr);
            skip_meta_value(&meta)?;
        } else {
            skip_meta_value(&meta)?;
        }
        Ok(())
    });
}

/// serde's `into`/`from`/`try_from` container attributes, their type strings parsed.
fn conversions(module: &Module, attrs: &[syn::Attribute]) -> Vec<Conversion> {
    let mut out = vec![];
    for attr in attrs.iter().filter(|a| a.path().is_ident("serde")) {
        // Arguments of the common shape without a conversion among them: nothing to read
        // (the parser below would skip each of them).
        if simple_serde_args(attr).is_some_and(|args| !names_a_conversion(&args)) {
            continue;
        }
        let _ = attr.parse_nested_meta(|meta| {
            let kind = [
                ConversionKind::Into,
                ConversionKind::From,
                ConversionKind::TryFrom,
            ]
            .into_iter()
            .find(|k| meta.path.is_ident(k.attr()));
            let Some(kind) = kind else {
                return skip_meta_value(&meta);
            };
            let lit: syn::LitStr = meta.value()?.parse()?;
            let loc = Location::of_span(&module.file, lit.span());
            // The type is in a string, whose tokens have no place in the file: every part
            // of it is located at the string.
            let ty = lit
                .parse::<syn::Type>()
                .ok()
                .map(|t| relocate(ty_of(module, &t), &loc));
            out.push(Conversion { kind, loc, ty });
            Ok(())
        });
    }
    out
}

/// One of the arguments is serde's `into`, `from` or `try_from`.
fn names_a_conversion<N: for<'s> PartialEq<&'s str>>(args: &[SimpleArg<N>]) -> bool {
    args.iter().any(|a| {
        [
            ConversionKind::Into,
            ConversionKind::From,
            ConversionKind::TryFrom,
        ]
        .iter()
        .any(|k| a.name == k.attr())
    })
}

/// The JSON value a function without arguments returns when its body is one literal
/// expression: a string, number or bool literal, `None`, `Some(..)`, `vec![..]`, and
/// `.into()` / `.to_string()` / `.to_owned()` / `String::from(..)` around them.
fn literal_fn(sig: &syn::Signature, block: &syn::Block) -> Option<serde_json::Value> {
    if !sig.inputs.is_empty() || !sig.generics.params.is_empty() {
        return None;
    }
    match block.stmts.as_slice() {
        [syn::Stmt::Expr(e, None)] => literal_value(e),
        _ => None,
    }
}

fn literal_value(e: &syn::Expr) -> Option<serde_json::Value> {
    use serde_json::Value;
    match e {
        syn::Expr::Lit(l) => match &l.lit {
            syn::Lit::Str(s) => Some(Value::String(s.value())),
            syn::Lit::Bool(b) => Some(Value::Bool(b.value)),
            syn::Lit::Int(i) => i.base10_parse::<i64>().ok().map(Value::from),
            syn::Lit::Float(f) => f.base10_parse::<f64>().ok().map(Value::from),
            _ => None,
        },
        syn::Expr::Unary(u) if matches!(u.op, syn::UnOp::Neg(_)) => match literal_value(&u.expr)? {
            Value::Number(n) => n
                .as_i64()
                .map(|i| Value::from(-i))
                .or_else(|| n.as_f64().map(|f| Value::from(-f))),
            _ => None,
        },
        syn::Expr::Paren(p) => literal_value(&p.expr),
        syn::Expr::Path(p) if p.path.is_ident("None") => Some(Value::Null),
        syn::Expr::MethodCall(m)
            if m.args.is_empty()
                && ["into", "to_string", "to_owned"].contains(&m.method.to_string().as_str()) =>
        {
            literal_value(&m.receiver)
        }
        syn::Expr::Call(c) if c.args.len() == 1 => {
            let syn::Expr::Path(f) = &*c.func else {
                return None;
            };
            let name: Vec<String> = f
                .path
                .segments
                .iter()
                .map(|s| s.ident.to_string())
                .collect();
            match name
                .iter()
                .map(String::as_str)
                .collect::<Vec<_>>()
                .as_slice()
            {
                ["Some"] | ["String", "from"] => literal_value(&c.args[0]),
                _ => None,
            }
        }
        syn::Expr::Macro(m) if m.mac.path.is_ident("vec") => {
            let items = m
                .mac
                .parse_body_with(
                    syn::punctuated::Punctuated::<syn::Expr, syn::Token![,]>::parse_terminated,
                )
                .ok()?;
            items
                .iter()
                .map(literal_value)
                .collect::<Option<Vec<_>>>()
                .map(Value::Array)
        }
        _ => None,
    }
}

/// A type written in a string (`#[kube(status = "FooStatus")]`), as used in `module`,
/// located at the string; `None` if it does not parse as a type.
pub fn ty_from_str(module: &Module, text: &str, loc: &Location) -> Option<Ty> {
    let ty = syn::parse_str::<syn::Type>(text).ok()?;
    Some(relocate(ty_of(module, &ty), loc))
}

fn relocate(mut ty: Ty, loc: &Location) -> Ty {
    ty.loc = loc.clone();
    ty.kind = match ty.kind {
        TyKind::Path {
            leading_colon,
            segments,
            args,
        } => TyKind::Path {
            leading_colon,
            segments,
            args: args.into_iter().map(|a| relocate(a, loc)).collect(),
        },
        TyKind::Array { elem, len } => TyKind::Array {
            elem: Box::new(relocate(*elem, loc)),
            len,
        },
        TyKind::Other => TyKind::Other,
    };
    ty
}

fn serde_container(attrs: &[syn::Attribute]) -> SerdeContainer {
    let mut out = SerdeContainer::default();
    for attr in attrs.iter().filter(|a| a.path().is_ident("serde")) {
        // As in [`serde_field_attrs`]: the common shape read from its tokens, anything the
        // parser below would stop at left to it.
        if simple_serde_args(attr).is_some_and(|args| serde_container_simple(&args, &mut out)) {
            continue;
        }
        serde_container_parsed(attr, &mut out);
    }
    out
}

/// [`serde_container`] of one attribute's arguments in the simple shape; `false` (and
/// `out` untouched) when they do not fit it, as [`serde_field_simple`].
fn serde_container_simple<N: for<'s> PartialEq<&'s str>>(
    args: &[SimpleArg<N>],
    out: &mut SerdeContainer,
) -> bool {
    const NAMED: [&str; 4] = ["rename_all", "rename_all_fields", "tag", "content"];
    const FLAGS: [&str; 3] = ["untagged", "transparent", "deny_unknown_fields"];
    let fits = args.iter().all(|a| {
        let named = NAMED.iter().any(|n| a.name == *n);
        let flag = FLAGS.iter().any(|f| a.name == *f);
        if named {
            a.value.is_some()
        } else {
            !flag || a.value.is_none()
        }
    });
    if !fits {
        return false;
    }
    for SimpleArg { name, value } in args {
        if *name == "rename_all" {
            out.rename_all.clone_from(value);
        } else if *name == "rename_all_fields" {
            out.rename_all_fields.clone_from(value);
        } else if *name == "tag" {
            out.tag.clone_from(value);
        } else if *name == "content" {
            out.content.clone_from(value);
        } else if *name == "untagged" {
            out.untagged = true;
        } else if *name == "transparent" {
            out.transparent = true;
        } else if *name == "deny_unknown_fields" {
            out.deny_unknown_fields = true;
        } else if *name == "default" {
            out.default = true;
        }
    }
    true
}

/// [`serde_container`] of one attribute, by syn's parser.
fn serde_container_parsed(attr: &syn::Attribute, out: &mut SerdeContainer) {
    let _ = attr.parse_nested_meta(|meta| {
        let p = &meta.path;
        if p.is_ident("rename_all") {
            out.rename_all = meta_name(&meta)?;
        } else if p.is_ident("rename_all_fields") {
            out.rename_all_fields = meta_name(&meta)?;
        } else if p.is_ident("tag") {
            out.tag = meta_name(&meta)?;
        } else if p.is_ident("content") {
            out.content = meta_name(&meta)?;
        } else if p.is_ident("untagged") {
            out.untagged = true;
        } else if p.is_ident("transparent") {
            out.transparent = true;
        } else if p.is_ident("deny_unknown_fields") {
            out.deny_unknown_fields = true;
        } else if p.is_ident("default") {
            out.default = true;
            skip_meta_value(&meta)?;
        } else {
            skip_meta_value(&meta)?;
        }
        Ok(())
    });
}

/// A type as written, without the token spacing of `quote` (`HashMap<i32, String>`).
fn type_text(ty: &syn::Type) -> String {
    // Most map types are plain paths (`BTreeMap<String, Foo>`), which are written here as
    // prettyplease writes them, without building and printing a syntax tree per type.
    // prettyplease breaks a line past its margin: a long type is left to it.
    let mut out = String::new();
    if plain_path_text(ty, &mut out) && out.len() <= 60 {
        return out;
    }
    let file: syn::File = syn::parse_quote!(type T = #ty;);
    let text = prettyplease::unparse(&file);
    text.trim()
        .trim_start_matches("type T = ")
        .trim_end_matches(';')
        .to_owned()
}

/// Where a type starts. A path starts at its first token; for other types, `ty.span()`
/// (which prints the type to tokens and joins their spans) is the start.
fn ty_start(ty: &syn::Type) -> proc_macro2::Span {
    match ty {
        syn::Type::Path(tp) if tp.qself.is_none() => {
            match (&tp.path.leading_colon, tp.path.segments.first()) {
                (Some(colon), _) => colon.spans[0],
                (None, Some(first)) => first.ident.span(),
                (None, None) => ty.span(),
            }
        }
        _ => ty.span(),
    }
}

/// `a::b::C<X, Y>` as prettyplease writes it, for a path whose segments have no
/// arguments but the last, whose arguments are such paths again; `false` (with `out` left
/// partly written) for any other type.
fn plain_path_text(ty: &syn::Type, out: &mut String) -> bool {
    let syn::Type::Path(tp) = ty else {
        return false;
    };
    if tp.qself.is_some() {
        return false;
    }
    if tp.path.leading_colon.is_some() {
        out.push_str("::");
    }
    let last = tp.path.segments.len() - 1;
    for (i, seg) in tp.path.segments.iter().enumerate() {
        if i > 0 {
            out.push_str("::");
        }
        out.push_str(&seg.ident.to_string());
        match &seg.arguments {
            syn::PathArguments::None => {}
            syn::PathArguments::AngleBracketed(a) if i == last && a.colon2_token.is_none() => {
                out.push('<');
                for (j, arg) in a.args.iter().enumerate() {
                    if j > 0 {
                        out.push_str(", ");
                    }
                    let syn::GenericArgument::Type(t) = arg else {
                        return false;
                    };
                    if !plain_path_text(t, out) {
                        return false;
                    }
                }
                out.push('>');
            }
            _ => return false,
        }
    }
    true
}

/// An identifier without its `r#`.
fn ident_str(i: &syn::Ident) -> String {
    let s = i.to_string();
    s.strip_prefix("r#").map(str::to_owned).unwrap_or(s)
}

/// `pub` and `pub(crate)` items can be reached from the generated modules.
fn is_visible(vis: &syn::Visibility) -> bool {
    match vis {
        syn::Visibility::Public(_) => true,
        syn::Visibility::Restricted(r) => r.path.is_ident("crate"),
        syn::Visibility::Inherited => false,
    }
}

/// The trait names of `#[derive(...)]` attributes.
fn derives(attrs: &[syn::Attribute]) -> Vec<String> {
    let mut out = vec![];
    for attr in attrs.iter().filter(|a| a.path().is_ident("derive")) {
        if let Some(last) = simple_paths(attr) {
            out.extend(last.iter().map(ToString::to_string));
            continue;
        }
        derives_parsed(attr, &mut out);
    }
    out
}

/// [`derives`] of one attribute, by syn's parser.
fn derives_parsed(attr: &syn::Attribute, out: &mut Vec<String>) {
    let _ = attr.parse_nested_meta(|meta| {
        if let Some(last) = meta.path.segments.last() {
            out.push(last.ident.to_string());
        }
        Ok(())
    });
}

/// Make a `use` path absolute: `self::x` and `super::x` become `crate::...`.
pub fn absolutize(module: &[String], segs: &[String]) -> Vec<String> {
    let mut base: Vec<String> = module.to_vec();
    let mut rest = segs;
    match segs.first().map(String::as_str) {
        Some("crate") => return segs.to_vec(),
        Some("self") => rest = &segs[1..],
        Some("super") => {
            while rest.first().is_some_and(|s| s == "super") {
                base.pop();
                rest = &rest[1..];
            }
        }
        _ => return segs.to_vec(),
    }
    let mut out = vec!["crate".to_owned()];
    out.extend(base);
    out.extend(rest.iter().cloned());
    out
}

/// Record a `use` tree's imports; `export` for `pub use`, which re-exports them.
fn collect_use(
    module_path: &[String],
    tree: &syn::UseTree,
    prefix: Vec<String>,
    export: bool,
    module: &mut Module,
) {
    let import = |module: &mut Module, name: String, full: &[String]| {
        use_import(module_path, module, export, name, full)
    };
    match tree {
        syn::UseTree::Path(p) => {
            let mut next = prefix;
            next.push(p.ident.to_string());
            collect_use(module_path, &p.tree, next, export, module);
        }
        syn::UseTree::Name(n) => {
            let name = n.ident.to_string();
            let mut full = prefix;
            if name == "self" {
                let alias = full.last().cloned().unwrap_or_default();
                import(module, alias, &full);
            } else {
                full.push(name.clone());
                import(module, name, &full);
            }
        }
        syn::UseTree::Rename(r) => {
            let mut full = prefix;
            if r.ident != "self" {
                full.push(r.ident.to_string());
            }
            import(module, r.rename.to_string(), &full);
        }
        syn::UseTree::Glob(_) => use_glob(module_path, module, export, &prefix),
        syn::UseTree::Group(g) => {
            for t in &g.items {
                collect_use(module_path, t, prefix.clone(), export, module);
            }
        }
    }
}

/// `use full as name;` in the module at `module_path`; `export` for `pub use`.
fn use_import(
    module_path: &[String],
    module: &mut Module,
    export: bool,
    name: String,
    full: &[String],
) {
    if export {
        module.reexports.insert(name.clone());
    }
    module.uses.insert(name, absolutize(module_path, full));
}

/// `use prefix::*;` in the module at `module_path`; `export` for `pub use`.
fn use_glob(module_path: &[String], module: &mut Module, export: bool, prefix: &[String]) {
    let target = absolutize(module_path, prefix);
    if export {
        module.reexported_globs.push(target.clone());
    }
    module.globs.push(target);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The token readers of the common attribute shapes give what syn's parser gives,
    /// wherever they do not decline: plain and odd arguments, flags given values, values
    /// that are not plain strings, paths, trailing and doubled commas.
    #[test]
    fn simple_attribute_readers_agree_with_the_parser() {
        let serde_args = [
            r#"rename = "a""#,
            r#"rename = "a", skip_serializing_if = "Option::is_none""#,
            r#"default, flatten,"#,
            r#"default = "f", rename = "x y""#,
            r#"default = "a::b""#,
            r#"skip, skip_serializing, untagged"#,
            r#"with = "m", serialize_with = "s""#,
            r#"deserialize_with = "d", with = "m""#,
            r#"rename = "a\"b""#,
            r#"rename = r"a""#,
            r#"rename = 5"#,
            r#"rename"#,
            r#"flatten = "x", rename = "b""#,
            r#"skip = true"#,
            r#"untagged = "u", rename = "b""#,
            r#"rename(serialize = "s"), flatten"#,
            r#"rename = "a",, flatten"#,
            r#"a::b = "x", flatten"#,
            r#"r#rename = "x""#,
            r#"bound = "T: Clone", rename = "b""#,
            r#"rename_all = "camelCase", tag = "t", content = "c""#,
            r#"rename_all, transparent"#,
            r#"transparent = "x", deny_unknown_fields"#,
            r#"deny_unknown_fields, default, rename_all_fields = "kebab-case""#,
            r#"into = "T", from = "U""#,
            r#""#,
        ];
        for args in serde_args {
            let attr: syn::Attribute =
                syn::parse_str::<syn::ItemStruct>(&format!("#[serde({args})] struct S;"))
                    .unwrap()
                    .attrs
                    .remove(0);
            let mut field = SerdeField::default();
            serde_field_parsed(&attr, &mut field);
            assert_eq!(
                serde_field_attrs(std::slice::from_ref(&attr)),
                field,
                "{args}"
            );
            let mut container = SerdeContainer::default();
            serde_container_parsed(&attr, &mut container);
            assert_eq!(
                serde_container(std::slice::from_ref(&attr)),
                container,
                "{args}"
            );
        }
        for args in [
            "Clone, Debug",
            "serde::Serialize, kube::CustomResource,",
            "::serde::Serialize, Clone",
            "a:::b",
            "A = 1, B",
            "A, , B",
            "",
        ] {
            let attr: syn::Attribute =
                syn::parse_str::<syn::ItemStruct>(&format!("#[derive({args})] struct S;"))
                    .unwrap()
                    .attrs
                    .remove(0);
            let mut parsed = vec![];
            derives_parsed(&attr, &mut parsed);
            assert_eq!(derives(std::slice::from_ref(&attr)), parsed, "{args}");
        }
    }

    /// A string literal's value, read from its text where it has no escape, is syn's.
    #[test]
    fn plain_string_values_are_syns() {
        for text in [
            r#""a b""#,
            r#""""#,
            r#""a\"b""#,
            r#""tab\there""#,
            r#"r"raw""#,
            r#""x"suffix"#,
            "\"line\r\nbreak\"",
            r#""ünïcode""#,
        ] {
            let lit: syn::LitStr = syn::parse_str(text).unwrap();
            let mut value = String::from("left over");
            str_value(&lit, &mut value);
            assert_eq!(value, lit.value(), "{text}");
        }
    }

    #[test]
    fn module_paths_follow_rust_rules() {
        let root = Path::new("src");
        assert_eq!(
            module_path_of(root, Path::new("src/lib.rs")),
            Vec::<String>::new()
        );
        assert_eq!(module_path_of(root, Path::new("src/a/mod.rs")), vec!["a"]);
        assert_eq!(
            module_path_of(root, Path::new("src/a/b.rs")),
            vec!["a", "b"]
        );
    }

    /// Whether `body`'s shortened copy (its `///` comments' text removed) checks out, or
    /// `None` when nothing is shortened.
    fn shortened_checks(body: &str) -> Option<bool> {
        let (text, mut docs) = super::Shortened::new(body)?;
        let Ok(tokens) = text.parse::<proc_macro2::TokenStream>() else {
            return Some(false);
        };
        Some(too_deep(Path::new("lib.rs"), &tokens, Some(&mut docs)).is_none() && docs.all_seen())
    }

    /// Reading a file with its `///` comments lexed without their text gives the modules,
    /// doc lines (text and location) and errors of reading it plainly, on every kind of
    /// text that holds `///` where it is no doc comment (strings, raw strings, block
    /// comments, `////`, after code, carriage returns), next to inner and block doc
    /// comments, explicit `#[doc]`, escapes, non-ASCII text and macro bodies. Where a
    /// shortened line is no comment's start, the check sends the file to the plain path.
    #[test]
    fn doc_comments_without_their_text_read_as_the_plain_text() {
        let file = Path::new("src/lib.rs");
        let cases: &[(&str, Option<bool>)] = &[
            (
                "//! crate doc\n/// A \"quoted\" \\ back\tslash é 日本\n///\n/// +kubebuilder:object:root=true\n#[doc = \" explicit\"]\n/** block */\n#[derive(Clone)]\npub struct A {\n    /// +kubebuilder:validation:Minimum=1\n    ///  the count\n    pub count: i32,\n    /// x /* not a block */ \"\n    pub b: String,\n}\n/// an enum\npub enum E {\n    /// one\n    One,\n    /// two {}\n    Two { x: u8 },\n}\n/// at the end",
                Some(true),
            ),
            (
                "/// a\npub struct A;\nconst S: &str = \"\n/// not a doc \"\n;\n/// b\npub struct B;\n",
                Some(false),
            ),
            (
                "/// a\npub struct A;\nfn f() -> &'static str { r#\"\n/// raw \" \"#;\n/// b\npub struct B;\n\"# }\n/// c\npub struct C;\n",
                Some(false),
            ),
            (
                "/* outer /* nested */\n/// inside */\n/// a\npub struct A;\n",
                Some(false),
            ),
            (
                "/// a\n//// four\nstruct A; /// after code\n/// crlf\r\n/// c\npub struct B;\nconst C: char = '\"';\n/// d\npub struct D;\n",
                Some(true),
            ),
            (
                "macro_rules! m { () => {\n    /// in a macro\n    struct X;\n} }\n/// a\npub struct A;\n",
                Some(true),
            ),
            // Errors: a bare carriage return in a doc comment, a parse error after docs.
            ("/// a\r b\n/// c\npub struct A;\n", Some(false)),
            (
                "/// a\npub struct A {\n    /// b\n    x: ,\n}\n",
                Some(true),
            ),
            ("/// a\npub struct A\n", Some(true)),
            ("pub struct A;\n", None),
        ];
        for &(body, checks) in cases {
            assert_eq!(shortened_checks(body), checks, "{body:?}");
            let (mut plain, mut short) = (Diagnostics::default(), Diagnostics::default());
            let a = read_body(vec![], true, file, body, false, &mut plain);
            let b = read_body(vec![], true, file, body, true, &mut short);
            assert_eq!(format!("{a:#?}"), format!("{b:#?}"), "{body:?}");
            assert_eq!(plain.render(), short.render(), "{body:?}");
        }
    }

    /// A byte-order mark and a shebang line are set apart as `syn::parse_file` sets them,
    /// and lines keep their numbers; `#![attr]` is no shebang.
    #[test]
    fn parse_file_takes_a_bom_and_a_shebang() {
        let dir = tempfile::tempdir().unwrap();
        for (text, line) in [
            (
                "\u{feff}#!/usr/bin/env run-cargo-script\n//! a\n\n/// doc\npub struct A;\n",
                4,
            ),
            ("#![allow(dead_code)]\n\n/// doc\npub struct A;\n", 3),
            ("\u{feff}/// doc\npub struct A;\n", 1),
        ] {
            let file = dir.path().join("lib.rs");
            std::fs::write(&file, text).unwrap();
            let mut diags = Diagnostics::default();
            let modules = parse_file(vec![], true, &file, &mut diags);
            assert!(diags.0.is_empty(), "{text:?}: {}", diags.render());
            let item = &modules[0].structs[0];
            assert_eq!(item.ident, "A");
            assert_eq!(item.docs[0].loc.line, line, "{text:?}");
        }
    }

    #[test]
    fn absolutize_resolves_self_and_super() {
        let m = vec!["apis".to_owned(), "v1".to_owned()];
        let s = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            absolutize(&m, &s(&["super", "common", "X"])),
            s(&["crate", "apis", "common", "X"])
        );
        assert_eq!(
            absolutize(&m, &s(&["self", "X"])),
            s(&["crate", "apis", "v1", "X"])
        );
        assert_eq!(
            absolutize(&m, &s(&["k8s_openapi", "X"])),
            s(&["k8s_openapi", "X"])
        );
    }
}

#[cfg(test)]
mod doc_tests {
    use super::doc_conventions;

    #[test]
    fn todo_lines_leave_and_a_delimiter_ends_the_description_outside_code_blocks() {
        assert_eq!(doc_conventions("a\nTODO: x\nb\n---\nc"), "a\nb");
        assert_eq!(
            doc_conventions("a\n```\n---\nTODO\n```\nb"),
            "a\n```\n---\nTODO\n```\nb"
        );
        assert_eq!(doc_conventions("a\n  ---\n TODO"), "a\n  ---\n TODO");
        assert!(matches!(
            doc_conventions("plain"),
            std::borrow::Cow::Borrowed(_)
        ));
    }
}
