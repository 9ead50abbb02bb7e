//! `register.rs`: what Go's register.go and zz_generated.register.go hold: the
//! `kube::Resource` impl, list type and constants of every kind, and per group/version the
//! registry of its kinds (the analogue of `AddToScheme`).

use proc_macro2::TokenStream;
use quote::quote;

use crate::input::{FieldStart, Kind, Package};
use crate::{ident, path};

fn kind_register(pkg: &Package, kind: &Kind) -> TokenStream {
    let ty = path(&kind.type_path);
    let (group, version, name, plural) = (&pkg.group, &pkg.version, &kind.name, &kind.plural);
    let api_version = if group.is_empty() {
        version.clone()
    } else {
        format!("{group}/{version}")
    };
    let singular = &kind.singular;
    let short_names = &kind.short_names;
    let scope = if kind.namespaced {
        quote!(::kube::core::NamespaceResourceScope)
    } else {
        quote!(::kube::core::ClusterResourceScope)
    };
    let list = ident(&format!("{}List", kind.name));
    let list_doc = format!("A list of {name} objects, as the apiserver returns it.");
    let constructor = kind
        .constructor
        .as_ref()
        .filter(|_| !kind.derived)
        .map(|c| {
            let spec_type = path(&c.spec);
            let spec = if c.spec_optional {
                quote!(spec: Some(spec),)
            } else {
                quote!(spec,)
            };
            let fields = c.fields.iter().map(|(name, start)| {
                let name = ident(name);
                match start {
                    FieldStart::None => quote!(#name: None,),
                    FieldStart::Default => quote!(#name: ::core::default::Default::default(),),
                }
            });
            let rest = c
                .rest_from_default
                .then(|| quote!(..::core::default::Default::default()));
            quote! {
                /// A new object with `apiVersion`, `kind` and `metadata.name` set, and
                /// every other field at its default (`None` for an `Option`).
                #[inline]
                pub fn new(name: &str, spec: #spec_type) -> Self {
                    Self {
                        types: Self::type_meta(),
                        metadata: ::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
                            name: Some(name.to_owned()),
                            ..Default::default()
                        },
                        #spec
                        #(#fields)*
                        #rest
                    }
                }
            }
        });
    let has_spec = kind
        .spec_type
        .as_deref()
        .filter(|_| !kind.derived)
        .map(|spec| {
            let spec = path(spec);
            quote! {
                impl ::kube::core::object::HasSpec for #ty {
                    type Spec = #spec;
                    #[inline]
                    fn spec(&self) -> &#spec {
                        &self.spec
                    }
                    #[inline]
                    fn spec_mut(&mut self) -> &mut #spec {
                        &mut self.spec
                    }
                }
            }
        });
    let has_status = kind
        .status_type
        .as_deref()
        .filter(|_| !kind.derived)
        .map(|status| {
            let status = path(status);
            quote! {
                impl ::kube::core::object::HasStatus for #ty {
                    type Status = #status;
                    #[inline]
                    fn status(&self) -> Option<&#status> {
                        self.status.as_ref()
                    }
                    #[inline]
                    fn status_mut(&mut self) -> &mut Option<#status> {
                        &mut self.status
                    }
                }
            }
        });
    let resource = (!kind.derived).then(|| quote! {
        impl ::kube::Resource for #ty {
            type DynamicType = ();
            type Scope = #scope;

            #[inline]
            fn kind(_: &()) -> ::std::borrow::Cow<'_, str> {
                ::std::borrow::Cow::Borrowed(#name)
            }
            #[inline]
            fn group(_: &()) -> ::std::borrow::Cow<'_, str> {
                ::std::borrow::Cow::Borrowed(#group)
            }
            #[inline]
            fn version(_: &()) -> ::std::borrow::Cow<'_, str> {
                ::std::borrow::Cow::Borrowed(#version)
            }
            #[inline]
            fn api_version(_: &()) -> ::std::borrow::Cow<'_, str> {
                ::std::borrow::Cow::Borrowed(#api_version)
            }
            #[inline]
            fn plural(_: &()) -> ::std::borrow::Cow<'_, str> {
                ::std::borrow::Cow::Borrowed(#plural)
            }
            #[inline]
            fn meta(&self) -> &::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
                &self.metadata
            }
            #[inline]
            fn meta_mut(&mut self) -> &mut ::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
                &mut self.metadata
            }
        }
    });
    quote! {
        #resource

        impl #ty {
            /// The API group.
            pub const GROUP: &'static str = #group;
            /// The API version.
            pub const VERSION: &'static str = #version;
            /// `group/version`, as in `apiVersion`.
            pub const API_VERSION: &'static str = #api_version;
            /// The kind, as in `kind`.
            pub const KIND: &'static str = #name;
            /// The resource name in URLs.
            pub const PLURAL: &'static str = #plural;
            /// The singular resource name.
            pub const SINGULAR: &'static str = #singular;
            /// `kubectl` short names.
            pub const SHORT_NAMES: &'static [&'static str] = &[#(#short_names),*];

            /// `apiVersion` and `kind` of this kind.
            #[inline]
            pub fn type_meta() -> ::kube::core::TypeMeta {
                ::kube::core::TypeMeta { api_version: Self::API_VERSION.to_owned(), kind: Self::KIND.to_owned() }
            }

            /// The `ApiResource` of this kind, for dynamic clients and the registry.
            #[inline]
            pub fn api_resource() -> ::kube::core::ApiResource {
                ::kube::core::ApiResource::erase::<Self>(&())
            }

            #constructor
        }

        #has_spec
        #has_status

        #[doc = #list_doc]
        pub type #list = ::kube::core::ObjectList<#ty>;
    }
}

/// `register.rs` for every package.
pub fn register(packages: &[Package]) -> TokenStream {
    let modules = packages.iter().map(|pkg| {
        let module = ident(&pkg.accessor);
        let (group, version) = (&pkg.group, &pkg.version);
        let doc = format!(" Registration of {group}/{version}.");
        let kinds = pkg.kinds.iter().map(|k| kind_register(pkg, k));
        let resources = pkg.kinds.iter().map(|k| {
            let ty = path(&k.type_path);
            quote!(<#ty>::api_resource())
        });
        quote! {
            #[doc = #doc]
            pub mod #module {
                /// The API group.
                pub const GROUP: &str = #group;
                /// The API version.
                pub const VERSION: &str = #version;

                /// Every kind of this group/version: the analogue of Go's `AddToScheme`.
                #[inline]
                pub fn api_resources() -> Vec<::kube::core::ApiResource> {
                    vec![#(#resources),*]
                }

                #(#kinds)*
            }
        }
    });
    let all = packages.iter().map(|p| {
        let m = ident(&p.accessor);
        quote!(out.extend(#m::api_resources());)
    });
    quote! {
        //! `kube::Resource` impls, list types and constants for every kind, and the registry
        //! of kinds per group/version.

        #(#modules)*

        /// Every kind of this crate, in every group/version.
        #[inline]
        pub fn api_resources() -> Vec<::kube::core::ApiResource> {
            let mut out = Vec::new();
            #(#all)*
            out
        }
    }
}
