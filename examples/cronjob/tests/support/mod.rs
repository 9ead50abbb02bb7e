//! What the port's envtest suites share, as the Go project's suite_test.go files do: the
//! control plane of the test binary (kube-codegen-envtest), with the CRD from config/crd
//! installed, and the port's webhook server (`cronjob::webhook::bind`) on 127.0.0.1 with a
//! certificate from a CA made here, which the CRD's conversion webhook and, in the webhook
//! suite, the generated webhook configurations are pointed at (controller-runtime's envtest
//! `WebhookInstallOptions` does the same for the Go suite).
#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Duration;

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::Client;
use kube::api::{Api, PostParams};
use kube_codegen_envtest::{Environment, SharedEnvironment};
use serde_json::{Value, json};

pub fn krate() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The webhook server of this test process.
pub struct Hook {
    /// `https://127.0.0.1:<port>`.
    pub base: String,
    /// The CA its serving certificate chains to (PEM).
    pub ca_pem: String,
    /// `tls.crt` and `tls.key` (for 127.0.0.1), and `ca.crt`.
    pub cert_dir: PathBuf,
}

/// A CA and a serving certificate for 127.0.0.1 signed by it, in `dir` (`tls.crt`,
/// `tls.key`, what the webhook server reads); returns the CA's PEM.
fn make_certs(dir: &std::path::Path) -> String {
    use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair};
    std::fs::create_dir_all(dir).expect("certificate directory");
    let ca_key = KeyPair::generate().expect("CA key");
    let mut ca = CertificateParams::new(Vec::<String>::new()).expect("CA");
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    // Names of their own: with rcgen's one default name for both, OpenSSL (curl) takes the
    // serving certificate for a self-signed one.
    ca.distinguished_name
        .push(DnType::CommonName, "cronjob-test-ca");
    let ca_cert = ca.self_signed(&ca_key).expect("CA certificate");
    let key = KeyPair::generate().expect("serving key");
    let mut serving = CertificateParams::new(vec!["127.0.0.1".to_owned()]).expect("serving");
    serving
        .distinguished_name
        .push(DnType::CommonName, "cronjob-webhook");
    let cert = serving
        .signed_by(&key, &Issuer::from_params(&ca, &ca_key))
        .expect("serving certificate");
    std::fs::write(dir.join("tls.crt"), cert.pem()).expect("tls.crt");
    std::fs::write(dir.join("tls.key"), key.serialize_pem()).expect("tls.key");
    ca_cert.pem()
}

/// The port's webhooks, started on first use on a thread of their own (so they outlive each
/// test's runtime), as the manager serves them.
pub fn hook() -> &'static Hook {
    static HOOK: OnceLock<Hook> = OnceLock::new();
    HOOK.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("cronjob-webhook-{}", std::process::id()));
        let ca_pem = make_certs(&dir);
        std::fs::write(dir.join("ca.crt"), &ca_pem).expect("ca.crt");
        let cert_dir = dir.clone();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("webhook runtime");
            rt.block_on(async move {
                let server = cronjob::webhook::bind("127.0.0.1:0".parse().unwrap(), &dir)
                    .await
                    .expect("webhooks start");
                tx.send(server.local_addr()).unwrap();
                server.run(std::future::pending()).await.unwrap();
            });
        });
        let addr = rx.recv().expect("webhook address");
        Hook {
            base: format!("https://{addr}"),
            ca_pem,
            cert_dir,
        }
    })
}

pub fn ca_bundle() -> Value {
    serde_json::to_value(ByteString(hook().ca_pem.clone().into_bytes())).unwrap()
}

/// config/crd/bases' CRD (what `kube-codegen generate` wrote), its conversion webhook
/// pointed at [`hook`] instead of the in-cluster Service.
pub fn crd() -> CustomResourceDefinition {
    let path = krate().join("config/crd/bases/batch.tutorial.kubebuilder.io_cronjobs.yaml");
    let yaml: serde_yaml::Value =
        serde_yaml::from_str(&std::fs::read_to_string(path).expect("CRD")).expect("CRD YAML");
    let mut crd = serde_json::to_value(yaml).unwrap();
    let webhook = &mut crd["spec"]["conversion"]["webhook"];
    assert!(webhook.is_object(), "the CRD has webhook conversion");
    webhook["clientConfig"] = json!({
        "url": format!("{}/convert", hook().base),
        "caBundle": ca_bundle(),
    });
    serde_json::from_value(crd).expect("a CRD")
}

/// This test binary's control plane (etcd and kube-apiserver; no controller manager, as
/// the Go suites' envtest), with the CRD installed.
pub static ENV: SharedEnvironment = SharedEnvironment::new(|| Environment::builder().crd(crd()));

/// A client of the control plane, on the calling test's runtime.
pub fn client() -> Client {
    ENV.get()
        .expect("control plane (hack/testenv.sh build makes its binaries)")
        .new_client()
        .expect("client")
}

/// A namespace of its own for a test (`<prefix>-<n>`).
pub async fn namespace(client: &Client, prefix: &str) -> String {
    let api: Api<Namespace> = Api::all(client.clone());
    let ns: Namespace =
        serde_json::from_value(json!({"metadata": {"generateName": format!("{prefix}-")}}))
            .unwrap();
    api.create(&PostParams::default(), &ns)
        .await
        .expect("namespace")
        .metadata
        .name
        .expect("named")
}

/// config/webhook/manifests.yaml (generated from the `+kubebuilder:webhook` markers), each
/// webhook's Service replaced by [`hook`]'s URL and CA and limited to `namespace`, the
/// configurations renamed after it.
pub fn admission_configurations(namespace: &str) -> Vec<Value> {
    use serde::Deserialize;
    let text = std::fs::read_to_string(krate().join("config/webhook/manifests.yaml"))
        .expect("webhook manifests");
    let mut out = vec![];
    for doc in serde_yaml::Deserializer::from_str(&text) {
        let mut config = Value::deserialize(doc).expect("YAML");
        let name = config["metadata"]["name"].as_str().unwrap().to_owned();
        config["metadata"]["name"] = json!(format!("{name}-{namespace}"));
        for w in config["webhooks"].as_array_mut().into_iter().flatten() {
            let path = w["clientConfig"]["service"]["path"]
                .as_str()
                .unwrap()
                .to_owned();
            w["clientConfig"] =
                json!({"url": format!("{}{path}", hook().base), "caBundle": ca_bundle()});
            w["namespaceSelector"] =
                json!({"matchLabels": {"kubernetes.io/metadata.name": namespace}});
        }
        out.push(config);
    }
    out
}

/// Polls `check` every 250 ms until it gives `Some`, for at most `timeout`
/// (Gomega's `Eventually`).
pub async fn eventually<T, F, Fut>(what: &str, timeout: Duration, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        if let Some(v) = check().await {
            return v;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out after {timeout:?} waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}
