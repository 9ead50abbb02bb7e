//! Go source to the little the importer needs, through tree-sitter's Go grammar: the
//! package clause and its comments, imports, type declarations (with their doc comments
//! and markers, struct fields and tags), constants, and which methods a type has.
//! Everything else (functions, variables, method bodies) is only counted.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use tree_sitter::{Node, Parser};

use crate::diagnostics::{Diagnostic, Location};

/// One `.go` file.
#[derive(Debug)]
pub struct GoFile {
    pub path: PathBuf,
    /// The file's text (diagnostics show its lines).
    pub text: String,
    /// The package clause's name.
    pub package: String,
    /// Block comments before the package clause (the licence), verbatim.
    pub license: Vec<String>,
    /// Text lines of the comment group right above `package` (Go's package doc).
    pub package_doc: Vec<String>,
    /// Marker lines of every comment group before `package` (`+groupName=...`), without `//`.
    pub package_markers: Vec<String>,
    /// import name (alias, or the path's last element) -> import path.
    pub imports: BTreeMap<String, String>,
    /// Declarations in source order.
    pub items: Vec<Item>,
    /// Methods: (receiver type, method name, where).
    pub methods: Vec<(String, String, Location)>,
    /// Functions and variables, which describe behaviour and registration, not the API.
    pub dropped: usize,
}

/// A declaration the importer ports.
#[derive(Debug)]
pub enum Item {
    Type(Box<TypeDecl>),
    /// One `const ( ... )` block (or a single const).
    Consts(Vec<ConstDecl>),
}

/// Comment lines above a declaration.
#[derive(Clone, Debug, Default)]
pub struct Doc {
    /// The group right above it, each line as written after `//` (markers in place).
    pub lines: Vec<String>,
    /// Marker lines of the group above that one (separated by a blank line), which
    /// controller-gen reads as the declaration's markers too.
    pub upper_markers: Vec<String>,
    /// Lines the port writes as plain comments above the doc: markers `generate` would
    /// refuse (set by the importer, never by the parser).
    pub comments: Vec<String>,
    /// Marker-like lines inside a `/* */` comment of the doc (External Secrets' `+kubebuilder:
    /// validation:Enum=DSM`): controller-gen reads markers from line comments only.
    pub block_markers: Vec<String>,
}

impl Doc {
    /// Every marker (without the leading `+`).
    pub fn markers(&self) -> impl Iterator<Item = &str> {
        self.lines
            .iter()
            .chain(&self.upper_markers)
            .filter_map(|l| l.trim_start().strip_prefix('+'))
    }
}

#[derive(Debug)]
pub struct TypeDecl {
    pub name: String,
    pub loc: Location,
    pub doc: Doc,
    /// Type parameters (`type A[T any] ...`): generics have no CRD schema.
    pub generic: bool,
    /// `type A = B`: another name for `B`, no type of its own.
    pub alias: bool,
    pub ty: GoType,
}

#[derive(Debug)]
pub struct ConstDecl {
    pub name: String,
    pub loc: Location,
    pub doc: Doc,
    /// The declared type, if any (`GitProviderGeneric string = "generic"`).
    pub ty: Option<GoType>,
    /// The value's source text, if there is one (a const in an `iota` block may have none).
    pub value: Option<String>,
    /// The value node's kind (`interpreted_string_literal`, `int_literal`, ...).
    pub value_kind: Option<String>,
}

/// A Go type expression.
#[derive(Clone, Debug)]
pub enum GoType {
    /// `Foo` or `pkg.Foo`.
    Named {
        pkg: Option<String>,
        name: String,
        loc: Location,
    },
    Pointer(Box<GoType>),
    Slice(Box<GoType>),
    Array(Box<GoType>),
    Map(Box<GoType>, Box<GoType>),
    /// The fields, and where `struct` is.
    Struct(Vec<Field>, Location),
    /// `interface{ ... }`; `empty` for `interface{}` (and `any` is a `Named`).
    Interface {
        empty: bool,
        loc: Location,
    },
    /// Anything else (`chan`, `func`, an instantiated generic): its description and place.
    Unsupported {
        what: String,
        loc: Location,
    },
}

