//! The generator's house stays in order:
//! - its top-level modules (each file or directory directly under `src/`) import each other
//!   without a cycle: data flows one way, read -> markers -> resolve -> model -> generators
//!   -> output, so a module can be read, tested and changed from below;
//! - no marker name is a string literal outside `src/markers/names.rs`, where
//!   `markers::Name` writes each once: code names markers by variant, so a typo does not
//!   compile;
//! - generated identifiers are made by one function (`kube_codegen_templates::ident`),
//!   which turns any name into one;
//! - the release profile a registry user installs with (this crate's manifest) is the one
//!   the workspace builds and measures (the root manifest).
//!
//! All read the source as text (comments and test modules left out), as a reviewer would.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use kube_codegen::__private::markers::Name;

/// The crate's source, without what only its tests compile.
struct File {
    path: PathBuf,
    /// Code with comments removed and string literals emptied, lines kept.
    code: String,
    /// String literals: (line, contents as written between the quotes).
    literals: Vec<(usize, String)>,
}

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Split Rust source into code and string literals: comments go, literals are emptied in
/// the code and collected apart (char literals and lifetimes are told apart).
fn lex(src: &str) -> (String, Vec<(usize, String)>) {
    let b = src.as_bytes();
    let (mut code, mut lits) = (String::new(), vec![]);
    let (mut i, mut line) = (0, 1);
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    while i < b.len() {
        let c = b[i];
        if c == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if c == b'/' && b.get(i + 1) == Some(&b'*') {
            let mut depth = 0;
            while i < b.len() {
                if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
                    depth += 1;
                    i += 2;
                } else if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    if b[i] == b'\n' {
                        line += 1;
                        code.push('\n');
                    }
                    i += 1;
                }
            }
        } else if c == b'"'
            || ((c == b'r' || c == b'b' || c == b'c')
                && (i == 0 || !ident(b[i - 1]))
                && matches!(b.get(i + 1), Some(b'"' | b'#' | b'r')))
        {
            // A string: "…", b"…", c"…", r"…", r#"…"#, br#"…"#.
            let start_line = line;
            let mut j = i;
            while j < b.len() && matches!(b[j], b'r' | b'b' | b'c') {
                j += 1;
            }
            let raw = b[i..j].contains(&b'r');
            let mut hashes = 0;
            while j < b.len() && b[j] == b'#' {
                hashes += 1;
                j += 1;
            }
            if b.get(j) != Some(&b'"') {
                // An identifier such as `r#type` or `br`: code.
                code.push(c as char);
                i += 1;
                continue;
            }
            j += 1;
            let body_start = j;
            loop {
                if j >= b.len() {
                    break;
                }
                if b[j] == b'\n' {
                    line += 1;
                }
                if !raw && b[j] == b'\\' {
                    // A `\` at a line's end continues the string on the next line.
                    if b.get(j + 1) == Some(&b'\n') {
                        line += 1;
                    }
                    j += 2;
                    continue;
                }
                if b[j] == b'"'
                    && b[j + 1..]
                        .iter()
                        .take(hashes)
                        .filter(|h| **h == b'#')
                        .count()
                        == hashes
                {
                    break;
                }
                j += 1;
            }
            lits.push((start_line, src[body_start..j.min(b.len())].to_owned()));
            code.push_str("\"\"");
            code.extend(std::iter::repeat_n('\n', line - start_line));
            i = j + 1 + hashes;
        } else if c == b'\'' {
            // A char literal ('a', '\'', '"') or a lifetime ('a).
            if b.get(i + 1) == Some(&b'\\') {
                let mut j = i + 2;
                while j < b.len() && b[j] != b'\'' {
                    j += 1;
                }
                code.push_str("' '");
                i = j + 1;
            } else if let Some(ch) = src[i + 1..].chars().next()
                && src[i + 1 + ch.len_utf8()..].starts_with('\'')
            {
                code.push_str("' '");
                i += 2 + ch.len_utf8();
            } else {
                code.push('\'');
                i += 1;
            }
        } else {
            if c == b'\n' {
                line += 1;
            }
            let ch = src[i..].chars().next().unwrap();
            code.push(ch);
            i += ch.len_utf8();
        }
    }
    (code, lits)
}

