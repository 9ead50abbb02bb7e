//! Stage 2: turn parsed modules into the [`Api`] model: find group/version packages by
//! their markers, read each kind's settings, and resolve the field types reachable from
//! the kinds. All problems are collected, not just the first.

use std::collections::BTreeMap;

use crate::diagnostics::{Diagnostic, Diagnostics};
use crate::markers::{self, Level, Marker, split_list};
use crate::model::*;
use crate::source::{self as src, DocLine, Module, doc_text};

/// Parse a doc comment's markers at a level, collecting errors.
fn parse_markers(lines: &[DocLine], level: Level, diags: &mut Diagnostics) -> Vec<Marker> {
    lines
        .iter()
        .filter_map(|l| {
            diags
                .collect(markers::parse_line(&l.text, level, l.loc.clone()))
                .flatten()
        })
        .collect()
}

struct RawType<'a> {
    module: &'a Module,
    item: &'a src::Item,
}

/// Build the model from every module of the crate.
pub fn build(modules: &[Module], diags: &mut Diagnostics) -> Api {
    let mut raw: BTreeMap<String, RawType> = BTreeMap::new();
    for m in modules {
        for item in m.structs.iter().chain(&m.enums).chain(&m.aliases) {
            raw.insert(key(&m.path, &item.ident), RawType { module: m, item });
        }
    }
    let mut resolver = Resolver {
        raw: &raw,
        modules,
        types: BTreeMap::new(),
        pending: vec![],
        aliases: vec![],
    };
    let mut api = Api::default();

    // Group/version modules by module path. Child modules belong to the nearest one around
    // them, as the files of a Go package do (`v1/mod.rs` holds doc.go's markers,
    // `v1/types.rs` the kinds).
    let mut packages: BTreeMap<&[String], Package> = BTreeMap::new();
    let mut skipped: Vec<&[String]> = vec![];
    for m in modules {
        let pkg_markers = parse_markers(&m.inner_docs, Level::Package, diags);
        collect_tool_markers(&mut api, &pkg_markers, diags);
        if let Some(package) = package_of(m, &pkg_markers, diags) {
            // controller-gen's `+kubebuilder:skip`: not an API version, no CRDs from it;
            // its types still belong to it, so they are not reported as outside.
            if pkg_markers.iter().any(|mk| mk.name == "kubebuilder:skip") {
                skipped.push(&m.path);
                continue;
            }
            if let Some(prev) = packages.get(m.path.as_slice()) {
                diags.push(
                    Diagnostic::new(
                        package.loc.clone(),
                        format!("module `{}` is read twice", m.path.join("::")),
                    )
                    .with_hint(format!("also read at {}", prev.loc)),
                );
                continue;
            }
            packages.insert(&m.path, package);
        }
    }
    // Packages with a struct marked as a kind, valid or not: only the others are empty.
    let mut with_kinds = std::collections::BTreeSet::new();
    for (type_key, r) in &raw {
        let ident = &r.item.ident;
        let owner = packages
            .keys()
            .chain(&skipped)
            .filter(|p| r.module.path.starts_with(p))
            .max_by_key(|p| p.len())
            .copied();
        if owner.is_some_and(|o| skipped.contains(&o)) {
            continue;
        }
        let type_markers = if owner.is_some() {
            let markers = parse_markers(&r.item.docs, Level::Type, diags);
            collect_tool_markers(&mut api, &markers, diags);
            markers
        } else {
            // Outside every group/version only the kind markers matter: a kind there is
            // reported below; other markers are not ours to judge.
            parse_markers(&r.item.docs, Level::Type, &mut Diagnostics::default())
        };
        // `FooList` carries `+kubebuilder:object:root=true` for deep-copy, as in Go; like
        // controller-gen (which wants ObjectMeta in a kind), it is no kind.
        if !is_kind(&type_markers) || is_list_type(r.item) {
            if owner.is_some()
                && let Some(mk) = type_markers.iter().find(|mk| KIND_ONLY.contains(&mk.name))
            {
                diags.push(
                    mk.error(format!(
                        "`+{}` only applies to a kind, and `{ident}` is not one",
                        mk.name
                    ))
                    .with_hint(
                        "mark the kind with `+genclient` or `+kubebuilder:object:root=true`",
                    ),
                );
            }
            continue;
        }
        let Some(owner) = owner else {
            let message = format!(
                "kind `{ident}` is outside every group/version module, so nothing would be generated for it"
            );
            let module = if r.module.path.is_empty() {
                "the crate root".to_owned()
            } else {
                format!("`{}`", r.module.path.join("::"))
            };
            let hint = format!(
                "put `//! +groupName=<group>` in the inner doc comment of {module} or of a module around it (the Rust `doc.go`: `v1/mod.rs` or `v1.rs`)"
            );
            let diagnostic = match type_markers
                .iter()
                .find(|mk| is_kind(std::slice::from_ref(*mk)))
            {
                Some(mk) => mk.error(message),
                None => Diagnostic::new(r.item.loc.clone(), message),
            };
            diags.push(diagnostic.with_hint(hint));
            continue;
        };
        with_kinds.insert(owner);
        resolver.require(type_key);
        if let Some(kind) = kind_of(&mut resolver, type_key, r, &type_markers, diags) {
            packages
                .get_mut(owner)
                .expect("owner is a package key")
                .kinds
                .push(kind);
        }
    }
    for (path, package) in packages {
        if !with_kinds.contains(path) {
            diags.push(
                Diagnostic::warning(
                    package.loc.clone(),
                    format!(
                        "group/version {}/{} has no kinds: no CRD and no client for it",
                        package.group, package.version
                    ),
                )
                .with_hint("mark a struct with `+genclient` or `+kubebuilder:object:root=true` in this module or a module inside it"),
            );
        }
        let id = (package.group.clone(), package.version.clone());
        if let Some(prev) = api.packages.get(&id) {
            diags.push(
                Diagnostic::new(
                    package.loc.clone(),
                    format!("group/version {}/{} is declared twice", id.0, id.1),
                )
                .with_hint(format!("also declared at {}", prev.loc)),
            );
            continue;
        }
        api.packages.insert(id, package);
    }
    // Resolve every type reachable from a kind; unrelated helper types may use anything.
    while let Some(type_key) = resolver.pending.pop() {
        if resolver.types.contains_key(&type_key) {
            continue;
        }
        if let Some(decl) = resolver.convert(&type_key, diags) {
            resolver.types.insert(type_key, decl);
        }
    }
    api.types = resolver.types;
    api
}

