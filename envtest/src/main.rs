//! `kube-codegen-envtest`: build or find the pinned control-plane binaries; run a control
//! plane until interrupted (for a shell, a debugger, a test runner of another language);
//! or start one detached, in a directory of its own, and act on it later (`down`, `env`,
//! `status`, API-server crash drills). kube-codegen's `hack/testenv.sh` runs this command.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::str::FromStr;
use std::time::{Duration, Instant};

use clap::{Args, Parser, Subcommand};
use kube_codegen_envtest::{
    BIN_DIR_ENV, Binaries, Component, DetachedEnvironment, ETCD_VERSION, Environment,
    KUBERNETES_VERSION, Ports, cache_bin_dir,
};

/// Where a detached control plane lives unless `--dir` or this variable says otherwise.
const DIR_ENV: &str = "KUBE_CODEGEN_TESTENV_DIR";
const DEFAULT_DIR: &str = "/tmp/kube-codegen-testenv";
const TIMEOUT_ENV: &str = "KUBE_CODEGEN_TESTENV_TIMEOUT";
const DEFAULT_TIMEOUT_SECS: u64 = 90;
const PORT_OFFSET_ENV: &str = "KUBE_CODEGEN_TESTENV_PORT_OFFSET";
const APISERVER_ARGS_ENV: &str = "KUBE_CODEGEN_APISERVER_EXTRA_ARGS";
const KCM_ARGS_ENV: &str = "KUBE_CODEGEN_KCM_EXTRA_ARGS";

#[derive(Parser)]
#[command(
    version,
    about = "A real etcd + kube-apiserver (+ kube-controller-manager) on loopback for controller tests",
    after_help = "Environment: KUBE_CODEGEN_CACHE (binary cache root, default ~/.cache/kube-codegen), \
                  KUBE_CODEGEN_ENVTEST_BIN (binaries to use instead of the cache), \
                  KUBE_CODEGEN_TESTENV_DIR, KUBE_CODEGEN_TESTENV_PORT_OFFSET and \
                  KUBE_CODEGEN_{ETCD,ETCD_PEER,APISERVER,KCM}_PORT (a detached control \
                  plane's directory and ports), KUBE_CODEGEN_TESTENV_TIMEOUT (seconds), \
                  KUBE_CODEGEN_APISERVER_EXTRA_ARGS and KUBE_CODEGEN_KCM_EXTRA_ARGS (extra \
                  flags, split at whitespace). Flags win over variables."
)]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Start a control plane; print its kubeconfig path (the last line on stdout)
    ///
    /// Without --detach: in a temporary directory on free ports, until SIGINT or SIGTERM,
    /// then stop it and remove the directory. With --detach: in --dir on fixed ports, in
    /// the background, and exit once it is ready; `down` stops it. A detached control
    /// plane that already runs in --dir as asked is kept, data and all (only the CRDs are
    /// applied); anything else there is stopped and a new one starts from an empty etcd.
    Up(UpArgs),
    /// Stop the detached control plane in --dir and remove its files (logs included)
    Down(DirArg),
    /// Print KUBECONFIG and PATH (the pinned kubectl first) for a shell to eval
    ///
    /// `eval "$(kube-codegen-envtest env)"` sets `KUBECONFIG` to --dir's kubeconfig and
    /// puts the directory of the binaries (with the kubectl of the server's version)
    /// first on `PATH`.
    Env(DirArg),
    /// Show the detached control plane's processes; exit 0 only if all run and it is ready
    ///
    /// Exit status 1 if a process does not run, /readyz is not ok, or none was started.
    Status(DirArg),
    /// SIGKILL the detached control plane's kube-apiserver (etcd keeps the data)
    ///
    /// Waits until its port is free, so a start right after does not race the old
    /// process.
    KillApiserver(DirArg),
    /// Start the detached control plane's kube-apiserver again and wait for /readyz
    ///
    /// With the command line it was first started with, if it is not running; its log is
    /// appended to.
    StartApiserver(TimedDirArg),
    /// kill-apiserver, then start-apiserver: an API server crash and recovery
    #[command(alias = "restart-apiserver")]
    ApiserverRestart(TimedDirArg),
    /// Find the cached binaries, or build them (needs Go; 6-8 min cold); print their directory
    Build,
    /// Print the directory the binaries are found in (fails, with the hint, if missing)
    Path,
    /// Print the pinned versions, `kubernetes v1.x.y` and `etcd v3.x.y`, one a line
    Versions,
}

