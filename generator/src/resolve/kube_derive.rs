//! kube-derive input: a `#[derive(CustomResource)]` struct and its `#[kube(...)]`
//! attributes, read as kube-derive 5 reads them (its `KubeAttrs`), into the same [`Kind`]
//! the markers give, with [`SchemaDialect::KubeDerive`] so the CRD follows kube-derive's
//! `crd()`. The kind struct itself (`Foo` with `metadata`, `spec`, `status`) is what
//! kube-derive generates; it is synthesized here as a source item so the resolver treats
//! it as any other type.
//!
//! The attributes of the other derives on the types a kind reaches (`#[x_kube]`,
//! `#[schemars]`, `#[validate]`, `#[garde]`) become the markers the marker path would have
//! ([`schema_markers`]); [`check_types`] then says where the kube-derive schema
//! (`generators::crd::kube_derive`) would differ from kube-derive's own.
//!
//! Every key is judged: kube-derive's keys without an effect on what we generate are
//! accepted, keys whose effect we do not reproduce are located warnings, wrong values and
//! contradictions are located errors.

use std::collections::BTreeMap;

use crate::diagnostics::{Diagnostic, Diagnostics, Location};
use crate::markers::{Marker, Name};
use crate::model::*;
use crate::read::{self as src, AttrArg, AttrValue, ToolAttr};

use super::package::is_dns_subdomain;

/// What kube-derive's derive macro needs: the derive itself.
pub(super) fn is_custom_resource(item: &src::Item) -> bool {
    item.derives.iter().any(|d| d == "CustomResource")
}

/// A `#[derive(CustomResource)]` struct, read: the kind, its group/version, and the root
/// struct kube-derive generates for it.
pub(super) struct DerivedKind {
    pub group: String,
    pub version: String,
    pub kind: Kind,
    /// kube-derive's root struct, as a source item of the spec's module.
    pub root: src::Item,
}

/// Values of single-valued keys, with where each was set (to report a second one).
#[derive(Default)]
struct Seen(BTreeMap<String, Location>);

impl Seen {
    fn first(&mut self, arg: &AttrArg, diags: &mut Diagnostics) -> bool {
        if let Some(prev) = self.0.get(&arg.key) {
            diags.push(
                Diagnostic::new(
                    arg.loc.clone(),
                    format!("`#[kube({})]` is set twice", arg.key),
                )
                .with_hint(format!(
                    "kube-derive refuses a duplicate field; the first is at {prev}"
                )),
            );
            return false;
        }
        self.0.insert(arg.key.clone(), arg.loc.clone());
        true
    }
}

fn str_of(arg: &AttrArg, diags: &mut Diagnostics) -> Option<String> {
    match &arg.value {
        AttrValue::Str(s) => Some(s.clone()),
        _ => {
            diags.push(
                Diagnostic::new(
                    arg.loc.clone(),
                    format!("`#[kube({})]` takes a string", arg.key),
                )
                .with_hint(format!("write `{} = \"...\"`", arg.key)),
            );
            None
        }
    }
}

fn bool_of(arg: &AttrArg, diags: &mut Diagnostics) -> Option<bool> {
    match &arg.value {
        AttrValue::Bool(b) => Some(*b),
        AttrValue::Flag => Some(true),
        _ => {
            diags.push(
                Diagnostic::new(
                    arg.loc.clone(),
                    format!("`#[kube({})]` takes `true` or `false`", arg.key),
                )
                .with_hint(format!("write `{} = false`", arg.key)),
            );
            None
        }
    }
}

/// `annotation("key", "value")` / `label(...)`.
fn pair_of(arg: &AttrArg, diags: &mut Diagnostics) -> Option<(String, String)> {
    if let AttrValue::List(items) = &arg.value
        && let [a, b] = items.as_slice()
        && let (AttrValue::Str(k), AttrValue::Str(v)) = (&a.value, &b.value)
        && a.key.is_empty()
        && b.key.is_empty()
    {
        return Some((k.clone(), v.clone()));
    }
    diags.push(
        Diagnostic::new(
            arg.loc.clone(),
            format!("`#[kube({})]` takes a key and a value", arg.key),
        )
        .with_hint(format!(
            "write `{}(\"example.com/key\", \"value\")`",
            arg.key
        )),
    );
    None
}

