//! The generators. Each output family is one module that reads the resolved model and
//! returns files; [`REGISTRY`] lists them, and nothing outside this file names one. Adding a
//! generator is its module plus a line here: it declares its name, what it needs, the
//! markers whose meaning it owns (the marker table, [`marker_table`], is
//! [`crate::markers::CORE_MARKERS`] plus every generator's), the checks its output builds
//! on ([`Check`], which resolve runs for the generators that run) and what it makes, a Rust
//! module or files of YAML.
//!
//! A generator gets a model that passed every check: its `prepare` turns it into a
//! renderer and has no diagnostics to report into, so it cannot refuse it; the renderer
//! runs on any thread.

pub(crate) mod crd;
pub(crate) mod rust;

mod admission_policy;
mod applyconfig;
mod client;
mod conversion;
mod deepcopy;
mod fake;
mod informers;
mod listers;
mod marker_reference;
mod rbac;
mod register;
mod validation;
mod webhook;

pub use marker_reference::{MarkerDoc, ReferenceFormat, marker_docs, marker_reference};

use std::cell::OnceCell;
use std::fmt;
use std::sync::Arc;

use kube_codegen_templates::input as t;

use crate::markers::MarkerSpec;
use crate::model::Api;
use crate::resolve::Check;

/// A generator, by the name users select it with (`generators = ["crd", "client"]` in
/// Cargo metadata, [`crate::Config::generators`], `--generators crd,client`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum GeneratorName {
    /// CustomResourceDefinition YAML with structural schemas (controller-gen's `crd`).
    Crd,
    /// `kube::Resource` impls, constants and the registry of kinds (register-gen).
    Register,
    /// `DeepCopy` impls (deepcopy-gen, controller-gen's `object`).
    Deepcopy,
    /// Apply configurations for server-side apply (applyconfiguration-gen).
    Applyconfigurations,
    /// The typed clientset (client-gen).
    Client,
    /// The fake clientset over an in-memory API server (client-gen's fake).
    Fake,
    /// Typed listers over informer caches (lister-gen).
    Listers,
    /// Shared informers (informer-gen).
    Informers,
    /// A ClusterRole from `+kubebuilder:rbac` markers (controller-gen's `rbac`).
    Rbac,
    /// Conversions between the versions of a kind and a conversion webhook's dispatch
    /// table (conversion-gen, controller-runtime's hub and spoke).
    Conversion,
    /// Defaulting and validation per kind as the API server does them, CEL rules
    /// evaluated (defaulter-gen, validation-gen), for kinds that opt in.
    Validation,
    /// Mutating and validating webhook configurations from `+kubebuilder:webhook` markers
    /// (controller-gen's `webhook`).
    Webhook,
    /// ValidatingAdmissionPolicies holding a kind's validation as CEL, for kinds that opt in.
    AdmissionPolicy,
}

impl GeneratorName {
    /// The name as users write it.
    pub fn as_str(self) -> &'static str {
        generator(self).id
    }

    /// One line on what it makes.
    pub fn about(self) -> &'static str {
        generator(self).about
    }

    /// Every generator, in registry order.
    pub fn all() -> impl Iterator<Item = GeneratorName> {
        REGISTRY.iter().map(|g| g.name)
    }
}

impl fmt::Display for GeneratorName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for GeneratorName {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        REGISTRY
            .iter()
            .find(|g| g.id == s)
            .map(|g| g.name)
            .ok_or_else(|| {
                let known: Vec<&str> = REGISTRY.iter().map(|g| g.id).collect();
                format!("unknown generator `{s}`; known: {}", known.join(", "))
            })
    }
}

impl serde::Serialize for GeneratorName {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> serde::Deserialize<'de> for GeneratorName {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// One registered generator.
pub(crate) struct Generator {
    pub name: GeneratorName,
    /// The name users select it by.
    pub id: &'static str,
    /// One line for `--help` and the docs.
    pub about: &'static str,
    /// Generators whose output this one's output uses; selecting it selects them.
    pub requires: &'static [GeneratorName],
    /// The markers whose meaning this generator owns.
    pub markers: &'static [MarkerSpec],
    /// What its output builds on beyond the model's own rules, which resolve checks when
    /// it runs.
    pub checks: &'static [Check],
    pub output: Output,
}

impl Generator {
    /// Whether it makes a Rust module (off with [`crate::Config::emit_rust`]`(false)`).
    pub fn is_rust(&self) -> bool {
        matches!(self.output, Output::Rust { .. })
    }

