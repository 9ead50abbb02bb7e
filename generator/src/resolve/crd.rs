//! The CRDs of the API: one CustomResourceDefinition (apiextensions.k8s.io/v1) per group
//! and kind, merging the kind's versions, with structural schemas ([`crate::schema`]) that
//! embed Kubernetes' own types. Building them is where the schema markers are checked (a
//! bound on a field of the wrong type, a bad list-map key), and the CRD as a whole is checked
//! as the API server checks it when it takes the CRD: storage versions, printer columns and
//! scale paths, CEL rules (types and cost), defaults against their own schema, protected
//! groups, the conversion webhook. The `crd` generator only writes what this builds.

use std::collections::BTreeMap;

use kube_codegen_validation::cel::check::check_schema;

use crate::apiext::{
    CustomResourceColumnDefinition, CustomResourceConversion, CustomResourceDefinition,
    CustomResourceDefinitionNames, CustomResourceDefinitionSpec, CustomResourceDefinitionVersion,
    CustomResourceSubresourceScale, CustomResourceSubresourceStatus, CustomResourceSubresources,
    CustomResourceValidation, JSONSchemaProps, ObjectMeta, SelectableField, ServiceReference,
    WebhookClientConfig, WebhookConversion,
};
use crate::diagnostics::{Diagnostic, Diagnostics};
use crate::kubernetes::{
    ANNOTATIONS_LIMIT, API_APPROVED, APISERVER_REQUEST_LIMIT, ETCD_REQUEST_LIMIT, LAST_APPLIED,
};
use crate::markers::Name;
use crate::model::*;
use crate::schema::{ConversionWebhook, SchemaBuilder, SchemaOptions, lookup_path};

/// Kubernetes version priority: GA > beta > alpha, then higher numbers first, then by name.
fn version_priority(v: &str) -> (u8, u32, u32, String) {
    // `v<major>` or `v<major>(alpha|beta)<minor>` (client-go's version priority), by hand:
    // it runs for every pair of versions sorted.
    let digits = |s: &str| -> Option<u32> {
        (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())).then(|| s.parse().unwrap_or(0))
    };
    let parsed = v.strip_prefix('v').and_then(|rest| {
        let end = rest
            .bytes()
            .position(|b| !b.is_ascii_digit())
            .unwrap_or(rest.len());
        let major = digits(&rest[..end])?;
        let tail = &rest[end..];
        if tail.is_empty() {
            return Some((3, major, 0));
        }
        let (level, minor) = if let Some(m) = tail.strip_prefix("beta") {
            (2, m)
        } else {
            (1, tail.strip_prefix("alpha")?)
        };
        Some((level, major, digits(minor)?))
    });
    match parsed {
        Some((level, major, minor)) => (level, major, minor, String::new()),
        None => (0, 0, 0, v.to_owned()),
    }
}

/// Build all CRDs, collecting every problem. CRDs are built in parallel; the result is
/// in the order of [`Api::crd_groups`].
pub(super) fn build_crds(api: &Api, options: &SchemaOptions, diags: &mut Diagnostics) -> Vec<Crd> {
    let groups: Vec<_> = api.crd_groups().into_iter().collect();
    let built = crate::parallel::map(groups, |((group, kind_name), versions)| {
        let mut found = Diagnostics::default();
        let crd = build_crd(api, options, &group, &kind_name, versions, &mut found);
        (crd, found)
    });
    let mut out = vec![];
    for (crd, found) in built {
        diags.0.extend(found.0);
        out.extend(crd);
    }
    out
}

