//! `kube-codegen init` and `kube-codegen create api`: the scaffolds' IO (the library plans
//! the files; this writes them, refusing to overwrite, and generates afterwards).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Subcommand};
use kube_codegen::{
    ApiOptions, Config, CrateFiles, RuntimeSource, ScaffoldError, ScaffoldFile, scaffold_api,
    scaffold_init,
};

/// `init`'s arguments.
#[derive(Args)]
pub struct InitArgs {
    /// Where the crate goes (created if missing).
    #[arg(default_value = ".")]
    dir: PathBuf,
    /// The package name (default: the directory's name).
    #[arg(long)]
    name: Option<String>,
    /// Scaffold into a directory that is not empty (existing files are never overwritten).
    #[arg(long)]
    force: bool,
    #[command(flatten)]
    runtime: RuntimeArgs,
}

/// Where a crate takes kube-codegen-runtime and kube-codegen-envtest from: the same two
/// flags, with the same meaning, on `init`, `create api`, `import crd` and `import go`.
#[derive(Args)]
pub struct RuntimeArgs {
    /// Take kube-codegen-runtime from this directory (the `runtime/` of a kube-codegen
    /// checkout; kube-codegen-envtest from the `envtest/` beside it). Default for a new
    /// crate: the checkout this kube-codegen was built from, when it was built from one. On
    /// an existing crate, its Cargo.toml's entries are rewritten.
    #[arg(long, value_name = "DIR", conflicts_with = "runtime_version")]
    runtime_path: Option<PathBuf>,
    /// Take them from the registry at this version. Default for a new crate made by a
    /// kube-codegen installed from the registry: its own version. On an existing crate,
    /// its Cargo.toml's entries are rewritten.
    #[arg(long, value_name = "VERSION")]
    runtime_version: Option<String>,
}

impl RuntimeArgs {
    /// The source the flags name, if they name one.
    pub fn explicit(&self) -> Result<Option<RuntimeSource>, String> {
        if let Some(v) = &self.runtime_version {
            return Ok(Some(RuntimeSource::Registry { version: v.clone() }));
        }
        let Some(p) = &self.runtime_path else {
            return Ok(None);
        };
        let dir = std::path::absolute(p).map_err(|e| format!("{}: {e}", p.display()))?;
        let name = std::fs::read_to_string(dir.join("Cargo.toml"))
            .ok()
            .and_then(|t| t.parse::<toml::Table>().ok())
            .and_then(|t| t.get("package")?.get("name")?.as_str().map(str::to_owned));
        if name.as_deref() != Some("kube-codegen-runtime") {
            return Err(format!(
                "--runtime-path {}: not the kube-codegen-runtime crate (no Cargo.toml naming it)\n  hint: the `runtime/` directory of a kube-codegen checkout",
                p.display()
            ));
        }
        Ok(Some(RuntimeSource::Path(dir)))
    }

    /// The source of a new crate: the flags', else where this kube-codegen came from; and
    /// the summary line that says which and why.
    pub fn for_new_crate(&self) -> Result<(RuntimeSource, String), String> {
        if let Some(source) = self.explicit()? {
            let line = format!("kube-codegen: the crate takes {source}, as asked");
            return Ok((source, line));
        }
        let source = RuntimeSource::of_this_build();
        let line = match &source {
            RuntimeSource::Path(_) => format!(
                "kube-codegen: the crate takes {source}: the checkout this kube-codegen was built from (--runtime-version VERSION takes a registry release instead)"
            ),
            RuntimeSource::Registry { .. } => format!(
                "kube-codegen: the crate takes {source}: the release of this kube-codegen (--runtime-path DIR takes a checkout's instead)"
            ),
        };
        Ok((source, line))
    }

    /// `manifest` with its kube-codegen-runtime and kube-codegen-envtest entries set to
    /// the flags' source, or `None` when the flags name none (an existing crate's
    /// Cargo.toml is its author's unless asked).
    pub fn amend(&self, manifest: &Path) -> Result<Option<(String, RuntimeSource)>, String> {
        let Some(source) = self.explicit()? else {
            return Ok(None);
        };
        let text = std::fs::read_to_string(manifest)
            .map_err(|e| format!("{}: {e}", manifest.display()))?;
        let amended = source
            .set_in_manifest(&text)
            .map_err(|e| format!("{}: {e}", manifest.display()))?;
        Ok(Some((amended, source)))
    }
}

/// What `create` creates.
#[derive(Subcommand)]
pub enum CreateWhat {
    /// A new kind: its types, its controller, its CRD and generated clients.
    Api(ApiArgs),
}

/// `create api`'s arguments.
#[derive(Args)]
pub struct ApiArgs {
    /// The API group, e.g. webapp.example.com.
    #[arg(long)]
    group: String,
    /// The version, e.g. v1.
    #[arg(long)]
    version: String,
    /// The kind, e.g. Guestbook.
    #[arg(long)]
    kind: String,
    /// A cluster-scoped kind (default: namespaced).
    #[arg(long)]
    cluster_scoped: bool,
    /// The crate made by `kube-codegen init`.
    #[arg(long, default_value = ".")]
    dir: PathBuf,
    #[command(flatten)]
    runtime: RuntimeArgs,
}

fn fail(e: impl std::fmt::Display) -> ExitCode {
    eprintln!("error: {e}");
    ExitCode::FAILURE
}