/// The named arguments of `key(a = ..., b = ...)` or of the JSON object in `key = "{...}"`
/// (kube-derive accepts both for `printcolumn` and `scale`), as strings and numbers.
fn object_of(
    arg: &AttrArg,
    fields: &[(&'static str, &'static str)],
    diags: &mut Diagnostics,
) -> Option<BTreeMap<&'static str, serde_json::Value>> {
    let mut out = BTreeMap::new();
    // (attribute name, JSON name): kube-derive's structs are serde camelCase.
    let lookup = |k: &str| {
        fields
            .iter()
            .find(|(a, j)| *a == k || *j == k)
            .map(|(a, _)| *a)
    };
    let known = fields
        .iter()
        .map(|(a, _)| *a)
        .collect::<Vec<_>>()
        .join(", ");
    match &arg.value {
        AttrValue::Str(json) => {
            let parsed: serde_json::Map<String, serde_json::Value> =
                match serde_json::from_str(json) {
                    Ok(v) => v,
                    Err(e) => {
                        diags.push(
                            Diagnostic::new(
                                arg.loc.clone(),
                                format!("`#[kube({})]` is not a JSON object: {e}", arg.key),
                            )
                            .with_hint(format!("write `{}(...)` with the keys {known}", arg.key)),
                        );
                        return None;
                    }
                };
            for (k, v) in parsed {
                match lookup(&k) {
                    Some(name) => {
                        out.insert(static_name(name, fields), v);
                    }
                    None => {
                        diags.push(
                            Diagnostic::new(
                                arg.loc.clone(),
                                format!("unknown key `{k}` in `#[kube({})]`", arg.key),
                            )
                            .with_hint(format!("keys: {known}")),
                        );
                        return None;
                    }
                }
            }
        }
        AttrValue::List(items) => {
            for item in items {
                let Some(name) = lookup(&item.key) else {
                    diags.push(
                        Diagnostic::new(
                            item.loc.clone(),
                            format!("unknown key `{}` in `#[kube({}(...))]`", item.key, arg.key),
                        )
                        .with_hint(format!("keys: {known}")),
                    );
                    return None;
                };
                let v = match &item.value {
                    AttrValue::Str(s) => serde_json::Value::String(s.clone()),
                    AttrValue::Number(n) => match n.parse::<i64>() {
                        Ok(i) => i.into(),
                        Err(_) => serde_json::Value::String(n.clone()),
                    },
                    _ => {
                        diags.push(
                            Diagnostic::new(
                                item.loc.clone(),
                                format!("`{}` takes a literal", item.key),
                            )
                            .with_hint(format!("write `{} = \"...\"`", item.key)),
                        );
                        return None;
                    }
                };
                out.insert(static_name(name, fields), v);
            }
        }
        _ => {
            diags.push(
                Diagnostic::new(
                    arg.loc.clone(),
                    format!("`#[kube({})]` takes `(...)` or a JSON string", arg.key),
                )
                .with_hint(format!("write `{}(...)` with the keys {known}", arg.key)),
            );
            return None;
        }
    }
    Some(out)
}

/// The `&'static str` of a field name (the table's entries are static).
fn static_name(name: &str, fields: &[(&'static str, &'static str)]) -> &'static str {
    fields
        .iter()
        .find(|(a, _)| *a == name)
        .map(|(a, _)| *a)
        .expect("looked up in the table")
}

/// kube-derive 5's `to_plural`: the same rules as controller-gen's (`s`/`x`/`z`/`ch`/`sh`
/// take `es`, a consonant's `y` becomes `ies`), so one function.
fn to_plural(word: &str) -> String {
    super::kind::pluralize(word)
}

