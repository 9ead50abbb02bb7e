//! The `kube-codegen` command line.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand, ValueEnum};
use kube_codegen::{Config, Error, GeneratorName, KubernetesVersion, ReferenceFormat};

mod scaffold_cli;

/// mimalloc instead of glibc's malloc: see `mimalloc` in Cargo.toml (BENCHMARKS.md, CRDs only,
/// has what it saves).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// No transparent huge pages for this process. mimalloc asks the kernel for them on its
/// arenas (`madvise(MADV_HUGEPAGE)`), and a 2 MiB page faulted in while the machine's memory
/// is fragmented (just after another large process, as in a build pipeline) makes the
/// kernel compact memory on the spot: on the 1000-kind API, run right after controller-gen,
/// our system time went from about 0.1 s with 4 KiB pages to 0.27-0.52 s with huge ones, and
/// peak RSS from 200 to 245 MB (BENCHMARKS.md, CRDs only). A run lives well under a second,
/// too short for huge pages' fewer TLB misses to pay that back. Linux checks the flag at each
/// fault, so arenas mimalloc set up before `main` are covered too. mimalloc's own switch
/// (`MIMALLOC_ALLOW_THP=0`) is read from the environment before `main` runs.
#[cfg(target_os = "linux")]
fn no_transparent_huge_pages() {
    const PR_SET_THP_DISABLE: std::ffi::c_int = 41;
    unsafe extern "C" {
        fn prctl(option: std::ffi::c_int, ...) -> std::ffi::c_int;
    }
    // SAFETY: prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0) only sets a flag of this process (Linux
    // 3.15 and later); on an older kernel it fails with EINVAL, and huge pages stay as they
    // were, which is fine.
    unsafe {
        prctl(
            PR_SET_THP_DISABLE,
            1 as std::ffi::c_ulong,
            0 as std::ffi::c_ulong,
            0 as std::ffi::c_ulong,
            0 as std::ffi::c_ulong,
        );
    }
}

#[derive(Parser)]
#[command(
    name = "kube-codegen",
    version,
    about = "Generate CRDs and Kubernetes client code from annotated Rust types"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Generate into the crate, writing only files whose contents changed.
    Generate(Options),
    /// Exit non-zero and list every stale, missing or extra generated file; write nothing.
    Check(Options),
    /// List the generators, with what each makes.
    Generators,
    /// Print every marker kube-codegen reads: its syntax, where it may stand, the generator
    /// that reads it and one line of help (from the registry the parser uses).
    Markers {
        /// `text` for a terminal, `markdown` for a page (the book's marker reference).
        #[arg(long, value_enum, default_value_t = MarkerFormat::Text)]
        format: MarkerFormat,
    },
    /// Start a new API crate with a controller binary (kubebuilder's `init`).
    Init(scaffold_cli::InitArgs),
    /// Add to a crate made by `init` (kubebuilder's `create api`).
    Create {
        #[command(subcommand)]
        what: scaffold_cli::CreateWhat,
    },
    /// Import what others define into an API crate (`import crd FILE... --out DIR`).
    #[command(subcommand)]
    Import(ImportCommand),
}

/// The formats of `kube-codegen markers`.
#[derive(Clone, Copy, ValueEnum)]
enum MarkerFormat {
    Text,
    Markdown,
}

#[derive(Subcommand)]
enum ImportCommand {
    /// Write (or update) an API crate whose `kube-codegen generate` gives back these CRDs:
    /// annotated Rust types in Go's layout, every version, markers for every keyword.
    Crd(ImportCrd),
    /// Port Go API packages (types.go, doc.go, register.go...) to annotated Rust in the same
    /// file layout, markers and doc comments kept, so `generate` writes controller-gen's CRDs.
    Go(ImportGo),
}