#[derive(Args)]
struct UpArgs {
    /// Install the CRDs in the *.yaml/*.yml/*.json files of this directory (repeatable).
    #[arg(long)]
    crd_dir: Vec<PathBuf>,
    /// Install the CRDs in this file (repeatable).
    #[arg(long)]
    crd_file: Vec<PathBuf>,
    /// Also run kube-controller-manager (garbage collection, namespace deletion, ...).
    #[arg(long)]
    controller_manager: bool,
    /// Build the pinned binaries first if any is missing, as `build` does (unless
    /// KUBE_CODEGEN_ENVTEST_BIN names binaries to use).
    #[arg(long)]
    build: bool,
    /// Start in the background in --dir and exit once ready.
    #[arg(long)]
    detach: bool,
    /// The detached control plane's directory (certificates, kubeconfig, logs, pid files,
    /// etcd data) [default: $KUBE_CODEGEN_TESTENV_DIR, else /tmp/kube-codegen-testenv].
    #[arg(long, requires = "detach")]
    dir: Option<PathBuf>,
    /// Add this to every default port (23790 etcd, 23800 etcd peer, 16443 apiserver,
    /// 16257 controller manager): a second detached control plane [default:
    /// $KUBE_CODEGEN_TESTENV_PORT_OFFSET, else 0].
    #[arg(long, requires = "detach")]
    port_offset: Option<u16>,
    /// etcd's client port [default: $KUBE_CODEGEN_ETCD_PORT, else 23790 + offset].
    #[arg(long, requires = "detach")]
    etcd_port: Option<u16>,
    /// etcd's peer port [default: $KUBE_CODEGEN_ETCD_PEER_PORT, else 23800 + offset].
    #[arg(long, requires = "detach")]
    etcd_peer_port: Option<u16>,
    /// kube-apiserver's port [default: $KUBE_CODEGEN_APISERVER_PORT, else 16443 + offset].
    #[arg(long, requires = "detach")]
    apiserver_port: Option<u16>,
    /// kube-controller-manager's port [default: $KUBE_CODEGEN_KCM_PORT, else 16257 + offset].
    #[arg(long, requires = "detach")]
    controller_manager_port: Option<u16>,
    /// An extra kube-apiserver flag, after those of $KUBE_CODEGEN_APISERVER_EXTRA_ARGS
    /// (repeatable; later flags win).
    #[arg(
        long = "apiserver-arg",
        value_name = "FLAG",
        allow_hyphen_values = true
    )]
    apiserver_args: Vec<String>,
    /// Turn a kube-apiserver feature gate on or off, `NAME=true|false` (repeatable), e.g.
    /// `--feature-gate ShardedListAndWatch=true` for sharded list and watch.
    #[arg(long = "feature-gate", value_name = "NAME=BOOL", value_parser = parse_gate)]
    feature_gates: Vec<(String, bool)>,
    /// An extra kube-controller-manager flag, after those of $KUBE_CODEGEN_KCM_EXTRA_ARGS
    /// (repeatable).
    #[arg(
        long = "controller-manager-arg",
        value_name = "FLAG",
        allow_hyphen_values = true
    )]
    controller_manager_args: Vec<String>,
    #[command(flatten)]
    timeout: TimeoutArg,
}

