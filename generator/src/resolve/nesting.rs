//! How deep the types below each kind nest, bounded: the schema builder, the CRD's checks,
//! the renderers and the YAML writer recurse once per level, and the run's threads have a
//! stack sized for [`MAX_TYPE_NESTING`] levels (`parallel::STACK_SIZE`). A kind nested
//! deeper is an error at the field where it passes the limit, before anything recurses
//! through it. This walk itself keeps its own stack: a chain of ten thousand structs is a
//! long loop here, not a deep recursion.

use std::collections::{BTreeSet, HashMap, HashSet};

use crate::diagnostics::{Diagnostic, Diagnostics, Location};
use crate::model::*;

/// How many levels a kind's types may nest below it: a field is a level, and so is each
/// `Option`, `Vec`, map, array, alias and named type it goes through (`spec: Option<Vec<Item>>`
/// is 4 below the kind, then `Item`'s fields). A struct nested in a struct is 2 (its field
/// and its name; an optional one 3). Real APIs nest a few dozen levels at most; the limit
/// is far above them and what `import crd` reads (schemas to about 60 levels, 3 Rust
/// levels each), and a quarter of what the stack holds.
pub const MAX_TYPE_NESTING: usize = 256;

/// A step below a type: through a field (or variant) to a named type, or to where the
/// field's type ends without one.
struct Step<'a> {
    /// Levels from the type to the named type (or to the end of the field's type).
    levels: usize,
    /// The named type reached, if any.
    next: Option<&'a str>,
    /// The field (or variant) that is the step.
    name: &'a str,
    loc: &'a Location,
}

/// The steps of one field's type, `first` levels below the declaration at its top, walked
/// without recursion: `Option<Vec<BTreeMap<String, Item>>>` is one step of 4 levels
/// (and the field's own) to `Item`.
fn field_steps<'a>(
    ty: &'a TypeRef,
    first: usize,
    name: &'a str,
    loc: &'a Location,
    out: &mut Vec<Step<'a>>,
) {
    let mut todo: Vec<(&TypeRef, usize)> = vec![(ty, first)];
    while let Some((ty, levels)) = todo.pop() {
        let (levels, next) = match ty {
            TypeRef::Option(inner)
            | TypeRef::List { item: inner, .. }
            | TypeRef::Array { item: inner, .. }
            | TypeRef::Map(inner)
            | TypeRef::Alias { target: inner, .. } => {
                todo.push((inner, levels + 1));
                continue;
            }
            TypeRef::Local(key) => (levels + 1, Some(key.as_str())),
            _ => (levels, None),
        };
        out.push(Step {
            levels,
            next,
            name,
            loc,
        });
    }
}

fn fields_steps<'a>(fields: &'a [Field], first: usize, out: &mut Vec<Step<'a>>) {
    for f in fields.iter().filter(|f| !f.skip) {
        field_steps(&f.ty, first, &f.json_name, &f.loc, out);
    }
}

/// The steps below a declaration: through each field and variant.
fn steps(decl: &TypeDecl) -> Vec<Step<'_>> {
    let mut out = vec![];
    match &decl.shape {
        Shape::Struct(fs) => fields_steps(fs, 1, &mut out),
        Shape::Newtype(ty) | Shape::Alias(ty) | Shape::Wire(ty) => {
            field_steps(ty, 0, &decl.name, &decl.loc, &mut out);
        }
        Shape::Enum(variants) => {
            for v in variants {
                match &v.shape {
                    VariantShape::Newtype(ty) => {
                        field_steps(ty, 1, &v.json_name, &v.loc, &mut out);
                    }
                    VariantShape::Struct(fs) => fields_steps(fs, 2, &mut out),
                    VariantShape::Unit | VariantShape::Tuple => {}
                }
            }
        }
    }
    out
}

