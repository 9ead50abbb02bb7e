//! `kube-codegen import crd`: CustomResourceDefinitions in, an API crate out, annotated
//! Rust types in Go's layout (`src/apis/<group>/<version>/{mod.rs,types.rs}`) whose
//! `kube-codegen generate` gives back the same CRDs, keyword by keyword.
//!
//! Pure: YAML text in, files (path, contents) and located diagnostics out. Reading inputs
//! and writing the crate is the caller's (the CLI's `import crd`, [`crate::output`]).
//!
//! - `crd`: reading and checking CRDs (malformed YAML, v1beta1, non-structural schemas);
//! - `types`: a version's schema to structs, fields and markers, with the
//!   `+kube-codegen:schema` merge patch for what no marker says;
//! - `naming`: Go-like type names from property paths, snake_case fields, module names;
//! - `render`: the text of each file.

mod crd;
#[cfg(feature = "import-go")]
pub(crate) mod go;
mod k8s;
mod naming;
mod net;
mod positions;
mod render;
mod types;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde_json::Value;

pub use crd::Input;
pub use render::IMPORT_HEADER;

use crate::diagnostics::{Diagnostic, Diagnostics};
use crate::markers::Name;
use crate::{Error, GeneratedFile, KubernetesVersion};
use naming::Names;
use types::{ModuleBuilder, TypeDef};

/// What to import into.
#[derive(Clone, Debug)]
pub struct ImportOptions {
    /// The crate directory files are placed under.
    pub out: PathBuf,
    /// The package name for a new crate's Cargo.toml.
    pub crate_name: String,
    /// Written into a new crate's metadata (`kubernetes-version`).
    pub kubernetes: KubernetesVersion,
    /// Group and version modules already in the crate (`src/apis/<group>/<version>`), so
    /// the parent `mod.rs` files keep declaring them.
    pub existing: BTreeMap<String, BTreeSet<String>>,
    /// Whether `Cargo.toml` / `src/lib.rs` exist (they are written only when absent).
    pub has_cargo_toml: bool,
    /// Whether `src/lib.rs` exists.
    pub has_lib_rs: bool,
    /// Where a new crate's Cargo.toml takes kube-codegen-runtime from.
    pub runtime: crate::RuntimeSource,
}

/// Counts for the closing summary.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ImportStats {
    /// CRDs read.
    pub crds: usize,
    /// Versions imported, over all CRDs.
    pub versions: usize,
    /// Kind structs written (one per CRD version).
    pub kinds: usize,
    /// Structs written, kinds included.
    pub types: usize,
    /// Fields and types that needed the `+kube-codegen:schema` patch.
    pub patches: usize,
}

/// An import's result, in memory.
#[derive(Debug)]
pub struct Imported {
    /// Every file, sorted by path.
    pub files: Vec<GeneratedFile>,
    /// What the import could carry only through `+kube-codegen:schema`, or not at all.
    pub warnings: Vec<Diagnostic>,
    /// What was imported.
    pub stats: ImportStats,
}

impl Imported {
    /// One line: what was imported, and the warning count.
    pub fn summary(&self) -> String {
        let s = &self.stats;
        format!(
            "kube-codegen: imported {} CRD{}: {} version{}, {} kind{}, {} type{}; {} warning{}",
            s.crds,
            plural(s.crds),
            s.versions,
            plural(s.versions),
            s.kinds,
            plural(s.kinds),
            s.types,
            plural(s.types),
            self.warnings.len(),
            plural(self.warnings.len()),
        )
    }
}

impl Imported {
    /// The warnings as the CLI prints them, each with its CRD file and line.
    pub fn render_warnings(&self) -> String {
        crate::diagnostics::render_all(&self.warnings)
    }

