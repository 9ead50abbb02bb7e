//! `kube-codegen-envtest`: build or find the pinned control-plane binaries, or run a
//! control plane until interrupted (for a shell, a debugger, a test runner of another
//! language).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use kube_codegen_envtest::{Binaries, Environment};

#[derive(Parser)]
#[command(
    version,
    about = "A real etcd + kube-apiserver on loopback for controller tests"
)]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Start a control plane, install the CRDs, print the kubeconfig path (the only line
    /// on stdout), and run until SIGINT or SIGTERM, then stop it and remove its directory.
    Up {
        /// Install the CRDs in the *.yaml/*.yml/*.json files of this directory (repeatable).
        #[arg(long)]
        crd_dir: Vec<PathBuf>,
        /// Install the CRDs in this file (repeatable).
        #[arg(long)]
        crd_file: Vec<PathBuf>,
        /// Also run kube-controller-manager (garbage collection, namespace deletion, ...).
        #[arg(long)]
        controller_manager: bool,
    },
    /// Find the cached binaries, or build them from Go modules (needs Go; 6-8 min cold);
    /// prints their directory.
    Build,
    /// Print the directory the binaries are found in (fails, with the hint, if missing).
    Path,
}

#[tokio::main]
async fn main() -> ExitCode {
    match run(Cli::parse().command).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("kube-codegen-envtest: error: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn run(cmd: Cmd) -> Result<(), Box<dyn std::error::Error>> {
    match cmd {
        Cmd::Build => {
            let bins = tokio::task::spawn_blocking(Binaries::build).await??;
            println!("{}", bins.dir().display());
        }
        Cmd::Path => println!("{}", Binaries::find()?.dir().display()),
        Cmd::Up {
            crd_dir,
            crd_file,
            controller_manager,
        } => {
            let mut builder = Environment::builder().controller_manager(controller_manager);
            for d in crd_dir {
                builder = builder.crd_dir(d);
            }
            for f in crd_file {
                builder = builder.crd_file(f);
            }
            let started = std::time::Instant::now();
            let env = builder.start().await?;
            eprintln!(
                "kube-codegen-envtest: control plane up at {} in {:.1?}; directory {}",
                env.apiserver_url(),
                started.elapsed(),
                env.dir().display()
            );
            println!("{}", env.kubeconfig_path().display());
            let mut term =
                tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
            tokio::select! {
                r = tokio::signal::ctrl_c() => r?,
                _ = term.recv() => {}
            }
            eprintln!("kube-codegen-envtest: stopping");
            env.stop().await?;
        }
    }
    Ok(())
}