    /// Whether it has anything to make for this API: the `conversion` module is written
    /// only for APIs with a kind that opted in, so other crates' generated code is
    /// unchanged by its existence.
    pub fn wanted(&self, api: &Api) -> bool {
        match self.name {
            GeneratorName::Conversion => conversion::wanted(api),
            GeneratorName::Validation => validation::wanted(api),
            _ => true,
        }
    }

    /// The Rust module it makes, if any.
    pub fn rust_module(&self) -> Option<&'static str> {
        match self.output {
            Output::Rust { module, .. } => Some(module),
            Output::Yaml { .. } => None,
        }
    }
}

/// What a generator makes.
pub(crate) enum Output {
    /// One module of generated Rust: a file beside `mod.rs`, or an inline module of the
    /// single file build.rs includes.
    Rust {
        /// The module's name (and file stem).
        module: &'static str,
        /// The `mod.rs` doc line of the module.
        doc: &'static str,
        /// Relative rendering cost: costlier modules are rendered first, so parallel
        /// rendering finishes the big files first and fills in with the small ones.
        cost: u8,
        prepare: fn(&Context) -> RenderRust,
    },
    /// Files of YAML in the generator's own directory: `<out-dir>/<dir>` when an output
    /// directory is set (build.rs), else `<crate>/<default_dir>`, unless configured.
    Yaml {
        dir: &'static str,
        default_dir: &'static str,
        prepare: fn(&Context) -> RenderYaml,
    },
}

/// A Rust module's renderer, prepared from checked inputs: callable on any thread (token
/// streams cannot cross threads, so each file is rendered where it is formatted).
pub(crate) type RenderRust = Box<dyn Fn() -> proc_macro2::TokenStream + Send + Sync>;

/// A YAML generator's files, prepared from checked inputs: the file names, and a renderer
/// for one of them by index, callable on any thread.
pub(crate) struct RenderYaml {
    pub names: Vec<String>,
    pub render: Box<dyn Fn(usize) -> String + Send + Sync>,
}

/// One YAML file of documents (controller-gen's manifests: `---` before each, the header
/// first), or no file when there are none.
pub(crate) fn yaml_documents(file_name: &str, documents: Vec<serde_json::Value>) -> RenderYaml {
    if documents.is_empty() {
        return RenderYaml {
            names: vec![],
            render: Box::new(|_| String::new()),
        };
    }
    RenderYaml {
        names: vec![file_name.to_owned()],
        render: Box::new(move |_| documents_text(&documents)),
    }
}

/// The text of a file of YAML documents: the header, then `---` before each.
pub(crate) fn documents_text(documents: &[serde_json::Value]) -> String {
    let mut out = format!("{}\n", crate::YAML_HEADER);
    for document in documents {
        out += "---\n";
        out += &serde_yaml::to_string(document).expect("JSON values always serialize");
    }
    out
}

/// The generators, in the order of `mod.rs` and of the summary.
pub(crate) static REGISTRY: &[Generator] = &[
    crd::GENERATOR,
    applyconfig::GENERATOR,
    client::GENERATOR,
    conversion::GENERATOR,
    deepcopy::GENERATOR,
    fake::GENERATOR,
    informers::GENERATOR,
    listers::GENERATOR,
    register::GENERATOR,
    rbac::GENERATOR,
    validation::GENERATOR,
    webhook::GENERATOR,
    admission_policy::GENERATOR,
];

