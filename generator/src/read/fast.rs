//! A reader for files of type declarations only, without `syn`. An API crate's files are
//! mostly structs and enums with doc comments and serde attributes, and reading them
//! through syn (lexing into token trees, the nesting pre-check, syn's parse, our walk of
//! its tree) was 44% of a 1000-kind CRD run's CPU: twice all of resolution. This reader
//! goes over the text once and builds the [`Module`]s straight away, the same ones
//! [`super::read_body`] builds from syn's tree.
//!
//! It reads a small, closed grammar: `use`, `mod`, `struct`, `enum`, `type` and `const`
//! items, with `pub`/`pub(crate|self|super)`, outer `///` and inner `//!` doc comments,
//! `#[derive]` and `#[serde]` attributes of the simple shapes the syn path reads without
//! its parser, any other attribute skipped whole, field types that are plain paths
//! (`a::B<C, D<E>>`), and constants of literal or path values. Anything else (a function,
//! an impl block, generics, a `#[kube]` attribute, a reference type, an escape, a raw
//! string, a carriage return, a doc comment where none may be, ...) gives `None`, and the
//! file is read by syn: the outcome never depends on the path, only the time does. Tests
//! read every Rust file of the repository, and thousands of randomly edited ones, both
//! ways, and hold the two equal wherever this reader answers.

use std::path::Path;

use super::{
    Body, DocLine, Field, Fields, Item, ModDecl, Module, SerdeContainer, SerdeField, SimpleArg, Ty,
    TyKind, Variant, may_hold_markers, names_a_conversion, push_doc_lines, serde_container_simple,
    serde_field_simple, use_glob, use_import,
};
use crate::diagnostics::Location;

/// How deep types and inline modules may nest here; deeper goes to syn, which checks the
/// real limit ([`super::MAX_SOURCE_NESTING`]) with its located error.
const MAX_DEPTH: usize = 32;

/// The longest type text the syn path writes itself; longer ones go to prettyplease
/// there, which may break them over lines (see `type_text`), so they go to syn here.
const MAX_PLAIN_TYPE_TEXT: usize = 60;

/// Identifiers that are Rust keywords (strict and reserved) in every edition syn reads:
/// where one stands for a name, the file goes to syn, which gives the error.
const KEYWORDS: &[&str] = &[
    "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else", "enum", "extern",
    "false", "fn", "for", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub",
    "ref", "return", "self", "Self", "static", "struct", "super", "trait", "true", "type",
    "unsafe", "use", "where", "while", "abstract", "become", "box", "do", "final", "macro",
    "override", "priv", "typeof", "unsized", "virtual", "yield", "try", "gen",
];

/// The modules of one file, or `None` when the file holds anything outside this reader's
/// grammar. `body` is the file's text after its byte-order mark and shebang.
pub(super) fn read(
    path: Vec<String>,
    visible: bool,
    file: &Path,
    body: &str,
) -> Option<Vec<Module>> {
    // proc-macro2 drops a carriage return before a newline in a doc comment and refuses a
    // bare one: rare enough to leave to it.
    if body.contains('\r') {
        return None;
    }
    let mut r = Reader {
        src: body,
        pos: 0,
        line: 1,
        line_start: 0,
        file,
        type_text: String::new(),
    };
    let mut out = vec![];
    r.module(
        At {
            path,
            visible,
            inline_parents: vec![],
        },
        false,
        0,
        &mut out,
    )?;
    Some(out)
}

/// Where a module sits (as `super::ModuleAt`).
struct At {
    path: Vec<String>,
    visible: bool,
    inline_parents: Vec<String>,
}

/// Where the reader is: a byte offset, and the line it is on.
#[derive(Clone, Copy)]
struct Mark {
    pos: usize,
    line: usize,
    line_start: usize,
}

/// Which doc comments the trivia before a token may hold.
enum Docs<'d> {
    /// None: a doc comment here goes to syn (which refuses it, or reads what we do not).
    Refused,
    /// `//!` (into the vector); a `///` ends the trivia, for the item after it.
    Inner(&'d mut Vec<DocLine>),
    /// `///` (into the vector); a `//!` goes to syn.
    Outer(&'d mut Vec<DocLine>),
}

/// The attributes of an item, field or variant, as far as the module needs them.
#[derive(Default)]
struct Attrs<'a> {
    docs: Vec<DocLine>,
    /// The arguments of each `#[serde(...)]`.
    serde: Vec<Vec<SimpleArg<&'a str>>>,
    derives: Vec<String>,
    /// `#[path = "..."]`.
    path: Option<String>,
    /// `#[cfg(...)]` or `#[cfg_attr(...)]`.
    cfg: bool,
    /// Any attribute at all (a doc comment included).
    any: bool,
}

impl Attrs<'_> {
    fn serde_field(&self) -> Option<SerdeField> {
        let mut out = SerdeField::default();
        for args in &self.serde {
            serde_field_simple(args, &mut out).then_some(())?;
        }
        Some(out)
    }

    fn serde_container(&self) -> Option<SerdeContainer> {
        let mut out = SerdeContainer::default();
        for args in &self.serde {
            // A conversion's type is a string syn parses: left to it.
            if names_a_conversion(args) {
                return None;
            }
            serde_container_simple(args, &mut out).then_some(())?;
        }
        Some(out)
    }
}