/// Everything before the file's test module (`#[cfg(test)] mod …`): what the crate is.
fn without_tests(src: &str) -> &str {
    let mut offset = 0;
    let lines: Vec<&str> = src.split_inclusive('\n').collect();
    for (i, l) in lines.iter().enumerate() {
        if l.trim() == "#[cfg(test)]"
            && lines[i + 1..]
                .iter()
                .find(|n| !n.trim().is_empty())
                .is_some_and(|n| n.trim_start().starts_with("mod "))
        {
            return &src[..offset];
        }
        offset += l.len();
    }
    src
}

fn files() -> Vec<File> {
    let mut paths = vec![];
    rust_files(&src_dir(), &mut paths);
    paths.sort();
    paths
        .into_iter()
        // A test module in a file of its own.
        .filter(|p| p.file_name().is_some_and(|n| n != "tests.rs"))
        .map(|path| {
            let text = std::fs::read_to_string(&path).unwrap();
            let (code, literals) = lex(without_tests(&text));
            File {
                path,
                code,
                literals,
            }
        })
        .collect()
}

/// The top-level module a file belongs to (`resolve/kind.rs` -> `resolve`), or None for the
/// crate root and the binary.
fn top_module(path: &Path) -> Option<String> {
    let rel = path.strip_prefix(src_dir()).unwrap();
    let first = rel.components().next()?.as_os_str().to_str()?.to_owned();
    let name = first.strip_suffix(".rs").unwrap_or(&first).to_owned();
    (!matches!(name.as_str(), "lib" | "main")).then_some(name)
}

/// The first segments of the paths a `use crate::{…}` group names at its top level.
fn group_heads(group: &str) -> Vec<String> {
    let (mut depth, mut heads, mut expect) = (0, vec![], false);
    let mut word = String::new();
    for c in group.chars() {
        if c.is_alphanumeric() || c == '_' {
            if depth == 1 && expect {
                word.push(c);
            }
            continue;
        }
        if !word.is_empty() {
            heads.push(std::mem::take(&mut word));
            expect = false;
        }
        match c {
            '{' => {
                depth += 1;
                expect = depth == 1;
            }
            '}' => {
                depth -= 1;
                if depth == 0 {
                    break;
                }
            }
            ',' if depth == 1 => expect = true,
            _ => {}
        }
    }
    heads
}

/// Names `lib.rs` re-exports, by the top-level module they come from: `crate::Config` is a
/// reference to the module that defines `Config`.
fn lib_reexports(modules: &BTreeSet<String>) -> BTreeMap<String, String> {
    let text = std::fs::read_to_string(src_dir().join("lib.rs")).unwrap();
    let (code, _) = lex(&text);
    let mut out = BTreeMap::new();
    let re = regex::Regex::new(r"pub(?:\(crate\))?\s+use\s+(?:crate::)?(\w+)((?:::\w+)*)(?:::\{([^;]*)\}|\s+as\s+(\w+))?\s*;")
        .unwrap();
    for c in re.captures_iter(&code) {
        let module = c[1].to_owned();
        if !modules.contains(&module) {
            continue;
        }
        if let Some(group) = c.get(3) {
            for item in group.as_str().split(',') {
                let item = item.trim();
                let name = match item.split_once(" as ") {
                    Some((_, alias)) => alias.trim(),
                    None => item.rsplit("::").next().unwrap_or(item).trim(),
                };
                if !name.is_empty() {
                    out.insert(name.to_owned(), module.clone());
                }
            }
        } else if let Some(alias) = c.get(4) {
            out.insert(alias.as_str().to_owned(), module);
        } else {
            let last = c[2].rsplit("::").next().filter(|s| !s.is_empty());
            out.insert(last.unwrap_or(&c[1]).to_owned(), module);
        }
    }
    out
}

