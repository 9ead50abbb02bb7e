//! Embedded resources (`x-kubernetes-embedded-resource: true`) as apiextensions-apiserver
//! handles them (`pkg/apiserver/schema/objectmeta`): when it decodes a write it coerces
//! their `apiVersion`, `kind` and `metadata` (`CoerceWithOptions`: the metadata goes through
//! Go's `metav1.ObjectMeta`, which drops unknown and empty fields, and a value that does not
//! decode refuses the whole request), and `customResourceStrategy.Validate` checks them after
//! the schema (`objectmeta.Validate`: `apiVersion` and `kind` required and well formed, the
//! metadata as `ValidateObjectMeta` checks a create's, with a name defaulted to `fakename`).

use serde_json::{Map, Value};

use super::schema::Schema;
use super::{ErrorType, FieldError, names};

/// `TotalAnnotationSizeLimitB`.
const ANNOTATIONS_SIZE_LIMIT: usize = 256 * (1 << 10);
/// `FieldManagerMaxLength`.
const FIELD_MANAGER_MAX_LENGTH: usize = 128;
/// `MaxSubresourceNameLength`.
const MAX_SUBRESOURCE_NAME_LENGTH: usize = 256;

fn child(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_owned()
    } else {
        format!("{path}.{name}")
    }
}

/// A Go `%q`-ish rendering of a bad value (messages are reported, not compared).
fn render(v: &Value) -> String {
    match v {
        Value::String(s) => format!("{s:?}"),
        other => other.to_string(),
    }
}

fn invalid(field: String, v: &Value, detail: impl Into<String>) -> FieldError {
    FieldError {
        field,
        error_type: ErrorType::Invalid,
        value: Some(render(v)),
        detail: detail.into(),
    }
}

fn required(field: String, detail: &str) -> FieldError {
    FieldError {
        field,
        error_type: ErrorType::Required,
        value: None,
        detail: detail.to_owned(),
    }
}

/// Go's JSON name of a value's kind, as its `UnmarshalTypeError` prints it (with the
/// number when it does not fit an integer field).
fn json_kind(v: &Value, go_type: &str) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(_) => "bool".into(),
        Value::Number(n) if go_type == "int64" => format!("number {n}"),
        Value::Number(_) => "number".into(),
        Value::String(_) => "string".into(),
        Value::Array(_) => "array".into(),
        Value::Object(_) => "object".into(),
    }
}

fn type_error(v: &Value, field: &str, go_type: &str) -> String {
    format!(
        "json: cannot unmarshal {} into Go struct field {field} of type {go_type}",
        json_kind(v, go_type)
    )
}

/// A string field: `null` is Go's zero value.
fn string(v: &Value, field: &str) -> Result<String, String> {
    match v {
        Value::Null => Ok(String::new()),
        Value::String(s) => Ok(s.clone()),
        v => Err(type_error(v, field, "string")),
    }
}

fn int64(v: &Value, field: &str) -> Result<Option<i64>, String> {
    match v {
        Value::Null => Ok(None),
        Value::Number(n) => n
            .as_i64()
            .map(Some)
            .ok_or_else(|| type_error(v, field, "int64")),
        v => Err(type_error(v, field, "int64")),
    }
}

fn boolean(v: &Value, field: &str) -> Result<Option<bool>, String> {
    match v {
        Value::Null => Ok(None),
        Value::Bool(b) => Ok(Some(*b)),
        v => Err(type_error(v, field, "bool")),
    }
}

/// `metav1.Time`: RFC 3339, written back in UTC to the second; `None` for null.
fn time(v: &Value, field: &str) -> Result<Option<String>, String> {
    match v {
        Value::Null => Ok(None),
        Value::String(s) => chrono::DateTime::parse_from_rfc3339(s)
            .map(|t| {
                Some(
                    t.with_timezone(&chrono::Utc)
                        .format("%Y-%m-%dT%H:%M:%SZ")
                        .to_string(),
                )
            })
            .map_err(|_| {
                format!("parsing time {s:?} as \"2006-01-02T15:04:05Z07:00\": cannot parse")
            }),
        v => Err(type_error(v, field, "v1.Time")),
    }
}

