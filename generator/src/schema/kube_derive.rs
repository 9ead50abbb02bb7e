//! The schema of a kube-derive kind ([`SchemaDialect::KubeDerive`]): what kube-derive's
//! `crd()` gets from schemars 1 (`SchemaSettings::openapi3()` with inlined subschemas, the
//! deserialize contract, then `AddNullable`, kube's `StructuralSchemaRewriter`,
//! `OptionalEnum` and `OptionalIntOrString`), built directly in its final form from the
//! model. kube-derive's output is the reference for such input, `nullable` on every
//! `Option` included, so an adopting team's CRD does not change.
//!
//! Shapes outside what is emulated here were reported by resolve as located warnings; they
//! render as the schema that accepts anything (`{}`), never as an error.

use crate::markers::Name;
use serde_json::{Map, Value, json};

use crate::model::*;

/// The openAPIV3Schema of a kube-derive kind: its root struct with `title` and the
/// description kube-derive gives it.
pub fn kind_schema(api: &Api, kind: &Kind, doc: &str) -> Value {
    let mut schema = match api.types.get(&kind.type_key) {
        Some(decl) => decl_schema(api, decl),
        None => json!({}),
    };
    if let Value::Object(o) = &mut schema {
        set_description(o, doc);
        // schemars titles the root with its type's name: the kind, or `#[kube(root)]`.
        let name = api
            .types
            .get(&kind.type_key)
            .map_or(&kind.name, |d| &d.name);
        o.insert("title".into(), Value::String(name.clone()));
    }
    schema
}

/// schemars' `get_title_and_description`: a doc starting with `#` gives a title line.
fn set_description(o: &mut Map<String, Value>, doc: &str) {
    let doc = doc.trim();
    if doc.is_empty() {
        return;
    }
    let (title, description) = match doc.strip_prefix('#') {
        Some(_) => {
            let (first, rest) = doc.split_once('\n').unwrap_or((doc, ""));
            (first.trim_start_matches('#').trim(), rest.trim())
        }
        None => ("", doc),
    };
    if !title.is_empty() {
        o.insert("title".into(), Value::String(title.to_owned()));
    }
    if !description.is_empty() {
        o.insert("description".into(), Value::String(description.to_owned()));
    }
}

fn decl_schema(api: &Api, decl: &TypeDecl) -> Value {
    let mut schema = match &decl.shape {
        Shape::Struct(fields) => struct_schema(api, fields),
        Shape::Newtype(t) | Shape::Alias(t) | Shape::Wire(t) => type_schema(api, t, &mut vec![]),
        Shape::Enum(variants) => enum_schema(api, decl, variants),
    };
    if let Value::Object(o) = &mut schema {
        set_description(o, &decl.doc);
        apply_markers(o, &decl.markers);
    }
    schema
}

fn is_empty(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        _ => false,
    }
}

/// The markers resolve made of `#[x_kube]`, `#[validate]`, `#[garde]` and `#[schemars]`
/// attributes, as the keywords schemars and kube's `KubeSchema` write for them.
fn apply_markers(o: &mut Map<String, Value>, markers: &[crate::markers::Marker]) {
    let number = |m: &crate::markers::Marker| -> Option<Value> {
        let raw = m.string_value().ok()?;
        let raw = raw.trim();
        raw.parse::<i64>()
            .map(Value::from)
            .ok()
            .or_else(|| raw.parse::<f64>().ok().map(Value::from))
    };
    for m in markers {
        let key = match m.name {
            Name::MinLength => "minLength",
            Name::MaxLength => "maxLength",
            Name::MinItems => "minItems",
            Name::MaxItems => "maxItems",
            Name::MinProperties => "minProperties",
            Name::MaxProperties => "maxProperties",
            Name::Minimum => "minimum",
            Name::Maximum => "maximum",
            Name::Pattern => {
                if let Ok(p) = m.string_value() {
                    o.insert("pattern".into(), Value::String(p));
                }
                continue;
            }
            Name::Type => {
                if let Ok(p) = m.string_value() {
                    o.insert("type".into(), Value::String(p));
                }
                continue;
            }
            Name::Format => {
                if let Ok(p) = m.string_value() {
                    o.insert("format".into(), Value::String(p));
                }
                continue;
            }
            Name::ListType => {
                if let Ok(v) = m.string_value() {
                    o.insert("x-kubernetes-list-type".into(), Value::String(v));
                }
                continue;
            }
            Name::XValidation => {
                let mut rule = Map::new();
                for (k, v) in &m.args {
                    rule.insert(k.clone(), Value::String(v.clone()));
                }
                let rules = o
                    .entry("x-kubernetes-validations")
                    .or_insert_with(|| Value::Array(vec![]));
                if let Value::Array(a) = rules {
                    a.push(Value::Object(rule));
                }
                continue;
            }
            _ => continue,
        };
        if let Some(n) = number(m) {
            o.insert(key.into(), n);
        }
    }
}