#[test]
fn top_level_modules_import_without_a_cycle() {
    let files = files();
    let modules: BTreeSet<String> = files.iter().filter_map(|f| top_module(&f.path)).collect();
    let reexports = lib_reexports(&modules);
    // module -> module it uses -> where.
    let mut edges: BTreeMap<String, BTreeMap<String, Vec<String>>> = BTreeMap::new();
    let mut unknown = vec![];
    let single = regex::Regex::new(r"\bcrate::(\w+)").unwrap();
    for f in &files {
        let Some(from) = top_module(&f.path) else {
            continue;
        };
        for (n, line) in f.code.lines().enumerate() {
            let mut heads: Vec<String> = single
                .captures_iter(line)
                .map(|c| c[1].to_owned())
                .collect();
            if let Some(at) = line.find("crate::{") {
                // A group may span lines: read on from here.
                let rest: String = f.code.lines().skip(n).collect::<Vec<_>>().join("\n");
                heads.extend(group_heads(&rest[at + "crate::".len()..]));
            }
            for head in heads {
                let to = if modules.contains(&head) {
                    head
                } else if let Some(m) = reexports.get(&head) {
                    m.clone()
                } else if head.starts_with(|c: char| c.is_uppercase()) || head == "__private" {
                    // An item lib.rs defines itself: the crate root, which uses everything.
                    "lib".to_owned()
                } else {
                    unknown.push(format!("{}:{}: crate::{head}", f.path.display(), n + 1));
                    continue;
                };
                if to != from {
                    edges
                        .entry(from.clone())
                        .or_default()
                        .entry(to)
                        .or_default()
                        .push(format!(
                            "{}:{}",
                            f.path.strip_prefix(src_dir()).unwrap().display(),
                            n + 1
                        ));
                }
            }
        }
    }
    assert!(
        unknown.is_empty(),
        "paths this test cannot place: {unknown:#?}"
    );
    // The crate root re-exports every module: an arrow into it closes a circle.
    let mut nodes: Vec<String> = modules.iter().cloned().collect();
    nodes.push("lib".to_owned());
    for m in &modules {
        edges
            .entry("lib".to_owned())
            .or_default()
            .entry(m.clone())
            .or_default()
            .push("lib.rs".to_owned());
    }
    let cycles = strongly_connected(&nodes, &edges);
    let mut report = String::new();
    for scc in &cycles {
        report.push_str(&format!("\ncycle among {scc:?}:\n"));
        for a in scc {
            for (b, at) in edges.get(a).into_iter().flatten() {
                if scc.contains(b) && a != "lib" {
                    report.push_str(&format!(
                        "  {a} -> {b}: {}\n",
                        at[..at.len().min(3)].join(", ")
                    ));
                }
            }
        }
    }
    assert!(
        cycles.is_empty(),
        "the generator's top-level modules import in a circle:{report}"
    );
}