/// The CRD of one group and kind, from the kind's versions.
fn build_crd(
    api: &Api,
    options: &SchemaOptions,
    group: &str,
    kind_name: &str,
    mut versions: Vec<(&Package, &Kind)>,
    diags: &mut Diagnostics,
) -> Option<Crd> {
    versions.retain(|(_, k)| !k.skip);
    if versions.is_empty() {
        return None;
    }
    // Highest priority first, as kubectl lists them.
    versions.sort_by_key(|(p, _)| std::cmp::Reverse(version_priority(&p.version)));
    let names_of = |vs: &[(&Package, &Kind)]| {
        vs.iter()
            .map(|(p, _)| p.version.clone())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let storage: Vec<_> = versions.iter().filter(|(_, k)| k.storage).collect();
    let storage_version = match (versions.len(), storage.len()) {
        (1, _) => versions[0].0.version.clone(),
        (_, 1) => storage[0].0.version.clone(),
        (_, 0) => {
            diags.push(
                Diagnostic::new(versions[0].1.loc.clone(), format!(
                    "{kind_name}.{group} has versions {} but none is marked `+kubebuilder:storageversion`",
                    names_of(&versions)
                ))
                .with_hint("mark exactly one version's kind with `+kubebuilder:storageversion`"),
            );
            return None;
        }
        _ => {
            let marked: Vec<_> = storage
                .iter()
                .map(|(p, k)| format!("{} ({})", p.version, k.loc))
                .collect();
            diags.push(
                Diagnostic::new(
                    storage[1].1.loc.clone(),
                    format!(
                        "{kind_name}.{group} has more than one storage version: {}",
                        marked.join(", ")
                    ),
                )
                .with_hint(if matches!(storage[1].1.dialect, SchemaDialect::KubeDerive { .. }) {
                    // kube-derive's `merge_crds(.., stored)` picks it in code, which kube-codegen
                    // does not run: the attributes say it.
                    "kube-derive marks every version `storage` unless told: set `#[kube(storage = false)]` on all versions but the stored one (the one you pass to `merge_crds`)"
                } else {
                    "keep `+kubebuilder:storageversion` on exactly one version"
                }),
            );
            return None;
        }
    };
    let (_, first) = versions[0];
    let mut consistent = true;
    for (p, k) in &versions[1..] {
        for (what, a, b) in [
            ("plural", &first.plural, &k.plural),
            ("singular", &first.singular, &k.singular),
            (
                "scope",
                &first.scope.as_str().to_owned(),
                &k.scope.as_str().to_owned(),
            ),
        ] {
            if a != b {
                consistent = false;
                diags.push(
                    Diagnostic::new(
                        k.loc.clone(),
                        format!(
                            "{kind_name}.{group} {what} is `{b}` in {} but `{a}` in {}",
                            p.version, versions[0].0.version
                        ),
                    )
                    .with_hint(
                        "all versions of a kind share one CRD, so their names and scope must agree",
                    ),
                );
            }
        }
    }
    // Short names and categories come from the versions that set them: controller-gen
    // applies each version's `+kubebuilder:resource` to the one CRD, so a version without
    // them (Gateway API's v1alpha3 BackendTLSPolicy) takes the others'. Two versions that
    // set different ones are a conflict.
    let mut names_from = |what: &str, of: fn(&Kind) -> &Vec<String>| -> Vec<String> {
        let mut chosen: Option<(&Package, &Vec<String>)> = None;
        for (p, k) in &versions {
            let names = of(k);
            if names.is_empty() {
                continue;
            }
            match chosen {
                None => chosen = Some((p, names)),
                Some((cp, c)) if c != names => {
                    consistent = false;
                    diags.push(
                        Diagnostic::new(
                            k.loc.clone(),
                            format!(
                                "{kind_name}.{group} {what} is `{}` in {} but `{}` in {}",
                                names.join(";"),
                                p.version,
                                c.join(";"),
                                cp.version
                            ),
                        )
                        .with_hint("all versions of a kind share one CRD: set them on one version, or the same on each"),
                    );
                }
                Some(_) => {}
            }
        }
        chosen.map(|(_, c)| c.clone()).unwrap_or_default()
    };
    let short_names = names_from("shortNames", |k| &k.short_names);
    let categories = names_from("categories", |k| &k.categories);
    if !consistent {
        return None;
    }
    let mut crd_versions = vec![];
    let mut annotations = BTreeMap::new();
    let mut labels = BTreeMap::new();
    for (p, k) in &versions {
        annotations.extend(k.annotations.clone());
        labels.extend(k.labels.clone());
        let schema = match &k.dialect {
            SchemaDialect::ControllerGen => {
                let mut builder = SchemaBuilder::new(api, p, options);
                let schema = builder.kind_schema(k);
                diags.0.append(&mut builder.found);
                let Some(schema) = schema else {
                    continue;
                };
                if builder.unresolved {
                    continue;
                }
                for (path, rule) in &builder.dropped_rules {
                    diags.push(
                        Diagnostic::warning(
                            k.loc.clone(),
                            format!(
                                "the transition rule `{rule}` of an embedded Kubernetes type at `{path}` in {} is left out: it sits under a list or map the API server cannot correlate, where it refuses transition rules",
                                k.name
                            ),
                        )
                        .with_hint("the CRD controller-gen writes keeps it, and the API server refuses that CRD; nothing to change here"),
                    );
                }
                schema
            }
            SchemaDialect::KubeDerive { doc } => {
                let value = crate::schema::kube_derive::kind_schema(api, k, doc);
                serde_json::from_value(value).expect("the emulated schemas are JSONSchemaProps")
            }
        };
        if matches!(k.dialect, SchemaDialect::KubeDerive { .. }) {
            // kube-derive writes such a CRD (the apiserver takes it too; the column is empty,
            // the scale subresource fails at use): said, but not refused, as the CRD equals
            // the one the kinds have today.
            let mut found = Diagnostics::default();
            check_paths(k, &schema, &mut found);
            check_cel(api, k, &schema, &mut found);
            diags.0.extend(found.0.into_iter().map(|mut d| {
                d.severity = crate::diagnostics::Severity::Warning;
                d
            }));
        } else {
            check_paths(k, &schema, diags);
            check_cel(api, k, &schema, diags);
            super::derived_default::check(api, k, &schema, diags);
        }
        crd_versions.push(version_of(p, k, schema, p.version == storage_version));
    }
    if crd_versions.len() != versions.len() {
        return None;
    }
    // Defaults are checked on the final schemas, named as the server names them: its
    // internal CRD hoists the schema to `spec.validation` when every version has the same
    // one (then it is checked once).
    let json_of = |v: &CustomResourceDefinitionVersion| serde_json::to_value(&v.schema).ok();
    let same = crd_versions
        .windows(2)
        .all(|w| json_of(&w[0]) == json_of(&w[1]));
    for (i, ((_, k), v)) in versions.iter().zip(&crd_versions).enumerate() {
        let Some(schema) = v
            .schema
            .as_ref()
            .and_then(|s| s.open_api_v3_schema.as_ref())
        else {
            continue;
        };
        if same && i > 0 {
            break;
        }
        let prefix = if same {
            "spec.validation.openAPIV3Schema".to_owned()
        } else {
            format!("spec.versions[{i}].schema.openAPIV3Schema")
        };
        if matches!(k.dialect, SchemaDialect::KubeDerive { .. }) {
            // As the checks above: kube-derive's CRDs are said, not refused.
            let mut found = Diagnostics::default();
            check_defaults(api, k, schema, &prefix, &mut found);
            diags.0.extend(found.0.into_iter().map(|mut d| {
                d.severity = crate::diagnostics::Severity::Warning;
                d
            }));
        } else {
            check_defaults(api, k, schema, &prefix, diags);
        }
    }
    if !crd_versions.iter().any(|v| v.served)
        && !matches!(first.dialect, SchemaDialect::KubeDerive { .. })
    {
        diags.push(
            Diagnostic::new(
                first.loc.clone(),
                format!("no version of {kind_name}.{group} is served"),
            )
            .with_hint("remove `+kubebuilder:unservedversion` from at least one version"),
        );
        return None;
    }
    // The apiserver refuses CRDs in Kubernetes-owned groups without an approval note.
    if crate::kubernetes::is_protected_group(group) && !annotations.contains_key(API_APPROVED) {
        diags.push(
            Diagnostic::new(first.loc.clone(), format!("group `{group}` is protected: the apiserver rejects {kind_name} without the `{API_APPROVED}` annotation"))
                .with_hint(format!("add `+kubebuilder:metadata:annotations=\"{API_APPROVED}=<PR URL, or unapproved, experimental-only>\"`, or use a group you own")),
        );
        return None;
    }
    // Only a hub on the storage version of a kind with several versions (resolve reports
    // the marker anywhere else).
    let hub = versions
        .iter()
        .find(|(_, k)| k.storage && versions.len() > 1)
        .and_then(|(_, k)| k.conversion_hub.as_ref());
    let conversion = match hub {
        Some(at) => Some(conversion_of(options, at, kind_name, group, diags)?),
        None => None,
    };
    if conversion.is_some()
        && let CaSource::CertManager(certificate) = &options.ca
    {
        annotations.insert(INJECT_CA_FROM.to_owned(), certificate.clone());
    }
    let name = format!("{}.{group}", first.plural);
    let crd = CustomResourceDefinition {
        metadata: ObjectMeta {
            name: Some(name),
            annotations: (!annotations.is_empty()).then_some(annotations),
            labels: (!labels.is_empty()).then_some(labels),
        },
        spec: CustomResourceDefinitionSpec {
            group: group.to_owned(),
            names: CustomResourceDefinitionNames {
                kind: kind_name.to_owned(),
                // kube-derive's `crd()` leaves it to the apiserver's default (the same name).
                list_kind: (!matches!(first.dialect, SchemaDialect::KubeDerive { .. }))
                    .then(|| format!("{kind_name}List")),
                plural: first.plural.clone(),
                singular: Some(first.singular.clone()),
                short_names: (!short_names.is_empty()).then_some(short_names),
                categories: (!categories.is_empty()).then_some(categories),
            },
            scope: first.scope.as_str().to_owned(),
            versions: crd_versions,
            conversion,
        },
    };
    check_size(&crd, first, diags);
    Some(Crd {
        file_name: format!("{group}_{}.yaml", first.plural),
        crd,
    })
}

/// A CRD past 2/3 of etcd's default request limit is said to near it: the object stored
/// is larger than the one applied (managedFields, status).
const NEAR_ETCD_LIMIT: usize = ETCD_REQUEST_LIMIT / 3 * 2;

/// A warning, at the kind, when the CRD is too big for client-side `kubectl apply` (its
/// JSON in the last-applied annotation passes [`ANNOTATIONS_LIMIT`]) or nears what a
/// cluster stores ([`ETCD_REQUEST_LIMIT`], [`APISERVER_REQUEST_LIMIT`]), with the limits and
/// what to do. Checked against kube-apiserver v1.37 and its etcd (tests/tests/crds.rs).
fn check_size(crd: &CustomResourceDefinition, kind: &Kind, diags: &mut Diagnostics) {
    /// Counts what is written: the size is all this check needs, and growing a buffer
    /// for the whole CRD's JSON cost a third of the serialization.
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    if serde_json::to_writer(&mut count, crd).is_err() {
        return;
    }
    let name = crd.metadata.name.as_deref().unwrap_or_default();
    let size = count.0;
    // What client-side apply would store: the annotations the CRD has, and the JSON under
    // the last-applied key.
    let annotations = LAST_APPLIED.len()
        + size
        + crd
            .metadata
            .annotations
            .iter()
            .flatten()
            .map(|(k, v)| k.len() + v.len())
            .sum::<usize>();
    let cut = "cut descriptions with `max-description-len = N` in the crate's metadata or `--max-description-len N` (controller-gen's `crd:maxDescLen`; 0 writes none)";
    let (message, hint) = if size > NEAR_ETCD_LIMIT {
        (
            format!(
                "CRD {name} is {size} bytes as JSON, near or past what a cluster stores: etcd refuses objects over its `--max-request-bytes`, {ETCD_REQUEST_LIMIT} bytes by default (\"etcdserver: request is too large\"; the object stored also carries managedFields and status), and kube-apiserver refuses request bodies over {APISERVER_REQUEST_LIMIT} bytes; client-side `kubectl apply` fails long before, at {ANNOTATIONS_LIMIT} bytes of annotations"
            ),
            format!(
                "{cut}; every version carries a copy of its schema, so serving fewer versions helps too; apply with `kubectl apply --server-side`"
            ),
        )
    } else if annotations > ANNOTATIONS_LIMIT {
        (
            format!(
                "CRD {name} is {size} bytes as JSON, too big for client-side `kubectl apply`: it keeps the JSON in the `{LAST_APPLIED}` annotation, and the API server refuses more than {ANNOTATIONS_LIMIT} bytes of annotations (\"metadata.annotations: Too long\")"
            ),
            format!("apply it with `kubectl apply --server-side` (or `kubectl create`), or {cut}"),
        )
    } else {
        return;
    };
    diags.push(Diagnostic::warning(kind.loc.clone(), message).with_hint(hint));
}

/// The `Webhook` conversion of a kind whose hub opted in, with the configured client.
fn conversion_of(
    options: &SchemaOptions,
    at: &crate::diagnostics::Location,
    kind_name: &str,
    group: &str,
    diags: &mut Diagnostics,
) -> Option<CustomResourceConversion> {
    let Some(webhook) = &options.conversion_webhook else {
        diags.push(
            Diagnostic::new(at.clone(), format!("{kind_name}.{group} opts into conversion, but no conversion webhook is configured for its CRD"))
                .with_marker(&Name::Conversion.with_value("hub"))
                .with_hint("set `conversion-webhook = { service = \"<namespace>/<name>\" }` (or `url = \"https://...\"`) in [package.metadata.kube-codegen], or --conversion-service / --conversion-url"),
        );
        return None;
    };
    let (url, service) = match webhook {
        ConversionWebhook::Url(u) => (Some(u.clone()), None),
        ConversionWebhook::Service {
            namespace,
            name,
            path,
            port,
        } => (
            None,
            Some(ServiceReference {
                namespace: namespace.clone(),
                name: name.clone(),
                path: Some(path.clone().unwrap_or_else(|| "/convert".to_owned())),
                port: *port,
            }),
        ),
    };
    Some(CustomResourceConversion {
        strategy: "Webhook".to_owned(),
        webhook: Some(WebhookConversion {
            client_config: Some(WebhookClientConfig {
                url,
                service,
                ca_bundle: match &options.ca {
                    CaSource::Bundle(pem) => Some(base64(pem)),
                    CaSource::None | CaSource::CertManager(_) => None,
                },
            }),
            conversion_review_versions: vec!["v1".to_owned()],
        }),
    })
}

/// Standard base64 with padding, as `caBundle` (a `[]byte`) is written.
pub(crate) fn base64(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(A[(n >> (18 - 6 * i)) as usize & 63] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

fn version_of(
    p: &Package,
    k: &Kind,
    schema: JSONSchemaProps,
    storage: bool,
) -> CustomResourceDefinitionVersion {
    // controller-gen's printer column marker makes the version's subresources an empty
    // object when it has none, so a kind with columns gets `subresources: {}` too;
    // kube-derive writes subresources only with the status subresource.
    let columns_open_subresources =
        !k.print_columns.is_empty() && matches!(k.dialect, SchemaDialect::ControllerGen);
    let subresources = (k.status_subresource || k.scale.is_some() || columns_open_subresources)
        .then(|| CustomResourceSubresources {
            // An empty object, not null: `status: {}` switches the subresource on.
            status: k
                .status_subresource
                .then(|| CustomResourceSubresourceStatus(serde_json::json!({}))),
            scale: k.scale.as_ref().map(|s| CustomResourceSubresourceScale {
                spec_replicas_path: s.spec_replicas_path.clone(),
                status_replicas_path: s.status_replicas_path.clone(),
                label_selector_path: s.label_selector_path.clone(),
            }),
        });
    let columns: Vec<_> = k
        .print_columns
        .iter()
        .map(|c| CustomResourceColumnDefinition {
            name: c.name.clone(),
            type_: c.type_.clone(),
            json_path: c.json_path.clone(),
            description: c.description.clone(),
            format: c.format.clone(),
            // `priority` is `omitempty` in Go: 0, the default, is not written.
            priority: c.priority.filter(|p| *p != 0),
        })
        .collect();
    let selectable: Vec<_> = k
        .selectable_fields
        .iter()
        .map(|(p, _)| SelectableField {
            json_path: p.clone(),
        })
        .collect();
    CustomResourceDefinitionVersion {
        name: p.version.clone(),
        served: k.served,
        storage,
        deprecated: matches!(k.deprecation, Deprecation::Deprecated { .. }).then_some(true),
        deprecation_warning: match &k.deprecation {
            Deprecation::Deprecated { warning } => warning.clone(),
            Deprecation::Current => None,
        },
        schema: Some(CustomResourceValidation {
            open_api_v3_schema: Some(schema),
        }),
        subresources,
        additional_printer_columns: (!columns.is_empty()).then_some(columns),
        selectable_fields: (!selectable.is_empty()).then_some(selectable),
    }
}

/// Printer columns, scale paths and selectable fields must point at real fields.
/// The API server type checks and cost-estimates every CEL rule of the final schema when
/// it takes the CRD ([`check_schema`]); what it would refuse is an error here, at the XValidation
/// marker that wrote the expression, else at the kind.
fn check_cel(api: &Api, k: &Kind, schema: &JSONSchemaProps, diags: &mut Diagnostics) {
    // Every refusal is of a rule (its compile, its cost, or the total of the rules' costs):
    // a schema without one has nothing to check, and converting it to JSON and declaring
    // its CEL types was about 4% of a CRD run's instructions.
    if !schema.any_node(|s| s.x_kubernetes_validations.is_some()) {
        return;
    }
    let json = serde_json::to_value(schema).expect("schemas serialize");
    for p in check_schema(&json) {
        let message = format!("{} (in {})", p.message, k.name);
        let d = match (
            &p.expr,
            p.expr
                .as_deref()
                .and_then(|e| find_xvalidation_marker(api, e, Some(&p.at))),
        ) {
            (_, Some(m)) => m.error(message).with_hint(p.hint),
            (None, None) => Diagnostic::new(k.loc.clone(), message).with_hint(p.hint),
            // A rule no marker of this crate wrote: an embedded Kubernetes type's own (its
            // `+k8s:immutable` rules). Nothing here can change it, and the CRD is kept as
            // controller-gen would write it; said loudly, as the server refuses it.
            (Some(_), None) => Diagnostic::warning(k.loc.clone(), message).with_hint(format!(
                "the rule comes with an embedded Kubernetes type's schema, not from a marker here; the API server refuses this CRD until it passes: {}",
                p.hint
            )),
        };
        diags.push(d);
    }
}

/// The API server refuses a CRD whose defaults do not validate against their own schema
/// node (`ValidateDefaults`: pruning, the OpenAPI value validations, the CEL rules of the
/// node and below with `self` the default); it checks them on the final schema, so do we,
/// with its walk (kube-codegen-validation, what the runtime validates objects with). Each
/// refusal is an error at the default marker that wrote the value, else at the kind.
fn check_defaults(
    api: &Api,
    k: &Kind,
    schema: &JSONSchemaProps,
    prefix: &str,
    diags: &mut Diagnostics,
) {
    // Compiling the schema is most of a CRD's build time; with no default in it there is
    // nothing to judge.
    if !schema.any_node(|s| s.default.is_some()) {
        return;
    }
    let json = serde_json::to_string(schema).expect("schemas serialize");
    // A schema the walk cannot compile (a bad pattern or rule) is reported where it is
    // written, by the checks that own it; its defaults cannot be judged.
    let Ok(compiled) = kube_codegen_validation::validation::Schema::from_json(&json) else {
        return;
    };
    // A rule naming a time zone cannot be judged without the zone database, which the
    // generator leaves out: no verdict rather than a refusal the server would not make.
    let judged = |e: &kube_codegen_validation::validation::DefaultError| {
        !e.error
            .detail
            .contains(kube_codegen_validation::cel::NO_ZONE_DATABASE)
    };
    for e in compiled
        .validate_defaults(prefix)
        .into_iter()
        .filter(judged)
    {
        let message = format!(
            "the default of {} does not validate against its own schema, so the API server refuses the CRD: {}",
            k.name, e.error
        );
        let hint = "change the default to a value the field's validation markers accept, or the markers to accept the default";
        let d = match find_default_marker(api, &e.node) {
            Some(m) => m.error(message),
            None => Diagnostic::new(k.loc.clone(), message),
        };
        diags.push(d.with_hint(hint));
    }
}

/// The `+kubebuilder:default`/`+default` marker that wrote the default of the schema node
/// at `node`: on a field named as the node's last property. A default on list items (a
/// type's own marker) is not traced: the caller reports it at the kind.
fn find_default_marker<'a>(
    api: &'a Api,
    node: &[kube_codegen_validation::validation::SchemaStep],
) -> Option<&'a crate::markers::Marker> {
    use kube_codegen_validation::validation::SchemaStep;
    let Some(SchemaStep::Property(field)) = node.last() else {
        return None;
    };
    api.types.values().find_map(|d| match &d.shape {
        crate::model::Shape::Struct(fields) => fields
            .iter()
            .filter(|f| &f.json_name == field)
            .find_map(|f| {
                // `+kubebuilder:default` wins over `+default` when both are given
                // (schema/marker_keywords.rs), so it is the one at fault.
                f.markers
                    .iter()
                    .filter(|m| m.name == Name::KubebuilderDefault || m.name == Name::Default)
                    .max_by_key(|m| m.name == Name::KubebuilderDefault)
            }),
        _ => None,
    })
}

/// The XValidation marker whose `rule` or `messageExpression` is `expr`. The same text can
/// sit on several fields (`self == oldSelf`): with `at`, the object path of the rule's node,
/// the marker on the field of that name wins.
pub(crate) fn find_xvalidation_marker<'a>(
    api: &'a Api,
    expr: &str,
    at: Option<&str>,
) -> Option<&'a crate::markers::Marker> {
    let candidates = api.types.values().flat_map(|d| {
        let mut ms: Vec<(Option<&str>, &crate::markers::Marker)> =
            d.markers.iter().map(|m| (None, m)).collect();
        if let crate::model::Shape::Struct(fields) = &d.shape {
            ms.extend(fields.iter().flat_map(|f| {
                f.markers
                    .iter()
                    .map(move |m| (Some(f.json_name.as_str()), m))
            }));
        }
        ms
    });
    // `+k8s:immutable` writes `self == oldSelf` on its field and, when the field is
    // optional, `!has(oldSelf.f) || has(self.f)` on the parent.
    let immutable_field = expr
        .strip_prefix("!has(oldSelf.")
        .and_then(|r| r.split_once(')'))
        .map(|(f, _)| f);
    let mut candidates = candidates.filter(|(f, m)| {
        (m.name == Name::XValidation
            && (m.arg("rule") == Some(expr) || m.arg("messageExpression") == Some(expr)))
            || (m.name == Name::K8sImmutable
                && (expr == "self == oldSelf"
                    || (immutable_field.is_some() && *f == immutable_field)))
    });
    let first = candidates.next()?;
    let field = at
        .and_then(|a| a.rsplit('.').next())
        .filter(|f| !f.ends_with(']'));
    if first.0.is_none() || first.0 == field {
        return Some(first.1);
    }
    Some(
        std::iter::once(first)
            .chain(candidates)
            .find(|(f, _)| f.is_some() && *f == field)
            .unwrap_or(first)
            .1,
    )
}