/// Read one `#[derive(CustomResource)]` item of `module`.
pub(super) fn derived_kind(
    module: &src::Module,
    item: &src::Item,
    key_of: impl Fn(&str) -> String,
    diags: &mut Diagnostics,
) -> Option<DerivedKind> {
    let kube: Vec<&ToolAttr> = item
        .tool_attrs
        .iter()
        .filter(|a| a.tool == "kube")
        .collect();
    let at = kube
        .first()
        .map(|a| a.loc.clone())
        .unwrap_or_else(|| item.loc.clone());
    let mut ok = true;
    for a in &kube {
        if let Some((loc, why)) = &a.unparsed {
            diags.push(
                Diagnostic::new(loc.clone(), format!("`#[kube(...)]` does not parse: {why}"))
                    .with_hint("kube-derive reads `key`, `key = value` and `key(...)` arguments"),
            );
            ok = false;
        }
    }
    if item.generic {
        diags.push(
            Diagnostic::new(
                item.loc.clone(),
                format!(
                    "`{}` is generic; kube-derive does not take generic specs",
                    item.ident
                ),
            )
            .with_hint("use a concrete type"),
        );
        return None;
    }
    let (mut group, mut version, mut kind_name) = (None, None, None);
    let (mut root, mut doc, mut plural, mut singular, mut status) = (None, None, None, None, None);
    let mut namespaced = false;
    let (mut storage, mut served) = (true, true);
    let mut deprecation = Deprecation::Current;
    let (mut short_names, mut categories, mut selectable) = (vec![], vec![], vec![]);
    let mut print_columns = vec![];
    let mut scale = None;
    let (mut annotations, mut labels) = (BTreeMap::new(), BTreeMap::new());
    let mut derives = vec![];
    let mut seen = Seen::default();
    let mut validations = vec![];
    for arg in kube.iter().flat_map(|a| &a.args) {
        let single = |seen: &mut Seen, diags: &mut Diagnostics| seen.first(arg, diags);
        match arg.key.as_str() {
            "group" if single(&mut seen, diags) => group = str_of(arg, diags).map(|s| (s, arg.loc.clone())),
            "version" if single(&mut seen, diags) => version = str_of(arg, diags).map(|s| (s, arg.loc.clone())),
            "kind" if single(&mut seen, diags) => kind_name = str_of(arg, diags).map(|s| (s, arg.loc.clone())),
            "root" if single(&mut seen, diags) => root = str_of(arg, diags).map(|s| (s, arg.loc.clone())),
            "doc" if single(&mut seen, diags) => doc = str_of(arg, diags),
            "plural" if single(&mut seen, diags) => plural = str_of(arg, diags),
            "singular" if single(&mut seen, diags) => singular = str_of(arg, diags),
            "status" if single(&mut seen, diags) => status = str_of(arg, diags).map(|s| (s, arg.loc.clone())),
            "namespaced" if single(&mut seen, diags) => namespaced = bool_of(arg, diags).unwrap_or(false),
            "storage" if single(&mut seen, diags) => storage = bool_of(arg, diags).unwrap_or(true),
            "served" if single(&mut seen, diags) => {
                served = bool_of(arg, diags).unwrap_or(true);
                if !served {
                    diags.push(
                        Diagnostic::warning(arg.loc.clone(), "`served = false`: the apiserver serves this version to nobody")
                            .with_hint("kube-derive writes it so and kube-codegen too; serve another version of the kind"),
                    );
                }
            }
            "deprecated" if single(&mut seen, diags) => {
                deprecation = match &arg.value {
                    AttrValue::Flag => Deprecation::Deprecated { warning: None },
                    _ => Deprecation::Deprecated { warning: str_of(arg, diags) },
                }
            }
            "shortname" => short_names.extend(str_of(arg, diags)),
            "category" => categories.extend(str_of(arg, diags)),
            "selectable" => {
                if let Some(p) = str_of(arg, diags) {
                    selectable.push((p, arg.loc.clone()));
                }
            }
            "derive" => derives.extend(str_of(arg, diags)),
            "annotation" => annotations.extend(pair_of(arg, diags)),
            "label" => labels.extend(pair_of(arg, diags)),
            "printcolumn" => {
                const F: &[(&str, &str)] = &[
                    ("name", "name"),
                    ("type_", "type"),
                    ("json_path", "jsonPath"),
                    ("description", "description"),
                    ("format", "format"),
                    ("priority", "priority"),
                ];
                let Some(o) = object_of(arg, F, diags) else { continue };
                let s = |k: &str| o.get(k).and_then(|v| v.as_str()).map(str::to_owned);
                let (Some(name), Some(type_), Some(json_path)) = (s("name"), s("type_"), s("json_path")) else {
                    diags.push(
                        Diagnostic::new(arg.loc.clone(), "a printcolumn needs `name`, `type_` and `json_path`")
                            .with_hint("kube-derive refuses a column without them"),
                    );
                    continue;
                };
                print_columns.push(PrintColumn {
                    name,
                    type_,
                    json_path,
                    description: s("description"),
                    format: s("format"),
                    priority: o.get("priority").and_then(|v| v.as_i64()).map(|p| p as i32),
                    loc: arg.loc.clone(),
                });
            }
            "scale" if single(&mut seen, diags) => {
                const F: &[(&str, &str)] = &[
                    ("spec_replicas_path", "specReplicasPath"),
                    ("status_replicas_path", "statusReplicasPath"),
                    ("label_selector_path", "labelSelectorPath"),
                ];
                let Some(o) = object_of(arg, F, diags) else { continue };
                let s = |k: &str| o.get(k).and_then(|v| v.as_str()).map(str::to_owned);
                match (s("spec_replicas_path"), s("status_replicas_path")) {
                    (Some(spec), Some(status)) => {
                        scale = Some(Scale {
                            spec_replicas_path: spec,
                            status_replicas_path: status,
                            label_selector_path: s("label_selector_path"),
                            loc: arg.loc.clone(),
                        })
                    }
                    _ => diags.push(
                        Diagnostic::new(arg.loc.clone(), "`#[kube(scale(...))]` needs `spec_replicas_path` and `status_replicas_path`")
                            .with_hint("write `scale(spec_replicas_path = \".spec.replicas\", status_replicas_path = \".status.replicas\")`; kube-derive requires both"),
                    ),
                }
            }
            // Paths of crates and attributes of the root struct: nothing the CRD or the
            // generated code depends on.
            "crates" | "attr" => {}
            "schema" if single(&mut seen, diags) => match str_of(arg, diags).as_deref() {
                Some("derived") => {}
                Some(mode @ ("manual" | "disabled")) => diags.push(
                    Diagnostic::warning(arg.loc.clone(), format!("`schema = \"{mode}\"`: kube-derive leaves the schema to you, and kube-codegen writes the derived one"))
                        .with_hint("the CRD kube-codegen writes has a schema where kube-derive's has none (or yours); drop the key to compare like with like"),
                ),
                Some(other) => diags.push(
                    Diagnostic::new(arg.loc.clone(), format!("unknown schema mode `{other}`"))
                        .with_hint("kube-derive takes `derived`, `manual` or `disabled`"),
                ),
                None => {}
            },
            // The root's `x-kubernetes-validations`: kube-derive puts them on the root as
            // `#[x_kube(validation = ...)]`, and so do we.
            "validation" => validations.push(AttrArg { key: "validation".to_owned(), ..arg.clone() }),
            // Client-side CEL methods (`validate_cel`): no effect on the CRD or on what
            // kube-codegen generates.
            "cel" => {}
            key @ "no_spec" => diags.push(
                Diagnostic::warning(arg.loc.clone(), format!("`#[kube({key})]` is not read by kube-codegen yet: the CRD it writes lacks what this adds to kube-derive's"))
                    .with_hint("the rest of the kind is generated; see docs/src/guide/kube-derive.md for what is read"),
            ),
            // A second single-valued key: reported by `single`.
            "group" | "version" | "kind" | "root" | "doc" | "plural" | "singular" | "status"
            | "namespaced" | "storage" | "served" | "deprecated" | "scale" | "schema" => {}
            other => diags.push(
                Diagnostic::warning(arg.loc.clone(), format!("unknown key `{other}` in `#[kube(...)]`: ignored"))
                    .with_hint(closest_kube_key(other)),
            ),
        }
    }
    let missing: Vec<&str> = [
        ("group", group.is_none()),
        ("version", version.is_none()),
        ("kind", kind_name.is_none()),
    ]
    .into_iter()
    .filter_map(|(k, m)| m.then_some(k))
    .collect();
    if !missing.is_empty() {
        diags.push(
            Diagnostic::new(
                at,
                format!(
                    "`#[derive(CustomResource)]` on `{}` needs `{}` in `#[kube(...)]`",
                    item.ident,
                    missing.join("`, `")
                ),
            )
            .with_hint(
                "write `#[kube(group = \"example.com\", version = \"v1\", kind = \"Foo\")]`",
            ),
        );
        return None;
    }
    let ((group, group_loc), (version, version_loc), (kind, kind_loc)) = (
        group.expect("checked"),
        version.expect("checked"),
        kind_name.expect("checked"),
    );
    if !is_dns_subdomain(&group) {
        diags.push(
            Diagnostic::new(group_loc, format!("invalid group `{group}`"))
                .with_hint("an API group is a lowercase DNS subdomain, e.g. `example.com`"),
        );
        ok = false;
    }
    if !is_dns_subdomain(&version) || version.contains('.') {
        diags.push(
            Diagnostic::new(version_loc, format!("invalid version `{version}`"))
                .with_hint("a version is a lowercase DNS label, e.g. `v1`"),
        );
        ok = false;
    }
    let (struct_name, struct_loc) = root.unwrap_or((kind.clone(), kind_loc));
    if struct_name == item.ident {
        diags.push(
            Diagnostic::new(struct_loc, format!("`kind = \"{kind}\"` names the spec struct itself"))
                .with_hint(format!("kube-derive generates the kind struct; name the spec `{kind}Spec`, or set `root = \"...\"`")),
        );
        ok = false;
    }
    // kube-derive takes a struct with named fields or an enum (kube-rs' `crd_enum_test`):
    // a spec is a JSON object either way.
    if !matches!(
        item.body,
        src::Body::Struct(src::Fields::Named(_)) | src::Body::Enum(_)
    ) {
        diags.push(
            Diagnostic::new(item.loc.clone(), format!("`{}` has no named fields: a spec is a JSON object", item.ident))
                .with_hint("give the spec named fields (kube-derive takes a struct with named fields or an enum)"),
        );
        ok = false;
    }
    if !ok {
        return None;
    }
    let singular = singular.unwrap_or_else(|| kind.to_ascii_lowercase());
    let plural = plural.unwrap_or_else(|| to_plural(&singular));
    let status_subresource = status.is_some();
    let mut verbs = ClientVerb::ALL.to_vec();
    if !status_subresource {
        verbs.retain(|v| !v.is_status());
    }
    let type_key = key_of(&struct_name);
    let doc = doc.unwrap_or_else(|| {
        format!(
            " Auto-generated derived type for {} via `CustomResource`",
            item.ident
        )
    });
    let mut root = root_item(module, item, &struct_name, status.as_ref(), &derives, diags)?;
    if !validations.is_empty() {
        root.tool_attrs.push(ToolAttr {
            tool: "x_kube".to_owned(),
            loc: at.clone(),
            args: validations,
            unparsed: None,
        });
    }
    Some(DerivedKind {
        group,
        version,
        kind: Kind {
            name: kind,
            type_key,
            loc: item.loc.clone(),
            plural,
            singular,
            short_names,
            categories,
            scope: if namespaced {
                Scope::Namespaced
            } else {
                Scope::Cluster
            },
            status_subresource,
            scale,
            print_columns,
            storage,
            served,
            skip: false,
            deprecation,
            selectable_fields: selectable,
            annotations,
            labels,
            client: Some(ClientOptions {
                verbs,
                methods: vec![],
            }),
            conversion_hub: None,
            dialect: SchemaDialect::KubeDerive {
                doc: doc.trim().to_owned(),
            },
        },
        root,
    })
}