/// A `map[string]string`, omitted when empty.
fn string_map(v: &Value, field: &str) -> Result<Option<Value>, String> {
    match v {
        Value::Null => Ok(None),
        Value::Object(m) => {
            let mut out = Map::new();
            for (k, x) in m {
                out.insert(k.clone(), Value::String(string(x, field)?));
            }
            Ok((!out.is_empty()).then_some(Value::Object(out)))
        }
        v => Err(type_error(v, field, "map[string]string")),
    }
}

/// A list of `item`, omitted when empty; a `null` item is the zero value.
fn list(
    v: &Value,
    field: &str,
    go_type: &str,
    item: impl Fn(&Value) -> Result<Value, String>,
) -> Result<Option<Value>, String> {
    match v {
        Value::Null => Ok(None),
        Value::Array(a) => {
            let out = a.iter().map(item).collect::<Result<Vec<_>, _>>()?;
            Ok((!out.is_empty()).then_some(Value::Array(out)))
        }
        v => Err(type_error(v, field, go_type)),
    }
}

/// Fields of a Go struct from a JSON object: `null` is the zero value, another non-object an
/// error, unknown fields are dropped.
fn object<'v>(v: &'v Value, go_type: &str) -> Result<Option<&'v Map<String, Value>>, String> {
    match v {
        Value::Null => Ok(None),
        Value::Object(m) => Ok(Some(m)),
        v => Err(format!(
            "json: cannot unmarshal {} into Go value of type {go_type}",
            json_kind(v, go_type)
        )),
    }
}

fn owner_reference(v: &Value) -> Result<Value, String> {
    let empty = Map::new();
    let m = object(v, "v1.OwnerReference")?.unwrap_or(&empty);
    let mut out = Map::new();
    // Not `omitempty`: always written.
    for f in ["apiVersion", "kind", "name", "uid"] {
        let s = string(
            m.get(f).unwrap_or(&Value::Null),
            &format!("OwnerReference.ownerReferences.{f}"),
        )?;
        out.insert(f.into(), Value::String(s));
    }
    for f in ["controller", "blockOwnerDeletion"] {
        if let Some(b) = boolean(
            m.get(f).unwrap_or(&Value::Null),
            &format!("OwnerReference.ownerReferences.{f}"),
        )? {
            out.insert(f.into(), Value::Bool(b));
        }
    }
    Ok(Value::Object(out))
}

fn managed_fields_entry(v: &Value) -> Result<Value, String> {
    let empty = Map::new();
    let m = object(v, "v1.ManagedFieldsEntry")?.unwrap_or(&empty);
    let mut out = Map::new();
    for f in [
        "manager",
        "operation",
        "apiVersion",
        "fieldsType",
        "subresource",
    ] {
        let s = string(
            m.get(f).unwrap_or(&Value::Null),
            &format!("ManagedFieldsEntry.managedFields.{f}"),
        )?;
        if !s.is_empty() {
            out.insert(f.into(), Value::String(s));
        }
    }
    if let Some(t) = time(
        m.get("time").unwrap_or(&Value::Null),
        "ManagedFieldsEntry.managedFields.time",
    )? {
        out.insert("time".into(), Value::String(t));
    }
    // `FieldsV1` keeps any JSON but null as it is.
    if let Some(f) = m.get("fieldsV1").filter(|f| !f.is_null()) {
        out.insert("fieldsV1".into(), f.clone());
    }
    Ok(Value::Object(out))
}

