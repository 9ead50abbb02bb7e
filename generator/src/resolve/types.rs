//! The Rust types reachable from the kinds, resolved into [`TypeDecl`]s: paths followed
//! through imports and re-exports, serde attributes applied, shapes a structural schema
//! cannot express refused with a located error.

use std::collections::BTreeMap;

use crate::KubernetesVersion;
use crate::diagnostics::{Diagnostic, Diagnostics};
use crate::markers::{Level, Marker, Name};
use crate::model::*;
use crate::read::{self as src, Module, doc_text};

use super::paths::{Modules, anchored, public_path};
use super::{RawType, key, parse_markers};

/// Apply a serde `rename_all` rule. Fields are written in snake_case, variants in PascalCase.
pub fn rename(name: &str, rule: &str, is_variant: bool) -> Result<String, String> {
    // The common case, an ASCII field name under `camelCase`, in one pass: the general
    // path's words, capitals and joins cost about 1,000 instructions a field (0.6% of a
    // 100-kind CRD run). The same result: each `_`-separated word's first character
    // upper-cased, the underscores dropped, then the first character lower-cased.
    if !is_variant && rule == "camelCase" && name.is_ascii() {
        let mut out = String::with_capacity(name.len());
        let mut word_start = true;
        for b in name.bytes() {
            if b == b'_' {
                word_start = true;
            } else {
                out.push(char::from(if word_start {
                    b.to_ascii_uppercase()
                } else {
                    b
                }));
                word_start = false;
            }
        }
        if let Some(first) = out.get_mut(..1) {
            first.make_ascii_lowercase();
        }
        return Ok(out);
    }
    rename_by_words(name, rule, is_variant)
}

/// [`rename`] by splitting `name` into words and joining them by `rule`.
fn rename_by_words(name: &str, rule: &str, is_variant: bool) -> Result<String, String> {
    let words: Vec<String> = if is_variant {
        let mut words = vec![];
        let mut cur = String::new();
        for c in name.chars() {
            if c.is_uppercase() && !cur.is_empty() {
                words.push(std::mem::take(&mut cur));
            }
            cur.push(c);
        }
        words.push(cur);
        words.into_iter().map(|w| w.to_lowercase()).collect()
    } else {
        name.split('_').map(str::to_owned).collect()
    };
    let cap = |w: &str| {
        let mut c = w.chars();
        c.next()
            .map(|f| f.to_uppercase().collect::<String>() + c.as_str())
            .unwrap_or_default()
    };
    Ok(match rule {
        "lowercase" => words.concat().to_lowercase(),
        "UPPERCASE" => words.concat().to_uppercase(),
        "PascalCase" => words.iter().map(|w| cap(w)).collect(),
        "camelCase" => {
            let pascal: String = words.iter().map(|w| cap(w)).collect();
            let mut c = pascal.chars();
            c.next()
                .map(|f| f.to_lowercase().collect::<String>() + c.as_str())
                .unwrap_or_default()
        }
        "snake_case" => words.join("_"),
        "SCREAMING_SNAKE_CASE" => words.join("_").to_uppercase(),
        "kebab-case" => words.join("-"),
        "SCREAMING-KEBAB-CASE" => words.join("-").to_uppercase(),
        other => return Err(format!("unknown serde rename_all rule `{other}`")),
    })
}

pub(super) struct Resolver<'a> {
    pub(super) raw: &'a BTreeMap<String, RawType<'a>>,
    pub(super) modules: Modules<'a>,
    pub(super) types: BTreeMap<String, TypeDecl>,
    pub(super) pending: Vec<String>,
    /// Aliases being resolved, to stop on one that stands for itself.
    pub(super) aliases: Vec<String>,
    /// The Kubernetes version the run generates for: which k8s-openapi types exist.
    pub(super) kubernetes: KubernetesVersion,
    /// The run's marker table.
    pub(super) table: &'a crate::markers::Table,
}

/// Markers that tell the wire form of a value serialized by custom code.
const WIRE_MARKERS: &[Name] = &[
    Name::Type,
    Name::XIntOrString,
    Name::XPreserveUnknownFields,
    Name::PreserveUnknownFields,
];

