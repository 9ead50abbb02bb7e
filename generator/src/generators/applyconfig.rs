//! The `applyconfigurations` generator: client-go's applyconfiguration-gen. For every kind
//! and every struct a kind reaches, an apply configuration whose fields are all optional
//! and absent when unset, so a field manager applies (and owns) exactly what it sets.
//!
//! Kubernetes types embedded in a kind (`PodTemplateSpec`, `Condition`, ...) get apply
//! configurations too, in the module `k8s`, built from the schemas the CRDs use
//! (`kubernetes/schemas/`, controller-gen's for the chosen Kubernetes version): k8s-openapi's
//! own types always write their required fields, so a manager applying one would own
//! fields it never meant to (docs/src/guide/server-side-apply.md). Kubernetes types without
//! properties of their own (`Quantity`, `IntOrString`, `Time`, `RawExtension`, empty
//! structs) are one value on the wire and stay k8s-openapi types.
//!
//! What else stays as it is: enums, newtypes and types serialized `into` another (their
//! value is one field, owned whole) and scalars.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use kube_codegen_templates::input::{
    ApplyField, ApplyKind, ApplyPackage, ApplyRole, ApplyStruct, ApplyType,
};

use super::{Context, Generator, GeneratorName, Output, RenderRust};
use crate::model::*;
use crate::resolve::Check;

pub(super) const GENERATOR: Generator = Generator {
    name: GeneratorName::Applyconfigurations,
    id: "applyconfigurations",
    about: "Apply configurations for server-side apply, with extraction from managedFields (applyconfiguration-gen).",
    // `extract_foo` reads the kind through its `kube::Resource` impl.
    requires: &[GeneratorName::Register],
    // controller-gen's `+kubebuilder:ac:generate` switches are accepted by the core table.
    markers: &[],
    checks: &[Check::ApplyConfigurations],
    output: Output::Rust {
        module: "applyconfigurations",
        doc: " Apply configurations for server-side apply.",
        cost: 1,
        prepare,
    },
};

fn prepare(cx: &Context) -> RenderRust {
    let (packages, k8s) = packages(cx.api, cx.rust);
    Box::new(move || kube_codegen_templates::applyconfig::apply_configurations(&packages, &k8s))
}

/// One apply configuration being built: the struct, and the configurations it holds
/// (for the derives, which hold only if they hold for everything inside).
struct Building {
    out: ApplyStruct,
    deps: Vec<String>,
}

struct Builder<'a> {
    api: &'a Api,
    k8s: &'a mut K8sBuilder,
    options: &'a super::rust::RustOptions,
    /// Type key -> configuration name, for this group/version.
    names: BTreeMap<String, String>,
    taken: BTreeSet<String>,
    structs: Vec<Building>,
}

/// The apply configurations of every group/version, and those of the Kubernetes types
/// they embed (shared by all group/versions).
pub(crate) fn packages(
    api: &Api,
    options: &super::rust::RustOptions,
) -> (Vec<ApplyPackage>, Vec<ApplyStruct>) {
    let accessors = super::rust::accessors(api);
    let mut k8s = K8sBuilder::new(api.kubernetes);
    let mut out = vec![];
    for ((group, version), pkg) in &api.packages {
        let mut b = Builder {
            api,
            k8s: &mut k8s,
            options,
            names: BTreeMap::new(),
            taken: BTreeSet::new(),
            structs: vec![],
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
            );
        }
        let structs = b.finish();
        out.push(ApplyPackage {
            group: group.clone(),
            version: version.clone(),
            accessor: accessors[&(group.clone(), version.clone())].version.clone(),
            structs,
        });
    }
    (out, k8s.structs.into_iter().flatten().collect())
}

