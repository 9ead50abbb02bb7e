//! The `validation` generator: defaulting and validation per kind, as the API server does
//! them from the CRD, for kinds that opted in: marked `+kube-codegen:validation`, in a
//! group/version module whose inner doc comment carries it (every kind of the package), or
//! all kinds with the global switch (`Config::validate_all_kinds`, `--validate-all-kinds`).
//!
//! For each such kind it writes `impl kube_codegen_runtime::validation::Validate`, whose
//! `schema()` is the kind version's CRD schema (the one the `crd` generator writes, without
//! descriptions), compiled once; the trait's `set_defaults()`, `validate()` and
//! `validate_update(&old)` run the runtime's walk over it (defaults, the OpenAPI value
//! validations, list-type uniqueness and CEL rules on the runtime's evaluator), the code
//! the fake API server runs too. The schema is data rather than one Rust function per
//! keyword so that generated code, the fake and a differential test against the API server
//! share one implementation of the server's semantics.
//!
//! `prepare` refuses, at the marker that wrote it, a CEL rule the runtime's evaluator
//! cannot run (a function it lacks) or that does not compile: generated validation would
//! otherwise disagree with the cluster.

use std::collections::BTreeSet;

use quote::quote;
use serde_json::Value;

use super::{Context, Generator, GeneratorName, Output, RenderRust};
use crate::diagnostics::{Diagnostic, Diagnostics};
use crate::markers::{Args, MarkerSpec, Name, PT};
use crate::model::{Api, Kind, Package};
use crate::schema::SchemaBuilder;

pub(super) const GENERATOR: Generator = Generator {
    name: GeneratorName::Validation,
    id: "validation",
    about: "Defaulting and validation per kind as the API server does them (`set_defaults()`, `validate()`, `validate_update()`), with CEL rules evaluated, for kinds marked `+kube-codegen:validation`, every kind of a group/version whose module carries it, or all with `--validate-all-kinds` (defaulter-gen, validation-gen).",
    requires: &[GeneratorName::Crd],
    markers: MARKERS,
    output: Output::Rust {
        module: "validation",
        doc: " Defaulting and validation of each kind marked `+kube-codegen:validation`.",
        cost: 1,
        prepare,
    },
};

/// The opt-in marker, on a kind or on a group/version module (every kind of it).
const MARKER: Name = Name::Validation;

pub(super) const MARKERS: &[MarkerSpec] = &[MarkerSpec {
    name: MARKER,
    args: Args::Flag,
    levels: PT,
}];

/// The runtime contract the module's code needs (`kube_codegen_runtime::validation`):
/// stated in the module itself, so crates without it keep the contract they had.
const CONTRACT: u32 = 4;

/// Whether any kind opted in (or a type carries a misplaced marker that `prepare`
/// reports): without one, the module is not written at all.
pub(super) fn wanted(api: &Api) -> bool {
    api.types
        .values()
        .any(|d| d.markers.iter().any(|m| m.name == MARKER))
        || api
            .packages
            .values()
            .any(|p| p.validation.is_some() && p.kinds.iter().any(|k| !k.skip))
}

/// A kind opted in by its own marker, its package's, or the global switch.
fn opted_in(api: &Api, p: &Package, k: &Kind) -> bool {
    !k.skip
        && (p.validation.is_some()
            || api
                .types
                .get(&k.type_key)
                .is_some_and(|d| d.markers.iter().any(|m| m.name == MARKER)))
}

