//! A CRD version's schema to Rust types with markers: each object with properties a
//! struct, arrays `Vec`, maps `BTreeMap`, int-or-string `IntOrString`, open objects
//! `serde_json::Value`; every keyword a marker where one regenerates it exactly, and what
//! no marker can say in the field's `+kube-codegen:schema` merge patch, with a warning
//! naming the JSON path.

use serde_json::{Map, Value, json};

use crate::diagnostics::{Diagnostic, Location};
use crate::markers::{ITEMS_PREFIX, Name, VALIDATION_PREFIX};
use crate::schema::QUANTITY_PATTERN;
use crate::schema::marker_keywords::{cel_compiles, pattern_compiles};

use super::naming::{Names, snake, upper_camel};

/// The descriptions controller-gen (and `generate`) gives a kind's apiVersion and kind.
pub const API_VERSION_DOC: &str = "APIVersion defines the versioned schema of this representation of an object.\nServers should convert recognized schemas to the latest internal value, and\nmay reject unrecognized values.\nMore info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources";
pub const KIND_DOC: &str = "Kind is a string value representing the REST resource this object represents.\nServers may infer this from the endpoint the client submits requests to.\nCannot be updated.\nIn CamelCase.\nMore info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds";

/// A Rust struct to write.
#[derive(Debug)]
pub struct TypeDef {
    pub name: String,
    /// Doc comment text (the schema's description), if it survives a doc comment unchanged.
    pub doc: Option<String>,
    /// Marker lines without the leading `+`.
    pub markers: Vec<String>,
    pub fields: Vec<FieldDef>,
    /// A kind: `types: TypeMeta` (flattened) and `metadata: ObjectMeta` come first.
    pub kind: bool,
    /// `type Name = <this>;` instead of a struct: an array item or map value that needs a
    /// doc comment or type-level markers of its own.
    pub alias: Option<String>,
    /// An enum of unit variants instead of a struct: (Rust name, JSON value), the first
    /// the `Default`.
    pub variants: Vec<(String, String)>,
    /// The schema paths that use the type (`Application.spec.sources[*]`), the one that
    /// names it first: written above it as a plain comment.
    pub used_at: Vec<String>,
}

#[derive(Debug)]
pub struct FieldDef {
    /// The JSON name (a serde rename when it differs from `rust`).
    pub json: String,
    pub rust: String,
    /// The Rust type, `Option<...>` already applied.
    pub ty: String,
    pub optional: bool,
    /// `#[serde(flatten)]`: the map that keeps unknown fields.
    pub flatten: bool,
    pub doc: Option<String>,
    pub markers: Vec<String>,
}

/// One keyword of a node: its value, and the marker that writes it where there is one.
#[derive(Debug, Clone)]
struct Kw {
    /// Where, relative to the node the field holds: `[]`, `["items"]`, ...
    pos: Vec<&'static str>,
    key: String,
    value: Value,
    /// The marker (without `+`) that writes it on a field, if any.
    marker: Option<String>,
    /// The marker's `items:` form, if it has one.
    items_marker: Option<String>,
}

/// What a schema node becomes: a Rust type, keywords markers may carry, and a merge patch
/// for the rest.
#[derive(Debug, Default)]
struct Lowered {
    ty: String,
    kws: Vec<Kw>,
    /// The node's description, for the field's doc comment (or the patch).
    description: Option<String>,
    hatch: Map<String, Value>,
    /// A struct made for the node: its doc and type-level markers carry the node.
    is_struct: bool,
}

/// Where a schema node sits, for the naming rule: the kind's top-level field it is under
/// (`spec` before `status` before the rest), how deep, then the kind and the path itself.
/// The use that ranks first names the type.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Rank {
    class: u8,
    depth: usize,
    kind: String,
    path: String,
}

/// One use of a type-making schema node, seen by the recording pass.
#[derive(Clone, Debug)]
struct Use {
    rank: Rank,
    /// The name the node's path gives (`ApplicationSpecSource`).
    hint: String,
    /// The path as users read it (`Application.spec.source`).
    shown: String,
}

/// One use of an object node, which may share its struct with uses of the same shape that
/// differ only in their description.
#[derive(Clone, Debug)]
struct StructUse {
    at: Use,
    /// An array's items or a map's values: no field doc can stand in for the struct's doc.
    item: bool,
    description: Option<String>,
}

/// What the recording pass saw: every use of every node that becomes a type, the subtrees
/// of shared nodes walked once per use.
#[derive(Debug, Default)]
pub struct Recorder {
    uses: std::collections::BTreeMap<String, Vec<Use>>,
    structs: std::collections::BTreeMap<String, Vec<StructUse>>,
}

/// The naming rule, decided before any type is written: identical nodes share one type
/// (object nodes whatever their own description, when the uses' docs allow it), named
/// after the use that ranks first ([`Rank`]), names claimed in that order, a collision
/// getting a numeric suffix.
#[derive(Debug, Default)]
pub struct Plan {
    names: std::collections::BTreeMap<String, String>,
    used_at: std::collections::BTreeMap<String, Vec<String>>,
    structs: std::collections::BTreeMap<String, Vec<StructUse>>,
}

