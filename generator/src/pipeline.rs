//! The run: read -> resolve -> generate -> render, in one place. [`crate::Config`] turns
//! its settings into a [`Run`] (paths resolved, the generators selected, the Kubernetes
//! version chosen); [`run`] reads the inputs, builds and checks the model (with the checks
//! the selected generators declare), lets each prepare its work from the checked model,
//! and renders the files in parallel.
//! Writing them is the caller's ([`crate::output`]).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::diagnostics::{Diagnostic, Diagnostics, Location};
use crate::error::Error;
use crate::generators::{self, GeneratorName, rust};
use crate::kubernetes::{ChosenBy, KubernetesVersion};
use crate::output::GeneratedFile;
use crate::schema::SchemaOptions;
use crate::{parallel, read, resolve};

/// What a run reads and makes, settled by [`crate::Config`]: every path resolved.
pub(crate) struct Run {
    /// The crate the run is for (`src/` is the root of its module tree).
    pub crate_dir: PathBuf,
    /// The files and directories to scan.
    pub inputs: Vec<PathBuf>,
    /// Where generated Rust goes (never read as input).
    pub rust_dir: PathBuf,
    /// Where each selected YAML generator's files go.
    pub yaml_dirs: BTreeMap<GeneratorName, PathBuf>,
    /// The generators to run, with their requirements, in registry order.
    pub selected: Vec<GeneratorName>,
    pub schema: SchemaOptions,
    pub rust: rust::RustOptions,
    /// A file whose text goes under the header of every generated Rust file.
    pub header_file: Option<PathBuf>,
    /// A file of YAML comments written at the top of every CRD file, and its ` YEAR`.
    pub crd_header_file: Option<PathBuf>,
    pub crd_header_year: Option<String>,
    pub kubernetes: (KubernetesVersion, ChosenBy),
    /// Every kind opts into the `validation` generator.
    pub validate_all_kinds: bool,
    /// Print `cargo:rerun-if-changed=` and `cargo:warning=` lines (build.rs).
    pub emit_rerun_if_changed: bool,
    /// Render the files; without, the run stops once the input is checked (renderers
    /// refuse nothing) and gives no files.
    pub render: bool,
    /// Leave the input and model unfreed: the process exits after the run (see
    /// [`crate::Config::exits_after`]).
    pub exits_after: bool,
}

/// The result of a generation run, still in memory.
#[derive(Debug)]
pub struct Generated {
    /// Every generated file with its path and contents, sorted by path.
    pub files: Vec<GeneratedFile>,
    /// Every Rust file read, for `cargo:rerun-if-changed`.
    pub inputs: Vec<PathBuf>,
    /// Input understood only in part (a marker of another tool, a group/version without
    /// kinds): generation went on, and the user is told.
    pub warnings: Vec<Diagnostic>,
    /// What was found: each group/version with its kinds, in order.
    pub found: Vec<FoundGroupVersion>,
    /// What each generator that ran made: files for YAML generators, one module each for
    /// Rust generators.
    pub made: Vec<(GeneratorName, usize)>,
    /// The Kubernetes version generated for, and what chose it.
    pub kubernetes: (KubernetesVersion, ChosenBy),
}

/// A group/version the run found, for the closing summary.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FoundGroupVersion {
    /// The API group (`+groupName`).
    pub group: String,
    /// The version (`+versionName`, or the module's name).
    pub version: String,
    /// Where its `+groupName` marker is.
    pub loc: Location,
    /// Its kinds, by name.
    pub kinds: Vec<String>,
}