/// The marker table of every run: the model's markers and every registered generator's,
/// whether selected or not, so a marker of an unselected generator is still checked.
pub(crate) fn marker_table() -> &'static crate::markers::Table {
    static TABLE: std::sync::LazyLock<Vec<&'static MarkerSpec>> = std::sync::LazyLock::new(|| {
        crate::markers::CORE_MARKERS
            .iter()
            .chain(REGISTRY.iter().flat_map(|g| g.markers))
            .collect()
    });
    &TABLE
}

/// The registered generator of a name.
pub(crate) fn generator(name: GeneratorName) -> &'static Generator {
    REGISTRY
        .iter()
        .find(|g| g.name == name)
        .expect("every GeneratorName is registered")
}

/// `selected` with every generator they require, in registry order.
pub(crate) fn with_requirements(selected: &[GeneratorName]) -> Vec<GeneratorName> {
    let mut out: Vec<GeneratorName> = selected.to_vec();
    let mut i = 0;
    while i < out.len() {
        for r in generator(out[i]).requires {
            if !out.contains(r) {
                out.push(*r);
            }
        }
        i += 1;
    }
    REGISTRY
        .iter()
        .map(|g| g.name)
        .filter(|n| out.contains(n))
        .collect()
}

/// What generators read: the model and the options, with conversions several generators
/// share made once.
pub(crate) struct Context<'a> {
    pub api: &'a Api,
    pub rust: &'a rust::RustOptions,
    /// The generators of this run (with their requirements), for the few whose output
    /// calls another's: the fake clientset turns on the `validation` module's admission.
    selected: &'a [GeneratorName],
    /// controller-gen's `crd:headerFile` text, for the top of every CRD file.
    pub crd_header: Option<&'a str>,
    packages: OnceCell<Arc<Vec<t::Package>>>,
}

impl<'a> Context<'a> {
    pub fn new(
        api: &'a Api,
        rust: &'a rust::RustOptions,
        selected: &'a [GeneratorName],
        crd_header: Option<&'a str>,
    ) -> Self {
        Context {
            api,
            rust,
            selected,
            crd_header,
            packages: OnceCell::new(),
        }
    }

    /// Whether this run writes `name`'s output: selected, and something to make for it.
    pub fn generates(&self, name: GeneratorName) -> bool {
        self.selected.contains(&name) && generator(name).wanted(self.api)
    }

    /// The group/versions and kinds as the Rust templates take them, converted once for
    /// every Rust generator.
    pub fn rust_packages(&self) -> Arc<Vec<t::Package>> {
        if let Some(p) = self.packages.get() {
            return p.clone();
        }
        let p = Arc::new(rust::packages(self.api, self.rust));
        let _ = self.packages.set(p.clone());
        p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_are_unique() {
        let mut seen = std::collections::BTreeSet::new();
        for g in REGISTRY {
            assert_eq!(g.id.parse::<GeneratorName>(), Ok(g.name));
            assert_eq!(g.name.to_string(), g.id);
            assert!(seen.insert(g.id), "{} registered twice", g.id);
        }
        assert!("crds".parse::<GeneratorName>().is_err());
    }

    #[test]
    fn requirements_are_closed_and_ordered() {
        use GeneratorName::*;
        assert_eq!(
            with_requirements(&[Fake]),
            [Applyconfigurations, Client, Fake, Register]
        );
        assert_eq!(
            with_requirements(&[Informers]),
            [Informers, Listers, Register]
        );
        assert_eq!(with_requirements(&[Crd]), [Crd]);
    }

    #[test]
    fn every_marker_has_one_owner() {
        let mut seen = std::collections::BTreeMap::new();
        let owners = crate::markers::CORE_MARKERS
            .iter()
            .map(|m| (m.name, "core"))
            .chain(
                REGISTRY
                    .iter()
                    .flat_map(|g| g.markers.iter().map(|m| (m.name, g.id))),
            );
        for (name, owner) in owners {
            if let Some(prev) = seen.insert(name, owner) {
                panic!("marker `{name}` owned by both {prev} and {owner}");
            }
        }
        // And every name has a spec: a name nobody owns would be parsed by nobody.
        for name in crate::markers::Name::ALL {
            assert!(seen.contains_key(name), "marker `{name}` has no spec");
        }
    }
}