/// A struct: its properties, `required` for fields that must be present on deserializing
/// (neither `Option` nor `#[serde(default)]`), flattened fields merged in.
fn struct_schema(api: &Api, fields: &[Field]) -> Value {
    let mut properties = Map::new();
    let mut required = vec![];
    let mut preserve_unknown = false;
    let mut extra = Map::new();
    for f in fields.iter().filter(|f| !f.skip && !is_root_meta(f)) {
        let mut ints = f.ints.clone();
        ints.reverse();
        if f.flatten {
            match type_schema(api, &f.ty, &mut ints) {
                Value::Object(inner) => {
                    if let Some(Value::Object(p)) = inner.get("properties") {
                        properties.extend(p.clone());
                    }
                    if let Some(Value::Array(r)) = inner.get("required") {
                        required.extend(r.iter().filter_map(|v| v.as_str().map(str::to_owned)));
                    }
                    // A flattened enum keeps its branches (their `required`) beside the
                    // hoisted properties; the flattened type's description is the struct's
                    // unless the struct has its own (schemars' `flatten`).
                    for k in ["oneOf", "anyOf", "description"] {
                        if let Some(b) = inner.get(k) {
                            extra.entry(k).or_insert_with(|| b.clone());
                        }
                    }
                    // A flattened map: the rewriter keeps unknown fields.
                    if inner.contains_key("additionalProperties") {
                        preserve_unknown = true;
                    }
                }
                _ => preserve_unknown = true,
            }
            continue;
        }
        let mut schema = type_schema(api, &f.ty, &mut ints);
        if let Value::Object(o) = &mut schema {
            if !f.doc.trim().is_empty() {
                o.remove("title");
                o.remove("description");
                set_description(o, &f.doc);
            }
            // `Default::default()` of the field's type, or what `default = "f"` returns,
            // serialized; a `skip_serializing_if` (an `is_none`/`is_empty`, as used in
            // practice) skips a null or empty one, as schemars asks it.
            let default = match &f.default_fn {
                Some(d) => d.value.clone(),
                None if f.has_default => default_of(api, &f.ty),
                None => None,
            };
            if let Some(d) = default
                && !d.is_null()
                && !(f.skip_serializing_if && is_empty(&d))
            {
                o.insert("default".into(), d);
            }
            apply_markers(o, &f.markers);
        }
        if !(f.has_default || f.ty.is_option()) {
            required.push(f.json_name.clone());
        }
        properties.insert(f.json_name.clone(), schema);
    }
    let mut o = Map::new();
    o.insert("type".into(), json!("object"));
    if !properties.is_empty() {
        o.insert("properties".into(), Value::Object(properties));
    }
    if !required.is_empty() {
        required.sort();
        required.dedup();
        o.insert("required".into(), json!(required));
    }
    if preserve_unknown {
        o.insert("x-kubernetes-preserve-unknown-fields".into(), json!(true));
    }
    o.extend(extra);
    Value::Object(o)
}

/// The root's `metadata`: kube-derive marks it `#[schemars(skip)]`.
fn is_root_meta(f: &Field) -> bool {
    f.json_name == "metadata" && f.ty == TypeRef::ObjectMeta
}

/// An enum. Unit variants alone: a string with the variants' names (schemars writes a
/// `oneOf` when variants have docs; kube's rewriter hoists the values back, undocumented
/// first). With data: schemars' `oneOf` (externally tagged) or `anyOf` (untagged) of
/// objects, whose properties kube's rewriter hoists into one object ([`hoist`]).
fn enum_schema(api: &Api, decl: &TypeDecl, variants: &[Variant]) -> Value {
    enum_schema_and_conflicts(api, decl, variants).0
}

/// The properties that variants of an enum of data give different schemas: kube's
/// rewriter panics on them in `crd()`, where kube-codegen keeps the first; resolve says so.
pub fn enum_property_conflicts(api: &Api, decl: &TypeDecl) -> Vec<String> {
    match &decl.shape {
        Shape::Enum(variants) => enum_schema_and_conflicts(api, decl, variants).1,
        _ => vec![],
    }
}

