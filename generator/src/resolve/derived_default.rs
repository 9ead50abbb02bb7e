//! A spec whose derived `Default` contradicts its `+kubebuilder:default`s. Rust's
//! `#[derive(Default)]` knows no marker: it starts an `i32` at 0 whatever the field's
//! `+kubebuilder:default=1` says. That value is what `Kind::new(name, Default::default())`
//! and every object built with `..Default::default()` send, and the API server defaults
//! only absent fields, so the declared default never applies to them: a warning at the
//! field, with the two ways to make them agree.
//!
//! Only the contradiction is said, not every value of a derived `Default` the CRD refuses
//! (a `Minimum=1` on a field that starts at 0): `..Default::default()` with the refused
//! fields set is how such specs are built, and a warning on every run would say nothing new.

use serde_json::{Map, Value};

use crate::apiext::JSONSchemaProps;
use crate::diagnostics::{Diagnostic, Diagnostics, Location};
use crate::model::*;

/// Check the derived default of `k`'s spec against the defaults of `schema`, the kind's
/// CRD schema of one version.
pub(super) fn check(api: &Api, k: &Kind, schema: &JSONSchemaProps, diags: &mut Diagnostics) {
    // A contradiction needs a default in the schema: without one, neither the derived
    // value nor the schema's JSON is worth building.
    if !schema.any_node(|s| s.default.is_some()) {
        return;
    }
    let Some(Shape::Struct(fields)) = api.types.get(&k.type_key).map(|d| &d.shape) else {
        return;
    };
    let Some(spec) = fields
        .iter()
        .find(|f| f.json_name == "spec" && !f.skip && !f.flatten)
    else {
        return;
    };
    let TypeRef::Local(key) = strip_option(&spec.ty) else {
        return;
    };
    let Some(decl) = api.types.get(key).filter(|d| derives_default(d)) else {
        return;
    };
    let Some(value) = struct_default(api, decl, 0) else {
        return;
    };
    let Ok(root) = serde_json::to_value(schema) else {
        return;
    };
    let Some(spec_schema) = root.pointer("/properties/spec") else {
        return;
    };
    let located = |path: &str| field_at(api, decl, path).unwrap_or_else(|| k.loc.clone());

    // A field starting at a value other than its default: the server never applies it.
    let mut disagreements = vec![];
    disagree(&value, spec_schema, "spec", &mut disagreements);
    for (path, got, default) in disagreements {
        diags.push(
            Diagnostic::warning(
                located(&path),
                format!(
                    "`{}`'s derived `Default` starts `{path}` at {got}, not at its default {default}: \
                     an object built from it sends {got}, and the API server defaults only absent fields",
                    decl.name
                ),
            )
            .with_hint(format!(
                "make the field an `Option` (left out unless set, so the server fills in \
                 {default}), or implement `Default` for `{}` by hand to start it at {default}",
                decl.name
            )),
        );
    }
}

fn strip_option(ty: &TypeRef) -> &TypeRef {
    match ty.unalias() {
        TypeRef::Option(inner) => strip_option(inner),
        other => other,
    }
}

fn derives_default(d: &TypeDecl) -> bool {
    d.derives.iter().any(|t| t == "Default")
}

/// The JSON of a derived `Default` of `decl` as serde writes it, or `None` when it is no
/// derived struct; a field whose start cannot be told is left out (nothing is said of it).
fn struct_default(api: &Api, decl: &TypeDecl, depth: usize) -> Option<Value> {
    let Shape::Struct(fields) = &decl.shape else {
        return None;
    };
    if !derives_default(decl) || depth > 32 || decl.serde.transparent {
        return None;
    }
    let mut out = Map::new();
    for f in fields {
        // Left out: skipped, `None`, or (with `skip_serializing_if`) the value its predicate
        // skips, which the default is (`Vec::is_empty`, `Option::is_none`, ...).
        if f.skip || f.ty.is_option() || f.skip_serializing_if {
            continue;
        }
        if f.flatten {
            match strip_option(&f.ty) {
                TypeRef::TypeMeta => continue,
                TypeRef::Local(key) => {
                    match api
                        .types
                        .get(key)
                        .and_then(|d| struct_default(api, d, depth + 1))
                    {
                        Some(Value::Object(m)) => out.extend(m),
                        _ => return None,
                    }
                }
                _ => return None,
            }
            continue;
        }
        if let Some(v) = zero(api, &f.ty, depth) {
            out.insert(f.json_name.clone(), v);
        }
    }
    Some(Value::Object(out))
}

/// `Default::default()` of a type, as serde writes it; `None` when it cannot be told (an
/// enum's default variant, a Kubernetes type, custom serialization).
fn zero(api: &Api, ty: &TypeRef, depth: usize) -> Option<Value> {
    Some(match ty {
        TypeRef::String => Value::String(String::new()),
        TypeRef::Bool => Value::Bool(false),
        TypeRef::Int32 | TypeRef::Int64 => Value::from(0),
        TypeRef::Float | TypeRef::Double => Value::from(0.0),
        TypeRef::List { .. } => Value::Array(vec![]),
        TypeRef::Map(_) => Value::Object(Map::new()),
        TypeRef::Alias { target, .. } => return zero(api, target, depth),
        TypeRef::Local(key) => {
            let decl = api.types.get(key)?;
            match &decl.shape {
                Shape::Struct(_) => return struct_default(api, decl, depth + 1),
                Shape::Newtype(inner) if derives_default(decl) => {
                    return zero(api, inner, depth + 1);
                }
                _ => return None,
            }
        }
        _ => return None,
    })
}

/// Every property of `value` (an object) that `schema` gives a `default` it does not hold:
/// (field path, value, default).
fn disagree(value: &Value, schema: &Value, path: &str, out: &mut Vec<(String, Value, Value)>) {
    let (Some(object), Some(properties)) = (
        value.as_object(),
        schema.get("properties").and_then(Value::as_object),
    ) else {
        return;
    };
    for (name, sub) in properties {
        let Some(v) = object.get(name) else {
            continue;
        };
        let here = format!("{path}.{name}");
        if let Some(d) = sub.get("default")
            && !same(v, d)
        {
            out.push((here.clone(), v.clone(), d.clone()));
        }
        disagree(v, sub, &here, out);
    }
}

/// JSON equality with numbers compared as numbers (`0` and `0.0` are one value).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        _ => a == b,
    }
}

/// The field `path` (`spec.template.replicas`, list indexes and map keys allowed) names,
/// below the spec struct `decl`.
fn field_at(api: &Api, decl: &TypeDecl, path: &str) -> Option<Location> {
    let mut current = decl;
    let mut found = None;
    for segment in path.split('.').skip(1) {
        let name = segment.split('[').next().unwrap_or(segment);
        let Shape::Struct(fields) = &current.shape else {
            break;
        };
        let f = fields.iter().find(|f| f.json_name == name)?;
        found = Some(f.loc.clone());
        let mut ty = strip_option(&f.ty);
        while let TypeRef::List { item: inner, .. } | TypeRef::Map(inner) = ty {
            ty = strip_option(inner);
        }
        match ty {
            TypeRef::Local(key) => match api.types.get(key) {
                Some(d) => current = d,
                None => break,
            },
            _ => break,
        }
    }
    found
}