fn closest_kube_key(key: &str) -> String {
    const KEYS: &[&str] = &[
        "group",
        "version",
        "kind",
        "root",
        "doc",
        "plural",
        "singular",
        "namespaced",
        "status",
        "shortname",
        "category",
        "printcolumn",
        "selectable",
        "scale",
        "annotation",
        "label",
        "storage",
        "served",
        "deprecated",
        "derive",
        "attr",
        "crates",
        "schema",
        "validation",
        "cel",
        "no_spec",
    ];
    let best = KEYS
        .iter()
        .max_by(|a, b| strsim::jaro_winkler(a, key).total_cmp(&strsim::jaro_winkler(b, key)))
        .expect("non-empty");
    format!(
        "did you mean `{best}`? kube-derive 5 knows: {}",
        KEYS.join(", ")
    )
}

/// The struct kube-derive generates: `metadata`, `spec` and, with `status = "..."`,
/// `status: Option<...>`, serde camelCase, in the spec's module with the spec's visibility.
fn root_item(
    module: &src::Module,
    spec: &src::Item,
    name: &str,
    status: Option<&(String, Location)>,
    derives: &[String],
    diags: &mut Diagnostics,
) -> Option<src::Item> {
    let loc = &spec.loc;
    let field = |ident: &str, ty: src::Ty| src::Field {
        ident: Some(ident.to_owned()),
        loc: loc.clone(),
        docs: vec![],
        serde: src::SerdeField::default(),
        ty,
        visible: spec.visible,
        tool_attrs: vec![],
    };
    let meta = src::ty_from_str(
        module,
        "::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta",
        loc,
    )
    .expect("a type");
    let spec_ty = src::ty_from_str(module, &spec.ident, loc).expect("an identifier is a type");
    let mut fields = vec![field("metadata", meta), field("spec", spec_ty)];
    if let Some((status, at)) = status {
        let Some(ty) = src::ty_from_str(module, &format!("Option<{status}>"), at) else {
            diags.push(
                Diagnostic::new(at.clone(), format!("`status = \"{status}\"` is not a type"))
                    .with_hint("name the status struct, e.g. `status = \"FooStatus\"`"),
            );
            return None;
        };
        fields.push(field("status", ty));
    }
    // kube-derive derives JsonSchema (KubeSchema with validations) on it too.
    let mut all_derives: Vec<String> = ["Deserialize", "Clone", "Debug", "JsonSchema"]
        .map(str::to_owned)
        .to_vec();
    all_derives.extend(
        derives
            .iter()
            .filter_map(|d| d.rsplit("::").next())
            .map(str::to_owned),
    );
    Some(src::Item {
        ident: name.to_owned(),
        loc: loc.clone(),
        docs: vec![],
        serde: SerdeContainer {
            rename_all: Some("camelCase".to_owned()),
            ..SerdeContainer::default()
        },
        derives: all_derives,
        conversions: vec![],
        generic: false,
        visible: spec.visible,
        body: src::Body::Struct(src::Fields::Named(fields)),
        tool_attrs: vec![],
    })
}