fn key(path: &[String], name: &str) -> String {
    let mut k = path.join("::");
    if !k.is_empty() {
        k.push_str("::");
    }
    k.push_str(name);
    k
}

/// Markers that make sense only on a kind.
const KIND_ONLY: &[&str] = &[
    "genclient:nonNamespaced",
    "genclient:noStatus",
    "genclient:noVerbs",
    "genclient:readonly",
    "genclient:onlyVerbs",
    "genclient:skipVerbs",
    "genclient:method",
    "kubebuilder:subresource:status",
    "kubebuilder:subresource:scale",
    "kubebuilder:printcolumn",
    "kubebuilder:storageversion",
    "kubebuilder:deprecatedversion",
    "kubebuilder:skipversion",
    "kubebuilder:unservedversion",
    "kubebuilder:selectablefield",
    "kubebuilder:metadata",
];

/// Keep the markers of generators to come (RBAC, webhooks), validated now.
fn collect_tool_markers(api: &mut Api, markers: &[Marker], diags: &mut Diagnostics) {
    for mk in markers {
        match mk.name {
            "kubebuilder:rbac" => {
                if let Some(r) = diags.collect(markers::rbac_rule(mk)) {
                    api.rbac_rules.push(r);
                }
            }
            "kubebuilder:webhook" => {
                if let Some(w) = diags.collect(markers::webhook(mk)) {
                    api.webhooks.push(w);
                }
            }
            "kubebuilder:webhookconfiguration" => {
                if let Some(w) = diags.collect(markers::webhook_configuration(mk)) {
                    api.webhook_configurations.push(w);
                }
            }
            _ => {}
        }
    }
}

/// A list type: `metadata` is a `ListMeta`, or, without an `ObjectMeta`, it is named
/// `...List` and has `items`. controller-gen tells kinds by their ObjectMeta the same way.
fn is_list_type(item: &src::Item) -> bool {
    let src::Body::Struct(src::Fields::Named(fields)) = &item.body else {
        return false;
    };
    let named =
        |f: &src::Field, n: &str| f.serde.rename.as_deref().or(f.ident.as_deref()) == Some(n);
    let metadata = fields
        .iter()
        .find(|f| named(f, "metadata"))
        .map(|f| f.ty.text());
    match metadata {
        Some(t) if t.ends_with("ListMeta") => true,
        Some(t) if t.ends_with("ObjectMeta") => false,
        _ => item.ident.ends_with("List") && fields.iter().any(|f| named(f, "items")),
    }
}

fn is_kind(markers: &[Marker]) -> bool {
    markers.iter().any(|m| match m.name {
        "genclient" | "kubebuilder:resource" => true,
        "kubebuilder:object:root" => m.bool_value().unwrap_or(false),
        _ => false,
    })
}

fn is_dns_subdomain(s: &str) -> bool {
    static LABEL: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$").expect("static regex")
    });
    !s.is_empty() && s.len() <= 253 && s.split('.').all(|l| l.len() <= 63 && LABEL.is_match(l))
}

fn package_of(m: &Module, markers: &[Marker], diags: &mut Diagnostics) -> Option<Package> {
    let group = markers.iter().find(|mk| mk.name == "groupName");
    let Some(group_marker) = group else {
        // Markers that make sense only for a group/version; rbac, webhook, object:generate
        // and the like may sit on any module.
        let group_bound = |mk: &&Marker| {
            matches!(
                mk.name,
                "versionName"
                    | "kubebuilder:validation:Optional"
                    | "kubebuilder:validation:Required"
            )
        };
        if let Some(other) = markers.iter().find(group_bound) {
            diags.push(
                other
                    .error(format!("package marker `+{}` without `+groupName`", other.name))
                    .with_hint("a group/version module needs `//! +groupName=<group>` in its inner doc comment"),
            );
        }
        return None;
    };
    let group = diags.collect(group_marker.string_value())?;
    if !is_dns_subdomain(&group) || !group.contains('.') {
        diags.push(
            group_marker
                .error(format!("invalid groupName `{group}`"))
                .with_hint("a CRD group is a lowercase DNS subdomain with at least one dot, e.g. `samplecontroller.k8s.io`"),
        );
        return None;
    }
    let version = match markers.iter().find(|mk| mk.name == "versionName") {
        Some(v) => diags.collect(v.string_value())?,
        None => match m.path.last() {
            Some(last) => last.clone(),
            None => {
                diags.push(
                    group_marker
                        .error("cannot infer the version of the crate root module")
                        .with_hint("add `//! +versionName=v1`"),
                );
                return None;
            }
        },
    };
    static VERSION: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"^[a-z]([-a-z0-9]*[a-z0-9])?$").expect("static regex")
    });
    if !VERSION.is_match(&version) || version.len() > 63 {
        let at = markers
            .iter()
            .find(|mk| mk.name == "versionName")
            .unwrap_or(group_marker);
        diags.push(
            at.error(format!("invalid version `{version}`"))
                .with_hint("a version is a DNS label such as v1, v1beta1 or v2alpha3; set it with `//! +versionName=`"),
        );
        return None;
    }
    let mut default_optional = None;
    for mk in markers {
        let value = match mk.name {
            "kubebuilder:validation:Optional" => true,
            "kubebuilder:validation:Required" => false,
            _ => continue,
        };
        if let Some((prev, _)) = default_optional
            && prev != value
        {
            diags.push(
                mk.error("package has both `+kubebuilder:validation:Optional` and `Required`"),
            );
        }
        default_optional = Some((value, mk.loc.clone()));
    }
    Some(Package {
        group,
        version,
        module_path: m.path.clone(),
        loc: group_marker.loc.clone(),
        default_optional,
        kinds: vec![],
    })
}

