//! The `conversion` generator: conversions between the versions of a kind, hub and spoke
//! (conversion-gen's field-by-field conversions, in controller-runtime's hub-and-spoke
//! layout), for kinds whose storage version carries `+kube-codegen:conversion=hub`.
//!
//! For each spoke version it writes `kube_codegen_runtime::conversion::Convertible<Hub>`:
//! every field that matches by name and compatible type converts by itself, recursively
//! (structs, newtypes, enums, `Option`, lists, maps); every field that does not becomes a
//! method of a generated `<Kind><Version>ManualConversion` trait without a default, which the
//! user implements for the spoke kind. Until they do, the build fails at the call, with a
//! message that names each field and method. Fields only the hub has are restored from the
//! `<group>/conversion-data` annotation (see the runtime's `conversion` module), so a
//! spoke -> hub -> spoke trip loses nothing. `+k8s:conversion-gen=false` on a type makes its
//! whole conversion hand-written. One `KindConversions` per kind, in `KINDS`, is the dispatch
//! table a conversion webhook serves.

use std::collections::{BTreeMap, BTreeSet};

use kube_codegen_templates::{ident, path};
use proc_macro2::TokenStream;
use quote::quote;

use super::{Context, Generator, GeneratorName, Output, RenderRust};
use crate::markers::{Args, MarkerSpec, Name, PT, T};
use crate::model::*;

pub(super) const GENERATOR: Generator = Generator {
    name: GeneratorName::Conversion,
    id: "conversion",
    about: "Conversions between the versions of a kind (hub and spoke) and the dispatch table of a conversion webhook, for kinds marked `+kube-codegen:conversion=hub` (conversion-gen).",
    requires: &[],
    markers: MARKERS,
    checks: &[],
    output: Output::Rust {
        module: "conversion",
        doc: " Conversions between the versions of each multi-version kind.",
        cost: 2,
        prepare,
    },
};

/// The conversion markers.
pub(super) const MARKERS: &[MarkerSpec] = &[
    MarkerSpec {
        name: Name::Conversion,
        args: Args::Value,
        levels: T,
    },
    // Go's package-level `+k8s:conversion-gen=<package path>` means nothing here and is
    // accepted; on a type, `=false` makes its conversion hand-written.
    MarkerSpec {
        name: Name::ConversionGen,
        args: Args::Value,
        levels: PT,
    },
    MarkerSpec {
        name: Name::ConversionGenExplicitFrom,
        args: Args::Value,
        levels: T,
    },
];

/// Whether any kind opted in: without one, the module is not written at all.
pub(super) fn wanted(api: &Api) -> bool {
    api.packages
        .values()
        .flat_map(|p| &p.kinds)
        .any(|k| k.conversion_hub.is_some() && !k.skip)
}

fn prepare(cx: &Context) -> RenderRust {
    // Token streams cannot cross threads; the code is built here as text and parsed back
    // by the renderer.
    let code = render(cx).to_string();
    Box::new(move || code.parse().expect("generated conversion code parses"))
}

/// The direction of a conversion function.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Dir {
    /// Spoke to hub: takes the hub restored from the annotation, if any.
    ToHub,
    /// Hub to spoke.
    FromHub,
}

impl Dir {
    fn suffix(self) -> &'static str {
        match self {
            Dir::ToHub => "to_hub",
            Dir::FromHub => "from_hub",
        }
    }
}

/// A hand-written function the user must provide: a method of the kind's manual trait.
struct Manual {
    name: String,
    /// Says which field (or type) and why, in the trait's docs and the build error.
    why: String,
    signature: TokenStream,
}

/// How a generated type-pair function is called.
#[derive(Clone)]
struct PairFn {
    name: syn::Ident,
    /// Struct pairs take the restored hub value in [`Dir::ToHub`]; enums never do.
    takes_restored: bool,
    /// A method of the manual trait (the whole type is hand-written).
    manual: bool,
}