impl Builder<'_> {
    /// The configuration of struct `key`, built once per group/version.
    fn visit(&mut self, key: &str, kind: Option<ApplyKind>) -> String {
        if let Some(name) = self.names.get(key) {
            return name.clone();
        }
        let decl = &self.api.types[key];
        let name = self.name_for(decl);
        self.names.insert(key.to_owned(), name.clone());
        let Shape::Struct(fields) = &decl.shape else {
            unreachable!("only structs get apply configurations (see `has_apply_configuration`)")
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
            let ty = self.map_type(&f.ty, &mut deps, &mut debug, &mut partial_eq);
            out_fields.push(ApplyField {
                rust_name: f.rust_name.clone(),
                json_name: f.json_name.clone(),
                doc: first_paragraph(&f.doc),
                ty,
                role,
            });
        }
        // kube-derive's kind struct has no TypeMeta field, yet serializes apiVersion and
        // kind (its own Serialize impl): its configuration carries them as any kind's does.
        if self.structs[index].out.kind.is_some()
            && !fields
                .iter()
                .any(|f| f.flatten && f.ty == TypeRef::TypeMeta)
        {
            out_fields.insert(
                0,
                ApplyField {
                    rust_name: "types".to_owned(),
                    json_name: String::new(),
                    doc: String::new(),
                    ty: ApplyType::Plain("::kube::core::TypeMeta".to_owned()),
                    role: ApplyRole::TypeMeta,
                },
            );
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
        // `ObjectMeta_` (the importer's name for a Go `ObjectMeta` of the API's own, kept
        // apart from Kubernetes' ObjectMeta) would give a name rustc warns about.
        let base = decl.name.trim_end_matches('_');
        let mut name = format!("{base}ApplyConfiguration");
        if self.taken.contains(&name) {
            let prefix: String = decl
                .module_path
                .iter()
                .map(|m| kube_codegen_templates::pascal_case(m))
                .collect();
            name = format!("{prefix}{base}ApplyConfiguration");
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
                self.map_type(inner, deps, debug, partial_eq)
            }
            TypeRef::List { item, .. } | TypeRef::Array { item, .. } => {
                ApplyType::List(Box::new(self.map_type(item, deps, debug, partial_eq)))
            }
            TypeRef::Map(value) => {
                ApplyType::Map(Box::new(self.map_type(value, deps, debug, partial_eq)))
            }
            TypeRef::Json | TypeRef::Opaque => plain("::serde_json::Value"),
            TypeRef::IntOrString => {
                plain("::k8s_openapi::apimachinery::pkg::util::intstr::IntOrString")
            }
            TypeRef::Quantity => plain("::k8s_openapi::apimachinery::pkg::api::resource::Quantity"),
            TypeRef::Time => plain("::k8s_openapi::apimachinery::pkg::apis::meta::v1::Time"),
            TypeRef::ObjectMeta => ApplyType::ObjectMeta,
            TypeRef::TypeMeta => plain("::kube::core::TypeMeta"),
            TypeRef::Bytes => plain("::k8s_openapi::ByteString"),
            TypeRef::K8s(p) => self.k8s.reference(p, "super::k8s::"),
            TypeRef::Local(key) => {
                let decl = &self.api.types[key];
                if decl.has_apply_configuration() {
                    let name = self.visit(key, None);
                    deps.push(name.clone());
                    return ApplyType::Config(name);
                }
                *debug &= decl.derives.iter().any(|d| d == "Debug");
                *partial_eq &= decl.derives.iter().any(|d| d == "PartialEq");
                ApplyType::Plain(super::rust::type_path(self.api, self.options, key))
            }
        }
    }

    /// The configurations in visiting order, with `Debug`/`PartialEq` kept only where
    /// every configuration inside has them too.
    fn finish(mut self) -> Vec<ApplyStruct> {
        box_cycles(&mut self.structs);
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

/// Boxes each field through which a configuration reaches itself (cluster-api's
/// `JSONSchemaProps.items`): held directly, such a field would give the configuration
/// infinite size. Lists and maps hold theirs on the heap already, so only direct fields
/// count as edges, and only fields on a cycle are boxed.
fn box_cycles(structs: &mut [Building]) {
    let direct: BTreeMap<String, Vec<String>> = structs
        .iter()
        .map(|b| {
            let held = b.out.fields.iter().filter_map(|f| match &f.ty {
                ApplyType::Config(n) => Some(n.clone()),
                _ => None,
            });
            (b.out.name.clone(), held.collect())
        })
        .collect();
    let reaches = |from: &str, to: &str| {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from.to_owned()];
        while let Some(n) = todo.pop() {
            if n == to {
                return true;
            }
            if seen.insert(n.clone()) {
                todo.extend(direct.get(&n).into_iter().flatten().cloned());
            }
        }
        false
    };
    for b in structs {
        let own = b.out.name.clone();
        for f in &mut b.out.fields {
            if let ApplyType::Config(n) = &f.ty
                && reaches(n, &own)
            {
                f.ty = ApplyType::Boxed(n.clone());
            }
        }
    }
}

