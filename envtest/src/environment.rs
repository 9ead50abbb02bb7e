//! One control plane: its builder, its processes and its lifetime.

use std::fs;
use std::io::{Read, Seek, SeekFrom};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::ServiceAccount;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::Api;
use kube::config::{KubeConfigOptions, Kubeconfig};
use tempfile::TempDir;

use crate::binaries::Binaries;
use crate::crds::{self, CrdSource};
use crate::error::{Component, Error};
use crate::pki;

const HOST: Ipv4Addr = Ipv4Addr::LOCALHOST;
/// How many times a start is retried when another process took one of the ports between
/// our choosing it (bind port 0, close) and the component binding it.
const PORT_RETRIES: usize = 3;
const LOG_TAIL_LINES: usize = 25;

/// Configures an [`Environment`]; made by [`Environment::builder`].
#[derive(Debug, Clone)]
#[must_use = "a builder does nothing until .start().await"]
pub struct Builder {
    binaries: Option<Binaries>,
    crds: Vec<CrdSource>,
    yaml_count: usize,
    controller_manager: bool,
    timeout: Duration,
    apiserver_args: Vec<String>,
    /// The processes die with the thread that starts them (Linux: PR_SET_PDEATHSIG), set
    /// by [`SharedEnvironment`](crate::SharedEnvironment) only: its starting thread lives
    /// as long as the process, so even a SIGKILLed test binary leaves nothing behind.
    pub(crate) die_with_thread: bool,
}

impl Default for Builder {
    fn default() -> Self {
        Self {
            binaries: None,
            crds: Vec::new(),
            yaml_count: 0,
            controller_manager: false,
            timeout: Duration::from_secs(60),
            apiserver_args: Vec::new(),
            die_with_thread: false,
        }
    }
}