#[derive(Args)]
struct ImportGo {
    /// Go package directories (their .go files; zz_generated.* and tests are skipped). Give
    /// every package whose types the API uses besides Kubernetes' own.
    #[arg(required = true, value_name = "PKG_DIR")]
    packages: Vec<PathBuf>,
    /// The API crate to write or update (created if missing).
    #[arg(long, value_name = "CRATE_DIR")]
    out: PathBuf,
    /// The package name of a new crate (default: the directory's name).
    #[arg(long)]
    name: Option<String>,
    /// The Kubernetes version a new crate generates for (default: the newest).
    #[arg(long, value_name = "1.NN")]
    kubernetes_version: Option<KubernetesVersion>,
    /// controller-gen's `crd:` options as the project's Makefile passes them, e.g.
    /// `crd:maxDescLen=0,generateEmbeddedObjectMeta=true`: `ignoreUnexportedFields` applies
    /// to the import, the others go into a new crate's metadata (crdVersions=v1,
    /// maxDescLen, generateEmbeddedObjectMeta, allowDangerousTypes, headerFile, year; without
    /// allowDangerousTypes=true floats are refused, as controller-gen refuses them).
    #[arg(long, value_name = "crd:NAME=VALUE,...")]
    crd_options: Option<kube_codegen::CrdOptions>,
    /// Make a storage version with controller-runtime's `Hub()` the conversion hub, with
    /// kubebuilder's webhook (system/webhook-service, /convert): the crate then needs the
    /// hand-written parts of the conversion before it builds. Without it, `Hub()` is a warning.
    #[arg(long)]
    conversion_hub: bool,
    #[command(flatten)]
    runtime: scaffold_cli::RuntimeArgs,
}

#[derive(Args)]
struct ImportCrd {
    /// CRD YAML files, directories (every .yaml/.yml/.json file below, sorted) or `-` for stdin.
    #[arg(required = true, value_name = "FILE|DIR|-")]
    inputs: Vec<PathBuf>,
    /// The API crate to write or update (created if missing).
    #[arg(long, value_name = "CRATE_DIR")]
    out: PathBuf,
    /// The package name of a new crate (default: the directory's name).
    #[arg(long)]
    name: Option<String>,
    /// The Kubernetes version a new crate generates for, whose types embedded objects are
    /// matched against (default: an existing crate's `kubernetes-version`, else the newest).
    #[arg(long, value_name = "1.NN")]
    kubernetes_version: Option<KubernetesVersion>,
    #[command(flatten)]
    runtime: scaffold_cli::RuntimeArgs,
}

#[derive(Args)]
struct Options {
    /// The crate holding the API types (its Cargo.toml may carry [package.metadata.kube-codegen]).
    crate_dir: PathBuf,
    /// Files or directories to scan, relative to the crate (repeatable; overrides `input`).
    #[arg(long = "input", value_name = "PATH")]
    inputs: Vec<PathBuf>,
    /// Where generated Rust goes (overrides `out-dir`).
    #[arg(long)]
    out_dir: Option<PathBuf>,
    /// Where CRD YAML goes (overrides `crd-dir`).
    #[arg(long)]
    crd_dir: Option<PathBuf>,
    /// Run only these generators and those they require (comma-separated; overrides
    /// `generators`; `kube-codegen generators` lists them).
    #[arg(long, value_delimiter = ',', value_name = "NAME,...")]
    generators: Vec<GeneratorName>,
    /// Licence text placed under the header of generated Rust files (overrides `header-file`).
    #[arg(long)]
    header_file: Option<PathBuf>,
    /// Cut schema descriptions to this many bytes, as controller-gen's `crd:maxDescLen` (0
    /// writes none).
    #[arg(long)]
    max_description_len: Option<usize>,
    /// Write an embedded ObjectMeta (a pod template's `metadata`) with its validatable
    /// fields, as controller-gen's `crd:generateEmbeddedObjectMeta=true` (overrides
    /// `generate-embedded-object-meta`).
    #[arg(long)]
    generate_embedded_object_meta: bool,
    /// Write floats into schemas (true) or refuse them (false), as controller-gen's
    /// `crd:allowDangerousTypes` (overrides `allow-dangerous-types`; default true).
    #[arg(long, value_name = "BOOL")]
    allow_dangerous_types: Option<bool>,
    /// A file of YAML comments written at the top of every CRD file, as controller-gen's
    /// `crd:headerFile` (overrides `crd-header-file`).
    #[arg(long, value_name = "FILE")]
    crd_header_file: Option<PathBuf>,
    /// What ` YEAR` in the CRD header file becomes, as controller-gen's `crd:year`
    /// (overrides `crd-header-year`).
    #[arg(long, value_name = "YEAR")]
    crd_header_year: Option<String>,
    /// The Kubernetes version to generate for, e.g. 1.35 (overrides `kubernetes-version`;
    /// default: the crate's k8s-openapi feature, else the newest supported).
    #[arg(long, value_name = "1.NN")]
    kubernetes_version: Option<KubernetesVersion>,
    /// The conversion webhook's Service, `namespace/name`, for kinds marked
    /// `+kube-codegen:conversion=hub` (overrides `conversion-webhook`).
    #[arg(long, value_name = "NAMESPACE/NAME")]
    conversion_service: Option<String>,
    /// The conversion webhook's URL path on the Service (default /convert).
    #[arg(long, value_name = "PATH", requires = "conversion_service")]
    conversion_path: Option<String>,
    /// The conversion webhook's Service port (default 443).
    #[arg(long, value_name = "PORT", requires = "conversion_service")]
    conversion_port: Option<i32>,
    /// The conversion webhook's `https://` URL, instead of a Service.
    #[arg(long, value_name = "URL", conflicts_with = "conversion_service")]
    conversion_url: Option<String>,
    /// A PEM file whose contents become `caBundle` in every webhook client config written
    /// (the conversion webhook's, the admission webhooks').
    #[arg(long, value_name = "FILE")]
    ca_bundle_from: Option<PathBuf>,
    /// cert-manager's CA injection instead of a literal caBundle: CRDs with a conversion
    /// webhook and the webhook configurations get `cert-manager.io/inject-ca-from`.
    #[arg(
        long,
        value_name = "NAMESPACE/CERTIFICATE",
        conflicts_with = "ca_bundle_from"
    )]
    inject_ca_from: Option<String>,
    /// `-o -` prints the CRDs to stdout as one YAML stream instead of writing anything (only
    /// the `crd` generator runs).
    #[arg(short = 'o', long = "output", value_name = "-")]
    output: Option<String>,
    /// Generate defaulting and validation for every kind, as if each were marked
    /// `+kube-codegen:validation` (overrides `validate-all-kinds`).
    #[arg(long)]
    validate_all_kinds: bool,
}