#[derive(Args)]
struct DirArg {
    /// The detached control plane's directory [default: $KUBE_CODEGEN_TESTENV_DIR, else
    /// /tmp/kube-codegen-testenv].
    #[arg(long)]
    dir: Option<PathBuf>,
}

#[derive(Args)]
struct TimedDirArg {
    #[command(flatten)]
    dir: DirArg,
    #[command(flatten)]
    timeout: TimeoutArg,
}

#[derive(Args)]
struct TimeoutArg {
    /// Seconds to wait for readiness [default: $KUBE_CODEGEN_TESTENV_TIMEOUT, else 90].
    #[arg(long, value_name = "SECS")]
    timeout: Option<u64>,
}

type Failure = Box<dyn std::error::Error>;

/// `NAME=true|false`, as kube-apiserver's `--feature-gates` takes each gate.
fn parse_gate(s: &str) -> Result<(String, bool), String> {
    let (name, value) = s
        .split_once('=')
        .ok_or_else(|| format!("expected NAME=true or NAME=false, got {s:?}"))?;
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric()) {
        return Err(format!(
            "feature gate names are letters and digits (ShardedListAndWatch), got {name:?}"
        ));
    }
    let on = match value {
        "true" => true,
        "false" => false,
        _ => return Err(format!("{name}: expected true or false, got {value:?}")),
    };
    Ok((name.to_owned(), on))
}