/// English plural of a lowercased kind, as controller-gen's default does it.
pub fn pluralize(s: &str) -> String {
    let vowel = |c: char| "aeiou".contains(c);
    if let Some(stem) = s.strip_suffix('y')
        && stem.chars().last().is_some_and(|c| !vowel(c))
    {
        return format!("{stem}ies");
    }
    if ["s", "x", "z", "ch", "sh"]
        .iter()
        .any(|suf| s.ends_with(suf))
    {
        return format!("{s}es");
    }
    format!("{s}s")
}

fn kind_of(
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
                        f.metadata_loc.clone().unwrap_or_else(|| f.loc.clone()),
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

    let find = |n: &str| markers.iter().find(|m| m.name == n);
    let resource = find("kubebuilder:resource");
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
    let non_namespaced = find("genclient:nonNamespaced");
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
    let status_subresource = find("kubebuilder:subresource:status").is_some();
    if let Some(m) = find("kubebuilder:subresource:status")
        && !has_status
    {
        diags.push(
            m.error(format!(
                "status subresource on `{name}`, which has no `status` field"
            ))
            .with_hint("add a `status` field or remove the marker"),
        );
    }
    let scale = find("kubebuilder:subresource:scale").map(|m| Scale {
        loc: m.loc.clone(),
        spec_replicas_path: m.arg("specpath").unwrap_or_default().to_owned(),
        status_replicas_path: m.arg("statuspath").unwrap_or_default().to_owned(),
        label_selector_path: m.arg("selectorpath").map(str::to_owned),
    });
    let mut print_columns = vec![];
    for m in markers
        .iter()
        .filter(|m| m.name == "kubebuilder:printcolumn")
    {
        if let Some(c) = diags.collect(print_column(m)) {
            print_columns.push(c);
        }
    }
    let deprecated =
        find("kubebuilder:deprecatedversion").map(|m| m.arg("warning").map(str::to_owned));
    let selectable_fields = markers
        .iter()
        .filter(|m| m.name == "kubebuilder:selectablefield")
        .map(|m| {
            (
                m.arg("JSONPath").unwrap_or_default().to_owned(),
                m.loc.clone(),
            )
        })
        .collect();
    let mut annotations = BTreeMap::new();
    let mut labels = BTreeMap::new();
    if let Some(m) = find("kubebuilder:metadata") {
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
        storage: find("kubebuilder:storageversion").is_some(),
        served: find("kubebuilder:unservedversion").is_none(),
        skip: find("kubebuilder:skipversion").is_some(),
        deprecated,
        selectable_fields,
        annotations,
        labels,
        client,
        has_status,
    })
}

