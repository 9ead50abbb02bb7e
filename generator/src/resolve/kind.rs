//! A kind: the markers on its struct (names, scope, subresources, printer columns,
//! selectable fields, versions, client verbs), read into [`Kind`].

use std::collections::BTreeMap;

use crate::diagnostics::{Diagnostic, Diagnostics};
use crate::markers::{Marker, Name, split_list};
use crate::model::*;
use crate::read as src;

use super::RawType;
use super::package::is_dns_subdomain;
use super::types::Resolver;

pub use kube_codegen_templates::pluralize;

pub(super) fn kind_of(
    resolver: &mut Resolver,
    type_key: &str,
    raw: &RawType,
    markers: &[Marker],
    diags: &mut Diagnostics,
) -> Option<Kind> {
    let item = raw.item;
    let src::Body::Struct(fields) = &item.body else {
        diags.push(
            Diagnostic::new(
                item.loc.clone(),
                format!("kind `{}` must be a struct", item.ident),
            )
            .with_hint("a kind has `metadata`, `spec` and optionally `status` fields"),
        );
        return None;
    };
    let name = item.ident.clone();
    let loc = item.loc.clone();
    if let Some(c) = item.conversions.first() {
        diags.push(
            Diagnostic::new(
                c.loc.clone(),
                format!(
                    "kind `{name}` cannot be serialized through `{} = ...`",
                    c.kind.attr()
                ),
            )
            .with_hint("a kind is an object with apiVersion, kind and metadata; put the conversion on the type of one of its fields"),
        );
        return None;
    }
    let src::Fields::Named(fields) = fields else {
        diags.push(Diagnostic::new(
            loc,
            format!("kind `{name}` must have named fields"),
        ));
        return None;
    };
    // apiVersion and kind must be on the wire; a flattened TypeMeta carries them.
    let mut has_type_meta = false;
    let mut has_metadata = false;
    let mut has_status = false;
    for f in fields {
        let fname = f.ident.clone().unwrap_or_default();
        let ser = &f.serde;
        let ty = resolver
            .resolve_type(raw.module, &f.ty)
            .map(|t| t.unalias().clone());
        if ser.flatten && matches!(ty, Ok(TypeRef::TypeMeta)) {
            has_type_meta = true;
        }
        let json = ser.rename.clone().unwrap_or(fname.clone());
        if json == "metadata" {
            has_metadata = true;
            if !matches!(ty, Ok(TypeRef::ObjectMeta)) {
                diags.push(
                    Diagnostic::new(
                        f.loc.clone(),
                        format!("`{name}.metadata` must be an ObjectMeta"),
                    )
                    .with_hint("use `k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta`"),
                );
            }
        }
        if json == "status" && !ser.skip {
            has_status = true;
        }
    }
    if !has_type_meta {
        diags.push(
            Diagnostic::new(loc.clone(), format!("kind `{name}` has no flattened `TypeMeta`, so it would serialize without apiVersion and kind"))
                .with_hint("add `#[serde(flatten)] pub types: ::kube::core::TypeMeta,` and fill it with the kind's apiVersion and kind"),
        );
    }
    if !has_metadata {
        diags.push(
            Diagnostic::new(
                loc.clone(),
                format!("kind `{name}` has no `metadata` field"),
            )
            .with_hint("add `pub metadata: ObjectMeta,`"),
        );
    }

    let find = |n: Name| markers.iter().find(|m| m.name == n);
    let resource = find(Name::Resource);
    let lower = name.to_lowercase();
    let plural = resource
        .and_then(|r| r.arg("path"))
        .map(str::to_owned)
        .unwrap_or_else(|| pluralize(&lower));
    let singular = resource
        .and_then(|r| r.arg("singular"))
        .map(str::to_owned)
        .unwrap_or(lower);
    for (what, value) in [("path", &plural), ("singular", &singular)] {
        if !is_dns_subdomain(value) || value.contains('.') {
            let m = resource.expect("only explicit values can be invalid");
            diags.push(
                m.error(format!("invalid resource {what} `{value}`"))
                    .with_hint("use a lowercase DNS label, e.g. `foos`"),
            );
        }
    }
    let short_names = resource
        .and_then(|r| r.arg("shortName"))
        .map(split_list)
        .unwrap_or_default();
    let categories = resource
        .and_then(|r| r.arg("categories"))
        .map(split_list)
        .unwrap_or_default();
    for (what, m, list) in [
        ("shortName", resource, &short_names),
        ("category", resource, &categories),
    ] {
        for v in list {
            if !is_dns_subdomain(v) || v.contains('.') {
                diags.push(
                    m.expect("set")
                        .error(format!("invalid {what} `{v}`"))
                        .with_hint("use a lowercase DNS label"),
                );
            }
        }
    }
    let non_namespaced = find(Name::GenclientNonNamespaced);
    let scope = match (
        resource.and_then(|r| r.arg("scope").map(|s| (r, s))),
        non_namespaced,
    ) {
        (Some((_, "Cluster")), _) => Scope::Cluster,
        (Some((r, "Namespaced")), Some(_)) => {
            diags.push(
                r.error("`scope=Namespaced` contradicts `+genclient:nonNamespaced`")
                    .with_hint("drop one of them; a kind is either namespaced or cluster-scoped"),
            );
            Scope::Namespaced
        }
        (Some((_, "Namespaced")), None) => Scope::Namespaced,
        (Some((r, other)), _) => {
            diags.push(
                r.error(format!("invalid scope `{other}`"))
                    .with_hint("allowed values: Namespaced, Cluster"),
            );
            Scope::Namespaced
        }
        (None, Some(_)) => Scope::Cluster,
        (None, None) => Scope::Namespaced,
    };
    let status_subresource = find(Name::SubresourceStatus).is_some();
    if let Some(m) = find(Name::SubresourceStatus)
        && !has_status
    {
        // controller-gen writes the subresource, and the API server takes it (a status
        // written through it is pruned to nothing): not stricter than they are.
        diags.push(
            m.warning(format!(
                "status subresource on `{name}`, which has no `status` field"
            ))
            .with_hint("add a `status` field or remove the marker"),
        );
    }
    let scale = find(Name::SubresourceScale).map(|m| Scale {
        loc: m.loc.clone(),
        spec_replicas_path: m.arg("specpath").unwrap_or_default().to_owned(),
        status_replicas_path: m.arg("statuspath").unwrap_or_default().to_owned(),
        label_selector_path: m.arg("selectorpath").map(str::to_owned),
    });
    let mut print_columns = vec![];
    for m in markers.iter().filter(|m| m.name == Name::PrintColumn) {
        let column = print_column(m, diags);
        if let Some(c) = diags.collect(column) {
            print_columns.push(c);
        }
    }
    let deprecation = match find(Name::DeprecatedVersion) {
        Some(m) => Deprecation::Deprecated {
            warning: m.arg("warning").map(str::to_owned),
        },
        None => Deprecation::Current,
    };
    let selectable_fields = markers
        .iter()
        .filter(|m| m.name == Name::SelectableField)
        .map(|m| {
            (
                m.arg("JSONPath").unwrap_or_default().to_owned(),
                m.loc.clone(),
            )
        })
        .collect();
    let mut annotations = BTreeMap::new();
    let mut labels = BTreeMap::new();
    if let Some(m) = find(Name::Metadata) {
        for (arg, target) in [("annotations", &mut annotations), ("labels", &mut labels)] {
            for pair in m.arg(arg).map(split_list).unwrap_or_default() {
                match pair.split_once('=') {
                    Some((k, v)) => {
                        target.insert(k.trim().to_owned(), v.trim().to_owned());
                    }
                    None => diags.push(m.error(format!("{arg} entry `{pair}` is not `key=value`"))),
                }
            }
        }
    }
    let client = client_options(markers, status_subresource, diags);
    let client = diags.collect(client).flatten();
    let conversion_hub = match find(Name::Conversion) {
        Some(m) => match m.string_value() {
            Ok(v) if v == "hub" => Some(m.loc.clone()),
            Ok(v) => {
                diags.push(
                    m.error(format!("unknown conversion role `{v}`"))
                        .with_hint("the storage version's kind takes `+kube-codegen:conversion=hub`; the other versions are its spokes and need no marker"),
                );
                None
            }
            Err(e) => {
                diags.push(e);
                None
            }
        },
        None => None,
    };
    Some(Kind {
        name,
        type_key: type_key.to_owned(),
        loc,
        plural,
        singular,
        short_names,
        categories,
        scope,
        status_subresource,
        scale,
        print_columns,
        storage: find(Name::StorageVersion).is_some(),
        served: find(Name::UnservedVersion).is_none(),
        skip: find(Name::SkipVersion).is_some(),
        deprecation,
        selectable_fields,
        annotations,
        labels,
        client,
        conversion_hub,
        dialect: SchemaDialect::ControllerGen,
    })
}