impl Generated {
    /// One line per group/version with its kinds, and one counting the files, so a user sees
    /// at a glance what a run found and made.
    pub fn summary(&self) -> String {
        let mut out = format!(
            "kube-codegen: Kubernetes {} ({})\n",
            self.kubernetes.0, self.kubernetes.1
        );
        for gv in &self.found {
            let kinds = if gv.kinds.is_empty() {
                "no kinds".to_owned()
            } else {
                gv.kinds.join(", ")
            };
            out += &format!(
                "kube-codegen: {}/{} ({}): {kinds}\n",
                gv.group,
                gv.version,
                gv.loc.file.display()
            );
        }
        let yaml: Vec<String> = self
            .made
            .iter()
            .filter(|(g, _)| !generators::generator(*g).is_rust())
            .map(|(g, n)| format!("{g} {n}"))
            .collect();
        let rust: Vec<&str> = self
            .made
            .iter()
            .filter_map(|(g, _)| generators::generator(*g).rust_module())
            .collect();
        let rust_files = self
            .files
            .iter()
            .filter(|f| f.path.extension().is_some_and(|e| e == "rs"))
            .count();
        let mut parts = yaml;
        if !rust.is_empty() {
            parts.push(format!("Rust {rust_files} ({})", rust.join(", ")));
        }
        out += &format!(
            "kube-codegen: generated {} file{}: {}\n",
            self.files.len(),
            if self.files.len() == 1 { "" } else { "s" },
            parts.join(", ")
        );
        out
    }

    /// The warnings rendered with their source lines, as the CLI prints them.
    pub fn render_warnings(&self) -> String {
        crate::diagnostics::render_all(&self.warnings)
    }
}

/// Run the pipeline: every file in memory, or every problem of the input. It runs on a
/// thread of its own, whose stack the deepest input within the limits needs.
pub(crate) fn run(run: Run) -> Result<Generated, Error> {
    Error::on_run_stack(|| run_here(run))
}

