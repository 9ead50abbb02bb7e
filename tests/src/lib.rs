//! Helpers for the end-to-end tests: the test binary's control plane, kubectl, CRD
//! installation, per-test namespaces and a fake kubelet.
//!
//! # The control plane: one per test binary, from kube-codegen-envtest
//!
//! Every e2e test binary (`tests/tests/*.rs`) gets a control plane of its own from the
//! envtest crate: etcd, kube-apiserver and kube-controller-manager on free loopback ports,
//! started by the binary's first test that calls [`env()`], [`client`], [`kubeconfig`] or
//! [`kubectl`], shared by all its tests and stopped when the test binary exits (also after
//! a failed or panicked test; see [`kube_codegen_envtest::SharedEnvironment`]). The
//! pattern for a test, in a new test file as in the old ones:
//!
//! ```ignore
//! use kube_codegen_tests::*;
//!
//! #[tokio::test]
//! async fn my_kind_round_trips() {
//!     let client = client().await; // starts the binary's control plane if need be
//!     apply_crd(&client, &parse_crd(MY_CRD_YAML)).await.unwrap(); // CRDs: per test
//!     let ns = TestNamespace::new(&client, "my-kind").await; // objects: per namespace
//!     // ... kubectl_ok(&["get", "mykinds", "-n", &ns.name]) runs the pinned kubectl ...
//! }
//! ```
//!
//! Tests of one binary run in parallel on that control plane, so each works in its own
//! namespace and names cluster-scoped objects uniquely. A test that must own the API
//! server (kill or restart it, change its flags) starts an [`Environment`] of its own, as
//! `tests/faults.rs` does. The control plane's directory (component logs) is removed when
//! the binary exits; a test that needs the logs after a failure copies them first, as
//! [`faults::FaultEnv::keep_logs`] does.
//!
//! Tests fail, never skip, when the pinned binaries are missing (the error says how to
//! build them; `hack/test.sh` does it first). The e2e crate is not a default workspace
//! member, so plain `cargo test` does not run it.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use k8s_openapi::api::core::v1::{Namespace, Node, Pod};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::Client;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube_codegen_envtest::{Environment, SharedEnvironment};
use serde_json::json;

pub mod conversion;
pub mod faults;

/// Field manager for everything the tests apply.
pub const MANAGER: &str = "kube-codegen-e2e";

/// This test binary's control plane. With kube-controller-manager, as the tests expect a
/// cluster's built-in controllers: garbage collection of owned objects, Deployment →
/// ReplicaSet → Pod, ServiceAccount tokens, namespace deletion. The sample controller's
/// CRDs are installed from the start (tests still apply the CRDs they use, [`apply_crd`]):
/// the controller manager's garbage collector knows only the kinds that exist when it
/// starts until its next discovery, 30 s later, and the sample controller's tests wait for
/// a Foo's Deployment to be collected.
static ENV: SharedEnvironment = SharedEnvironment::new(|| {
    let mut builder = Environment::builder().controller_manager(true);
    for crd in sample_controller_crds() {
        builder = builder.crd(crd);
    }
    builder
});

/// sample-controller/config/crd, with a webhook conversion pointed at this process's
/// webhook (see [`conversion`]) instead of the in-cluster Service the test cluster lacks.
fn sample_controller_crds() -> Vec<CustomResourceDefinition> {
    let dir = repo_root().join("sample-controller/config/crd");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .collect();
    files.sort();
    files
        .iter()
        .map(|f| {
            let crd = parse_crd(&std::fs::read_to_string(f).expect("CRD file"));
            if conversion::uses_webhook(&crd) {
                conversion::pointed_at_test_webhook(&crd)
            } else {
                crd
            }
        })
        .collect()
}

/// A deterministic generator (xorshift) for the differential tests' objects and rules, so
/// a failure reproduces: the same seed gives the same corpus on every run.
pub struct Rng(pub u64);

impl Rng {
    /// The next 64 bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    /// A number below `n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }
    /// True `percent` times in a hundred.
    pub fn chance(&mut self, percent: u64) -> bool {
        self.next_u64() % 100 < percent
    }
    /// One of `xs`.
    pub fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len())]
    }
    /// One of `xs`, by value.
    pub fn choose<T: Copy>(&mut self, xs: &[T]) -> T {
        *self.pick(xs)
    }
}

