//! `listers.rs`: typed listers per kind over an informer's cache (client-go's listers):
//! `FooLister::list(selector)`, `foos(namespace).get(name)` / `.list(selector)`, or `get`
//! and `list` for cluster-scoped kinds.

use proc_macro2::TokenStream;
use quote::quote;

use crate::input::Package;
use crate::{ident, path};

/// The `listers.rs` file: a lister (and a namespace lister, for namespaced kinds) per
/// kind of `packages`.
#[must_use]
pub fn listers(packages: &[Package]) -> TokenStream {
    let modules = packages.iter().map(|pkg| {
        let module = ident(&pkg.accessor);
        let doc = format!(" Listers for {}/{}.", pkg.group, pkg.version);
        let kinds = pkg.kinds.iter().map(|k| {
            let ty = path(&k.type_path);
            let lister = ident(&format!("{}Lister", k.name));
            let ns_lister = ident(&format!("{}NamespaceLister", k.name));
            let plural = ident(&k.plural);
            let doc = format!(" Reads {} objects from an informer's cache; never calls the API server.", k.name);
            let scoped = if k.namespaced {
                let ns_doc = format!(" {} in one namespace.", k.name);
                quote! {
                    impl #lister {
                        #[doc = #ns_doc]
                        #[inline]
                        pub fn #plural(&self, namespace: &str) -> #ns_lister {
                            #ns_lister { inner: self.inner.namespaced(namespace) }
                        }
                    }

                    #[doc = #ns_doc]
                    pub struct #ns_lister {
                        inner: ::kube_codegen_runtime::lister::NamespaceLister<#ty>,
                    }

                    impl #ns_lister {
                        /// The object with this name, if cached.
                        #[inline]
                        pub fn get(&self, name: &str) -> Option<::std::sync::Arc<#ty>> {
                            self.inner.get(name)
                        }

                        /// Cached objects of this namespace whose labels match.
                        #[inline]
                        pub fn list(&self, selector: &::kube::core::Selector) -> Vec<::std::sync::Arc<#ty>> {
                            self.inner.list(selector)
                        }
                    }
                }
            } else {
                quote! {
                    impl #lister {
                        /// The object with this name, if cached.
                        #[inline]
                        pub fn get(&self, name: &str) -> Option<::std::sync::Arc<#ty>> {
                            self.inner.get_by_name(name)
                        }
                    }
                }
            };
            quote! {
                #[doc = #doc]
                #[derive(Clone)]
                pub struct #lister {
                    inner: ::kube_codegen_runtime::lister::Lister<#ty>,
                }

                impl #lister {
                    /// A typed lister over a runtime lister (e.g. `informer.lister()`).
                    #[inline]
                    pub fn new(inner: ::kube_codegen_runtime::lister::Lister<#ty>) -> Self {
                        Self { inner }
                    }

                    /// Cached objects whose labels match, in every namespace.
                    #[inline]
                    pub fn list(&self, selector: &::kube::core::Selector) -> Vec<::std::sync::Arc<#ty>> {
                        self.inner.list(selector)
                    }

                    /// Cached objects whose index `index` has `value`.
                    #[inline]
                    pub fn by_index(&self, index: &str, value: &str) -> Vec<::std::sync::Arc<#ty>> {
                        self.inner.by_index(index, value)
                    }
                }

                #scoped
            }
        });
        quote! {
            #[doc = #doc]
            pub mod #module {
                #(#kinds)*
            }
        }
    });
    quote! {
        //! Typed listers over informer caches.

        #(#modules)*
    }
}
