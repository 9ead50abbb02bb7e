//! Stage 1: read the crate's Rust files and split them into modules with their `use`
//! imports, doc comments and items. Nothing here knows about Kubernetes.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use syn::spanned::Spanned;

use crate::diagnostics::{Diagnostic, Diagnostics, Location};

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
    pub loc: Location,
    /// Inner doc lines (`//!`), where package markers live.
    pub inner_docs: Vec<DocLine>,
    /// `use` imports: local name -> absolute path (crate-local paths start with `crate`).
    pub uses: BTreeMap<String, Vec<String>>,
    /// Absolute paths of `use path::*;` imports.
    pub globs: Vec<Vec<String>>,
    pub structs: Vec<syn::ItemStruct>,
    pub enums: Vec<syn::ItemEnum>,
    /// Names of child modules, to resolve `child::Type` paths.
    pub children: Vec<String>,
}

/// Doc comment lines of some attributes, each with its location. A `///` comment's span
/// starts at the slashes, so the text begins three columns later.
pub fn doc_lines(file: &Path, attrs: &[syn::Attribute]) -> Vec<DocLine> {
    let mut out = Vec::new();
    for attr in attrs.iter().filter(|a| a.path().is_ident("doc")) {
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
        let start = Location::of_span(file, attr.span());
        for (i, line) in s.value().split('\n').enumerate() {
            let lead = line.len() - line.trim_start().len();
            let column = if i == 0 {
                start.column + 3 + lead
            } else {
                lead + 1
            };
            out.push(DocLine {
                text: line.to_owned(),
                loc: Location::new(file, start.line + i, column),
            });
        }
    }
    out
}

/// Prose of a doc comment: marker lines removed, one leading space stripped, surrounding
/// blank lines trimmed.
pub fn doc_text(lines: &[DocLine]) -> String {
    let kept: Vec<&str> = lines
        .iter()
        .map(|l| l.text.strip_prefix(' ').unwrap_or(&l.text))
        .filter(|t| !t.trim_start().starts_with('+'))
        .map(str::trim_end)
        .collect();
    kept.join("\n").trim().to_owned()
}

/// The module path of a file below `src/`: `lib.rs` -> [], `a/mod.rs` -> [a], `a/b.rs` -> [a, b].
fn module_path_of(src_root: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src_root).unwrap_or(file);
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    if let Some(last) = parts.pop() {
        let stem = last.trim_end_matches(".rs");
        let is_root = parts.is_empty() && matches!(stem, "lib" | "main");
        if stem != "mod" && !is_root {
            parts.push(stem.to_owned());
        }
    }
    parts
}

/// Collect all `.rs` files below `dir` (or `dir` itself if it is a file), sorted.
pub fn rust_files(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    if dir.is_file() {
        out.push(dir.to_owned());
        return Ok(out);
    }
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d)? {
            let path = entry?.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    out.sort();
    Ok(out)
}

/// 1-based line and column of a byte offset, for errors in files that are not valid UTF-8.
fn line_col(bytes: &[u8], offset: usize) -> (usize, usize) {
    let before = &bytes[..offset.min(bytes.len())];
    let line = before.iter().filter(|b| **b == b'\n').count() + 1;
    let col = before.iter().rev().take_while(|b| **b != b'\n').count() + 1;
    (line, col)
}

/// Read and parse one file into its modules.
pub fn parse_file(src_root: &Path, file: &Path, diags: &mut Diagnostics) -> Vec<Module> {
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
    let text = match String::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => {
            let offset = e.utf8_error().valid_up_to();
            let (line, col) = line_col(e.as_bytes(), offset);
            diags.push(
                Diagnostic::new(Location::new(file, line, col), "file is not valid UTF-8")
                    .with_hint("Rust sources must be UTF-8; re-save the file with UTF-8 encoding"),
            );
            return vec![];
        }
    };
    let parsed = match syn::parse_file(&text) {
        Ok(f) => f,
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
    let path = module_path_of(src_root, file);
    collect_module(
        file,
        path,
        Location::new(file, 1, 1),
        &parsed.attrs,
        parsed.items,
        &mut out,
    );
    out
}

fn collect_module(
    file: &Path,
    path: Vec<String>,
    loc: Location,
    attrs: &[syn::Attribute],
    items: Vec<syn::Item>,
    out: &mut Vec<Module>,
) {
    let inner: Vec<syn::Attribute> = attrs
        .iter()
        .filter(|a| matches!(a.style, syn::AttrStyle::Inner(_)))
        .cloned()
        .collect();
    let mut module = Module {
        inner_docs: doc_lines(file, &inner),
        path: path.clone(),
        file: file.to_owned(),
        loc,
        uses: BTreeMap::new(),
        globs: vec![],
        structs: vec![],
        enums: vec![],
        children: vec![],
    };
    let mut nested = Vec::new();
    for item in items {
        match item {
            syn::Item::Struct(s) => module.structs.push(s),
            syn::Item::Enum(e) => module.enums.push(e),
            syn::Item::Use(u) => collect_use(&path, &u.tree, vec![], &mut module),
            syn::Item::Mod(m) => {
                module.children.push(m.ident.to_string());
                if let Some((_, items)) = m.content {
                    let mut child = path.clone();
                    child.push(m.ident.to_string());
                    nested.push((
                        child,
                        Location::of_span(file, m.ident.span()),
                        m.attrs,
                        items,
                    ));
                }
            }
            _ => {}
        }
    }
    out.push(module);
    for (child, loc, attrs, items) in nested {
        collect_module(file, child, loc, &attrs, items, out);
    }
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

fn collect_use(
    module_path: &[String],
    tree: &syn::UseTree,
    prefix: Vec<String>,
    module: &mut Module,
) {
    match tree {
        syn::UseTree::Path(p) => {
            let mut next = prefix;
            next.push(p.ident.to_string());
            collect_use(module_path, &p.tree, next, module);
        }
        syn::UseTree::Name(n) => {
            let name = n.ident.to_string();
            let mut full = prefix;
            if name == "self" {
                let alias = full.last().cloned().unwrap_or_default();
                module.uses.insert(alias, absolutize(module_path, &full));
            } else {
                full.push(name.clone());
                module.uses.insert(name, absolutize(module_path, &full));
            }
        }
        syn::UseTree::Rename(r) => {
            let mut full = prefix;
            if r.ident != "self" {
                full.push(r.ident.to_string());
            }
            module
                .uses
                .insert(r.rename.to_string(), absolutize(module_path, &full));
        }
        syn::UseTree::Glob(_) => module.globs.push(absolutize(module_path, &prefix)),
        syn::UseTree::Group(g) => {
            for t in &g.items {
                collect_use(module_path, t, prefix.clone(), module);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
