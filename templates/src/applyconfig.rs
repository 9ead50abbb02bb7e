//! `applyconfigurations.rs`: client-go's apply configurations (applyconfiguration-gen). Per
//! group/version a module with a `FooApplyConfiguration` for every kind and every struct it
//! reaches: every field an `Option`, absent from the wire when unset, so a field manager
//! owns exactly what it sets; fluent `with_x` setters (lists append, maps merge); for
//! kinds a constructor filling apiVersion, kind, name and namespace, and
//! `extract_foo`/`extract_foo_status` over the runtime's managedFields extraction.

use proc_macro2::TokenStream;
use quote::quote;

use crate::input::{ApplyField, ApplyKind, ApplyPackage, ApplyRole, ApplyStruct, ApplyType};
use crate::{ident, path, snake_case};

/// The whole `applyconfigurations` module: a module per group/version, and `k8s` with the
/// configurations of the Kubernetes types they embed (`k8s`, a name no group/version
/// accessor can have: those end in `_<version>`).
#[must_use]
pub fn apply_configurations(packages: &[ApplyPackage], k8s: &[ApplyStruct]) -> TokenStream {
    let modules = packages
        .iter()
        .filter(|p| !p.structs.is_empty())
        .map(|pkg| {
            let module = ident(&pkg.accessor);
            let doc = format!(" Apply configurations for {}/{}.", pkg.group, pkg.version);
            let structs = pkg.structs.iter().map(apply_struct);
            quote! {
                #[doc = #doc]
                pub mod #module {
                    #(#structs)*
                }
            }
        });
    let k8s = (!k8s.is_empty()).then(|| {
        let structs = k8s.iter().map(apply_struct);
        quote! {
            /// Apply configurations of the Kubernetes types the kinds embed, generated from
            /// the schemas the CRDs use (k8s-openapi's types are not apply-shaped: they
            /// always write their required fields).
            pub mod k8s {
                #(#structs)*
            }
        }
    });
    quote! {
        //! Apply configurations for server-side apply (client-go's applyconfiguration-gen):
        //! every field optional and absent when unset, so a field manager owns exactly the
        //! fields it sets. Apply them with the typed clients' `apply`/`apply_status`;
        //! `extract_*` rebuilds what one manager owns from an object's managedFields.
        #(#modules)*
        #k8s
    }
}