/// An embedded resource's `metadata` after the server's round trip through
/// `metav1.ObjectMeta` (`GetObjectMeta`, `SetObjectMeta`, and a zero `creationTimestamp`
/// removed): unknown fields and empty values dropped, times in UTC to the second. `Err` is
/// Go's decoding error, which refuses the request.
pub(super) fn coerce_metadata(v: &Value) -> Result<Value, String> {
    let empty = Map::new();
    let m = object(v, "v1.ObjectMeta")?.unwrap_or(&empty);
    let get = |f: &str| m.get(f).unwrap_or(&Value::Null);
    let mut out = Map::new();
    for f in [
        "name",
        "generateName",
        "namespace",
        "selfLink",
        "uid",
        "resourceVersion",
    ] {
        let s = string(get(f), &format!("ObjectMeta.{f}"))?;
        if !s.is_empty() {
            out.insert(f.into(), Value::String(s));
        }
    }
    if let Some(g) = int64(get("generation"), "ObjectMeta.generation")?.filter(|g| *g != 0) {
        out.insert("generation".into(), g.into());
    }
    for f in ["creationTimestamp", "deletionTimestamp"] {
        if let Some(t) = time(get(f), &format!("ObjectMeta.{f}"))?
            // The zero time is no creation time.
            .filter(|t| f != "creationTimestamp" || t != "0001-01-01T00:00:00Z")
        {
            out.insert(f.into(), Value::String(t));
        }
    }
    if let Some(s) = int64(
        get("deletionGracePeriodSeconds"),
        "ObjectMeta.deletionGracePeriodSeconds",
    )? {
        out.insert("deletionGracePeriodSeconds".into(), s.into());
    }
    for f in ["labels", "annotations"] {
        if let Some(x) = string_map(get(f), &format!("ObjectMeta.{f}"))? {
            out.insert(f.into(), x);
        }
    }
    if let Some(x) = list(
        get("ownerReferences"),
        "ObjectMeta.ownerReferences",
        "[]v1.OwnerReference",
        owner_reference,
    )? {
        out.insert("ownerReferences".into(), x);
    }
    if let Some(x) = list(
        get("finalizers"),
        "ObjectMeta.finalizers",
        "[]string",
        |x| string(x, "ObjectMeta.finalizers").map(Value::String),
    )? {
        out.insert("finalizers".into(), x);
    }
    if let Some(x) = list(
        get("managedFields"),
        "ObjectMeta.managedFields",
        "[]v1.ManagedFieldsEntry",
        managed_fields_entry,
    )? {
        out.insert("managedFields".into(), x);
    }
    Ok(Value::Object(out))
}

impl Schema {
    /// The decoding step (`CoerceWithOptions`): every embedded resource's `metadata`
    /// rewritten as `metav1.ObjectMeta` writes it. A value that does not decode is left as
    /// it is, for [`Schema::decode_error`] to report.
    pub(super) fn coerce_embedded(&self, v: &mut Value) {
        match v {
            Value::Object(m) => {
                if self.embedded_resource
                    && let Some(meta) = m.get_mut("metadata")
                    && let Ok(c) = coerce_metadata(meta)
                {
                    *meta = c;
                }
                for (k, x) in m.iter_mut() {
                    if self.embedded_resource && k == "metadata" {
                        continue;
                    }
                    if let Some(s) = self.field(k) {
                        s.coerce_embedded(x);
                    }
                }
            }
            Value::Array(a) => {
                if let Some(items) = &self.items {
                    for x in a {
                        items.coerce_embedded(x);
                    }
                }
            }
            _ => {}
        }
    }

    /// The first embedded resource whose `apiVersion` or `kind` is not a string, or whose
    /// `metadata` does not decode as `metav1.ObjectMeta`: the server refuses the request
    /// while decoding it (400 Bad Request, `<Kind> in version "<v>" cannot be handled as a
    /// <Kind>: <this error>`), before any validation. Go visits map keys in random order,
    /// so of several such errors the server reports any one.
    pub fn decode_error(&self, v: &Value) -> Option<FieldError> {
        self.decode_error_at(v, "")
    }