/// `kube-codegen init`.
pub fn init(args: InitArgs) -> ExitCode {
    let name = match &args.name {
        Some(n) => n.clone(),
        None => match std::path::absolute(&args.dir)
            .ok()
            .and_then(|d| d.file_name().map(|n| n.to_string_lossy().into_owned()))
        {
            Some(n) => n,
            None => return fail("cannot name the crate after the directory; pass --name"),
        },
    };
    let non_empty = std::fs::read_dir(&args.dir)
        .map(|mut d| d.any(|e| e.is_ok_and(|e| e.file_name() != ".git")))
        .unwrap_or(false);
    if non_empty && !args.force {
        return fail(format!(
            "{} is not empty\n  hint: scaffold into a new directory, or pass --force (existing files are never overwritten)",
            args.dir.display()
        ));
    }
    let (runtime, runtime_line) = match args.runtime.for_new_crate() {
        Ok(r) => r,
        Err(e) => return fail(e),
    };
    let files = match scaffold_init(&name, &runtime) {
        Ok(f) => f,
        Err(e) => return fail(e),
    };
    if let Err(e) = write_all(&args.dir, &files) {
        return fail(e);
    }
    eprintln!("{runtime_line}");
    eprintln!(
        "kube-codegen: created crate `{name}` in {} ({} files)\nnext: kube-codegen create api --dir {} --group <group> --version <version> --kind <Kind>",
        args.dir.display(),
        files.len(),
        args.dir.display()
    );
    ExitCode::SUCCESS
}

struct OnDisk {
    root: PathBuf,
    name: String,
}

impl CrateFiles for OnDisk {
    fn package_name(&self) -> &str {
        &self.name
    }
    fn read(&self, path: &Path) -> Option<String> {
        std::fs::read_to_string(self.root.join(path)).ok()
    }
}

/// `kube-codegen create api`.
pub fn create(what: CreateWhat) -> ExitCode {
    let CreateWhat::Api(args) = what;
    let manifest = args.dir.join("Cargo.toml");
    let name = std::fs::read_to_string(&manifest)
        .ok()
        .and_then(|t| t.parse::<toml::Table>().ok())
        .and_then(|t| t.get("package")?.get("name")?.as_str().map(str::to_owned));
    let Some(name) = name else {
        return fail(format!(
            "{}: no package name\n  hint: run `kube-codegen init` first, or pass --dir <crate>",
            manifest.display()
        ));
    };
    let krate = OnDisk {
        root: args.dir.clone(),
        name,
    };
    let opts = ApiOptions {
        group: args.group,
        version: args.version,
        kind: args.kind,
        cluster_scoped: args.cluster_scoped,
    };
    let mut files = match scaffold_api(&krate, &opts) {
        Ok(f) => f,
        Err(e) => return fail(e),
    };
    // Asked for a runtime: the crate's Cargo.toml takes it, undone with the rest.
    let mut runtime_note = None;
    match args.runtime.amend(&manifest) {
        Ok(Some((contents, source))) => {
            runtime_note = Some(format!("kube-codegen: the crate takes {source}, as asked"));
            files.push(ScaffoldFile {
                path: "Cargo.toml".into(),
                contents,
                edit: true,
            });
        }
        Ok(None) => {}
        Err(e) => return fail(e),
    }
    // Remember what was there, so a failing generation leaves the crate as it was.
    let before: Vec<(PathBuf, Option<String>)> = files
        .iter()
        .map(|f| (f.path.clone(), krate.read(&f.path)))
        .collect();
    if let Err(e) = write_all(&args.dir, &files) {
        return fail(e);
    }
    let generated = Config::from_crate(&args.dir).and_then(|config| {
        let generated = config.generate()?;
        config.write_generated(&generated)?;
        Ok(generated)
    });
    match generated {
        Ok(generated) => {
            eprint!("{}", generated.render_warnings());
            eprint!("{}", generated.summary());
            if let Some(note) = runtime_note {
                eprintln!("{note}");
            }
            for f in &files {
                let verb = if f.edit { "updated" } else { "created" };
                eprintln!("{verb} {}", f.path.display());
            }
            eprintln!(
                "kube-codegen: added {} {}/{} to {} and generated its code; edit src/apis and run `kube-codegen generate {}` after each change",
                opts.kind,
                opts.group,
                opts.version,
                args.dir.display(),
                args.dir.display()
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            for (path, old) in before {
                let full = args.dir.join(&path);
                let _ = match old {
                    Some(text) => std::fs::write(&full, text),
                    None => std::fs::remove_file(&full),
                };
            }
            eprint!("{e}");
            eprintln!("\nkube-codegen: generation failed; the scaffold was undone");
            ExitCode::FAILURE
        }
    }
}

/// Writes every file, creating directories; refuses (before writing anything) if a file
/// that is not an edit exists.
fn write_all(root: &Path, files: &[ScaffoldFile]) -> Result<(), ScaffoldError> {
    let clashes: Vec<String> = files
        .iter()
        .filter(|f| !f.edit && root.join(&f.path).exists())
        .map(|f| f.path.display().to_string())
        .collect();
    if !clashes.is_empty() {
        return Err(ScaffoldError {
            message: format!("would overwrite {}", clashes.join(", ")),
            hint: Some("move those files away, or scaffold elsewhere".into()),
        });
    }
    for f in files {
        let path = root.join(&f.path);
        let io = |e: std::io::Error| ScaffoldError {
            message: format!("{}: {e}", path.display()),
            hint: None,
        };
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        std::fs::write(&path, &f.contents).map_err(io)?;
    }
    Ok(())
}