fn print_column(m: &Marker, diags: &mut Diagnostics) -> Result<PrintColumn, Diagnostic> {
    const TYPES: &[&str] = &["integer", "number", "string", "boolean", "date"];
    const FORMATS: &[&str] = &[
        "int32",
        "int64",
        "float",
        "double",
        "byte",
        "date",
        "date-time",
        "password",
    ];
    let type_ = m.arg("type").unwrap_or_default().to_owned();
    if !TYPES.contains(&type_.as_str()) {
        return Err(m
            .error(format!("invalid printcolumn type `{type_}`"))
            .with_hint(format!("allowed values: {}", TYPES.join(", "))));
    }
    let format = m.arg("format").map(str::to_owned);
    if let Some(f) = &format
        && !FORMATS.contains(&f.as_str())
    {
        return Err(m
            .error(format!("invalid printcolumn format `{f}`"))
            .with_hint(format!("allowed values: {}", FORMATS.join(", "))));
    }
    let priority = match m.arg("priority") {
        Some(p) => Some(p.trim().parse::<i32>().map_err(|_| {
            m.error(format!(
                "printcolumn priority must be an integer, got `{p}`"
            ))
        })?),
        None => None,
    };
    if let Some(p) = priority.filter(|p| *p < 0) {
        // The API server takes it (checked against v1.37), and kubectl shows the column
        // only with `-o wide`, as it shows any priority but 0.
        diags.push(
            m.warning(format!("printcolumn priority {p} is negative"))
                .with_hint("kubectl shows a column of priority 0 in `kubectl get`, and one of any other priority (a negative one too) only with `-o wide`: use 0 or a positive priority"),
        );
    }
    let json_path = m.arg("JSONPath").unwrap_or_default().to_owned();
    if !json_path.starts_with('.') {
        return Err(m
            .error(format!(
                "printcolumn JSONPath `{json_path}` must start with `.`"
            ))
            .with_hint("e.g. `JSONPath=.spec.replicas`"));
    }
    Ok(PrintColumn {
        name: m.arg("name").unwrap_or_default().to_owned(),
        type_,
        json_path,
        // An empty description is no description, as controller-gen's `omitempty` has it.
        description: m
            .arg("description")
            .filter(|d| !d.is_empty())
            .map(str::to_owned),
        format,
        priority,
        loc: m.loc.clone(),
    })
}

