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
use crate::detached::{self, DetachedEnvironment, Ports};
use crate::error::{Component, Error};
use crate::pki;

const HOST: Ipv4Addr = Ipv4Addr::LOCALHOST;
/// How many times a start is retried when another process took one of the ports between
/// our choosing it (bind port 0, close) and the component binding it.
const PORT_RETRIES: usize = 3;
const LOG_TAIL_LINES: usize = 25;
/// The files of an environment's directory that are not the PKI's.
pub(crate) const KUBECONFIG: &str = "kubeconfig";
pub(crate) const TOKENS_CSV: &str = "tokens.csv";

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
    /// kube-apiserver's `--feature-gates`, by name (one flag, sorted).
    feature_gates: std::collections::BTreeMap<String, bool>,
    controller_manager_args: Vec<String>,
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
            feature_gates: std::collections::BTreeMap::new(),
            controller_manager_args: Vec::new(),
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

    /// Turns a kube-apiserver feature gate on or off, e.g.
    /// `.feature_gate("ShardedListAndWatch", true)` for sharded list and watch (alpha in
    /// Kubernetes 1.36). The gates go to kube-apiserver as one `--feature-gates` flag, before
    /// the [`apiserver_arg`](Self::apiserver_arg)s; setting a gate twice keeps the last
    /// value. A gate kube-apiserver does not know makes [`start`](Self::start) fail with its
    /// log, which names it.
    pub fn feature_gate(mut self, name: impl Into<String>, enabled: bool) -> Self {
        self.feature_gates.insert(name.into(), enabled);
        self
    }

    /// An extra kube-controller-manager flag (with [`controller_manager`](Self::controller_manager));
    /// later flags win.
    pub fn controller_manager_arg(mut self, arg: impl Into<String>) -> Self {
        self.controller_manager_args.push(arg.into());
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
        let (binaries, kcm, crds) = self.prepare()?;
        let mut attempt = 0;
        let started = loop {
            attempt += 1;
            match self
                .start_once(&binaries, kcm.as_deref(), &crds, &Home::Temp)
                .await
            {
                Err(Error::Startup { ref tail, .. })
                    if attempt < PORT_RETRIES && tail.contains("address already in use") => {}
                other => break other?,
            }
        };
        Ok(Environment {
            client: started.client,
            config: started.config,
            kubeconfig_path: started.kubeconfig_path,
            apiserver_port: started.ports.apiserver,
            etcd_port: started.ports.etcd,
            binaries,
            dir: started.dir,
            running: Mutex::new(started.running),
        })
    }

    /// Starts a control plane that outlives this process: as [`start`](Self::start), but
    /// in `dir` (created if missing; certificates, kubeconfig, `<component>.log`,
    /// `<component>.pid`, etcd data, and `state.json` with each process's command line)
    /// on the given fixed `ports`, each process in a session of its own so that neither
    /// the end of this process nor a Ctrl-C in its terminal stops it. The returned handle
    /// (as [`DetachedEnvironment::at`] of `dir`, from any process later) stops it.
    ///
    /// If `dir` already holds a control plane that runs, is ready and was started with
    /// the same command lines (binaries, ports, controller manager, extra flags), it is
    /// kept, data and all, and only the CRDs are applied (server-side apply, so they are
    /// created or updated). Otherwise whatever still runs there (a partial, unhealthy or
    /// differently started control plane) is stopped and a new one starts from an empty
    /// etcd.
    ///
    /// Blocks the calling thread briefly while stopping what ran before, if anything did.
    ///
    /// # Errors
    ///
    /// As [`start`](Self::start), and [`Error::PortInUse`] when one of `ports` is taken by
    /// something this directory did not start. A failed start stops what it started and
    /// keeps the logs in `dir` (the error names the log and quotes its tail).
    pub async fn start_detached(
        self,
        dir: impl Into<PathBuf>,
        ports: Ports,
    ) -> Result<DetachedEnvironment, Error> {
        let (binaries, kcm, crds) = self.prepare()?;
        let handle = DetachedEnvironment::at(dir);
        let dir = handle.dir().to_owned();
        fs::create_dir_all(&dir).map_err(Error::io(format!("creating {}", dir.display())))?;
        let wanted = self.command_lines(&binaries, kcm.as_deref(), &dir, ports);
        let same = handle.state().ok().flatten().is_some_and(|s| s == wanted);
        if same && handle.is_up().await {
            if !crds.is_empty() {
                let client = handle.client().await?;
                crds::install(
                    &client,
                    &crds,
                    Instant::now() + self.timeout,
                    crds::Existing::Apply,
                )
                .await?;
            }
            return Ok(handle);
        }
        // Partial, unhealthy or started differently: from scratch.
        handle.stop_processes()?;
        for port in wanted.ports_used() {
            if detached::port_in_use(port) {
                return Err(Error::PortInUse { port });
            }
        }
        // Every start from the down state is an empty cluster with fresh logs.
        detached::remove_run_files(&dir)?;
        let started = self
            .start_once(
                &binaries,
                kcm.as_deref(),
                &crds,
                &Home::Detached { dir: &dir, ports },
            )
            .await?;
        started.running.release();
        Ok(handle)
    }

    /// The binaries, the controller manager's executable if asked for, and the CRDs,
    /// checked before anything starts.
    fn prepare(&self) -> Result<(Binaries, Option<PathBuf>, Vec<CustomResourceDefinition>), Error> {
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
        Ok((binaries, kcm, crds))
    }

    /// The one place that knows each process's command line: a first start and a restart
    /// (of a detached control plane from another process, too) run the same server. It
    /// depends only on its inputs, so a detached start can tell whether what runs in its
    /// directory is what it would start.
    fn command_lines(
        &self,
        binaries: &Binaries,
        kcm: Option<&Path>,
        root: &Path,
        ports: Ports,
    ) -> CommandLines {
        let pki = pki::paths(root);
        let etcd_url = format!("http://{HOST}:{}", ports.etcd);
        let peer_url = format!("http://{HOST}:{}", ports.etcd_peer);
        let etcd = CommandLine {
            component: Component::Etcd,
            program: binaries.etcd().to_owned(),
            args: vec![
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
        };
        let mut apiserver_args = vec![
            format!("--etcd-servers={etcd_url}"),
            format!("--bind-address={HOST}"),
            format!("--advertise-address={HOST}"),
            format!("--secure-port={}", ports.apiserver),
            // The reconciler publishing the apiserver's address as the endpoints of the
            // `kubernetes` Service refuses a loopback address and the server exits.
            "--endpoint-reconciler-type=none".into(),
            format!("--cert-dir={}", root.join("apiserver-certs").display()),
            format!("--tls-cert-file={}", pki.apiserver_crt.display()),
            format!("--tls-private-key-file={}", pki.apiserver_key.display()),
            format!("--client-ca-file={}", pki.ca_crt.display()),
            format!("--token-auth-file={}", root.join(TOKENS_CSV).display()),
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
        if !self.feature_gates.is_empty() {
            let gates: Vec<String> = self
                .feature_gates
                .iter()
                .map(|(name, on)| format!("{name}={on}"))
                .collect();
            apiserver_args.push(format!("--feature-gates={}", gates.join(",")));
        }
        apiserver_args.extend(self.apiserver_args.iter().cloned());
        let apiserver = CommandLine {
            component: Component::KubeApiserver,
            program: binaries.kube_apiserver().to_owned(),
            args: apiserver_args,
        };
        let controller_manager = kcm.map(|kcm| {
            let mut args = vec![
                format!("--kubeconfig={}", root.join(KUBECONFIG).display()),
                format!("--bind-address={HOST}"),
                format!("--secure-port={}", ports.controller_manager),
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
            ];
            args.extend(self.controller_manager_args.iter().cloned());
            CommandLine {
                component: Component::KubeControllerManager,
                program: kcm.to_owned(),
                args,
            }
        });
        CommandLines {
            binaries: binaries.dir().to_owned(),
            ports,
            etcd,
            apiserver,
            controller_manager,
        }
    }

    async fn start_once(
        &self,
        binaries: &Binaries,
        kcm: Option<&Path>,
        crds: &[CustomResourceDefinition],
        home: &Home<'_>,
    ) -> Result<Started, Error> {
        let deadline = Instant::now() + self.timeout;
        let (root, ports, temp) = match home {
            Home::Temp => {
                let dir = tempfile::Builder::new()
                    .prefix("kube-codegen-envtest-")
                    .tempdir()
                    .map_err(Error::io("creating the environment's temp dir"))?;
                let [etcd, etcd_peer, apiserver, controller_manager] = free_ports()?;
                let ports = Ports {
                    etcd,
                    etcd_peer,
                    apiserver,
                    controller_manager,
                };
                (dir.path().to_owned(), ports, Some(dir))
            }
            Home::Detached { dir, ports } => ((*dir).to_owned(), *ports, None),
        };
        let detached = matches!(home, Home::Detached { .. });
        let mut running = Running {
            processes: Vec::new(),
            dir: temp,
            die_with_thread: self.die_with_thread,
            pid_dir: detached.then(|| root.clone()),
        };
        let lines = self.command_lines(binaries, kcm, &root, ports);
        if detached {
            // Before any process starts: `down` and `status` from another process read it,
            // also while this start is still under way or after it was interrupted.
            detached::write_state(&root, &lines)?;
        }
        let pki = pki::write(&root)?;
        let token = random_token();
        // token,user,uid,"groups": system:masters bypasses RBAC entirely.
        pki::write_private(
            &root.join(TOKENS_CSV),
            &format!(
                "{token},kube-codegen-envtest-admin,kube-codegen-envtest-admin,\"system:masters\"\n"
            ),
        )?;
        let server = format!("https://{HOST}:{}", ports.apiserver);
        let kubeconfig_path = root.join(KUBECONFIG);
        write_kubeconfig(&kubeconfig_path, &server, &pki.ca_crt, &token)?;

        running.spawn(&lines.etcd, &root)?;
        // The apiserver retries etcd itself, but a dead etcd (its port taken) would then
        // only show as an apiserver timeout: wait for etcd's port first.
        let etcd_port = ports.etcd;
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

        running.spawn(&lines.apiserver, &root)?;
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
        crds::install(&client, crds, deadline, crds::Existing::Fail).await?;

        if let Some(kcm) = &lines.controller_manager {
            running.spawn(kcm, &root)?;
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

        Ok(Started {
            client,
            config,
            kubeconfig_path,
            ports,
            dir: root,
            running,
        })
    }
}

/// Where a start puts its files and which ports it takes.
enum Home<'a> {
    /// A temporary directory of its own and free ports: an [`Environment`].
    Temp,
    /// A given directory and fixed ports, the processes outliving the caller: a
    /// [`DetachedEnvironment`].
    Detached { dir: &'a Path, ports: Ports },
}

/// What a start hands to [`Environment`] or, released, leaves running detached.
struct Started {
    client: kube::Client,
    config: kube::Config,
    kubeconfig_path: PathBuf,
    ports: Ports,
    dir: PathBuf,
    running: Running,
}

/// How one process is started.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct CommandLine {
    #[serde(with = "component_name")]
    pub(crate) component: Component,
    pub(crate) program: PathBuf,
    pub(crate) args: Vec<String>,
}

/// Every process of one control plane, in start order; a detached one keeps them in its
/// `state.json`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct CommandLines {
    /// The binaries' directory (its `kubectl` is the one `env` puts on PATH).
    pub(crate) binaries: PathBuf,
    pub(crate) ports: Ports,
    pub(crate) etcd: CommandLine,
    pub(crate) apiserver: CommandLine,
    pub(crate) controller_manager: Option<CommandLine>,
}

