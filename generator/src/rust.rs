//! Stage 3c: generated Rust (register, deep-copy, clientset, fake clientset). Converts the
//! model into the templates crate's inputs, checks what generated code relies on (public
//! fields, `Clone`), renders and formats each file.

use std::collections::BTreeMap;

use kube_codegen_templates::input::{self as t, CopyField, CopyShape, CopyType};

use crate::diagnostics::{Diagnostic, Diagnostics};
use crate::model::*;

/// How generated Rust refers to the API types and how it is laid out.
#[derive(Clone, Debug)]
pub struct RustOptions {
    /// Path of the module the scanned `src/` maps to: `crate` when the generated code
    /// lives in the API crate itself.
    pub types_prefix: String,
    /// Put every artifact into this one file as inline modules (for build.rs + `include!`)
    /// instead of `mod.rs` + one file per artifact.
    pub single_file: Option<String>,
    /// Licence text for under the header.
    pub boilerplate: Option<String>,
}

impl Default for RustOptions {
    fn default() -> Self {
        RustOptions {
            types_prefix: "crate".into(),
            single_file: None,
            boilerplate: None,
        }
    }
}

/// One generated Rust artifact: module name, the module's doc line, its renderer.
struct Artifact {
    name: &'static str,
    doc: &'static str,
    render: fn(&Renderer) -> proc_macro2::TokenStream,
}

/// The artifacts in file-name order (the order of `mod.rs` and of single-file output).
const ARTIFACTS: &[Artifact] = &[
    Artifact {
        name: "clientset",
        doc: " Typed clients for every `+genclient` kind.",
        render: |r| kube_codegen_templates::client::clientset(&r.packages),
    },
    Artifact {
        name: "deepcopy",
        doc: " `DeepCopy` for every API type.",
        render: |r| kube_codegen_templates::deepcopy::deepcopy(&r.copy_types),
    },
    Artifact {
        name: "fake",
        doc: " A fake `Clientset` over an in-memory API server, for unit tests.",
        render: |r| kube_codegen_templates::fake::fake(&r.packages),
    },
    Artifact {
        name: "informers",
        doc: " Shared informers: one watch per kind, shared by every handler.",
        render: |r| kube_codegen_templates::informers::informers(&r.packages),
    },
    Artifact {
        name: "listers",
        doc: " Typed listers over informer caches.",
        render: |r| kube_codegen_templates::listers::listers(&r.packages),
    },
    Artifact {
        name: "register",
        doc: " `kube::Resource` impls, list types, constants and the registry of kinds.",
        render: |r| kube_codegen_templates::register::register(&r.packages),
    },
];

/// Indexes into [`ARTIFACTS`], costliest to render first (measured on a 100-kind API), so
/// that parallel rendering finishes the big files first and fills in with the small ones.
const BY_COST: [usize; 6] = [0, 5, 1, 4, 3, 2];

/// One generated Rust file, rendered by [`Renderer::render`] on any thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RustFile {
    /// `mod.rs`, declaring one module per artifact.
    Mod,
    /// One artifact's file (an index into the artifact table).
    Artifact(usize),
    /// Every artifact in one file of inline modules ([`RustOptions::single_file`]).
    Single,
}

/// The templates' inputs, checked: renders each generated Rust file independently, so the
/// files can be rendered in parallel (each on its own thread, as tokens cannot cross threads).
pub struct Renderer {
    packages: Vec<t::Package>,
    copy_types: Vec<CopyType>,
    options: RustOptions,
}

impl Renderer {
    /// Convert the model; `None` (with diagnostics) when generated code could not compile.
    pub fn new(api: &Api, options: &RustOptions, diags: &mut Diagnostics) -> Option<Self> {
        let packages = packages(api, options, diags);
        let copy_types = copy_types(api, options, diags);
        if diags.has_errors() {
            return None;
        }
        Some(Renderer {
            packages,
            copy_types,
            options: options.clone(),
        })
    }

