//! What generated Rust needs of the API's types, checked before any Rust is generated:
//! types the generated modules name must be nameable from them (public, in a reachable
//! module), a kind's `ObjectMeta` field must be `metadata` (`kube::Resource::meta()` reads
//! it), and deep copies build on `Clone` and read every field. Each check belongs to the
//! generators whose code relies on it, and runs only for them.

use std::collections::BTreeSet;

use crate::diagnostics::{Diagnostic, Diagnostics};
use crate::model::*;

/// Apply configurations name the types they hold as they are (not configurations of
/// their own): each must be nameable.
pub(super) fn check_apply_configurations(api: &Api, diags: &mut Diagnostics) {
    struct Walk<'a> {
        api: &'a Api,
        configs: BTreeSet<&'a str>,
        checked: BTreeSet<&'a str>,
    }
    impl<'a> Walk<'a> {
        fn config(&mut self, key: &'a str, diags: &mut Diagnostics) {
            if !self.configs.insert(key) {
                return;
            }
            let Shape::Struct(fields) = &self.api.types[key].shape else {
                return;
            };
            for f in fields.iter().filter(|f| !f.skip) {
                self.ty(&f.ty, diags);
            }
        }

        fn ty(&mut self, ty: &'a TypeRef, diags: &mut Diagnostics) {
            match ty {
                TypeRef::Option(inner)
                | TypeRef::Alias { target: inner, .. }
                | TypeRef::List { item: inner, .. }
                | TypeRef::Array { item: inner, .. }
                | TypeRef::Map(inner) => self.ty(inner, diags),
                TypeRef::Local(key) => {
                    let decl = &self.api.types[key];
                    if decl.has_apply_configuration() {
                        self.config(key, diags);
                    } else if self.checked.insert(key)
                        && let Some(d) = unnameable(decl)
                    {
                        diags.push(d);
                    }
                }
                _ => {}
            }
        }
    }
    let mut walk = Walk {
        api,
        configs: BTreeSet::new(),
        checked: BTreeSet::new(),
    };
    for k in api.packages.values().flat_map(|p| &p.kinds) {
        walk.config(&k.type_key, diags);
    }
}

/// Every kind's `ObjectMeta` field is named `metadata`: the typed clients, listers and
/// informers reach it through `kube::Resource::meta()`.
pub(super) fn check_kinds(api: &Api, diags: &mut Diagnostics) {
    for k in api.packages.values().flat_map(|p| &p.kinds) {
        let Shape::Struct(fields) = &api.types[&k.type_key].shape else {
            continue;
        };
        if fields
            .iter()
            .find(|f| f.json_name == "metadata" && !f.skip && !f.flatten)
            .is_some_and(|m| m.rust_name != "metadata")
        {
            diags.push(
                Diagnostic::new(
                    k.loc.clone(),
                    format!("`{}`'s ObjectMeta field must be named `metadata`", k.name),
                )
                .with_hint("kube::Resource::meta() reads `self.metadata`"),
            );
        }
    }
}

/// Deep copies build on `Clone`, and generated code in another module reads every field.
pub(super) fn check_deep_copies(api: &Api, diags: &mut Diagnostics) {
    for decl in api.types.values() {
        // An alias is another name for a type that has (or needs) no impl of its own, and
        // needs neither Clone nor visibility.
        if matches!(decl.shape, Shape::Alias(_)) {
            continue;
        }
        if !decl.derives.iter().any(|d| d == "Clone") {
            diags.push(
                Diagnostic::new(
                    decl.loc.clone(),
                    format!("`{}` must derive Clone", decl.name),
                )
                .with_hint("generated DeepCopy builds on Clone: add `#[derive(Clone)]`"),
            );
            continue;
        }
        if let Some(d) = unnameable(decl) {
            diags.push(d);
        }
        if let Shape::Struct(fields) = &decl.shape {
            for f in fields.iter().filter(|f| !f.visible) {
                diags.push(
                    Diagnostic::new(
                        f.loc.clone(),
                        format!(
                            "field `{}` of `{}` must be `pub` or `pub(crate)`",
                            f.rust_name, decl.name
                        ),
                    )
                    .with_hint("generated deep-copy code in another module reads it"),
                );
            }
        }
    }
}

/// Why generated code cannot name `decl`, if it cannot: a private type, or one in a private
/// module nothing re-exports. Every check of a type used as it is reports this diagnostic,
/// the same one, so a run with several of them reports it once.
fn unnameable(decl: &TypeDecl) -> Option<Diagnostic> {
    if !decl.visible {
        return Some(
            Diagnostic::new(
                decl.loc.clone(),
                format!("`{}` must be `pub` or `pub(crate)`", decl.name),
            )
            .with_hint("generated code in another module refers to it"),
        );
    }
    if decl.rust_path.is_none() {
        let module = decl.module_path.join("::");
        return Some(
            Diagnostic::new(
                decl.loc.clone(),
                format!(
                    "`{}` cannot be named from generated code: module `{module}` is private and no reachable module re-exports it",
                    decl.name
                ),
            )
            .with_hint(format!(
                "re-export it from the group/version module (`pub use {}::*;`) or declare the module `pub mod`",
                decl.module_path.last().map_or("types", String::as_str)
            )),
        );
    }
    None
}
