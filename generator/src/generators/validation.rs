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
//! Which kinds opted in, their schemas, and the checks (a CEL rule the runtime's evaluator
//! cannot run is refused at the marker that wrote it) are resolve's: [`crate::model::Api::validation`].

use quote::quote;

use super::{Context, Generator, GeneratorName, Output, RenderRust};
use crate::markers::{Args, MarkerSpec, Name, PT};
use crate::model::Api;
use crate::resolve::Check;

pub(super) const GENERATOR: Generator = Generator {
    name: GeneratorName::Validation,
    id: "validation",
    about: "Defaulting and validation per kind as the API server does them (`set_defaults()`, `validate()`, `validate_update()`), with CEL rules evaluated, for kinds marked `+kube-codegen:validation`, every kind of a group/version whose module carries it, or all with `--validate-all-kinds` (defaulter-gen, validation-gen).",
    requires: &[GeneratorName::Crd],
    markers: MARKERS,
    checks: &[Check::Validation],
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

fn prepare(cx: &Context) -> RenderRust {
    let mut impls = vec![];
    let mut registrations = vec![];
    for p in cx.api.packages.values() {
        for k in &p.kinds {
            let Some(text) = cx.api.validation.get(&k.type_key) else {
                continue;
            };
            let ty: syn::Type =
                syn::parse_str(&super::rust::type_path(cx.api, cx.rust, &k.type_key))
                    .expect("type paths parse");
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
