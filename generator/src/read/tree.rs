//! Which files make the crate: its Rust files on disk, and the module tree `mod`
//! declarations (with `#[path]`) build from the crate roots, so each file is read at the
//! module path rustc gives it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::{ModDecl, Module};

/// The module path of a file below `src/`: `lib.rs` -> `[]`, `a/mod.rs` -> `[a]`, `a/b.rs` -> `[a, b]`.
/// Where the crate's `mod` declarations say otherwise (`#[path]`), [`module_tree`] wins.
pub fn module_path_of(src_root: &Path, file: &Path) -> Vec<String> {
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

/// Where scanned files sit in the crate's module tree, found by following `mod name;`
/// declarations (and their `#[path]`) from the files no declaration reaches, as rustc does.
#[derive(Debug, Default)]
pub struct ModuleTree {
    /// Every file a scanned declaration reaches: its module path and whether that
    /// declaration is `pub`/`pub(crate)`.
    pub declared: BTreeMap<PathBuf, (Vec<String>, bool)>,
    /// Files that no declaration reaches although the crate root was scanned: not part of
    /// the crate, so not part of its API.
    pub orphans: Vec<PathBuf>,
    /// `mod name;` declarations of the crate whose file is nowhere on disk (rustc refuses
    /// them), with the paths rustc looks at.
    pub missing: Vec<(ModDecl, Vec<PathBuf>)>,
}

/// A file whose children live beside it (`lib.rs`, `main.rs`, `mod.rs`, or any file loaded
/// through `#[path]`) rather than in a directory named after it.
fn is_mod_rs(file: &Path, via_path_attr: bool) -> bool {
    via_path_attr
        || file
            .file_name()
            .is_some_and(|n| n == "mod.rs" || n == "lib.rs" || n == "main.rs")
}

/// `a/./b/../c` -> `a/c`, without touching the file system (the file may be a symlink).
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir if out.file_name().is_some() => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// Follow the `mod` declarations of parsed files (parsed with [`module_path_of`]'s paths).
/// `crate_roots` are the files rustc starts from (`src/lib.rs`, `src/main.rs`, `src/bin/*`).
pub fn module_tree(
    modules: &[Module],
    files: &[PathBuf],
    crate_roots: &[PathBuf],
    src_root: &Path,
) -> ModuleTree {
    let known: std::collections::BTreeSet<PathBuf> = files.iter().map(|f| normalize(f)).collect();
    let mut decls: BTreeMap<PathBuf, Vec<&ModDecl>> = BTreeMap::new();
    for m in modules {
        decls
            .entry(normalize(&m.file))
            .or_default()
            .extend(&m.file_children);
    }
    // The files a declaration in `file` may load, as rustc looks for them.
    let candidates = |file: &Path, via_path_attr: bool, d: &ModDecl| -> Vec<PathBuf> {
        let parent = file.parent().unwrap_or(Path::new(""));
        let mut dir = if is_mod_rs(file, via_path_attr) {
            parent.to_owned()
        } else {
            parent.join(file.file_stem().unwrap_or_default())
        };
        for inline in &d.inline_parents {
            dir.push(inline.trim_start_matches("r#"));
        }
        let candidates = match &d.path_attr {
            // Outside inline modules `#[path]` is relative to the declaring file's directory.
            Some(p) if d.inline_parents.is_empty() => vec![parent.join(p)],
            Some(p) => vec![dir.join(p)],
            None => {
                let name = d.name.trim_start_matches("r#");
                vec![
                    dir.join(format!("{name}.rs")),
                    dir.join(name).join("mod.rs"),
                ]
            }
        };
        candidates.into_iter().map(|c| normalize(&c)).collect()
    };
    // The file a declaration in `file` loads, if it was scanned.
    let target = |file: &Path, via_path_attr: bool, d: &ModDecl| -> Option<PathBuf> {
        candidates(file, via_path_attr, d)
            .into_iter()
            .find(|c| known.contains(c))
    };
    let mut targeted = std::collections::BTreeSet::new();
    for (file, ds) in &decls {
        for d in ds {
            // Whether `file` was itself loaded through `#[path]` is not known yet; both
            // readings only matter for a non-mod-rs file with a `#[path]` child.
            if let Some(t) = target(file, false, d) {
                targeted.insert(t);
            }
        }
    }
    let mut tree = ModuleTree::default();
    // With a crate root scanned, the tree starts there, as rustc's does; otherwise (inputs
    // below `src/`, say `src/apis`) at every file no scanned declaration reaches.
    let scanned_root = crate_roots.iter().any(|r| known.contains(&normalize(r)));
    let mut queue: std::collections::VecDeque<(PathBuf, Vec<String>, bool)> = known
        .iter()
        .filter(|f| {
            if scanned_root {
                crate_roots.iter().any(|c| normalize(c) == **f)
            } else {
                !targeted.contains(*f)
            }
        })
        .map(|r| (r.clone(), module_path_of(src_root, r), false))
        .collect();
    let mut seen = std::collections::BTreeSet::new();
    while let Some((file, path, via_path_attr)) = queue.pop_front() {
        if !seen.insert(file.clone()) {
            continue;
        }
        for d in decls.get(&file).into_iter().flatten() {
            let Some(t) = target(&file, via_path_attr, d) else {
                // Not scanned (the input may be part of the crate), or not there at all.
                let looked_at = candidates(&file, via_path_attr, d);
                if !looked_at.iter().any(|c| c.is_file()) {
                    tree.missing.push(((*d).clone(), looked_at));
                }
                continue;
            };
            let mut child = path.clone();
            child.extend(d.inline_parents.iter().cloned());
            child.push(d.name.clone());
            tree.declared
                .entry(t.clone())
                .or_insert((child.clone(), d.visible));
            queue.push_back((t, child, d.path_attr.is_some()));
        }
    }
    tree.orphans = known.into_iter().filter(|f| !seen.contains(f)).collect();
    tree
}

/// All `.rs` files below `dir` (or `dir` itself if it is a file), sorted, each directory
/// read once (symlinks into loops are not followed round).
pub fn rust_files(dir: &Path) -> std::io::Result<crate::walk::Walk> {
    crate::walk::files_below(dir, |p| p.extension().is_some_and(|e| e == "rs"))
}