impl Builder {
    /// Installs every CRD in `*.yaml`, `*.yml` and `*.json` files directly in `dir`
    /// (kube-codegen's `config/crd`, say). Files may hold several `---` documents; each
    /// must be a CustomResourceDefinition.
    pub fn crd_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.crds.push(CrdSource::Dir(dir.into()));
        self
    }

    /// Installs the CRDs in one YAML or JSON file.
    pub fn crd_file(mut self, file: impl Into<PathBuf>) -> Self {
        self.crds.push(CrdSource::File(file.into()));
        self
    }

    /// Installs the CRDs in YAML text (`include_str!` of a generated file, say).
    pub fn crd_yaml(mut self, yaml: impl Into<String>) -> Self {
        self.yaml_count += 1;
        self.crds
            .push(CrdSource::Yaml(self.yaml_count, yaml.into()));
        self
    }

    /// Installs a typed CRD (from `kube::CustomResourceExt::crd()`, say).
    pub fn crd(mut self, crd: CustomResourceDefinition) -> Self {
        self.crds.push(CrdSource::Object(Box::new(crd)));
        self
    }

    /// Also runs kube-controller-manager with every default controller (garbage
    /// collection, namespace deletion, ServiceAccounts and their tokens, Deployment →
    /// ReplicaSet → Pod, ...). Off by default, as in controller-runtime's envtest: without
    /// it the API server stores objects but nothing acts on them (deleted namespaces stay
    /// `Terminating`, owners' deletion does not cascade). It adds about 6 s to the start
    /// (start() waits until the serviceaccount controller has made `default/default`).
    /// The builder's CRDs are installed before it starts, so the garbage collector knows
    /// their kinds at once; a CRD a test installs later becomes known to it on its next
    /// discovery, up to 30 s later (objects owned by such a kind are collected only then).
    pub fn controller_manager(mut self, on: bool) -> Self {
        self.controller_manager = on;
        self
    }

    /// Uses these binaries instead of [`Binaries::find`].
    pub fn binaries(mut self, binaries: Binaries) -> Self {
        self.binaries = Some(binaries);
        self
    }

    /// How long [`start`](Self::start) may take in all (default 60 s).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// An extra kube-apiserver flag (`--feature-gates=...`, say); later flags win.
    pub fn apiserver_arg(mut self, arg: impl Into<String>) -> Self {
        self.apiserver_args.push(arg.into());
        self
    }

    /// Starts etcd, kube-apiserver (and kube-controller-manager if asked) on free loopback
    /// ports in a temporary directory of this environment's own, waits until they are
    /// ready, installs the CRDs and waits until they are `Established` and served.
    /// CRD files are read first, so a bad one fails before anything starts.
    ///
    /// # Errors
    ///
    /// - [`Error::MissingBinary`] with the hint how to build the binaries;
    /// - [`Error::Crd`] for a CRD file that cannot be read or is not a CRD, naming the file
    ///   and document;
    /// - [`Error::Startup`] when a process exits or is not ready in time, with the tail of
    ///   its log;
    /// - [`Error::CrdNotReady`], [`Error::Kube`], [`Error::Io`], [`Error::Certificates`].
    ///
    /// Whatever was started is stopped again before the error is returned.
    pub async fn start(self) -> Result<Environment, Error> {
        let binaries = match &self.binaries {
            Some(b) => b.clone(),
            None => Binaries::find()?,
        };
        let kcm = if self.controller_manager {
            Some(binaries.require_kcm()?.to_owned())
        } else {
            None
        };
        let crds = crds::load(&self.crds)?;
        let mut attempt = 0;
        loop {
            attempt += 1;
            match self.start_once(&binaries, kcm.as_deref(), &crds).await {
                Err(Error::Startup { ref tail, .. })
                    if attempt < PORT_RETRIES && tail.contains("address already in use") => {}
                other => return other,
            }
        }
    }

    async fn start_once(
        &self,
        binaries: &Binaries,
        kcm: Option<&Path>,
        crds: &[CustomResourceDefinition],
    ) -> Result<Environment, Error> {
        let deadline = Instant::now() + self.timeout;
        let dir = tempfile::Builder::new()
            .prefix("kube-codegen-envtest-")
            .tempdir()
            .map_err(Error::io("creating the environment's temp dir"))?;
        let root = dir.path().to_owned();
        let mut running = Running {
            processes: Vec::new(),
            dir: Some(dir),
            die_with_thread: self.die_with_thread,
        };
        let [etcd_port, etcd_peer_port, apiserver_port, kcm_port] = free_ports()?;
        let pki = pki::write(&root)?;
        let token = random_token();
        let tokens_csv = root.join("tokens.csv");
        // token,user,uid,"groups": system:masters bypasses RBAC entirely.
        pki::write_private(
            &tokens_csv,
            &format!(
                "{token},kube-codegen-envtest-admin,kube-codegen-envtest-admin,\"system:masters\"\n"
            ),
        )?;
        let server = format!("https://{HOST}:{apiserver_port}");
        let kubeconfig_path = root.join("kubeconfig");
        write_kubeconfig(&kubeconfig_path, &server, &pki.ca_crt, &token)?;

        let etcd_url = format!("http://{HOST}:{etcd_port}");
        let peer_url = format!("http://{HOST}:{etcd_peer_port}");
        running.spawn(
            Component::Etcd,
            binaries.etcd(),
            &[
                "--name=default".into(),
                format!("--data-dir={}", root.join("etcd-data").display()),
                format!("--listen-client-urls={etcd_url}"),
                format!("--advertise-client-urls={etcd_url}"),
                format!("--listen-peer-urls={peer_url}"),
                format!("--initial-advertise-peer-urls={peer_url}"),
                format!("--initial-cluster=default={peer_url}"),
                // The data lives as long as the environment; fsync only slows tests down.
                "--unsafe-no-fsync".into(),
            ],
            &root,
        )?;
        // The apiserver retries etcd itself, but a dead etcd (its port taken) would then
        // only show as an apiserver timeout: wait for etcd's port first.
        running
            .wait_for(
                Component::Etcd,
                "its client port",
                deadline,
                || async move {
                    TcpStream::connect_timeout(
                        &SocketAddr::from((HOST, etcd_port)),
                        Duration::from_millis(200),
                    )
                    .is_ok()
                },
            )
            .await?;

        let mut apiserver_args = vec![
            format!("--etcd-servers={etcd_url}"),
            format!("--bind-address={HOST}"),
            format!("--advertise-address={HOST}"),
            format!("--secure-port={apiserver_port}"),
            // The reconciler publishing the apiserver's address as the endpoints of the
            // `kubernetes` Service refuses a loopback address and the server exits.
            "--endpoint-reconciler-type=none".into(),
            format!("--cert-dir={}", root.join("apiserver-certs").display()),
            format!("--tls-cert-file={}", pki.apiserver_crt.display()),
            format!("--tls-private-key-file={}", pki.apiserver_key.display()),
            format!("--client-ca-file={}", pki.ca_crt.display()),
            format!("--token-auth-file={}", tokens_csv.display()),
            "--authorization-mode=Node,RBAC".into(),
            "--service-account-issuer=https://kubernetes.default.svc.cluster.local".into(),
            format!("--service-account-key-file={}", pki.sa_pub.display()),
            format!(
                "--service-account-signing-key-file={}",
                pki.sa_key.display()
            ),
            "--service-cluster-ip-range=10.96.0.0/16".into(),
            "--allow-privileged=true".into(),
        ];
        apiserver_args.extend(self.apiserver_args.iter().cloned());
        running.spawn(
            Component::KubeApiserver,
            binaries.kube_apiserver(),
            &apiserver_args,
            &root,
        )?;
        let config = load_config(&kubeconfig_path).await?;
        let client = kube::Client::try_from(config.clone())
            .map_err(Error::kube("making a client from the kubeconfig"))?;
        let readyz_client = &client;
        running
            .wait_for(Component::KubeApiserver, "/readyz", deadline, || {
                apiserver_ready(readyz_client)
            })
            .await?;

        // CRDs before the controller manager: its garbage collector learns the kinds that
        // exist when it starts, and one installed later only on its next discovery, up to
        // 30 s on: owners of a CRD kind would not be collected until then.
        crds::install(&client, crds, deadline).await?;

        if let Some(kcm) = kcm {
            running.spawn(
                Component::KubeControllerManager,
                kcm,
                &[
                    format!("--kubeconfig={}", kubeconfig_path.display()),
                    format!("--bind-address={HOST}"),
                    format!("--secure-port={kcm_port}"),
                    format!("--cert-dir={}", root.join("kcm-certs").display()),
                    "--leader-elect=false".into(),
                    // Every controller that is on by default; each uses its own
                    // ServiceAccount, as in kubeadm clusters, so their RBAC is exercised.
                    "--controllers=*".into(),
                    "--use-service-account-credentials=true".into(),
                    format!(
                        "--service-account-private-key-file={}",
                        pki.sa_key.display()
                    ),
                    format!("--root-ca-file={}", pki.ca_crt.display()),
                    format!("--cluster-signing-cert-file={}", pki.ca_crt.display()),
                    format!("--cluster-signing-key-file={}", pki.ca_key.display()),
                ],
                &root,
            )?;
            // The serviceaccount controller making `default` in `default`: the
            // controllers run and can write.
            let sas: Api<ServiceAccount> = Api::namespaced(client.clone(), "default");
            let sas = &sas;
            running
                .wait_for(
                    Component::KubeControllerManager,
                    "the default ServiceAccount",
                    deadline,
                    || async move { matches!(sas.get_opt("default").await, Ok(Some(_))) },
                )
                .await?;
        }

        Ok(Environment {
            client,
            config,
            kubeconfig_path,
            apiserver_port,
            etcd_port,
            binaries: binaries.clone(),
            dir: root,
            running: Mutex::new(running),
        })
    }
}