    /// Write the files: only those that changed, never over a file kube-codegen did not
    /// write (checked for every file before the first is written, so a refusal writes
    /// nothing), each through a temporary file and a rename.
    ///
    /// # Errors
    ///
    /// [`Error::Output`] when a file in the way is hand-written or the file system refuses.
    pub fn write(&self) -> Result<crate::WriteReport, Error> {
        Ok(crate::output::write_all(&self.files, &[])?)
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

fn input_error(diags: Vec<Diagnostic>) -> Error {
    Error::import_failed(diags)
}

/// Import every CRD of `inputs` (all their versions) into files of the crate at `options.out`.
pub fn import_crds(inputs: &[Input], options: &ImportOptions) -> Result<Imported, Error> {
    // Reading and converting recurse as deep as the schemas nest.
    Error::on_run_stack(|| import_crds_here(inputs, options))
}

fn import_crds_here(inputs: &[Input], options: &ImportOptions) -> Result<Imported, Error> {
    let mut warnings = vec![];
    let mut errors = vec![];
    let mut crds = vec![];
    for input in inputs {
        match crd::read(input, &mut warnings) {
            Ok(found) => crds.extend(found),
            Err(e) => errors.extend(e),
        }
    }
    if !errors.is_empty() {
        errors.extend(warnings);
        return Err(input_error(errors));
    }
    // One CRD per name: the same CRD twice (two files) would give two kinds of one name.
    let mut by_name: BTreeMap<String, crd::Crd> = BTreeMap::new();
    for c in crds {
        if let Some(first) = by_name.get(&c.name) {
            errors.push(Diagnostic::new(
                c.loc.clone(),
                format!("CRD {} is given twice (first at {})", c.name, first.loc),
            ));
            continue;
        }
        by_name.insert(c.name.clone(), c);
    }
    if by_name.is_empty() && errors.is_empty() {
        errors.push(Diagnostic::new(
            crate::diagnostics::Location::new(
                inputs
                    .first()
                    .map(|i| i.path.as_path())
                    .unwrap_or(Path::new("-")),
                1,
                1,
            ),
            "no CustomResourceDefinition found in the input",
        ));
    }
    if !errors.is_empty() {
        errors.extend(warnings);
        return Err(input_error(errors));
    }

    // Group modules: the first label of the group, or the whole group when two groups of
    // this import share a first label.
    let groups: BTreeSet<&str> = by_name.values().map(|c| c.group()).collect();
    let mut first_labels: BTreeMap<String, usize> = BTreeMap::new();
    for g in &groups {
        *first_labels.entry(naming::group_module(g)).or_default() += 1;
    }
    let group_mod = |g: &str| {
        let short = naming::group_module(g);
        if first_labels[&short] > 1 {
            naming::group_module_full(g)
        } else {
            short
        }
    };

    // (group, version) -> the CRDs with that version, in name order.
    let mut modules: BTreeMap<(String, String), Vec<&crd::Crd>> = BTreeMap::new();
    for c in by_name.values() {
        for v in c.spec()["versions"].as_array().into_iter().flatten() {
            let version = v["name"].as_str().unwrap_or_default().to_owned();
            modules
                .entry((c.group().to_owned(), version))
                .or_default()
                .push(c);
        }
    }

    let mut stats = ImportStats {
        crds: by_name.len(),
        ..Default::default()
    };
    let mut files = vec![];
    let apis = options.out.join("src/apis");
    let mut tree: render::Tree = options.existing.clone();
    for ((group, version), crds) in &modules {
        let gm = group_mod(group);
        let vm = naming::module_ident(version);
        tree.entry(gm.clone()).or_default().insert(vm.clone());
        let mut names = Names::for_types();
        let mut seen = BTreeMap::new();
        // Kinds first: a kind's struct must carry the kind's name.
        for c in crds {
            names.claim(c.kind());
        }
        // The naming rule needs every use of every shape first: a recording pass over the
        // module's kinds, whose types and warnings are dropped, makes the plan.
        let mut recorder = types::Recorder::default();
        for c in crds {
            walk_version(
                c,
                version,
                options.kubernetes,
                &mut Names::for_types(),
                &mut BTreeMap::new(),
                types::Pass::Record(&mut recorder),
            );
        }
        let plan = recorder.plan(&mut names);
        let mut all_types: Vec<TypeDef> = vec![];
        let mut sources = BTreeSet::new();
        for c in crds {
            // The file name only: the text must not depend on where the import ran.
            sources.insert(
                c.loc
                    .file
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_else(|| "-".into()),
            );
            let (mut made, mut found, v, count) = walk_version(
                c,
                version,
                options.kubernetes,
                &mut names,
                &mut seen,
                types::Pass::Build(&plan),
            );
            let kind_markers = kind_markers(c, &v, count, &mut found);
            warnings.extend(found);
            let kind = made.first_mut().expect("the kind's struct comes first");
            let mut m = kind_markers;
            m.append(&mut kind.markers);
            kind.markers = m;
            stats.versions += 1;
            stats.kinds += 1;
            all_types.extend(made);
        }
        stats.types += all_types.len();
        stats.patches += all_types
            .iter()
            .map(|t| {
                t.markers.iter().filter(|m| is_schema_patch(m)).count()
                    + t.fields
                        .iter()
                        .flat_map(|f| &f.markers)
                        .filter(|m| is_schema_patch(m))
                        .count()
            })
            .sum::<usize>();
        let dir = apis.join(&gm).join(&vm);
        files.push(GeneratedFile {
            path: dir.join("mod.rs"),
            contents: render::version_mod_rs(group, version, &vm),
        });
        files.push(GeneratedFile {
            path: dir.join("types.rs"),
            contents: render::types_rs(&all_types, &sources),
        });
    }
    for (g, versions) in &tree {
        files.push(GeneratedFile {
            path: apis.join(g).join("mod.rs"),
            contents: render::parent_mod_rs("An API group, one module per version.", versions),
        });
    }
    files.push(GeneratedFile {
        path: apis.join("mod.rs"),
        contents: render::parent_mod_rs(
            "API groups imported from CRDs, in Go's layout (`<group>/<version>`).",
            &tree.keys().cloned().collect(),
        ),
    });
    if !options.has_cargo_toml {
        files.push(GeneratedFile {
            path: options.out.join("Cargo.toml"),
            contents: render::cargo_toml(
                &options.crate_name,
                options.kubernetes,
                "src/apis",
                "Descriptions imported from CRDs",
                &options.runtime,
                false,
                "",
            ),
        });
    }
    if !options.has_lib_rs {
        files.push(GeneratedFile {
            path: options.out.join("src/lib.rs"),
            contents: render::lib_rs(
                "from CRDs with `kube-codegen import crd`",
                &BTreeSet::from(["apis".to_owned()]),
            ),
        });
    }
    files.sort_by(|a, b| a.path.cmp(&b.path));
    // What `generate` would still refuse, placed at the CRD whose kind names the type the
    // error is in (types are named after their kind: `WidgetSpecTemplate`). The CRDs'
    // documents are done with: freed first, as the check resolves the whole port.
    let kinds: Vec<(String, crate::Location)> = by_name
        .values()
        .map(|c| (c.kind().to_owned(), c.loc.clone()))
        .collect();
    drop(modules);
    drop(by_name);
    let refused: Vec<Diagnostic> = net::refusals(&files, &options.out)
        .iter()
        .map(|r| {
            let ty = r
                .text
                .as_deref()
                .and_then(|t| net::type_at(t, r.diagnostic.loc.line));
            let crd = ty.and_then(|ty| {
                kinds
                    .iter()
                    .filter(|(k, _)| ty.starts_with(k.as_str()))
                    .max_by_key(|(k, _)| k.len())
            });
            match crd {
                Some((_, loc)) => net::placed(loc.clone(), r),
                None => r.diagnostic.clone(),
            }
        })
        .collect();
    if !refused.is_empty() {
        let mut all = refused;
        all.extend(warnings);
        return Err(input_error(all));
    }
    let mut sorted = Diagnostics(warnings).sorted();
    sorted.retain(|d| !d.is_error());
    Ok(Imported {
        files,
        warnings: sorted,
        stats,
    })
}

/// The kind-level markers of one version: identity, scope, subresources, columns, versions.
/// One pass of the type builder over CRD `c`'s schema of `version`: the types and
/// warnings it made, the version's node and how many versions the CRD has.
fn walk_version(
    c: &crd::Crd,
    version: &str,
    kubernetes: KubernetesVersion,
    names: &mut Names,
    seen: &mut BTreeMap<String, String>,
    pass: types::Pass<'_>,
) -> (Vec<TypeDef>, Vec<Diagnostic>, Value, usize) {
    let versions = c.spec()["versions"].as_array().cloned().unwrap_or_default();
    let (i, v) = versions
        .iter()
        .enumerate()
        .find(|(_, v)| v["name"].as_str() == Some(version))
        .expect("grouped by this version");
    let mut b = ModuleBuilder {
        names,
        pass,
        kind: c.kind().to_owned(),
        seen,
        types: vec![],
        warnings: vec![],
        loc: c.loc.clone(),
        positions: c.positions.clone(),
        kubernetes,
        what: format!("CRD {} version {version}", c.name),
        needs_status: !v["subresources"]["status"].is_null(),
    };
    let root = v["schema"]["openAPIV3Schema"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    b.structure(
        &root,
        c.kind(),
        &format!("spec.versions[{i}].schema.openAPIV3Schema"),
        true,
    );
    (b.types, b.warnings, v.clone(), versions.len())
}

fn kind_markers(
    c: &crd::Crd,
    v: &Value,
    n_versions: usize,
    warnings: &mut Vec<Diagnostic>,
) -> Vec<String> {
    let q = |s: &str| serde_json::to_string(s).expect("string");
    let spec = c.spec();
    let names = &spec["names"];
    let mut out = vec![Name::Genclient.text()];
    let cluster = spec["scope"].as_str() == Some("Cluster");
    if cluster {
        out.push(Name::GenclientNonNamespaced.text());
    }
    if v["subresources"]["status"].is_null() {
        out.push(Name::GenclientNoStatus.text());
    }
    let list = |key: &str| -> Option<String> {
        let items: Vec<&str> = names[key]
            .as_array()?
            .iter()
            .filter_map(Value::as_str)
            .collect();
        (!items.is_empty()).then(|| items.join(";"))
    };
    let mut resource = vec![format!(
        "path={}",
        names["plural"].as_str().unwrap_or_default()
    )];
    if let Some(s) = names["singular"].as_str() {
        resource.push(format!("singular={s}"));
    }
    if let Some(s) = list("shortNames") {
        resource.push(format!("shortName={s}"));
    }
    if let Some(s) = list("categories") {
        resource.push(format!("categories={s}"));
    }
    resource.push(format!(
        "scope={}",
        if cluster { "Cluster" } else { "Namespaced" }
    ));
    out.push(Name::Resource.with_args(resource.join(",")));
    let mut dropped = vec![];
    if let Some(list_kind) = names["listKind"].as_str()
        && list_kind != format!("{}List", c.kind())
    {
        dropped.push(format!(
            "spec.names.listKind `{list_kind}` (always `<Kind>List`)"
        ));
    }
    for (k, value) in spec {
        // What the API server fills in on a CRD read from a cluster is the default anyway.
        let default = match k.as_str() {
            "conversion" => value == &serde_json::json!({"strategy": "None"}),
            "preserveUnknownFields" => value == &Value::Bool(false),
            _ => false,
        };
        if !default && !matches!(k.as_str(), "group" | "names" | "scope" | "versions") {
            dropped.push(format!("spec.{k}"));
        }
    }
    if !v["subresources"]["status"].is_null() {
        out.push(Name::SubresourceStatus.text());
    }
    if let Some(s) = v["subresources"]["scale"].as_object() {
        let mut args = vec![];
        for (arg, key) in [
            ("specpath", "specReplicasPath"),
            ("statuspath", "statusReplicasPath"),
            ("selectorpath", "labelSelectorPath"),
        ] {
            if let Some(p) = s.get(key).and_then(Value::as_str) {
                args.push(format!("{arg}={}", q(p)));
            }
        }
        out.push(Name::SubresourceScale.with_args(args.join(",")));
    }
    if n_versions > 1 && v["storage"] == Value::Bool(true) {
        out.push(Name::StorageVersion.text());
    }
    if v["served"] == Value::Bool(false) {
        out.push(Name::UnservedVersion.text());
    }
    if v["deprecated"] == Value::Bool(true) {
        match v["deprecationWarning"].as_str() {
            Some(w) => out.push(Name::DeprecatedVersion.with_args(format!("warning={}", q(w)))),
            None => out.push(Name::DeprecatedVersion.text()),
        }
    }
    for col in v["additionalPrinterColumns"]
        .as_array()
        .into_iter()
        .flatten()
    {
        let mut args = vec![];
        for key in ["name", "type", "jsonPath", "description", "format"] {
            if let Some(s) = col[key].as_str() {
                let arg = if key == "jsonPath" { "JSONPath" } else { key };
                args.push(format!("{arg}={}", q(s)));
            }
        }
        if let Some(p) = col["priority"].as_i64() {
            args.push(format!("priority={p}"));
        }
        out.push(Name::PrintColumn.with_args(args.join(",")));
    }
    for f in v["selectableFields"].as_array().into_iter().flatten() {
        if let Some(p) = f["jsonPath"].as_str() {
            out.push(Name::SelectableField.with_args(format!("JSONPath={}", q(p))));
        }
    }
    let meta = &c.value["metadata"];
    let pairs = |key: &str, skip: &[&str]| -> Option<String> {
        let m = meta[key].as_object()?;
        let items: Vec<String> = m
            .iter()
            .filter(|(k, _)| !skip.contains(&k.as_str()))
            .map(|(k, v)| q(&format!("{k}={}", v.as_str().unwrap_or_default())))
            .collect();
        (!items.is_empty()).then(|| items.join(";"))
    };
    let mut meta_args = vec![];
    if let Some(a) = pairs("annotations", &["controller-gen.kubebuilder.io/version"]) {
        meta_args.push(format!("annotations={a}"));
    }
    if let Some(l) = pairs("labels", &[]) {
        meta_args.push(format!("labels={l}"));
    }
    if !meta_args.is_empty() {
        out.push(Name::Metadata.with_args(meta_args.join(",")));
    }
    for k in v.as_object().into_iter().flat_map(|o| o.keys()) {
        if !matches!(
            k.as_str(),
            "name"
                | "served"
                | "storage"
                | "deprecated"
                | "deprecationWarning"
                | "schema"
                | "subresources"
                | "additionalPrinterColumns"
                | "selectableFields"
        ) {
            dropped.push(format!(
                "{k} of version {}",
                v["name"].as_str().unwrap_or_default()
            ));
        }
    }
    if v["deprecated"] == Value::Bool(false) {
        dropped.push("`deprecated: false` (the same as leaving it out)".into());
    }
    for d in dropped {
        warnings.push(
            Diagnostic::warning(c.loc.clone(), format!("CRD {}: {d} is not imported", c.name))
                .with_hint("kube-codegen generate does not write it; set it on the CRD after generation if you need it"),
        );
    }
    out
}

/// Whether marker text is a `+kube-codegen:schema` patch.
fn is_schema_patch(marker: &str) -> bool {
    marker
        .strip_prefix(Name::Schema.as_str())
        .is_some_and(|rest| rest.starts_with('='))
}