fn enum_schema_and_conflicts(
    api: &Api,
    decl: &TypeDecl,
    variants: &[Variant],
) -> (Value, Vec<String>) {
    let unit = variants
        .iter()
        .all(|v| matches!(v.shape, VariantShape::Unit));
    if unit && !decl.serde.untagged && decl.serde.tag.is_none() {
        let plain = variants.iter().filter(|v| v.doc.trim().is_empty());
        let documented = variants.iter().filter(|v| !v.doc.trim().is_empty());
        let values: Vec<Value> = plain
            .chain(documented)
            .map(|v| Value::String(v.json_name.clone()))
            .collect();
        return (json!({"type": "string", "enum": values}), vec![]);
    }
    let content = |v: &Variant| -> Value {
        match &v.shape {
            VariantShape::Unit => json!({"type": "null"}),
            VariantShape::Newtype(t) => {
                let mut ints = v.ints.clone();
                ints.reverse();
                type_schema(api, t, &mut ints)
            }
            VariantShape::Struct(fields) => struct_schema(api, fields),
            VariantShape::Tuple => json!({}),
        }
    };
    let mut subschemas = vec![];
    let untagged = decl.serde.untagged;
    for v in variants {
        let mut schema = if untagged {
            content(v)
        } else {
            json!({
                "type": "object",
                "properties": {v.json_name.clone(): content(v)},
                "required": [v.json_name.clone()],
            })
        };
        if let Value::Object(o) = &mut schema
            && !v.doc.trim().is_empty()
        {
            o.remove("description");
            set_description(o, &v.doc);
        }
        subschemas.push(schema);
    }
    let mut common = Map::new();
    let conflicts = hoist(&mut common, &mut subschemas, !untagged);
    common.insert(
        (if untagged { "anyOf" } else { "oneOf" }).to_owned(),
        Value::Array(subschemas),
    );
    (Value::Object(common), conflicts)
}

/// kube's `hoist_subschema_properties`: Kubernetes allows no properties in `oneOf`/`anyOf`
/// branches, so each branch's properties (and type) move to the common object; a branch's
/// description moves to its only property in a `oneOf` (the variant's doc describes that
/// property) and is dropped in an `anyOf`; what is left of a branch is its `required`.
fn hoist(
    common: &mut Map<String, Value>,
    branches: &mut [Value],
    description_to_property: bool,
) -> Vec<String> {
    let mut conflicts = vec![];
    for branch in branches.iter_mut() {
        let Value::Object(b) = branch else { continue };
        let has_object = [
            "properties",
            "required",
            "additionalProperties",
            "minProperties",
            "maxProperties",
        ]
        .iter()
        .any(|k| b.contains_key(*k));
        if has_object {
            let description = b.remove("description");
            let mut properties = match b.remove("properties") {
                Some(Value::Object(p)) => p,
                _ => Map::new(),
            };
            if let Some(d) = description
                && description_to_property
                && properties.len() == 1
                && let Some(Value::Object(only)) = properties.values_mut().next()
            {
                only.insert("description".into(), d);
            }
            let target = common
                .entry("properties")
                .or_insert_with(|| Value::Object(Map::new()));
            if let Value::Object(t) = target {
                for (k, v) in properties {
                    match t.get(&k) {
                        Some(first) if *first != v => conflicts.push(k),
                        Some(_) => {}
                        None => {
                            t.insert(k, v);
                        }
                    }
                }
            }
            b.remove("additionalProperties");
            if let Some(t) = b.remove("type") {
                common.entry("type").or_insert(t);
            }
        } else if !["enum", "oneOf", "anyOf", "allOf", "items"]
            .iter()
            .any(|k| b.contains_key(*k))
        {
            b.remove("type");
            b.remove("description");
            b.remove("title");
            b.remove("default");
        }
    }
    conflicts
}

fn int_schema(i: Option<RustInt>, wire: &TypeRef) -> Value {
    let i = i.unwrap_or(if *wire == TypeRef::Int32 {
        RustInt::I32
    } else {
        RustInt::I64
    });
    let (format, min, max) = i.schemars();
    let mut o = Map::new();
    o.insert("type".into(), json!("integer"));
    o.insert("format".into(), json!(format));
    if let Some(m) = min {
        o.insert("minimum".into(), json!(m));
    }
    if let Some(m) = max {
        o.insert("maximum".into(), json!(m));
    }
    Value::Object(o)
}

