//! `fake.rs`: a `Clientset` over the runtime's in-memory API server, with this crate's
//! kinds registered (scope and status subresource), for controller unit tests. Its items
//! sit in the runtime's `cfg_fake!`, so they follow the runtime's `fake` feature.

use proc_macro2::TokenStream;
use quote::quote;

use crate::input::Package;

/// What `new_clientset()` turns on besides the kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admission {
    /// Nothing: the fake stores what it is sent (no `validation` module was generated).
    None,
    /// The generated `validation` module's defaulting and validation of the kinds that
    /// opted in (`super::validation::register_fake`).
    Validation,
}

/// The `fake.rs` file: `register_kinds(server)` and `new_clientset()`, with every kind of `packages`
/// registered, and the admission `admission` says.
#[must_use]
pub fn fake(packages: &[Package], admission: Admission) -> TokenStream {
    let registrations = packages.iter().flat_map(|pkg| {
        pkg.kinds.iter().map(move |k| {
            let (group, version, kind, plural) = (&pkg.group, &pkg.version, &k.name, &k.plural);
            let (namespaced, status) = (k.namespaced, k.status_subresource);
            quote! {
                server.register(::kube_codegen_runtime::fake::FakeResource {
                    group: #group.into(),
                    version: #version.into(),
                    kind: #kind.into(),
                    plural: #plural.into(),
                    namespaced: #namespaced,
                    status_subresource: #status,
                });
            }
        })
    });
    let (admission_call, admission_doc) = match admission {
        Admission::None => (quote! {}, quote! {}),
        Admission::Validation => (
            quote! { super::validation::register_fake(&server); },
            quote! {
                ///
                /// The server defaults and validates the kinds marked `+kube-codegen:validation`
                /// as the API server does (`super::validation`); `server.set_admission(false)`
                /// turns that off.
            },
        ),
    };
    quote! {
        //! A fake `Clientset` for unit tests: the real typed clients over an in-memory API
        //! server (`kube_codegen_runtime::fake::FakeApiServer`) that knows this crate's kinds.
        //! Use the server handle to seed objects, read the action log and inject errors.
        //!
        //! Present when `kube-codegen-runtime`'s `fake` feature is on (enable it in
        //! `[dev-dependencies]`); empty otherwise, so binaries do not compile the fake server.

        ::kube_codegen_runtime::cfg_fake! {
        /// Register every kind of this crate with a fake API server.
        #[inline]
        pub fn register_kinds(server: &::kube_codegen_runtime::fake::FakeApiServer) {
            #(#registrations)*
        }

        /// A `Clientset` over a fresh in-memory API server, and the server's handle.
        #admission_doc
        #[inline]
        pub fn new_clientset() -> (super::clientset::Clientset, ::kube_codegen_runtime::fake::FakeApiServer) {
            let server = ::kube_codegen_runtime::fake::FakeApiServer::new();
            register_kinds(&server);
            #admission_call
            (super::clientset::Clientset::new(server.client()), server)
        }
        }
    }
}