impl CommandLines {
    /// In start order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &CommandLine> {
        [&self.etcd, &self.apiserver]
            .into_iter()
            .chain(self.controller_manager.as_ref())
    }

    /// The ports these processes listen on (the controller manager's only if it runs).
    pub(crate) fn ports_used(&self) -> Vec<u16> {
        let p = self.ports;
        let mut used = vec![p.etcd, p.etcd_peer, p.apiserver];
        if self.controller_manager.is_some() {
            used.push(p.controller_manager);
        }
        used
    }
}

/// [`Component`] in `state.json` as its executable's name.
mod component_name {
    use super::Component;

    pub(super) fn serialize<S: serde::Serializer>(c: &Component, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(c.binary_name())
    }

    pub(super) fn deserialize<'de, D: serde::Deserializer<'de>>(
        d: D,
    ) -> Result<Component, D::Error> {
        let name = <String as serde::Deserialize>::deserialize(d)?;
        Component::ALL
            .into_iter()
            .find(|c| c.binary_name() == name)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown component {name:?}")))
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
            hint: crate::binaries::hint(),
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
            let session = if die_with_thread {
                Session::DieWithThread
            } else {
                Session::Inherit
            };
            p.child = start_process(&p.command_line, &self.dir, &p.log, session)?;
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
    /// Set for a detached start: each process gets a session of its own and a
    /// `<component>.pid` file here as soon as it is started (so that `down` from another
    /// process finds it even if this start is interrupted).
    pid_dir: Option<PathBuf>,
}

#[derive(Debug)]
struct Process {
    component: Component,
    child: Child,
    log: PathBuf,
    /// How it was started, to start it again the same way (restart_apiserver).
    command_line: CommandLine,
}

impl Running {
    fn spawn(&mut self, command_line: &CommandLine, dir: &Path) -> Result<(), Error> {
        let component = command_line.component;
        let log = dir.join(format!("{component}.log"));
        let session = if self.pid_dir.is_some() {
            Session::New
        } else if self.die_with_thread {
            Session::DieWithThread
        } else {
            Session::Inherit
        };
        let child = start_process(command_line, dir, &log, session)?;
        let pid = child.id();
        self.processes.push(Process {
            component,
            child,
            log,
            command_line: command_line.clone(),
        });
        if let Some(pid_dir) = &self.pid_dir {
            detached::write_pid(pid_dir, component, pid)?;
        }
        Ok(())
    }

