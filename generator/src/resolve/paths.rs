//! How a type is named: `use` paths made absolute, and the path generated code (in another
//! module of the crate) reaches a type by.

use std::collections::HashMap;

use crate::read::{self as src, Module};

/// The modules read, and each found by its path: resolve asks for modules by path once per
/// type and per `use` followed, and a scan of every module each time grew with the square
/// of the API's size (a 1000-kind API has about 300 modules and 8,000 types).
pub(super) struct Modules<'a> {
    all: &'a [Module],
    by_path: HashMap<&'a [String], &'a Module>,
}

impl<'a> Modules<'a> {
    pub(super) fn new(all: &'a [Module]) -> Self {
        let mut by_path = HashMap::with_capacity(all.len());
        for m in all {
            // A module read twice is reported by resolve; the first reading is the one used.
            by_path.entry(m.path.as_slice()).or_insert(m);
        }
        Modules { all, by_path }
    }

    /// The module at `path`, if this run read it.
    pub(super) fn at(&self, path: &[String]) -> Option<&'a Module> {
        self.by_path.get(path).copied()
    }
}

/// A `use` path of module `m`, absolute: `use` paths may start at a child module
/// (`pub use types::*;`), which `source` cannot tell from an external crate.
pub(super) fn anchored(m: &Module, path: &[String]) -> Vec<String> {
    match path.first() {
        Some(first) if m.children.contains(first) => {
            let mut p = vec!["crate".to_owned()];
            p.extend(m.path.iter().cloned());
            p.extend(path.iter().cloned());
            p
        }
        _ => path.to_vec(),
    }
}

/// The path generated code (in another module of the crate) can name `item` by: where it
/// is defined if every module on the way is `pub`/`pub(crate)`, else where a reachable module
/// re-exports it (`mod types; pub use types::*;`, the usual port of a Go package's files).
pub(super) fn public_path(
    modules: &Modules<'_>,
    module: &Module,
    item: &src::Item,
) -> Option<Vec<String>> {
    if !item.visible {
        return None;
    }
    // A module this run did not read (a parent outside the inputs) is taken as reachable.
    let reachable = |path: &[String]| {
        (1..=path.len()).all(|n| modules.at(&path[..n]).is_none_or(|m| m.visible))
    };
    let at = |path: &[String]| {
        let mut p = path.to_vec();
        p.push(item.ident.clone());
        p
    };
    if reachable(&module.path) {
        return Some(at(&module.path));
    }
    let mut defined = vec!["crate".to_owned()];
    defined.extend(module.path.iter().cloned());
    let mut item_path = defined.clone();
    item_path.push(item.ident.clone());
    modules
        .all
        .iter()
        .filter(|m| {
            m.reexported_globs.iter().any(|g| anchored(m, g) == defined)
                || (m.reexports.contains(&item.ident)
                    && m.uses.get(&item.ident).map(|u| anchored(m, u)) == Some(item_path.clone()))
        })
        .filter(|m| reachable(&m.path))
        .min_by_key(|m| m.path.len())
        .map(|m| at(&m.path))
}