/// Tarjan's strongly connected components with more than one node.
fn strongly_connected(
    nodes: &[String],
    edges: &BTreeMap<String, BTreeMap<String, Vec<String>>>,
) -> Vec<Vec<String>> {
    struct T<'a> {
        edges: &'a BTreeMap<String, BTreeMap<String, Vec<String>>>,
        index: BTreeMap<String, usize>,
        low: BTreeMap<String, usize>,
        stack: Vec<String>,
        on: BTreeSet<String>,
        next: usize,
        out: Vec<Vec<String>>,
    }
    fn visit(t: &mut T, v: &str) {
        t.index.insert(v.to_owned(), t.next);
        t.low.insert(v.to_owned(), t.next);
        t.next += 1;
        t.stack.push(v.to_owned());
        t.on.insert(v.to_owned());
        let succ: Vec<String> = t
            .edges
            .get(v)
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default();
        for w in succ {
            if !t.index.contains_key(&w) {
                visit(t, &w);
                let lw = t.low[&w];
                let lv = t.low.get_mut(v).unwrap();
                *lv = (*lv).min(lw);
            } else if t.on.contains(&w) {
                let iw = t.index[&w];
                let lv = t.low.get_mut(v).unwrap();
                *lv = (*lv).min(iw);
            }
        }
        if t.low[v] == t.index[v] {
            let mut scc = vec![];
            loop {
                let w = t.stack.pop().unwrap();
                t.on.remove(&w);
                let done = w == v;
                scc.push(w);
                if done {
                    break;
                }
            }
            if scc.len() > 1 {
                scc.sort();
                t.out.push(scc);
            }
        }
    }
    let mut t = T {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: vec![],
        on: BTreeSet::new(),
        next: 0,
        out: vec![],
    };
    for n in nodes {
        if !t.index.contains_key(n) {
            visit(&mut t, n);
        }
    }
    t.out
}

/// Marker names that are also ordinary words of OpenAPI schemas and serde (`default`,
/// `required`, ...): a literal equal to one is most often the schema keyword, so only the
/// marker-text forms of these (`+default`, `default=`) count.
const ALSO_WORDS: &[Name] = &[
    Name::Default,
    Name::Nullable,
    Name::Required,
    Name::Optional,
];

/// Namespaces of marker names: a literal that starts with one writes marker text.
const NAMESPACES: &[&str] = &["kubebuilder:", "genclient", "kube-codegen:", "k8s:"];