fn check_paths(k: &Kind, schema: &JSONSchemaProps, diags: &mut Diagnostics) {
    // The API server (and controller-gen) take a column to a field the schema lacks, and
    // kubectl shows it empty: said, not refused.
    for c in &k.print_columns {
        if let Err(e) = lookup_path(schema, &c.json_path) {
            diags.push(
                Diagnostic::warning(
                    c.loc.clone(),
                    format!(
                        "printcolumn `{}` JSONPath `{}`: {e}, so kubectl shows the column empty",
                        c.name, c.json_path
                    ),
                )
                .with_hint("point JSONPath at a field of the kind"),
            );
        }
    }
    for (path, loc) in &k.selectable_fields {
        match lookup_path(schema, path) {
            Err(e) => diags.push(Diagnostic::new(
                loc.clone(),
                format!("selectable field `{path}`: {e}"),
            )),
            Ok(None) => diags.push(
                Diagnostic::new(
                    loc.clone(),
                    format!("selectable field `{path}` must not be under metadata"),
                )
                .with_hint("metadata.name and metadata.namespace are always selectable"),
            ),
            Ok(Some(node))
                if !matches!(
                    node.type_.as_deref(),
                    Some("string" | "integer" | "boolean")
                ) =>
            {
                diags.push(Diagnostic::new(
                    loc.clone(),
                    format!("selectable field `{path}` must be a string, integer or boolean"),
                ));
            }
            Ok(Some(_)) => {}
        }
    }
    if let Some(scale) = &k.scale {
        let at = &scale.loc;
        for (what, path, prefix, ty) in [
            (
                "specpath",
                Some(&scale.spec_replicas_path),
                ".spec.",
                "integer",
            ),
            (
                "statuspath",
                Some(&scale.status_replicas_path),
                ".status.",
                "integer",
            ),
            (
                "selectorpath",
                scale.label_selector_path.as_ref(),
                ".",
                "string",
            ),
        ] {
            let Some(path) = path else { continue };
            if !path.starts_with(prefix) {
                diags.push(Diagnostic::new(
                    at.clone(),
                    format!("scale {what} `{path}` must start with `{prefix}`"),
                ));
                continue;
            }
            match lookup_path(schema, path) {
                Err(e) => diags.push(Diagnostic::new(
                    at.clone(),
                    format!("scale {what} `{path}`: {e}"),
                )),
                Ok(Some(node)) if node.type_.as_deref() != Some(ty) => diags.push(Diagnostic::new(
                    at.clone(),
                    format!("scale {what} `{path}` must point at a field of type {ty}"),
                )),
                Ok(_) => {}
            }
        }
    }
}