impl Options {
    fn config(&self) -> Result<Config, Error> {
        let mut c = Config::from_crate(&self.crate_dir)?;
        if !self.inputs.is_empty() {
            c = c.inputs(self.inputs.clone());
        }
        if let Some(d) = &self.out_dir {
            c = c.out_dir(d);
        }
        if let Some(d) = &self.crd_dir {
            c = c.crd_dir(d);
        }
        if !self.generators.is_empty() {
            c = c.generators(self.generators.iter().copied());
        }
        if let Some(h) = &self.header_file {
            c = c.header_file(h);
        }
        if let Some(n) = self.max_description_len {
            c = c.max_description_len(n);
        }
        if self.validate_all_kinds {
            c = c.validate_all_kinds(true);
        }
        if self.generate_embedded_object_meta {
            c = c.generate_embedded_object_meta(true);
        }
        if let Some(yes) = self.allow_dangerous_types {
            c = c.allow_dangerous_types(yes);
        }
        if let Some(f) = &self.crd_header_file {
            // Relative to where the command runs, as other paths on the command line.
            let abs = std::env::current_dir()
                .map(|d| d.join(f))
                .unwrap_or_else(|_| f.clone());
            c = c.crd_header_file(abs);
        }
        if let Some(y) = &self.crd_header_year {
            c = c.crd_header_year(y);
        }
        if let Some(v) = self.kubernetes_version {
            c = c.kubernetes_version(v);
        }
        if self.conversion_service.is_some() || self.conversion_url.is_some() {
            c = c
                .conversion_webhook_from_args(
                    self.conversion_service.as_deref(),
                    self.conversion_url.as_deref(),
                    self.conversion_path.clone(),
                    self.conversion_port,
                )
                .map_err(|message| Error::Config {
                    path: self.crate_dir.clone(),
                    message,
                })?;
        }
        if let Some(f) = &self.ca_bundle_from {
            // Relative to where the command runs, as other paths on the command line.
            let abs = std::env::current_dir()
                .map(|d| d.join(f))
                .unwrap_or_else(|_| f.clone());
            c = c.ca_bundle_from(abs);
        }
        if let Some(certificate) = &self.inject_ca_from {
            c = c.inject_ca_from(certificate);
        }
        Ok(c)
    }
}

