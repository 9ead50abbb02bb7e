//! Rust names for what a CRD names in JSON: Go-like type names from the property path
//! (`CertificateSpecKeystoresJks`), snake_case fields, module names for groups; every
//! collision resolved by a numeric suffix, types in the order of the naming rule
//! (`types::Plan`, README "Names of imported types"), so a name is the same in every run.

use std::collections::BTreeSet;

/// Words Rust reserves: a field with such a name gets a trailing `_` (and a serde rename).
const KEYWORDS: &[&str] = &[
    "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else", "enum", "extern",
    "false", "fn", "for", "gen", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut",
    "pub", "ref", "return", "self", "Self", "static", "struct", "super", "trait", "true", "type",
    "unsafe", "use", "where", "while", "abstract", "become", "box", "do", "final", "macro",
    "override", "priv", "typeof", "unsized", "virtual", "yield", "try", "union",
];

/// Type names the generated files use unqualified (or that would shadow std/prelude types
/// the generator recognises by name): an imported type never takes one of them.
const RESERVED_TYPES: &[&str] = &[
    "String",
    "Vec",
    "Option",
    "Box",
    "Some",
    "None",
    "Ok",
    "Err",
    "Result",
    "Self",
    "BTreeMap",
    "BTreeSet",
    "HashMap",
    "HashSet",
    "Value",
    "Map",
    "Arc",
    "Rc",
    "VecDeque",
    "IndexMap",
    "Deserialize",
    "Serialize",
    "Default",
    "Clone",
    "Debug",
    "PartialEq",
    "ObjectMeta",
    "TypeMeta",
    "IntOrString",
    "Quantity",
    "Time",
    "MicroTime",
    "bool",
    "str",
    "char",
    "i8",
    "i16",
    "i32",
    "i64",
    "i128",
    "u8",
    "u16",
    "u32",
    "u64",
    "u128",
    "f32",
    "f64",
    "isize",
    "usize",
];

/// `keystores` -> `Keystores`, `podTemplate` -> `PodTemplate`, `x-foo.bar` -> `XFooBar`.
pub fn upper_camel(json: &str) -> String {
    let mut out = String::new();
    for part in json.split(|c: char| !c.is_ascii_alphanumeric()) {
        let mut chars = part.chars();
        if let Some(first) = chars.next() {
            out.extend(first.to_uppercase());
            out.extend(chars);
        }
    }
    if out.is_empty() || out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, 'T');
    }
    out
}

/// `deploymentName` -> `deployment_name`, `HTTPRoute` -> `http_route`, `type` -> `type_`.
pub fn snake(json: &str) -> String {
    // The words are templates' snake_case's; what is no identifier character becomes `_`.
    let mut out = String::with_capacity(json.len() + 4);
    for c in kube_codegen_templates::snake_case(json).chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c);
        } else if !out.is_empty() && !out.ends_with('_') {
            out.push('_');
        }
    }
    let mut out = out.trim_end_matches('_').to_owned();
    if out.is_empty() {
        out = "field".into();
    }
    if out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert_str(0, "f_");
    }
    if KEYWORDS.contains(&out.as_str()) {
        out.push('_');
    }
    out
}

/// A module name for a group: its first label without dashes (`cert-manager.io` ->
/// `certmanager`, `acme.cert-manager.io` -> `acme`), as Go projects name their packages.
pub fn group_module(group: &str) -> String {
    let first = group.split('.').next().unwrap_or(group);
    module_ident(&first.replace('-', ""))
}

/// The whole group as a module name, for when first labels collide.
pub fn group_module_full(group: &str) -> String {
    module_ident(&group.replace('-', "").replace('.', "_"))
}

/// A valid lowercase module identifier.
pub fn module_ident(s: &str) -> String {
    let mut out: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect();
    if out.is_empty() || out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, 'v');
    }
    if KEYWORDS.contains(&out.as_str()) {
        out.push('_');
    }
    out
}

/// Why `name` cannot be the name of a kind's Rust struct (which `generate` takes the kind
/// from), or `None` when it can: not a Rust identifier, a Rust keyword, or a name the
/// generated files use unqualified ([`RESERVED_TYPES`]: a struct `Option` shadows Rust's).
pub fn kind_name_problem(name: &str) -> Option<&'static str> {
    if name.is_empty() {
        Some("it is empty")
    } else if KEYWORDS.contains(&name) {
        Some("it is a Rust keyword")
    } else if RESERVED_TYPES.contains(&name) {
        Some(
            "it is a name the generated Rust uses for a type of its own (Rust's prelude, std, serde, k8s-openapi), which a struct of that name would shadow",
        )
    } else if !name.starts_with(|c: char| c.is_ascii_alphabetic())
        || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    {
        Some("it is not a Rust identifier")
    } else {
        None
    }
}

/// The Rust name of a Go type (`upper_camel`), with a trailing `_` when that is a name
/// [`kind_name_problem`] refuses (`Self`, `Option`, `String`...): the name of a type is in
/// no JSON, so only the Rust changes (the importer says so).
#[cfg(feature = "import-go")]
pub fn go_type_ident(go: &str) -> String {
    let name = upper_camel(go);
    if kind_name_problem(&name).is_some() {
        name + "_"
    } else {
        name
    }
}

/// Names taken in one scope (a module's types, a struct's fields).
#[derive(Debug, Default)]
pub struct Names(BTreeSet<String>);

impl Names {
    /// Types: the reserved names are taken from the start.
    pub fn for_types() -> Self {
        Names(RESERVED_TYPES.iter().map(|s| (*s).to_owned()).collect())
    }

    /// `want`, or `want2`, `want3`... (`want_2` for snake_case names): the first free one.
    pub fn claim(&mut self, want: &str) -> String {
        if self.0.insert(want.to_owned()) {
            return want.to_owned();
        }
        let sep = if want.contains('_') || want.starts_with(|c: char| c.is_ascii_lowercase()) {
            "_"
        } else {
            ""
        };
        (2..)
            .map(|n| format!("{want}{sep}{n}"))
            .find(|c| self.0.insert(c.clone()))
            .expect("an unbounded range has a free name")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(upper_camel("keystores"), "Keystores");
        assert_eq!(upper_camel("podTemplate"), "PodTemplate");
        assert_eq!(upper_camel("x-foo.bar"), "XFooBar");
        assert_eq!(upper_camel("1a"), "T1a");
        assert_eq!(snake("deploymentName"), "deployment_name");
        assert_eq!(snake("HTTPRoute"), "http_route");
        assert_eq!(snake("type"), "type_");
        assert_eq!(snake("$ref"), "ref_");
        assert_eq!(snake("x-kubernetes"), "x_kubernetes");
        assert_eq!(snake("ipv4CIDRs"), "ipv4_cidrs");
        assert_eq!(group_module("cert-manager.io"), "certmanager");
        assert_eq!(
            group_module_full("acme.cert-manager.io"),
            "acme_certmanager_io"
        );
        let mut n = Names::for_types();
        assert_eq!(n.claim("Foo"), "Foo");
        assert_eq!(n.claim("Foo"), "Foo2");
        assert_eq!(n.claim("String"), "String2");
        let mut f = Names::default();
        assert_eq!(f.claim("a_b"), "a_b");
        assert_eq!(f.claim("a_b"), "a_b_2");
    }
}
