//! The clientset: a typed client per kind (from the `typed_client.rs` template), a client
//! per group/version with one accessor per kind, and the `Clientset` that hands them out.

use proc_macro2::TokenStream;
use quote::{ToTokens, quote};
use syn::visit_mut::VisitMut;

use crate::input::{Kind, Method, Package, SubresourceVerb};
use crate::{ident, pascal_case, path, snake_case};

const TYPED_CLIENT_TEMPLATE: &str = include_str!("templates/typed_client.rs");
const PLACEHOLDER: &str = "PlaceholderKind";
const APPLY_PLACEHOLDER: &str = "PlaceholderKindApplyConfiguration";

/// Renames the placeholder: the bare type becomes the kind's full path, and identifiers
/// containing it (`PlaceholderKindClient`) get the kind's name.
struct Instantiate<'a> {
    kind_name: &'a str,
    /// The kind's full path, parsed where it replaces the placeholder (syn's syntax tree
    /// is built without `Clone`, which the install would compile for this alone).
    type_path: &'a str,
    /// Where the kind's apply configuration is, from the clientset's group/version module.
    apply_path: &'a str,
}

impl VisitMut for Instantiate<'_> {
    fn visit_path_mut(&mut self, p: &mut syn::Path) {
        if p.leading_colon.is_none() && p.segments.len() == 1 {
            let name = &p.segments[0].ident;
            let with = if name == PLACEHOLDER {
                Some(self.type_path)
            } else if name == APPLY_PLACEHOLDER {
                Some(self.apply_path)
            } else {
                None
            };
            if let Some(text) = with {
                *p = path(text);
                return;
            }
        }
        syn::visit_mut::visit_path_mut(self, p);
    }

    fn visit_lit_str_mut(&mut self, lit: &mut syn::LitStr) {
        let text = lit.value();
        if text.contains(PLACEHOLDER) {
            *lit = syn::LitStr::new(&text.replace(PLACEHOLDER, self.kind_name), lit.span());
        }
    }

    fn visit_ident_mut(&mut self, i: &mut syn::Ident) {
        let s = i.to_string();
        if s.contains(PLACEHOLDER) {
            *i = ident(&s.replace(PLACEHOLDER, self.kind_name));
        }
    }
}

/// The typed client of one kind: the template with only the allowed verbs.
pub fn typed_client(kind: &Kind) -> TokenStream {
    let verbs = kind.verbs.as_deref().unwrap_or_default();
    let keep: Vec<&str> = verbs.iter().map(|v| v.method_name()).collect();
    let mut file: syn::File = syn::parse_str(TYPED_CLIENT_TEMPLATE)
        .expect("the template parses (it is compiled in tests)");
    file.attrs.clear();
    file.items.retain(|item| !matches!(item, syn::Item::Use(_)));
    for item in &mut file.items {
        if let syn::Item::Impl(imp) = item {
            imp.items.retain(|i| match i {
                syn::ImplItem::Fn(f) => {
                    f.sig.ident == "new" || keep.iter().any(|k| f.sig.ident == k)
                }
                _ => true,
            });
        }
    }
    if keep.is_empty() && kind.methods.is_empty() {
        // `+genclient:noVerbs` without methods: the client exists (as in client-go) but
        // nothing reads its inner client.
        for item in &mut file.items {
            if let syn::Item::Struct(s) = item {
                for field in s.fields.iter_mut() {
                    field.attrs.push(syn::parse_quote!(#[allow(dead_code)]));
                }
            }
        }
    }
    let mut v = Instantiate {
        kind_name: &kind.name,
        type_path: &kind.type_path,
        apply_path: &kind.apply_configuration,
    };
    v.visit_file_mut(&mut file);
    let custom = custom_methods(kind);
    let client = ident(&format!("{}Client", kind.name));
    let mut tokens = file.into_token_stream();
    if !custom.is_empty() {
        tokens.extend(quote! {
            impl #client {
                #(#custom)*
            }
        });
    }
    tokens
}

/// `+genclient:method=...` verbs on subresources.
fn custom_methods(kind: &Kind) -> Vec<TokenStream> {
    kind.methods
        .iter()
        .map(|m| custom_method(kind, m))
        .collect()
}

fn custom_method(kind: &Kind, m: &Method) -> TokenStream {
    let name = ident(&snake_case(&m.name));
    let sub = &m.subresource;
    let result = path(m.result.as_deref().unwrap_or(&kind.type_path));
    let input = path(m.input.as_deref().unwrap_or(&kind.type_path));
    let doc = format!(
        " `{}` on the `{sub}` subresource (`+genclient:method={}`).",
        m.verb.as_str(),
        m.name
    );
    let call = match m.verb {
        SubresourceVerb::Get => None,
        SubresourceVerb::Create => Some(ident("create_subresource")),
        SubresourceVerb::Update => Some(ident("update_subresource")),
        SubresourceVerb::Patch => Some(ident("patch_subresource")),
    };
    match call {
        None => quote! {
            #[doc = #doc]
            #[inline]
            pub async fn #name(&self, name: &str) -> ::kube_codegen_runtime::Result<#result> {
                self.inner.get_subresource::<#result>(#sub, name).await
            }
        },
        Some(call) => {
            quote! {
                #[doc = #doc]
                #[inline]
                pub async fn #name(&self, name: &str, body: &#input) -> ::kube_codegen_runtime::Result<#result> {
                    self.inner.#call::<#input, #result>(#sub, name, body).await
                }
            }
        }
    }
}