/// A marker made from an attribute of another derive: the model holds what kube-derive
/// input says in the same markers the marker path produces.
fn marker(
    name: Name,
    args: Vec<(String, String)>,
    value: Option<String>,
    loc: &Location,
) -> Marker {
    let mut text = name.text();
    if let Some(v) = &value {
        text.push('=');
        text.push_str(v);
    }
    for (i, (k, v)) in args.iter().enumerate() {
        text.push(if i == 0 { ':' } else { ',' });
        text.push_str(&format!("{k}={v:?}"));
    }
    Marker {
        name,
        value,
        args,
        text,
        items: false,
        loc: loc.clone(),
    }
}

/// The markers that `#[x_kube(...)]`, `#[validate(...)]`, `#[garde(...)]` and
/// `#[schemars(...)]` on a type (`ty: None`) or a field of type `ty` amount to, as schemars
/// and kube's `KubeSchema` derive apply them; every argument not read is a located warning
/// (its effect on kube-derive's schema is missing from ours).
pub(super) fn schema_markers(
    attrs: &[ToolAttr],
    ty: Option<&TypeRef>,
    diags: &mut Diagnostics,
) -> Vec<Marker> {
    let mut out = vec![];
    let unread = |arg: &AttrArg, tool: &str, diags: &mut Diagnostics| {
        diags.push(
            Diagnostic::warning(arg.loc.clone(), format!("`#[{tool}({})]` is not read by kube-codegen yet: the CRD lacks what it adds to kube-derive's schema", arg.key))
                .with_hint("docs/src/guide/kube-derive.md lists what is read"),
        );
    };
    // What `length` bounds: items of a list, properties of a map, else characters.
    let inner = ty.map(|t| match t.unalias() {
        TypeRef::Option(i) => i.unalias(),
        other => other,
    });
    let (min_len, max_len): (Name, Name) = match inner {
        Some(TypeRef::List { .. } | TypeRef::Array { .. }) => (Name::MinItems, Name::MaxItems),
        Some(TypeRef::Map(_)) => (Name::MinProperties, Name::MaxProperties),
        _ => (Name::MinLength, Name::MaxLength),
    };
    let number = |v: &AttrValue| match v {
        AttrValue::Number(n) => Some(n.clone()),
        _ => None,
    };
    for a in attrs.iter().filter(|a| a.tool != "kube") {
        if let Some((loc, why)) = &a.unparsed {
            diags.push(
                Diagnostic::warning(
                    loc.clone(),
                    format!("`#[{}(...)]` does not parse: {why}", a.tool),
                )
                .with_hint("it is not read, and the CRD lacks what it adds to kube-derive's"),
            );
            continue;
        }
        for arg in &a.args {
            let named = |items: &[AttrArg], key: &str| {
                items.iter().find(|i| i.key == key).map(|i| i.value.clone())
            };
            match (a.tool.as_str(), arg.key.as_str(), &arg.value) {
                ("x_kube", "validation", AttrValue::Str(rule)) => out.push(marker(
                    Name::XValidation,
                    vec![("rule".to_owned(), rule.clone())],
                    None,
                    &arg.loc,
                )),
                ("x_kube", "merge_strategy", AttrValue::Expr(e))
                    if matches!(
                        e.replace(' ', "").as_str(),
                        "ListMerge::Set" | "ListMerge::Atomic"
                    ) =>
                {
                    let v = if e.ends_with("Set") { "set" } else { "atomic" };
                    out.push(marker(Name::ListType, vec![], Some(v.to_owned()), &arg.loc));
                }
                ("validate" | "garde" | "schemars", "length", AttrValue::List(items))
                    if items.iter().all(|i| {
                        matches!(i.key.as_str(), "min" | "max" | "equal")
                            && number(&i.value).is_some()
                    }) =>
                {
                    let min = named(items, "min").or(named(items, "equal"));
                    let max = named(items, "max").or(named(items, "equal"));
                    for (name, v) in [(min_len, min), (max_len, max)] {
                        if let Some(n) = v.as_ref().and_then(number) {
                            out.push(marker(name, vec![], Some(n), &arg.loc));
                        }
                    }
                }
                ("validate" | "garde" | "schemars", "range", AttrValue::List(items))
                    if items.iter().all(|i| {
                        matches!(i.key.as_str(), "min" | "max") && number(&i.value).is_some()
                    }) =>
                {
                    for (key, name) in [("min", Name::Minimum), ("max", Name::Maximum)] {
                        if let Some(n) = named(items, key).as_ref().and_then(number) {
                            out.push(marker(name, vec![], Some(n), &arg.loc));
                        }
                    }
                }
                ("schemars", "regex" | "pattern", AttrValue::List(items)) if matches!(items.as_slice(), [one] if matches!(one.value, AttrValue::Str(_)) && (one.key == "pattern" || one.key.is_empty())) => {
                    if let AttrValue::Str(p) = &items[0].value {
                        out.push(marker(
                            Name::Pattern,
                            vec![],
                            Some(format!("{p:?}")),
                            &arg.loc,
                        ));
                    }
                }
                ("validate" | "garde" | "schemars", "email", AttrValue::Flag) => out.push(marker(
                    Name::Format,
                    vec![],
                    Some("email".to_owned()),
                    &arg.loc,
                )),
                ("validate" | "garde" | "schemars", "url", AttrValue::Flag) => out.push(marker(
                    Name::Format,
                    vec![],
                    Some("uri".to_owned()),
                    &arg.loc,
                )),
                // On a field serialized `with` custom code, the caller read it
                // (`with_markers`).
                ("schemars", "with", AttrValue::Str(_)) if matches!(ty, Some(TypeRef::Opaque)) => {}
                // Where the schemars crate is, and client-side CEL methods: nothing about
                // the schema.
                ("schemars", "crate", _) | ("x_kube", "cel", AttrValue::Flag) => {}
                _ => unread(arg, &a.tool, diags),
            }
        }
    }
    out
}