/// Every kind whose types nest deeper than [`MAX_TYPE_NESTING`]: an error at the field
/// where the deepest path passes the limit, once per field. Returns whether all are within.
pub(super) fn check(api: &Api, diags: &mut Diagnostics) -> bool {
    // Hashed, not ordered: nothing here is iterated, and type keys share long module-path
    // prefixes that every comparison of an ordered lookup reads again (this check's lookups
    // grew faster than the API: 14x the instructions for 10x the kinds).
    let mut below: HashMap<&str, Vec<Step<'_>>> = HashMap::with_capacity(api.types.len());
    for (key, decl) in &api.types {
        below.insert(key.as_str(), steps(decl));
    }
    // The levels below each type, its deepest path; a type that contains itself (the
    // schema builder reports it) counts what lies below it outside the cycle.
    let mut depth: HashMap<&str, usize> = HashMap::with_capacity(api.types.len());
    let mut on_path: HashSet<&str> = HashSet::new();
    let mut reported: BTreeSet<Location> = BTreeSet::new();
    let mut fine = true;
    for p in api.packages.values() {
        for kind in &p.kinds {
            let root = kind.type_key.as_str();
            if !below.contains_key(root) {
                continue;
            }
            // Post-order, with a stack of (type, whether its children are done).
            let mut stack = vec![(root, false)];
            while let Some((key, children_done)) = stack.pop() {
                if depth.contains_key(key) {
                    continue;
                }
                let steps = &below[key];
                if children_done {
                    on_path.remove(key);
                    let d = steps
                        .iter()
                        .map(|s| s.levels + s.next.and_then(|n| depth.get(n)).copied().unwrap_or(0))
                        .max()
                        .unwrap_or(0);
                    depth.insert(key, d);
                    continue;
                }
                on_path.insert(key);
                stack.push((key, true));
                for next in steps.iter().filter_map(|s| s.next) {
                    if below.contains_key(next)
                        && !depth.contains_key(next)
                        && !on_path.contains(next)
                    {
                        stack.push((next, false));
                    }
                }
            }
            if depth[root] <= MAX_TYPE_NESTING {
                continue;
            }
            fine = false;
            // Down the deepest path to the step that passes the limit.
            let mut path = vec![];
            let mut levels = 0;
            let mut key = root;
            let mut seen = BTreeSet::new();
            loop {
                seen.insert(key);
                let Some(step) = below[key].iter().max_by_key(|s| {
                    s.levels + s.next.and_then(|n| depth.get(n)).copied().unwrap_or(0)
                }) else {
                    break;
                };
                let name = &api.types[key].name;
                path.push(if step.name == name {
                    name.clone()
                } else {
                    format!("{name}.{}", step.name)
                });
                let next = step
                    .next
                    .filter(|n| below.contains_key(n) && !seen.contains(n));
                match next {
                    Some(n) if levels + step.levels <= MAX_TYPE_NESTING => {
                        levels += step.levels;
                        key = n;
                    }
                    _ => {
                        if reported.insert(step.loc.clone()) {
                            diags.push(too_deep(kind, depth[root], &path, step.loc));
                        }
                        break;
                    }
                }
            }
        }
    }
    fine
}

fn too_deep(kind: &Kind, depth: usize, path: &[String], loc: &Location) -> Diagnostic {
    // The path's first and last steps: the middle of a long chain says nothing more.
    let shown = if path.len() > 8 {
        format!(
            "{} > … ({} more) > {}",
            path[..4].join(" > "),
            path.len() - 8,
            path[path.len() - 4..].join(" > ")
        )
    } else {
        path.join(" > ")
    };
    Diagnostic::new(
        loc.clone(),
        format!(
            "the types of kind `{}` nest {depth} levels deep, more than {MAX_TYPE_NESTING}: they pass the limit here ({shown})",
            kind.name
        ),
    )
    .with_hint(format!(
        "each field, Option, Vec, map and named type below the kind is a level; nest fewer, or hold open-ended data in serde_json::Value with +kubebuilder:validation:XPreserveUnknownFields (kube-codegen bounds nesting at {MAX_TYPE_NESTING} so that every stage has the stack it needs)"
    ))
}