/// A value serialized by custom code (`#[serde(with = ...)]`) has the schema its markers
/// give, and they must give a complete structural one: `what` names it in messages.
fn check_opaque(
    markers: &[Marker],
    loc: &crate::diagnostics::Location,
    what: &str,
    attr: &str,
) -> Result<(), Diagnostic> {
    let hint = "describe its wire form with markers: `+kubebuilder:validation:Type=string` \
                (and Format, Pattern, ... as needed), `+kubebuilder:validation:XIntOrString`, \
                or `+kubebuilder:validation:Type=object` with \
                `+kubebuilder:pruning:PreserveUnknownFields`";
    if !markers.iter().any(|m| WIRE_MARKERS.contains(&m.name)) {
        return Err(Diagnostic::new(
            loc.clone(),
            format!(
                "the schema of {what} cannot be inferred: `#[serde({attr} = ...)]` serializes it with custom code"
            ),
        )
        .with_hint(hint));
    }
    let preserve = markers.iter().any(|m| {
        matches!(
            m.name,
            Name::XPreserveUnknownFields | Name::PreserveUnknownFields
        )
    });
    for m in markers.iter().filter(|m| m.name == Name::Type) {
        match m.string_value()?.as_str() {
            "array" => {
                return Err(m
                    .error(format!(
                        "{what} is serialized by custom code, so `Type=array` has no item schema"
                    ))
                    .with_hint("serialize a `Vec<T>` of a type that describes the items, or use `Type=object` with `+kubebuilder:pruning:PreserveUnknownFields`"));
            }
            "object" if !preserve => {
                return Err(m
                    .error(format!(
                        "{what} is serialized by custom code, so `Type=object` has no properties and the API server would drop every field of it"
                    ))
                    .with_hint("add `+kubebuilder:pruning:PreserveUnknownFields`"));
            }
            _ => {}
        }
    }
    Ok(())
}

