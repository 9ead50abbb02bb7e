//! Helpers for the fault-injection tests (`tests/tests/faults.rs`): a control plane of
//! their own (they kill its apiserver), the sample-controller as a child process they can
//! SIGKILL and SIGTERM, ServiceAccount kubeconfigs, a TCP proxy that partitions a client
//! from the apiserver, etcd compaction, metrics scraping and the apiserver audit log.
//!
//! The control plane is a kube-codegen-envtest [`Environment`] of the fault test's own
//! (free ports, a fresh etcd, the apiserver audit log on), which the scenarios may
//! SIGKILL and restart. [`FaultEnv::up`] starts it; dropping the `FaultEnv` stops it, also
//! when a test panics. The suite's own files (audit log, controller logs, load figures,
//! and on failure the control plane's logs) go to [`DIR`].

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use k8s_openapi::api::authentication::v1::{TokenRequest, TokenRequestSpec};
use k8s_openapi::api::core::v1::{Namespace, ServiceAccount};
use k8s_openapi::api::rbac::v1::{ClusterRoleBinding, RoleBinding};
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::{Client, Config};
use kube_codegen_envtest::Environment;
use serde::Deserialize;
use serde_json::json;

use crate::{MANAGER, repo_root};

/// The fault suite's files: audit policy and log, `controller-<name>.log`, `load-<N>.txt`,
/// and after a failure the control plane's `<component>.log` (its own directory is removed
/// with it).
pub const DIR: &str = "/tmp/kube-codegen-faults";
/// How long a restarted apiserver may take to be ready again.
const APISERVER_START_TIMEOUT: Duration = Duration::from_secs(90);
/// Namespace of the controller's ServiceAccounts and Leases (sample-controller/config).
pub const CONTROLLER_NAMESPACE: &str = "sample-controller";

/// Writes (not reads) to Foos and Deployments, at Metadata level: enough to tell who wrote
/// what when, for the leader-failover test.
const AUDIT_POLICY: &str = r#"apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Metadata
  verbs: ["create", "update", "patch", "delete"]
  resources:
  - group: samplecontroller.k8s.io
  - group: apps
    resources: ["deployments"]
- level: None
"#;

/// The fault-test control plane. Stopped on drop.
pub struct FaultEnv {
    pub dir: PathBuf,
    /// The admin kubeconfig (in the environment's directory).
    pub kubeconfig: PathBuf,
    /// The apiserver's port (for a [`Proxy`] in front of it).
    pub apiserver_port: u16,
    /// etcd's client URL.
    pub etcd_url: String,
    /// Taken out while the apiserver restarts (a std lock must not be held across an
    /// await), put back after.
    env: Mutex<Option<Environment>>,
}

impl FaultEnv {
    /// Start a fresh control plane (empty etcd, kube-controller-manager for the
    /// controller's Deployments and garbage collection) with audit logging. Fails, never
    /// skips, when the binaries are missing.
    pub async fn up() -> Result<FaultEnv> {
        let dir = PathBuf::from(DIR);
        std::fs::create_dir_all(&dir)?;
        let policy = dir.join("audit-policy.yaml");
        std::fs::write(&policy, AUDIT_POLICY)?;
        let audit = dir.join("audit.log");
        let _ = std::fs::remove_file(&audit);
        let env = Environment::builder()
            .controller_manager(true)
            .apiserver_arg(format!("--audit-policy-file={}", policy.display()))
            .apiserver_arg(format!("--audit-log-path={}", audit.display()))
            .timeout(Duration::from_secs(90))
            .start()
            .await
            .context("starting the fault-test control plane (kube-codegen-envtest)")?;
        Ok(FaultEnv {
            dir,
            kubeconfig: env.kubeconfig_path().to_owned(),
            apiserver_port: env
                .config()
                .cluster_url
                .port_u16()
                .context("the apiserver URL has a port")?,
            etcd_url: env.etcd_url(),
            env: Mutex::new(Some(env)),
        })
    }