/// The apply configurations of Kubernetes types, built from their stored schemas.
struct K8sBuilder {
    /// The Kubernetes version whose schemas the CRDs embed: the same types, the same fields.
    version: crate::KubernetesVersion,
    /// k8s-openapi path -> configuration name.
    names: BTreeMap<String, String>,
    taken: BTreeSet<String>,
    /// In visiting order, parents first (`None` while its fields are being built).
    structs: Vec<Option<ApplyStruct>>,
    /// The types being built, to stop at a type that contains itself.
    stack: Vec<String>,
}

impl K8sBuilder {
    fn new(version: crate::KubernetesVersion) -> Self {
        K8sBuilder {
            version,
            names: BTreeMap::new(),
            taken: BTreeSet::new(),
            structs: vec![],
            stack: vec![],
        }
    }

    /// How a configuration holds the Kubernetes type at `path` (below `k8s_openapi::`),
    /// naming configurations with `prefix` (the path to the `k8s` module).
    fn reference(&mut self, path: &str, prefix: &str) -> ApplyType {
        if path == "apimachinery::pkg::apis::meta::v1::ObjectMeta" {
            return ApplyType::ObjectMeta;
        }
        let as_is = ApplyType::Plain(format!("::k8s_openapi::{path}"));
        let Some(schema) = crate::kubernetes::schemas::data(self.version)
            .types
            .get(path)
        else {
            return as_is;
        };
        // No properties: one value on the wire (Quantity, Time, RawExtension, an empty
        // struct), owned whole. A type inside itself (none in k8s.io/api today) would
        // need a Box: it is held as it is instead.
        if schema.get("properties").is_none() || self.stack.iter().any(|p| p == path) {
            return as_is;
        }
        let name = match self.names.get(path) {
            Some(n) => n.clone(),
            None => self.build(path, schema),
        };
        ApplyType::Config(format!("{prefix}{name}"))
    }

    fn build(&mut self, path: &str, schema: &Value) -> String {
        let segments: Vec<&str> = path.split("::").collect();
        let last = segments.last().copied().unwrap_or(path);
        let mut name = format!("{last}ApplyConfiguration");
        if self.taken.contains(&name) {
            // `api::events::v1::Event` beside `api::core::v1::Event`: group and version
            // in front.
            let n = segments.len();
            let prefix: String = segments[n.saturating_sub(3)..n.saturating_sub(1)]
                .iter()
                .map(|s| kube_codegen_templates::pascal_case(s))
                .collect();
            name = format!("{prefix}{last}ApplyConfiguration");
        }
        self.taken.insert(name.clone());
        self.names.insert(path.to_owned(), name.clone());
        let index = self.structs.len();
        self.structs.push(None);
        self.stack.push(path.to_owned());
        let mut fields = vec![];
        if let Some(Value::Object(props)) = schema.get("properties") {
            for (json, prop) in props {
                let description = prop
                    .get("description")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                fields.push(ApplyField {
                    rust_name: field_name(json),
                    json_name: json.clone(),
                    doc: first_paragraph(description),
                    ty: self.schema_type(prop),
                    role: ApplyRole::Field,
                });
            }
        }
        self.stack.pop();
        self.structs[index] = Some(ApplyStruct {
            name: name.clone(),
            source_path: format!("::k8s_openapi::{path}"),
            fields,
            // Everything inside is a k8s-openapi type, std or serde_json: all have both.
            debug: true,
            partial_eq: true,
            kind: None,
        });
        name
    }