    pub(super) fn decode_error_at(&self, v: &Value, path: &str) -> Option<FieldError> {
        match v {
            Value::Object(m) => {
                for (k, x) in m {
                    let here = if self.properties.contains_key(k) {
                        child(path, k)
                    } else {
                        format!("{path}[{k}]")
                    };
                    if self.embedded_resource {
                        match k.as_str() {
                            "apiVersion" | "kind" if !x.is_string() => {
                                return Some(invalid(child(path, k), x, "must be a string"));
                            }
                            "metadata" => {
                                if let Err(e) = coerce_metadata(x) {
                                    return Some(invalid(child(path, k), x, e));
                                }
                            }
                            _ => {}
                        }
                    }
                    if let Some(s) = self.field(k)
                        && let Some(e) = s.decode_error_at(x, &here)
                    {
                        return Some(e);
                    }
                }
                None
            }
            Value::Array(a) => {
                let items = self.items.as_ref()?;
                a.iter()
                    .enumerate()
                    .find_map(|(i, x)| items.decode_error_at(x, &format!("{path}[{i}]")))
            }
            _ => None,
        }
    }

    /// `objectmeta.Validate`: every embedded resource's `apiVersion`, `kind` and
    /// `metadata`, where the schema reaches (properties, map values, list items).
    pub(super) fn validate_embedded(&self, v: &Value, path: &str, errs: &mut Vec<FieldError>) {
        match v {
            Value::Object(m) => {
                if self.embedded_resource {
                    embedded_resource(m, path, errs);
                }
                for (k, x) in m {
                    if let Some(p) = self.properties.get(k) {
                        p.validate_embedded(x, &child(path, k), errs);
                    } else if let Some(a) = self.additional() {
                        a.validate_embedded(x, &format!("{path}[{k}]"), errs);
                    }
                }
            }
            Value::Array(a) => {
                if let Some(items) = &self.items {
                    for (i, x) in a.iter().enumerate() {
                        items.validate_embedded(x, &format!("{path}[{i}]"), errs);
                    }
                }
            }
            _ => {}
        }
    }
}

/// `schema.ParseGroupVersion`'s error.
fn group_version_error(gv: &str) -> Option<String> {
    (gv != "/" && gv.matches('/').count() > 1)
        .then(|| format!("unexpected GroupVersion string: {gv}"))
}

/// `validateEmbeddedResource`.
fn embedded_resource(m: &Map<String, Value>, path: &str, errs: &mut Vec<FieldError>) {
    for f in ["apiVersion", "kind"] {
        if !m.contains_key(f) {
            errs.push(required(child(path, f), ""));
        }
    }
    for (k, v) in m {
        let here = child(path, k);
        match (k.as_str(), v) {
            ("apiVersion" | "kind", Value::String(s)) if s.is_empty() => {
                errs.push(invalid(here.clone(), v, "must not be empty"));
            }
            ("apiVersion" | "kind", Value::String(_)) | ("metadata", _) => {}
            ("apiVersion" | "kind", _) => errs.push(invalid(here.clone(), v, "must be a string")),
            _ => {}
        }
        match (k.as_str(), v) {
            ("apiVersion", Value::String(s)) if !s.is_empty() => {
                if let Some(e) = group_version_error(s) {
                    errs.push(invalid(here, v, e));
                }
            }
            ("kind", Value::String(s)) if !s.is_empty() => {
                let e = names::dns1035_label(&s.to_lowercase());
                if !e.is_empty() {
                    errs.push(invalid(
                        here,
                        v,
                        format!(
                            "may have mixed case, but should otherwise match: {}",
                            e.join(",")
                        ),
                    ));
                }
            }
            ("metadata", _) => match coerce_metadata(v) {
                Err(e) => errs.push(invalid(here, v, e)),
                Ok(meta) => object_meta(&meta, &here, errs),
            },
            _ => {}
        }
    }
}