/// The client a kind asked for; a bad `+genclient:method` is reported into `diags` and
/// left out, so every such marker is reported in one run.
fn client_options(
    markers: &[Marker],
    status_subresource: bool,
    diags: &mut Diagnostics,
) -> Result<Option<ClientOptions>, Diagnostic> {
    if !markers.iter().any(|m| m.name == Name::Genclient) {
        return Ok(None);
    }
    let all: Vec<&str> = ClientVerb::ALL.iter().map(|v| v.as_str()).collect();
    let parse_verb = |m: &Marker, v: &str| -> Result<ClientVerb, Diagnostic> {
        ClientVerb::parse(v).ok_or_else(|| {
            let close = all
                .iter()
                .max_by(|a, b| strsim::jaro_winkler(a, v).total_cmp(&strsim::jaro_winkler(b, v)));
            m.error(format!("unknown verb `{v}`")).with_hint(format!(
                "did you mean `{}`? verbs: {}",
                close.expect("non-empty"),
                all.join(", ")
            ))
        })
    };
    let verb_list = |m: &Marker| -> Result<Vec<ClientVerb>, Diagnostic> {
        m.string_value()?
            .split(',')
            .map(|s| parse_verb(m, s.trim()))
            .collect()
    };
    let mut verbs: Vec<ClientVerb> = ClientVerb::ALL.to_vec();
    let mut methods = vec![];
    for m in markers {
        match m.name {
            Name::GenclientNoVerbs => verbs.clear(),
            Name::GenclientReadonly => verbs.retain(|v| v.is_read()),
            Name::GenclientNoStatus => verbs.retain(|v| !v.is_status()),
            Name::GenclientOnlyVerbs => {
                let only = verb_list(m)?;
                verbs.retain(|v| only.contains(v));
            }
            Name::GenclientSkipVerbs => {
                let skip = verb_list(m)?;
                verbs.retain(|v| !skip.contains(v));
            }
            Name::GenclientMethod => methods.extend(diags.collect(custom_method(m))),
            _ => {}
        }
    }
    if !status_subresource {
        // Without the status subresource the server has no /status endpoint to call.
        verbs.retain(|v| !v.is_status());
    }
    Ok(Some(ClientOptions { verbs, methods }))
}