    /// The type a property of a stored schema holds.
    fn schema_type(&mut self, s: &Value) -> ApplyType {
        if let Some(r) = s.get("$ref").and_then(Value::as_str) {
            return self.reference(r, "");
        }
        let plain = |p: &str| ApplyType::Plain(p.to_owned());
        if s.get("x-kubernetes-int-or-string") == Some(&Value::Bool(true)) {
            return plain("::k8s_openapi::apimachinery::pkg::util::intstr::IntOrString");
        }
        let format = s.get("format").and_then(Value::as_str);
        match s.get("type").and_then(Value::as_str) {
            Some("string") => match format {
                Some("byte") => plain("::k8s_openapi::ByteString"),
                Some("date-time") => {
                    plain("::k8s_openapi::apimachinery::pkg::apis::meta::v1::Time")
                }
                _ => ApplyType::String,
            },
            Some("integer") if format == Some("int32") => plain("i32"),
            Some("integer") => plain("i64"),
            Some("number") => plain("f64"),
            Some("boolean") => plain("bool"),
            Some("array") => ApplyType::List(Box::new(match s.get("items") {
                Some(items) => self.schema_type(items),
                None => plain("::serde_json::Value"),
            })),
            Some("object") if s.get("additionalProperties").is_some_and(Value::is_object) => {
                ApplyType::Map(Box::new(self.schema_type(&s["additionalProperties"])))
            }
            // Anything else (preserve-unknown-fields, no type) is any JSON.
            _ => plain("::serde_json::Value"),
        }
    }
}

/// A Rust field name for a JSON property: `hostIPC` -> `host_ipc`, `podIPs` -> `pod_ips`,
/// `$ref` -> `ref_`; keywords become raw identifiers where the field is written.
fn field_name(json: &str) -> String {
    let chars: Vec<char> = json.chars().collect();
    let mut out = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_ascii_alphanumeric() {
            if !out.is_empty() && !out.ends_with('_') {
                out.push('_');
            }
            continue;
        }
        if c.is_ascii_uppercase() && i > 0 {
            let prev = chars[i - 1];
            let next = chars.get(i + 1).copied();
            // A plural `s` after an acronym (`IPs`) belongs to the acronym.
            let plural_s =
                next == Some('s') && chars.get(i + 2).is_none_or(|c| c.is_ascii_uppercase());
            let starts_word = prev.is_ascii_lowercase()
                || prev.is_ascii_digit()
                || (prev.is_ascii_uppercase()
                    && next.is_some_and(|n| n.is_ascii_lowercase())
                    && !plural_s);
            if starts_word && !out.is_empty() && !out.ends_with('_') {
                out.push('_');
            }
        }
        out.push(c.to_ascii_lowercase());
    }
    if json.starts_with('$') {
        out.push('_');
    }
    if out.starts_with(|c: char| c.is_ascii_digit()) || out.is_empty() {
        out.insert(0, '_');
    }
    out
}

/// The first paragraph of a doc comment, marker lines left out, on one line, made safe for
/// rustdoc (see [`rustdoc_safe`]).
fn first_paragraph(doc: &str) -> String {
    rustdoc_safe(&first_paragraph_raw(doc))
}