/// Which pass a [`ModuleBuilder`] runs.
pub enum Pass<'a> {
    /// Walk every use of every node, sharing nothing, and record them.
    Record(&'a mut Recorder),
    /// Build the types, by the plan made from the record.
    Build(&'a Plan),
}

impl Recorder {
    /// The plan: final keys, their names (claimed from `names` in rank order) and uses.
    pub fn plan(self, names: &mut Names) -> Plan {
        let mut plan = Plan {
            structs: self.structs.clone(),
            ..Default::default()
        };
        let mut uses = self.uses;
        for (base, list) in &self.structs {
            for u in list {
                let key = struct_key(base, group_doc(list, u.item, u.description.as_deref()));
                uses.entry(key).or_default().push(u.at.clone());
            }
        }
        let mut order: Vec<(Use, String)> = vec![];
        for (key, mut list) in uses {
            list.sort_by(|a, b| (&a.rank, &a.hint).cmp(&(&b.rank, &b.hint)));
            let mut shown: Vec<String> = vec![];
            for u in &list {
                if !shown.contains(&u.shown) {
                    shown.push(u.shown.clone());
                }
            }
            plan.used_at.insert(key.clone(), shown);
            order.push((list[0].clone(), key));
        }
        order.sort_by(|(a, ka), (b, kb)| (&a.rank, &a.hint, ka).cmp(&(&b.rank, &b.hint, kb)));
        for (first, key) in order {
            let name = names.claim(&first.hint);
            plan.names.insert(key, name);
        }
        plan
    }
}

/// The doc of the struct a use of an object node shares. An item's description, and a
/// field's missing one, can only be the struct's doc (a field's own doc replaces the
/// struct's; an item has none); a field with a description can use any struct. So uses
/// fixed to one doc share a struct; a free field joins the struct of its own description,
/// else the one of the first-ranked fixed use; with no fixed use, the struct has the doc
/// all the fields agree on, or none.
fn group_doc<'u>(
    uses: &'u [StructUse],
    item: bool,
    description: Option<&'u str>,
) -> Option<&'u str> {
    let fixed = |u: &&StructUse| u.item || u.description.is_none();
    if item || description.is_none() {
        return description;
    }
    if uses
        .iter()
        .filter(fixed)
        .any(|u| u.description.as_deref() == description)
    {
        return description;
    }
    let first = |it: &mut dyn Iterator<Item = &'u StructUse>| {
        it.min_by(|a, b| (&a.at.rank, &a.at.hint).cmp(&(&b.at.rank, &b.at.hint)))
    };
    match first(&mut uses.iter().filter(fixed)) {
        Some(u) => u.description.as_deref(),
        // Only fields, each with its doc: the struct has one when they all agree.
        None => {
            let one = uses[0].description.as_deref();
            uses.iter()
                .all(|u| u.description.as_deref() == one)
                .then_some(one)
                .flatten()
        }
    }
}

fn struct_key(base: &str, doc: Option<&str>) -> String {
    format!(
        "{base} doc {}",
        serde_json::to_string(&doc).expect("JSON serializes")
    )
}

/// `spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.sources.items`
/// -> its [`Rank`] and `Application.spec.sources[*]`.
fn rank_of(kind: &str, path: &str) -> (Rank, String) {
    let within = path
        .split_once("openAPIV3Schema")
        .map_or(path, |(_, rest)| rest);
    let mut shown = kind.to_owned();
    let mut depth = 0;
    let mut class = None;
    let mut rest = within;
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix(".properties.") {
            let end = [".properties.", ".items", ".additionalProperties"]
                .iter()
                .filter_map(|t| r.find(t))
                .min()
                .unwrap_or(r.len());
            let name = &r[..end];
            class.get_or_insert(match name {
                "spec" => 0,
                "status" => 1,
                _ => 2,
            });
            depth += 1;
            shown.push('.');
            shown.push_str(name);
            rest = &r[end..];
        } else if let Some(r) = rest.strip_prefix(".items") {
            shown.push_str("[*]");
            rest = r;
        } else if let Some(r) = rest.strip_prefix(".additionalProperties") {
            shown.push_str(".*");
            rest = r;
        } else {
            shown.push_str(rest);
            break;
        }
    }
    (
        Rank {
            class: class.unwrap_or(2),
            depth,
            kind: kind.to_owned(),
            path: shown.clone(),
        },
        shown,
    )
}

/// Builds the types of one group/version module.
pub struct ModuleBuilder<'a> {
    pub names: &'a mut Names,
    /// The recording pass, or the plan it made.
    pub pass: Pass<'a>,
    /// The kind whose schema is walked.
    pub kind: String,
    /// Types made so far in the module, by the plan's key of what they were made from: an
    /// identical subtree (Gateway API's filters under rules and under backendRefs, a shared
    /// reference type) reuses the one type the plan named, instead of a copy under another
    /// name. Unused while recording.
    pub seen: &'a mut std::collections::BTreeMap<String, String>,
    pub types: Vec<TypeDef>,
    pub warnings: Vec<Diagnostic>,
    /// Where the CRD came from, for warnings.
    pub loc: Location,
    /// Where the CRD's JSON paths are, to point warnings at their lines.
    pub positions: std::sync::Arc<super::positions::Positions>,
    /// Object nodes equal to this version's schema of a Kubernetes type become that type.
    pub kubernetes: crate::KubernetesVersion,
    /// `<crd name> <version>`, for warnings.
    pub what: String,
    /// The kind has a status subresource: `generate` needs a `status` field, even when the
    /// schema has none (it is then taken out of the schema again by the patch).
    pub needs_status: bool,
}