    /// The files to render, costliest first.
    pub fn files(&self) -> Vec<RustFile> {
        if self.options.single_file.is_some() {
            return vec![RustFile::Single];
        }
        let mut files: Vec<RustFile> = BY_COST.iter().map(|&i| RustFile::Artifact(i)).collect();
        files.push(RustFile::Mod);
        files
    }

    /// One file, as (file name, contents).
    pub fn render(&self, file: RustFile) -> (String, String) {
        let format = |name: &str, tokens| {
            kube_codegen_templates::format_file(self.options.boilerplate.as_deref(), tokens)
                .unwrap_or_else(|e| {
                    panic!("generated {name} does not parse: {e}; this is a kube-codegen bug")
                })
        };
        match file {
            RustFile::Artifact(i) => {
                let a = &ARTIFACTS[i];
                (format!("{}.rs", a.name), format(a.name, (a.render)(self)))
            }
            RustFile::Mod => {
                let mods = ARTIFACTS.iter().map(|a| {
                    let ident = quote::format_ident!("{}", a.name);
                    let doc = a.doc;
                    // Generated files are formatted by prettyplease; rustfmt must not
                    // reformat them, or `kube-codegen check` would report them stale.
                    quote::quote! {
                        #[doc = #doc]
                        #[rustfmt::skip]
                        pub mod #ident;
                    }
                });
                let tokens = quote::quote! {
                    //! Code generated by kube-codegen from the annotated API types.
                    #(#mods)*
                };
                ("mod.rs".to_owned(), format("mod.rs", tokens))
            }
            RustFile::Single => {
                let file = self.options.single_file.clone().unwrap_or_default();
                // Each artifact's tokens start with its inner `//!` docs, so no outer doc here.
                let modules = ARTIFACTS.iter().map(|a| {
                    let ident = quote::format_ident!("{}", a.name);
                    let tokens = (a.render)(self);
                    quote::quote! {
                        pub mod #ident { #tokens }
                    }
                });
                let contents = format(&file, quote::quote! { #(#modules)* });
                (file, contents)
            }
        }
    }
}

/// The generated Rust files, as (file name, contents), costliest first; rendered in
/// parallel.
pub fn render(api: &Api, options: &RustOptions, diags: &mut Diagnostics) -> Vec<(String, String)> {
    let Some(renderer) = Renderer::new(api, options, diags) else {
        return vec![];
    };
    crate::par::map(renderer.files(), |f| renderer.render(f))
}

/// The path generated code names a local type by: where a reachable module defines or
/// re-exports it (see [`TypeDecl::rust_path`]).
fn type_path(api: &Api, options: &RustOptions, key: &str) -> String {
    match api.types.get(key).and_then(|d| d.rust_path.as_ref()) {
        Some(path) => format!("{}::{}", options.types_prefix, path.join("::")),
        None => format!("{}::{key}", options.types_prefix),
    }
}

/// The Rust spelling of a TypeRef where the registered traits need it.
fn rust_type(api: &Api, options: &RustOptions, ty: &TypeRef) -> Option<String> {
    Some(match ty {
        TypeRef::String => "::std::string::String".into(),
        TypeRef::Bool => "bool".into(),
        TypeRef::Local(key) => type_path(api, options, key),
        TypeRef::K8s(path) => format!("::k8s_openapi::{path}"),
        TypeRef::Alias { target, .. } => return rust_type(api, options, target),
        _ => return None,
    })
}

/// Group/version accessor names: the group's first label and the version
/// (`samplecontroller_v1alpha1`), or the whole group where first labels collide.
fn accessors(api: &Api) -> BTreeMap<(String, String), String> {
    let short = |g: &str| g.split('.').next().unwrap_or(g).replace('-', "_");
    let mut count: BTreeMap<(String, String), usize> = BTreeMap::new();
    for (g, v) in api.packages.keys() {
        *count.entry((short(g), v.clone())).or_default() += 1;
    }
    api.packages
        .keys()
        .map(|(g, v)| {
            let base = if count[&(short(g), v.clone())] > 1 {
                g.replace(['.', '-'], "_")
            } else {
                short(g)
            };
            ((g.clone(), v.clone()), format!("{base}_{v}"))
        })
        .collect()
}

/// Go-style result types (`k8s.io/api/autoscaling/v1.Scale`) to Rust paths.
fn method_type(raw: &str) -> String {
    if raw.contains("::") {
        return raw.to_owned();
    }
    if let Some(rest) = raw.strip_prefix("k8s.io/api/")
        && let Some((pkg, ty)) = rest.rsplit_once('.')
    {
        return format!("::k8s_openapi::api::{}::{ty}", pkg.replace('/', "::"));
    }
    if let Some(rest) = raw.strip_prefix("k8s.io/apimachinery/pkg/apis/meta/v1.") {
        return format!("::k8s_openapi::apimachinery::pkg::apis::meta::v1::{rest}");
    }
    raw.to_owned()
}

fn packages(api: &Api, options: &RustOptions, diags: &mut Diagnostics) -> Vec<t::Package> {
    let accessors = accessors(api);
    let mut out = vec![];
    for ((group, version), pkg) in &api.packages {
        let mut kinds = vec![];
        for k in &pkg.kinds {
            let decl = &api.types[&k.type_key];
            let Shape::Struct(fields) = &decl.shape else {
                continue;
            };
            let field = |json: &str| {
                fields
                    .iter()
                    .find(|f| f.json_name == json && !f.skip && !f.flatten)
            };
            let type_meta = fields
                .iter()
                .find(|f| f.flatten && f.ty == TypeRef::TypeMeta);
            // `new(name, spec)` needs to know every field: TypeMeta, metadata, spec, Option status.
            let known = fields.iter().all(|f| {
                (f.flatten && f.ty == TypeRef::TypeMeta)
                    || matches!(f.json_name.as_str(), "metadata" | "spec")
                    || (f.json_name == "status" && f.ty.is_option())
            });
            let spec_type = field("spec")
                .and_then(|f| rust_type(api, options, &f.ty))
                .filter(|_| {
                    known
                        && type_meta.is_some_and(|t| t.rust_name == "types")
                        && field("metadata").is_some_and(|m| m.rust_name == "metadata")
                        && field("spec").is_some_and(|f| f.rust_name == "spec")
                });
            let status_type = field("status")
                .filter(|f| f.rust_name == "status")
                .and_then(|f| match &f.ty {
                    TypeRef::Option(inner) => rust_type(api, options, inner),
                    _ => None,
                });
            if field("metadata").is_some_and(|m| m.rust_name != "metadata") {
                diags.push(
                    Diagnostic::new(
                        k.loc.clone(),
                        format!("`{}`'s ObjectMeta field must be named `metadata`", k.name),
                    )
                    .with_hint("kube::Resource::meta() reads `self.metadata`"),
                );
            }
            let mut methods = vec![];
            for m in k.client.iter().flat_map(|c| &c.methods) {
                let Some(sub) = &m.subresource else {
                    diags.push(
                        Diagnostic::new(
                            k.loc.clone(),
                            format!("`+genclient:method={}` needs `subresource=`", m.name),
                        )
                        .with_hint("custom verbs act on a subresource, e.g. `subresource=scale`"),
                    );
                    continue;
                };
                if !matches!(m.verb.as_str(), "get" | "create" | "update" | "patch") {
                    diags.push(Diagnostic::new(k.loc.clone(), format!("`+genclient:method={}`: verb `{}` is not supported on a subresource", m.name, m.verb)).with_hint("use get, create, update or patch"));
                    continue;
                }
                methods.push(t::Method {
                    name: m.name.clone(),
                    verb: m.verb.clone(),
                    subresource: sub.clone(),
                    input: m.input.as_deref().map(method_type),
                    result: m.result.as_deref().map(method_type),
                });
            }
            kinds.push(t::Kind {
                name: k.name.clone(),
                type_path: type_path(api, options, &k.type_key),
                plural: k.plural.clone(),
                singular: k.singular.clone(),
                short_names: k.short_names.clone(),
                namespaced: k.scope == Scope::Namespaced,
                status_subresource: k.status_subresource,
                verbs: k.client.as_ref().map(|c| c.verbs.clone()),
                methods,
                spec_type,
                status_type,
            });
        }
        let accessor = accessors[&(group.clone(), version.clone())].clone();
        let group_accessor = accessor
            .strip_suffix(&format!("_{version}"))
            .unwrap_or(&accessor)
            .to_owned();
        out.push(t::Package {
            group: group.clone(),
            version: version.clone(),
            accessor,
            group_accessor,
            kinds,
        });
    }
    out
}

fn contains_local(ty: &TypeRef) -> bool {
    match ty {
        TypeRef::Local(_) => true,
        TypeRef::Option(inner)
        | TypeRef::List { item: inner, .. }
        | TypeRef::Map(inner)
        | TypeRef::Alias { target: inner, .. } => contains_local(inner),
        // The runtime has no DeepCopy for arrays: they clone.
        _ => false,
    }
}

fn copy_types(api: &Api, options: &RustOptions, diags: &mut Diagnostics) -> Vec<CopyType> {
    let mut out = vec![];
    for (key, decl) in &api.types {
        // An alias is another name for a type that has (or needs) no impl of its own, and
        // needs neither Clone nor visibility.
        if matches!(decl.shape, Shape::Alias(_)) {
            continue;
        }
        if !decl.derives.iter().any(|d| d == "Clone") {
            diags.push(
                Diagnostic::new(
                    decl.loc.clone(),
                    format!("`{}` must derive Clone", decl.name),
                )
                .with_hint("generated DeepCopy builds on Clone: add `#[derive(Clone)]`"),
            );
            continue;
        }
        if !decl.visible {
            diags.push(
                Diagnostic::new(
                    decl.loc.clone(),
                    format!("`{}` must be `pub` or `pub(crate)`", decl.name),
                )
                .with_hint("generated code in another module refers to it"),
            );
        } else if decl.rust_path.is_none() {
            let module = decl.module_path.join("::");
            diags.push(
                Diagnostic::new(
                    decl.loc.clone(),
                    format!(
                        "`{}` cannot be named from generated code: module `{module}` is private and no reachable module re-exports it",
                        decl.name
                    ),
                )
                .with_hint(format!(
                    "re-export it from the group/version module (`pub use {}::*;`) or declare the module `pub mod`",
                    decl.module_path.last().map_or("types", String::as_str)
                )),
            );
        }
        let shape = match &decl.shape {
            Shape::Struct(fields) => {
                for f in fields.iter().filter(|f| !f.visible) {
                    diags.push(
                        Diagnostic::new(
                            f.loc.clone(),
                            format!(
                                "field `{}` of `{}` must be `pub` or `pub(crate)`",
                                f.rust_name, decl.name
                            ),
                        )
                        .with_hint("generated deep-copy code in another module reads it"),
                    );
                }
                CopyShape::Struct(
                    fields
                        .iter()
                        .map(|f| CopyField {
                            name: f.rust_name.clone(),
                            deep: contains_local(&f.ty),
                        })
                        .collect(),
                )
            }
            Shape::Newtype(inner) => CopyShape::Newtype {
                deep: contains_local(inner),
            },
            // A whole clone: the fields of a type serialized `into` another need not be API
            // types, so they are not resolved, nor copied one by one.
            Shape::Enum(_) | Shape::Wire(_) => CopyShape::Enum,
            Shape::Alias(_) => continue,
        };
        out.push(CopyType {
            type_path: type_path(api, options, key),
            shape,
        });
    }
    out
}