/// `+genclient:method=Name,verb=...,subresource=...[,input=...][,result=...]`: a typed call
/// on a subresource (the only kind of custom method the generated client makes).
fn custom_method(m: &Marker) -> Result<CustomMethod, Diagnostic> {
    let raw = m.string_value()?;
    let mut parts = raw.split(',');
    let name = parts.next().unwrap_or_default().trim().to_owned();
    if name.is_empty() || !name.chars().next().is_some_and(|c| c.is_ascii_alphabetic()) {
        return Err(m.error("`+genclient:method` needs a method name first, e.g. `+genclient:method=GetScale,verb=get,subresource=scale`"));
    }
    let (mut verb, mut subresource, mut input, mut result) = (None, None, None, None);
    for part in parts {
        let (k, v) = part
            .split_once('=')
            .ok_or_else(|| m.error(format!("`{part}` is not `key=value`")))?;
        let v = v.trim().to_owned();
        match k.trim() {
            "verb" => verb = Some(v),
            "subresource" => subresource = Some(v),
            "input" => input = Some(v),
            "result" => result = Some(v),
            other => {
                return Err(m
                    .error(format!(
                        "unknown argument `{other}` for `+genclient:method`"
                    ))
                    .with_hint("arguments: verb, subresource, input, result"));
            }
        }
    }
    let verbs: Vec<&str> = SubresourceVerb::ALL.iter().map(|v| v.as_str()).collect();
    let verb = verb.unwrap_or_default();
    let Some(verb) = SubresourceVerb::ALL
        .into_iter()
        .find(|v| v.as_str() == verb)
    else {
        return Err(m
            .error(format!(
                "verb `{verb}` is not supported for `+genclient:method` (a call on a subresource)"
            ))
            .with_hint(format!("use {}", verbs.join(", "))));
    };
    let Some(subresource) = subresource.filter(|s| !s.is_empty()) else {
        return Err(m
            .error(format!("`+genclient:method={name}` needs `subresource=`"))
            .with_hint("custom verbs act on a subresource, e.g. `subresource=scale`"));
    };
    Ok(CustomMethod {
        name,
        verb,
        subresource,
        input,
        result,
    })
}