/// The type named by `#[schemars(with = "T")]` on a field serialized `with` custom code:
/// `T` as written, where it is.
pub(super) fn schemars_with(attrs: &[ToolAttr]) -> Option<(String, Location)> {
    attrs
        .iter()
        .filter(|a| a.tool == "schemars")
        .flat_map(|a| &a.args)
        .find_map(|arg| match (&arg.key[..], &arg.value) {
            ("with", AttrValue::Str(t)) => Some((t.clone(), arg.loc.clone())),
            _ => None,
        })
}

/// The markers that describe `#[schemars(with = "T")]`'s scalar `T` (its schema is the
/// field's): the type, and schemars' format and bounds of an integer. `None` for another
/// `T`, whose schema markers cannot describe.
pub(super) fn with_markers(
    t: &TypeRef,
    int: Option<RustInt>,
    loc: &Location,
) -> Option<Vec<Marker>> {
    let ty = |v: &str| marker(Name::Type, vec![], Some(v.to_owned()), loc);
    let format = |v: &str| marker(Name::Format, vec![], Some(v.to_owned()), loc);
    Some(match t.unalias() {
        TypeRef::String => vec![ty("string")],
        TypeRef::Bool => vec![ty("boolean")],
        TypeRef::Float => vec![ty("number"), format("float")],
        TypeRef::Double => vec![ty("number"), format("double")],
        TypeRef::Int32 | TypeRef::Int64 => {
            let int = int.unwrap_or(if *t.unalias() == TypeRef::Int32 {
                RustInt::I32
            } else {
                RustInt::I64
            });
            let (f, min, max) = int.schemars();
            let mut out = vec![ty("integer"), format(f)];
            for (name, v) in [(Name::Minimum, min), (Name::Maximum, max)] {
                if let Some(v) = v {
                    out.push(marker(name, vec![], Some(v.to_string()), loc));
                }
            }
            out
        }
        _ => return None,
    })
}