/// Whether `d` comes back unchanged from `/// ` doc lines: the generator strips marker
/// lines (`+...`), trailing spaces and surrounding blank lines.
pub fn doc_safe(d: &str) -> bool {
    !d.is_empty()
        && d.trim() == d
        // A `---` or `TODO` line would end or leave the description when regenerated.
        && crate::read::doc_conventions(d) == d
        && !d.contains('\r')
        && d.split('\n')
            .all(|l| l.trim_end() == l && !l.trim_start().starts_with('+'))
}

fn set_at(hatch: &mut Map<String, Value>, pos: &[&str], key: &str, value: Value) {
    let mut node = hatch;
    for p in pos {
        let entry = node
            .entry((*p).to_owned())
            .or_insert_with(|| Value::Object(Map::new()));
        if !entry.is_object() {
            *entry = Value::Object(Map::new());
        }
        node = entry.as_object_mut().expect("made an object");
    }
    node.insert(key.to_owned(), value);
}

fn merge_into(hatch: &mut Map<String, Value>, pos: &[&str], patch: Map<String, Value>) {
    let mut node = hatch;
    for p in pos {
        let entry = node
            .entry((*p).to_owned())
            .or_insert_with(|| Value::Object(Map::new()));
        if !entry.is_object() {
            *entry = Value::Object(Map::new());
        }
        node = entry.as_object_mut().expect("made an object");
    }
    deep_merge(node, patch);
}

/// Merge `patch` into `into`, objects key by key.
fn deep_merge(into: &mut Map<String, Value>, patch: Map<String, Value>) {
    for (k, v) in patch {
        match (into.get_mut(&k), v) {
            (Some(Value::Object(existing)), Value::Object(inner)) => deep_merge(existing, inner),
            (_, v) => {
                into.insert(k, v);
            }
        }
    }
}

/// A merge patch that turns `from` into `to`.
pub fn merge_diff(from: &Value, to: &Value) -> Value {
    match (from.as_object(), to.as_object()) {
        (Some(f), Some(t)) => {
            let mut out = Map::new();
            for k in f.keys() {
                if !t.contains_key(k) {
                    out.insert(k.clone(), Value::Null);
                }
            }
            for (k, tv) in t {
                match f.get(k) {
                    Some(fv) if fv == tv => {}
                    Some(fv) if fv.is_object() && tv.is_object() => {
                        out.insert(k.clone(), merge_diff(fv, tv));
                    }
                    _ => {
                        out.insert(k.clone(), tv.clone());
                    }
                }
            }
            Value::Object(out)
        }
        _ => to.clone(),
    }
}

/// A string marker value, quoted so the marker parser gives it back exactly.
fn quoted(s: &str) -> String {
    serde_json::to_string(s).expect("strings serialize")
}

/// The marker parser turns the first `:=` into `=`, and a marker is one line.
fn marker_safe(m: &str) -> bool {
    !m.contains(":=") && !m.contains('\n') && !m.contains('\r')
}

fn num(v: &Value) -> Option<String> {
    v.as_number().map(|n| n.to_string())
}

