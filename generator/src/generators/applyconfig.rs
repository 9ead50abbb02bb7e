//! The `applyconfigurations` generator: client-go's applyconfiguration-gen. For every kind
//! and every struct a kind reaches, an apply configuration whose fields are all optional
//! and absent when unset, so a field manager applies (and owns) exactly what it sets.
//!
//! What stays as it is: enums, newtypes and types serialized `into` another (their value
//! is one field, owned whole), scalars, and **k8s-openapi types** embedded in a kind
//! (`PodTemplateSpec`, `Condition`, ...). Those are applied as k8s-openapi serializes
//! them, so their required fields are always sent: see README "Server-side apply" for
//! what that claims and why it is the choice here.

use std::collections::{BTreeMap, BTreeSet};

use kube_codegen_templates::input::{
    ApplyField, ApplyKind, ApplyPackage, ApplyRole, ApplyStruct, ApplyType,
};

use super::{Context, Generator, GeneratorName, Output, RenderRust};
use crate::diagnostics::{Diagnostic, Diagnostics};
use crate::model::*;

pub(super) const GENERATOR: Generator = Generator {
    name: GeneratorName::Applyconfigurations,
    id: "applyconfigurations",
    about: "Apply configurations for server-side apply, with extraction from managedFields (applyconfiguration-gen).",
    // `extract_foo` reads the kind through its `kube::Resource` impl.
    requires: &[GeneratorName::Register],
    // controller-gen's `+kubebuilder:ac:generate` switches are accepted by the core table.
    markers: &[],
    output: Output::Rust {
        module: "applyconfigurations",
        doc: " Apply configurations for server-side apply.",
        cost: 1,
        prepare,
    },
};

fn prepare(cx: &Context, diags: &mut Diagnostics) -> RenderRust {
    let packages = packages(cx.api, cx.rust, diags);
    Box::new(move || kube_codegen_templates::applyconfig::apply_configurations(&packages))
}

/// One apply configuration being built: the struct, and the configurations it holds
/// (for the derives, which hold only if they hold for everything inside).
struct Building {
    out: ApplyStruct,
    deps: Vec<String>,
}

struct Builder<'a> {
    api: &'a Api,
    options: &'a super::rust::RustOptions,
    /// Type key -> configuration name, for this group/version.
    names: BTreeMap<String, String>,
    taken: BTreeSet<String>,
    structs: Vec<Building>,
    /// Leaf types already checked (each is reported once).
    checked: BTreeSet<String>,
}

pub(crate) fn packages(
    api: &Api,
    options: &super::rust::RustOptions,
    diags: &mut Diagnostics,
) -> Vec<ApplyPackage> {
    let accessors = super::rust::accessors(api);
    let mut out = vec![];
    for ((group, version), pkg) in &api.packages {
        let mut b = Builder {
            api,
            options,
            names: BTreeMap::new(),
            taken: BTreeSet::new(),
            structs: vec![],
            checked: BTreeSet::new(),
        };
        for k in &pkg.kinds {
            let api_version = if group.is_empty() {
                version.clone()
            } else {
                format!("{group}/{version}")
            };
            b.visit(
                &k.type_key,
                Some(ApplyKind {
                    name: k.name.clone(),
                    api_version,
                    namespaced: k.scope == Scope::Namespaced,
                    status_subresource: k.status_subresource,
                }),
                diags,
            );
        }
        let structs = b.finish();
        out.push(ApplyPackage {
            group: group.clone(),
            version: version.clone(),
            accessor: accessors[&(group.clone(), version.clone())].clone(),
            structs,
        });
    }
    out
}