/// `#[serde(default = "f")]` whose value kube-codegen cannot know: a located warning.
pub(super) fn warn_default_fn(f: &str, loc: &Location, diags: &mut Diagnostics) {
    diags.push(
        Diagnostic::warning(loc.clone(), format!("`#[serde(default = \"{f}\")]`: kube-derive's schema holds the value `{f}()` returns, which kube-codegen cannot know without running it"))
            .with_hint("the CRD has no `default` here; a function whose body is a literal (`\"x\".into()`, `Some(1)`, `true`) in the same module is read"),
    );
}

/// Every type a kube-derive kind reaches, checked against what the kube-derive schema
/// emulates (`generators::crd::kube_derive`): anything else is a located warning, as the
/// CRD would differ from kube-derive's there.
pub(super) fn check_types(api: &Api, diags: &mut Diagnostics) {
    let mut seen = std::collections::BTreeSet::new();
    let mut stack: Vec<String> = api
        .packages
        .values()
        .flat_map(|p| &p.kinds)
        .filter(|k| matches!(k.dialect, SchemaDialect::KubeDerive { .. }))
        .map(|k| k.type_key.clone())
        .collect();
    let roots: std::collections::BTreeSet<String> = stack.iter().cloned().collect();
    while let Some(key) = stack.pop() {
        if !seen.insert(key.clone()) {
            continue;
        }
        let Some(decl) = api.types.get(&key) else {
            continue;
        };
        let not_emulated = |loc: &Location, what: String| {
            Diagnostic::warning(loc.clone(), format!("{what}: kube-codegen does not reproduce kube-derive's schema for it yet, so the CRD accepts anything there"))
                .with_hint("docs/src/guide/kube-derive.md lists the shapes read; the clients are generated all the same")
        };
        unread_markers(&decl.markers, diags);
        match &decl.shape {
            Shape::Struct(fields) => {
                for f in fields.iter().filter(|f| !f.skip) {
                    if roots.contains(&key) && f.json_name == "metadata" {
                        continue;
                    }
                    unread_markers(&f.markers, diags);
                    // Custom code, with its wire form from `#[schemars(with = "T")]`.
                    let described =
                        f.ty == TypeRef::Opaque && f.markers.iter().any(|m| m.name == Name::Type);
                    if !described {
                        check_type(&f.ty, &f.loc, &mut stack, diags, &not_emulated);
                    }
                    if f.has_default
                        && !f.skip_serializing_if
                        && !crate::schema::kube_derive::default_known(api, &f.ty)
                    {
                        diags.push(
                            Diagnostic::warning(f.loc.clone(), format!("the default of field `{}` is `Default::default()` of its type, which kube-codegen cannot know without running it", f.rust_name))
                                .with_hint("kube-derive's schema has it as `default`; kube-codegen's has none. Derive Default on the type (its fields' defaults are known) to have it"),
                        );
                    }
                    if f.flatten && !matches!(f.ty.unalias(), TypeRef::Local(_) | TypeRef::Map(_)) {
                        diags.push(not_emulated(
                            &f.loc,
                            format!("flattened field `{}`", f.rust_name),
                        ));
                    }
                }
            }
            Shape::Enum(variants) => {
                let units = variants
                    .iter()
                    .filter(|v| matches!(v.shape, VariantShape::Unit))
                    .count();
                let why = if decl.serde.tag.is_some() {
                    Some("an internally or adjacently tagged enum")
                } else if variants
                    .iter()
                    .any(|v| matches!(v.shape, VariantShape::Tuple))
                {
                    Some("an enum with tuple variants")
                } else if units > 0 && units < variants.len() {
                    // kube's rewriter panics in `crd()` on this one: string and object
                    // branches in one `oneOf`.
                    Some("an enum mixing unit and data variants")
                } else if decl.serde.untagged && units > 0 {
                    Some("an untagged enum with unit variants")
                } else {
                    None
                };
                if let Some(why) = why {
                    diags.push(not_emulated(&decl.loc, format!("`{}` is {why}", decl.name)));
                }
                for p in crate::schema::kube_derive::enum_property_conflicts(api, decl) {
                    diags.push(
                        Diagnostic::warning(decl.loc.clone(), format!("variants of `{}` give property `{p}` different schemas: kube's `crd()` panics on it, kube-codegen keeps the first variant's", decl.name))
                            .with_hint("give the property one type and one doc comment in every variant"),
                    );
                }
                for v in variants {
                    match &v.shape {
                        VariantShape::Newtype(t) => {
                            check_type(t, &v.loc, &mut stack, diags, &not_emulated)
                        }
                        VariantShape::Struct(fields) => {
                            for f in fields.iter().filter(|f| !f.skip) {
                                check_type(&f.ty, &f.loc, &mut stack, diags, &not_emulated);
                            }
                        }
                        VariantShape::Unit | VariantShape::Tuple => {}
                    }
                }
            }
            Shape::Newtype(t) | Shape::Alias(t) | Shape::Wire(t) => {
                check_type(t, &decl.loc, &mut stack, diags, &not_emulated)
            }
        }
    }
}