/// A running control plane: etcd and kube-apiserver (and kube-controller-manager if
/// asked) on free loopback ports, with a temporary directory of its own for certificates,
/// kubeconfig, logs and etcd data. Several can run at once.
///
/// Dropping it kills the processes and removes the directory, also when a test panics;
/// [`stop`](Self::stop) does the same and reports failures.
///
/// # Examples
///
/// ```no_run
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use kube::api::{Api, PostParams};
///
/// # async fn example() -> Result<(), Box<dyn std::error::Error>> {
/// let env = kube_codegen_envtest::Environment::builder()
///     .crd_dir("config/crd")
///     .start()
///     .await?;
/// let cms: Api<ConfigMap> = Api::namespaced(env.client(), "default");
/// let mut cm = ConfigMap::default();
/// cm.metadata.name = Some("hello".into());
/// cms.create(&PostParams::default(), &cm).await?;
/// env.stop().await?;
/// # Ok(())
/// # }
/// ```
#[must_use = "dropping the environment stops it"]
pub struct Environment {
    client: kube::Client,
    config: kube::Config,
    kubeconfig_path: PathBuf,
    apiserver_port: u16,
    etcd_port: u16,
    binaries: Binaries,
    dir: PathBuf,
    /// Behind a lock only for [`SharedEnvironment`](crate::SharedEnvironment)'s exit hook,
    /// which stops an environment it can only reach through a shared reference; everything
    /// else has `&mut self` and uses `get_mut`.
    running: Mutex<Running>,
}