#[cfg(test)]
mod base64_tests {
    #[test]
    fn base64_pads_like_the_standard() {
        for (input, want) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("-----BEGIN", "LS0tLS1CRUdJTg=="),
        ] {
            assert_eq!(super::base64(input.as_bytes()), want);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_sort_by_kubernetes_priority() {
        let mut v = vec!["v1alpha1", "v2", "v1beta1", "v1", "v1beta2"];
        v.sort_by_key(|s| std::cmp::Reverse(version_priority(s)));
        assert_eq!(v, vec!["v2", "v1", "v1beta2", "v1beta1", "v1alpha1"]);
    }

    proptest::proptest! {
        /// The hand-written parse agrees with the pattern it replaces.
        #[test]
        fn version_priority_as_its_pattern(s in "v?[0-9]{0,3}(alpha|beta|gamma)?[0-9a]{0,3}") {
            let re = regex::Regex::new(r"^v([0-9]+)(?:(alpha|beta)([0-9]+))?$").unwrap();
            let want = match re.captures(&s) {
                Some(c) => {
                    let major: u32 = c[1].parse().unwrap_or(0);
                    let (level, minor) = match c.get(2).map(|m| m.as_str()) {
                        None => (3, 0),
                        Some("beta") => (2, c[3].parse().unwrap_or(0)),
                        _ => (1, c[3].parse().unwrap_or(0)),
                    };
                    (level, major, minor, String::new())
                }
                None => (0, 0, 0, s.clone()),
            };
            proptest::prop_assert_eq!(version_priority(&s), want);
        }
    }
}