#[derive(Clone, Debug)]
pub struct Field {
    /// `None` for an embedded field.
    pub name: Option<String>,
    pub loc: Location,
    pub doc: Doc,
    pub ty: GoType,
    /// The `json:"..."` part of the tag, if any.
    pub json: Option<String>,
    /// A trailing `// comment` on the field's line.
    pub trailing: Option<String>,
}

fn loc(path: &Path, n: Node) -> Location {
    let p = n.start_position();
    Location::new(path, p.row + 1, p.column + 1)
}

fn text<'a>(src: &'a str, n: Node) -> &'a str {
    &src[n.byte_range()]
}

/// A `//` comment's line without the slashes, or the lines of a `/* */` comment.
fn comment_lines(raw: &str) -> Vec<String> {
    if let Some(rest) = raw.strip_prefix("//") {
        if is_directive(rest) {
            return vec![];
        }
        vec![rest.to_owned()]
    } else if block_is_marker(raw) {
        block_lines(raw).collect()
    } else {
        block_lines(raw).filter(|l| !is_marker(l)).collect()
    }
}

/// A `/* +marker */` comment, which controller-gen reads as a marker (its text starts with
/// `+`).
fn block_is_marker(raw: &str) -> bool {
    raw.strip_prefix("/*")
        .is_some_and(|r| r.trim_start().starts_with('+'))
}

/// The lines of a `/* */` comment.
fn block_lines(raw: &str) -> impl Iterator<Item = String> + '_ {
    raw.strip_prefix("/*")
        .and_then(|r| r.strip_suffix("*/"))
        .unwrap_or(raw)
        .lines()
        .map(str::to_owned)
}

/// The marker-like lines of a `/* */` comment, which controller-gen does not read as
/// markers (it reads a comment as a marker when its text starts with `+`).
fn block_marker_lines(raw: &str) -> Vec<String> {
    if raw.starts_with("//") || block_is_marker(raw) {
        return vec![];
    }
    block_lines(raw).filter(|l| is_marker(l)).collect()
}