/// `IsPathSegmentName` (`IsPathSegmentPrefix` for a prefix).
fn path_segment(name: &str, prefix: bool) -> Vec<String> {
    let mut errs = vec![];
    if !prefix && (name == "." || name == "..") {
        return vec![format!("may not be '{name}'")];
    }
    for c in ["/", "%"] {
        if name.contains(c) {
            errs.push(format!("may not contain '{c}'"));
        }
    }
    errs
}

/// `ValidateObjectMeta` of a create, on coerced metadata, at `path` (`....metadata`).
fn object_meta(meta: &Value, path: &str, errs: &mut Vec<FieldError>) {
    let s = |f: &str| meta.get(f).and_then(Value::as_str).unwrap_or("");
    let generate_name = s("generateName");
    if !generate_name.is_empty() {
        for e in path_segment(generate_name, true) {
            errs.push(invalid(
                child(path, "generateName"),
                &Value::String(generate_name.into()),
                e,
            ));
        }
    }
    // `objectmeta.Validate` names a nameless embedded object `fakename` first.
    let name = match s("name") {
        "" => "fakename",
        n => n,
    };
    for e in path_segment(name, false) {
        errs.push(invalid(child(path, "name"), &Value::String(name.into()), e));
    }
    // Namespaced exactly when it names a namespace.
    let namespace = s("namespace");
    if !namespace.is_empty() {
        for e in names::dns1123_label(namespace) {
            errs.push(invalid(
                child(path, "namespace"),
                &Value::String(namespace.into()),
                e,
            ));
        }
    }
    if let Some(g) = meta.get("generation").and_then(Value::as_i64)
        && g < 0
    {
        errs.push(invalid(
            child(path, "generation"),
            &g.into(),
            "must be greater than or equal to 0",
        ));
    }
    let labels = child(path, "labels");
    if let Some(m) = meta.get("labels").and_then(Value::as_object) {
        for (k, v) in m {
            for e in names::qualified_name(k) {
                errs.push(invalid(labels.clone(), &Value::String(k.clone()), e));
            }
            for e in names::label_value(v.as_str().unwrap_or("")) {
                errs.push(invalid(labels.clone(), v, e));
            }
        }
    }
    let annotations = child(path, "annotations");
    if let Some(m) = meta.get("annotations").and_then(Value::as_object) {
        let mut size = 0;
        for (k, v) in m {
            for e in names::qualified_name(&k.to_lowercase()) {
                errs.push(invalid(annotations.clone(), &Value::String(k.clone()), e));
            }
            size += k.len() + v.as_str().map_or(0, str::len);
        }
        if size > ANNOTATIONS_SIZE_LIMIT {
            errs.push(FieldError {
                field: annotations,
                error_type: ErrorType::TooLong,
                value: None,
                detail: format!("may not be more than {ANNOTATIONS_SIZE_LIMIT} bytes"),
            });
        }
    }
    owner_references(meta, path, errs);
    finalizers(meta, path, errs);
    managed_fields(meta, path, errs);
}

/// `ValidateOwnerReferences`.
fn owner_references(meta: &Value, path: &str, errs: &mut Vec<FieldError>) {
    let Some(refs) = meta.get("ownerReferences").and_then(Value::as_array) else {
        return;
    };
    let at = child(path, "ownerReferences");
    let mut first_controller: Option<String> = None;
    for (i, r) in refs.iter().enumerate() {
        let here = format!("{at}[{i}]");
        let s = |f: &str| r.get(f).and_then(Value::as_str).unwrap_or("");
        let api_version = s("apiVersion");
        // `ParseGroupVersion`'s split: `(group, version)`.
        let gv = match api_version {
            "" | "/" => Some(("", "")),
            v => match v.split_once('/') {
                None => Some(("", v)),
                Some((g, v)) if !v.contains('/') => Some((g, v)),
                Some(_) => None,
            },
        };
        if api_version.is_empty() {
            errs.push(required(child(&here, "apiVersion"), "must not be empty"));
        } else if gv.is_none_or(|(_, v)| v.is_empty()) {
            errs.push(invalid(
                child(&here, "apiVersion"),
                &Value::String(api_version.into()),
                "must be <group>/<version> or <version>",
            ));
        }
        for f in ["kind", "name", "uid"] {
            if s(f).is_empty() {
                errs.push(required(child(&here, f), "must not be empty"));
            }
        }
        if gv.unwrap_or(("", "")) == ("", "v1") && s("kind") == "Event" {
            errs.push(invalid(
                here.clone(),
                r,
                "/v1, Kind=Event is disallowed from being an owner",
            ));
        }
        if r.get("controller") == Some(&Value::Bool(true)) {
            let name = format!("{}/{}", s("kind"), s("name"));
            match &first_controller {
                Some(first) => errs.push(invalid(
                    at.clone(),
                    &Value::Array(refs.clone()),
                    format!(
                        "Only one reference can have Controller set to true. Found \"true\" in references for {first} and {name}"
                    ),
                )),
                None => first_controller = Some(name),
            }
        }
    }
}