fn type_tokens(ty: &ApplyType) -> TokenStream {
    match ty {
        ApplyType::Plain(p) => {
            let p = path(p);
            quote!(#p)
        }
        ApplyType::String => quote!(::std::string::String),
        ApplyType::Config(p) => {
            let p = path(p);
            quote!(#p)
        }
        ApplyType::Boxed(p) => {
            let p = path(p);
            quote!(::std::boxed::Box<#p>)
        }
        ApplyType::ObjectMeta => {
            quote!(::kube_codegen_runtime::apply::ObjectMetaApplyConfiguration)
        }
        ApplyType::List(item) => {
            let item = type_tokens(item);
            quote!(::std::vec::Vec<#item>)
        }
        ApplyType::Map(value) => {
            let value = type_tokens(value);
            quote!(::std::collections::BTreeMap<::std::string::String, #value>)
        }
    }
}

fn field_ident(f: &ApplyField) -> syn::Ident {
    ident(&f.rust_name)
}

fn setter_ident(f: &ApplyField) -> syn::Ident {
    ident(&format!("with_{}", f.rust_name.trim_start_matches("r#")))
}

fn apply_struct(s: &ApplyStruct) -> TokenStream {
    let name = ident(&s.name);
    let doc = format!(
        " Apply configuration of `{}`: every field optional, absent from the applied object when unset.",
        s.source_path
    );
    let mut derives = vec![quote!(Clone), quote!(Default)];
    if s.debug {
        derives.push(quote!(Debug));
    }
    if s.partial_eq {
        derives.push(quote!(PartialEq));
    }
    let mut fields = vec![];
    let mut setters = vec![];
    for f in &s.fields {
        match f.role {
            ApplyRole::TypeMeta => {
                fields.push(quote! {
                    /// `apiVersion`.
                    #[serde(rename = "apiVersion", default, skip_serializing_if = "Option::is_none")]
                    pub api_version: ::std::option::Option<::std::string::String>,
                    /// `kind`.
                    #[serde(default, skip_serializing_if = "Option::is_none")]
                    pub kind: ::std::option::Option<::std::string::String>,
                });
                setters.push(quote! {
                    /// Set `apiVersion`.
                    #[inline]
                    #[must_use]
                    pub fn with_api_version(mut self, value: impl ::std::convert::Into<::std::string::String>) -> Self {
                        self.api_version = ::std::option::Option::Some(value.into());
                        self
                    }
                    /// Set `kind`.
                    #[inline]
                    #[must_use]
                    pub fn with_kind(mut self, value: impl ::std::convert::Into<::std::string::String>) -> Self {
                        self.kind = ::std::option::Option::Some(value.into());
                        self
                    }
                });
            }
            ApplyRole::Flatten if matches!(f.ty, ApplyType::Config(_) | ApplyType::Map(_)) => {
                // Not an Option: serde reads a flattened struct or map from whatever
                // keys are left, so an Option would come back `Some` of nothing and an
                // extraction would not equal what was applied. An all-unset struct or an
                // empty map writes nothing, which is what unset means.
                let id = field_ident(f);
                let ty = type_tokens(&f.ty);
                let with = setter_ident(f);
                let doc = format!(
                    " Flattened `{}`: its fields are this object's.",
                    f.rust_name
                );
                fields.push(quote! {
                    #[doc = #doc]
                    #[serde(flatten)]
                    pub #id: #ty,
                });
                setters.push(match &f.ty {
                    ApplyType::Map(value) => {
                        let value = type_tokens(value);
                        quote! {
                            /// Add entries to the flattened map; a key given again keeps the last value.
                            #[inline]
                            #[must_use]
                            pub fn #with<K: ::std::convert::Into<::std::string::String>>(mut self, entries: impl ::std::iter::IntoIterator<Item = (K, #value)>) -> Self {
                                self.#id.extend(entries.into_iter().map(|(k, v)| (k.into(), v)));
                                self
                            }
                        }
                    }
                    _ => quote! {
                        /// Set the flattened fields.
                        #[inline]
                        #[must_use]
                        pub fn #with(mut self, value: #ty) -> Self {
                            self.#id = value;
                            self
                        }
                    },
                });
            }
            ApplyRole::Flatten | ApplyRole::Field => {
                let id = field_ident(f);
                let ty = type_tokens(&f.ty);
                let doc = if f.doc.is_empty() {
                    format!(" `{}`.", f.json_name)
                } else {
                    format!(" {}", f.doc)
                };
                let serde = if f.role == ApplyRole::Flatten {
                    quote!(#[serde(flatten, default, skip_serializing_if = "Option::is_none")])
                } else {
                    let json = &f.json_name;
                    quote!(#[serde(rename = #json, default, skip_serializing_if = "Option::is_none")])
                };
                fields.push(quote! {
                    #[doc = #doc]
                    #serde
                    pub #id: ::std::option::Option<#ty>,
                });
                setters.push(setter(f));
            }
        }
    }
    let kind_items = s.kind.as_ref().map(|k| kind_items(s, k));
    quote! {
        #[doc = #doc]
        #[derive(#(#derives),*, ::serde::Serialize, ::serde::Deserialize)]
        pub struct #name {
            #(#fields)*
        }

        impl #name {
            #(#setters)*
        }

        #kind_items
    }
}

fn setter(f: &ApplyField) -> TokenStream {
    let id = field_ident(f);
    let with = setter_ident(f);
    match &f.ty {
        ApplyType::String => {
            let doc = format!(" Set `{}`.", f.json_name);
            quote! {
                #[doc = #doc]
                #[inline]
                #[must_use]
                pub fn #with(mut self, value: impl ::std::convert::Into<::std::string::String>) -> Self {
                    self.#id = ::std::option::Option::Some(value.into());
                    self
                }
            }
        }
        ApplyType::List(item) => {
            let item = type_tokens(item);
            let doc = format!(
                " Append to `{}` (client-go's `With...(values...)`): call it again to add more.",
                f.json_name
            );
            quote! {
                #[doc = #doc]
                #[inline]
                #[must_use]
                pub fn #with(mut self, values: impl ::std::iter::IntoIterator<Item = #item>) -> Self {
                    self.#id.get_or_insert_with(::std::vec::Vec::new).extend(values);
                    self
                }
            }
        }
        ApplyType::Map(value) => {
            let value = type_tokens(value);
            let doc = format!(
                " Add entries to `{}`; a key given again keeps the last value.",
                f.json_name
            );
            quote! {
                #[doc = #doc]
                #[inline]
                #[must_use]
                pub fn #with<K: ::std::convert::Into<::std::string::String>>(mut self, entries: impl ::std::iter::IntoIterator<Item = (K, #value)>) -> Self {
                    self.#id
                        .get_or_insert_with(::std::collections::BTreeMap::new)
                        .extend(entries.into_iter().map(|(k, v)| (k.into(), v)));
                    self
                }
            }
        }
        ApplyType::Boxed(p) => {
            let p = path(p);
            let doc = format!(" Set `{}`.", f.json_name);
            quote! {
                #[doc = #doc]
                #[inline]
                #[must_use]
                pub fn #with(mut self, value: #p) -> Self {
                    self.#id = ::std::option::Option::Some(::std::boxed::Box::new(value));
                    self
                }
            }
        }
        ty => {
            let ty = type_tokens(ty);
            let doc = format!(" Set `{}`.", f.json_name);
            quote! {
                #[doc = #doc]
                #[inline]
                #[must_use]
                pub fn #with(mut self, value: #ty) -> Self {
                    self.#id = ::std::option::Option::Some(value);
                    self
                }
            }
        }
    }
}