    fn process(&mut self, component: Component) -> Option<&mut Process> {
        self.processes.iter_mut().find(|p| p.component == component)
    }

    /// Leaves the processes running: a detached start that succeeded. Their `Child`
    /// handles are dropped without a wait; whoever stops them later reaps them if they are
    /// its children (see `detached`), and once this process exits, init does.
    fn release(mut self) {
        self.processes.clear();
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
            } else if let Some(pid_dir) = &self.pid_dir {
                detached::remove_pid(pid_dir, p.component);
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

/// Which session a started process belongs to, and so what ends it besides a kill.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Session {
    /// The caller's: a Ctrl-C in its terminal reaches the process too.
    Inherit,
    /// The caller's, and (Linux only) the kernel SIGKILLs the process when the calling
    /// thread ends.
    DieWithThread,
    /// A new session (setsid): it outlives the caller and its terminal.
    New,
}

/// Starts a process with its output appended to `log` (a restart keeps the earlier log).
pub(crate) fn start_process(
    command_line: &CommandLine,
    dir: &Path,
    log: &Path,
    session: Session,
) -> Result<Child, Error> {
    let program = &command_line.program;
    let file = fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .map_err(Error::io(format!("opening {}", log.display())))?;
    let file2 = file
        .try_clone()
        .map_err(Error::io(format!("opening {}", log.display())))?;
    let mut cmd = Command::new(program);
    cmd.args(&command_line.args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(file)
        .stderr(file2);
    match session {
        Session::Inherit => {}
        Session::DieWithThread => kill_with_parent_thread(&mut cmd),
        Session::New => new_session(&mut cmd),
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

/// Puts the child in a session (and process group) of its own, as `setsid` does, so a
/// Ctrl-C or hang-up of the starting terminal never reaches it.
fn new_session(cmd: &mut Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: runs in the forked child before exec; setsid is async-signal-safe and
    // the closure allocates nothing.
    unsafe {
        cmd.pre_exec(|| {
            if libc::setsid() == -1 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// True once the API server's `/readyz` says `ok`.
pub(crate) async fn apiserver_ready(client: &kube::Client) -> bool {
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

pub(crate) async fn load_config(path: &Path) -> Result<kube::Config, Error> {
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
pub(crate) fn tail(path: &Path) -> String {
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