/// `ValidateFinalizers`.
fn finalizers(meta: &Value, path: &str, errs: &mut Vec<FieldError>) {
    let Some(list) = meta.get("finalizers").and_then(Value::as_array) else {
        return;
    };
    let at = child(path, "finalizers");
    let names: Vec<&str> = list.iter().map(|f| f.as_str().unwrap_or("")).collect();
    for f in &names {
        for e in names::qualified_name(f) {
            errs.push(invalid(at.clone(), &Value::String((*f).into()), e));
        }
    }
    if names.contains(&"orphan") && names.contains(&"foregroundDeletion") {
        errs.push(invalid(
            at,
            &Value::Array(list.clone()),
            "finalizer orphan and foregroundDeletion cannot be both set",
        ));
    }
}

/// `ValidateManagedFields`.
fn managed_fields(meta: &Value, path: &str, errs: &mut Vec<FieldError>) {
    let Some(list) = meta.get("managedFields").and_then(Value::as_array) else {
        return;
    };
    let at = child(path, "managedFields");
    for (i, e) in list.iter().enumerate() {
        let here = format!("{at}[{i}]");
        let s = |f: &str| e.get(f).and_then(Value::as_str).unwrap_or("");
        match s("operation") {
            "" => errs.push(required(child(&here, "operation"), "must not be empty")),
            "Apply" | "Update" => {}
            op => errs.push(FieldError {
                field: child(&here, "operation"),
                error_type: ErrorType::NotSupported,
                value: Some(format!("{op:?}")),
                detail: "supported values: \"Apply\", \"Update\"".into(),
            }),
        }
        let fields_type = s("fieldsType");
        if !fields_type.is_empty() && fields_type != "FieldsV1" {
            errs.push(invalid(
                child(&here, "fieldsType"),
                &Value::String(fields_type.into()),
                "must be `FieldsV1`",
            ));
        }
        let manager = s("manager");
        if manager.len() > FIELD_MANAGER_MAX_LENGTH {
            errs.push(FieldError {
                field: child(&here, "manager"),
                error_type: ErrorType::TooLong,
                value: None,
                detail: format!("may not be more than {FIELD_MANAGER_MAX_LENGTH} bytes"),
            });
        }
        for (pos, c) in manager.char_indices() {
            // Go's `unicode.IsPrint`: graphic characters and the ASCII space.
            if c.is_control() || (c.is_whitespace() && c != ' ') {
                errs.push(invalid(
                    child(&here, "manager"),
                    &Value::String(manager.into()),
                    format!("invalid character {c:?} (at position {pos})"),
                ));
            }
        }
        if s("subresource").len() > MAX_SUBRESOURCE_NAME_LENGTH {
            errs.push(FieldError {
                field: child(&here, "subresource"),
                error_type: ErrorType::TooLong,
                value: None,
                detail: format!("may not be more than {MAX_SUBRESOURCE_NAME_LENGTH} bytes"),
            });
        }
    }
}