struct Reader<'a> {
    src: &'a str,
    pos: usize,
    /// 1-based line of `pos`.
    line: usize,
    /// Where that line starts.
    line_start: usize,
    file: &'a Path,
    /// The text of the type being read (see [`Reader::ty`]), one buffer for all of them.
    type_text: String,
}

impl<'a> Reader<'a> {
    fn mark(&self) -> Mark {
        Mark {
            pos: self.pos,
            line: self.line,
            line_start: self.line_start,
        }
    }

    fn reset(&mut self, m: Mark) {
        (self.pos, self.line, self.line_start) = (m.pos, m.line, m.line_start);
    }

    fn rest(&self) -> &'a str {
        &self.src[self.pos..]
    }

    fn peek(&self) -> Option<u8> {
        self.src.as_bytes().get(self.pos).copied()
    }

    /// 1-based line and column (in characters, as proc-macro2 counts them) of `pos`.
    fn line_column(&self) -> (usize, usize) {
        let before = &self.src[self.line_start..self.pos];
        let column = if before.is_ascii() {
            before.len()
        } else {
            before.chars().count()
        };
        (self.line, column + 1)
    }

    fn here(&self) -> Location {
        let (line, column) = self.line_column();
        Location::new(self.file, line, column)
    }

    /// Step over `n` bytes that hold no newline.
    fn advance(&mut self, n: usize) {
        self.pos += n;
    }

    /// Step over `n` bytes, counting their newlines.
    fn advance_lines(&mut self, n: usize) {
        let end = self.pos + n;
        for nl in memchr::memchr_iter(b'\n', &self.src.as_bytes()[self.pos..end]) {
            self.line += 1;
            self.line_start = self.pos + nl + 1;
        }
        self.pos = end;
    }

    /// Whitespace and comments, up to the next token; the doc comments among them as
    /// `docs` allows.
    fn trivia(&mut self, mut docs: Docs<'_>) -> Option<()> {
        loop {
            match self.peek() {
                Some(b' ' | b'\t') => self.advance(1),
                Some(b'\n') => self.advance_lines(1),
                Some(b'/') => {
                    let rest = self.rest();
                    if rest.starts_with("//") {
                        let end = memchr::memchr(b'\n', rest.as_bytes()).unwrap_or(rest.len());
                        let outer = rest.starts_with("///") && !rest.starts_with("////");
                        let inner = rest.starts_with("//!");
                        if outer || inner {
                            let target = match (&mut docs, outer) {
                                (Docs::Outer(v), true) | (Docs::Inner(v), false) => v,
                                // The item's doc comments: the trivia ends before them.
                                (Docs::Inner(_), true) => return Some(()),
                                _ => return None,
                            };
                            let start = self.line_column();
                            push_doc_lines(target, self.file, start, &rest[3..end]);
                        }
                        self.advance(end);
                    } else if rest.starts_with("/*") {
                        // `/**` and `/*!` are doc comments (`/**/` and `/***` are not):
                        // syn's to read.
                        if rest.starts_with("/**") || rest.starts_with("/*!") {
                            return None;
                        }
                        let len = block_comment_len(rest)?;
                        self.advance_lines(len);
                    } else {
                        return Some(());
                    }
                }
                // Other whitespace (vertical tab, form feed, Unicode's) and non-ASCII
                // tokens are syn's.
                Some(b) if !b.is_ascii() || b == 0x0b || b == 0x0c => return None,
                _ => return Some(()),
            }
        }
    }

    /// Skip trivia without doc comments, then take `c` if it is next.
    fn eat(&mut self, c: u8) -> Option<bool> {
        self.trivia(Docs::Refused)?;
        Some(if self.peek() == Some(c) {
            self.advance(1);
            true
        } else {
            false
        })
    }

    /// Skip trivia, then require `c`.
    fn expect(&mut self, c: u8) -> Option<()> {
        self.eat(c)?.then_some(())
    }

    /// `::` next (after trivia), taken.
    fn eat_path_sep(&mut self) -> Option<bool> {
        self.trivia(Docs::Refused)?;
        Some(if self.rest().starts_with("::") {
            self.advance(2);
            true
        } else {
            false
        })
    }

    /// An identifier or keyword as written (`r#type` keeps its `r#`), after trivia; `None`
    /// when the next token is none, or an identifier syn lexes otherwise (a literal's
    /// prefix, a non-ASCII one).
    fn word(&mut self) -> Option<&'a str> {
        self.trivia(Docs::Refused)?;
        let rest = self.rest();
        let bytes = rest.as_bytes();
        let raw = rest.starts_with("r#") && bytes.get(2).is_some_and(|b| ident_start(*b));
        let start = if raw { 2 } else { 0 };
        if !bytes.get(start).is_some_and(|b| ident_start(*b)) {
            return None;
        }
        let len = start
            + bytes[start..]
                .iter()
                .take_while(|b| b.is_ascii_alphanumeric() || **b == b'_')
                .count();
        // A literal's prefix (`b"`, `r#"`, `c'`), a lifetime's quote, or a non-ASCII
        // identifier that continues past the ASCII part: syn's.
        if bytes
            .get(len)
            .is_some_and(|b| matches!(b, b'"' | b'\'' | b'#') || !b.is_ascii())
        {
            return None;
        }
        let word = &rest[..len];
        // `r#crate`, `r#self`, `r#super`, `r#Self` and `r#_` are no identifiers.
        if raw && matches!(&word[2..], "crate" | "self" | "super" | "Self" | "_") {
            return None;
        }
        self.advance(len);
        Some(word)
    }

    /// A name (of an item, field, variant or module): an identifier that is no keyword.
    fn name(&mut self) -> Option<(&'a str, Location)> {
        self.trivia(Docs::Refused)?;
        let loc = self.here();
        let word = self.word()?;
        (word != "_" && !KEYWORDS.contains(&word)).then_some((word, loc))
    }

    /// The next word, if it is `kw`, taken.
    fn eat_word(&mut self, kw: &str) -> Option<bool> {
        let m = self.mark();
        if self.word() == Some(kw) {
            return Some(true);
        }
        self.reset(m);
        // The trivia before it was read (and checked) by `word`.
        self.trivia(Docs::Refused).map(|()| false)
    }

    /// `pub`, `pub(crate)`, `pub(self)` or `pub(super)`, or nothing: whether it makes the
    /// item visible (as `super::is_visible`).
    fn visibility(&mut self) -> Option<bool> {
        if !self.eat_word("pub")? {
            return Some(false);
        }
        if !self.eat(b'(')? {
            return Some(true);
        }
        let scope = self.word();
        if !matches!(scope, Some("crate" | "self" | "super")) || !self.eat(b')')? {
            // `pub(in path)`, or a tuple field's type in parentheses after `pub`: syn's.
            return None;
        }
        Some(scope == Some("crate"))
    }

    /// Outer attributes and doc comments.
    fn outer_attrs(&mut self) -> Option<Attrs<'a>> {
        let mut attrs = Attrs::default();
        loop {
            self.trivia(Docs::Outer(&mut attrs.docs))?;
            if self.peek() != Some(b'#') {
                break;
            }
            self.advance(1);
            self.expect(b'[')?;
            self.attribute(&mut attrs)?;
            attrs.any = true;
        }
        attrs.any |= !attrs.docs.is_empty();
        Some(attrs)
    }

    /// The inside of `#[...]` after the `[`, through the `]`.
    fn attribute(&mut self, attrs: &mut Attrs<'a>) -> Option<()> {
        // Raw or keyword segments (`#[r#x]`, `#[do::x]`): syn's, which refuses some.
        let plain = |w: &str| !w.starts_with("r#") && !KEYWORDS.contains(&w);
        let first = self.word()?;
        if !plain(first) {
            return None;
        }
        let mut multi = false;
        while self.eat_path_sep()? {
            multi = true;
            if !plain(self.word()?) {
                return None;
            }
        }
        match (multi, first) {
            // `#[doc = "..."]` (escapes), `#[doc(hidden)]`, and the other derives' own
            // attributes (`#[kube(...)]`, which resolve reads located): syn's.
            (false, "doc") => return None,
            (false, tool) if super::TOOL_ATTRS.contains(&tool) => return None,
            (false, "serde") => {
                self.expect(b'(')?;
                attrs.serde.push(self.serde_args()?);
            }
            (false, "derive") => {
                self.expect(b'(')?;
                self.derive_paths(&mut attrs.derives)?;
            }
            (false, "path") => {
                self.expect(b'=')?;
                let path = self.plain_string()?;
                // The first one counts, as `super::path_attr` finds it.
                attrs.path.get_or_insert_with(|| path.to_owned());
            }
            (false, "cfg" | "cfg_attr") => {
                attrs.cfg = true;
                self.skip_meta()?;
            }
            _ => self.skip_meta()?,
        }
        self.expect(b']')
    }

    /// What follows an attribute's path that the module does not read: nothing, a
    /// bracketed group, or `= literal`.
    fn skip_meta(&mut self) -> Option<()> {
        self.trivia(Docs::Refused)?;
        match self.peek()? {
            b'(' | b'[' | b'{' => self.skip_group(),
            b'=' => {
                self.advance(1);
                self.trivia(Docs::Refused)?;
                if self.peek() == Some(b'"') {
                    self.string().map(|_| ())
                } else {
                    // Any expression syn would parse: a word or number alone is enough
                    // here; anything longer is syn's.
                    self.word().map(|_| ())
                }
            }
            _ => Some(()),
        }
    }

    /// A balanced group of tokens, from its opening bracket through its closing one.
    fn skip_group(&mut self) -> Option<()> {
        let mut open: Vec<u8> = vec![];
        loop {
            self.trivia(Docs::Refused)?;
            let b = self.peek()?;
            match b {
                b'(' | b'[' | b'{' => {
                    open.push(closer(b));
                    if open.len() > MAX_DEPTH {
                        return None;
                    }
                    self.advance(1);
                }
                b')' | b']' | b'}' => {
                    (open.pop()? == b).then_some(())?;
                    self.advance(1);
                    if open.is_empty() {
                        return Some(());
                    }
                }
                b'"' => {
                    self.string()?;
                }
                b'\'' => return None,
                b if ident_start(b) => {
                    self.word()?;
                }
                b if b.is_ascii_digit() => {
                    let len = self
                        .rest()
                        .bytes()
                        .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
                        .count();
                    self.advance(len);
                }
                // The punctuation proc-macro2 lexes (not a backslash or a backquote).
                b if b"~!@#$%^&*-=+|;:,<.>/?".contains(&b) => self.advance(1),
                _ => return None,
            }
        }
    }

    /// A `"..."` string literal, through its closing quote; its text between the quotes.
    /// One with an escape (which the lexer checks) or a suffix (`"x"y`) is syn's.
    fn string(&mut self) -> Option<&'a str> {
        let rest = self.rest();
        let bytes = rest.as_bytes();
        let i = 1 + memchr::memchr2(b'"', b'\\', &bytes[1..])?;
        if bytes[i] == b'\\' {
            return None;
        }
        if bytes
            .get(i + 1)
            .is_some_and(|b| ident_start(*b) || b.is_ascii_digit() || !b.is_ascii())
        {
            return None;
        }
        self.advance_lines(i + 1);
        Some(&rest[1..i])
    }

    /// A string literal whose value is its text (see `super::plain_str`).
    fn plain_string(&mut self) -> Option<&'a str> {
        self.trivia(Docs::Refused)?;
        if self.peek() != Some(b'"') {
            return None;
        }
        // `string` takes no escape, and the file has no carriage return.
        self.string()
    }

    /// `#[serde(...)]`'s arguments after the `(`, through the `)`, when each is `name` or
    /// `name = "plain string"` (the shape of `super::simple_serde_args`).
    fn serde_args(&mut self) -> Option<Vec<SimpleArg<&'a str>>> {
        let mut out = vec![];
        loop {
            if self.eat(b')')? {
                return Some(out);
            }
            let name = self.word()?;
            if name.starts_with("r#") {
                return None;
            }
            let value = if self.eat(b'=')? {
                Some(self.plain_string()?.to_owned())
            } else {
                None
            };
            out.push(SimpleArg { name, value });
            if !self.eat(b',')? {
                return self.expect(b')').map(|()| out);
            }
        }
    }

    /// `#[derive(...)]`'s paths after the `(`, through the `)`: the last identifier of
    /// each (the shape of `super::simple_paths`).
    fn derive_paths(&mut self, out: &mut Vec<String>) -> Option<()> {
        loop {
            if self.eat(b')')? {
                return Some(());
            }
            let mut last = self.word()?;
            // `simple_paths` takes `::` as two joined colons only, as this does.
            while self.eat_path_sep()? {
                last = self.word()?;
            }
            out.push(last.to_owned());
            if !self.eat(b',')? {
                return self.expect(b')');
            }
        }
    }

    /// A module's items up to its end (`}` when `braced`, else the end of the text): the
    /// module, then its inline modules, into `out` (as `super::collect_module` orders
    /// them).
    fn module(&mut self, at: At, braced: bool, depth: usize, out: &mut Vec<Module>) -> Option<()> {
        if depth > MAX_DEPTH {
            return None;
        }
        let mut module = Module::empty(at.path.clone(), self.file, at.visible);
        // Inner doc comments and attributes first, as syn reads them.
        loop {
            self.trivia(Docs::Inner(&mut module.inner_docs))?;
            let m = self.mark();
            if self.peek() != Some(b'#') {
                break;
            }
            self.advance(1);
            if !self.eat(b'!')? {
                self.reset(m);
                break;
            }
            self.expect(b'[')?;
            let mut attrs = Attrs::default();
            self.attribute(&mut attrs)?;
        }
        let mut nested = vec![];
        loop {
            let attrs = self.outer_attrs()?;
            match self.peek() {
                None if !braced && !attrs.any => break,
                Some(b'}') if braced && !attrs.any => {
                    self.advance(1);
                    break;
                }
                None | Some(b'}') => return None,
                _ => {}
            }
            let visible = self.visibility()?;
            match self.word()? {
                "struct" => {
                    let (name, loc) = self.name()?;
                    let fields = match self.peek_token()? {
                        b'{' => self.fields(true)?,
                        b'(' => {
                            let fields = self.fields(false)?;
                            self.expect(b';')?;
                            fields
                        }
                        b';' => {
                            self.advance(1);
                            Fields::Unit
                        }
                        // Generics, `where`: syn's.
                        _ => return None,
                    };
                    module
                        .structs
                        .push(item(attrs, name, loc, visible, Body::Struct(fields))?);
                }
                "enum" => {
                    let (name, loc) = self.name()?;
                    let variants = self.variants()?;
                    module
                        .enums
                        .push(item(attrs, name, loc, visible, Body::Enum(variants))?);
                }
                "type" => {
                    let (name, loc) = self.name()?;
                    self.expect(b'=')?;
                    let target = self.type_of()?;
                    self.expect(b';')?;
                    module
                        .aliases
                        .push(item(attrs, name, loc, visible, Body::Alias(target))?);
                }
                "use" => {
                    self.use_tree(&at.path, vec![], visible, &mut module, 0)?;
                    self.expect(b';')?;
                }
                "mod" => {
                    let (name, loc) = self.name()?;
                    let name = name.to_owned();
                    // A `mod` item's doc comments may hold package markers (see
                    // `Module::other_docs`).
                    let Attrs {
                        docs, path, cfg, ..
                    } = attrs;
                    if may_hold_markers(&docs) {
                        module.other_docs.push(docs);
                    }
                    module.children.push(name.clone());
                    if self.eat(b';')? {
                        module.file_children.push(ModDecl {
                            name,
                            path_attr: path,
                            visible,
                            inline_parents: at.inline_parents.clone(),
                            cfg,
                            loc,
                        });
                    } else {
                        self.expect(b'{')?;
                        let mut path = at.path.clone();
                        path.push(name.clone());
                        let mut inline_parents = at.inline_parents.clone();
                        inline_parents.push(name);
                        let mut inner = vec![];
                        self.module(
                            At {
                                path,
                                visible,
                                inline_parents,
                            },
                            true,
                            depth + 1,
                            &mut inner,
                        )?;
                        nested.push(inner);
                    }
                }
                "const" => {
                    // Constants (a Go port's enum values) are read past; their doc
                    // comments may hold markers, as `mod`'s.
                    self.name()?;
                    self.expect(b':')?;
                    self.const_type()?;
                    self.expect(b'=')?;
                    self.const_value()?;
                    self.expect(b';')?;
                    if may_hold_markers(&attrs.docs) {
                        module.other_docs.push(attrs.docs);
                    }
                }
                // Functions, impl blocks, traits, statics, macros...: syn's.
                _ => return None,
            }
        }
        out.push(module);
        out.extend(nested.into_iter().flatten());
        Some(())
    }

    /// A constant's type: a plain path, or `&str` / `&'static str` and the like.
    fn const_type(&mut self) -> Option<()> {
        if self.eat(b'&')? {
            self.trivia(Docs::Refused)?;
            let rest = self.rest();
            if rest.starts_with("'static")
                && !rest[7..]
                    .bytes()
                    .next()
                    .is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'\'')
            {
                self.advance(7);
            }
        }
        self.type_of().map(|_| ())
    }

    /// A constant's value: a string without escapes, a decimal integer (`-` allowed, no
    /// suffix), `true`, `false`, or a path (`Self::A`, `OTHER`).
    fn const_value(&mut self) -> Option<()> {
        match self.peek_token()? {
            b'"' => self.string().map(|_| ()),
            b'-' | b'0'..=b'9' => {
                if self.peek() == Some(b'-') {
                    self.advance(1);
                    self.trivia(Docs::Refused)?;
                }
                let digits = self.rest().bytes().take_while(u8::is_ascii_digit).count();
                // A suffix, a float, `0x..`, `1_000`: syn's.
                let next = self.rest().as_bytes().get(digits).copied();
                if digits == 0
                    || next.is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.')
                {
                    return None;
                }
                self.advance(digits);
                Some(())
            }
            _ => {
                let first = self.word()?;
                if matches!(first, "true" | "false") {
                    return Some(());
                }
                let mut word = first;
                loop {
                    path_segment(word).then_some(())?;
                    if !self.eat_path_sep()? {
                        return Some(());
                    }
                    word = self.word()?;
                }
            }
        }
    }

    /// The next token's first byte, after trivia, not taken.
    fn peek_token(&mut self) -> Option<u8> {
        self.trivia(Docs::Refused)?;
        self.peek()
    }

    /// `{ a: A, ... }` (`named`) or `(A, ...)`, from the opening bracket through the
    /// closing one.
    fn fields(&mut self, named: bool) -> Option<Fields> {
        let (open, close) = if named { (b'{', b'}') } else { (b'(', b')') };
        self.expect(open)?;
        let mut fields = vec![];
        loop {
            let attrs = self.outer_attrs()?;
            if self.peek() == Some(close) {
                self.advance(1);
                // Attributes before the closing bracket are syn's to refuse.
                (!attrs.any).then_some(())?;
                break;
            }
            let visible = self.visibility()?;
            let name = if named {
                let name = self.name()?;
                self.expect(b':')?;
                Some(name)
            } else {
                None
            };
            let ty = self.type_of()?;
            fields.push(field(attrs, name, visible, ty)?);
            if !self.eat(b',')? {
                self.expect(close)?;
                break;
            }
        }
        Some(if named {
            Fields::Named(fields)
        } else {
            Fields::Unnamed(fields)
        })
    }

    /// An enum's `{ A, B(T), C { x: X } }`.
    fn variants(&mut self) -> Option<Vec<Variant>> {
        self.expect(b'{')?;
        let mut out = vec![];
        loop {
            let attrs = self.outer_attrs()?;
            if self.peek() == Some(b'}') {
                self.advance(1);
                return (!attrs.any).then_some(out);
            }
            let (ident, loc) = self.name()?;
            let fields = match self.peek_token()? {
                b'{' => self.fields(true)?,
                b'(' => self.fields(false)?,
                // A discriminant (`= 1`) is syn's.
                b'=' => return None,
                _ => Fields::Unit,
            };
            out.push(Variant {
                ident: ident.to_owned(),
                loc,
                serde: attrs.serde_field()?,
                container: attrs.serde_container()?,
                docs: attrs.docs,
                fields,
                tool_attrs: vec![],
            });
            if !self.eat(b',')? {
                self.expect(b'}')?;
                return Some(out);
            }
        }
    }

    /// A field's, alias's or constant's type (see [`Reader::ty`]).
    fn type_of(&mut self) -> Option<Ty> {
        let mut text = std::mem::take(&mut self.type_text);
        text.clear();
        let ty = self.ty(0, &mut text);
        self.type_text = text;
        ty
    }

    /// A type that is a plain path (`::a::B<C, D>`, arguments on the last segment only,
    /// each a plain path again). Its text as `super::plain_path_text` writes it goes on
    /// the end of `text`, where its arguments' are: kept as a string only where
    /// `super::ty_of` keeps it, so most types allocate none.
    fn ty(&mut self, depth: usize, text: &mut String) -> Option<Ty> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.trivia(Docs::Refused)?;
        let loc = self.here();
        let start = text.len();
        let leading_colon = self.eat_path_sep()?;
        if leading_colon {
            text.push_str("::");
        }
        let mut segments = vec![];
        loop {
            let word = self.word()?;
            path_segment(word).then_some(())?;
            text.push_str(word);
            segments.push(word.strip_prefix("r#").unwrap_or(word).to_owned());
            if !self.eat_path_sep()? {
                break;
            }
            text.push_str("::");
        }
        let mut args: Vec<Ty> = vec![];
        // Where the first argument's text is.
        let mut key = start..start;
        if self.eat(b'<')? {
            text.push('<');
            loop {
                if !args.is_empty() {
                    text.push_str(", ");
                }
                let arg_start = text.len();
                let arg = self.ty(depth + 1, text)?;
                if args.is_empty() {
                    key = arg_start..text.len();
                }
                args.push(arg);
                if self.eat(b',')? {
                    // A trailing comma.
                    if self.eat(b'>')? {
                        break;
                    }
                    continue;
                }
                self.expect(b'>')?;
                break;
            }
            text.push('>');
            // `A<B>::C`, `A<B>(C)`: syn's.
            if self.rest().starts_with("::") {
                return None;
            }
        }
        // As `super::ty_of`: a type of two arguments keeps its text and its key's, for
        // messages about maps.
        let mut own_text = None;
        if args.len() == 2 {
            let own = &text[start..];
            if own.len() > MAX_PLAIN_TYPE_TEXT || key.len() > MAX_PLAIN_TYPE_TEXT {
                return None;
            }
            own_text = Some(own.to_owned());
            args[0].text.get_or_insert_with(|| text[key].to_owned());
        }
        Some(Ty {
            loc,
            text: own_text,
            kind: TyKind::Path {
                leading_colon,
                segments,
                args,
            },
        })
    }

    /// A `use` tree (as `super::collect_use` walks syn's).
    fn use_tree(
        &mut self,
        module_path: &[String],
        prefix: Vec<String>,
        export: bool,
        module: &mut Module,
        depth: usize,
    ) -> Option<()> {
        if depth > MAX_DEPTH {
            return None;
        }
        match self.peek_token()? {
            b'*' => {
                self.advance(1);
                use_glob(module_path, module, export, &prefix);
                return Some(());
            }
            b'{' => {
                self.advance(1);
                loop {
                    if self.eat(b'}')? {
                        return Some(());
                    }
                    self.use_tree(module_path, prefix.clone(), export, module, depth + 1)?;
                    if !self.eat(b',')? {
                        return self.expect(b'}');
                    }
                }
            }
            _ => {}
        }
        let word = self.word()?;
        if word == "_" || (KEYWORDS.contains(&word) && !matches!(word, "crate" | "self" | "super"))
        {
            return None;
        }
        let mut full = prefix;
        if self.eat_path_sep()? {
            full.push(word.to_owned());
            return self.use_tree(module_path, full, export, module, depth + 1);
        }
        if self.eat_word("as")? {
            let rename = self.word()?;
            if rename != "_" && KEYWORDS.contains(&rename) {
                return None;
            }
            if word != "self" {
                full.push(word.to_owned());
            }
            use_import(module_path, module, export, rename.to_owned(), &full);
        } else if word == "self" {
            let alias = full.last().cloned().unwrap_or_default();
            use_import(module_path, module, export, alias, &full);
        } else {
            full.push(word.to_owned());
            use_import(module_path, module, export, word.to_owned(), &full);
        }
        Some(())
    }
}