impl std::fmt::Debug for Environment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // kube::Client has no Debug; the rest says which environment this is.
        f.debug_struct("Environment")
            .field("apiserver_url", &self.apiserver_url())
            .field("dir", &self.dir())
            .field("pids", &self.pids())
            .finish_non_exhaustive()
    }
}

impl Environment {
    /// A builder; [`Builder::start`] starts the environment.
    pub fn builder() -> Builder {
        Builder::default()
    }

    /// A client for the API server, as an admin user (group `system:masters`, so RBAC
    /// allows everything; make your own user to test RBAC).
    #[must_use]
    pub fn client(&self) -> kube::Client {
        self.client.clone()
    }

    /// A new client for the API server, as [`client`](Self::client)'s user, whose
    /// connections belong to the calling tokio runtime. [`client`](Self::client) serves
    /// its requests from the runtime that started the environment; a test that shares an
    /// environment with others (a [`SharedEnvironment`](crate::SharedEnvironment)) is better
    /// off with a client of its own, so its connections live and die with its runtime.
    ///
    /// Call it inside a tokio runtime (the client spawns its request buffer there).
    ///
    /// # Errors
    ///
    /// [`Error::Kube`] if the client cannot be made from [`config`](Self::config).
    pub fn new_client(&self) -> Result<kube::Client, Error> {
        kube::Client::try_from(self.config.clone())
            .map_err(Error::kube("making a client from the kubeconfig"))
    }

    /// The client configuration [`client`](Self::client) was made from.
    #[must_use]
    pub fn config(&self) -> &kube::Config {
        &self.config
    }

    /// The binaries this environment runs.
    #[must_use]
    pub fn binaries(&self) -> &Binaries {
        &self.binaries
    }

    /// A `kubectl` command against this environment: the `kubectl` next to the binaries
    /// (built with the same Kubernetes version as the server), `--kubeconfig` set to
    /// [`kubeconfig_path`](Self::kubeconfig_path). Add the arguments and run it.
    ///
    /// # Errors
    ///
    /// [`Error::MissingTool`] if there is no `kubectl` next to the binaries.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn example() -> Result<(), Box<dyn std::error::Error>> {
    /// let env = kube_codegen_envtest::Environment::builder().start().await?;
    /// let out = env.kubectl()?.args(["get", "namespaces"]).output()?;
    /// assert!(String::from_utf8_lossy(&out.stdout).contains("kube-system"));
    /// # Ok(())
    /// # }
    /// ```
    pub fn kubectl(&self) -> Result<Command, Error> {
        let path = self.binaries.kubectl().ok_or_else(|| Error::MissingTool {
            name: "kubectl",
            path: self.binaries.dir().join("kubectl"),
            hint: crate::binaries::HINT.to_owned(),
        })?;
        let mut cmd = Command::new(path);
        cmd.arg("--kubeconfig").arg(&self.kubeconfig_path);
        Ok(cmd)
    }