#[tokio::main]
async fn main() -> ExitCode {
    match run(Cli::parse().command).await {
        Ok(code) => code,
        Err(e) => {
            eprintln!("kube-codegen-envtest: error: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn run(cmd: Cmd) -> Result<ExitCode, Failure> {
    match cmd {
        Cmd::Build => {
            let bins = tokio::task::spawn_blocking(Binaries::build).await??;
            println!("{}", bins.dir().display());
        }
        Cmd::Path => println!("{}", Binaries::find()?.dir().display()),
        Cmd::Versions => println!("kubernetes {KUBERNETES_VERSION}\netcd {ETCD_VERSION}"),
        Cmd::Up(args) => up(args).await?,
        Cmd::Down(dir) => down(&detached(dir)?)?,
        Cmd::Env(dir) => env(&detached(dir)?),
        Cmd::Status(dir) => return status(&detached(dir)?).await,
        Cmd::KillApiserver(dir) => {
            let cp = detached(dir)?;
            cp.kill_apiserver()?;
            eprintln!(
                "kube-codegen-envtest: kube-apiserver killed ({})",
                cp.dir().display()
            );
        }
        Cmd::StartApiserver(args) => start_apiserver(&detached(args.dir)?, &args.timeout).await?,
        Cmd::ApiserverRestart(args) => {
            let cp = detached(args.dir)?;
            cp.kill_apiserver()?;
            start_apiserver(&cp, &args.timeout).await?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

async fn up(args: UpArgs) -> Result<(), Failure> {
    let mut builder = Environment::builder()
        .controller_manager(args.controller_manager)
        .timeout(timeout(&args.timeout)?);
    if args.build && std::env::var_os(BIN_DIR_ENV).is_none() {
        builder = builder.binaries(tokio::task::spawn_blocking(Binaries::build).await??);
    }
    for d in &args.crd_dir {
        builder = builder.crd_dir(d);
    }
    for f in &args.crd_file {
        builder = builder.crd_file(f);
    }
    for arg in env_words(APISERVER_ARGS_ENV)?
        .into_iter()
        .chain(args.apiserver_args.iter().cloned())
    {
        builder = builder.apiserver_arg(arg);
    }
    for (name, on) in &args.feature_gates {
        builder = builder.feature_gate(name, *on);
    }
    for arg in env_words(KCM_ARGS_ENV)?
        .into_iter()
        .chain(args.controller_manager_args.iter().cloned())
    {
        builder = builder.controller_manager_arg(arg);
    }
    let started = Instant::now();

    if args.detach {
        let ports = ports(&args)?;
        let dir = dir_or_default(args.dir)?;
        let cp = builder.start_detached(dir, ports).await?;
        eprintln!(
            "kube-codegen-envtest: control plane up at https://127.0.0.1:{} in {:.1?}; \
             directory {} (stop it with `down`)",
            ports.apiserver,
            started.elapsed(),
            cp.dir().display()
        );
        println!("{}", cp.kubeconfig_path().display());
        return Ok(());
    }

    let env = builder.start().await?;
    eprintln!(
        "kube-codegen-envtest: control plane up at {} in {:.1?}; directory {}",
        env.apiserver_url(),
        started.elapsed(),
        env.dir().display()
    );
    println!("{}", env.kubeconfig_path().display());
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    tokio::select! {
        r = tokio::signal::ctrl_c() => r?,
        _ = term.recv() => {}
    }
    eprintln!("kube-codegen-envtest: stopping");
    env.stop().await?;
    Ok(())
}

fn down(cp: &DetachedEnvironment) -> Result<(), Failure> {
    let ports = cp.ports();
    let had_kcm = cp.pid(Component::KubeControllerManager).is_some();
    cp.stop()?;
    eprintln!("kube-codegen-envtest: stopped ({})", cp.dir().display());
    // A port still taken is someone else's (what we started is gone): the next `up` would
    // fail on it, so say so now.
    if let Some(p) = ports {
        let mut used = vec![p.etcd, p.etcd_peer, p.apiserver];
        if had_kcm {
            used.push(p.controller_manager);
        }
        for port in used {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                eprintln!(
                    "kube-codegen-envtest: warning: port 127.0.0.1:{port} is still in use \
                     (not by a process of this control plane)"
                );
            }
        }
    }
    Ok(())
}

fn env(cp: &DetachedEnvironment) {
    // The binaries of the control plane that runs, else those `up` would take; the
    // directory's kubectl has the server's version, and a fresh CI machine may have none.
    let bin = cp
        .binaries_dir()
        .or_else(|| Binaries::find().ok().map(|b| b.dir().to_owned()))
        .unwrap_or_else(cache_bin_dir);
    println!("export KUBECONFIG={}", shell_quote(&cp.kubeconfig_path()));
    println!("export PATH={}:\"$PATH\"", shell_quote(&bin));
}

async fn status(cp: &DetachedEnvironment) -> Result<ExitCode, Failure> {
    let status = cp.status().await;
    println!("directory: {}", cp.dir().display());
    if let Some(bin) = &status.binaries {
        // VERSIONS is written by `build`: "kubernetes v1.37.2\netcd v3.7.0\ngo go1.x".
        let versions = std::fs::read_to_string(bin.join("VERSIONS"))
            .map(|v| format!(" ({})", v.split_whitespace().collect::<Vec<_>>().join(" ")))
            .unwrap_or_default();
        println!("binaries: {}{versions}", bin.display());
    } else {
        println!("no control plane was started here");
    }
    for (component, pid) in &status.processes {
        match pid {
            Some(pid) => println!(
                "{component}: running (pid {pid}, log {})",
                cp.log_path(*component).display()
            ),
            None => println!("{component}: stopped"),
        }
    }
    println!(
        "apiserver /readyz: {}",
        if status.apiserver_ready {
            "ok"
        } else {
            "not ready"
        }
    );
    println!("kubeconfig: {}", cp.kubeconfig_path().display());
    Ok(if status.is_up() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

async fn start_apiserver(cp: &DetachedEnvironment, t: &TimeoutArg) -> Result<(), Failure> {
    let started = Instant::now();
    cp.start_apiserver(timeout(t)?).await?;
    eprintln!(
        "kube-codegen-envtest: kube-apiserver ready in {:.1?} ({})",
        started.elapsed(),
        cp.dir().display()
    );
    Ok(())
}

fn detached(arg: DirArg) -> Result<DetachedEnvironment, Failure> {
    Ok(DetachedEnvironment::at(dir_or_default(arg.dir)?))
}

fn dir_or_default(flag: Option<PathBuf>) -> Result<PathBuf, Failure> {
    Ok(match flag {
        Some(dir) => dir,
        None => match std::env::var_os(DIR_ENV) {
            Some(dir) if !dir.is_empty() => dir.into(),
            _ => DEFAULT_DIR.into(),
        },
    })
}

fn timeout(arg: &TimeoutArg) -> Result<Duration, Failure> {
    let secs = match arg.timeout {
        Some(secs) => secs,
        None => env_number(TIMEOUT_ENV)?.unwrap_or(DEFAULT_TIMEOUT_SECS),
    };
    Ok(Duration::from_secs(secs))
}

/// Flag, else its variable, else the default shifted by the offset.
fn ports(args: &UpArgs) -> Result<Ports, Failure> {
    let offset = match args.port_offset {
        Some(o) => o,
        None => env_number(PORT_OFFSET_ENV)?.unwrap_or(0),
    };
    let base = Ports::DEFAULT
        .offset(offset)
        .ok_or_else(|| format!("port offset {offset} takes a port past 65535"))?;
    let pick = |flag: Option<u16>, var: &str, default: u16| -> Result<u16, Failure> {
        Ok(match flag {
            Some(port) => port,
            None => env_number(var)?.unwrap_or(default),
        })
    };
    Ok(Ports {
        etcd: pick(args.etcd_port, "KUBE_CODEGEN_ETCD_PORT", base.etcd)?,
        etcd_peer: pick(
            args.etcd_peer_port,
            "KUBE_CODEGEN_ETCD_PEER_PORT",
            base.etcd_peer,
        )?,
        apiserver: pick(
            args.apiserver_port,
            "KUBE_CODEGEN_APISERVER_PORT",
            base.apiserver,
        )?,
        controller_manager: pick(
            args.controller_manager_port,
            "KUBE_CODEGEN_KCM_PORT",
            base.controller_manager,
        )?,
    })
}

/// A number from an environment variable; unset or empty is `None`.
fn env_number<T: FromStr>(var: &str) -> Result<Option<T>, Failure> {
    match std::env::var(var) {
        Ok(v) if v.trim().is_empty() => Ok(None),
        Ok(v) => v
            .trim()
            .parse()
            .map(Some)
            .map_err(|_| format!("{var}={v:?} is not a valid number here").into()),
        Err(std::env::VarError::NotPresent) => Ok(None),
        Err(std::env::VarError::NotUnicode(_)) => Err(format!("{var} is not UTF-8").into()),
    }
}

/// The words of an environment variable of extra flags, split at whitespace (as a
/// shell's unquoted expansion does; no quoting inside).
fn env_words(var: &str) -> Result<Vec<String>, Failure> {
    match std::env::var(var) {
        Ok(v) => Ok(v.split_whitespace().map(str::to_owned).collect()),
        Err(std::env::VarError::NotPresent) => Ok(Vec::new()),
        Err(std::env::VarError::NotUnicode(_)) => Err(format!("{var} is not UTF-8").into()),
    }
}

/// A path as one POSIX shell word: bare if it only has characters no shell treats
/// specially, else single-quoted (a `'` inside as `'\''`).
fn shell_quote(path: &Path) -> String {
    let text = path.as_os_str().to_string_lossy().into_owned();
    let plain = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+,:@%=".contains(c));
    if plain {
        text
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_only_what_a_shell_would_split_or_expand() {
        assert_eq!(shell_quote(Path::new("/tmp/a-b_c.d")), "/tmp/a-b_c.d");
        assert_eq!(shell_quote(Path::new("/tmp/a b")), "'/tmp/a b'");
        assert_eq!(shell_quote(Path::new("/tmp/it's$x")), r"'/tmp/it'\''s$x'");
    }
}