fn run(cli: Cli) -> Result<ExitCode, Error> {
    match cli.command {
        Command::Generate(opts) => {
            // The process exits after this one run: its model is left to the OS.
            let config = opts.config()?.exits_after(true);
            match opts.output.as_deref() {
                Some("-") => {
                    // stdout carries the CRDs only, so only their generator runs: the Rust
                    // generators' work (and their checks) would be thrown away.
                    if !opts.generators.is_empty() && !opts.generators.contains(&GeneratorName::Crd)
                    {
                        eprintln!(
                            "error: `-o -` prints CRDs, and --generators does not select `crd`"
                        );
                        return Ok(ExitCode::from(2));
                    }
                    let config = config.generators([GeneratorName::Crd]);
                    let generated = config.generate()?;
                    eprint!("{}", generated.render_warnings());
                    let mut out = std::io::stdout().lock();
                    // One YAML stream, for `| kubectl apply --server-side -f -`.
                    let crds = generated
                        .files
                        .iter()
                        .filter(|f| f.path.extension().is_some_and(|e| e == "yaml"));
                    for (i, f) in crds.enumerate() {
                        // A multi-document YAML stream, so `| kubectl apply -f -` works.
                        if i > 0 {
                            let _ = writeln!(out, "---");
                        }
                        let _ = write!(out, "{}", f.contents);
                    }
                }
                Some(other) => {
                    eprintln!(
                        "error: `-o {other}` is not supported; use `-o -` for stdout or --crd-dir/--out-dir"
                    );
                    return Ok(ExitCode::from(2));
                }
                None => {
                    let generated = config.generate()?;
                    eprint!("{}", generated.render_warnings());
                    let report = config.write_generated(&generated)?;
                    eprint!("{}", generated.summary());
                    for p in &report.written {
                        eprintln!("wrote {}", p.display());
                    }
                    for p in &report.removed {
                        eprintln!("removed {}", p.display());
                    }
                    eprintln!(
                        "kube-codegen: {} written, {} unchanged, {} removed",
                        report.written.len(),
                        report.unchanged.len(),
                        report.removed.len()
                    );
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Import(ImportCommand::Crd(args)) => import_crd(&args),
        Command::Import(ImportCommand::Go(args)) => import_go(&args),
        Command::Init(args) => Ok(scaffold_cli::init(args)),
        Command::Create { what } => Ok(scaffold_cli::create(what)),
        Command::Generators => {
            // One column for the names, as wide as the longest, so the descriptions align.
            let width = GeneratorName::all()
                .map(|g| g.as_str().len())
                .max()
                .unwrap_or_default();
            for g in GeneratorName::all() {
                println!("{:<width$}  {}", g.as_str(), g.about());
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Markers { format } => {
            print!(
                "{}",
                kube_codegen::marker_reference(match format {
                    MarkerFormat::Text => ReferenceFormat::Text,
                    MarkerFormat::Markdown => ReferenceFormat::Markdown,
                })
            );
            Ok(ExitCode::SUCCESS)
        }
        Command::Check(opts) => {
            let config = opts.config()?.exits_after(true);
            let generated = config.generate()?;
            eprint!("{}", generated.render_warnings());
            let report = config.check_generated(&generated)?;
            if report.is_clean() {
                eprintln!(
                    "kube-codegen: generated files in {} are up to date",
                    opts.crate_dir.display()
                );
                Ok(ExitCode::SUCCESS)
            } else {
                eprint!("{report}");
                eprintln!(
                    "kube-codegen: generated files are out of date; run `kube-codegen generate {}`",
                    opts.crate_dir.display()
                );
                Ok(ExitCode::FAILURE)
            }
        }
    }
}

/// Every input file: files as given, directories walked (sorted), `-` as stdin; with an
/// error for each that is not UTF-8.
fn read_inputs(
    args: &[PathBuf],
) -> Result<
    (
        Vec<kube_codegen::ImportInput>,
        Vec<kube_codegen::Diagnostic>,
    ),
    String,
> {
    let mut out = vec![];
    let mut not_text = vec![];
    let mut add = |path: &PathBuf, bytes: Vec<u8>| match kube_codegen::input_text(
        path,
        bytes,
        kube_codegen::InputLanguage::Crd,
    ) {
        Ok(text) => out.push(kube_codegen::ImportInput {
            path: path.clone(),
            text,
        }),
        Err(d) => not_text.push(d),
    };
    for a in args {
        if a.as_os_str() == "-" {
            let mut bytes = vec![];
            std::io::Read::read_to_end(&mut std::io::stdin(), &mut bytes)
                .map_err(|e| format!("reading stdin: {e}"))?;
            add(a, bytes);
            continue;
        }
        let mut files = vec![];
        if a.is_dir() {
            let walk = kube_codegen::__private::files_below(a, |p| {
                p.extension()
                    .is_some_and(|x| x == "yaml" || x == "yml" || x == "json")
            })
            .map_err(|e| format!("{}: {e}", a.display()))?;
            for (dir, same) in walk.revisits {
                eprintln!(
                    "warning: {}: directory read once: it is {} again (a symlink), whose files are read already",
                    dir.display(),
                    same.display()
                );
            }
            files = walk.files;
        } else {
            files.push(a.clone());
        }
        for f in files {
            let bytes = std::fs::read(&f).map_err(|e| format!("{}: {e}", f.display()))?;
            add(&f, bytes);
        }
    }
    Ok((out, not_text))
}

/// `src/apis/<group>/<version>` modules already in the crate (each with a mod.rs).
fn existing_modules(
    out: &std::path::Path,
) -> std::collections::BTreeMap<String, std::collections::BTreeSet<String>> {
    let mut tree = std::collections::BTreeMap::<String, std::collections::BTreeSet<String>>::new();
    let apis = out.join("src/apis");
    for g in std::fs::read_dir(&apis).into_iter().flatten().flatten() {
        for v in std::fs::read_dir(g.path()).into_iter().flatten().flatten() {
            if v.path().join("mod.rs").is_file() {
                tree.entry(g.file_name().to_string_lossy().into_owned())
                    .or_default()
                    .insert(v.file_name().to_string_lossy().into_owned());
            }
        }
    }
    tree
}

/// The package name of a new crate: `--name`, else the directory's name.
fn crate_name_of(name: Option<&String>, out: &std::path::Path) -> String {
    name.cloned().unwrap_or_else(|| {
        let dir = std::path::absolute(out).unwrap_or_else(|_| out.to_owned());
        dir.file_name()
            .map(|n| {
                n.to_string_lossy().replace(
                    |c: char| !c.is_ascii_alphanumeric() && c != '-' && c != '_',
                    "-",
                )
            })
            .unwrap_or_else(|| "imported-api".to_owned())
    })
}

/// Where an imported crate takes the runtime from: a new crate's Cargo.toml is written with
/// it; an existing crate's is amended only when the flags ask (after the import wrote).
struct ImportRuntime {
    source: kube_codegen::RuntimeSource,
    /// What to say once the import is written.
    line: Option<String>,
    /// An existing Cargo.toml and its amended text.
    amend: Option<(PathBuf, String)>,
}

impl ImportRuntime {
    /// Amend the existing Cargo.toml if asked, and say where the runtime comes from.
    fn finish(self) -> bool {
        if let Some((path, text)) = self.amend
            && let Err(e) = std::fs::write(&path, text)
        {
            eprintln!("error: {}: {e}", path.display());
            return false;
        }
        if let Some(line) = self.line {
            eprintln!("{line}");
        }
        true
    }
}

/// `None` after printing the error of flags that name no usable runtime.
fn runtime_of_import(
    args: &scaffold_cli::RuntimeArgs,
    out: &std::path::Path,
) -> Option<ImportRuntime> {
    let manifest = out.join("Cargo.toml");
    let result = if manifest.exists() {
        args.amend(&manifest).map(|amended| match amended {
            Some((text, source)) => ImportRuntime {
                line: Some(format!("kube-codegen: the crate takes {source}, as asked")),
                source,
                amend: Some((manifest, text)),
            },
            // Unused: Cargo.toml is there and stays the author's.
            None => ImportRuntime {
                source: kube_codegen::RuntimeSource::registry(),
                line: None,
                amend: None,
            },
        })
    } else {
        args.for_new_crate().map(|(source, line)| ImportRuntime {
            source,
            line: Some(line),
            amend: None,
        })
    };
    result.map_err(|e| eprintln!("error: {e}")).ok()
}

fn import_go(args: &ImportGo) -> Result<ExitCode, Error> {
    let mut inputs = vec![];
    let mut not_text = vec![];
    for dir in &args.packages {
        let mut files = vec![];
        let entries = match std::fs::read_dir(dir) {
            Ok(e) => e,
            Err(e) => {
                eprintln!("error: {}: {e}", dir.display());
                return Ok(ExitCode::FAILURE);
            }
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_file() && p.extension().is_some_and(|x| x == "go") {
                let bytes = match std::fs::read(&p) {
                    Ok(b) => b,
                    Err(e) => {
                        eprintln!("error: {}: {e}", p.display());
                        return Ok(ExitCode::FAILURE);
                    }
                };
                match kube_codegen::input_text(&p, bytes, kube_codegen::InputLanguage::Go) {
                    Ok(t) => files.push((p, t)),
                    Err(d) => not_text.push(d),
                }
            }
        }
        files.sort();
        inputs.push(kube_codegen::GoPackageInput {
            dir: dir.clone(),
            files,
            import_path: kube_codegen::import_path_of(dir),
        });
    }
    if !not_text.is_empty() {
        return Err(Error::import_failed(not_text));
    }
    let Some(runtime) = runtime_of_import(&args.runtime, &args.out) else {
        return Ok(ExitCode::FAILURE);
    };
    let options = kube_codegen::GoImportOptions {
        out: args.out.clone(),
        crate_name: crate_name_of(args.name.as_ref(), &args.out),
        kubernetes: args.kubernetes_version.unwrap_or(KubernetesVersion::NEWEST),
        runtime: runtime.source.clone(),
        crd: args.crd_options.clone().unwrap_or_default(),
        conversion_hub: args.conversion_hub,
    };
    let imported = kube_codegen::import_go(&inputs, &options)?;
    eprint!("{}", imported.render_warnings());
    let report = imported.write()?;
    for p in &report.written {
        eprintln!("wrote {}", p.display());
    }
    if !runtime.finish() {
        return Ok(ExitCode::FAILURE);
    }
    eprintln!("{}", imported.summary);
    eprintln!(
        "kube-codegen: {} written, {} unchanged; next: kube-codegen generate {}",
        report.written.len(),
        report.unchanged.len(),
        args.out.display()
    );
    Ok(ExitCode::SUCCESS)
}

fn import_crd(args: &ImportCrd) -> Result<ExitCode, Error> {
    let inputs = match read_inputs(&args.inputs) {
        Ok((inputs, not_text)) if not_text.is_empty() => inputs,
        Ok((_, not_text)) => return Err(Error::import_failed(not_text)),
        Err(e) => {
            eprintln!("error: {e}");
            return Ok(ExitCode::FAILURE);
        }
    };
    let name = args.name.clone().unwrap_or_else(|| {
        let dir = std::path::absolute(&args.out).unwrap_or_else(|_| args.out.clone());
        dir.file_name()
            .map(|n| {
                n.to_string_lossy().replace(
                    |c: char| !c.is_ascii_alphanumeric() && c != '-' && c != '_',
                    "-",
                )
            })
            .unwrap_or_else(|| "imported-api".to_owned())
    });
    let Some(runtime) = runtime_of_import(&args.runtime, &args.out) else {
        return Ok(ExitCode::FAILURE);
    };
    let options = kube_codegen::ImportOptions {
        out: args.out.clone(),
        crate_name: name,
        runtime: runtime.source.clone(),
        // Objects are matched against this version's Kubernetes types, so it must be the
        // one `generate` will use: the flag, else an existing crate's metadata.
        kubernetes: match args.kubernetes_version {
            Some(v) => v,
            None if args.out.join("Cargo.toml").is_file() => Config::from_crate(&args.out)?
                .chosen_kubernetes_version()
                .unwrap_or(KubernetesVersion::NEWEST),
            None => KubernetesVersion::NEWEST,
        },
        existing: existing_modules(&args.out),
        has_cargo_toml: args.out.join("Cargo.toml").exists(),
        has_lib_rs: args.out.join("src/lib.rs").exists(),
    };
    let imported = kube_codegen::import_crds(&inputs, &options)?;
    eprint!("{}", imported.render_warnings());
    let report = imported.write()?;
    for p in &report.written {
        eprintln!("wrote {}", p.display());
    }
    if !runtime.finish() {
        return Ok(ExitCode::FAILURE);
    }
    eprintln!("{}", imported.summary());
    eprintln!(
        "kube-codegen: {} written, {} unchanged; next: kube-codegen generate {}",
        report.written.len(),
        report.unchanged.len(),
        args.out.display()
    );
    Ok(ExitCode::SUCCESS)
}

fn main() -> ExitCode {
    #[cfg(target_os = "linux")]
    no_transparent_huge_pages();
    match run(Cli::parse()) {
        Ok(code) => code,
        Err(e) => {
            eprint!("{e}");
            if !matches!(e, Error::Input { .. }) {
                eprintln!();
            }
            ExitCode::FAILURE
        }
    }
}