/// Sends `body` as JSON (`POST` or `PUT`, as `method` says) to `path` and returns the
/// answer's status and body, `Null` when the body is not JSON: the raw answer, whose Status
/// causes the differential tests compare with ours. `Err` when no answer came.
pub async fn send_json(
    client: &Client,
    method: http::Method,
    path: &str,
    body: &serde_json::Value,
) -> Result<(http::StatusCode, serde_json::Value), kube::Error> {
    use http_body_util::BodyExt;
    let req = http::Request::builder()
        .method(method)
        .uri(path)
        .header("content-type", "application/json")
        .body(kube::client::Body::from(
            serde_json::to_vec(body).expect("JSON values serialize"),
        ))
        .expect("a valid request");
    let res = client.send(req).await?;
    let status = res.status();
    let bytes = res
        .into_body()
        .collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default();
    Ok((
        status,
        serde_json::from_slice(&bytes).unwrap_or(serde_json::Value::Null),
    ))
}

/// The test binary's control plane, started on first use. Panics (the test fails, never
/// skips) when it cannot start, with the envtest crate's reason: missing binaries come
/// with the command that builds them.
pub fn env() -> &'static Environment {
    static REPORTED: std::sync::Once = std::sync::Once::new();
    let asked = Instant::now();
    let env = ENV
        .get()
        .unwrap_or_else(|e| panic!("e2e control plane (kube-codegen-envtest): {e}"));
    // Once per test binary, in the test output (shown with --nocapture or on failure).
    REPORTED.call_once(|| {
        eprintln!(
            "e2e: control plane {} ready after {:.1?} (logs in {})",
            env.apiserver_url(),
            asked.elapsed(),
            env.dir().display()
        );
    });
    env
}

/// The kubeconfig of the test binary's control plane (admin), for subprocesses.
pub fn kubeconfig() -> PathBuf {
    env().kubeconfig_path().to_owned()
}

/// The workspace root (for sample-api/, tests/fixtures/, ...).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent")
        .to_owned()
}

/// A binary of the workspace that cargo built next to the test binary (`cargo test
/// --workspace`, which hack/test.sh runs, builds them); `package` names what builds it.
pub fn workspace_binary(name: &str, package: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("current exe");
    let dir = exe.parent().and_then(|p| p.parent()).expect("target/debug");
    let bin = dir.join(name);
    assert!(
        bin.exists(),
        "{} missing: run `cargo build -p {package}` (hack/test.sh does)",
        bin.display()
    );
    bin
}

/// A free loopback port.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// A client for the test binary's control plane, as the admin user; its connections
/// belong to the calling test's runtime.
pub async fn client() -> Client {
    // The start blocks this thread; a multi-threaded test runtime must be told.
    let env = match tokio::runtime::Handle::try_current().map(|h| h.runtime_flavor()) {
        Ok(tokio::runtime::RuntimeFlavor::MultiThread) => tokio::task::block_in_place(env),
        _ => env(),
    };
    env.new_client().expect("client")
}

/// Output of a kubectl run.
#[derive(Debug)]
pub struct KubectlOutput {
    pub success: bool,
    pub stdout: String,
    pub stderr: String,
}

/// Run the pinned kubectl (next to the control-plane binaries) against the test binary's
/// control plane.
pub fn kubectl(args: &[&str]) -> KubectlOutput {
    kubectl_stdin(args, None)
}