/// A directive comment (`//nolint:x`, `//go:generate`, `//line`, `//export`): not part of
/// a doc, as go/ast's `CommentGroup.Text` (so controller-gen) leaves it out.
fn is_directive(after_slashes: &str) -> bool {
    if ["line ", "extern ", "export "]
        .iter()
        .any(|p| after_slashes.starts_with(p))
    {
        return true;
    }
    let word = |s: &str| {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
    };
    match after_slashes.split_once(':') {
        Some((name, rest)) => {
            word(name)
                && rest
                    .bytes()
                    .next()
                    .is_some_and(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        }
        None => false,
    }
}

fn is_marker(line: &str) -> bool {
    line.trim_start().starts_with('+')
}

/// The comment groups right above `n` among its siblings: the adjacent one (the doc) and
/// the one above it across one blank line (controller-gen's second marker source).
fn doc_of(src: &str, n: Node) -> Doc {
    let mut groups: Vec<Vec<Node>> = vec![];
    let mut next_row = n.start_position().row;
    let mut cur = n.prev_sibling();
    let mut current: Vec<Node> = vec![];
    while let Some(c) = cur {
        if c.kind() != "comment" {
            break;
        }
        // A comment on the line where the previous declaration ends trails that one.
        if let Some(before) = c.prev_sibling()
            && before.kind() != "comment"
            && before.end_position().row == c.start_position().row
        {
            break;
        }
        let gap = next_row - c.end_position().row;
        if gap > 1 {
            if !current.is_empty() {
                groups.push(std::mem::take(&mut current));
            } else {
                // No doc group at all: this group is the "upper" one.
                groups.push(vec![]);
            }
            if gap > 2 || groups.len() >= 2 {
                break;
            }
        }
        current.push(c);
        next_row = c.start_position().row;
        cur = c.prev_sibling();
    }
    if !current.is_empty() && groups.len() < 2 {
        groups.push(current);
    }
    let lines_of = |g: &Vec<Node>| -> Vec<String> {
        g.iter()
            .rev()
            .flat_map(|c| comment_lines(text(src, *c)))
            .collect()
    };
    Doc {
        block_markers: groups
            .first()
            .map(|g| {
                g.iter()
                    .rev()
                    .flat_map(|c| block_marker_lines(text(src, *c)))
                    .collect()
            })
            .unwrap_or_default(),
        lines: groups.first().map(lines_of).unwrap_or_default(),
        upper_markers: groups
            .get(1)
            .map(lines_of)
            .unwrap_or_default()
            .into_iter()
            .filter(|l| is_marker(l))
            .collect(),
        comments: vec![],
    }
}

/// The JSON name part of a struct tag (`json:"name,omitempty"` -> `name,omitempty`).
fn json_of_tag(tag: &str) -> Option<String> {
    let tag = tag.trim_matches('`');
    let tag = if tag.starts_with('"') {
        // An interpreted string literal tag: unescape the quotes.
        tag.trim_matches('"').replace("\\\"", "\"")
    } else {
        tag.to_owned()
    };
    let i = tag.find("json:\"")?;
    let rest = &tag[i + 6..];
    Some(rest[..rest.find('"')?].to_owned())
}

fn parse_type(path: &Path, src: &str, n: Node) -> GoType {
    match n.kind() {
        "type_identifier" => GoType::Named {
            pkg: None,
            name: text(src, n).to_owned(),
            loc: loc(path, n),
        },
        "qualified_type" => GoType::Named {
            pkg: n
                .child_by_field_name("package")
                .map(|p| text(src, p).to_owned()),
            name: n
                .child_by_field_name("name")
                .map(|p| text(src, p).to_owned())
                .unwrap_or_default(),
            loc: loc(path, n),
        },
        "pointer_type" => match n.named_child(0) {
            Some(t) => GoType::Pointer(Box::new(parse_type(path, src, t))),
            None => unsupported(path, src, n),
        },
        "slice_type" => match n.child_by_field_name("element") {
            Some(t) => GoType::Slice(Box::new(parse_type(path, src, t))),
            None => unsupported(path, src, n),
        },
        "array_type" => match n.child_by_field_name("element") {
            Some(t) => GoType::Array(Box::new(parse_type(path, src, t))),
            None => unsupported(path, src, n),
        },
        "map_type" => match (n.child_by_field_name("key"), n.child_by_field_name("value")) {
            (Some(k), Some(v)) => GoType::Map(
                Box::new(parse_type(path, src, k)),
                Box::new(parse_type(path, src, v)),
            ),
            _ => unsupported(path, src, n),
        },
        "parenthesized_type" => match n.named_child(0) {
            Some(t) => parse_type(path, src, t),
            None => unsupported(path, src, n),
        },
        "struct_type" => {
            let mut fields = vec![];
            if let Some(list) = n.named_child(0) {
                let mut cursor = list.walk();
                for f in list.named_children(&mut cursor) {
                    if f.kind() == "field_declaration" {
                        fields.extend(parse_field(path, src, f));
                    }
                }
            }
            GoType::Struct(fields, loc(path, n))
        }
        "interface_type" => GoType::Interface {
            empty: n.named_child_count() == 0,
            loc: loc(path, n),
        },
        _ => unsupported(path, src, n),
    }
}

fn unsupported(path: &Path, src: &str, n: Node) -> GoType {
    GoType::Unsupported {
        what: text(src, n).to_owned(),
        loc: loc(path, n),
    }
}

fn parse_field(path: &Path, src: &str, f: Node) -> Vec<Field> {
    let doc = doc_of(src, f);
    let json = f
        .child_by_field_name("tag")
        .and_then(|t| json_of_tag(text(src, t)));
    let trailing = f
        .next_sibling()
        .filter(|c| c.kind() == "comment" && c.start_position().row == f.end_position().row)
        .map(|c| text(src, c).to_owned());
    let Some(tn) = f.child_by_field_name("type") else {
        return vec![];
    };
    let mut ty = parse_type(path, src, tn);
    let mut cursor = f.walk();
    let names: Vec<Node> = f.children_by_field_name("name", &mut cursor).collect();
    if names.is_empty() {
        // Embedded: `*T` is written as a `*` token before the type.
        let mut c2 = f.walk();
        if f.children(&mut c2).any(|c| c.kind() == "*") {
            ty = GoType::Pointer(Box::new(ty));
        }
        return vec![Field {
            name: None,
            loc: loc(path, f),
            doc,
            ty,
            json,
            trailing,
        }];
    }
    names
        .into_iter()
        .map(|n| Field {
            name: Some(text(src, n).to_owned()),
            loc: loc(path, n),
            doc: doc.clone(),
            ty: ty.clone(),
            json: json.clone(),
            trailing: trailing.clone(),
        })
        .collect()
}

fn parse_type_spec(path: &Path, src: &str, spec: Node, doc: Doc) -> Option<TypeDecl> {
    let name = text(src, spec.child_by_field_name("name")?).to_owned();
    let ty = parse_type(path, src, spec.child_by_field_name("type")?);
    Some(TypeDecl {
        loc: loc(path, spec),
        name,
        doc,
        generic: spec.child_by_field_name("type_parameters").is_some(),
        alias: spec.kind() == "type_alias",
        ty,
    })
}

/// The receiver's type name of a method (`(in *GitRepository)` -> `GitRepository`).
fn receiver_type(src: &str, m: Node) -> Option<String> {
    let recv = m.child_by_field_name("receiver")?;
    let p = recv.named_child(0)?;
    let mut t = p.child_by_field_name("type")?;
    loop {
        match t.kind() {
            "pointer_type" | "parenthesized_type" => t = t.named_child(0)?,
            "generic_type" => t = t.child_by_field_name("type")?,
            _ => break,
        }
    }
    Some(text(src, t).to_owned())
}

/// Parse one file. A syntax error is a located error (tree-sitter recovers, so the first
/// `ERROR` or missing node is reported), but for one inside a function's or method's body:
/// the importer reads no code, and Go newer than the grammar (Go 1.26's `new(expr)`, in
/// cluster-api's conversions) must not stop it.
pub fn parse(path: &Path, text_: String) -> Result<GoFile, Diagnostic> {
    let src = text_.as_str();
    let mut parser = Parser::new();
    parser
        .set_language(&tree_sitter_go::LANGUAGE.into())
        .expect("the Go grammar matches the tree-sitter version");
    let tree = parser.parse(src, None).ok_or_else(|| {
        Diagnostic::new(
            Location::new(path, 1, 1),
            "the Go parser gave up on this file",
        )
    })?;
    let root = tree.root_node();
    if root.has_error() {
        let mut bad = None;
        let mut stack = vec![root];
        while let Some(n) = stack.pop() {
            if n.is_error() || n.is_missing() {
                if bad.is_none_or(|b: Node| n.start_byte() < b.start_byte()) {
                    bad = Some(n);
                }
                continue;
            }
            let body = matches!(n.kind(), "function_declaration" | "method_declaration")
                && n.parent() == Some(root);
            if n.has_error() && !body {
                let mut c = n.walk();
                stack.extend(n.children(&mut c));
            }
        }
        if let Some(n) = bad {
            return Err(Diagnostic::new(loc(path, n), "Go syntax error")
                .with_hint("the importer reads Go that compiles; run `go vet` on the package"));
        }
    }
    let mut file = GoFile {
        path: path.to_owned(),
        text: String::new(),
        package: String::new(),
        license: vec![],
        package_doc: vec![],
        package_markers: vec![],
        imports: BTreeMap::new(),
        items: vec![],
        methods: vec![],
        dropped: 0,
    };
    let mut cursor = root.walk();
    let children: Vec<Node> = root.children(&mut cursor).collect();
    let package_at = children.iter().position(|c| c.kind() == "package_clause");
    if let Some(pi) = package_at {
        let pc = children[pi];
        file.package = pc
            .named_child(0)
            .map(|n| text(src, n).to_owned())
            .unwrap_or_default();
        // Comments before the clause: block comments are the licence; the line group right
        // above is the package doc; marker lines anywhere count.
        let mut next_row = pc.start_position().row;
        let mut adjacent = true;
        let mut doc_rev: Vec<String> = vec![];
        let mut markers_rev: Vec<String> = vec![];
        let mut license_rev: Vec<String> = vec![];
        for c in children[..pi].iter().rev() {
            if c.kind() != "comment" {
                continue;
            }
            let raw = text(src, *c);
            if c.end_position().row + 1 < next_row {
                adjacent = false;
            }
            next_row = c.start_position().row;
            if raw.starts_with("/*") {
                license_rev.push(raw.to_owned());
                adjacent = false;
                continue;
            }
            for l in comment_lines(raw).into_iter().rev() {
                if is_marker(&l) {
                    markers_rev.push(l.trim_start()[1..].trim_end().to_owned());
                } else if adjacent && !l.starts_with("go:") {
                    doc_rev.push(l);
                }
            }
        }
        file.package_doc = doc_rev.into_iter().rev().collect();
        file.package_markers = markers_rev.into_iter().rev().collect();
        file.license = license_rev.into_iter().rev().collect();
    }
    for c in &children {
        match c.kind() {
            "import_declaration" => {
                let mut stack = vec![*c];
                while let Some(n) = stack.pop() {
                    if n.kind() == "import_spec" {
                        let Some(p) = n.child_by_field_name("path") else {
                            continue;
                        };
                        let ipath = text(src, p)
                            .trim_matches(|c| c == '"' || c == '`')
                            .to_owned();
                        let name = match n.child_by_field_name("name") {
                            Some(a) => text(src, a).to_owned(),
                            None => ipath.rsplit('/').next().unwrap_or(&ipath).to_owned(),
                        };
                        file.imports.insert(name, ipath);
                    } else {
                        let mut w = n.walk();
                        stack.extend(n.named_children(&mut w));
                    }
                }
            }
            "type_declaration" => {
                let mut w = c.walk();
                let specs: Vec<Node> = c
                    .named_children(&mut w)
                    .filter(|s| matches!(s.kind(), "type_spec" | "type_alias"))
                    .collect();
                // `type X ...` takes the declaration's doc; specs in `type ( ... )` their own.
                let grouped = specs.len() > 1 || c.child(1).is_some_and(|t| t.kind() == "(");
                for s in specs {
                    let doc = if grouped {
                        doc_of(src, s)
                    } else {
                        doc_of(src, *c)
                    };
                    if let Some(t) = parse_type_spec(path, src, s, doc) {
                        file.items.push(Item::Type(Box::new(t)));
                    }
                }
            }
            "const_declaration" => {
                let mut w = c.walk();
                let specs: Vec<Node> = c
                    .named_children(&mut w)
                    .filter(|s| s.kind() == "const_spec")
                    .collect();
                let grouped = c.child(1).is_some_and(|t| t.kind() == "(");
                let mut consts = vec![];
                for s in specs {
                    let doc = if grouped {
                        doc_of(src, s)
                    } else {
                        doc_of(src, *c)
                    };
                    let ty = s
                        .child_by_field_name("type")
                        .map(|t| parse_type(path, src, t));
                    let values: Vec<Node> = s
                        .child_by_field_name("value")
                        .map(|v| {
                            let mut w = v.walk();
                            v.named_children(&mut w).collect()
                        })
                        .unwrap_or_default();
                    let mut w2 = s.walk();
                    let names: Vec<Node> = s
                        .children_by_field_name("name", &mut w2)
                        .filter(|n| n.kind() == "identifier")
                        .collect();
                    for (i, n) in names.iter().enumerate() {
                        consts.push(ConstDecl {
                            name: text(src, *n).to_owned(),
                            loc: loc(path, *n),
                            doc: doc.clone(),
                            ty: ty.clone(),
                            value: values.get(i).map(|v| text(src, *v).to_owned()),
                            value_kind: values.get(i).map(|v| v.kind().to_owned()),
                        });
                    }
                }
                file.items.push(Item::Consts(consts));
            }
            "method_declaration" => {
                if let (Some(recv), Some(name)) =
                    (receiver_type(src, *c), c.child_by_field_name("name"))
                {
                    file.methods
                        .push((recv, text(src, name).to_owned(), loc(path, name)));
                }
                file.dropped += 1;
            }
            "function_declaration" | "var_declaration" => file.dropped += 1,
            _ => {}
        }
    }
    file.text = text_;
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn docs_tags_and_markers() {
        let src = r#"/* licence */

// +groupName=example.com

// Package v1 is v1.
package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"github.com/x/meta"
)

// +kubebuilder:object:root=true

// Foo is a foo.
// +genclient
type Foo struct {
	metav1.TypeMeta `json:",inline"`
	// A is a.
	// +optional
	A, B *string `json:"a,omitempty"` // trailing
	C map[string][]byte
}

const (
	// X is x.
	X Mode = "x"
	Y = 3
)

func (f *Foo) DeepCopy() *Foo { return nil }
"#;
        let f = parse(Path::new("t.go"), src.to_owned()).unwrap();
        assert_eq!(f.package, "v1");
        assert_eq!(f.package_doc, vec![" Package v1 is v1."]);
        assert_eq!(f.package_markers, vec!["groupName=example.com"]);
        assert_eq!(f.license, vec!["/* licence */"]);
        assert_eq!(f.imports["metav1"], "k8s.io/apimachinery/pkg/apis/meta/v1");
        assert_eq!(f.imports["meta"], "github.com/x/meta");
        let Item::Type(t) = &f.items[0] else { panic!() };
        assert_eq!(t.doc.lines, vec![" Foo is a foo.", " +genclient"]);
        assert_eq!(t.doc.upper_markers, vec![" +kubebuilder:object:root=true"]);
        let GoType::Struct(fields, _) = &t.ty else {
            panic!()
        };
        assert_eq!(fields.len(), 4);
        assert!(fields[0].name.is_none());
        assert_eq!(fields[0].json.as_deref(), Some(",inline"));
        assert_eq!(fields[1].name.as_deref(), Some("A"));
        assert_eq!(fields[2].name.as_deref(), Some("B"));
        assert_eq!(fields[1].doc.lines, vec![" A is a.", " +optional"]);
        assert_eq!(fields[1].trailing.as_deref(), Some("// trailing"));
        assert!(fields[3].doc.lines.is_empty(), "{:?}", fields[3].doc);
        assert!(fields[3].json.is_none());
        let Item::Consts(c) = &f.items[1] else {
            panic!()
        };
        assert_eq!(c[0].name, "X");
        assert_eq!(c[0].value.as_deref(), Some("\"x\""));
        assert_eq!(c[1].value.as_deref(), Some("3"));
        assert_eq!(f.methods[0].0, "Foo");
        assert_eq!(f.methods[0].1, "DeepCopy");
    }

    #[test]
    fn syntax_errors_are_located() {
        let e = parse(
            Path::new("t.go"),
            "package v1\n\ntype Foo struct {\n\tA string `json:\"a\"\n".into(),
        )
        .unwrap_err();
        assert!(e.loc.line >= 3, "{e:?}");
    }
}
