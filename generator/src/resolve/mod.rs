//! Stage 2: turn parsed modules into the [`Api`] model, checking every input on the way:
//! generators get a model they cannot refuse. All problems are collected, not just the
//! first.
//!
//! - this module: which modules are group/versions and which structs are kinds in them
//!   (membership follows the module tree), and checks across kinds;
//! - [`package`]: a group/version module's markers (`doc.go`'s);
//! - [`kind`]: a kind's markers: names, scope, subresources, columns, client verbs;
//! - [`manifests`]: `+kubebuilder:rbac` and `+kubebuilder:webhook` markers, read into the
//!   model's rules and webhooks;
//! - [`kube_derive`]: a `#[derive(CustomResource)]` spec's `#[kube(...)]` keys, read into
//!   the same kind (kube-derive input, no marker needed), and the other derives' attributes;
//! - [`types`]: the Rust types reachable from the kinds, resolved to the model's types;
//! - [`nesting`]: how deep they nest below each kind, bounded ([`MAX_TYPE_NESTING`]);
//! - [`paths`]: how generated code names a type (re-exports of private modules);
//! - [`crd`]: the CRDs, built from the schemas and checked as the API server checks them;
//!   [`derived_default`]: a spec's derived `Default` against its CRD (a warning);
//! - [`rust`]: what generated Rust needs of the types (nameable, `Clone`, `metadata`);
//! - [`validation_optins`]: the kinds opted into generated validation, their schemas and rules.
//!
//! The last three are [`Check`]s: each generator declares those its output builds on, and
//! they run for the generators that run.

mod admission_policy;
mod crd;
pub(crate) use crd::base64;
mod derived_default;
mod kind;
mod kube_derive;
mod manifests;
mod nesting;
mod package;
mod paths;
mod rust;
mod types;
mod validation_optins;

pub use nesting::MAX_TYPE_NESTING;
pub(crate) use package::{is_dns_subdomain, is_version};

use kind::kind_of;
use package::package_of;
use types::Resolver;

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::KubernetesVersion;
use crate::diagnostics::{Diagnostic, Diagnostics, Location};
use crate::markers::{self, Level, Marker, Name};
use crate::model::*;
use crate::read::{self as src, DocLine, Module};
use crate::schema::SchemaOptions;

/// Parse a doc comment's markers at a level, by the run's marker table, collecting errors.
fn parse_markers(
    lines: &[DocLine],
    level: Level,
    table: &markers::Table,
    diags: &mut Diagnostics,
) -> Vec<Marker> {
    lines
        .iter()
        // Prose is no marker (`parse_line` says so too): its location is not copied.
        .filter(|l| l.text.trim_start().starts_with('+'))
        .filter_map(|l| {
            diags
                .collect(markers::parse_line(&l.text, level, l.loc.clone(), table))
                .flatten()
        })
        .collect()
}

struct RawType<'a> {
    module: &'a Module,
    item: &'a src::Item,
}

/// What a run tells the resolve stage beside the modules.
pub struct Options<'a> {
    /// The markers the run understands (the generators' registry builds it).
    pub table: &'a markers::Table,
    /// The Kubernetes version generated for: which k8s-openapi types exist.
    pub kubernetes: KubernetesVersion,
    /// Every kind opts into the `validation` generator.
    pub validate_all_kinds: bool,
    /// Where to point when the input has no group/version at all: its first file.
    pub first_input: PathBuf,
    /// What the generators that run build on, to check beside the model, in registry
    /// order (each generator declares its own).
    pub checks: &'a [Check],
    /// What changes schema text (the CRDs are built here).
    pub schema: &'a SchemaOptions,
}