    fn take_env(&self) -> Result<Environment> {
        self.env
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
            .context("the control plane is gone (an earlier restart failed)")
    }

    fn put_env(&self, env: Environment) {
        *self.env.lock().unwrap_or_else(PoisonError::into_inner) = Some(env);
    }

    /// SIGKILL the apiserver (etcd and the controller manager keep running).
    pub fn kill_apiserver(&self) -> Result<()> {
        let mut env = self.take_env()?;
        let killed = env.kill_apiserver();
        self.put_env(env);
        Ok(killed?)
    }

    /// Start the apiserver again (same flags and port) and wait for /readyz.
    pub async fn start_apiserver(&self) -> Result<()> {
        let mut env = self.take_env()?;
        let started = env.start_apiserver(APISERVER_START_TIMEOUT).await;
        self.put_env(env);
        Ok(started?)
    }

    /// Copy the control plane's logs into [`DIR`], which outlives it: after a failure.
    pub fn keep_logs(&self) {
        let env = self.env.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(env) = env.as_ref() else { return };
        for entry in std::fs::read_dir(env.dir()).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.extension().is_some_and(|e| e == "log") {
                let _ = std::fs::copy(&path, self.dir.join(entry.file_name()));
            }
        }
    }

    /// The admin kubeconfig's client config.
    pub async fn config(&self) -> Result<Config> {
        let kc = kube::config::Kubeconfig::read_from(&self.kubeconfig)?;
        Ok(Config::from_custom_kubeconfig(kc, &Default::default()).await?)
    }

    /// An admin client.
    pub async fn client(&self) -> Result<Client> {
        Ok(Client::try_from(self.config().await?)?)
    }

    /// An admin client that connects through `port` (a [`Proxy`]) instead of directly.
    pub async fn client_via(&self, port: u16) -> Result<Client> {
        let mut config = self.config().await?;
        config.cluster_url = format!("https://127.0.0.1:{port}").parse()?;
        Ok(Client::try_from(config)?)
    }

    /// The apiserver's audit log, one JSON event per line.
    pub fn audit_events(&self) -> Result<Vec<AuditEvent>> {
        let text = std::fs::read_to_string(self.dir.join("audit.log"))?;
        Ok(text
            .lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .map(AuditEvent::from)
            .collect())
    }

    /// A kubeconfig for a ServiceAccount `name` in [`CONTROLLER_NAMESPACE`] bound to the
    /// controller's least-privilege RBAC: the roles generated from its markers
    /// (sample-controller/config/rbac/role.yaml) and their bindings (config/rbac.yaml).
    pub async fn service_account_kubeconfig(&self, name: &str) -> Result<PathBuf> {
        let client = self.client().await?;
        self.apply_controller_rbac(&client).await?;
        let pp = PatchParams::apply(MANAGER).force();
        let sas: Api<ServiceAccount> = Api::namespaced(client.clone(), CONTROLLER_NAMESPACE);
        let sa: ServiceAccount = serde_json::from_value(json!({
            "apiVersion": "v1", "kind": "ServiceAccount",
            "metadata": { "name": name, "namespace": CONTROLLER_NAMESPACE },
        }))?;
        sas.patch(name, &pp, &Patch::Apply(&sa)).await?;
        let crb: ClusterRoleBinding = serde_json::from_value(json!({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
            "metadata": { "name": format!("faults-{name}") },
            "roleRef": { "apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "sample-controller" },
            "subjects": [{ "kind": "ServiceAccount", "name": name, "namespace": CONTROLLER_NAMESPACE }],
        }))?;
        Api::<ClusterRoleBinding>::all(client.clone())
            .patch(&format!("faults-{name}"), &pp, &Patch::Apply(&crb))
            .await?;
        let rb: RoleBinding = serde_json::from_value(json!({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
            "metadata": { "name": format!("faults-{name}"), "namespace": CONTROLLER_NAMESPACE },
            "roleRef": { "apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "sample-controller-leader-election" },
            "subjects": [{ "kind": "ServiceAccount", "name": name, "namespace": CONTROLLER_NAMESPACE }],
        }))?;
        Api::<RoleBinding>::namespaced(client.clone(), CONTROLLER_NAMESPACE)
            .patch(&format!("faults-{name}"), &pp, &Patch::Apply(&rb))
            .await?;
        let req = TokenRequest {
            spec: Some(TokenRequestSpec {
                expiration_seconds: Some(7200),
                ..Default::default()
            }),
            ..Default::default()
        };
        let token = sas
            .create_token_request(name, &PostParams::default(), &req)
            .await?
            .status
            .context("token request has a status")?
            .token;
        let admin: serde_yaml::Value =
            serde_yaml::from_str(&std::fs::read_to_string(&self.kubeconfig)?)?;
        let cluster = admin["clusters"][0]["cluster"].clone();
        let kc = json!({
            "apiVersion": "v1", "kind": "Config",
            "clusters": [{"name": "faults", "cluster": serde_json::to_value(&cluster)?}],
            "users": [{"name": name, "user": {"token": token}}],
            "contexts": [{"name": name, "context": {"cluster": "faults", "user": name}}],
            "current-context": name,
        });
        let path = self.dir.join(format!("{name}.kubeconfig"));
        std::fs::write(&path, serde_yaml::to_string(&kc)?)?;
        Ok(path)
    }

    /// The controller's namespace, ClusterRole and leader-election Role, from the manifests.
    async fn apply_controller_rbac(&self, client: &Client) -> Result<()> {
        let config = repo_root().join("sample-controller/config");
        let text = std::fs::read_to_string(config.join("rbac/role.yaml"))?
            + "\n---\n"
            + &std::fs::read_to_string(config.join("rbac.yaml"))?;
        let ns: Namespace = serde_json::from_value(json!({
            "apiVersion": "v1", "kind": "Namespace", "metadata": { "name": CONTROLLER_NAMESPACE },
        }))?;
        Api::<Namespace>::all(client.clone())
            .patch(
                CONTROLLER_NAMESPACE,
                &PatchParams::apply(MANAGER).force(),
                &Patch::Apply(&ns),
            )
            .await?;
        // Parsed up front: the YAML parser is not Send, so it must not live across an await.
        let docs = serde_yaml::Deserializer::from_str(&text)
            .map(serde_yaml::Value::deserialize)
            .collect::<Result<Vec<_>, _>>()?;
        for value in docs {
            if value.is_null() {
                continue;
            }
            let obj: kube::api::DynamicObject = serde_yaml::from_value(value)?;
            let tm = obj
                .types
                .clone()
                .context("manifest has apiVersion and kind")?;
            let (group, version) = match tm.api_version.split_once('/') {
                Some((g, v)) => (g.to_owned(), v.to_owned()),
                None => (String::new(), tm.api_version.clone()),
            };
            let gvk = kube::api::GroupVersionKind::gvk(&group, &version, &tm.kind);
            let (ar, caps) = kube::discovery::pinned_kind(client, &gvk).await?;
            let name = obj.metadata.name.clone().context("named")?;
            let api: Api<kube::api::DynamicObject> =
                if caps.scope == kube::discovery::Scope::Namespaced {
                    let ns = obj.metadata.namespace.clone().context("namespaced")?;
                    Api::namespaced_with(client.clone(), &ns, &ar)
                } else {
                    Api::all_with(client.clone(), &ar)
                };
            api.patch(
                &name,
                &PatchParams::apply(MANAGER).force(),
                &Patch::Apply(&obj),
            )
            .await
            .with_context(|| format!("applying {} {name}", tm.kind))?;
        }
        Ok(())
    }
}

impl Drop for FaultEnv {
    fn drop(&mut self) {
        // The environment stops itself when dropped, also after a panic; keep its logs then.
        if std::thread::panicking() {
            self.keep_logs();
        }
    }
}

/// The parts of an audit event the tests look at.
#[derive(Clone, Debug)]
pub struct AuditEvent {
    pub verb: String,
    pub username: String,
    pub user_agent: String,
    pub resource: String,
    pub subresource: String,
    pub namespace: String,
    pub name: String,
    pub code: i64,
    /// RFC 3339 timestamps, kept as text (they sort correctly: same zone, fixed width).
    pub received: String,
    pub completed: String,
}

impl From<serde_json::Value> for AuditEvent {
    fn from(v: serde_json::Value) -> Self {
        let s = |p: &str| {
            v.pointer(p)
                .and_then(|x| x.as_str())
                .unwrap_or_default()
                .to_owned()
        };
        AuditEvent {
            verb: s("/verb"),
            username: s("/user/username"),
            user_agent: s("/userAgent"),
            resource: s("/objectRef/resource"),
            subresource: s("/objectRef/subresource"),
            namespace: s("/objectRef/namespace"),
            name: s("/objectRef/name"),
            code: v
                .pointer("/responseStatus/code")
                .and_then(|c| c.as_i64())
                .unwrap_or_default(),
            received: s("/requestReceivedTimestamp"),
            completed: s("/stageTimestamp"),
        }
    }
}

/// Parse an RFC 3339 timestamp from the audit log.
pub fn parse_time(t: &str) -> Result<k8s_openapi::jiff::Timestamp> {
    Ok(t.parse()?)
}

/// The sample-controller binary cargo built next to the test binary (hack/test.sh builds it).
pub fn controller_binary() -> PathBuf {
    crate::workspace_binary("sample-controller", "sample-controller")
}

/// A GET on a loopback port: (status code, body).
pub fn http_get(port: u16, path: &str) -> Option<(u16, String)> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(
        s,
        "GET {path} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n"
    )
    .ok()?;
    let mut out = String::new();
    s.read_to_string(&mut out).ok()?;
    let code = out.split_whitespace().nth(1)?.parse().ok()?;
    Some((
        code,
        out.split("\r\n\r\n").nth(1).unwrap_or_default().to_owned(),
    ))
}