/// Text written for Go's godoc (Kubernetes descriptions) or for another module read as
/// rustdoc Markdown in the generated module: `containers[*]` would be a broken intra-doc
/// link, `<name>` an HTML tag and a bare URL a lint, all errors under `-D warnings`.
/// Brackets and angle brackets are escaped and URLs put in `<...>`.
fn rustdoc_safe(text: &str) -> String {
    let escape = |text: &str, out: &mut String| {
        for c in text.chars() {
            if matches!(c, '[' | ']' | '<' | '>') {
                out.push('\\');
            }
            out.push(c);
        }
    };
    let mut out = String::with_capacity(text.len());
    for (i, word) in text.split(' ').enumerate() {
        if i > 0 {
            out.push(' ');
        }
        match word.find("https://").or_else(|| word.find("http://")) {
            Some(at) => {
                // `(https://x).`: what is around the URL is not part of it.
                escape(&word[..at], &mut out);
                let rest = &word[at..];
                let url = rest.trim_end_matches(['.', ',', ')', ';', ':', '"', '\'']);
                out.push('<');
                out.push_str(url);
                out.push('>');
                escape(&rest[url.len()..], &mut out);
            }
            None => escape(word, &mut out),
        }
    }
    out
}

fn first_paragraph_raw(doc: &str) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn docs_are_safe_for_rustdoc() {
        assert_eq!(
            rustdoc_safe("as pod.spec.containers[*].image. More info: https://k8s.io/x#y."),
            "as pod.spec.containers\\[*\\].image. More info: <https://k8s.io/x#y>."
        );
        assert_eq!(rustdoc_safe("a <name> here"), "a \\<name\\> here");
        assert_eq!(
            rustdoc_safe("webhook (https://github.com/x/y) inlines"),
            "webhook (<https://github.com/x/y>) inlines"
        );
    }

    #[test]
    fn field_names_follow_k8s_openapi() {
        for (json, rust) in [
            ("hostIPC", "host_ipc"),
            ("podIPs", "pod_ips"),
            ("containerPort", "container_port"),
            ("apiVersion", "api_version"),
            ("x-kubernetes-list-type", "x_kubernetes_list_type"),
            ("$ref", "ref_"),
            ("type", "type"),
            ("IPFamilies", "ip_families"),
            (
                "terminationGracePeriodSeconds",
                "termination_grace_period_seconds",
            ),
        ] {
            assert_eq!(field_name(json), rust, "{json}");
        }
    }

    #[test]
    fn embedded_kubernetes_types_get_configurations_with_every_field_optional() {
        let mut k8s = K8sBuilder::new(crate::KubernetesVersion::NEWEST);
        let t = k8s.reference("api::core::v1::PodTemplateSpec", "super::k8s::");
        assert_eq!(
            t,
            ApplyType::Config("super::k8s::PodTemplateSpecApplyConfiguration".into())
        );
        let structs: Vec<ApplyStruct> = k8s.structs.into_iter().flatten().collect();
        let find = |n: &str| structs.iter().find(|s| s.name == n).unwrap();
        let template = find("PodTemplateSpecApplyConfiguration");
        assert_eq!(template.fields[0].ty, ApplyType::ObjectMeta);
        let container = find("ContainerApplyConfiguration");
        let ty = |s: &ApplyStruct, f: &str| {
            s.fields
                .iter()
                .find(|x| x.json_name == f)
                .unwrap()
                .ty
                .clone()
        };
        assert_eq!(ty(container, "name"), ApplyType::String);
        assert_eq!(
            ty(container, "ports"),
            ApplyType::List(Box::new(ApplyType::Config(
                "ContainerPortApplyConfiguration".into()
            )))
        );
        let resources = find("ResourceRequirementsApplyConfiguration");
        assert_eq!(
            ty(resources, "limits"),
            ApplyType::Map(Box::new(ApplyType::Plain(
                "::k8s_openapi::apimachinery::pkg::api::resource::Quantity".into()
            )))
        );
        // Each type once, whatever reaches it twice.
        let names: BTreeSet<&str> = structs.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names.len(), structs.len());
    }
}