/// Build the model from every module of the crate and check it: every problem of the
/// input is reported here, located.
pub fn build(modules: &[Module], options: &Options, diags: &mut Diagnostics) -> Api {
    let Options {
        table, kubernetes, ..
    } = *options;
    // kube-derive kinds: a `#[derive(CustomResource)]` spec names its group/version and
    // kind itself, wherever it is; the kind struct kube-derive generates is added as a
    // source item beside the spec.
    let (mut roots, mut derived_kinds) = (vec![], vec![]);
    for m in modules {
        for item in m.structs.iter().chain(&m.enums) {
            if kube_derive::is_custom_resource(item)
                && let Some(d) = kube_derive::derived_kind(m, item, |n| key(&m.path, n), diags)
            {
                roots.push((m, d.root));
                derived_kinds.push((d.group, d.version, d.kind));
            }
        }
    }
    let mut raw: BTreeMap<String, RawType> = BTreeMap::new();
    for m in modules {
        for item in m.structs.iter().chain(&m.enums).chain(&m.aliases) {
            raw.insert(key(&m.path, &item.ident), RawType { module: m, item });
        }
    }
    let mut clashing = std::collections::BTreeSet::new();
    for (i, (m, root)) in roots.iter().enumerate() {
        let k = key(&m.path, &root.ident);
        if let Some(existing) = raw.get(&k) {
            diags.push(
                Diagnostic::new(existing.item.loc.clone(), format!("`{}` is defined here, and kube-derive generates a struct of that name", root.ident))
                    .with_hint(format!("rename one of them (kube-derive's with `#[kube(root = \"...\")]`); the spec is at {}", root.loc)),
            );
            clashing.insert(i);
            continue;
        }
        raw.insert(
            k,
            RawType {
                module: m,
                item: root,
            },
        );
    }
    let mut resolver = Resolver {
        raw: &raw,
        modules: paths::Modules::new(modules),
        types: BTreeMap::new(),
        pending: vec![],
        aliases: vec![],
        kubernetes,
        table,
    };
    let mut api = Api {
        kubernetes,
        webhook_ca: options.schema.ca.clone(),
        ..Api::default()
    };

    // Group/version modules by module path. Child modules belong to the nearest one around
    // them, as the files of a Go package do (`v1/mod.rs` holds doc.go's markers,
    // `v1/types.rs` the kinds).
    let mut packages: BTreeMap<&[String], Package> = BTreeMap::new();
    let mut skipped: std::collections::BTreeSet<&[String]> = Default::default();
    for m in modules {
        let pkg_markers = parse_markers(&m.inner_docs, Level::Package, table, diags);
        collect_tool_markers(&mut api, &pkg_markers, diags);
        for docs in &m.other_docs {
            let lines: Vec<DocLine> = docs
                .iter()
                .filter(|l| is_manifest_marker(&l.text))
                .cloned()
                .collect();
            let markers = parse_markers(&lines, Level::Package, table, diags);
            collect_tool_markers(&mut api, &markers, diags);
        }
        if let Some(package) = package_of(m, &pkg_markers, diags) {
            // controller-gen's `+kubebuilder:skip`: not an API version, no CRDs from it;
            // its types still belong to it, so they are not reported as outside.
            if pkg_markers.iter().any(|mk| mk.name == Name::Skip) {
                skipped.insert(&m.path);
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
        // The nearest group/version around the type's module: its path's prefixes, longest
        // first, looked up (a scan of every package per type grew with kinds x groups).
        let path = r.module.path.as_slice();
        let owner = (0..=path.len())
            .rev()
            .map(|n| &path[..n])
            .find(|p| skipped.contains(p) || packages.contains_key(p));
        if owner.is_some_and(|p| skipped.contains(p)) {
            continue;
        }
        let type_markers = if owner.is_some() {
            let markers = parse_markers(&r.item.docs, Level::Type, table, diags);
            collect_tool_markers(&mut api, &markers, diags);
            markers
        } else {
            // Outside every group/version only the kind markers matter: a kind there is
            // reported below; other markers are not ours to judge.
            parse_markers(
                &r.item.docs,
                Level::Type,
                table,
                &mut Diagnostics::default(),
            )
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
                    .with_hint(kind_only_hint(mk.name)),
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
        // The package opted every kind in already: the kind's own marker adds nothing.
        if let Some(ValidationScope::Package(at)) = &packages[owner].validation
            && let Some(mk) = type_markers.iter().find(|mk| mk.name == Name::Validation)
        {
            diags.push(
                Diagnostic::warning(
                    mk.loc.clone(),
                    format!(
                        "`+kube-codegen:validation` on `{ident}` is redundant: its group/version opts every kind in"
                    ),
                )
                .with_marker(&mk.text)
                .with_hint(format!("drop it, or drop the package's marker at {at} to opt kinds in one by one")),
            );
        }
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
    for (i, (group, version, kind)) in derived_kinds.into_iter().enumerate() {
        if clashing.contains(&i) {
            continue;
        }
        resolver.require(&kind.type_key);
        let package = api
            .packages
            .entry((group.clone(), version.clone()))
            .or_insert_with(|| Package {
                group,
                version,
                loc: kind.loc.clone(),
                default_optional: None,
                validation: None,
                kinds: vec![],
            });
        package.kinds.push(kind);
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
    // Everything after this recurses through the types, as deep as they nest.
    let within_limits = nesting::check(&api, diags);
    kube_derive::check_types(&api, diags);
    if options.validate_all_kinds {
        for p in api.packages.values_mut() {
            p.validation = Some(ValidationScope::All);
        }
    }
    check_duplicates(&api, diags);
    check_conversions(&api, diags);
    for d in manifests::check_webhook_configurations(&api.webhook_configurations) {
        diags.push(d);
    }
    // A controller's crate has no API of its own, only RBAC and webhook markers: with only
    // the manifest generators selected (nothing to check of kinds), those suffice.
    let manifests_only =
        options.checks.is_empty() && !(api.rbac_rules.is_empty() && api.webhooks.is_empty());
    if api.packages.is_empty() && !manifests_only && !diags.has_errors() {
        diags.push(
            Diagnostic::new(
                Location::new(&options.first_input, 1, 1),
                "no group/version module found",
            )
            .with_hint(
                "mark a module with an inner doc comment `//! +groupName=example.com`, or derive kube-derive's `CustomResource` on a spec struct",
            ),
        );
    }
    // The CRDs are checked even beside other errors, so one run reports every problem (a
    // CRD's schema errors beside the model's).
    if options.checks.contains(&Check::Crds) && within_limits {
        api.crds = std::sync::Arc::new(crd::build_crds(&api, options.schema, diags));
    }
    // What generated Rust builds on needs a sound model, so these stop at the first problem
    // (what comes after would only repeat it).
    let mut done = vec![Check::Crds];
    for &check in options.checks {
        if done.contains(&check) {
            continue;
        }
        if diags.has_errors() {
            break;
        }
        done.push(check);
        match check {
            Check::Crds => {}
            Check::ApplyConfigurations => rust::check_apply_configurations(&api, diags),
            Check::Kinds => rust::check_kinds(&api, diags),
            Check::DeepCopies => rust::check_deep_copies(&api, diags),
            Check::Validation => {
                api.validation = validation_optins::schemas(&api, options.schema, diags)
            }
            Check::AdmissionPolicies => {
                api.admission_policies = admission_policy::policies(&api, options.schema, diags)
            }
        }
    }
    api
}

/// What a generator's output builds on beyond the model's own rules, checked here for the
/// generators that run: each declares its own in the registry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Check {
    /// The CRDs, built and checked as the API server checks them (they are built here).
    Crds,
    /// Types apply configurations hold as they are can be named from generated code.
    ApplyConfigurations,
    /// Each kind's `ObjectMeta` field is `metadata` (`kube::Resource::meta()`).
    Kinds,
    /// Types derive `Clone` and their fields can be read from generated code.
    DeepCopies,
    /// The opt-ins into generated validation, with each one's schema (kept in the model)
    /// and rules the runtime's evaluator runs.
    Validation,
    /// The kinds marked for a ValidatingAdmissionPolicy, each one's validation stated in
    /// CEL (kept in the model).
    AdmissionPolicies,
}

fn key(path: &[String], name: &str) -> String {
    // `path.join("::")`, then `::` unless that is empty, then `name`, in a string sized
    // once: joining and then appending grew it a second time, about 200 instructions a
    // key over thousands of keys a run.
    let mut k = String::with_capacity(path.iter().map(|s| s.len() + 2).sum::<usize>() + name.len());
    for (i, segment) in path.iter().enumerate() {
        if i > 0 {
            k.push_str("::");
        }
        k.push_str(segment);
    }
    if !k.is_empty() {
        k.push_str("::");
    }
    k.push_str(name);
    k
}

/// Markers that make sense only on a kind (`import go` carries them as comments elsewhere).
pub(crate) const KIND_ONLY: &[Name] = &[
    Name::GenclientNonNamespaced,
    Name::GenclientNoStatus,
    Name::GenclientNoVerbs,
    Name::GenclientReadonly,
    Name::GenclientOnlyVerbs,
    Name::GenclientSkipVerbs,
    Name::GenclientMethod,
    Name::SubresourceStatus,
    Name::SubresourceScale,
    Name::PrintColumn,
    Name::StorageVersion,
    Name::DeprecatedVersion,
    Name::SkipVersion,
    Name::UnservedVersion,
    Name::SelectableField,
    Name::AdmissionPolicy,
    Name::Validation,
    Name::Metadata,
    Name::Conversion,
];

/// What to do about a [`KIND_ONLY`] marker on a type that is no kind.
fn kind_only_hint(name: Name) -> &'static str {
    match name {
        // The validation opt-in has a second home: the module, for all of its kinds.
        Name::Validation => {
            "put it on the kind (the struct with `+genclient` or `+kubebuilder:object:root=true`), or in the group/version module's inner doc comment (`//! +kube-codegen:validation`) for every kind of it; the whole object, nested types included, is then validated"
        }
        _ => "mark the kind with `+genclient` or `+kubebuilder:object:root=true`",
    }
}

/// The markers controller-gen reads from any comment of a package, not only a type's or the
/// package's own: RBAC rules and webhooks, which Go teams write on `Reconcile` and on a
/// webhook's methods. Other markers on functions, impls and the like are not read (they
/// describe no API), so only these lines are parsed there.
const MANIFEST_MARKERS: &[Name] = &[Name::Rbac, Name::Webhook, Name::WebhookConfiguration];

fn is_manifest_marker(line: &str) -> bool {
    let Some(body) = line.trim_start().strip_prefix('+') else {
        return false;
    };
    MANIFEST_MARKERS.iter().any(|n| {
        body.strip_prefix(n.as_str())
            .is_some_and(|rest| rest.is_empty() || rest.starts_with([':', '=']))
    })
}

/// Keep the markers of the manifest generators (`rbac`, `webhook`), validated.
fn collect_tool_markers(api: &mut Api, markers: &[Marker], diags: &mut Diagnostics) {
    for mk in markers {
        match mk.name {
            Name::Rbac => {
                if let Some(r) = diags.collect(manifests::rbac_rule(mk)) {
                    api.rbac_rules.push(r);
                }
            }
            Name::Webhook => {
                if let Some(w) = diags.collect(manifests::webhook(mk)) {
                    api.webhooks.push(w);
                }
            }
            Name::WebhookConfiguration => {
                if let Some(w) = diags.collect(manifests::webhook_configuration(mk)) {
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
        Name::Genclient | Name::Resource => true,
        Name::ObjectRoot => m.bool_value().unwrap_or(false),
        _ => false,
    })
}

/// Kinds of one group need distinct plurals: the plural names the CRD (`<plural>.<group>`)
/// and its file, so two kinds sharing one would overwrite each other.
fn check_duplicates(api: &Api, diags: &mut Diagnostics) {
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

/// Conversion markers: the hub (`+kube-codegen:conversion=hub`) is the storage version of
/// a kind with more than one version, and `+k8s:conversion-gen` on a type says `false`
/// (a kind cannot opt out: its conversion is what the webhook serves).
fn check_conversions(api: &Api, diags: &mut Diagnostics) {
    for ((group, kind), versions) in api.crd_groups() {
        let versions: Vec<_> = versions.into_iter().filter(|(_, k)| !k.skip).collect();
        for (p, k) in &versions {
            let Some(at) = &k.conversion_hub else {
                continue;
            };
            let marker = &Name::Conversion.with_value("hub");
            if versions.len() < 2 {
                diags.push(
                    Diagnostic::new(
                        at.clone(),
                        format!(
                            "{kind}.{group} has one version ({}), so there is nothing to convert",
                            p.version
                        ),
                    )
                    .with_marker(marker)
                    .with_hint("add the kind's other versions first, or remove the marker"),
                );
            } else if !k.storage {
                let storage: Vec<&str> = versions
                    .iter()
                    .filter(|(_, k)| k.storage)
                    .map(|(p, _)| p.version.as_str())
                    .collect();
                diags.push(
                    Diagnostic::new(at.clone(), format!("the conversion hub of {kind}.{group} must be its storage version, and {} is not", p.version))
                        .with_marker(marker)
                        .with_hint(match storage.first() {
                            Some(s) => format!("move the marker to the {s} kind, which is marked `+kubebuilder:storageversion`"),
                            None => "mark this kind `+kubebuilder:storageversion` too".to_owned(),
                        }),
                );
            }
        }
    }
    for decl in api.types.values() {
        for m in decl
            .markers
            .iter()
            .filter(|m| m.name == Name::ConversionGen)
        {
            let kind = api.packages.values().flat_map(|p| &p.kinds).any(|k| {
                api.types
                    .get(&k.type_key)
                    .is_some_and(|d| std::ptr::eq(d, decl))
            });
            match m.string_value() {
                Ok(v) if v == "false" && kind => diags.push(
                    m.error(format!("kind {} cannot opt out of conversion", decl.name))
                        .with_hint("put `+k8s:conversion-gen=false` on the types of its fields and convert those by hand, or leave the kind's hub unmarked"),
                ),
                Ok(v) if v == "false" => {}
                Ok(v) => diags.push(
                    m.error(format!("`+k8s:conversion-gen` on a type takes `false`, not `{v}`"))
                        .with_hint("`+k8s:conversion-gen=false` makes the type's conversion hand-written; a package-level `//! +k8s:conversion-gen=<path>` is Go's and ignored"),
                ),
                Err(e) => diags.push(e),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    /// RBAC and webhook markers are validated and kept in the model for the generators to
    /// come; `+kubebuilder:skip` drops its package; `ThingList` is not a kind.
    #[test]
    fn markers_controller_gen_model() {
        use crate::diagnostics::Diagnostics;
        use crate::model::WebhookKind;
        use crate::read as source;
        use std::path::Path;
        let root = Path::new("tests/fixtures/markers_controller_gen/src");
        let mut diags = Diagnostics::default();
        let mut modules = vec![];
        for f in source::rust_files(root).unwrap().files {
            let path = source::module_path_of(root, &f);
            modules.extend(source::parse_file(path, true, &f, &mut diags));
        }
        let options = super::Options {
            table: crate::generators::marker_table(),
            kubernetes: crate::KubernetesVersion::NEWEST,
            validate_all_kinds: false,
            first_input: root.join("lib.rs"),
            checks: &[],
            schema: &Default::default(),
        };
        let api = super::build(&modules, &options, &mut diags);
        assert!(!diags.has_errors(), "{:?}", diags.errors());
        let kinds: Vec<(&str, &str)> = api
            .packages
            .values()
            .flat_map(|p| {
                p.kinds
                    .iter()
                    .map(move |k| (p.group.as_str(), k.name.as_str()))
            })
            .collect();
        assert_eq!(kinds, [("things.example.com", "Thing")]);
        let rbac: Vec<(Vec<String>, Vec<String>, Vec<String>)> = api
            .rbac_rules
            .iter()
            .map(|r| (r.groups.clone(), r.resources.clone(), r.urls.clone()))
            .collect();
        let s = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            rbac,
            [
                (
                    s(&["things.example.com"]),
                    s(&["things", "things/status"]),
                    vec![]
                ),
                (s(&[""]), s(&["events"]), vec![]),
                (vec![], vec![], s(&["/metrics"])),
                (s(&["apps"]), s(&["deployments"]), vec![]),
            ]
        );
        assert_eq!(api.webhooks.len(), 1);
        let w = &api.webhooks[0];
        assert_eq!(w.kind, WebhookKind::Validating);
        assert_eq!(w.failure_policy, crate::model::FailurePolicy::Fail);
        assert_eq!(
            w.operations,
            [
                crate::model::Operation::Create,
                crate::model::Operation::Update
            ]
        );
        assert_eq!(
            w.path.as_deref(),
            Some("/validate-things-example-com-v1-thing")
        );
        assert_eq!(api.webhook_configurations.len(), 1);
        assert_eq!(
            api.webhook_configurations[0].name.as_deref(),
            Some("things-validating")
        );
    }
}