fn run_here(run: Run) -> Result<Generated, Error> {
    let mut diags = Diagnostics::default();
    // Lexically normalized (`a/../b` -> `b`), so module paths derived from file paths
    // agree however the crate directory was spelled.
    let src_root = read::normalize(&run.crate_dir.join("src"));
    let mut files = vec![];
    for path in &run.inputs {
        match read::rust_files(path) {
            Ok(found) => {
                files.extend(found.files.iter().map(|f| read::normalize(f)));
                for (dir, same) in found.revisits {
                    diags.push(Diagnostic::warning(
                        Location::new(&dir, 1, 1),
                        format!(
                            "directory read once: it is {} again (a symlink), whose files are read already",
                            same.display()
                        ),
                    ));
                }
            }
            Err(e) => diags.push(
                Diagnostic::new(Location::new(path, 1, 1), format!("cannot read input: {e}"))
                    .with_hint("check `input` in [package.metadata.kube-codegen]"),
            ),
        }
    }
    // Our own output is never input, even when it lives under `src/`.
    let rust_dir = read::normalize(&run.rust_dir);
    files.retain(|f| !f.starts_with(&rust_dir));
    files.sort();
    files.dedup();
    let modules = parse_modules(&src_root, &files, &rust_dir, &mut diags);
    let mut rust_options = run.rust;
    if let Some(path) = &run.header_file {
        match std::fs::read_to_string(path) {
            Ok(text) => rust_options.boilerplate = Some(text),
            Err(e) => diags.push(Diagnostic::new(
                Location::new(path, 1, 1),
                format!("cannot read header file: {e}"),
            )),
        }
    }
    let mut crd_header = None;
    // Lexically normalized: `import go` names it `../header.yaml.txt` from a crate it
    // checks before the crate's directory exists.
    if let Some(path) = run.crd_header_file.as_deref().map(read::normalize) {
        let path = &path;
        match std::fs::read_to_string(path) {
            Ok(text) => match crate::crd_options::non_comment_line(&text) {
                Some(line) => diags.push(
                    Diagnostic::new(
                        Location::new(path, line, 1),
                        "a CRD header line that is not a YAML comment: it would become part of every CRD file",
                    )
                    .with_hint("start each line with `#` (controller-gen writes the file as it is, so a Go `/* */` licence breaks its CRDs)"),
                ),
                None => {
                    crd_header = Some(crate::crd_options::header_text(
                        &text,
                        run.crd_header_year.as_deref(),
                    ))
                }
            },
            Err(e) => diags.push(Diagnostic::new(
                Location::new(path, 1, 1),
                format!("cannot read CRD header file: {e}"),
            )),
        }
    }
    let kubernetes = run.kubernetes;
    let options = resolve::Options {
        table: generators::marker_table(),
        kubernetes: kubernetes.0,
        validate_all_kinds: run.validate_all_kinds,
        first_input: files
            .first()
            .cloned()
            .unwrap_or_else(|| run.crate_dir.clone()),
        checks: &run
            .selected
            .iter()
            .flat_map(|g| generators::generator(*g).checks)
            .copied()
            .collect::<Vec<_>>(),
        schema: &run.schema,
    };
    let api = resolve::build(&modules, &options, &mut diags);
    // The modules are done with: free them now, so rendering reuses the memory, unless
    // the process exits after the run.
    let exits_after = run.exits_after;
    unfreed_if(exits_after, modules);
    // Every problem of the input is resolve's to find; with one, nothing is generated.
    if diags.has_errors() {
        let rendered = diags.render();
        return Err(Error::Input {
            diagnostics: diags.sorted(),
            rendered,
        });
    }
    if !run.render {
        return Ok(Generated {
            files: vec![],
            inputs: vec![],
            warnings: diags.warnings(),
            found: vec![],
            made: vec![],
            kubernetes,
        });
    }
    // Every selected generator prepares its work from the checked model, which it cannot
    // refuse, before anything is rendered.
    let selected = run.selected;
    let cx = generators::Context::new(&api, &rust_options, &selected, crd_header.as_deref());
    let mut rust_modules = vec![];
    let mut yaml = vec![];
    let mut made: Vec<(GeneratorName, usize)> = vec![];
    for name in &selected {
        if let generators::Output::Yaml { prepare, .. } = &generators::generator(*name).output {
            let files = prepare(&cx);
            made.push((*name, files.names.len()));
            yaml.push((run.yaml_dirs[name].clone(), files));
        }
    }
    for name in &selected {
        if let generators::Output::Rust {
            module,
            doc,
            cost,
            prepare,
        } = &generators::generator(*name).output
            && generators::generator(*name).wanted(&api)
        {
            rust_modules.push(rust::RustModule {
                module,
                doc,
                cost: *cost,
                render: prepare(&cx),
            });
            made.push((*name, 1));
        }
    }
    // Every output file is rendered on its own, so they are rendered in parallel: the
    // Rust files first (the costliest), then the YAML files.
    enum Job<'a> {
        Rust(rust::RustFile),
        Yaml(&'a PathBuf, &'a generators::RenderYaml, usize),
    }
    let rust_files = rust::files(&rust_modules, &rust_options);
    let mut jobs: Vec<Job> = rust_files.iter().copied().map(Job::Rust).collect();
    for (dir, files) in &yaml {
        jobs.extend((0..files.names.len()).map(|i| Job::Yaml(dir, files, i)));
    }
    let rust_dir = run.rust_dir;
    let mut out = parallel::map(jobs, |job| match job {
        Job::Rust(file) => {
            let (name, contents) = rust::render(&rust_modules, &rust_options, file);
            GeneratedFile {
                path: rust_dir.join(name),
                contents,
            }
        }
        Job::Yaml(dir, files, i) => GeneratedFile {
            path: dir.join(&files.names[i]),
            contents: (files.render)(i),
        },
    });
    out.sort_by(|a, b| a.path.cmp(&b.path));
    if run.emit_rerun_if_changed {
        for f in &files {
            println!("cargo:rerun-if-changed={}", f.display());
        }
    }
    let warnings = diags.warnings();
    let found: Vec<FoundGroupVersion> = api
        .packages
        .values()
        .map(|p| FoundGroupVersion {
            group: p.group.clone(),
            version: p.version.clone(),
            loc: p.loc.clone(),
            kinds: p.kinds.iter().map(|k| k.name.clone()).collect(),
        })
        .collect();
    if run.emit_rerun_if_changed {
        // build.rs: cargo shows `cargo:warning=` lines to the user.
        for w in &warnings {
            println!("cargo:warning={w}");
        }
    }
    unfreed_if(exits_after, (yaml, rust_modules));
    unfreed_if(exits_after, cx);
    unfreed_if(exits_after, api);
    Ok(Generated {
        files: out,
        inputs: files,
        warnings,
        found,
        made,
        kubernetes,
    })
}