/// A struct, enum or alias from what the reader found (as `super::item_of`).
fn item(attrs: Attrs, name: &str, loc: Location, visible: bool, body: Body) -> Option<Item> {
    Some(Item {
        ident: name.to_owned(),
        loc,
        serde: attrs.serde_container()?,
        derives: attrs.derives,
        conversions: vec![],
        generic: false,
        visible,
        body,
        tool_attrs: vec![],
        docs: attrs.docs,
    })
}

/// A field (as `super::fields_of`); a tuple field is located at its type.
fn field(attrs: Attrs, name: Option<(&str, Location)>, visible: bool, ty: Ty) -> Option<Field> {
    let (ident, loc) = match name {
        Some((name, loc)) => (Some(name.to_owned()), loc),
        None => (None, ty.loc.clone()),
    };
    Some(Field {
        ident,
        loc,
        serde: attrs.serde_field()?,
        docs: attrs.docs,
        ty,
        visible,
        tool_attrs: vec![],
    })
}

/// A word that may stand as a segment of a type's or a value's path: an identifier, or
/// `crate`, `self`, `super` or `Self` (not another keyword, not `_`).
fn path_segment(word: &str) -> bool {
    word != "_"
        && (!KEYWORDS.contains(&word) || matches!(word, "crate" | "self" | "super" | "Self"))
}