/// Prometheus text: `name{labels}` -> value (labels exactly as rendered).
pub fn parse_metrics(text: &str) -> BTreeMap<String, f64> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .filter_map(|l| {
            let (series, value) = l.rsplit_once(' ')?;
            Some((series.trim().to_owned(), value.trim().parse().ok()?))
        })
        .collect()
}

/// A sample-controller process. Killed (SIGKILL) on drop if still running.
pub struct ControllerProcess {
    pub name: String,
    child: Child,
    pub metrics_port: u16,
    pub health_port: u16,
    pub log: PathBuf,
    exit: Option<ExitStatus>,
}

impl ControllerProcess {
    /// Start the controller with `kubeconfig` and extra flags; stderr goes to
    /// `<DIR>/controller-<name>.log`.
    pub fn start(name: &str, kubeconfig: &Path, extra: &[&str]) -> Result<ControllerProcess> {
        let (metrics_port, health_port) = (crate::free_port(), crate::free_port());
        let log = Path::new(DIR).join(format!("controller-{name}.log"));
        // tracing logs to stdout, panics go to stderr: both into the log file.
        let out = std::fs::File::create(&log)?;
        let err = out.try_clone()?;
        let child = Command::new(controller_binary())
            .arg("--kubeconfig")
            .arg(kubeconfig)
            .args([
                "--metrics-addr",
                &format!("127.0.0.1:{metrics_port}"),
                "--health-addr",
                &format!("127.0.0.1:{health_port}"),
                "--controllers",
                "foo",
            ])
            .args(extra)
            .env("RUST_LOG", "info,kube=warn")
            .env("NO_COLOR", "1")
            .env_remove("KUBECONFIG")
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .spawn()
            .context("starting sample-controller")?;
        Ok(ControllerProcess {
            name: name.to_owned(),
            child,
            metrics_port,
            health_port,
            log,
            exit: None,
        })
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn logs(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Whether the process is still running.
    pub fn is_running(&mut self) -> bool {
        if self.exit.is_some() {
            return false;
        }
        match self.child.try_wait() {
            Ok(Some(status)) => {
                self.exit = Some(status);
                false
            }
            Ok(None) => true,
            Err(_) => false,
        }
    }

    /// Wait until `/readyz` answers 200 (caches synced, and leading if electing).
    pub async fn wait_ready(&mut self, timeout: Duration) -> Result<()> {
        let start = Instant::now();
        loop {
            if !self.is_running() {
                bail!(
                    "controller {} exited ({:?}) before ready:\n{}",
                    self.name,
                    self.exit,
                    self.logs()
                );
            }
            if http_get(self.health_port, "/readyz").map(|r| r.0) == Some(200) {
                return Ok(());
            }
            if start.elapsed() > timeout {
                bail!("controller {} not ready after {timeout:?}", self.name);
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// Scrape `/metrics`.
    pub fn metrics(&self) -> Result<BTreeMap<String, f64>> {
        let (code, body) = http_get(self.metrics_port, "/metrics").context("scraping /metrics")?;
        if code != 200 {
            bail!("/metrics answered {code}");
        }
        Ok(parse_metrics(&body))
    }

    /// Peak resident set size (VmHWM) in KiB, while running.
    pub fn peak_rss_kib(&self) -> Option<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid())).ok()?;
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
    }

    fn signal(&self, sig: &str) -> Result<()> {
        let status = Command::new("kill")
            .arg(format!("-{sig}"))
            .arg(self.pid().to_string())
            .status()?;
        if !status.success() {
            bail!("kill -{sig} {} failed", self.pid());
        }
        Ok(())
    }

    /// SIGKILL, and reap.
    pub fn sigkill(&mut self) -> Result<()> {
        if self.is_running() {
            self.signal("KILL")?;
        }
        self.exit = Some(self.child.wait()?);
        Ok(())
    }

    /// SIGTERM (no wait).
    pub fn sigterm(&self) -> Result<()> {
        self.signal("TERM")
    }

    /// Wait for the process to exit, at most `timeout`.
    pub async fn wait_exit(&mut self, timeout: Duration) -> Result<ExitStatus> {
        let start = Instant::now();
        loop {
            if !self.is_running() {
                return self.exit.context("exited");
            }
            if start.elapsed() > timeout {
                bail!(
                    "controller {} still running {timeout:?} later:\n{}",
                    self.name,
                    self.logs()
                );
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// The log has no panic and the process is still up.
    pub fn assert_healthy(&mut self) {
        let logs = self.logs();
        assert!(
            !logs.contains("panicked"),
            "controller {} panicked:\n{logs}",
            self.name
        );
        assert!(
            self.is_running(),
            "controller {} exited ({:?}):\n{logs}",
            self.name,
            self.exit
        );
    }
}

impl Drop for ControllerProcess {
    fn drop(&mut self) {
        if self.exit.is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// A TCP forwarder from a loopback port to the apiserver that can cut every connection and
/// refuse new ones ([`partition`](Proxy::partition)) until [`heal`](Proxy::heal): a
/// network partition between one client and the apiserver, nobody else affected.
pub struct Proxy {
    pub port: u16,
    partitioned: Arc<AtomicBool>,
    conns: Arc<Mutex<Vec<TcpStream>>>,
    stop: Arc<AtomicBool>,
}

impl Proxy {
    pub fn start(target_port: u16) -> Result<Proxy> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let port = listener.local_addr()?.port();
        let partitioned = Arc::new(AtomicBool::new(false));
        let stop = Arc::new(AtomicBool::new(false));
        let conns: Arc<Mutex<Vec<TcpStream>>> = Arc::default();
        let (p, s, c) = (partitioned.clone(), stop.clone(), conns.clone());
        std::thread::spawn(move || {
            for incoming in listener.incoming() {
                if s.load(Ordering::SeqCst) {
                    return;
                }
                let Ok(client) = incoming else { continue };
                if p.load(Ordering::SeqCst) {
                    let _ = client.shutdown(Shutdown::Both);
                    continue;
                }
                let Ok(server) = TcpStream::connect(("127.0.0.1", target_port)) else {
                    let _ = client.shutdown(Shutdown::Both);
                    continue;
                };
                {
                    let mut conns = c.lock().unwrap();
                    conns.retain(|s| s.peer_addr().is_ok());
                    for s in [&client, &server] {
                        if let Ok(clone) = s.try_clone() {
                            conns.push(clone);
                        }
                    }
                }
                for (mut from, mut to) in [
                    (client.try_clone(), server.try_clone()),
                    (server.try_clone(), client.try_clone()),
                ]
                .into_iter()
                .filter_map(|(a, b)| Some((a.ok()?, b.ok()?)))
                {
                    std::thread::spawn(move || {
                        let _ = std::io::copy(&mut from, &mut to);
                        let _ = to.shutdown(Shutdown::Write);
                    });
                }
            }
        });
        Ok(Proxy {
            port,
            partitioned,
            conns,
            stop,
        })
    }

    /// Cut every open connection and refuse new ones.
    pub fn partition(&self) {
        self.partitioned.store(true, Ordering::SeqCst);
        for s in self.conns.lock().unwrap().drain(..) {
            let _ = s.shutdown(Shutdown::Both);
        }
    }

    /// Accept and forward connections again.
    pub fn heal(&self) {
        self.partitioned.store(false, Ordering::SeqCst);
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        self.partition();
        // Wake the accept loop so it sees `stop`.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

/// etcd's current revision (through its gRPC gateway at `etcd_url`; etcdctl is not built).
pub fn etcd_revision(etcd_url: &str) -> Result<i64> {
    let out = curl_etcd(etcd_url, "/v3/kv/range", r#"{"key":"AA=="}"#)?;
    let v: serde_json::Value = serde_json::from_str(&out)?;
    v.pointer("/header/revision")
        .and_then(|r| r.as_str())
        .context("revision in the range header")?
        .parse()
        .context("numeric revision")
}

/// Compact etcd's history up to `revision` (physically): watches from older resource
/// versions can no longer be served and fail with 410 Gone.
pub fn etcd_compact(etcd_url: &str, revision: i64) -> Result<()> {
    curl_etcd(
        etcd_url,
        "/v3/kv/compaction",
        &format!(r#"{{"revision":"{revision}","physical":true}}"#),
    )?;
    Ok(())
}

fn curl_etcd(etcd_url: &str, path: &str, body: &str) -> Result<String> {
    let out = Command::new("curl")
        .args(["-sf", "--max-time", "10", "-X", "POST"])
        .arg(format!("{etcd_url}{path}"))
        .args(["-d", body])
        .output()
        .context("curl")?;
    if !out.status.success() {
        bail!(
            "etcd {path}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Poll `check` every 250 ms until it returns Some, or fail after `timeout` with `what`.
pub async fn wait_for<T, F, Fut>(what: &str, timeout: Duration, mut check: F) -> Result<T>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<Option<T>>>,
{
    let start = Instant::now();
    let mut last = None;
    loop {
        match check().await {
            Ok(Some(v)) => return Ok(v),
            Ok(None) => {}
            Err(e) => last = Some(e),
        }
        if start.elapsed() > timeout {
            bail!("timed out after {timeout:?} waiting for {what}; last error: {last:?}");
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// An environment variable as a number, or `default`.
pub fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}