fn prepare(cx: &Context, diags: &mut Diagnostics) -> RenderRust {
    check_placement(cx.api, diags);
    let mut impls = vec![];
    let mut registrations = vec![];
    for p in cx.api.packages.values() {
        for k in p.kinds.iter().filter(|k| opted_in(cx.api, p, k)) {
            // Problems building the schema are the `crd` generator's to report (it runs
            // whenever this one does).
            let mut builder = SchemaBuilder::new(cx.api, p, cx.schema);
            let Ok(schema) = builder.kind_schema(k) else {
                continue;
            };
            let mut json = serde_json::to_value(&schema).expect("schemas serialize");
            strip_docs(&mut json);
            check_rules(cx.api, k, &json, diags);
            let ty: syn::Type =
                syn::parse_str(&super::rust::type_path(cx.api, cx.rust, &k.type_key))
                    .expect("type paths parse");
            let text = serde_json::to_string(&json).expect("JSON serializes");
            let (group, version, plural) = (&p.group, &p.version, &k.plural);
            registrations.push(quote! {
                server.register_admission(
                    #group,
                    #version,
                    #plural,
                    ::kube_codegen_runtime::validation::admission::<#ty>(),
                );
            });
            let status = k.status_subresource;
            let scale = match &k.scale {
                Some(sc) => {
                    let path = &sc.spec_replicas_path;
                    quote! { Some(#path) }
                }
                None => quote! { None },
            };
            impls.push(quote! {
                impl ::kube_codegen_runtime::validation::Validate for #ty {
                    const STATUS_SUBRESOURCE: bool = #status;
                    const SCALE_SPEC_REPLICAS_PATH: Option<&'static str> = #scale;
                    fn schema() -> &'static ::kube_codegen_runtime::validation::Schema {
                        static SCHEMA: ::std::sync::OnceLock<::kube_codegen_runtime::validation::Schema> =
                            ::std::sync::OnceLock::new();
                        SCHEMA.get_or_init(|| {
                            ::kube_codegen_runtime::validation::Schema::from_json(#text)
                                .expect("the schema's rules were checked when this code was generated")
                        })
                    }
                }
            });
        }
    }
    let contract = proc_macro2::Literal::u32_unsuffixed(CONTRACT);
    let code = quote! {
        //! Defaulting and validation of each kind marked `+kube-codegen:validation`, as the
        //! API server does them from the kind's CRD schema: `set_defaults()`, `validate()`
        //! and `validate_update(&old)` of `kube_codegen_runtime::validation::Validate`.
        //! Needs kube-codegen-runtime's `validation` feature.

        /// This module names `kube_codegen_runtime::validation`, which runtime contract 4
        /// brought.
        const _: () = ::kube_codegen_runtime::contract::check(#contract);

        #(#impls)*

        ::kube_codegen_runtime::cfg_fake! {
            /// Makes a fake API server default and validate the writes of these kinds as
            /// the API server does (call it after `fake::new_clientset()`; turn it off
            /// again with `server.set_admission(false)`).
            pub fn register_fake(server: &::kube_codegen_runtime::fake::FakeApiServer) {
                #(#registrations)*
            }
        }
    }
    .to_string();
    Box::new(move || code.parse().expect("generated validation code parses"))
}

/// The marker means something only on a kind: anywhere else it would be a silent no-op.
fn check_placement(api: &Api, diags: &mut Diagnostics) {
    let kinds: BTreeSet<&str> = api
        .packages
        .values()
        .flat_map(|p| &p.kinds)
        .map(|k| k.type_key.as_str())
        .collect();
    for (key, d) in &api.types {
        if kinds.contains(key.as_str()) {
            continue;
        }
        for m in d.markers.iter().filter(|m| m.name == MARKER) {
            diags.push(
                m.error(format!("`+{MARKER}` on `{}`, which is not a kind", d.name))
                    .with_hint("put it on the kind (the struct with `+genclient` or `+kubebuilder:object:root=true`), or in the group/version module's inner doc comment (`//! +kube-codegen:validation`) for every kind of it; the whole object, nested types included, is then validated"),
            );
        }
    }
}

/// Descriptions and examples do not validate anything: left out of the embedded schema.
fn strip_docs(v: &mut Value) {
    match v {
        Value::Object(m) => {
            for k in ["description", "example", "title", "externalDocs"] {
                m.remove(k);
            }
            for (k, x) in m.iter_mut() {
                // `properties` maps names to schemas: a property may be called `description`.
                if k == "properties" {
                    if let Value::Object(props) = x {
                        props.values_mut().for_each(strip_docs);
                    }
                } else if k != "default" && k != "enum" {
                    strip_docs(x);
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(strip_docs),
        _ => {}
    }
}

/// Every CEL expression of the schema must compile and call only functions the runtime's
/// evaluator has; each offender is reported at the marker that wrote it (found by its
/// text), else at the kind.
fn check_rules(api: &Api, k: &Kind, schema: &Value, diags: &mut Diagnostics) {
    let mut exprs = BTreeSet::new();
    collect_exprs(schema, &mut exprs);
    for expr in exprs {
        // The evaluator's own list: the runtime re-exports kube-codegen-validation's `cel`.
        let problem = match kube_codegen_validation::cel::unsupported_functions(&expr) {
            // Syntax errors are reported by the `crd` generator at the marker.
            None => continue,
            Some(missing) if missing.is_empty() => continue,
            Some(missing) => missing
                .iter()
                .map(|f| format!("`{f}`"))
                .collect::<Vec<_>>()
                .join(", "),
        };
        let message = format!(
            "the CEL rule `{expr}` of {} calls {problem}, which kube-codegen's CEL evaluator does not implement",
            k.name
        );
        let d = match super::crd::find_xvalidation_marker(api, &expr, None) {
            Some(m) => m.error(message),
            None => Diagnostic::new(k.loc.clone(), message),
        };
        diags.push(d.with_hint(
            "generated validation would disagree with the API server: rewrite the rule with supported functions (README, \"Defaulting and validation\"), or do not opt the kind into validation (`+kube-codegen:validation` on it or its group/version, `--validate-all-kinds`)",
        ));
    }
}

fn collect_exprs(v: &Value, out: &mut BTreeSet<String>) {
    match v {
        Value::Object(m) => {
            if let Some(Value::Array(rules)) = m.get("x-kubernetes-validations") {
                for r in rules {
                    for key in ["rule", "messageExpression"] {
                        if let Some(Value::String(s)) = r.get(key) {
                            out.insert(s.clone());
                        }
                    }
                }
            }
            for (k, x) in m {
                if k != "default" && k != "enum" {
                    collect_exprs(x, out);
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|x| collect_exprs(x, out)),
        _ => {}
    }
}
