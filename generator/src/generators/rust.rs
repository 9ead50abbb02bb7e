//! What the Rust generators share: converting the model into the templates crate's inputs
//! (what generated code relies on, public fields, `Clone`, reachable paths, resolve has
//! checked), and
//! laying the selected generators' modules out as files (`mod.rs` and one file per module,
//! or one file of inline modules for build.rs).

use std::collections::BTreeMap;

use kube_codegen_templates::input::{self as t, CopyField, CopyShape, CopyType};

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

/// A Rust generator's module, prepared: rendered on any thread.
pub(crate) struct RustModule {
    pub module: &'static str,
    pub doc: &'static str,
    pub cost: u8,
    pub render: super::RenderRust,
}

/// One generated Rust file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RustFile {
    /// `mod.rs`, declaring one module per selected Rust generator.
    Mod,
    /// One module's file (an index into the prepared modules).
    Module(usize),
    /// Every module in one file of inline modules ([`RustOptions::single_file`]).
    Single,
}

/// The files to render for the prepared modules, costliest first.
pub(crate) fn files(modules: &[RustModule], options: &RustOptions) -> Vec<RustFile> {
    if modules.is_empty() {
        return vec![];
    }
    if options.single_file.is_some() {
        return vec![RustFile::Single];
    }
    let mut by_cost: Vec<usize> = (0..modules.len()).collect();
    by_cost.sort_by_key(|&i| modules[i].cost);
    let mut files: Vec<RustFile> = by_cost.into_iter().map(RustFile::Module).collect();
    files.push(RustFile::Mod);
    files
}