impl ModuleBuilder<'_> {
    /// The type already made for `key`, if any; none while recording, so every use of a
    /// node is walked.
    fn made(&self, key: &str) -> Option<String> {
        match self.pass {
            Pass::Record(_) => None,
            Pass::Build(_) => self.seen.get(key).cloned(),
        }
    }

    /// The name of the type for `key`, made at `path` with the path's name `hint`: recorded
    /// while recording, the plan's when building.
    fn name_for(&mut self, key: &str, hint: &str, path: &str) -> (String, Vec<String>) {
        let (rank, shown) = rank_of(&self.kind, path);
        match &mut self.pass {
            Pass::Record(r) => {
                r.uses.entry(key.to_owned()).or_default().push(Use {
                    rank,
                    hint: hint.to_owned(),
                    shown,
                });
                (hint.to_owned(), vec![])
            }
            Pass::Build(plan) => {
                let name = plan
                    .names
                    .get(key)
                    .cloned()
                    .unwrap_or_else(|| self.names.claim(hint));
                self.seen.insert(key.to_owned(), name.clone());
                (name, plan.used_at.get(key).cloned().unwrap_or_default())
            }
        }
    }

    fn warn(&mut self, path: &str, keys: &[String]) {
        let at = match self.positions.locate(path) {
            Some((l, c)) => Location::new(&self.loc.file, l, c),
            None => self.loc.clone(),
        };
        self.warnings.push(
            Diagnostic::warning(
                at,
                format!(
                    "{}: `{path}`: {} kept as `+kube-codegen:schema` (no marker writes {})",
                    self.what,
                    keys.iter()
                        .map(|k| format!("`{k}`"))
                        .collect::<Vec<_>>()
                        .join(", "),
                    if keys.len() == 1 { "it" } else { "them" }
                ),
            )
            .with_hint("the round trip holds; the Rust type does not check these keywords"),
        );
    }

    /// The keywords of `n` a marker can write, given the node's type; `None` for the rest.
    fn keyword(&self, n: &Map<String, Value>, key: &str, value: &Value) -> Option<Kw> {
        let ty = n.get("type").and_then(Value::as_str);
        let ios = n.get("x-kubernetes-int-or-string") == Some(&Value::Bool(true));
        let stringy = ty == Some("string") || ios;
        let numeric = matches!(ty, Some("integer" | "number"));
        let kw = |marker: String, items: bool| {
            let items_marker = items.then(|| marker.replacen(VALIDATION_PREFIX, ITEMS_PREFIX, 1));
            Some(Kw {
                pos: vec![],
                key: key.to_owned(),
                value: value.clone(),
                marker: Some(marker),
                items_marker,
            })
        };
        let count = || value.as_u64().map(|c| c.to_string());
        let r = match key {
            "maximum" if numeric => kw(Name::Maximum.with_value(num(value)?), true),
            "minimum" if numeric => kw(Name::Minimum.with_value(num(value)?), true),
            "multipleOf" if numeric => kw(Name::MultipleOf.with_value(num(value)?), true),
            "exclusiveMaximum" if numeric && value == &Value::Bool(true) => {
                kw(Name::ExclusiveMaximum.text(), true)
            }
            "exclusiveMinimum" if numeric && value == &Value::Bool(true) => {
                kw(Name::ExclusiveMinimum.text(), true)
            }
            "maxLength" if stringy => kw(Name::MaxLength.with_value(count()?), true),
            "minLength" if stringy => kw(Name::MinLength.with_value(count()?), true),
            "maxItems" if ty == Some("array") => kw(Name::MaxItems.with_value(count()?), true),
            "minItems" if ty == Some("array") => kw(Name::MinItems.with_value(count()?), true),
            "maxProperties" if ty == Some("object") => {
                kw(Name::MaxProperties.with_value(count()?), true)
            }
            "minProperties" if ty == Some("object") => {
                kw(Name::MinProperties.with_value(count()?), true)
            }
            "pattern" if stringy && pattern_compiles(value.as_str()?) => {
                kw(Name::Pattern.with_value(quoted(value.as_str()?)), true)
            }
            "format" if stringy || numeric => {
                kw(Name::Format.with_value(quoted(value.as_str()?)), true)
            }
            "enum" => {
                let items = value.as_array()?;
                let text: Vec<String> = match ty {
                    Some("string") if !ios => items
                        .iter()
                        .map(|i| {
                            let s = i.as_str()?;
                            // Values the marker parser would read back differently.
                            let plain = !s.is_empty()
                                && s.trim() == s
                                && !s.starts_with(['"', '`', '{', '['])
                                && !matches!(s, "null");
                            plain.then(|| quoted(s))
                        })
                        .collect::<Option<_>>()?,
                    Some("integer") => items
                        .iter()
                        .map(|i| i.as_i64().map(|n| n.to_string()))
                        .collect::<Option<_>>()?,
                    _ => return None,
                };
                kw(
                    Name::Enum.with_value(format!("{{{}}}", text.join(","))),
                    true,
                )
            }
            "title" => Some(Kw {
                marker: Some(Name::Title.with_value(quoted(value.as_str()?))),
                items_marker: None,
                pos: vec![],
                key: key.to_owned(),
                value: value.clone(),
            }),
            "nullable" if value == &Value::Bool(true) => Some(Kw {
                marker: Some(Name::Nullable.text()),
                items_marker: None,
                pos: vec![],
                key: key.to_owned(),
                value: value.clone(),
            }),
            "default" => Some(Kw {
                marker: Some(Name::Default.with_value(serde_json::to_string(value).ok()?)),
                items_marker: None,
                pos: vec![],
                key: key.to_owned(),
                value: value.clone(),
            }),
            "x-kubernetes-list-type" if ty == Some("array") => {
                let t = value.as_str()?;
                matches!(t, "atomic" | "set" | "map").then(|| Kw {
                    marker: Some(Name::ListType.with_value(t)),
                    items_marker: None,
                    pos: vec![],
                    key: key.to_owned(),
                    value: value.clone(),
                })
            }
            "x-kubernetes-map-type" if ty == Some("object") => {
                let t = value.as_str()?;
                matches!(t, "atomic" | "granular").then(|| Kw {
                    marker: Some(Name::MapType.with_value(t)),
                    items_marker: None,
                    pos: vec![],
                    key: key.to_owned(),
                    value: value.clone(),
                })
            }
            "x-kubernetes-embedded-resource"
                if ty == Some("object") && value == &Value::Bool(true) =>
            {
                kw(Name::XEmbeddedResource.text(), true)
            }
            "x-kubernetes-preserve-unknown-fields" if value == &Value::Bool(true) => {
                kw(Name::XPreserveUnknownFields.text(), true)
            }
            _ => None,
        };
        r.filter(|k| k.marker.as_deref().is_some_and(marker_safe))
    }

    /// `listMapKey` markers (one per key) and `XValidation` markers (one per rule): all of a
    /// node's or none, since the patch would replace the whole list.
    fn list_keywords(&self, key: &str, value: &Value) -> Option<Vec<Kw>> {
        let items = value.as_array()?;
        let mut out = vec![];
        for i in items {
            let (marker, items_marker) = match key {
                "x-kubernetes-list-map-keys" => (Name::ListMapKey.with_value(i.as_str()?), None),
                "x-kubernetes-validations" => {
                    let r = i.as_object()?;
                    let mut args = vec![];
                    for (k, v) in r {
                        match (k.as_str(), v) {
                            ("rule", Value::String(s)) if cel_compiles(s) => {
                                args.insert(0, format!("rule={}", quoted(s)))
                            }
                            ("messageExpression", Value::String(s)) if cel_compiles(s) => {
                                args.push(format!("messageExpression={}", quoted(s)))
                            }
                            ("message" | "fieldPath", Value::String(s)) => {
                                args.push(format!("{k}={}", quoted(s)))
                            }
                            ("reason", Value::String(s))
                                if matches!(
                                    s.as_str(),
                                    "FieldValueInvalid"
                                        | "FieldValueForbidden"
                                        | "FieldValueRequired"
                                        | "FieldValueDuplicate"
                                ) =>
                            {
                                args.push(format!("reason={s}"))
                            }
                            ("optionalOldSelf", Value::Bool(b)) => {
                                args.push(format!("optionalOldSelf={b}"))
                            }
                            _ => return None,
                        }
                    }
                    if !r.contains_key("rule") {
                        return None;
                    }
                    let m = Name::XValidation.with_args(args.join(","));
                    let im = m.replacen(VALIDATION_PREFIX, ITEMS_PREFIX, 1);
                    (m, Some(im))
                }
                _ => return None,
            };
            if !marker_safe(&marker) {
                return None;
            }
            out.push(Kw {
                pos: vec![],
                key: key.to_owned(),
                value: value.clone(),
                marker: Some(marker),
                items_marker,
            });
        }
        Some(out)
    }

    /// Lower one schema node; `hint` names a struct made for it, `path` is its JSON path.
    fn lower(&mut self, node: &Value, hint: &str, path: &str) -> Lowered {
        let empty = Map::new();
        let n = node.as_object().unwrap_or(&empty);
        let ty = n.get("type").and_then(Value::as_str);
        let ios = n.get("x-kubernetes-int-or-string") == Some(&Value::Bool(true));
        let pres = n.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true));
        let mut l = Lowered::default();
        // What the Rust type writes by itself; keys handled by recursion are listed apart.
        let mut implied = Map::new();
        let mut handled: Vec<&str> = vec!["description"];
        let ios_pair = json!([{"type": "integer"}, {"type": "string"}]);
        if ios {
            implied.insert("anyOf".into(), ios_pair.clone());
            implied.insert("x-kubernetes-int-or-string".into(), Value::Bool(true));
            if n.get("pattern").and_then(Value::as_str) == Some(QUANTITY_PATTERN) {
                implied.insert("pattern".into(), Value::String(QUANTITY_PATTERN.into()));
                l.ty = "::k8s_openapi::apimachinery::pkg::api::resource::Quantity".into();
            } else {
                l.ty = "::k8s_openapi::apimachinery::pkg::util::intstr::IntOrString".into();
            }
        } else {
            match ty {
                Some("string") => {
                    implied.insert("type".into(), json!("string"));
                    l.ty = "String".into();
                    // A string enum becomes a Rust enum of unit variants, which `generate`
                    // writes back as `type: string` with the same `enum`.
                    if let Some(values) = n.get("enum").and_then(Value::as_array)
                        && let Some(name) = self.string_enum(values, hint, path)
                    {
                        implied.insert("enum".into(), Value::Array(values.clone()));
                        l.ty = name;
                    }
                }
                Some("boolean") => {
                    implied.insert("type".into(), json!("boolean"));
                    l.ty = "bool".into();
                }
                Some("integer") => {
                    implied.insert("type".into(), json!("integer"));
                    let f = n.get("format").and_then(Value::as_str);
                    let (rust, fmt) = if f == Some("int32") {
                        ("i32", "int32")
                    } else {
                        ("i64", "int64")
                    };
                    l.ty = rust.into();
                    implied.insert("format".into(), json!(fmt));
                }
                Some("number") => {
                    implied.insert("type".into(), json!("number"));
                    let f = n.get("format").and_then(Value::as_str);
                    let (rust, fmt) = if f == Some("float") {
                        ("f32", "float")
                    } else {
                        ("f64", "double")
                    };
                    l.ty = rust.into();
                    implied.insert("format".into(), json!(fmt));
                }
                Some("array") => {
                    implied.insert("type".into(), json!("array"));
                    match n.get("items") {
                        Some(items) if items.is_object() => {
                            handled.push("items");
                            let item_path = format!("{path}.items");
                            let item = self.lower(items, hint, &item_path);
                            let t = self.nest(&mut l, (items, item), "items", hint, &item_path);
                            l.ty = format!("Vec<{t}>");
                        }
                        _ => {
                            l.ty = "Vec<::serde_json::Value>".into();
                            implied.insert(
                                "items".into(),
                                json!({"x-kubernetes-preserve-unknown-fields": true}),
                            );
                        }
                    }
                }
                Some("object") => {
                    implied.insert("type".into(), json!("object"));
                    let props = n.get("properties").and_then(Value::as_object);
                    let addl = n.get("additionalProperties").filter(|a| a.is_object());
                    if let Some(addl) = addl.filter(|_| props.is_none()) {
                        handled.push("additionalProperties");
                        let value_path = format!("{path}.additionalProperties");
                        let value = self.lower(addl, hint, &value_path);
                        let t = self.nest(
                            &mut l,
                            (addl, value),
                            "additionalProperties",
                            hint,
                            &value_path,
                        );
                        l.ty = format!("::std::collections::BTreeMap<String, {t}>");
                    } else if props.is_none() && pres {
                        // An open object: any JSON, typed `object`.
                        implied.remove("type");
                        implied.insert(
                            "x-kubernetes-preserve-unknown-fields".into(),
                            Value::Bool(true),
                        );
                        l.ty = "::serde_json::Value".into();
                        l.kws.push(Kw {
                            pos: vec![],
                            key: "type".into(),
                            value: json!("object"),
                            marker: Some(Name::Type.with_value("object")),
                            items_marker: Name::Type.items_form().map(|t| format!("{t}=object")),
                        });
                        handled.push("type");
                    } else if let Some((k8s, k8s_doc)) = super::k8s::matching(self.kubernetes, n) {
                        // The k8s-openapi type writes this very schema; a description of
                        // the node's own is the field's doc (or the alias's, in a list).
                        l.ty = k8s;
                        let own = n.get("description").and_then(Value::as_str);
                        l.is_struct = own == k8s_doc.as_deref();
                        if own.is_none() && k8s_doc.is_some() {
                            l.hatch.insert("description".into(), Value::Null);
                        }
                        for k in ["default", "nullable", "description"] {
                            if let Some(v) = n.get(k) {
                                self.plain_keyword(&mut l, n, k, v);
                            }
                        }
                        return l;
                    } else {
                        let name = self.structure(n, hint, path, false);
                        l.ty = name;
                        l.is_struct = true;
                        // The struct carries everything but where-it-is keywords.
                        for k in ["default", "nullable", "description"] {
                            if let Some(v) = n.get(k) {
                                self.plain_keyword(&mut l, n, k, v);
                            }
                        }
                        return l;
                    }
                }
                _ if pres => {
                    implied.insert(
                        "x-kubernetes-preserve-unknown-fields".into(),
                        Value::Bool(true),
                    );
                    l.ty = "::serde_json::Value".into();
                }
                _ => {
                    // Untyped without preserve-unknown-fields: only inside junctors, which
                    // the patch carries whole.
                    implied.insert(
                        "x-kubernetes-preserve-unknown-fields".into(),
                        Value::Bool(true),
                    );
                    l.ty = "::serde_json::Value".into();
                }
            }
        }
        for (k, v) in n {
            if handled.contains(&k.as_str()) && k != "description" {
                continue;
            }
            if implied.get(k) == Some(v) {
                continue;
            }
            self.plain_keyword(&mut l, n, k, v);
        }
        for (k, _) in implied.iter() {
            if !n.contains_key(k) {
                l.hatch.insert(k.clone(), Value::Null);
            }
        }
        l
    }

    /// One keyword of node `n` into `l`: a marker keyword, the description, or the patch.
    fn plain_keyword(&mut self, l: &mut Lowered, n: &Map<String, Value>, k: &str, v: &Value) {
        if k == "description" {
            match v.as_str() {
                Some(d) if doc_safe(d) => l.description = Some(d.to_owned()),
                _ => {
                    l.hatch.insert(k.into(), v.clone());
                }
            }
            return;
        }
        if matches!(k, "x-kubernetes-list-map-keys" | "x-kubernetes-validations") {
            match self.list_keywords(k, v) {
                Some(kws) => l.kws.extend(kws),
                None => {
                    l.hatch.insert(k.into(), v.clone());
                }
            }
            return;
        }
        match self.keyword(n, k, v) {
            Some(kw) => l.kws.push(kw),
            None => {
                l.hatch.insert(k.into(), v.clone());
            }
        }
    }

    /// An enum for the string values of an `enum` keyword, or `None` when a value cannot
    /// be a unit variant (empty, duplicated).
    fn string_enum(&mut self, values: &[Value], hint: &str, path: &str) -> Option<String> {
        let key = format!("enum {}", Value::Array(values.to_vec()));
        if let Some(name) = self.made(&key) {
            return Some(name);
        }
        let mut variants = vec![];
        let mut names = Names::default();
        for v in values {
            let s = v.as_str().filter(|s| !s.is_empty())?;
            if variants.iter().any(|(_, j): &(String, String)| j == s) {
                return None;
            }
            let rust = upper_camel(s);
            let rust = if matches!(rust.as_str(), "Self" | "Default") {
                format!("{rust}Value")
            } else {
                rust
            };
            variants.push((names.claim(&rust), s.to_owned()));
        }
        if variants.is_empty() {
            return None;
        }
        let (name, used_at) = self.name_for(&key, hint, path);
        self.types.push(TypeDef {
            name: name.clone(),
            doc: None,
            markers: vec![],
            fields: vec![],
            kind: false,
            alias: None,
            variants,
            used_at,
        });
        Some(name)
    }

    /// Nest a child (array items, map values) under `at` in `l`; returns the child's Rust
    /// type. A child that is not a struct and has a description, or keywords no `items:`
    /// marker form writes, becomes a type alias carrying them as doc and type-level markers
    /// (Go's named types: `type Hostname string`).
    fn nest(
        &mut self,
        l: &mut Lowered,
        (node, child): (&Value, Lowered),
        at: &'static str,
        hint: &str,
        path: &str,
    ) -> String {
        if child.is_struct {
            // The struct's doc and markers say everything; the description is its doc.
            for mut kw in child.kws {
                kw.pos.insert(0, at);
                l.kws.push(kw);
            }
            if !child.hatch.is_empty() {
                merge_into(&mut l.hatch, &[at], child.hatch);
            }
            return child.ty;
        }
        let items_ok = |k: &Kw| at == "items" && k.pos.is_empty() && k.items_marker.is_some();
        let alias = child.description.is_some()
            || !child.hatch.is_empty()
            || child.kws.iter().any(|k| !items_ok(k));
        if !alias {
            for mut kw in child.kws {
                kw.pos.insert(0, at);
                l.kws.push(kw);
            }
            return child.ty;
        }
        // The node itself is the key: the same in both passes (the child's Rust type may
        // be a name, which only the plan fixes).
        let key = format!("alias {at} {node}");
        if let Some(name) = self.made(&key) {
            return name;
        }
        let suffix = if at == "items" { "Item" } else { "Value" };
        let (name, used_at) = self.name_for(&key, &format!("{hint}{suffix}"), path);
        let mut markers = vec![];
        let mut hatch = child.hatch;
        for kw in child.kws {
            // `+default` and `+nullable` are field markers: on a type, the patch says them.
            let type_level = kw.marker.as_deref().filter(|m| {
                !m.starts_with(&Name::Default.with_value("")) && *m != Name::Nullable.as_str()
            });
            match (&kw.pos[..], type_level, &kw.items_marker) {
                ([], Some(m), _) => markers.push(m.to_owned()),
                (["items"], _, Some(m)) => markers.push(m.clone()),
                (pos, _, _) => set_at(&mut hatch, pos, &kw.key, kw.value.clone()),
            }
        }
        if !hatch.is_empty() {
            let keys = hatch_keys(&hatch);
            self.warn(path, &keys);
            markers.push(Name::Schema.with_value(
                serde_json::to_string(&Value::Object(hatch)).expect("JSON serializes"),
            ));
        }
        self.types.push(TypeDef {
            name: name.clone(),
            doc: child.description,
            markers,
            fields: vec![],
            kind: false,
            alias: Some(child.ty),
            variants: vec![],
            used_at,
        });
        name
    }

    /// A struct for object node `n`; returns its name. `kind`: the root of a kind.
    pub fn structure(
        &mut self,
        n: &Map<String, Value>,
        hint: &str,
        path: &str,
        kind: bool,
    ) -> String {
        // An object node's own description belongs to where it is used (a field's doc
        // replaces its struct's), so nodes differing only there may share a struct: the
        // shape without it is the base of the key, the struct's doc its group's
        // (`group_doc`). A description no doc comment carries stays in the shape.
        let description = n
            .get("description")
            .and_then(Value::as_str)
            .filter(|d| doc_safe(d));
        let mut shape = n.clone();
        if description.is_some() {
            shape.remove("description");
        }
        let base = format!("struct {}", Value::Object(shape));
        let item = path.ends_with(".items") || path.ends_with(".additionalProperties");
        let (key, doc) = match &mut self.pass {
            Pass::Record(r) if !kind => {
                let (rank, shown) = rank_of(&self.kind, path);
                r.structs.entry(base.clone()).or_default().push(StructUse {
                    at: Use {
                        rank,
                        hint: hint.to_owned(),
                        shown,
                    },
                    item,
                    description: description.map(str::to_owned),
                });
                (base.clone(), description.map(str::to_owned))
            }
            Pass::Build(plan) if !kind => {
                let doc = plan
                    .structs
                    .get(&base)
                    .map(|uses| group_doc(uses, item, description).map(str::to_owned))
                    .unwrap_or_else(|| description.map(str::to_owned));
                (struct_key(&base, doc.as_deref()), doc)
            }
            _ => (base.clone(), description.map(str::to_owned)),
        };
        if !kind && let Some(name) = self.made(&key) {
            return name;
        }
        let (name, used_at) = if kind {
            (hint.to_owned(), vec![])
        } else {
            match &self.pass {
                // Recorded with the struct's uses above.
                Pass::Record(_) => (hint.to_owned(), vec![]),
                Pass::Build(_) => self.name_for(&key, hint, path),
            }
        };
        // Reserve the slot now so types come out parents first.
        let at = self.types.len();
        self.types.push(TypeDef {
            name: name.clone(),
            doc: None,
            markers: vec![],
            fields: vec![],
            kind,
            alias: None,
            variants: vec![],
            used_at,
        });
        let empty = Map::new();
        let props = n
            .get("properties")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        let required: Vec<&str> = n
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let mut field_names = Names::default();
        if kind {
            field_names.claim("types");
            field_names.claim("metadata");
        }
        let mut fields = vec![];
        let mut own = Lowered::default();
        for (pname, pnode) in props {
            if kind && matches!(pname.as_str(), "apiVersion" | "kind" | "metadata") {
                continue;
            }
            let child_path = format!("{path}.properties.{pname}");
            // Named after the path, not after the parent's (maybe shared) name: a name
            // follows from the schema alone.
            let lc = self.lower(pnode, &format!("{hint}{}", upper_camel(pname)), &child_path);
            let optional = !required.contains(&pname.as_str());
            let mut markers = vec![];
            let mut hatch = lc.hatch;
            for kw in lc.kws {
                match (&kw.pos[..], &kw.marker, &kw.items_marker) {
                    ([], Some(m), _) => markers.push(m.clone()),
                    (["items"], _, Some(m)) => markers.push(m.clone()),
                    (pos, _, _) => set_at(&mut hatch, pos, &kw.key, kw.value.clone()),
                }
            }
            // A patch replaces lists whole: a keyword in both the patch and a marker would
            // come out twice, so the patch wins and the markers for its keys go.
            if !hatch.is_empty() {
                let keys: Vec<String> = hatch_keys(&hatch);
                self.warn(&child_path, &keys);
                markers.push(Name::Schema.with_value(
                    serde_json::to_string(&Value::Object(hatch)).expect("JSON serializes"),
                ));
            }
            let rust = field_names.claim(&snake(pname));
            let ty = if optional {
                format!("Option<{}>", lc.ty)
            } else {
                lc.ty
            };
            fields.push(FieldDef {
                json: pname.clone(),
                rust,
                ty,
                optional,
                flatten: false,
                doc: lc.description,
                markers,
            });
        }
        if kind && self.needs_status && !props.contains_key("status") {
            let rust = field_names.claim("status");
            fields.push(FieldDef {
                json: "status".into(),
                rust,
                ty: "Option<::serde_json::Value>".into(),
                optional: true,
                flatten: false,
                doc: Some("The CRD declares a status subresource but no status schema.".into()),
                markers: vec![],
            });
            set_at(&mut own.hatch, &["properties"], "status", Value::Null);
        }
        // Object-level keywords of the node itself.
        let mut implied = Map::new();
        implied.insert("type".into(), json!("object"));
        for (k, v) in n {
            match k.as_str() {
                "properties" | "required" | "default" | "nullable" => {}
                "x-kubernetes-preserve-unknown-fields" if v == &Value::Bool(true) => {
                    let rust = field_names.claim("unknown_fields");
                    fields.push(FieldDef {
                        json: String::new(),
                        rust,
                        ty: "::std::collections::BTreeMap<String, ::serde_json::Value>".into(),
                        optional: false,
                        flatten: true,
                        doc: Some("Fields the schema does not name, kept (`x-kubernetes-preserve-unknown-fields`).".into()),
                        markers: vec![],
                    });
                }
                _ if implied.get(k) == Some(v) => {}
                _ => self.plain_keyword(&mut own, n, k, v),
            }
        }
        if !n.contains_key("type") {
            own.hatch.insert("type".into(), Value::Null);
        }
        // Required names the struct cannot express (not among its properties, or the
        // kind's apiVersion/kind/metadata).
        let generated: std::collections::BTreeSet<&str> = fields
            .iter()
            .filter(|f| !f.optional && !f.flatten)
            .map(|f| f.json.as_str())
            .collect();
        let wanted: std::collections::BTreeSet<&str> = required.iter().copied().collect();
        if generated != wanted {
            own.hatch.insert(
                "required".into(),
                n.get("required").cloned().unwrap_or(Value::Null),
            );
        }
        if kind {
            let standard = [
                (
                    "apiVersion",
                    json!({"description": API_VERSION_DOC, "type": "string"}),
                ),
                ("kind", json!({"description": KIND_DOC, "type": "string"})),
                ("metadata", json!({"type": "object"})),
            ];
            for (p, std) in standard {
                match props.get(p) {
                    Some(orig) if orig == &std => {}
                    Some(orig) => {
                        set_at(&mut own.hatch, &["properties"], p, merge_diff(&std, orig))
                    }
                    None => set_at(&mut own.hatch, &["properties"], p, Value::Null),
                }
            }
        }
        let mut markers = vec![];
        for kw in own.kws {
            match (&kw.pos[..], kw.marker) {
                ([], Some(m)) => markers.push(m),
                _ => set_at(&mut own.hatch, &kw.pos, &kw.key, kw.value),
            }
        }
        if !own.hatch.is_empty() {
            let keys = hatch_keys(&own.hatch);
            self.warn(path, &keys);
            markers.push(Name::Schema.with_value(
                serde_json::to_string(&Value::Object(own.hatch)).expect("JSON serializes"),
            ));
        }
        let t = &mut self.types[at];
        // The group's doc: this node's description, or one all the struct's uses agree on
        // (a use with another description says it in the field's doc).
        t.doc = if kind { own.description } else { doc };
        t.markers = markers;
        t.fields = fields;
        name
    }
}

/// The keywords a patch sets, as dotted paths, for a warning.
fn hatch_keys(h: &Map<String, Value>) -> Vec<String> {
    let mut out = vec![];
    for (k, v) in h {
        match v {
            Value::Object(inner)
                if matches!(k.as_str(), "items" | "additionalProperties" | "properties") =>
            {
                for sub in hatch_keys(inner) {
                    out.push(format!("{k}.{sub}"));
                }
            }
            _ => out.push(k.clone()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::doc_safe;

    /// A description `generate` would cut (a `---` line ends it, a `TODO` line leaves it)
    /// cannot be a doc comment: it goes into the schema patch, so the round trip holds.
    #[test]
    fn descriptions_the_doc_conventions_would_change_are_not_doc_safe() {
        assert!(doc_safe("Plain.\nTwo lines."));
        assert!(!doc_safe("Before.\n---\nAfter."));
        assert!(!doc_safe("TODO: later.\nNow."));
        assert!(doc_safe("```\n---\n```"));
    }
}