fn snake(s: &str) -> String {
    kube_codegen_templates::snake_case(s)
}

/// One spoke kind's generation state.
struct Gen<'a, 'b> {
    api: &'a Api,
    cx: &'a Context<'a>,
    spoke_version: String,
    hub_version: String,
    /// `<spoke kind path>` as tokens, for `<Kind as Trait>::method` calls.
    spoke_kind: TokenStream,
    trait_name: syn::Ident,
    fns: BTreeMap<(String, String, Dir), PairFn>,
    /// Function names of the whole module.
    names: &'b mut BTreeSet<String>,
    items: Vec<TokenStream>,
    manual: Vec<Manual>,
    manual_names: BTreeSet<String>,
    /// Closure variable counter, for nested closures.
    depth: usize,
}

impl Gen<'_, '_> {
    fn ty(&self, key: &str) -> syn::Path {
        path(&super::rust::type_path(self.api, self.cx.rust, key))
    }

    fn fresh(&mut self, base: String) -> String {
        let mut name = base.clone();
        let mut n = 2;
        while !self.names.insert(name.clone()) {
            name = format!("{base}_{n}");
            n += 1;
        }
        name
    }

    fn manual_name(&mut self, base: String) -> String {
        let mut name = base.clone();
        let mut n = 2;
        while !self.manual_names.insert(name.clone()) {
            name = format!("{base}_{n}");
            n += 1;
        }
        name
    }

    fn opted_out(&self, key: &str) -> bool {
        self.api.types.get(key).is_some_and(|d| {
            d.markers.iter().any(|m| {
                m.name == Name::ConversionGen && m.string_value().is_ok_and(|v| v.trim() == "false")
            })
        })
    }

    /// Whether converting `a` to `b` reaches a struct pair, which reads the restored hub.
    fn reads_restored(&self, a: &TypeRef, b: &TypeRef) -> bool {
        let (a, b) = (a.unalias(), b.unalias());
        if a == b {
            return false;
        }
        match (a, b) {
            (TypeRef::Option(x), TypeRef::Option(y)) => self.reads_restored(x, y),
            (
                TypeRef::List {
                    item: x,
                    set: false,
                },
                TypeRef::List {
                    item: y,
                    set: false,
                },
            ) => self.reads_restored(x, y),
            (TypeRef::Map(x), TypeRef::Map(y)) => self.reads_restored(x, y),
            (TypeRef::Local(ka), TypeRef::Local(kb)) => {
                match (self.api.types.get(ka), self.api.types.get(kb)) {
                    (Some(da), Some(db)) => match (&da.shape, &db.shape) {
                        (Shape::Struct(_), Shape::Struct(_)) => true,
                        (Shape::Newtype(x), Shape::Newtype(y)) => self.reads_restored(x, y),
                        _ => self.opted_out(ka) || self.opted_out(kb),
                    },
                    _ => false,
                }
            }
            _ => false,
        }
    }