impl Resolver<'_> {
    pub(super) fn require(&mut self, type_key: &str) {
        if !self.types.contains_key(type_key) {
            self.pending.push(type_key.to_owned());
        }
    }

    /// The absolute path of a type path used in `module`.
    fn absolute(&self, module: &Module, leading_colon: bool, segs: &[String]) -> Vec<String> {
        let segs = segs.to_vec();
        if leading_colon {
            return segs;
        }
        let first = segs[0].as_str();
        if matches!(first, "crate" | "self" | "super") {
            return crate::read::absolutize(&module.path, &segs);
        }
        if let Some(target) = module.uses.get(first) {
            let mut out = anchored(module, target);
            out.extend(segs[1..].iter().cloned());
            return out;
        }
        let local = key(&module.path, first);
        if segs.len() == 1 && self.raw.contains_key(&local) {
            let mut out = vec!["crate".to_owned()];
            out.extend(module.path.iter().cloned());
            out.push(segs[0].clone());
            return out;
        }
        if module.children.iter().any(|c| c == first) {
            let mut out = vec!["crate".to_owned()];
            out.extend(module.path.iter().cloned());
            out.extend(segs.iter().cloned());
            return out;
        }
        if segs.len() == 1 {
            for glob in &module.globs {
                let mut candidate = anchored(module, glob);
                candidate.push(segs[0].clone());
                let candidate = self.follow_reexports(candidate, 0);
                let is_local =
                    candidate[0] == "crate" && self.raw.contains_key(&candidate[1..].join("::"));
                let is_k8s = candidate[0] == "k8s_openapi"
                    && classify_k8s(self.kubernetes, &candidate[1..].join("::")).is_some();
                if is_local || is_k8s {
                    return candidate;
                }
            }
        }
        segs
    }

    /// Where a crate-local path's item is defined, following `use` re-exports: the port of a
    /// Go package keeps its types in files (`mod types; pub use types::*;`), and other
    /// modules name them through the package (`use super::v1::Group`).
    fn follow_reexports(&self, abs: Vec<String>, depth: usize) -> Vec<String> {
        self.follow_reexports_from(abs, depth, &mut std::collections::HashSet::new())
    }

    /// `follow_reexports`, remembering the paths this lookup already tried: sibling files
    /// that each `use super::*` while `mod.rs` does `pub use file::*` form a glob cycle
    /// whose every path is a dead end the second time, and without the memory the search
    /// branched once per sibling at every level (138 s on a port of Gateway API's v1).
    fn follow_reexports_from(
        &self,
        abs: Vec<String>,
        depth: usize,
        tried: &mut std::collections::HashSet<Vec<String>>,
    ) -> Vec<String> {
        // Deep enough for any real chain of re-exports, and a guard against `use` cycles.
        const MAX_DEPTH: usize = 16;
        if depth > MAX_DEPTH
            || abs.first().is_none_or(|f| f != "crate")
            || abs.len() < 2
            || self.raw.contains_key(&abs[1..].join("::"))
            || !tried.insert(abs.clone())
        {
            return abs;
        }
        let (name, parent) = abs[1..].split_last().expect("checked above");
        let Some(m) = self.modules.at(parent) else {
            return abs;
        };
        if let Some(target) = m.uses.get(name) {
            let target = anchored(m, target);
            if target != abs {
                return self.follow_reexports_from(target, depth + 1, tried);
            }
        }
        for glob in &m.globs {
            let mut candidate = anchored(m, glob);
            if candidate == abs[..abs.len() - 1] {
                continue;
            }
            candidate.push(name.clone());
            let found = self.follow_reexports_from(candidate, depth + 1, tried);
            if found.first().is_some_and(|f| f == "crate")
                && self.raw.contains_key(&found[1..].join("::"))
            {
                return found;
            }
        }
        abs
    }

    pub(super) fn resolve_type(
        &mut self,
        module: &Module,
        ty: &src::Ty,
    ) -> Result<TypeRef, Diagnostic> {
        let loc = ty.loc.clone();
        let unsupported = |what: String| {
            Diagnostic::new(loc.clone(), format!("unsupported type `{what}`")).with_hint(
                "use a type defined in this crate, a std/serde_json type, or a k8s-openapi type; \
                 for free-form data use serde_json::Value",
            )
        };
        if let src::TyKind::Array { elem, len } = &ty.kind {
            let Some(len) = *len else {
                return Err(Diagnostic::new(
                    loc,
                    format!("the length of `{}` is not an integer literal", ty.text()),
                )
                .with_hint("write the length as a literal such as `[u8; 16]`: the schema's minItems and maxItems are that length"));
            };
            // serde implements Serialize and Deserialize for arrays up to 32 items only.
            if len > 32 {
                return Err(Diagnostic::new(
                    loc,
                    format!(
                        "serde (de)serializes arrays of at most 32 items, and `{}` has {len}",
                        ty.text()
                    ),
                )
                .with_hint("use `Vec<T>` with `+kubebuilder:validation:MinItems` and `MaxItems`"));
            }
            let item = self.resolve_type(module, elem)?;
            return Ok(TypeRef::Array {
                item: Box::new(item),
                len,
            });
        }
        let src::TyKind::Path {
            leading_colon,
            segments,
            args,
        } = &ty.kind
        else {
            return Err(unsupported(ty.text()));
        };
        let abs = self.absolute(module, *leading_colon, segments);
        let abs = self.follow_reexports(abs, 0);
        let name = abs.last().cloned().unwrap_or_default();
        let one = |s: &mut Self, n: usize| -> Result<TypeRef, Diagnostic> {
            match args.get(n) {
                Some(t) => s.resolve_type(module, t),
                None => Err(Diagnostic::new(
                    loc.clone(),
                    format!("`{name}` needs a type argument"),
                )),
            }
        };
        let joined = abs.join("::");
        // std and prelude types, by their last segment when the path is a std/alloc/prelude one.
        let stdish = abs.len() == 1
            || matches!(
                abs[0].as_str(),
                "std" | "alloc" | "core" | "indexmap" | "serde_json"
            );
        if stdish {
            match name.as_str() {
                "String" | "str" => return Ok(TypeRef::String),
                "bool" => return Ok(TypeRef::Bool),
                "i8" | "i16" | "i32" | "u8" | "u16" => return Ok(TypeRef::Int32),
                "i64" | "u32" | "u64" | "isize" | "usize" => return Ok(TypeRef::Int64),
                "f32" => return Ok(TypeRef::Float),
                "f64" => return Ok(TypeRef::Double),
                "Option" => return Ok(TypeRef::Option(Box::new(one(self, 0)?))),
                "Box" | "Arc" | "Rc" => return one(self, 0),
                "Vec" | "VecDeque" => {
                    return Ok(TypeRef::List {
                        item: Box::new(one(self, 0)?),
                        set: false,
                    });
                }
                "BTreeSet" | "HashSet" | "IndexSet" => {
                    return Ok(TypeRef::List {
                        item: Box::new(one(self, 0)?),
                        set: true,
                    });
                }
                "BTreeMap" | "HashMap" | "IndexMap" => {
                    let k = one(self, 0)?;
                    if !self.key_is_string(&k, 0) {
                        let key = args.first().map(|k| k.text()).unwrap_or_default();
                        return Err(Diagnostic::new(
                            loc,
                            format!("map keys must be strings, not `{key}` in `{}`", ty.text()),
                        )
                        .with_hint("JSON object keys are strings: use String, a newtype of String, a unit-only enum, or a type with `#[serde(into = \"String\", try_from = \"String\")]`; \
                                    integer keys are refused as controller-gen refuses Go's: no CRD schema can require numeric keys, so the API server would store objects this type cannot read back"));
                    }
                    return Ok(TypeRef::Map(Box::new(one(self, 1)?)));
                }
                "Value" if abs.first().is_some_and(|f| f == "serde_json") => {
                    return Ok(TypeRef::Json);
                }
                "Map" if abs.first().is_some_and(|f| f == "serde_json") => {
                    return Ok(TypeRef::Map(Box::new(TypeRef::Json)));
                }
                _ => {}
            }
        }
        match abs[0].as_str() {
            "crate" => {
                let k = abs[1..].join("::");
                let raw = self.raw;
                match raw.get(&k) {
                    Some(r) => match &r.item.body {
                        src::Body::Alias(target) => self.resolve_alias(&k, r, target, &loc),
                        _ => {
                            self.require(&k);
                            Ok(TypeRef::Local(k))
                        }
                    },
                    None => Err(unsupported(joined)),
                }
            }
            "k8s_openapi" => {
                let path = abs[1..].join("::");
                classify_k8s(self.kubernetes, &path).ok_or_else(|| {
                    let elsewhere = crate::kubernetes::schemas::versions_with(&path);
                    match crate::kubernetes::schemas::unsupported(self.kubernetes, &path) {
                        Some(why) => Diagnostic::new(loc, format!("`{joined}` has no CRD schema: {why}"))
                            .with_hint("use serde_json::Value with +kubebuilder:pruning:PreserveUnknownFields, as controller-gen users do"),
                        None if !elsewhere.is_empty() => {
                            let listed: Vec<String> = elsewhere.iter().map(|v| v.to_string()).collect();
                            Diagnostic::new(loc, format!("`{joined}` does not exist in Kubernetes {}, the version this run generates for", self.kubernetes))
                                .with_hint(format!("it exists in Kubernetes {}: choose one with `kubernetes-version` in [package.metadata.kube-codegen], `--kubernetes-version`, or your crate's k8s-openapi feature", listed.join(", ")))
                        }
                        None => Diagnostic::new(loc, format!("`{joined}` has no schema in k8s-openapi"))
                            .with_hint("check the path; k8s-openapi types live under k8s_openapi::api / apimachinery / apiextensions_apiserver"),
                    }
                })
            }
            "kube" | "kube_core" if name == "ObjectMeta" => Ok(TypeRef::ObjectMeta),
            "kube" | "kube_core" if name == "TypeMeta" => Ok(TypeRef::TypeMeta),
            _ => Err(unsupported(joined)),
        }
    }

    /// A use of `type` alias `key`: what it stands for, resolved where the alias is.
    fn resolve_alias(
        &mut self,
        key: &str,
        raw: &RawType,
        target: &src::Ty,
        used_at: &crate::diagnostics::Location,
    ) -> Result<TypeRef, Diagnostic> {
        let ident = &raw.item.ident;
        if raw.item.generic {
            return Err(Diagnostic::new(
                used_at.clone(),
                format!("generic alias `{ident}` cannot be an API type"),
            )
            .with_hint(format!(
                "write out what `{ident}` stands for here, or make the alias concrete (it is at {})",
                raw.item.loc
            )));
        }
        if self.aliases.iter().any(|a| a == key) {
            return Err(Diagnostic::new(
                raw.item.loc.clone(),
                format!("alias `{ident}` stands for itself"),
            ));
        }
        self.aliases.push(key.to_owned());
        let resolved = self.resolve_type(raw.module, target);
        self.aliases.pop();
        let target = resolved?;
        self.require(key);
        Ok(TypeRef::Alias {
            key: key.to_owned(),
            target: Box::new(target),
        })
    }

    /// Whether serde_json writes a map key of this type as a JSON string: a String, a
    /// newtype of one, a unit-only externally tagged enum, or a type serialized `into` one.
    fn key_is_string(&mut self, key: &TypeRef, depth: usize) -> bool {
        let key_of = match key.unalias() {
            TypeRef::String => return true,
            TypeRef::Local(k) if depth < 8 => k.clone(),
            _ => return false,
        };
        let raw = self.raw;
        let Some(r) = raw.get(&key_of) else {
            return false;
        };
        let item = r.item;
        // A problem inside the key's own type is reported where that type is.
        let inner = |s: &mut Self, ty: &src::Ty| match s.resolve_type(r.module, ty) {
            Ok(t) => s.key_is_string(&t, depth + 1),
            Err(_) => true,
        };
        if let Some(c) = item
            .conversions
            .iter()
            .find(|c| c.kind == src::ConversionKind::Into)
        {
            return c.ty.as_ref().is_none_or(|t| inner(self, t));
        }
        match &item.body {
            src::Body::Struct(src::Fields::Unnamed(f)) if f.len() == 1 => inner(self, &f[0].ty),
            src::Body::Struct(src::Fields::Named(f)) if item.serde.transparent => {
                match f.iter().find(|f| !f.serde.skip) {
                    Some(f) => inner(self, &f.ty),
                    None => false,
                }
            }
            src::Body::Enum(variants) => {
                let s = &item.serde;
                s.tag.is_none()
                    && !s.untagged
                    && variants
                        .iter()
                        .all(|v| matches!(v.fields, src::Fields::Unit) && !v.serde.untagged)
            }
            _ => false,
        }
    }

    /// The wire type of a struct or enum with serde's `into`/`from`/`try_from`, if any:
    /// both directions must agree, as a CRD has one schema for what is written and read.
    fn wire_type(&mut self, raw: &RawType, diags: &mut Diagnostics) -> Result<Option<TypeRef>, ()> {
        let item = raw.item;
        let ident = &item.ident;
        let mut into = None;
        let mut from = None;
        for c in &item.conversions {
            let Some(t) = &c.ty else {
                diags.push(
                    Diagnostic::new(
                        c.loc.clone(),
                        format!(
                            "`{} = ...` on `{ident}` does not name a type",
                            c.kind.attr()
                        ),
                    )
                    .with_hint("write a Rust type in the string, e.g. `into = \"String\"`"),
                );
                return Err(());
            };
            let resolved = diags.collect(self.resolve_type(raw.module, t)).ok_or(())?;
            match c.kind {
                src::ConversionKind::Into => into = Some((c, t, resolved)),
                _ => from = Some((c, t, resolved)),
            }
        }
        let derives = |t: &str| item.derives.iter().any(|d| d == t);
        match (into, from) {
            (None, None) => Ok(None),
            (Some((i, it, ir)), Some((f, ft, fr))) => {
                if ir.unalias() != fr.unalias() {
                    diags.push(
                        Diagnostic::new(
                            f.loc.clone(),
                            format!(
                                "`{ident}` serializes as `{}` (`into`) but deserializes from `{}` (`{}`)",
                                it.text(),
                                ft.text(),
                                f.kind.attr()
                            ),
                        )
                        .with_hint(format!(
                            "a CRD has one schema for what is written and what is read: use one type in both (`into` is at {})",
                            i.loc
                        )),
                    );
                    return Err(());
                }
                Ok(Some(ir))
            }
            (Some((i, it, _)), None) if derives("Deserialize") => {
                diags.push(
                    Diagnostic::new(
                        i.loc.clone(),
                        format!(
                            "`{ident}` serializes as `{}` (`into`) but deserializes from its own fields",
                            it.text()
                        ),
                    )
                    .with_hint(format!(
                        "add `from = \"{0}\"` or `try_from = \"{0}\"`, so objects read back in the form they are written",
                        it.text()
                    )),
                );
                Err(())
            }
            (None, Some((f, ft, _))) if derives("Serialize") => {
                diags.push(
                    Diagnostic::new(
                        f.loc.clone(),
                        format!(
                            "`{ident}` deserializes from `{}` (`{}`) but serializes its own fields",
                            ft.text(),
                            f.kind.attr()
                        ),
                    )
                    .with_hint(format!(
                        "add `into = \"{}\"`, so objects are written in the form they are read",
                        ft.text()
                    )),
                );
                Err(())
            }
            // The other direction is written by hand: its form is this one, we trust.
            (Some((_, _, t)), None) | (None, Some((_, _, t))) => Ok(Some(t)),
        }
    }

    fn fields(
        &mut self,
        module: &Module,
        fields: &[src::Field],
        container: &SerdeContainer,
        rename_rule: Option<&str>,
        schemars: bool,
        diags: &mut Diagnostics,
    ) -> Vec<Field> {
        let mut out = vec![];
        for f in fields {
            let default_fn = f.serde.default_fn.as_ref().map(|path| DefaultFn {
                path: path.clone(),
                value: module.literal_fns.get(path).cloned(),
            });
            if schemars && let Some(DefaultFn { path, value: None }) = &default_fn {
                super::kube_derive::warn_default_fn(path, &f.loc, diags);
            }
            let rust_name = unraw(f.ident.as_deref().expect("named"));
            let floc = f.loc.clone();
            let ser = &f.serde;
            let json_name = match (&ser.rename, rename_rule) {
                (Some(r), _) => r.clone(),
                (None, Some(rule)) => match rename(&rust_name, rule, false) {
                    Ok(n) => n,
                    Err(e) => {
                        diags.push(Diagnostic::new(floc.clone(), e));
                        rust_name.clone()
                    }
                },
                (None, None) => rust_name.clone(),
            };
            let docs = &f.docs;
            let mut markers = parse_markers(docs, Level::Field, self.table, diags);
            // kube-derive input: `#[schemars(with = "T")]` says the wire form of a field
            // serialized by custom code; for a scalar `T` it becomes the markers that say it.
            if schemars
                && ser.with.is_some()
                && let Some((t, at)) = super::kube_derive::schemars_with(&f.tool_attrs)
            {
                let resolved = src::ty_from_str(module, &t, &at)
                    .and_then(|ty| self.resolve_type(module, &ty).ok());
                match resolved.and_then(|r| {
                    super::kube_derive::with_markers(&r, RustInt::parse(t.trim()), &at)
                }) {
                    Some(m) => markers.extend(m),
                    None => diags.push(
                        Diagnostic::warning(at.clone(), format!("`#[schemars(with = \"{t}\")]` is read for a string, bool, number or integer only"))
                            .with_hint("describe the wire form with `+kubebuilder:validation:Type=...` in the field's doc comment"),
                    ),
                }
            }
            let ty = match ser.with {
                // Custom code decides the wire form: the Rust type tells nothing.
                Some(attr) => {
                    let what = format!("field `{rust_name}`");
                    if diags
                        .collect(check_opaque(&markers, &floc, &what, attr))
                        .is_none()
                    {
                        continue;
                    }
                    TypeRef::Opaque
                }
                None => match diags.collect(self.resolve_type(module, &f.ty)) {
                    Some(ty) => ty,
                    None => continue,
                },
            };
            if schemars {
                markers.extend(super::kube_derive::schema_markers(
                    &f.tool_attrs,
                    Some(&ty),
                    diags,
                ));
            }
            out.push(Field {
                rust_name,
                json_name,
                ty,
                doc: doc_text(docs),
                markers,
                flatten: ser.flatten,
                skip: ser.skip,
                has_default: ser.default || container.default,
                skip_serializing_if: ser.skip_serializing_if,
                visible: f.visible,
                loc: floc,
                ints: rust_ints(&f.ty),
                default_fn,
            });
        }
        out
    }

    pub(super) fn convert(&mut self, type_key: &str, diags: &mut Diagnostics) -> Option<TypeDecl> {
        let raw = self.raw.get(type_key)?;
        let module = raw.module;
        let item = raw.item;
        let ident = &item.ident;
        let loc = item.loc.clone();
        let docs = &item.docs;
        let mut markers = parse_markers(docs, Level::Type, self.table, diags);
        // controller-gen registers `+kubebuilder:default` for fields only and ignores it on a
        // type; applied, it would default every field of this type, a meaning nobody asked for.
        markers.retain(|m| {
            if m.name != Name::KubebuilderDefault {
                return true;
            }
            diags.push(
                Diagnostic::warning(
                    m.loc.clone(),
                    format!(
                        "`+{}` on a type is ignored, as controller-gen ignores it: it is a field marker",
                        Name::KubebuilderDefault
                    ),
                )
                .with_marker(&m.text)
                .with_hint("put it on the fields of this type that should have the default"),
            );
            false
        });
        let serde = item.serde.clone();
        if item.generic {
            diags.push(
                Diagnostic::new(loc, format!("generic type `{ident}` cannot be an API type"))
                    .with_hint("use a concrete type"),
            );
            return None;
        }
        // A schemars-derived type (kube-derive input): its schemars attributes shape the
        // schema, so those not read are reported.
        let schemars = item
            .derives
            .iter()
            .any(|d| matches!(d.as_str(), "JsonSchema" | "KubeSchema" | "CustomResource"));
        if schemars {
            markers.extend(super::kube_derive::schema_markers(
                &item.tool_attrs,
                None,
                diags,
            ));
        }
        let wire = self.wire_type(raw, diags).ok()?;
        let shape = match &item.body {
            _ if wire.is_some() => Shape::Wire(wire.expect("checked")),
            src::Body::Alias(target) => {
                Shape::Alias(diags.collect(self.resolve_type(module, target))?)
            }
            src::Body::Struct(fields) => match fields {
                src::Fields::Named(named) => {
                    let rule = serde.rename_all.clone();
                    Shape::Struct(self.fields(
                        module,
                        named,
                        &serde,
                        rule.as_deref(),
                        schemars,
                        diags,
                    ))
                }
                src::Fields::Unnamed(u) if u.len() == 1 => match u[0].serde.with {
                    Some(attr) => {
                        let what = format!("`{ident}`");
                        diags.collect(check_opaque(&markers, &loc, &what, attr))?;
                        Shape::Newtype(TypeRef::Opaque)
                    }
                    None => Shape::Newtype(diags.collect(self.resolve_type(module, &u[0].ty))?),
                },
                _ => {
                    diags.push(
                        Diagnostic::new(
                            loc,
                            format!("`{ident}` must have named fields or be a newtype"),
                        )
                        .with_hint("tuple and unit structs have no JSON object form"),
                    );
                    return None;
                }
            },
            src::Body::Enum(source_variants) => {
                let mut variants = vec![];
                for v in source_variants {
                    let vser = &v.serde;
                    if schemars {
                        // A variant holds no markers in the model: what they say is lost.
                        for m in super::kube_derive::schema_markers(&v.tool_attrs, None, diags) {
                            diags.push(
                                Diagnostic::warning(
                                    m.loc.clone(),
                                    format!(
                                        "`{}` on a variant is not read by kube-codegen yet",
                                        m.text
                                    ),
                                )
                                .with_hint("the CRD lacks what it adds to kube-derive's schema"),
                            );
                        }
                    }
                    if vser.skip {
                        continue;
                    }
                    let rust_name = unraw(&v.ident);
                    let vloc = v.loc.clone();
                    let json_name = match (&vser.rename, &serde.rename_all) {
                        (Some(r), _) => r.clone(),
                        (None, Some(rule)) => {
                            rename(&rust_name, rule, true).unwrap_or(rust_name.clone())
                        }
                        (None, None) => rust_name.clone(),
                    };
                    let shape = match &v.fields {
                        src::Fields::Unit => VariantShape::Unit,
                        src::Fields::Unnamed(u) if u.len() == 1 => {
                            if let Some(attr) = u[0].serde.with {
                                diags.push(
                                    Diagnostic::new(
                                        vloc,
                                        format!("the schema of variant `{ident}::{rust_name}` cannot be inferred: `#[serde({attr} = ...)]` serializes it with custom code"),
                                    )
                                    .with_hint("hold a newtype struct instead, whose doc comment describes its wire form with `+kubebuilder:validation:Type=...`"),
                                );
                                continue;
                            }
                            let Some(t) = diags.collect(self.resolve_type(module, &u[0].ty)) else {
                                continue;
                            };
                            VariantShape::Newtype(t)
                        }
                        src::Fields::Unnamed(_) => VariantShape::Tuple,
                        src::Fields::Named(named) => {
                            let rule = v
                                .container
                                .rename_all
                                .clone()
                                .or(serde.rename_all_fields.clone());
                            VariantShape::Struct(self.fields(
                                module,
                                named,
                                &SerdeContainer::default(),
                                rule.as_deref(),
                                schemars,
                                diags,
                            ))
                        }
                    };
                    let ints = match &v.fields {
                        src::Fields::Unnamed(u) if u.len() == 1 => rust_ints(&u[0].ty),
                        _ => vec![],
                    };
                    variants.push(Variant {
                        rust_name,
                        json_name,
                        doc: doc_text(&v.docs),
                        shape,
                        loc: vloc,
                        ints,
                    });
                }
                Shape::Enum(variants)
            }
        };
        Some(TypeDecl {
            name: ident.clone(),
            module_path: module.path.clone(),
            doc: doc_text(docs),
            markers,
            serde,
            shape,
            derives: item.derives.clone(),
            visible: item.visible,
            rust_path: public_path(&self.modules, module, item),
            loc,
        })
    }
}