impl Builder<'_> {
    /// The configuration of struct `key`, built once per group/version.
    fn visit(&mut self, key: &str, kind: Option<ApplyKind>, diags: &mut Diagnostics) -> String {
        if let Some(name) = self.names.get(key) {
            return name.clone();
        }
        let decl = &self.api.types[key];
        let name = self.name_for(decl);
        self.names.insert(key.to_owned(), name.clone());
        let Shape::Struct(fields) = &decl.shape else {
            unreachable!("only structs get apply configurations (see `is_config`)")
        };
        let index = self.structs.len();
        self.structs.push(Building {
            out: ApplyStruct {
                name: name.clone(),
                source_path: super::rust::type_path(self.api, self.options, key),
                fields: vec![],
                debug: true,
                partial_eq: true,
                kind,
            },
            deps: vec![],
        });
        let mut out_fields = vec![];
        let mut deps = vec![];
        let (mut debug, mut partial_eq) = (true, true);
        for f in fields.iter().filter(|f| !f.skip) {
            let role = if f.flatten && f.ty == TypeRef::TypeMeta {
                ApplyRole::TypeMeta
            } else if f.flatten {
                ApplyRole::Flatten
            } else {
                ApplyRole::Field
            };
            let ty = self.map_type(&f.ty, &mut deps, &mut debug, &mut partial_eq, diags);
            out_fields.push(ApplyField {
                rust_name: f.rust_name.clone(),
                json_name: f.json_name.clone(),
                doc: first_paragraph(&f.doc),
                ty,
                role,
            });
        }
        let b = &mut self.structs[index];
        b.out.fields = out_fields;
        b.out.debug = debug;
        b.out.partial_eq = partial_eq;
        b.deps = deps;
        name
    }

    /// `FooSpecApplyConfiguration`; two structs of one name in a group/version (in
    /// different modules) get their module path in front, so both exist.
    fn name_for(&mut self, decl: &TypeDecl) -> String {
        let mut name = format!("{}ApplyConfiguration", decl.name);
        if self.taken.contains(&name) {
            let prefix: String = decl
                .module_path
                .iter()
                .map(|m| kube_codegen_templates::pascal_case(m))
                .collect();
            name = format!("{prefix}{}ApplyConfiguration", decl.name);
        }
        self.taken.insert(name.clone());
        name
    }

    fn map_type(
        &mut self,
        ty: &TypeRef,
        deps: &mut Vec<String>,
        debug: &mut bool,
        partial_eq: &mut bool,
        diags: &mut Diagnostics,
    ) -> ApplyType {
        let plain = |p: &str| ApplyType::Plain(p.to_owned());
        match ty {
            TypeRef::String => ApplyType::String,
            TypeRef::Bool => plain("bool"),
            // The wire type of the schema: an apply configuration is a JSON document, and
            // these hold every value the field's schema allows.
            TypeRef::Int32 => plain("i32"),
            TypeRef::Int64 => plain("i64"),
            TypeRef::Float => plain("f32"),
            TypeRef::Double => plain("f64"),
            TypeRef::Option(inner) | TypeRef::Alias { target: inner, .. } => {
                self.map_type(inner, deps, debug, partial_eq, diags)
            }
            TypeRef::List { item, .. } | TypeRef::Array { item, .. } => ApplyType::List(Box::new(
                self.map_type(item, deps, debug, partial_eq, diags),
            )),
            TypeRef::Map(value) => ApplyType::Map(Box::new(
                self.map_type(value, deps, debug, partial_eq, diags),
            )),
            TypeRef::Json | TypeRef::Opaque => plain("::serde_json::Value"),
            TypeRef::IntOrString => {
                plain("::k8s_openapi::apimachinery::pkg::util::intstr::IntOrString")
            }
            TypeRef::Quantity => plain("::k8s_openapi::apimachinery::pkg::api::resource::Quantity"),
            TypeRef::Time => plain("::k8s_openapi::apimachinery::pkg::apis::meta::v1::Time"),
            TypeRef::ObjectMeta => ApplyType::ObjectMeta,
            TypeRef::TypeMeta => plain("::kube::core::TypeMeta"),
            TypeRef::Bytes => plain("::k8s_openapi::ByteString"),
            TypeRef::K8s(p) => ApplyType::Plain(format!("::k8s_openapi::{p}")),
            TypeRef::Local(key) => {
                let decl = &self.api.types[key];
                if is_config(decl) {
                    let name = self.visit(key, None, diags);
                    deps.push(name.clone());
                    return ApplyType::Config(name);
                }
                *debug &= decl.derives.iter().any(|d| d == "Debug");
                *partial_eq &= decl.derives.iter().any(|d| d == "PartialEq");
                self.check_nameable(key, decl, diags);
                ApplyType::Plain(super::rust::type_path(self.api, self.options, key))
            }
        }
    }

    /// A type used as it is must be nameable from the generated module.
    fn check_nameable(&mut self, key: &str, decl: &TypeDecl, diags: &mut Diagnostics) {
        if !self.checked.insert(key.to_owned()) {
            return;
        }
        if !decl.visible {
            diags.push(
                Diagnostic::new(
                    decl.loc.clone(),
                    format!("`{}` must be `pub` or `pub(crate)`", decl.name),
                )
                .with_hint("generated apply configurations hold it as it is"),
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
                .with_hint("re-export it from the group/version module or declare the module `pub mod`"),
            );
        }
    }

    /// The configurations in visiting order, with `Debug`/`PartialEq` kept only where
    /// every configuration inside has them too.
    fn finish(mut self) -> Vec<ApplyStruct> {
        loop {
            let flags: BTreeMap<String, (bool, bool)> = self
                .structs
                .iter()
                .map(|b| (b.out.name.clone(), (b.out.debug, b.out.partial_eq)))
                .collect();
            let mut changed = false;
            for b in &mut self.structs {
                for d in &b.deps {
                    let (debug, eq) = flags[d];
                    if b.out.debug && !debug {
                        b.out.debug = false;
                        changed = true;
                    }
                    if b.out.partial_eq && !eq {
                        b.out.partial_eq = false;
                        changed = true;
                    }
                }
            }
            if !changed {
                break;
            }
        }
        self.structs.into_iter().map(|b| b.out).collect()
    }
}

/// Whether a local type gets an apply configuration of its own: a struct with named
/// fields on the wire. Everything else (enums, newtypes, `transparent`, `into`) is one
/// value on the wire and is applied whole.
fn is_config(decl: &TypeDecl) -> bool {
    matches!(decl.shape, Shape::Struct(_)) && !decl.serde.transparent
}

/// The first paragraph of a doc comment, marker lines left out, on one line.
fn first_paragraph(doc: &str) -> String {
    let mut out = String::new();
    for line in doc.lines().map(str::trim) {
        if line.is_empty() {
            if out.is_empty() {
                continue;
            }
            break;
        }
        if line.starts_with('+') {
            continue;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(line);
    }
    out
}