    /// An expression converting `src` (of type `&a`) to a `b`, or `None` when the types do
    /// not correspond. `restored` is an expression of type `Option<&b>` (only in
    /// [`Dir::ToHub`]).
    fn convert(
        &mut self,
        dir: Dir,
        a: &TypeRef,
        b: &TypeRef,
        src: TokenStream,
        restored: &TokenStream,
    ) -> Option<TokenStream> {
        let (a, b) = (a.unalias(), b.unalias());
        if a == b {
            return Some(quote!(::core::clone::Clone::clone(#src)));
        }
        self.depth += 1;
        let v = ident(&format!("v{}", self.depth));
        let r = ident(&format!("r{}", self.depth));
        let out = match (a, b) {
            (TypeRef::Option(x), TypeRef::Option(y)) => {
                let inner_restored = quote!(#restored.and_then(|#r| #r.as_ref()));
                let inner = self.convert(dir, x, y, quote!(#v), &inner_restored)?;
                Some(quote!((#src).as_ref().map(|#v| #inner)))
            }
            (TypeRef::List { item: x, set: sa }, TypeRef::List { item: y, set: sb })
                if sa == sb =>
            {
                if !sa && dir == Dir::ToHub && self.reads_restored(x, y) {
                    let i = ident(&format!("i{}", self.depth));
                    let inner_restored = quote!(#restored.and_then(|#r| #r.get(#i)));
                    let inner = self.convert(dir, x, y, quote!(#v), &inner_restored)?;
                    Some(quote!((#src).iter().enumerate().map(|(#i, #v)| #inner).collect()))
                } else {
                    let inner = self.convert(dir, x, y, quote!(#v), &quote!(None))?;
                    Some(quote!((#src).iter().map(|#v| #inner).collect()))
                }
            }
            (TypeRef::Map(x), TypeRef::Map(y)) => {
                let k = ident(&format!("k{}", self.depth));
                let inner_restored = if dir == Dir::ToHub && self.reads_restored(x, y) {
                    quote!(#restored.and_then(|#r| #r.get(#k)))
                } else {
                    quote!(None)
                };
                let inner = self.convert(dir, x, y, quote!(#v), &inner_restored)?;
                Some(
                    quote!((#src).iter().map(|(#k, #v)| (::core::clone::Clone::clone(#k), #inner)).collect()),
                )
            }
            (TypeRef::Local(ka), TypeRef::Local(kb)) => self.local(dir, ka, kb, src, restored),
            _ => None,
        };
        self.depth -= 1;
        out
    }

    /// Two local types: a generated (or hand-written) function per pair.
    fn local(
        &mut self,
        dir: Dir,
        ka: &str,
        kb: &str,
        src: TokenStream,
        restored: &TokenStream,
    ) -> Option<TokenStream> {
        let (da, db) = (self.api.types.get(ka)?, self.api.types.get(kb)?);
        if let (Shape::Newtype(x), Shape::Newtype(y)) = (&da.shape, &db.shape)
            && !self.opted_out(ka)
            && !self.opted_out(kb)
        {
            let (x, y) = (x.clone(), y.clone());
            let r = ident(&format!("r{}", self.depth));
            let inner_restored = quote!(#restored.map(|#r| &#r.0));
            let inner = self.convert(dir, &x, &y, quote!(&(#src).0), &inner_restored)?;
            let tb = self.ty(kb);
            return Some(quote!(#tb(#inner)));
        }
        let f = self.pair_fn(dir, ka, kb)?;
        let name = &f.name;
        let callee = if f.manual {
            let (spoke_kind, trait_name) = (&self.spoke_kind, &self.trait_name);
            quote!(<#spoke_kind as #trait_name>::#name)
        } else {
            quote!(#name)
        };
        Some(if f.takes_restored {
            quote!(#callee(#src, #restored))
        } else {
            quote!(#callee(#src))
        })
    }

    /// The function converting type `ka` to `kb`, generated on first use.
    fn pair_fn(&mut self, dir: Dir, ka: &str, kb: &str) -> Option<PairFn> {
        let memo = (ka.to_owned(), kb.to_owned(), dir);
        if let Some(f) = self.fns.get(&memo) {
            return Some(f.clone());
        }
        let (da, db) = (
            self.api.types.get(ka)?.clone(),
            self.api.types.get(kb)?.clone(),
        );
        let spoke = if dir == Dir::ToHub { &da } else { &db };
        let (ta, tb) = (self.ty(ka), self.ty(kb));
        // Opted-out types get the restored hub value, as generated struct conversions do
        // (`reads_restored` says so for them); enums and mismatched shapes do not.
        let whole_manual = |g: &mut Self, why: String, restored: bool| {
            let name = g.manual_name(format!("{}_{}", snake(&spoke.name), dir.suffix()));
            let method = ident(&name);
            let takes_restored = restored && dir == Dir::ToHub;
            let signature = if takes_restored {
                quote!(fn #method(src: &#ta, restored: Option<&#tb>) -> #tb)
            } else {
                quote!(fn #method(src: &#ta) -> #tb)
            };
            g.manual.push(Manual {
                name,
                why,
                signature,
            });
            PairFn {
                name: method,
                takes_restored,
                manual: true,
            }
        };
        let (sv, hv) = (self.spoke_version.clone(), self.hub_version.clone());
        if self.opted_out(ka) || self.opted_out(kb) {
            let (hub_name, spoke_marked) = match dir {
                Dir::ToHub => (&db.name, self.opted_out(ka)),
                Dir::FromHub => (&da.name, self.opted_out(kb)),
            };
            let why = format!(
                "`{}` of {} is marked `+k8s:conversion-gen=false`: the conversion {} the hub's `{hub_name}` ({hv}) is hand-written",
                if spoke_marked { &spoke.name } else { hub_name },
                if spoke_marked { &sv } else { &hv },
                if dir == Dir::ToHub {
                    format!("of `{}` ({sv}) to", spoke.name)
                } else {
                    format!("to `{}` ({sv}) from", spoke.name)
                },
            );
            let f = whole_manual(self, why, true);
            self.fns.insert(memo, f.clone());
            return Some(f);
        }
        match (&da.shape, &db.shape) {
            (Shape::Struct(_), Shape::Struct(_)) => {
                let name = ident(&self.fresh(format!(
                    "{}_{}_{}",
                    if dir == Dir::ToHub { &sv } else { &hv },
                    snake(&da.name),
                    dir.suffix()
                )));
                let f = PairFn {
                    name: name.clone(),
                    takes_restored: dir == Dir::ToHub,
                    manual: false,
                };
                // Registered before the body is built, so recursive types terminate.
                self.fns.insert(memo, f.clone());
                let body = self.struct_body(dir, ka, kb, None);
                let doc = format!(
                    " `{}` ({}) to `{}` ({}).",
                    da.name,
                    if dir == Dir::ToHub { &sv } else { &hv },
                    db.name,
                    if dir == Dir::ToHub { &hv } else { &sv },
                );
                let item = match dir {
                    Dir::ToHub => {
                        let restored = if body.reads_restored {
                            quote!(restored)
                        } else {
                            quote!(_restored)
                        };
                        let b = body.tokens;
                        quote! {
                            #[doc = #doc]
                            fn #name(src: &#ta, #restored: Option<&#tb>) -> #tb { #b }
                        }
                    }
                    Dir::FromHub => {
                        let b = body.tokens;
                        quote! {
                            #[doc = #doc]
                            fn #name(src: &#ta) -> #tb { #b }
                        }
                    }
                };
                self.items.push(item);
                Some(f)
            }
            (Shape::Enum(va), Shape::Enum(vb)) => {
                let name = ident(&self.fresh(format!(
                    "{}_{}_{}",
                    if dir == Dir::ToHub { &sv } else { &hv },
                    snake(&da.name),
                    dir.suffix()
                )));
                let f = PairFn {
                    name: name.clone(),
                    takes_restored: false,
                    manual: false,
                };
                self.fns.insert(memo.clone(), f.clone());
                match self.enum_arms(dir, &ta, &tb, va, vb) {
                    Ok(arms) => {
                        let doc = format!(" `{}` to `{}`, variant by variant.", da.name, db.name);
                        self.items.push(quote! {
                            #[doc = #doc]
                            fn #name(src: &#ta) -> #tb {
                                match src { #(#arms)* }
                            }
                        });
                        Some(f)
                    }
                    Err(variant) => {
                        let why = format!(
                            "variant `{}::{variant}` has no variant of that name and shape in `{}` ({})",
                            da.name,
                            db.name,
                            if dir == Dir::ToHub { &hv } else { &sv },
                        );
                        let f = whole_manual(self, why, false);
                        self.fns.insert(memo, f.clone());
                        Some(f)
                    }
                }
            }
            _ => {
                let why = format!(
                    "`{}` and the hub's `{}` differ in shape (struct, enum, newtype)",
                    spoke.name,
                    if dir == Dir::ToHub {
                        &db.name
                    } else {
                        &da.name
                    },
                );
                let f = whole_manual(self, why, false);
                self.fns.insert(memo, f.clone());
                Some(f)
            }
        }
    }

    /// The match arms of an enum conversion, or the first variant without a counterpart.
    fn enum_arms(
        &mut self,
        dir: Dir,
        ta: &syn::Path,
        tb: &syn::Path,
        va: &[Variant],
        vb: &[Variant],
    ) -> Result<Vec<TokenStream>, String> {
        let mut arms = vec![];
        for a in va {
            let Some(b) = vb.iter().find(|b| b.rust_name == a.rust_name) else {
                return Err(a.rust_name.clone());
            };
            let name = ident(&a.rust_name);
            let arm = match (&a.shape, &b.shape) {
                (VariantShape::Unit, VariantShape::Unit) => quote!(#ta::#name => #tb::#name,),
                (VariantShape::Newtype(x), VariantShape::Newtype(y)) => {
                    let inner = self
                        .convert(dir, x, y, quote!(v), &quote!(None))
                        .ok_or_else(|| a.rust_name.clone())?;
                    quote!(#ta::#name(v) => #tb::#name(#inner),)
                }
                (VariantShape::Struct(fa), VariantShape::Struct(fb)) if fa.len() == fb.len() => {
                    let mut binds = vec![];
                    let mut inits = vec![];
                    for f in fa {
                        let g = fb
                            .iter()
                            .find(|g| g.rust_name == f.rust_name)
                            .ok_or_else(|| a.rust_name.clone())?;
                        let fname = ident(&f.rust_name);
                        let inner = self
                            .convert(dir, &f.ty, &g.ty, quote!(#fname), &quote!(None))
                            .ok_or_else(|| a.rust_name.clone())?;
                        binds.push(quote!(#fname));
                        inits.push(quote!(#fname: #inner));
                    }
                    quote!(#ta::#name { #(#binds),* } => #tb::#name { #(#inits),* },)
                }
                _ => return Err(a.rust_name.clone()),
            };
            arms.push(arm);
        }
        Ok(arms)
    }

    /// The body of a struct conversion: a struct literal of `kb` built from `src: &ka`, then
    /// the hand-written functions for fields without a counterpart. `kind` is set for the
    /// kind itself, whose `apiVersion`/`kind` and `metadata` the caller fills.
    fn struct_body(&mut self, dir: Dir, ka: &str, kb: &str, kind: Option<&KindFields>) -> Body {
        let (sv, hv) = (self.spoke_version.clone(), self.hub_version.clone());
        let (da, db) = (self.api.types[ka].clone(), self.api.types[kb].clone());
        let (Shape::Struct(fa), Shape::Struct(fb)) = (&da.shape, &db.shape) else {
            unreachable!("struct_body is called for struct pairs")
        };
        let (ta, tb) = (self.ty(ka), self.ty(kb));
        let mut inits = vec![];
        let mut reads_restored = false;
        let mut calls = vec![];
        // Fields of `a` that found their place in `b`.
        let mut converted: BTreeSet<&str> = BTreeSet::new();
        let spoke_kind = self.spoke_kind.clone();
        let trait_name = self.trait_name.clone();
        for g in fb {
            let gname = ident(&g.rust_name);
            if let Some(k) = kind {
                let fill = match g.ty.unalias() {
                    TypeRef::TypeMeta => Some(&k.type_meta),
                    TypeRef::ObjectMeta => Some(&k.metadata),
                    _ => None,
                };
                if let Some(fill) = fill {
                    inits.push(quote!(#gname: #fill));
                    converted.insert(&g.rust_name);
                    continue;
                }
            }
            let matched = fa.iter().find(|f| f.rust_name == g.rust_name);
            let expr = matched.and_then(|f| {
                let reads = dir == Dir::ToHub && self.reads_restored(&f.ty, &g.ty);
                let restored = if reads {
                    quote!(restored.map(|r| &r.#gname))
                } else {
                    quote!(None)
                };
                let e = self.convert(dir, &f.ty, &g.ty, quote!(&src.#gname), &restored)?;
                reads_restored |= reads;
                Some(e)
            });
            match (expr, dir) {
                (Some(e), _) => {
                    inits.push(quote!(#gname: #e));
                    converted.insert(&g.rust_name);
                }
                // Only the hub has it: what the annotation kept, else the default.
                (None, Dir::ToHub) => {
                    reads_restored = true;
                    inits.push(quote!(#gname: restored.map(|r| ::core::clone::Clone::clone(&r.#gname)).unwrap_or_default()));
                }
                // Only the spoke has it (or the hub's differs in type): hand-written.
                (None, Dir::FromHub) => {
                    inits.push(quote!(#gname: ::core::default::Default::default()));
                    let name = self.manual_name(format!(
                        "{}_{}_from_hub",
                        snake(&db.name),
                        g.rust_name.trim_start_matches("r#")
                    ));
                    let method = ident(&name);
                    self.manual.push(Manual {
                        why: format!(
                            "`{}.{}` ({sv}) has no field of that name and type in the hub's `{}` ({hv}): set it in `out` from `src`",
                            db.name, g.rust_name, da.name
                        ),
                        name,
                        signature: quote!(fn #method(src: &#ta, out: &mut #tb)),
                    });
                    calls.push(quote!(<#spoke_kind as #trait_name>::#method(src, &mut out);));
                }
            }
        }
        if dir == Dir::ToHub {
            // Spoke fields the hub has no place for (by name and type): hand-written.
            for f in fa
                .iter()
                .filter(|f| !converted.contains(f.rust_name.as_str()))
            {
                let name = self.manual_name(format!(
                    "{}_{}_to_hub",
                    snake(&da.name),
                    f.rust_name.trim_start_matches("r#")
                ));
                let method = ident(&name);
                self.manual.push(Manual {
                    why: format!(
                        "`{}.{}` ({sv}) has no field of that name and type in the hub's `{}` ({hv}): write it into `out`",
                        da.name, f.rust_name, db.name
                    ),
                    name,
                    signature: quote!(fn #method(src: &#ta, out: &mut #tb)),
                });
                calls.push(quote!(<#spoke_kind as #trait_name>::#method(src, &mut out);));
            }
        }
        let tokens = if calls.is_empty() {
            quote!(#tb { #(#inits),* })
        } else {
            quote! {
                let mut out = #tb { #(#inits),* };
                #(#calls)*
                out
            }
        };
        Body {
            tokens,
            reads_restored,
        }
    }
}

/// A struct body and whether it reads `restored`.
struct Body {
    tokens: TokenStream,
    reads_restored: bool,
}

/// How the kind's own `apiVersion`/`kind` and `metadata` fields are filled.
struct KindFields {
    type_meta: TokenStream,
    metadata: TokenStream,
}

/// The whole module.
fn render(cx: &Context) -> TokenStream {
    let api = cx.api;
    let mut items = vec![];
    let mut table = vec![];
    let mut statics: BTreeSet<String> = BTreeSet::new();
    let mut names: BTreeSet<String> = BTreeSet::new();
    for ((group, kind_name), versions) in api.crd_groups() {
        let versions: Vec<_> = versions.into_iter().filter(|(_, k)| !k.skip).collect();
        let Some((hub_pkg, hub)) = versions
            .iter()
            .find(|(_, k)| k.conversion_hub.is_some() && k.storage)
            .copied()
        else {
            continue;
        };
        if versions.len() < 2 {
            continue;
        }
        let hub_ty = path(&super::rust::type_path(api, cx.rust, &hub.type_key));
        let data_key = format!("{group}/conversion-data");
        let mut spoke_arms_in = vec![];
        let mut spoke_arms_out = vec![];
        let mut all_versions = vec![hub_pkg.version.clone()];
        for (p, k) in &versions {
            if k.type_key == hub.type_key {
                continue;
            }
            all_versions.push(p.version.clone());
            let spoke_ty = path(&super::rust::type_path(api, cx.rust, &k.type_key));
            let trait_name = ident(&format!(
                "{}{}ManualConversion",
                kind_name,
                kube_codegen_templates::pascal_case(&p.version)
            ));
            let mut g = Gen {
                api,
                cx,
                spoke_version: p.version.clone(),
                hub_version: hub_pkg.version.clone(),
                spoke_kind: quote!(#spoke_ty),
                trait_name: trait_name.clone(),
                fns: BTreeMap::new(),
                names: &mut names,
                items: vec![],
                manual: vec![],
                manual_names: BTreeSet::new(),
                depth: 0,
            };
            let is_struct = |key: &str| {
                api.types
                    .get(key)
                    .is_some_and(|d| matches!(d.shape, Shape::Struct(_)))
            };
            if !is_struct(&k.type_key) || !is_struct(&hub.type_key) {
                continue;
            }
            let hub_api_version = format!("{group}/{}", hub_pkg.version);
            let spoke_api_version = format!("{group}/{}", p.version);
            let to_hub = g.struct_body(
                Dir::ToHub,
                &k.type_key,
                &hub.type_key,
                Some(&KindFields {
                    type_meta: quote!(::kube::core::TypeMeta {
                        api_version: #hub_api_version.into(),
                        kind: #kind_name.into(),
                    }),
                    metadata: quote!(meta),
                }),
            );
            let from_hub = g.struct_body(
                Dir::FromHub,
                &hub.type_key,
                &k.type_key,
                Some(&KindFields {
                    type_meta: quote!(::kube::core::TypeMeta {
                        api_version: #spoke_api_version.into(),
                        kind: #kind_name.into(),
                    }),
                    metadata: quote!(::core::clone::Clone::clone(&src.metadata)),
                }),
            );
            let to_hub_tokens = to_hub.tokens;
            let from_hub_tokens = from_hub.tokens;
            let restored_binding = if to_hub.reads_restored {
                quote!(let restored = restored.as_ref();)
            } else {
                quote!(let _ = restored;)
            };
            let doc = format!(
                " {kind_name} {} is a spoke of the hub {}: fields matching by name and type convert by themselves.",
                p.version, hub_pkg.version
            );
            items.extend(std::mem::take(&mut g.items));
            items.push(quote! {
                #[doc = #doc]
                impl ::kube_codegen_runtime::conversion::Convertible<#hub_ty> for #spoke_ty {
                    fn to_hub(&self) -> #hub_ty {
                        let src = self;
                        let mut meta = ::core::clone::Clone::clone(&src.metadata);
                        let restored: Option<#hub_ty> = ::kube_codegen_runtime::conversion::take_stored(&mut meta.annotations, #data_key);
                        #restored_binding
                        #to_hub_tokens
                    }

                    fn from_hub(hub: &#hub_ty) -> Self {
                        let src = hub;
                        let mut out: Self = { #from_hub_tokens };
                        // Keep what this version cannot hold, so writing it back loses nothing.
                        if !::kube_codegen_runtime::conversion::same(&<Self as ::kube_codegen_runtime::conversion::Convertible<#hub_ty>>::to_hub(&out), hub) {
                            ::kube_codegen_runtime::conversion::store(&mut out.metadata.annotations, #data_key, hub);
                        }
                        out
                    }
                }
            });
            if !g.manual.is_empty() {
                let message = format!(
                    "{kind_name} {} needs hand-written conversions to and from its hub {}: implement `{trait_name}` for `{{Self}}`",
                    p.version, hub_pkg.version
                );
                let notes: Vec<String> = g
                    .manual
                    .iter()
                    .map(|m| format!("write `fn {}`: {}", m.name, m.why))
                    .collect();
                let methods = g.manual.iter().map(|m| {
                    let doc = format!(" {}.", m.why);
                    let sig = &m.signature;
                    quote!(#[doc = #doc] #sig;)
                });
                let doc = format!(
                    " The conversions of {kind_name} {} that kube-codegen cannot derive: implement it for the spoke kind.",
                    p.version
                );
                items.push(quote! {
                    #[doc = #doc]
                    #[diagnostic::on_unimplemented(message = #message, #(note = #notes),*)]
                    pub trait #trait_name {
                        #(#methods)*
                    }
                });
            }
            let v = &p.version;
            spoke_arms_in.push(quote! {
                #v => ::kube_codegen_runtime::conversion::Convertible::<#hub_ty>::to_hub(&::kube_codegen_runtime::conversion::decode::<#spoke_ty>(object)?),
            });
            spoke_arms_out.push(quote! {
                #v => ::kube_codegen_runtime::conversion::encode(&<#spoke_ty as ::kube_codegen_runtime::conversion::Convertible<#hub_ty>>::from_hub(&hub)),
            });
        }
        let base = format!(
            "convert_{}_{}",
            group.split('.').next().unwrap_or(&group).replace('-', "_"),
            snake(&kind_name)
        );
        let mut fname = base.clone();
        let mut n = 2;
        while !statics.insert(fname.clone()) {
            fname = format!("{base}_{n}");
            n += 1;
        }
        let fname = ident(&fname);
        let index = table.len();
        let hv = &hub_pkg.version;
        let doc =
            format!(" Converts a {kind_name}.{group} of any version to `to` through the hub {hv}.");
        items.push(quote! {
            #[doc = #doc]
            fn #fname(
                object: ::serde_json::Value,
                to: &str,
            ) -> ::core::result::Result<::serde_json::Value, ::kube_codegen_runtime::conversion::ConversionError> {
                let from = object
                    .get("apiVersion")
                    .and_then(::serde_json::Value::as_str)
                    .and_then(|v| v.rsplit_once('/'))
                    .map(|(_, v)| v.to_owned())
                    .unwrap_or_default();
                if from == to {
                    return Ok(object);
                }
                let hub: #hub_ty = match from.as_str() {
                    #hv => ::kube_codegen_runtime::conversion::decode(object)?,
                    #(#spoke_arms_in)*
                    other => return Err(KINDS[#index].unknown_version(other)),
                };
                match to {
                    #hv => ::kube_codegen_runtime::conversion::encode(&hub),
                    #(#spoke_arms_out)*
                    other => Err(KINDS[#index].unknown_version(other)),
                }
            }
        });
        let mut sorted = all_versions.clone();
        sorted.sort();
        table.push(quote! {
            ::kube_codegen_runtime::conversion::KindConversions {
                group: #group,
                kind: #kind_name,
                hub: #hv,
                versions: &[#(#sorted),*],
                convert: #fname,
            }
        });
    }
    quote! {
        //! Conversions between the versions of each kind whose storage version is marked
        //! `+kube-codegen:conversion=hub`, and the table a conversion webhook dispatches by.
        // Generated uniformly: every nested value converts through a closure over a
        // borrowed source, also where a function, an auto-borrow or a plain clone would do
        // (an `Option` of two versions' aliases of one type: `as_ref().map(clone)`).
        #![allow(clippy::redundant_closure, clippy::needless_borrow, clippy::useless_asref)]

        /// Every multi-version kind's conversions: `Converter::new(KINDS)` serves them all.
        pub static KINDS: &[::kube_codegen_runtime::conversion::KindConversions] = &[#(#table),*];

        #(#items)*
    }
}