    /// The kubeconfig file (admin token, CA, server) for other processes: kubectl, the
    /// controller binary under test. Removed with the environment.
    #[must_use]
    pub fn kubeconfig_path(&self) -> &Path {
        &self.kubeconfig_path
    }

    /// The API server's URL, `https://127.0.0.1:<port>`.
    #[must_use]
    pub fn apiserver_url(&self) -> String {
        format!("https://{HOST}:{}", self.apiserver_port)
    }

    /// etcd's client URL, `http://127.0.0.1:<port>`.
    #[must_use]
    pub fn etcd_url(&self) -> String {
        format!("http://{HOST}:{}", self.etcd_port)
    }

    /// The environment's directory: certificates, kubeconfig, `<component>.log`, etcd data.
    #[must_use]
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The process ids of the running components, in start order.
    #[must_use]
    pub fn pids(&self) -> Vec<(Component, u32)> {
        self.running
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .processes
            .iter()
            .map(|p| (p.component, p.child.id()))
            .collect()
    }

    /// Kills kube-apiserver with SIGKILL, as a crash would, and waits until it is gone;
    /// etcd (and the controller manager) keep running, so the data survives. For fault
    /// tests: what does the controller do while the API server is away?
    ///
    /// # Errors
    ///
    /// [`Error::Io`] if it could not be killed or reaped.
    pub fn kill_apiserver(&mut self) -> Result<(), Error> {
        let p = self
            .running
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner)
            .process(Component::KubeApiserver)
            .expect("an environment always has an apiserver");
        let pid = p.child.id();
        if p.child.try_wait().ok().flatten().is_none() {
            p.child
                .kill()
                .map_err(Error::io(format!("killing kube-apiserver (pid {pid})")))?;
        }
        p.child
            .wait()
            .map_err(Error::io(format!("waiting for kube-apiserver (pid {pid})")))?;
        Ok(())
    }

    /// Starts kube-apiserver again, with the same flags and port, if it is not running,
    /// and waits until it is ready (at most `timeout`). Clients made before keep working.
    ///
    /// # Errors
    ///
    /// [`Error::Startup`] if it exits or is not ready in time, with its log's tail;
    /// [`Error::Io`] if it cannot be started.
    pub async fn start_apiserver(&mut self, timeout: Duration) -> Result<(), Error> {
        let deadline = Instant::now() + timeout;
        let running = self
            .running
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner);
        let die_with_thread = running.die_with_thread;
        let p = running
            .process(Component::KubeApiserver)
            .expect("an environment always has an apiserver");
        if p.child.try_wait().ok().flatten().is_some() {
            p.child = start_process(&p.program, &p.args, &self.dir, &p.log, die_with_thread)?;
        }
        let client = &self.client;
        running
            .wait_for(Component::KubeApiserver, "/readyz", deadline, || {
                apiserver_ready(client)
            })
            .await
    }

    /// [`kill_apiserver`](Self::kill_apiserver), then
    /// [`start_apiserver`](Self::start_apiserver): an API server crash and recovery.
    ///
    /// # Errors
    ///
    /// As those two.
    pub async fn restart_apiserver(&mut self, timeout: Duration) -> Result<(), Error> {
        self.kill_apiserver()?;
        self.start_apiserver(timeout).await
    }

    /// Stops the processes (SIGKILL: the data is thrown away, so there is nothing to
    /// shut down cleanly) and removes the directory, as dropping does, but reports what
    /// failed.
    ///
    /// # Errors
    ///
    /// [`Error::Io`] if a process could not be killed or reaped, or the directory not
    /// removed.
    pub async fn stop(mut self) -> Result<(), Error> {
        self.running
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner)
            .stop()
    }

    /// Stops the processes and removes the directory through a shared reference: for the
    /// exit hook of [`SharedEnvironment`](crate::SharedEnvironment).
    pub(crate) fn stop_shared(&self) {
        let _ = self
            .running
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .stop();
    }
}