/// The compile-time check that the runtime implements the contract this code is written
/// to (see `kube_codegen_runtime::contract`).
fn runtime_contract() -> proc_macro2::TokenStream {
    let n = proc_macro2::Literal::u32_unsuffixed(kube_codegen_templates::RUNTIME_CONTRACT);
    quote::quote! {
        /// Stops the build here, with a message saying which versions to align, when
        /// kube-codegen-runtime does not implement the contract this code was generated for.
        const _: () = ::kube_codegen_runtime::contract::check(#n);
    }
}

/// The front door every generated crate has (README, "What it generates"): the
/// clientset and the informer factory, named at the top of the generated code, so
/// `my_api::generated::Clientset` works, and `my_api::Clientset` too where the crate root
/// re-exports them (`init` and the importers write that line) or includes the single file.
fn front_door(modules: &[RustModule]) -> proc_macro2::TokenStream {
    let has = |name: &str| modules.iter().any(|m| m.module == name);
    let clientset = has("clientset").then(|| {
        quote::quote!(
            pub use self::clientset::Clientset;
        )
    });
    let informers = has("informers").then(|| {
        quote::quote!(
            pub use self::informers::SharedInformerFactory;
        )
    });
    quote::quote!(#clientset #informers)
}

/// One file, as (file name, contents). `modules` are in registry order, the order of
/// `mod.rs` and of the single file.
pub(crate) fn render(
    modules: &[RustModule],
    options: &RustOptions,
    file: RustFile,
) -> (String, String) {
    let format = |name: &str, tokens| {
        kube_codegen_templates::format_file(options.boilerplate.as_deref(), tokens).unwrap_or_else(
            |e| panic!("generated {name} does not parse: {e}; this is a kube-codegen bug"),
        )
    };
    match file {
        RustFile::Module(i) => {
            let m = &modules[i];
            (format!("{}.rs", m.module), format(m.module, (m.render)()))
        }
        RustFile::Mod => {
            let mods = modules.iter().map(|m| {
                let ident = kube_codegen_templates::ident(m.module);
                let doc = m.doc;
                // Generated files are formatted by prettyplease; rustfmt must not
                // reformat them, or `kube-codegen check` would report them stale.
                quote::quote! {
                    #[doc = #doc]
                    #[rustfmt::skip]
                    pub mod #ident;
                }
            });
            let contract = runtime_contract();
            let front_door = front_door(modules);
            let tokens = quote::quote! {
                //! Code generated by kube-codegen from the annotated API types.
                #contract
                #(#mods)*
                #front_door
            };
            ("mod.rs".to_owned(), format("mod.rs", tokens))
        }
        RustFile::Single => {
            let file = options.single_file.clone().unwrap_or_default();
            let front_door = front_door(modules);
            // Each module's tokens start with its inner `//!` docs, so no outer doc here.
            let modules = modules.iter().map(|m| {
                let ident = kube_codegen_templates::ident(m.module);
                let tokens = (m.render)();
                quote::quote! {
                    pub mod #ident { #tokens }
                }
            });
            let contract = runtime_contract();
            let contents = format(&file, quote::quote! { #contract #(#modules)* #front_door });
            (file, contents)
        }
    }
}

/// The path generated code names a local type by: where a reachable module defines or
/// re-exports it (see [`TypeDecl::rust_path`]).
pub(crate) fn type_path(api: &Api, options: &RustOptions, key: &str) -> String {
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

/// A group/version's Rust names: `group` for the group alone (`samplecontroller`), and
/// `version` for the group and version (`samplecontroller_v1alpha1`). Both are identifiers
/// ([`kube_codegen_templates::rust_ident`]): a group's label may start with a digit
/// (`1password` -> `_1password_v1`) or be a keyword (`self` -> `self_`).
pub(crate) struct Accessor {
    pub group: String,
    pub version: String,
}

/// Group/version accessor names: the group's first label and the version
/// (`samplecontroller_v1alpha1`), or the whole group where first labels collide.
pub(crate) fn accessors(api: &Api) -> BTreeMap<(String, String), Accessor> {
    let short = |g: &str| g.split('.').next().unwrap_or(g).to_owned();
    let mut count: BTreeMap<(String, String), usize> = BTreeMap::new();
    for (g, v) in api.packages.keys() {
        *count.entry((short(g), v.clone())).or_default() += 1;
    }
    api.packages
        .keys()
        .map(|(g, v)| {
            let base = if count[&(short(g), v.clone())] > 1 {
                g.clone()
            } else {
                short(g)
            };
            let accessor = Accessor {
                group: kube_codegen_templates::rust_ident(&base),
                version: kube_codegen_templates::rust_ident(&format!("{base}_{v}")),
            };
            ((g.clone(), v.clone()), accessor)
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

pub(crate) fn packages(api: &Api, options: &RustOptions) -> Vec<t::Package> {
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
            let spec_type = field("spec")
                .filter(|f| f.rust_name == "spec")
                .and_then(|f| rust_type(api, options, &f.ty));
            let constructor = constructor(decl, fields, |ty| rust_type(api, options, ty));
            let status_type = field("status")
                .filter(|f| f.rust_name == "status")
                .and_then(|f| match &f.ty {
                    TypeRef::Option(inner) => rust_type(api, options, inner),
                    _ => None,
                });
            let mut methods = vec![];
            for m in k.client.iter().flat_map(|c| &c.methods) {
                methods.push(t::Method {
                    name: m.name.clone(),
                    verb: m.verb,
                    subresource: m.subresource.clone(),
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
                constructor,
                status_type,
                derived: matches!(k.dialect, SchemaDialect::KubeDerive { .. }),
                // Named after the struct, as the applyconfigurations generator names it:
                // a kube-derive kind's struct may be named apart from its kind (`root`).
                apply_configuration: format!(
                    "super::super::applyconfigurations::{}::{}",
                    accessors[&(group.clone(), version.clone())].version,
                    kube_codegen_templates::rust_ident(&format!("{}ApplyConfiguration", decl.name))
                ),
            });
        }
        let accessor = &accessors[&(group.clone(), version.clone())];
        out.push(t::Package {
            group: group.clone(),
            version: version.clone(),
            accessor: accessor.version.clone(),
            group_accessor: accessor.group.clone(),
            kinds,
        });
    }
    out
}

/// What `new(name, spec)` takes and how it starts a kind's fields besides its
/// `types: TypeMeta` and `metadata` (docs/src/guide/api-types.md): `spec` is the argument
/// (`Some(spec)` for `spec: Option<T>`), an `Option` starts as `None`, a field with
/// `#[serde(default)]` or `#[serde(skip)]` at its type's default, and, when the kind is
/// `Default`, any other field from the kind's default. `None` (no `new`) when those three
/// are missing or a field has nothing to start from: the caller would have to pass it, and
/// a constructor with more arguments than `name` and `spec` is a struct literal by another
/// name.
fn constructor(
    decl: &TypeDecl,
    fields: &[Field],
    rust_type: impl Fn(&TypeRef) -> Option<String>,
) -> Option<t::Constructor> {
    let named = |rust: &str, json: &str| {
        fields
            .iter()
            .find(|f| f.rust_name == rust && f.json_name == json && !f.skip && !f.flatten)
    };
    let type_meta = fields
        .iter()
        .any(|f| f.flatten && f.ty == TypeRef::TypeMeta && f.rust_name == "types");
    let spec = named("spec", "spec")?;
    if !type_meta || named("metadata", "metadata").is_none() {
        return None;
    }
    let (spec, spec_optional) = match &spec.ty {
        TypeRef::Option(inner) => (rust_type(inner)?, true),
        ty => (rust_type(ty)?, false),
    };
    let kind_default = decl.serde.default || decl.derives.iter().any(|d| d == "Default");
    let mut out = t::Constructor {
        spec,
        spec_optional,
        ..t::Constructor::default()
    };
    for f in fields {
        if matches!(f.rust_name.as_str(), "types" | "metadata" | "spec") {
            continue;
        }
        if f.ty.is_option() {
            out.fields.push((f.rust_name.clone(), t::FieldStart::None));
        } else if (f.has_default || f.skip) && f.default_fn.is_none() && !decl.serde.default {
            out.fields
                .push((f.rust_name.clone(), t::FieldStart::Default));
        } else if kind_default {
            out.rest_from_default = true;
        } else {
            return None;
        }
    }
    Some(out)
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

pub(crate) fn copy_types(api: &Api, options: &RustOptions) -> Vec<CopyType> {
    let mut out = vec![];
    for (key, decl) in &api.types {
        // An alias is another name for a type that has (or needs) no impl of its own, and
        // needs neither Clone nor visibility.
        if matches!(decl.shape, Shape::Alias(_)) {
            continue;
        }
        let shape = match &decl.shape {
            Shape::Struct(fields) => CopyShape::Struct(
                fields
                    .iter()
                    .map(|f| CopyField {
                        name: f.rust_name.clone(),
                        deep: contains_local(&f.ty),
                    })
                    .collect(),
            ),
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
