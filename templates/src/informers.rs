//! `informers.rs`: one `SharedInformerFactory` type for the crate, with
//! `factory.<group>().<version>().<plural>()` accessors returning a kind's informer and
//! lister. It derefs to the runtime factory, so `start`, `wait_for_cache_sync`, `shutdown`
//! and `informer_for::<k8s_openapi::api::apps::v1::Deployment>()` work on it too.

use std::collections::BTreeMap;

use proc_macro2::TokenStream;
use quote::quote;

use crate::input::Package;
use crate::{ident, pascal_case, path};

/// The `informers.rs` file: the crate's `SharedInformerFactory` over `packages`.
#[must_use]
pub fn informers(packages: &[Package]) -> TokenStream {
    let mut groups: BTreeMap<&str, Vec<&Package>> = BTreeMap::new();
    for p in packages {
        groups.entry(p.group_accessor.as_str()).or_default().push(p);
    }
    let mut group_accessors = vec![];
    let mut group_modules = vec![];
    for (group, pkgs) in groups {
        let group_mod = ident(group);
        let group_ty = ident(&format!("{}Informers", pascal_case(group)));
        let group_doc = format!(" Informers of the {} group.", pkgs[0].group);
        group_accessors.push(quote! {
            #[doc = #group_doc]
            #[inline]
            pub fn #group_mod(&self) -> #group_mod::#group_ty {
                #group_mod::#group_ty { factory: self.inner.clone() }
            }
        });
        let mut version_accessors = vec![];
        let mut version_modules = vec![];
        for pkg in pkgs {
            let version_mod = ident(&pkg.version);
            let version_ty = ident(&format!("{}Informers", pascal_case(&pkg.version)));
            let listers_mod = ident(&pkg.accessor);
            let version_doc = format!(" Informers of {}/{}.", pkg.group, pkg.version);
            version_accessors.push(quote! {
                #[doc = #version_doc]
                #[inline]
                pub fn #version_mod(&self) -> #version_mod::#version_ty {
                    #version_mod::#version_ty { factory: self.factory.clone() }
                }
            });
            let mut kind_accessors = vec![];
            let mut kind_types = vec![];
            for k in &pkg.kinds {
                let ty = path(&k.type_path);
                let informer_ty = ident(&format!("{}Informer", k.name));
                let lister = ident(&format!("{}Lister", k.name));
                let plural = ident(&k.plural);
                let get = if k.namespaced {
                    quote!(informer_for)
                } else {
                    quote!(cluster_informer_for)
                };
                let doc = format!(
                    " The shared informer of {} (one watch for every caller).",
                    k.name
                );
                kind_accessors.push(quote! {
                    #[doc = #doc]
                    #[inline]
                    pub fn #plural(&self) -> #informer_ty {
                        #informer_ty { informer: self.factory.#get::<#ty>() }
                    }
                });
                let idoc = format!(" {}'s informer and lister.", k.name);
                kind_types.push(quote! {
                    #[doc = #idoc]
                    #[derive(Clone)]
                    pub struct #informer_ty {
                        informer: ::kube_codegen_runtime::informer::Informer<#ty>,
                    }

                    impl #informer_ty {
                        /// Add handlers, indexes, transforms; check `has_synced`.
                        #[inline]
                        pub fn informer(&self) -> &::kube_codegen_runtime::informer::Informer<#ty> {
                            &self.informer
                        }

                        /// A typed lister over the informer's cache.
                        #[inline]
                        pub fn lister(&self) -> crate_listers::#listers_mod::#lister {
                            crate_listers::#listers_mod::#lister::new(self.informer.lister())
                        }
                    }
                });
            }
            version_modules.push(quote! {
                #[doc = #version_doc]
                pub mod #version_mod {
                    use super::super::crate_listers;

                    #[doc = #version_doc]
                    #[derive(Clone)]
                    pub struct #version_ty {
                        pub(crate) factory: ::kube_codegen_runtime::informer::SharedInformerFactory,
                    }

                    impl #version_ty {
                        #(#kind_accessors)*
                    }

                    #(#kind_types)*
                }
            });
        }
        group_modules.push(quote! {
            #[doc = #group_doc]
            pub mod #group_mod {
                #[doc = #group_doc]
                #[derive(Clone)]
                pub struct #group_ty {
                    pub(crate) factory: ::kube_codegen_runtime::informer::SharedInformerFactory,
                }

                impl #group_ty {
                    #(#version_accessors)*
                }

                #(#version_modules)*
            }
        });
    }
    quote! {
        //! Shared informers for this crate's kinds (and any k8s-openapi kind).

        use super::listers as crate_listers;

        /// The crate's informer factory: typed accessors per group/version/kind, and,
        /// through `Deref`, the runtime factory (`start`, `wait_for_cache_sync`,
        /// `informer_for::<K>()` for built-in kinds, `for_resource`).
        #[derive(Clone)]
        pub struct SharedInformerFactory {
            inner: ::kube_codegen_runtime::informer::SharedInformerFactory,
        }

        impl SharedInformerFactory {
            /// A factory over every namespace with no resync.
            #[inline]
            pub fn new(client: ::kube::Client) -> Self {
                Self { inner: ::kube_codegen_runtime::informer::SharedInformerFactory::new(client) }
            }

            /// A factory with options (`with_namespace`, `with_tweak_list_options`,
            /// `with_transform`, `with_default_resync`).
            #[inline]
            pub fn from_runtime(inner: ::kube_codegen_runtime::informer::SharedInformerFactory) -> Self {
                Self { inner }
            }

            #(#group_accessors)*
        }

        impl ::std::ops::Deref for SharedInformerFactory {
            type Target = ::kube_codegen_runtime::informer::SharedInformerFactory;
            #[inline]
            fn deref(&self) -> &Self::Target {
                &self.inner
            }
        }

        #(#group_modules)*
    }
}