fn ident_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_'
}

fn closer(open: u8) -> u8 {
    match open {
        b'(' => b')',
        b'[' => b']',
        _ => b'}',
    }
}

/// The length of the (nested) block comment `text` starts with; `None` if it is not closed.
fn block_comment_len(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let (mut depth, mut i) = (0usize, 0);
    while i + 1 < bytes.len() {
        match (bytes[i], bytes[i + 1]) {
            (b'/', b'*') => {
                depth += 1;
                i += 2;
            }
            (b'*', b'/') => {
                depth -= 1;
                i += 2;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => i += 1,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostics::Diagnostics;

    /// What syn's path reads from `body`, and whether it found a problem.
    fn by_syn(file: &Path, body: &str) -> (String, bool) {
        let mut diags = Diagnostics::default();
        let modules = super::super::read_body(vec!["m".into()], true, file, body, true, &mut diags);
        (format!("{modules:#?}"), diags.has_errors())
    }

    /// This reader's modules of `body`, held equal to syn's wherever it answers.
    fn agreed(file: &Path, body: &str) -> Option<String> {
        let fast = format!("{:#?}", read(vec!["m".into()], true, file, body)?);
        let (syn, failed) = by_syn(file, body);
        assert!(
            !failed,
            "{}: read here, refused by syn: {body:?}",
            file.display()
        );
        assert_eq!(
            fast,
            syn,
            "{}: read otherwise than syn reads it",
            file.display()
        );
        Some(fast)
    }

    /// Every Rust file of the repository (fixtures, examples, the sample API, the product's
    /// own sources), read both ways: where this reader answers, it answers what syn's
    /// path does, to the doc line's column. The API files it exists for are among those it
    /// answers, so the speed it gives is the one users' type files get.
    #[test]
    fn every_file_of_the_repository_reads_as_syn_reads_it() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        let mut stack = vec![root.to_path_buf()];
        let (mut read_here, mut all) = (vec![], 0);
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                let name = path.file_name().unwrap().to_string_lossy().into_owned();
                if path.is_dir() {
                    if !name.starts_with('.') && name != "target" {
                        stack.push(path);
                    }
                } else if name.ends_with(".rs") {
                    let Ok(text) = std::fs::read_to_string(&path) else {
                        continue;
                    };
                    all += 1;
                    if agreed(&path, super::super::rust_body(&text)).is_some() {
                        read_here.push(path.strip_prefix(root).unwrap().to_owned());
                    }
                }
            }
        }
        for api in [
            "sample-api/src/apis/samplecontroller/v1alpha1.rs",
            "sample-api/src/apis/insujang/v1beta1.rs",
            "sample-api/src/apis/mod.rs",
            // A kubebuilder project's API, ported: typed constants beside the types.
            "examples/cronjob/src/apis/batch/v1/cronjob_types.rs",
            "examples/cronjob/src/apis/batch/v2/cronjob_types.rs",
        ] {
            assert!(
                read_here.iter().any(|p| p == Path::new(api)),
                "{api} went to syn: {read_here:#?}"
            );
        }
        assert!(all > 500, "{all} files found");
    }

    /// Files in the grammar: locations after non-ASCII text, raw identifiers, nested and
    /// inline modules, every `use` form, the simple serde and derive shapes, skipped
    /// attributes.
    const READ_HERE: &[&str] = &[
        "",
        "//! +groupName=a.example.com\n//!\n#![allow(clippy::all)]\n//! after\n\n/// é 日本 doc\n/// +kubebuilder:object:root=true\n#[derive(Clone, Debug, serde::Serialize)]\n#[serde(rename_all = \"camelCase\", deny_unknown_fields)]\npub struct Widget {\n    #[serde(flatten)]\n    pub types: TypeMeta, // é\n    /* é */ pub metadata: ObjectMeta,\n    ///  spaced\n    #[serde(default, skip_serializing_if = \"Option::is_none\")]\n    pub status: Option<BTreeMap<String, Vec<a::B>>>,\n    pub(crate) r#type: ::std::string::String,\n    inner: Option<Box<Self>>,\n}\n",
        "use std::collections::{self, BTreeMap as Map, btree_map::*};\npub use super::v1::{A, B,};\npub(crate) use crate::x::Y as _;\nuse self::a::b;\n#[allow(unused)]\nuse r#type::r#struct;\n",
        "mod a;\n#[path = \"x/y.rs\"]\n#[path = \"other.rs\"]\npub mod b;\n#[cfg(test)]\nmod c;\n/// +kubebuilder:object:generate=true\npub mod d {\n    //! inner\n    pub struct D(pub i32, String);\n    mod e { pub enum E { A, B(i32,), C { x: u8, }, } }\n}\npub struct Z;\n",
        "/// a\n#[non_exhaustive]\n#[doc_cfg = \"x\"]\n#[rustfmt::skip]\n#[cfg_attr(feature = \"x\", derive(Hash), serde(rename = \"]\"))]\npub enum E {\n    /// one\n    #[serde(rename = \"One\")]\n    One,\n    #[serde(rename_all = \"camelCase\")]\n    Two { a_b: u8 },\n}\npub type Alias = Vec<E>;\nstruct Unit;\n",
        "pub struct M { pub m: BTreeMap<String, BTreeMap<String, i32>>, pub k: HashMap<Key, V,>, }\n",
        "/// +kubebuilder:validation:Enum=Allow\npub const ALLOW: &str = \"Allow\";\nconst B: &'static str = \"b\";\npub(crate) const N: i32 = -3;\nconst T: bool = true;\nconst P: Policy = Policy::Allow;\n/// no marker\nconst U: u8 = 0;\n",
    ];

    /// The files of [`the_grammar_and_its_edges`] with bytes taken out, put in and copied
    /// about at random: wherever this reader still answers, syn's path reads the same and
    /// finds no error. What it must never do is read a file syn refuses, or read one
    /// otherwise.
    #[test]
    fn mutated_files_read_as_syn_reads_them_or_go_to_syn() {
        use proptest::prelude::*;
        const PIECES: &[&str] = &[
            "{",
            "}",
            "(",
            ")",
            "<",
            ">",
            "[",
            "]",
            ";",
            ":",
            "::",
            ",",
            "#",
            "!",
            "/",
            "//",
            "///",
            "//!",
            "/*",
            "*/",
            "\"",
            "'",
            "=",
            "*",
            "\n",
            " ",
            "r#",
            "pub",
            "pub(crate)",
            "struct",
            "enum",
            "mod",
            "use",
            "type",
            "as",
            "self",
            "crate",
            "_",
            "a",
            "é",
            "1",
            "\\",
            "#[serde(default)]",
            "#[derive(A)]",
            "Option<",
            "::B",
            "+x",
        ];
        #[derive(Clone, Debug)]
        enum Edit {
            Delete(usize, usize),
            Insert(usize, usize),
            Copy(usize, usize, usize),
        }
        let edit = prop_oneof![
            (any::<usize>(), 1..4usize).prop_map(|(at, n)| Edit::Delete(at, n)),
            (any::<usize>(), 0..PIECES.len()).prop_map(|(at, p)| Edit::Insert(at, p)),
            (any::<usize>(), any::<usize>(), 1..40usize)
                .prop_map(|(from, to, n)| Edit::Copy(from, to, n)),
        ];
        let seeds: Vec<String> = READ_HERE.iter().map(|s| s.to_string()).collect();
        let file = Path::new("src/lib.rs");
        // Counted across cases (the runner takes a `Fn`).
        let (answered, cases) = (std::cell::Cell::new(0), std::cell::Cell::new(0));
        proptest!(ProptestConfig::with_cases(5000), |(seed in 0..seeds.len(), edits in prop::collection::vec(edit, 1..6))| {
            let mut text: Vec<char> = seeds[seed].chars().collect();
            for e in edits {
                let len = text.len().max(1);
                match e {
                    Edit::Delete(at, n) => {
                        let at = at % len;
                        text.drain(at..(at + n).min(text.len()));
                    }
                    Edit::Insert(at, p) => {
                        let at = at % (text.len() + 1);
                        text.splice(at..at, PIECES[p].chars());
                    }
                    Edit::Copy(from, to, n) => {
                        let from = from % len;
                        let piece: Vec<char> =
                            text.iter().skip(from).take(n).copied().collect();
                        let to = to % (text.len() + 1);
                        text.splice(to..to, piece);
                    }
                }
            }
            let body: String = text.into_iter().collect();
            cases.set(cases.get() + 1);
            answered.set(answered.get() + usize::from(agreed(file, &body).is_some()));
        });
        // The edits leave many files readable here: the comparison is not an empty one.
        let (answered, cases) = (answered.get(), cases.get());
        assert!(answered * 10 > cases, "{answered} of {cases} read here");
    }

    /// Files in the grammar read here, each as syn's path reads it; files outside it go to
    /// syn.
    #[test]
    fn the_grammar_and_its_edges() {
        let file = Path::new("src/lib.rs");
        for body in READ_HERE {
            assert!(agreed(file, body).is_some(), "went to syn: {body:?}");
        }
        let to_syn = [
            "fn f() {}\n",
            "impl A {}\n",
            "pub struct G<T> { t: T }\n",
            "pub struct W where Self: Sized;\n",
            "/** block doc */\npub struct A;\n",
            "#[doc = \"explicit\"]\npub struct A;\n",
            "#[kube(group = \"a\")]\npub struct A;\n",
            "#[serde(rename(serialize = \"x\"))]\npub struct A;\n",
            "#[serde(into = \"B\")]\npub struct A;\n",
            "#[serde(rename = \"a\\\"b\")]\npub struct A;\n",
            "pub struct A { a: &'static str }\n",
            "pub struct A { a: [u8; 4] }\n",
            "pub struct A { a: (u8, u8) }\n",
            "pub struct A { a: dyn X }\n",
            "pub enum E { A = 1 }\n",
            "pub struct A { a: u8 }\r\n",
            "pub(in crate::a) struct A;\n",
            "struct A { /// dangling\n}\n",
            "pub struct A { a: u8 b: u8 }\n",
            "pub struct A;\n//! late inner doc\n",
            "pub struct A { fn: u8 }\n",
            "pub struct Ä;\n",
            "macro_rules! m { () => {} }\n",
            "pub struct A { a: Vec<u8>::X }\n",
            "pub struct A { a: Option<Vec<Map<AVeryLongTypeNameNumberOneThatGoesOn, AVeryLongTypeNameNumberTwoThatGoesOn>>>, }\n",
            "mod a {\n",
            "pub struct A {\n",
            "use ::std::fmt;\n",
            "const A: f64 = 1.5;\n",
            "const A: u8 = 1u8;\n",
            "const A: &str = concat!(\"a\", \"b\");\n",
            "const A: [u8; 1] = [1];\n",
            "static A: u8 = 1;\n",
        ];
        for body in to_syn {
            assert!(
                read(vec![], true, file, body).is_none(),
                "read here: {body:?}"
            );
        }
    }
}
