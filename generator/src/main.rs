//! The `kube-codegen` command line.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use kube_codegen::{Config, Error, GeneratorName, KubernetesVersion};

mod scaffold_cli;

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
    /// Start a new API crate with a controller binary (kubebuilder's `init`).
    Init(scaffold_cli::InitArgs),
    /// Add to a crate made by `init` (kubebuilder's `create api`).
    Create {
        #[command(subcommand)]
        what: scaffold_cli::CreateWhat,
    },
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
    /// Cut schema descriptions to this many characters.
    #[arg(long)]
    max_description_len: Option<usize>,
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
    /// A PEM file whose contents become the conversion webhook's `caBundle`.
    #[arg(long, value_name = "FILE")]
    ca_bundle_from: Option<PathBuf>,
    /// `-o -` prints the CRDs to stdout as one YAML stream instead of writing anything.
    #[arg(short = 'o', long = "output", value_name = "-")]
    output: Option<String>,
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
        Ok(c)
    }
}

fn run(cli: Cli) -> Result<ExitCode, Error> {
    match cli.command {
        Command::Generate(opts) => {
            let config = opts.config()?;
            match opts.output.as_deref() {
                Some("-") => {
                    let generated = config.generate()?;
                    eprint!("{}", generated.render_warnings());
                    let mut out = std::io::stdout().lock();
                    // stdout carries the CRDs only, as one YAML stream for `| kubectl apply -f -`.
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
        Command::Init(args) => Ok(scaffold_cli::init(args)),
        Command::Create { what } => Ok(scaffold_cli::create(what)),
        Command::Generators => {
            for g in GeneratorName::all() {
                println!("{:<10} {}", g.as_str(), g.about());
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Check(opts) => {
            let config = opts.config()?;
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

fn main() -> ExitCode {
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