/// Drop `value`, or with `exits_after` leave it to the OS: the process exits once its
/// files are out, and freeing a large run's model node by node costs it a tenth of its time.
fn unfreed_if<T>(exits_after: bool, value: T) {
    if exits_after {
        std::mem::forget(value);
    }
}

/// Parse every input file into modules placed in the crate's module tree: first at the
/// paths their file names give, in parallel; then the few files that `mod` declarations
/// place elsewhere (`#[path]`) again, at their declared paths.
fn parse_modules(
    src_root: &Path,
    files: &[PathBuf],
    rust_dir: &Path,
    diags: &mut Diagnostics,
) -> Vec<read::Module> {
    // `files` and `src_root` are normalized (see `generate`), as the tree's paths are.
    let mut modules = vec![];
    for (m, found) in parallel::map(files.iter().collect(), |f| {
        let mut found = Diagnostics::default();
        let m = read::parse_file(read::module_path_of(src_root, f), true, f, &mut found);
        (m, found)
    }) {
        modules.extend(m);
        diags.0.extend(found.0);
    }
    let mut crate_roots = vec![src_root.join("lib.rs"), src_root.join("main.rs")];
    if let Ok(bins) = read::rust_files(&src_root.join("bin")) {
        crate_roots.extend(bins.files);
    }
    let tree = read::module_tree(&modules, files, &crate_roots, src_root);
    // The module of our own output (`pub mod generated;`) is there once this run writes it.
    let ours = |p: &PathBuf| p.starts_with(rust_dir);
    for (decl, looked_at) in tree.missing.iter().filter(|(_, l)| !l.iter().any(ours)) {
        let looked_at: Vec<String> = looked_at.iter().map(|p| p.display().to_string()).collect();
        let message = format!(
            "file not found for module `{}`: {}",
            decl.name,
            looked_at.join(" or ")
        );
        diags.push(if decl.cfg {
            Diagnostic::warning(decl.loc.clone(), message)
                .with_hint("rustc refuses the declaration unless its `cfg` leaves it out; the module is not read")
        } else {
            Diagnostic::new(decl.loc.clone(), message).with_hint(
                "rustc refuses the declaration too: create the file, give `#[path]`, or remove the declaration",
            )
        });
    }
    for orphan in &tree.orphans {
        diags.push(
            Diagnostic::warning(
                Location::new(orphan, 1, 1),
                "file skipped: no `mod` declaration reaches it from the crate root",
            )
            .with_hint(
                "declare it (`mod name;` in its parent module) or remove it; a file rustc does not compile is not part of the API",
            ),
        );
    }
    let mut reparse = vec![];
    modules.retain_mut(|m| {
        if tree.orphans.contains(&m.file) {
            return false;
        }
        let Some((path, visible)) = tree.declared.get(&m.file) else {
            return true;
        };
        let derived = read::module_path_of(src_root, &m.file);
        if *path == derived {
            // Where its file name says: only the declaration's visibility is news.
            if m.path == derived {
                m.visible = *visible;
            }
            return true;
        }
        if !reparse.contains(&m.file) {
            reparse.push(m.file.clone());
        }
        false
    });
    for f in reparse {
        let (path, visible) = tree.declared[&f].clone();
        let mut found = Diagnostics::default();
        let mut parsed = read::parse_file(path, visible, &f, &mut found);
        modules.append(&mut parsed);
        diags.0.extend(found.0);
    }
    modules
}