/// The integer types in a field's type, depth-first (see [`Field::ints`]).
fn rust_ints(ty: &src::Ty) -> Vec<RustInt> {
    let mut out = vec![];
    let mut stack = vec![ty];
    while let Some(t) = stack.pop() {
        match &t.kind {
            src::TyKind::Path { segments, args, .. } => {
                if let [one] = segments.as_slice()
                    && let Some(i) = RustInt::parse(one)
                {
                    out.push(i);
                }
                stack.extend(args.iter().rev());
            }
            src::TyKind::Array { elem, .. } => stack.push(elem),
            src::TyKind::Other => {}
        }
    }
    out
}

/// An identifier without its `r#`.
fn unraw(ident: &str) -> String {
    ident.strip_prefix("r#").unwrap_or(ident).to_owned()
}

/// Map a path below `k8s_openapi::` to a TypeRef, or None if it is not a type of Kubernetes
/// `kubernetes`.
fn classify_k8s(kubernetes: KubernetesVersion, path: &str) -> Option<TypeRef> {
    Some(match path {
        "apimachinery::pkg::util::intstr::IntOrString" => TypeRef::IntOrString,
        "apimachinery::pkg::api::resource::Quantity" => TypeRef::Quantity,
        "apimachinery::pkg::apis::meta::v1::Time"
        | "apimachinery::pkg::apis::meta::v1::MicroTime" => TypeRef::Time,
        "apimachinery::pkg::apis::meta::v1::ObjectMeta" => TypeRef::ObjectMeta,
        "ByteString" => TypeRef::Bytes,
        p if crate::kubernetes::schemas::contains(kubernetes, p) => TypeRef::K8s(p.to_owned()),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renames_like_serde() {
        assert_eq!(
            rename("custom_property", "camelCase", false).unwrap(),
            "customProperty"
        );
        assert_eq!(
            rename("custom_property", "PascalCase", false).unwrap(),
            "CustomProperty"
        );
        assert_eq!(
            rename("custom_property", "kebab-case", false).unwrap(),
            "custom-property"
        );
        assert_eq!(
            rename("DeploymentName", "camelCase", true).unwrap(),
            "deploymentName"
        );
        assert_eq!(
            rename("DeploymentName", "snake_case", true).unwrap(),
            "deployment_name"
        );
        assert_eq!(
            rename("DeploymentName", "SCREAMING_SNAKE_CASE", true).unwrap(),
            "DEPLOYMENT_NAME"
        );
        assert!(rename("x", "Bogus", false).is_err());
    }

    /// The one-pass `camelCase` of ASCII field names is the word-by-word one.
    #[test]
    fn camel_case_fast_path_agrees() {
        for name in [
            "custom_property",
            "a",
            "",
            "_",
            "__",
            "_leading",
            "trailing_",
            "double__under",
            "URL_path",
            "already_Camel",
            "x1_2y",
            "replicas",
            "api_version_v2",
        ] {
            assert_eq!(
                rename(name, "camelCase", false),
                rename_by_words(name, "camelCase", false),
                "{name:?}"
            );
        }
    }
}