pub fn kubectl_stdin(args: &[&str], stdin: Option<&str>) -> KubectlOutput {
    use std::io::Write;
    let mut cmd = env()
        .kubectl()
        .unwrap_or_else(|e| panic!("kubectl for the e2e control plane: {e}"));
    cmd.args(args);
    cmd.stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = cmd.spawn().expect("kubectl runs");
    if let Some(input) = stdin {
        child
            .stdin
            .take()
            .expect("piped")
            .write_all(input.as_bytes())
            .expect("write stdin");
    }
    drop(child.stdin.take());
    let out = child.wait_with_output().expect("kubectl runs");
    KubectlOutput {
        success: out.status.success(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// kubectl that must succeed; returns stdout.
pub fn kubectl_ok(args: &[&str]) -> String {
    let out = kubectl(args);
    assert!(
        out.success,
        "kubectl {args:?} failed:\n{}{}",
        out.stdout, out.stderr
    );
    out.stdout
}

/// Poll `check` until it returns Some, or fail after `timeout`.
pub async fn eventually<T, F, Fut>(what: &str, timeout: Duration, mut check: F) -> Result<T>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<Option<T>>>,
{
    let start = Instant::now();
    let mut last_err = None;
    loop {
        match check().await {
            Ok(Some(v)) => return Ok(v),
            Ok(None) => {}
            Err(e) => last_err = Some(e),
        }
        if start.elapsed() > timeout {
            bail!("timed out after {timeout:?} waiting for {what}; last error: {last_err:?}");
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Whether a request of the test's own client failed for a reason that says nothing about
/// the code under test: the API server overloaded or briefly unavailable (429, 500, 503,
/// 504: e2e suites run several control planes and controllers on two cores) or the
/// connection dropped or timed out.
pub fn is_transient(e: &kube::Error) -> bool {
    match e {
        kube::Error::Api(s) => matches!(s.code, 429 | 500 | 503 | 504),
        kube::Error::HyperError(_) | kube::Error::Service(_) => true,
        _ => false,
    }
}

/// Runs the test client's own request `f`, again after a transient failure
/// ([`is_transient`]), up to 5 attempts with a growing pause; any other error, or the fifth
/// transient one, is returned.
///
/// # Errors
///
/// The request's error.
pub async fn retry_transient<T, F, Fut>(mut f: F) -> std::result::Result<T, kube::Error>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = std::result::Result<T, kube::Error>>,
{
    let mut attempt = 0u32;
    loop {
        attempt += 1;
        match f().await {
            Err(e) if attempt < 5 && is_transient(&e) => {
                eprintln!("transient error (attempt {attempt}), retrying: {e}");
                tokio::time::sleep(Duration::from_millis(200 << attempt)).await;
            }
            r => return r,
        }
    }
}

/// Conditions of a CRD, as (type, status) pairs.
pub fn crd_conditions(crd: &CustomResourceDefinition) -> Vec<(String, String)> {
    crd.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .map(|cs| {
            cs.iter()
                .map(|c| (c.type_.clone(), c.status.clone()))
                .collect()
        })
        .unwrap_or_default()
}

/// Server-side apply a CRD with the Rust client and wait until it is Established.
pub async fn apply_crd(
    client: &Client,
    crd: &CustomResourceDefinition,
) -> Result<CustomResourceDefinition> {
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    let name = crd.metadata.name.clone().context("CRD has a name")?;
    // A kind that converts through a webhook gets this process's (see `conversion`).
    let pointed;
    let crd = if conversion::uses_webhook(crd) {
        conversion::repoint_installed(client, crd).await?;
        pointed = conversion::pointed_at_test_webhook(crd);
        &pointed
    } else {
        crd
    };
    api.patch(
        &name,
        &PatchParams::apply(MANAGER).force(),
        &Patch::Apply(crd),
    )
    .await
    .with_context(|| format!("applying {name}"))?;
    wait_established(client, &name).await
}

/// Wait until a CRD reports Established=True, and return it.
pub async fn wait_established(client: &Client, name: &str) -> Result<CustomResourceDefinition> {
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    eventually(
        &format!("{name} Established"),
        Duration::from_secs(30),
        || async {
            let crd = api.get(name).await?;
            let established = crd_conditions(&crd)
                .iter()
                .any(|(t, s)| t == "Established" && s == "True");
            Ok(established.then_some(crd))
        },
    )
    .await
}

/// Whether a generated file is one of the `crd` generator's (not the RBAC, webhook or
/// admission-policy manifests a crate also gets).
pub fn is_crd_file(f: &kube_codegen::GeneratedFile) -> bool {
    f.path.extension().is_some_and(|e| e == "yaml")
        && f.contents.contains("kind: CustomResourceDefinition")
}

/// Parse a generated CRD file.
pub fn parse_crd(yaml: &str) -> CustomResourceDefinition {
    serde_yaml::from_str(yaml).expect("generated CRD parses")
}

/// A namespace that is deleted when dropped (best effort, in the background).
pub struct TestNamespace {
    pub name: String,
    client: Client,
}

impl TestNamespace {
    pub async fn new(client: &Client, prefix: &str) -> TestNamespace {
        let api: Api<Namespace> = Api::all(client.clone());
        let ns: Namespace = serde_json::from_value(json!({
            "metadata": { "generateName": format!("{prefix}-"), "labels": { "kube-codegen-e2e": "true" } }
        }))
        .expect("namespace");
        let created = api
            .create(&PostParams::default(), &ns)
            .await
            .expect("create namespace");
        TestNamespace {
            name: created.metadata.name.expect("named"),
            client: client.clone(),
        }
    }
}

impl Drop for TestNamespace {
    fn drop(&mut self) {
        let client = self.client.clone();
        let name = self.name.clone();
        if let Ok(handle) = tokio::runtime::Handle::try_current() {
            handle.spawn(async move {
                let _ = Api::<Namespace>::all(client)
                    .delete(&name, &DeleteParams::default())
                    .await;
            });
        }
    }
}

/// Stands in for a kubelet, which the test control plane does not run: it registers a
/// Node and makes pods Running and Ready through the status subresource, which is all the
/// Deployment and ReplicaSet controllers look at.
pub struct FakeKubelet {
    client: Client,
    pub node_name: String,
}

impl FakeKubelet {
    pub async fn register(client: &Client, node_name: &str) -> Result<FakeKubelet> {
        let nodes: Api<Node> = Api::all(client.clone());
        let node: Node = serde_json::from_value(json!({
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": { "name": node_name, "labels": { "kubernetes.io/hostname": node_name } },
        }))?;
        nodes
            .patch(
                node_name,
                &PatchParams::apply(MANAGER).force(),
                &Patch::Apply(&node),
            )
            .await?;
        let now = k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
            k8s_openapi::jiff::Timestamp::now(),
        );
        let status = json!({
            "status": {
                "conditions": [{ "type": "Ready", "status": "True", "reason": "KubeletReady", "message": "fake kubelet", "lastHeartbeatTime": now, "lastTransitionTime": now }],
                "capacity": { "cpu": "8", "memory": "16Gi", "pods": "110" },
                "allocatable": { "cpu": "8", "memory": "16Gi", "pods": "110" }
            }
        });
        nodes
            .patch_status(node_name, &PatchParams::default(), &Patch::Merge(&status))
            .await?;
        Ok(FakeKubelet {
            client: client.clone(),
            node_name: node_name.to_owned(),
        })
    }

    /// Bind every pod matching `selector` in `namespace` to this node and mark it Ready.
    /// Returns how many pods it changed.
    pub async fn make_pods_ready(&self, namespace: &str, selector: &str) -> Result<usize> {
        let pods: Api<Pod> = Api::namespaced(self.client.clone(), namespace);
        let mut changed = 0;
        for pod in pods.list(&ListParams::default().labels(selector)).await? {
            let name = pod.metadata.name.clone().unwrap_or_default();
            if pod.metadata.deletion_timestamp.is_some() {
                continue;
            }
            let ready = pod
                .status
                .as_ref()
                .and_then(|s| s.conditions.as_ref())
                .is_some_and(|cs| cs.iter().any(|c| c.type_ == "Ready" && c.status == "True"));
            if ready {
                continue;
            }
            if pod
                .spec
                .as_ref()
                .and_then(|s| s.node_name.as_ref())
                .is_none()
            {
                let binding = json!({
                    "apiVersion": "v1", "kind": "Binding",
                    "metadata": { "name": name },
                    "target": { "apiVersion": "v1", "kind": "Node", "name": self.node_name }
                });
                let body = serde_json::to_vec(&binding)?;
                let req = http_post(
                    &format!("/api/v1/namespaces/{namespace}/pods/{name}/binding"),
                    body,
                )?;
                self.client
                    .request_text(req)
                    .await
                    .with_context(|| format!("binding pod {name}"))?;
            }
            let now = k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
                k8s_openapi::jiff::Timestamp::now(),
            );
            let containers: Vec<_> = pod
                .spec
                .as_ref()
                .map(|s| s.containers.iter().map(|c| json!({
                    "name": c.name, "image": c.image, "imageID": "", "ready": true, "started": true, "restartCount": 0,
                    "state": { "running": { "startedAt": now } }
                })).collect())
                .unwrap_or_default();
            let status = json!({
                "status": {
                    "phase": "Running",
                    "hostIP": "127.0.0.1",
                    "podIP": "127.0.0.1",
                    "startTime": now,
                    "conditions": [
                        { "type": "PodScheduled", "status": "True", "lastTransitionTime": now },
                        { "type": "Initialized", "status": "True", "lastTransitionTime": now },
                        { "type": "ContainersReady", "status": "True", "lastTransitionTime": now },
                        { "type": "Ready", "status": "True", "lastTransitionTime": now }
                    ],
                    "containerStatuses": containers
                }
            });
            pods.patch_status(&name, &PatchParams::default(), &Patch::Merge(&status))
                .await
                .with_context(|| format!("pod {name} status"))?;
            changed += 1;
        }
        Ok(changed)
    }
}

fn http_post(path: &str, body: Vec<u8>) -> Result<http::Request<Vec<u8>>> {
    Ok(http::Request::post(path)
        .header("content-type", "application/json")
        .body(body)?)
}