/// Why a literal writes a marker name, if it does.
fn names_a_marker(lit: &str) -> Option<String> {
    let boundary = |rest: &str| {
        rest.chars()
            .next()
            .is_none_or(|c| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
    };
    for name in Name::ALL {
        let text = name.as_str();
        if lit == text && !ALSO_WORDS.contains(name) {
            return Some(format!("is the marker name `{text}`"));
        }
        if let Some(rest) = lit.strip_prefix('+').and_then(|l| l.strip_prefix(text))
            && boundary(rest)
        {
            return Some(format!("writes the marker `+{text}`"));
        }
        if let Some(rest) = lit.strip_prefix(text)
            && (rest.starts_with('=') || (rest.starts_with(':') && !rest.starts_with(": ")))
        {
            return Some(format!("writes the marker `{text}` with its value"));
        }
    }
    let body = lit.strip_prefix('+').unwrap_or(lit);
    for ns in NAMESPACES {
        if let Some(rest) = body.strip_prefix(ns)
            && rest.starts_with(|c: char| c.is_ascii_alphabetic() || c == ':' || c == '=')
        {
            return Some(format!("writes a marker of the `{ns}` namespace"));
        }
    }
    None
}

#[test]
fn no_marker_name_is_a_string_literal_outside_its_spec() {
    let spec = src_dir().join("markers").join("names.rs");
    let mut found = vec![];
    for f in files() {
        if f.path == spec {
            continue;
        }
        for (line, lit) in &f.literals {
            if let Some(why) = names_a_marker(lit) {
                found.push(format!(
                    "{}:{line}: \"{lit}\" {why}",
                    f.path.strip_prefix(src_dir()).unwrap().display()
                ));
            }
        }
    }
    assert!(
        found.is_empty(),
        "marker names written as text outside markers/names.rs (use `markers::Name`): \n{}",
        found.join("\n")
    );
}

/// Where identifiers of generated Rust are made: the one function that turns any name into
/// an identifier (`kube_codegen_templates::rust_ident`, `ident`). An identifier made
/// anywhere else (`format_ident!`, `Ident::new`) panics on a name Rust does not take, as
/// `+groupName=1password.example.com` once did (issue 30).
const IDENT_MAKER: &str = "templates/src/lib.rs";

#[test]
fn generated_identifiers_are_made_by_one_function() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let mut paths = vec![];
    rust_files(&src_dir(), &mut paths);
    rust_files(&root.join("templates").join("src"), &mut paths);
    let mut found = vec![];
    for path in paths {
        let rel = path.strip_prefix(root).unwrap();
        if rel == Path::new(IDENT_MAKER) {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let (code, _) = lex(without_tests(&text));
        for (i, line) in code.lines().enumerate() {
            if ["format_ident!", "Ident::new(", "Ident::new_raw("]
                .iter()
                .any(|m| line.contains(m))
            {
                found.push(format!("{}:{}: {}", rel.display(), i + 1, line.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "identifiers made outside {IDENT_MAKER} (use `kube_codegen_templates::ident`):\n{}",
        found.join("\n")
    );
}

/// The checks themselves: each catches what it is for.
#[test]
fn the_checks_catch_what_they_are_for() {
    assert!(names_a_marker("kubebuilder:validation:Minimum").is_some());
    assert!(names_a_marker("+optional").is_some());
    assert!(names_a_marker("listType=map").is_some());
    assert!(names_a_marker("kubebuilder:validation:{name}").is_some());
    assert!(names_a_marker("default").is_none());
    assert!(names_a_marker("kube-codegen: imported 3 CRDs").is_none());
    assert!(names_a_marker("`+kubebuilder:rbac` grants no verbs").is_none());
    let (code, lits) = lex(
        "let a = \"x // y\"; // c\nlet b = r#\"q\"z\"#; let c = '\"'; fn f<'a>() {}\nlet d = \"a\\\n b\";\nlet e = \"e\";",
    );
    assert_eq!(
        lits.iter().map(|(l, _)| *l).collect::<Vec<_>>(),
        [1, 2, 3, 5],
        "{lits:?}"
    );
    assert_eq!(
        lits[..2],
        [(1, "x // y".to_owned()), (2, "q\"z".to_owned())]
    );
    assert!(!code.contains("// c") && code.contains("fn f<'a>"));
    assert_eq!(
        group_heads("{diagnostics::{Diagnostic, Location}, markers::Name, model};"),
        ["diagnostics", "markers", "model"]
    );
    let nodes = ["a", "b", "c"].map(str::to_owned);
    let mut edges: BTreeMap<String, BTreeMap<String, Vec<String>>> = BTreeMap::new();
    edges
        .entry("a".into())
        .or_default()
        .insert("b".into(), vec![]);
    edges
        .entry("b".into())
        .or_default()
        .insert("c".into(), vec![]);
    assert!(strongly_connected(&nodes, &edges).is_empty());
    edges
        .entry("c".into())
        .or_default()
        .insert("a".into(), vec![]);
    assert_eq!(strongly_connected(&nodes, &edges), [["a", "b", "c"]]);
}

/// `cargo install kube-codegen` builds with the published manifest's `[profile]`, while
/// everything in this workspace (`cargo install --path generator`, the benchmarks) builds with
/// the root's: a profile tuned in one and forgotten in the other would make the install
/// BENCHMARKS.md measures differ from the one users get.
#[test]
fn the_published_release_profile_is_the_workspace_one() {
    let profile = |manifest: &Path| -> toml::Value {
        let text = std::fs::read_to_string(manifest).unwrap();
        let doc: toml::Table = toml::from_str(&text).unwrap();
        doc.get("profile")
            .and_then(|p| p.get("release"))
            .cloned()
            .unwrap_or_else(|| panic!("{} has no [profile.release]", manifest.display()))
    };
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let ours = profile(&crate_dir.join("Cargo.toml"));
    let workspace = profile(&crate_dir.join("../Cargo.toml"));
    assert_eq!(
        ours, workspace,
        "generator/Cargo.toml's [profile.release] (what a registry user's install builds) \
         differs from the workspace root's (what `cargo install --path generator` and the \
         benchmarks build): copy one to the other"
    );
}