/// The processes and the directory; dropping kills and removes, so a start that fails
/// half-way cleans up after itself too.
#[derive(Debug)]
struct Running {
    /// In start order; stopped in reverse (clients before the store they talk to).
    processes: Vec<Process>,
    dir: Option<TempDir>,
    /// See [`Builder::die_with_thread`].
    die_with_thread: bool,
}

#[derive(Debug)]
struct Process {
    component: Component,
    child: Child,
    log: PathBuf,
    /// How it was started, to start it again the same way (restart_apiserver).
    program: PathBuf,
    args: Vec<String>,
}

impl Running {
    fn spawn(
        &mut self,
        component: Component,
        program: &Path,
        args: &[String],
        dir: &Path,
    ) -> Result<(), Error> {
        let log = dir.join(format!("{component}.log"));
        let child = start_process(program, args, dir, &log, self.die_with_thread)?;
        self.processes.push(Process {
            component,
            child,
            log,
            program: program.to_owned(),
            args: args.to_vec(),
        });
        Ok(())
    }

    fn process(&mut self, component: Component) -> Option<&mut Process> {
        self.processes.iter_mut().find(|p| p.component == component)
    }

    /// Polls `ready` until it says yes, failing when the component exits or the deadline
    /// passes, with the tail of its log.
    async fn wait_for<F, Fut>(
        &mut self,
        component: Component,
        what: &str,
        deadline: Instant,
        mut ready: F,
    ) -> Result<(), Error>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = bool>,
    {
        let start = Instant::now();
        loop {
            if ready().await {
                return Ok(());
            }
            // Any started process that died fails the wait, not only the one waited
            // for: etcd losing its port shows here, not as an apiserver timeout.
            for process in &mut self.processes {
                let problem = match process.child.try_wait() {
                    Ok(Some(status)) => format!("exited ({status}) while waiting for {what}"),
                    Ok(None) if process.component == component && Instant::now() > deadline => {
                        format!("was not ready ({what}) after {:.0?}", start.elapsed())
                    }
                    Ok(None) => continue,
                    Err(e) => format!("could not be checked while waiting for {what}: {e}"),
                };
                return Err(Error::Startup {
                    component: process.component,
                    problem,
                    log: process.log.clone(),
                    tail: tail(&process.log),
                });
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    fn stop(&mut self) -> Result<(), Error> {
        let mut first_error = None;
        while let Some(mut p) = self.processes.pop() {
            // Already exited (killed from outside, crashed): kill fails, wait reaps.
            let _ = p.child.kill();
            if let Err(e) = p.child.wait() {
                first_error.get_or_insert(Error::Io {
                    what: format!("waiting for {} (pid {}) to exit", p.component, p.child.id()),
                    source: e,
                });
            }
        }
        if let Some(dir) = self.dir.take() {
            let path = dir.path().to_owned();
            if let Err(e) = dir.close() {
                first_error.get_or_insert(Error::Io {
                    what: format!("removing {}", path.display()),
                    source: e,
                });
            }
        }
        first_error.map_or(Ok(()), Err)
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        // Runs during a panic's unwinding too; nothing to report to.
        let _ = self.stop();
    }
}

/// Starts a process with its output appended to `log` (a restart keeps the earlier log);
/// with `die_with_thread` (Linux only) the kernel SIGKILLs it when the calling thread ends.
fn start_process(
    program: &Path,
    args: &[String],
    dir: &Path,
    log: &Path,
    die_with_thread: bool,
) -> Result<Child, Error> {
    let file = fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .map_err(Error::io(format!("opening {}", log.display())))?;
    let file2 = file
        .try_clone()
        .map_err(Error::io(format!("opening {}", log.display())))?;
    let mut cmd = Command::new(program);
    cmd.args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(file)
        .stderr(file2);
    if die_with_thread {
        kill_with_parent_thread(&mut cmd);
    }
    cmd.spawn()
        .map_err(Error::io(format!("starting {}", program.display())))
}

/// Asks the kernel to SIGKILL the child when the thread that forks it ends: for a
/// [`SharedEnvironment`](crate::SharedEnvironment), started on a thread that lives as long
/// as the process, that is when the process ends, however it ends (a SIGKILLed test binary
/// runs no exit hook). Only Linux has it; elsewhere the exit hook is all there is.
#[cfg(target_os = "linux")]
fn kill_with_parent_thread(cmd: &mut Command) {
    use std::os::unix::process::CommandExt;
    let parent = std::process::id();
    // SAFETY: the closure runs in the forked child before exec and only makes
    // async-signal-safe calls (prctl, getppid, _exit); it allocates nothing.
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // The parent may have died between fork and prctl: then nobody would kill us.
            if u32::try_from(libc::getppid()).ok() != Some(parent) {
                libc::_exit(1);
            }
            Ok(())
        });
    }
}