/// The markers the kube-derive schema reads: those the attributes of other derives become
/// (`schema_markers`, `with_markers`), written in a doc comment or not.
const READ_MARKERS: &[Name] = &[
    Name::MinLength,
    Name::MaxLength,
    Name::MinItems,
    Name::MaxItems,
    Name::MinProperties,
    Name::MaxProperties,
    Name::Minimum,
    Name::Maximum,
    Name::Pattern,
    Name::Format,
    Name::Type,
    Name::XValidation,
    Name::ListType,
];

/// A marker in the doc comment of a type a kube-derive kind reaches, other than those the
/// kube-derive schema reads: said, as its CRD follows kube-derive's and leaves it out.
fn unread_markers(markers: &[Marker], diags: &mut Diagnostics) {
    // The bounds it reads are numbers: one that is none (or NaN, or infinite, which JSON
    // cannot hold) would be left out of the CRD without a word.
    let takes_number = |m: &&Marker| {
        matches!(
            m.name,
            Name::MinLength
                | Name::MaxLength
                | Name::MinItems
                | Name::MaxItems
                | Name::MinProperties
                | Name::MaxProperties
                | Name::Minimum
                | Name::Maximum
        )
    };
    for m in markers.iter().filter(takes_number) {
        let value = m.string_value().unwrap_or_default();
        let value = value.trim();
        if value.parse::<i64>().is_err() && !value.parse::<f64>().is_ok_and(f64::is_finite) {
            diags.push(
                m.error(format!("`+{}` is not a finite number", m.written_name()))
                    .with_hint("give a number such as 3 or 2.5 (JSON has no NaN or infinity)"),
            );
        }
    }
    for m in markers.iter().filter(|m| !READ_MARKERS.contains(&m.name)) {
        diags.push(
            Diagnostic::warning(m.loc.clone(), format!("`+{}` is not read for a kube-derive kind, whose CRD follows kube-derive's", m.text))
                .with_marker(&m.text)
                .with_hint("say it with the attributes kube-derive reads (`#[schemars(...)]`, `#[x_kube(...)]`), or mark the type as a kube-codegen kind instead"),
        );
    }
}

fn check_type(
    ty: &TypeRef,
    loc: &Location,
    stack: &mut Vec<String>,
    diags: &mut Diagnostics,
    not_emulated: &dyn Fn(&Location, String) -> Diagnostic,
) {
    match ty {
        TypeRef::Option(t)
        | TypeRef::List { item: t, .. }
        | TypeRef::Array { item: t, .. }
        | TypeRef::Map(t) => check_type(t, loc, stack, diags, not_emulated),
        TypeRef::Alias { key, target } => {
            stack.push(key.clone());
            check_type(target, loc, stack, diags, not_emulated)
        }
        TypeRef::Local(key) => stack.push(key.clone()),
        TypeRef::String
        | TypeRef::Bool
        | TypeRef::Int32
        | TypeRef::Int64
        | TypeRef::Float
        | TypeRef::Double
        | TypeRef::IntOrString
        | TypeRef::Quantity
        | TypeRef::Time => {}
        // kube-derive's schema for it is `{}` (no type), which is what we write too, and
        // the API server refuses a CRD with a typeless property: said here, at the field,
        // rather than by the first `kubectl apply`.
        TypeRef::Json => diags.push(
            Diagnostic::warning(
                loc.clone(),
                "`serde_json::Value` has no type in kube-derive's schema (nor in this CRD, which follows it): the API server refuses the CRD (`type: Required value: must not be empty for specified object fields`)",
            )
            .with_hint("give the field `#[schemars(schema_with = \"...\")]` returning `{\"x-kubernetes-preserve-unknown-fields\": true}` (and a `type`), as kube-rs' examples do"),
        ),
        TypeRef::Bytes => diags.push(not_emulated(loc, "ByteString".into())),
        TypeRef::ObjectMeta | TypeRef::TypeMeta => diags.push(not_emulated(
            loc,
            "ObjectMeta/TypeMeta inside a spec".into(),
        )),
        TypeRef::K8s(path) if crate::schema::kube_derive::k8s_schema(path).is_some() => {}
        TypeRef::K8s(path) => diags.push(not_emulated(loc, format!("k8s-openapi's `{path}`"))),
        TypeRef::Opaque => diags.push(not_emulated(
            loc,
            "a field serialized `with` custom code".into(),
        )),
    }
}