/// The client of one group/version: an accessor per kind.
pub fn group_version_client(pkg: &Package) -> TokenStream {
    let client = ident(&format!("{}Client", pascal_case(&pkg.accessor)));
    let doc = format!(" Typed clients for {}/{}.", pkg.group, pkg.version);
    let mut accessors = vec![];
    let mut clients = vec![];
    for kind in pkg.kinds.iter().filter(|k| k.verbs.is_some()) {
        clients.push(typed_client(kind));
        let ty = path(&kind.type_path);
        let typed = ident(&format!("{}Client", kind.name));
        let plural = ident(&kind.plural);
        if kind.namespaced {
            let all = ident(&format!("{}_all_namespaces", kind.plural));
            let doc_ns = format!(" {} in `namespace`.", kind.name);
            let doc_all = format!(
                " {} in every namespace (for list, watch and delete_collection).",
                kind.name
            );
            accessors.push(quote! {
                #[doc = #doc_ns]
                #[inline]
                pub fn #plural(&self, namespace: &str) -> #typed {
                    #typed::new(::kube_codegen_runtime::client::ResourceClient::<#ty>::namespaced(self.client.clone(), namespace))
                }
                #[doc = #doc_all]
                #[inline]
                pub fn #all(&self) -> #typed {
                    #typed::new(::kube_codegen_runtime::client::ResourceClient::<#ty>::all_namespaces(self.client.clone()))
                }
            });
        } else {
            let doc = format!(" {} (cluster-scoped).", kind.name);
            accessors.push(quote! {
                #[doc = #doc]
                #[inline]
                pub fn #plural(&self) -> #typed {
                    #typed::new(::kube_codegen_runtime::client::ResourceClient::<#ty>::cluster(self.client.clone()))
                }
            });
        }
    }
    quote! {
        #[doc = #doc]
        #[derive(Clone)]
        pub struct #client {
            client: ::kube::Client,
        }

        impl #client {
            /// Clients of this group/version's kinds over `client`.
            #[inline]
            pub fn new(client: ::kube::Client) -> Self {
                Self { client }
            }
            #(#accessors)*
        }

        #(#clients)*
    }
}

/// `clientset.rs`: the `Clientset` and a module per group/version.
pub fn clientset(packages: &[Package]) -> TokenStream {
    let mut modules = vec![];
    let mut accessors = vec![];
    for pkg in packages
        .iter()
        .filter(|p| p.kinds.iter().any(|k| k.verbs.is_some()))
    {
        let module = ident(&pkg.accessor);
        let client = ident(&format!("{}Client", pascal_case(&pkg.accessor)));
        let body = group_version_client(pkg);
        let doc = format!(" Clients for {}/{}.", pkg.group, pkg.version);
        modules.push(quote! {
            #[doc = #doc]
            pub mod #module {
                #body
            }
        });
        accessors.push(quote! {
            #[doc = #doc]
            #[inline]
            pub fn #module(&self) -> #module::#client {
                #module::#client::new(self.client.clone())
            }
        });
    }
    quote! {
        //! Typed clients for every `+genclient` kind. Build a `Clientset` from a
        //! `kube::Client` (or use `fake::new_clientset()` in tests).

        /// One entry point for every group/version of this crate.
        #[derive(Clone)]
        pub struct Clientset {
            client: ::kube::Client,
        }

        impl Clientset {
            /// Every group/version's clients over `client`.
            #[inline]
            pub fn new(client: ::kube::Client) -> Self {
                Self { client }
            }

            /// The underlying client, e.g. for built-in kinds.
            #[inline]
            pub fn client(&self) -> &::kube::Client {
                &self.client
            }

            #(#accessors)*
        }

        #(#modules)*
    }
}