fn print_column(m: &Marker) -> Result<PrintColumn, Diagnostic> {
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
    if !markers.iter().any(|m| m.name == "genclient") {
        return Ok(None);
    }
    let all: Vec<&str> = Verb::ALL.iter().map(|v| v.as_str()).collect();
    let parse_verb = |m: &Marker, v: &str| -> Result<Verb, Diagnostic> {
        Verb::parse(v).ok_or_else(|| {
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
    let verb_list = |m: &Marker| -> Result<Vec<Verb>, Diagnostic> {
        m.string_value()?
            .split(',')
            .map(|s| parse_verb(m, s.trim()))
            .collect()
    };
    let mut verbs: Vec<Verb> = Verb::ALL.to_vec();
    let mut methods = vec![];
    for m in markers {
        match m.name {
            "genclient:noVerbs" => verbs.clear(),
            "genclient:readonly" => verbs.retain(|v| v.is_read()),
            "genclient:noStatus" => verbs.retain(|v| !v.is_status()),
            "genclient:onlyVerbs" => {
                let only = verb_list(m)?;
                verbs.retain(|v| only.contains(v));
            }
            "genclient:skipVerbs" => {
                let skip = verb_list(m)?;
                verbs.retain(|v| !skip.contains(v));
            }
            "genclient:method" => methods.extend(diags.collect(custom_method(m))),
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
    let verbs: Vec<&str> = MethodVerb::ALL.iter().map(|v| v.as_str()).collect();
    let verb = verb.unwrap_or_default();
    let Some(verb) = MethodVerb::ALL.into_iter().find(|v| v.as_str() == verb) else {
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

/// Apply a serde `rename_all` rule. Fields are written in snake_case, variants in PascalCase.
pub fn rename(name: &str, rule: &str, is_variant: bool) -> Result<String, String> {
    let words: Vec<String> = if is_variant {
        let mut words = vec![];
        let mut cur = String::new();
        for c in name.chars() {
            if c.is_uppercase() && !cur.is_empty() {
                words.push(std::mem::take(&mut cur));
            }
            cur.push(c);
        }
        words.push(cur);
        words.into_iter().map(|w| w.to_lowercase()).collect()
    } else {
        name.split('_').map(str::to_owned).collect()
    };
    let cap = |w: &str| {
        let mut c = w.chars();
        c.next()
            .map(|f| f.to_uppercase().collect::<String>() + c.as_str())
            .unwrap_or_default()
    };
    Ok(match rule {
        "lowercase" => words.concat().to_lowercase(),
        "UPPERCASE" => words.concat().to_uppercase(),
        "PascalCase" => words.iter().map(|w| cap(w)).collect(),
        "camelCase" => {
            let pascal: String = words.iter().map(|w| cap(w)).collect();
            let mut c = pascal.chars();
            c.next()
                .map(|f| f.to_lowercase().collect::<String>() + c.as_str())
                .unwrap_or_default()
        }
        "snake_case" => words.join("_"),
        "SCREAMING_SNAKE_CASE" => words.join("_").to_uppercase(),
        "kebab-case" => words.join("-"),
        "SCREAMING-KEBAB-CASE" => words.join("-").to_uppercase(),
        other => return Err(format!("unknown serde rename_all rule `{other}`")),
    })
}

struct Resolver<'a> {
    raw: &'a BTreeMap<String, RawType<'a>>,
    modules: &'a [Module],
    types: BTreeMap<String, TypeDecl>,
    pending: Vec<String>,
    /// Aliases being resolved, to stop on one that stands for itself.
    aliases: Vec<String>,
}

/// Markers that tell the wire form of a value serialized by custom code.
const WIRE_MARKERS: &[&str] = &[
    "kubebuilder:validation:Type",
    "kubebuilder:validation:XIntOrString",
    "kubebuilder:validation:XPreserveUnknownFields",
    "kubebuilder:pruning:PreserveUnknownFields",
];

/// A value serialized by custom code (`#[serde(with = ...)]`) has the schema its markers
/// give, and they must give a complete structural one: `what` names it in messages.
fn check_opaque(
    markers: &[Marker],
    loc: &crate::diagnostics::Location,
    what: &str,
    attr: &str,
) -> Result<(), Diagnostic> {
    let hint = "describe its wire form with markers: `+kubebuilder:validation:Type=string` \
                (and Format, Pattern, ... as needed), `+kubebuilder:validation:XIntOrString`, \
                or `+kubebuilder:validation:Type=object` with \
                `+kubebuilder:pruning:PreserveUnknownFields`";
    if !markers.iter().any(|m| WIRE_MARKERS.contains(&m.name)) {
        return Err(Diagnostic::new(
            loc.clone(),
            format!(
                "the schema of {what} cannot be inferred: `#[serde({attr} = ...)]` serializes it with custom code"
            ),
        )
        .with_hint(hint));
    }
    let preserve = markers.iter().any(|m| {
        matches!(
            m.name,
            "kubebuilder:validation:XPreserveUnknownFields"
                | "kubebuilder:pruning:PreserveUnknownFields"
        )
    });
    for m in markers
        .iter()
        .filter(|m| m.name == "kubebuilder:validation:Type")
    {
        match m.string_value()?.as_str() {
            "array" => {
                return Err(m
                    .error(format!(
                        "{what} is serialized by custom code, so `Type=array` has no item schema"
                    ))
                    .with_hint("serialize a `Vec<T>` of a type that describes the items, or use `Type=object` with `+kubebuilder:pruning:PreserveUnknownFields`"));
            }
            "object" if !preserve => {
                return Err(m
                    .error(format!(
                        "{what} is serialized by custom code, so `Type=object` has no properties and the API server would drop every field of it"
                    ))
                    .with_hint("add `+kubebuilder:pruning:PreserveUnknownFields`"));
            }
            _ => {}
        }
    }
    Ok(())
}

impl Resolver<'_> {
    fn require(&mut self, type_key: &str) {
        if !self.types.contains_key(type_key) {
            self.pending.push(type_key.to_owned());
        }
    }

    /// The absolute path of a type path used in `module`.
    fn absolute(&self, module: &Module, leading_colon: bool, segs: &[String]) -> Vec<String> {
        let segs = segs.to_vec();
        if leading_colon {
            return segs;
        }
        let first = segs[0].as_str();
        if matches!(first, "crate" | "self" | "super") {
            return crate::source::absolutize(&module.path, &segs);
        }
        if let Some(target) = module.uses.get(first) {
            let mut out = anchored(module, target);
            out.extend(segs[1..].iter().cloned());
            return out;
        }
        let local = key(&module.path, first);
        if segs.len() == 1 && self.raw.contains_key(&local) {
            let mut out = vec!["crate".to_owned()];
            out.extend(module.path.iter().cloned());
            out.push(segs[0].clone());
            return out;
        }
        if module.children.iter().any(|c| c == first) {
            let mut out = vec!["crate".to_owned()];
            out.extend(module.path.iter().cloned());
            out.extend(segs.iter().cloned());
            return out;
        }
        if segs.len() == 1 {
            for glob in &module.globs {
                let mut candidate = anchored(module, glob);
                candidate.push(segs[0].clone());
                let candidate = self.follow_reexports(candidate, 0);
                let is_local =
                    candidate[0] == "crate" && self.raw.contains_key(&candidate[1..].join("::"));
                let is_k8s = candidate[0] == "k8s_openapi"
                    && classify_k8s(&candidate[1..].join("::")).is_some();
                if is_local || is_k8s {
                    return candidate;
                }
            }
        }
        segs
    }

    /// Where a crate-local path's item is defined, following `use` re-exports: the port of a
    /// Go package keeps its types in files (`mod types; pub use types::*;`), and other
    /// modules name them through the package (`use super::v1::Group`).
    fn follow_reexports(&self, abs: Vec<String>, depth: usize) -> Vec<String> {
        // Deep enough for any real chain of re-exports, and a guard against `use` cycles.
        const MAX_DEPTH: usize = 16;
        if depth > MAX_DEPTH
            || abs.first().is_none_or(|f| f != "crate")
            || abs.len() < 2
            || self.raw.contains_key(&abs[1..].join("::"))
        {
            return abs;
        }
        let (name, parent) = abs[1..].split_last().expect("checked above");
        let Some(m) = self.modules.iter().find(|m| m.path == parent) else {
            return abs;
        };
        if let Some(target) = m.uses.get(name) {
            let target = anchored(m, target);
            if target != abs {
                return self.follow_reexports(target, depth + 1);
            }
        }
        for glob in &m.globs {
            let mut candidate = anchored(m, glob);
            if candidate == abs[..abs.len() - 1] {
                continue;
            }
            candidate.push(name.clone());
            let found = self.follow_reexports(candidate, depth + 1);
            if found.first().is_some_and(|f| f == "crate")
                && self.raw.contains_key(&found[1..].join("::"))
            {
                return found;
            }
        }
        abs
    }

    fn resolve_type(&mut self, module: &Module, ty: &src::Ty) -> Result<TypeRef, Diagnostic> {
        let loc = ty.loc.clone();
        let unsupported = |what: String| {
            Diagnostic::new(loc.clone(), format!("unsupported type `{what}`")).with_hint(
                "use a type defined in this crate, a std/serde_json type, or a k8s-openapi type; \
                 for free-form data use serde_json::Value",
            )
        };
        if let src::TyKind::Array { elem, len } = &ty.kind {
            let Some(len) = *len else {
                return Err(Diagnostic::new(
                    loc,
                    format!("the length of `{}` is not an integer literal", ty.text()),
                )
                .with_hint("write the length as a literal such as `[u8; 16]`: the schema's minItems and maxItems are that length"));
            };
            // serde implements Serialize and Deserialize for arrays up to 32 items only.
            if len > 32 {
                return Err(Diagnostic::new(
                    loc,
                    format!(
                        "serde (de)serializes arrays of at most 32 items, and `{}` has {len}",
                        ty.text()
                    ),
                )
                .with_hint("use `Vec<T>` with `+kubebuilder:validation:MinItems` and `MaxItems`"));
            }
            let item = self.resolve_type(module, elem)?;
            return Ok(TypeRef::Array {
                item: Box::new(item),
                len,
            });
        }
        let src::TyKind::Path {
            leading_colon,
            segments,
            args,
        } = &ty.kind
        else {
            return Err(unsupported(ty.text()));
        };
        let abs = self.absolute(module, *leading_colon, segments);
        let abs = self.follow_reexports(abs, 0);
        let name = abs.last().cloned().unwrap_or_default();
        let one = |s: &mut Self, n: usize| -> Result<TypeRef, Diagnostic> {
            match args.get(n) {
                Some(t) => s.resolve_type(module, t),
                None => Err(Diagnostic::new(
                    loc.clone(),
                    format!("`{name}` needs a type argument"),
                )),
            }
        };
        let joined = abs.join("::");
        // std and prelude types, by their last segment when the path is a std/alloc/prelude one.
        let stdish = abs.len() == 1
            || matches!(
                abs[0].as_str(),
                "std" | "alloc" | "core" | "indexmap" | "serde_json"
            );
        if stdish {
            match name.as_str() {
                "String" | "str" => return Ok(TypeRef::String),
                "bool" => return Ok(TypeRef::Bool),
                "i8" | "i16" | "i32" | "u8" | "u16" => return Ok(TypeRef::Int32),
                "i64" | "u32" | "u64" | "isize" | "usize" => return Ok(TypeRef::Int64),
                "f32" => return Ok(TypeRef::Float),
                "f64" => return Ok(TypeRef::Double),
                "Option" => return Ok(TypeRef::Option(Box::new(one(self, 0)?))),
                "Box" | "Arc" | "Rc" => return one(self, 0),
                "Vec" | "VecDeque" => {
                    return Ok(TypeRef::List {
                        item: Box::new(one(self, 0)?),
                        set: false,
                    });
                }
                "BTreeSet" | "HashSet" | "IndexSet" => {
                    return Ok(TypeRef::List {
                        item: Box::new(one(self, 0)?),
                        set: true,
                    });
                }
                "BTreeMap" | "HashMap" | "IndexMap" => {
                    let k = one(self, 0)?;
                    if !self.key_is_string(&k, 0) {
                        let key = args.first().map(|k| k.text()).unwrap_or_default();
                        return Err(Diagnostic::new(
                            loc,
                            format!("map keys must be strings, not `{key}` in `{}`", ty.text()),
                        )
                        .with_hint("JSON object keys are strings: use String, a newtype of String, a unit-only enum, or a type with `#[serde(into = \"String\", try_from = \"String\")]`; \
                                    integer keys are refused as controller-gen refuses Go's: no CRD schema can require numeric keys, so the API server would store objects this type cannot read back"));
                    }
                    return Ok(TypeRef::Map(Box::new(one(self, 1)?)));
                }
                "Value" if abs.first().is_some_and(|f| f == "serde_json") => {
                    return Ok(TypeRef::Json);
                }
                "Map" if abs.first().is_some_and(|f| f == "serde_json") => {
                    return Ok(TypeRef::Map(Box::new(TypeRef::Json)));
                }
                _ => {}
            }
        }
        match abs[0].as_str() {
            "crate" => {
                let k = abs[1..].join("::");
                let raw = self.raw;
                match raw.get(&k) {
                    Some(r) => match &r.item.body {
                        src::Body::Alias(target) => self.resolve_alias(&k, r, target, &loc),
                        _ => {
                            self.require(&k);
                            Ok(TypeRef::Local(k))
                        }
                    },
                    None => Err(unsupported(joined)),
                }
            }
            "k8s_openapi" => classify_k8s(&abs[1..].join("::")).ok_or_else(|| {
                match crate::k8s_schemas::unsupported(&abs[1..].join("::")) {
                    Some(why) => Diagnostic::new(loc, format!("`{joined}` has no CRD schema: {why}"))
                        .with_hint("use serde_json::Value with +kubebuilder:pruning:PreserveUnknownFields, as controller-gen users do"),
                    None => Diagnostic::new(loc, format!("`{joined}` has no schema in k8s-openapi"))
                        .with_hint("check the path; k8s-openapi types live under k8s_openapi::api / apimachinery / apiextensions_apiserver"),
                }
            }),
            "kube" | "kube_core" if name == "ObjectMeta" => Ok(TypeRef::ObjectMeta),
            "kube" | "kube_core" if name == "TypeMeta" => Ok(TypeRef::TypeMeta),
            _ => Err(unsupported(joined)),
        }
    }

    /// A use of `type` alias `key`: what it stands for, resolved where the alias is.
    fn resolve_alias(
        &mut self,
        key: &str,
        raw: &RawType,
        target: &src::Ty,
        used_at: &crate::diagnostics::Location,
    ) -> Result<TypeRef, Diagnostic> {
        let ident = &raw.item.ident;
        if raw.item.generic {
            return Err(Diagnostic::new(
                used_at.clone(),
                format!("generic alias `{ident}` cannot be an API type"),
            )
            .with_hint(format!(
                "write out what `{ident}` stands for here, or make the alias concrete (it is at {})",
                raw.item.loc
            )));
        }
        if self.aliases.iter().any(|a| a == key) {
            return Err(Diagnostic::new(
                raw.item.loc.clone(),
                format!("alias `{ident}` stands for itself"),
            ));
        }
        self.aliases.push(key.to_owned());
        let resolved = self.resolve_type(raw.module, target);
        self.aliases.pop();
        let target = resolved?;
        self.require(key);
        Ok(TypeRef::Alias {
            key: key.to_owned(),
            target: Box::new(target),
        })
    }

    /// Whether serde_json writes a map key of this type as a JSON string: a String, a
    /// newtype of one, a unit-only externally tagged enum, or a type serialized `into` one.
    fn key_is_string(&mut self, key: &TypeRef, depth: usize) -> bool {
        let key_of = match key.unalias() {
            TypeRef::String => return true,
            TypeRef::Local(k) if depth < 8 => k.clone(),
            _ => return false,
        };
        let raw = self.raw;
        let Some(r) = raw.get(&key_of) else {
            return false;
        };
        let item = r.item;
        // A problem inside the key's own type is reported where that type is.
        let inner = |s: &mut Self, ty: &src::Ty| match s.resolve_type(r.module, ty) {
            Ok(t) => s.key_is_string(&t, depth + 1),
            Err(_) => true,
        };
        if let Some(c) = item
            .conversions
            .iter()
            .find(|c| c.kind == src::ConversionKind::Into)
        {
            return c.ty.as_ref().is_none_or(|t| inner(self, t));
        }
        match &item.body {
            src::Body::Struct(src::Fields::Unnamed(f)) if f.len() == 1 => inner(self, &f[0].ty),
            src::Body::Struct(src::Fields::Named(f)) if item.serde.transparent => {
                match f.iter().find(|f| !f.serde.skip) {
                    Some(f) => inner(self, &f.ty),
                    None => false,
                }
            }
            src::Body::Enum(variants) => {
                let s = &item.serde;
                s.tag.is_none()
                    && !s.untagged
                    && variants
                        .iter()
                        .all(|v| matches!(v.fields, src::Fields::Unit) && !v.serde.untagged)
            }
            _ => false,
        }
    }

    /// The wire type of a struct or enum with serde's `into`/`from`/`try_from`, if any:
    /// both directions must agree, as a CRD has one schema for what is written and read.
    fn wire_type(&mut self, raw: &RawType, diags: &mut Diagnostics) -> Result<Option<TypeRef>, ()> {
        let item = raw.item;
        let ident = &item.ident;
        let mut into = None;
        let mut from = None;
        for c in &item.conversions {
            let Some(t) = &c.ty else {
                diags.push(
                    Diagnostic::new(
                        c.loc.clone(),
                        format!(
                            "`{} = ...` on `{ident}` does not name a type",
                            c.kind.attr()
                        ),
                    )
                    .with_hint("write a Rust type in the string, e.g. `into = \"String\"`"),
                );
                return Err(());
            };
            let resolved = diags.collect(self.resolve_type(raw.module, t)).ok_or(())?;
            match c.kind {
                src::ConversionKind::Into => into = Some((c, t, resolved)),
                _ => from = Some((c, t, resolved)),
            }
        }
        let derives = |t: &str| item.derives.iter().any(|d| d == t);
        match (into, from) {
            (None, None) => Ok(None),
            (Some((i, it, ir)), Some((f, ft, fr))) => {
                if ir.unalias() != fr.unalias() {
                    diags.push(
                        Diagnostic::new(
                            f.loc.clone(),
                            format!(
                                "`{ident}` serializes as `{}` (`into`) but deserializes from `{}` (`{}`)",
                                it.text(),
                                ft.text(),
                                f.kind.attr()
                            ),
                        )
                        .with_hint(format!(
                            "a CRD has one schema for what is written and what is read: use one type in both (`into` is at {})",
                            i.loc
                        )),
                    );
                    return Err(());
                }
                Ok(Some(ir))
            }
            (Some((i, it, _)), None) if derives("Deserialize") => {
                diags.push(
                    Diagnostic::new(
                        i.loc.clone(),
                        format!(
                            "`{ident}` serializes as `{}` (`into`) but deserializes from its own fields",
                            it.text()
                        ),
                    )
                    .with_hint(format!(
                        "add `from = \"{0}\"` or `try_from = \"{0}\"`, so objects read back in the form they are written",
                        it.text()
                    )),
                );
                Err(())
            }
            (None, Some((f, ft, _))) if derives("Serialize") => {
                diags.push(
                    Diagnostic::new(
                        f.loc.clone(),
                        format!(
                            "`{ident}` deserializes from `{}` (`{}`) but serializes its own fields",
                            ft.text(),
                            f.kind.attr()
                        ),
                    )
                    .with_hint(format!(
                        "add `into = \"{}\"`, so objects are written in the form they are read",
                        ft.text()
                    )),
                );
                Err(())
            }
            // The other direction is written by hand: its form is this one, we trust.
            (Some((_, _, t)), None) | (None, Some((_, _, t))) => Ok(Some(t)),
        }
    }

    fn fields(
        &mut self,
        module: &Module,
        fields: &[src::Field],
        container: &SerdeContainer,
        rename_rule: Option<&str>,
        diags: &mut Diagnostics,
    ) -> Vec<Field> {
        let mut out = vec![];
        for f in fields {
            let rust_name = unraw(f.ident.as_deref().expect("named"));
            let floc = f.loc.clone();
            let ser = &f.serde;
            let json_name = match (&ser.rename, rename_rule) {
                (Some(r), _) => r.clone(),
                (None, Some(rule)) => match rename(&rust_name, rule, false) {
                    Ok(n) => n,
                    Err(e) => {
                        diags.push(Diagnostic::new(floc.clone(), e));
                        rust_name.clone()
                    }
                },
                (None, None) => rust_name.clone(),
            };
            let docs = &f.docs;
            let markers = parse_markers(docs, Level::Field, diags);
            let ty = match ser.with {
                // Custom code decides the wire form: the Rust type tells nothing.
                Some(attr) => {
                    let what = format!("field `{rust_name}`");
                    if diags
                        .collect(check_opaque(&markers, &floc, &what, attr))
                        .is_none()
                    {
                        continue;
                    }
                    TypeRef::Opaque
                }
                None => match diags.collect(self.resolve_type(module, &f.ty)) {
                    Some(ty) => ty,
                    None => continue,
                },
            };
            out.push(Field {
                rust_name,
                json_name,
                ty,
                doc: doc_text(docs),
                markers,
                flatten: ser.flatten,
                skip: ser.skip,
                has_default: ser.default || container.default,
                skip_serializing_if: ser.skip_serializing_if,
                visible: f.visible,
                loc: floc,
            });
        }
        out
    }

    fn convert(&mut self, type_key: &str, diags: &mut Diagnostics) -> Option<TypeDecl> {
        let raw = self.raw.get(type_key)?;
        let module = raw.module;
        let item = raw.item;
        let ident = &item.ident;
        let loc = item.loc.clone();
        let docs = &item.docs;
        let markers = parse_markers(docs, Level::Type, diags);
        let serde = item.serde.clone();
        if item.generic {
            diags.push(
                Diagnostic::new(loc, format!("generic type `{ident}` cannot be an API type"))
                    .with_hint("use a concrete type"),
            );
            return None;
        }
        let wire = self.wire_type(raw, diags).ok()?;
        let shape = match &item.body {
            _ if wire.is_some() => Shape::Wire(wire.expect("checked")),
            src::Body::Alias(target) => {
                Shape::Alias(diags.collect(self.resolve_type(module, target))?)
            }
            src::Body::Struct(fields) => match fields {
                src::Fields::Named(named) => {
                    let rule = serde.rename_all.clone();
                    Shape::Struct(self.fields(module, named, &serde, rule.as_deref(), diags))
                }
                src::Fields::Unnamed(u) if u.len() == 1 => match u[0].serde.with {
                    Some(attr) => {
                        let what = format!("`{ident}`");
                        diags.collect(check_opaque(&markers, &loc, &what, attr))?;
                        Shape::Newtype(TypeRef::Opaque)
                    }
                    None => Shape::Newtype(diags.collect(self.resolve_type(module, &u[0].ty))?),
                },
                _ => {
                    diags.push(
                        Diagnostic::new(
                            loc,
                            format!("`{ident}` must have named fields or be a newtype"),
                        )
                        .with_hint("tuple and unit structs have no JSON object form"),
                    );
                    return None;
                }
            },
            src::Body::Enum(source_variants) => {
                let mut variants = vec![];
                for v in source_variants {
                    let vser = &v.serde;
                    if vser.skip {
                        continue;
                    }
                    let rust_name = unraw(&v.ident);
                    let vloc = v.loc.clone();
                    let json_name = match (&vser.rename, &serde.rename_all) {
                        (Some(r), _) => r.clone(),
                        (None, Some(rule)) => {
                            rename(&rust_name, rule, true).unwrap_or(rust_name.clone())
                        }
                        (None, None) => rust_name.clone(),
                    };
                    let shape = match &v.fields {
                        src::Fields::Unit => VariantShape::Unit,
                        src::Fields::Unnamed(u) if u.len() == 1 => {
                            if let Some(attr) = u[0].serde.with {
                                diags.push(
                                    Diagnostic::new(
                                        vloc,
                                        format!("the schema of variant `{ident}::{rust_name}` cannot be inferred: `#[serde({attr} = ...)]` serializes it with custom code"),
                                    )
                                    .with_hint("hold a newtype struct instead, whose doc comment describes its wire form with `+kubebuilder:validation:Type=...`"),
                                );
                                continue;
                            }
                            let Some(t) = diags.collect(self.resolve_type(module, &u[0].ty)) else {
                                continue;
                            };
                            VariantShape::Newtype(t)
                        }
                        src::Fields::Unnamed(u) => VariantShape::Tuple(u.len()),
                        src::Fields::Named(named) => {
                            let rule = v
                                .container
                                .rename_all
                                .clone()
                                .or(serde.rename_all_fields.clone());
                            VariantShape::Struct(self.fields(
                                module,
                                named,
                                &SerdeContainer::default(),
                                rule.as_deref(),
                                diags,
                            ))
                        }
                    };
                    variants.push(Variant {
                        rust_name,
                        json_name,
                        doc: doc_text(&v.docs),
                        shape,
                        untagged: vser.untagged,
                        loc: vloc,
                    });
                }
                Shape::Enum(variants)
            }
        };
        Some(TypeDecl {
            name: ident.clone(),
            module_path: module.path.clone(),
            doc: doc_text(docs),
            markers,
            serde,
            shape,
            derives: item.derives.clone(),
            visible: item.visible,
            rust_path: public_path(self.modules, module, item),
            loc,
        })
    }
}

/// A `use` path of module `m`, absolute: `use` paths may start at a child module
/// (`pub use types::*;`), which `source` cannot tell from an external crate.
fn anchored(m: &Module, path: &[String]) -> Vec<String> {
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
fn public_path(modules: &[Module], module: &Module, item: &src::Item) -> Option<Vec<String>> {
    if !item.visible {
        return None;
    }
    // A module this run did not read (a parent outside the inputs) is taken as reachable.
    let reachable = |path: &[String]| {
        (1..=path.len()).all(|n| {
            modules
                .iter()
                .find(|m| m.path == path[..n])
                .is_none_or(|m| m.visible)
        })
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

/// An identifier without its `r#`.
fn unraw(ident: &str) -> String {
    ident.strip_prefix("r#").unwrap_or(ident).to_owned()
}

/// Map a path below `k8s_openapi::` to a TypeRef, or None if it is not a known type.
fn classify_k8s(path: &str) -> Option<TypeRef> {
    Some(match path {
        "apimachinery::pkg::util::intstr::IntOrString" => TypeRef::IntOrString,
        "apimachinery::pkg::api::resource::Quantity" => TypeRef::Quantity,
        "apimachinery::pkg::apis::meta::v1::Time"
        | "apimachinery::pkg::apis::meta::v1::MicroTime" => TypeRef::Time,
        "apimachinery::pkg::apis::meta::v1::ObjectMeta" => TypeRef::ObjectMeta,
        "ByteString" => TypeRef::Bytes,
        p if crate::k8s_schemas::contains(p) => TypeRef::K8s(p.to_owned()),
        _ => return None,
    })
}

/// Kinds grouped by group and kind name, across versions: one CRD each.
pub fn crd_groups(api: &Api) -> BTreeMap<(String, String), Vec<(&Package, &Kind)>> {
    let mut out: BTreeMap<(String, String), Vec<(&Package, &Kind)>> = BTreeMap::new();
    for p in api.packages.values() {
        for k in &p.kinds {
            out.entry((p.group.clone(), k.name.clone()))
                .or_default()
                .push((p, k));
        }
    }
    out
}

/// Kinds of one group need distinct plurals: the plural names the CRD (`<plural>.<group>`)
/// and its file, so two kinds sharing one would overwrite each other.
pub fn check_duplicates(api: &Api, diags: &mut Diagnostics) {
    let mut seen: BTreeMap<(&str, &str), &Kind> = BTreeMap::new();
    for p in api.packages.values() {
        for k in &p.kinds {
            match seen.get(&(p.group.as_str(), k.plural.as_str())) {
                // The same kind in another version: one CRD, as it should be.
                Some(first) if first.name == k.name => {}
                Some(first) => diags.push(
                    Diagnostic::new(
                        k.loc.clone(),
                        format!(
                            "kinds `{}` and `{}` of group {} share the plural `{}`",
                            first.name, k.name, p.group, k.plural
                        ),
                    )
                    .with_hint(format!(
                        "`{}` is at {}; set a distinct `+kubebuilder:resource:path=`",
                        first.name, first.loc
                    )),
                ),
                None => {
                    seen.insert((p.group.as_str(), k.plural.as_str()), k);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renames_like_serde() {
        assert_eq!(
            rename("custom_property", "camelCase", false).unwrap(),
            "customProperty"
        );
        assert_eq!(
            rename("custom_property", "PascalCase", false).unwrap(),
            "CustomProperty"
        );
        assert_eq!(
            rename("custom_property", "kebab-case", false).unwrap(),
            "custom-property"
        );
        assert_eq!(
            rename("DeploymentName", "camelCase", true).unwrap(),
            "deploymentName"
        );
        assert_eq!(
            rename("DeploymentName", "snake_case", true).unwrap(),
            "deployment_name"
        );
        assert_eq!(
            rename("DeploymentName", "SCREAMING_SNAKE_CASE", true).unwrap(),
            "DEPLOYMENT_NAME"
        );
        assert!(rename("x", "Bogus", false).is_err());
    }

    #[test]
    fn pluralizes_like_controller_gen() {
        assert_eq!(pluralize("foo"), "foos");
        assert_eq!(pluralize("policy"), "policies");
        assert_eq!(pluralize("gateway"), "gateways");
        assert_eq!(pluralize("status"), "statuses");
        assert_eq!(pluralize("box"), "boxes");
    }
}