/// The constructor, metadata helpers and extraction of a kind's apply configuration.
fn kind_items(s: &ApplyStruct, k: &ApplyKind) -> TokenStream {
    let name = ident(&s.name);
    let source = path(&s.source_path);
    let (api_version, kind) = (&k.api_version, &k.name);
    let has_meta = s
        .fields
        .iter()
        .any(|f| f.rust_name == "metadata" && f.ty == ApplyType::ObjectMeta);
    let has_type_meta = s.fields.iter().any(|f| f.role == ApplyRole::TypeMeta);
    // Generated only for kinds shaped as the API server needs them (resolve requires
    // TypeMeta and `metadata` of every kind); the guard keeps a renderer from failing.
    if !has_meta || !has_type_meta {
        return TokenStream::new();
    }
    let taken: Vec<String> = s
        .fields
        .iter()
        .map(|f| format!("with_{}", f.rust_name))
        .collect();
    let (ctor_doc, ctor) = if k.namespaced {
        (
            format!(
                " A `{kind}` to apply, named `name` in `namespace`, with apiVersion and kind set."
            ),
            quote! {
                pub fn new(name: impl ::std::convert::Into<::std::string::String>, namespace: impl ::std::convert::Into<::std::string::String>) -> Self {
                    Self {
                        api_version: ::std::option::Option::Some(#api_version.into()),
                        kind: ::std::option::Option::Some(#kind.into()),
                        metadata: ::std::option::Option::Some(
                            ::kube_codegen_runtime::apply::ObjectMetaApplyConfiguration::named(name).with_namespace(namespace),
                        ),
                        ..::std::default::Default::default()
                    }
                }
            },
        )
    } else {
        (
            format!(
                " A `{kind}` (cluster-scoped) to apply, named `name`, with apiVersion and kind set."
            ),
            quote! {
                pub fn new(name: impl ::std::convert::Into<::std::string::String>) -> Self {
                    Self {
                        api_version: ::std::option::Option::Some(#api_version.into()),
                        kind: ::std::option::Option::Some(#kind.into()),
                        metadata: ::std::option::Option::Some(
                            ::kube_codegen_runtime::apply::ObjectMetaApplyConfiguration::named(name),
                        ),
                        ..::std::default::Default::default()
                    }
                }
            },
        )
    };
    // client-go's kind configurations set metadata fields directly (`WithLabels`); the
    // common ones are here, unless a field of the kind already has the setter's name.
    let meta_setters = [
        ("labels", "Add labels to `metadata` (merged)."),
        ("annotations", "Add annotations to `metadata` (merged)."),
        ("finalizers", "Append finalizers to `metadata`."),
        ("owner_references", "Append owner references to `metadata`."),
    ]
    .into_iter()
    .filter(|(m, _)| !taken.contains(&format!("with_{m}")))
    .map(|(m, doc)| {
        let with = ident(&format!("with_{m}"));
        let doc = format!(" {doc}");
        let sig = match m {
            "labels" | "annotations" => quote! {
                <K: ::std::convert::Into<::std::string::String>, V: ::std::convert::Into<::std::string::String>>(mut self, values: impl ::std::iter::IntoIterator<Item = (K, V)>)
            },
            "finalizers" => quote! {
                <S: ::std::convert::Into<::std::string::String>>(mut self, values: impl ::std::iter::IntoIterator<Item = S>)
            },
            _ => quote! {
                (mut self, values: impl ::std::iter::IntoIterator<Item = ::kube_codegen_runtime::apply::OwnerReferenceApplyConfiguration>)
            },
        };
        quote! {
            #[doc = #doc]
            #[inline]
            #[must_use]
            pub fn #with #sig -> Self {
                self.metadata = ::std::option::Option::Some(self.metadata.take().unwrap_or_default().#with(values));
                self
            }
        }
    });
    let extract = ident(&format!("extract_{}", snake_case(kind)));
    let extract_doc = format!(
        " The `{kind}` apply configuration that `field_manager` owns in `obj` (client-go's `Extract{kind}`): what it applied, read from managedFields, with name and namespace set. Applying it unchanged changes nothing; change it and apply to update just those fields."
    );
    let status = k.status_subresource.then(|| {
        let extract_status = ident(&format!("extract_{}_status", snake_case(kind)));
        let doc = format!(
            " As [`{extract}`], for what `field_manager` applied to the status subresource (client-go's `Extract{kind}Status`)."
        );
        quote! {
            #[doc = #doc]
            ///
            /// # Errors
            /// As `kube_codegen_runtime::apply::extract::extract`: malformed managedFields,
            /// or owned fields that do not read as the apply configuration.
            #[inline]
            pub fn #extract_status(obj: &#source, field_manager: &str) -> ::std::result::Result<#name, ::kube_codegen_runtime::apply::ExtractError> {
                ::kube_codegen_runtime::apply::extract::extract(obj, field_manager, ::kube_codegen_runtime::apply::Subresource::Status)
            }
        }
    });
    quote! {
        impl #name {
            #[doc = #ctor_doc]
            #[inline]
            #[must_use]
            #ctor

            /// `metadata.name`, which the typed client's `apply` applies to.
            #[inline]
            pub fn name(&self) -> ::std::option::Option<&str> {
                self.metadata.as_ref()?.name.as_deref()
            }

            #(#meta_setters)*
        }

        #[doc = #extract_doc]
        ///
        /// # Errors
        /// As `kube_codegen_runtime::apply::extract::extract`: malformed managedFields, or
        /// owned fields that do not read as the apply configuration.
        #[inline]
        pub fn #extract(obj: &#source, field_manager: &str) -> ::std::result::Result<#name, ::kube_codegen_runtime::apply::ExtractError> {
            ::kube_codegen_runtime::apply::extract::extract(obj, field_manager, ::kube_codegen_runtime::apply::Subresource::Main)
        }

        #status
    }
}