/// The schema of a field type; `ints` holds the field's Rust integer types still to meet,
/// the next one last.
fn type_schema(api: &Api, ty: &TypeRef, ints: &mut Vec<RustInt>) -> Value {
    match ty {
        TypeRef::String => json!({"type": "string"}),
        TypeRef::Bool => json!({"type": "boolean"}),
        TypeRef::Int32 | TypeRef::Int64 => int_schema(ints.pop(), ty),
        TypeRef::Float => json!({"type": "number", "format": "float"}),
        TypeRef::Double => json!({"type": "number", "format": "double"}),
        TypeRef::Option(inner) => {
            let mut s = type_schema(api, inner, ints);
            // `AddNullable` marks schemas with a `type`, kube's `OptionalEnum` and
            // `OptionalIntOrString` the `anyOf` schemars makes of the others; the schema that
            // accepts anything (`serde_json::Value`) stays as it is.
            if let Value::Object(o) = &mut s
                && !o.is_empty()
            {
                o.insert("nullable".into(), json!(true));
            }
            s
        }
        TypeRef::List { item, .. } => {
            // A set's `uniqueItems` is removed by kube's rewriter (Kubernetes refuses it).
            json!({"type": "array", "items": type_schema(api, item, ints)})
        }
        TypeRef::Array { item, len } => json!({
            "type": "array",
            "items": type_schema(api, item, ints),
            "minItems": len,
            "maxItems": len,
        }),
        TypeRef::Map(value) => {
            let v = match value.unalias() {
                // `true` stays `true` for additionalProperties (ReplaceBoolSchemas skips it).
                TypeRef::Json => json!(true),
                _ => type_schema(api, value, ints),
            };
            json!({"type": "object", "additionalProperties": v})
        }
        TypeRef::Alias { key, target } => {
            let mut s = type_schema(api, target, ints);
            if let (Value::Object(o), Some(decl)) = (&mut s, api.types.get(key)) {
                set_description(o, &decl.doc);
            }
            s
        }
        TypeRef::Local(key) => match api.types.get(key) {
            Some(decl) => decl_schema(api, decl),
            None => json!({}),
        },
        TypeRef::IntOrString => {
            k8s_schema("apimachinery::pkg::util::intstr::IntOrString").unwrap_or_default()
        }
        TypeRef::Quantity => {
            k8s_schema("apimachinery::pkg::api::resource::Quantity").unwrap_or_default()
        }
        TypeRef::Time => k8s_schema("apimachinery::pkg::apis::meta::v1::Time").unwrap_or_default(),
        TypeRef::K8s(path) => k8s_schema(path).unwrap_or_else(|| json!({})),
        TypeRef::Json => json!({}),
        // Reported by resolve (`kube_derive::check_types`) as not emulated.
        TypeRef::ObjectMeta | TypeRef::TypeMeta | TypeRef::Bytes | TypeRef::Opaque => json!({}),
    }
}

/// The schemas kube-derive embeds for k8s-openapi types (their `JsonSchema` impls through
/// kube's settings), by k8s-openapi path: computed and checked by
/// `tests/kube-derive/tests/k8s_schemas.rs` (k8s-openapi 0.29, Kubernetes 1.37).
static K8S: std::sync::LazyLock<Map<String, Value>> = std::sync::LazyLock::new(|| {
    let data: Value = serde_json::from_str(include_str!("kube-derive-k8s.json"))
        .expect("kube-derive-k8s.json is JSON");
    match data.get("types") {
        Some(Value::Object(types)) => types.clone(),
        _ => Map::new(),
    }
});

/// The schema kube-derive embeds for a k8s-openapi type, if kube-codegen has it.
pub fn k8s_schema(path: &str) -> Option<Value> {
    K8S.get(path).cloned()
}

/// `Default::default()` of a type, serialized, where it is known without running code.
fn default_of(api: &Api, ty: &TypeRef) -> Option<Value> {
    Some(match ty.unalias() {
        TypeRef::String => json!(""),
        TypeRef::Bool => json!(false),
        TypeRef::Int32 | TypeRef::Int64 => json!(0),
        TypeRef::Float | TypeRef::Double => json!(0.0),
        TypeRef::Option(_) => Value::Null,
        TypeRef::List { .. } => json!([]),
        TypeRef::Map(_) => json!({}),
        TypeRef::Json => Value::Null,
        TypeRef::Local(key) => {
            let decl = api.types.get(key)?;
            let Shape::Struct(fields) = &decl.shape else {
                return None;
            };
            // A derived Default: each field's default; hand-written ones are unknown.
            if !decl.derives.iter().any(|d| d == "Default") {
                return None;
            }
            let mut o = Map::new();
            for f in fields.iter().filter(|f| !f.skip) {
                let v = default_of(api, &f.ty)?;
                if f.skip_serializing_if {
                    // `Option::is_none`, `Vec::is_empty` and the like skip the default.
                    continue;
                }
                o.insert(f.json_name.clone(), v);
            }
            Value::Object(o)
        }
        _ => return None,
    })
}

/// Whether [`default_of`] knows a type's default, for resolve's warnings.
pub fn default_known(api: &Api, ty: &TypeRef) -> bool {
    default_of(api, ty).is_some()
}