#[cfg(not(target_os = "linux"))]
fn kill_with_parent_thread(_cmd: &mut Command) {}

/// True once the API server's `/readyz` says `ok`.
async fn apiserver_ready(client: &kube::Client) -> bool {
    match http::Request::get("/readyz").body(Vec::new()) {
        Ok(req) => client.request_text(req).await.is_ok_and(|b| b == "ok"),
        Err(_) => false,
    }
}

/// Distinct free loopback ports: each is bound (port 0) before any is released, so
/// they differ from each other; someone else may still take one before the component
/// binds it, which `start` retries.
fn free_ports<const N: usize>() -> Result<[u16; N], Error> {
    let mut listeners = Vec::with_capacity(N);
    let mut ports = [0; N];
    for port in &mut ports {
        let l = TcpListener::bind((HOST, 0)).map_err(Error::io("binding a free loopback port"))?;
        *port = l
            .local_addr()
            .map_err(Error::io("reading a bound port"))?
            .port();
        listeners.push(l);
    }
    Ok(ports)
}

/// A bearer token nobody else on the machine can guess (the API server listens on
/// loopback, which every local user reaches). std's `RandomState` is seeded from the OS.
fn random_token() -> String {
    use std::hash::{BuildHasher, Hasher};
    (0..4)
        .map(|_| {
            let mut h = std::collections::hash_map::RandomState::new().build_hasher();
            h.write_u32(std::process::id());
            format!("{:016x}", h.finish())
        })
        .collect()
}

fn write_kubeconfig(path: &Path, server: &str, ca: &Path, token: &str) -> Result<(), Error> {
    let text = format!(
        "apiVersion: v1
kind: Config
clusters:
- name: kube-codegen-envtest
  cluster:
    server: {server}
    certificate-authority: {ca}
users:
- name: kube-codegen-envtest-admin
  user:
    token: {token}
contexts:
- name: kube-codegen-envtest
  context:
    cluster: kube-codegen-envtest
    user: kube-codegen-envtest-admin
    namespace: default
current-context: kube-codegen-envtest
",
        ca = ca.display()
    );
    pki::write_private(path, &text)
}

async fn load_config(path: &Path) -> Result<kube::Config, Error> {
    let err = |source| Error::Kubeconfig {
        path: path.to_owned(),
        source,
    };
    let kubeconfig = Kubeconfig::read_from(path).map_err(err)?;
    kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
        .await
        .map_err(err)
}

/// The last lines of a log (at most its last 64 KiB).
fn tail(path: &Path) -> String {
    let Ok(mut f) = fs::File::open(path) else {
        return format!("(cannot read {})", path.display());
    };
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    let _ = f.seek(SeekFrom::Start(len.saturating_sub(64 * 1024)));
    let mut bytes = Vec::new();
    let _ = f.read_to_end(&mut bytes);
    let text = String::from_utf8_lossy(&bytes);
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(LOG_TAIL_LINES)..].join("\n")
}
