//! The conversion webhook of sample-api's multi-version kinds, for every e2e test that
//! installs a CRD with `conversion: Webhook`: started once per test process on 127.0.0.1
//! (its own thread and runtime, so it outlives each test's runtime), with a CA and a
//! serving certificate made by `openssl`, and the CRD's clientConfig pointed at it (`url` and
//! `caBundle`), since the generated CRD names a Service the test cluster does not have.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, OnceLock};

use anyhow::{Context, Result, bail};
use k8s_openapi::ByteString;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceDefinition, WebhookClientConfig,
};
use kube::Client;
use kube::api::{Api, Patch, PatchParams};
use kube_codegen_runtime::conversion::Converter;
use kube_codegen_runtime::webhook::{Metrics, Server, TlsFiles};
use serde_json::json;

/// A running conversion webhook.
pub struct TestWebhook {
    /// `https://127.0.0.1:<port>/convert`.
    pub url: String,
    /// The CA (PEM) its serving certificate chains to.
    pub ca_pem: Vec<u8>,
    /// Its metrics: how many reviews it answered.
    pub metrics: Arc<Metrics>,
    /// Where its certificates are.
    pub dir: PathBuf,
}

fn openssl(dir: &Path, args: &[&str]) -> Result<()> {
    let out = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .context("running openssl")?;
    if !out.status.success() {
        bail!("openssl {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }
    Ok(())
}

/// A CA (`ca.crt`, `ca.key`) and a serving pair for 127.0.0.1 signed by it (`tls.crt`,
/// `tls.key`) in `dir`.
pub fn make_certs(dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir)?;
    let ec = [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
    ];
    let mut ca = vec!["req", "-x509"];
    ca.extend(ec);
    ca.extend([
        "-keyout",
        "ca.key",
        "-out",
        "ca.crt",
        "-days",
        "2",
        "-subj",
        "/CN=kube-codegen-e2e-ca",
    ]);
    openssl(dir, &ca)?;
    let mut req = vec!["req"];
    req.extend(ec);
    req.extend([
        "-keyout",
        "tls.key",
        "-out",
        "tls.csr",
        "-subj",
        "/CN=127.0.0.1",
    ]);
    openssl(dir, &req)?;
    std::fs::write(dir.join("ext.cnf"), "subjectAltName=IP:127.0.0.1\n")?;
    openssl(
        dir,
        &[
            "x509",
            "-req",
            "-in",
            "tls.csr",
            "-CA",
            "ca.crt",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            "tls.crt",
            "-days",
            "2",
            "-extfile",
            "ext.cnf",
        ],
    )
}

/// The process's webhook for sample-api's kinds, started on first use.
pub fn sample_webhook() -> &'static TestWebhook {
    static WEBHOOK: OnceLock<TestWebhook> = OnceLock::new();
    WEBHOOK.get_or_init(|| {
        let dir =
            std::env::temp_dir().join(format!("kube-codegen-e2e-webhook-{}", std::process::id()));
        make_certs(&dir).expect("webhook certificates");
        let (tx, rx) = std::sync::mpsc::channel();
        let tls = TlsFiles::in_dir(&dir);
        std::thread::Builder::new()
            .name("conversion-webhook".into())
            .spawn(move || {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("webhook runtime");
                rt.block_on(async move {
                    let server = Server::bind(
                        "127.0.0.1:0".parse().unwrap(),
                        tls,
                        Converter::new(sample_api::generated::conversion::KINDS),
                    )
                    .await
                    .expect("conversion webhook starts");
                    tx.send((server.local_addr(), server.metrics())).unwrap();
                    // Serves until the test process exits.
                    server.run(std::future::pending()).await.unwrap();
                });
            })
            .expect("webhook thread");
        let (addr, metrics) = rx.recv().expect("webhook address");
        TestWebhook {
            url: format!("https://{addr}/convert"),
            ca_pem: std::fs::read(dir.join("ca.crt")).expect("ca.crt"),
            metrics,
            dir,
        }
    })
}

/// Whether the CRD converts through a webhook.
pub fn uses_webhook(crd: &CustomResourceDefinition) -> bool {
    crd.spec
        .conversion
        .as_ref()
        .is_some_and(|c| c.strategy == "Webhook")
}

/// The CRD with its webhook's clientConfig pointed at [`sample_webhook`].
pub fn pointed_at_test_webhook(crd: &CustomResourceDefinition) -> CustomResourceDefinition {
    let mut crd = crd.clone();
    let hook = sample_webhook();
    if let Some(w) = crd
        .spec
        .conversion
        .as_mut()
        .and_then(|c| c.webhook.as_mut())
    {
        w.client_config = Some(WebhookClientConfig {
            url: Some(hook.url.clone()),
            service: None,
            ca_bundle: Some(ByteString(hook.ca_pem.clone())),
        });
    }
    crd
}

/// Before applying a webhook CRD: an installed copy that names another webhook (a Service,
/// or another test process's URL) is switched to ours in one merge patch, which also drops
/// the `service` another field manager may own (server-side apply would keep it, and a
/// clientConfig with both is invalid).
pub async fn repoint_installed(client: &Client, crd: &CustomResourceDefinition) -> Result<()> {
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    let name = crd.metadata.name.clone().context("CRD has a name")?;
    let Some(installed) = api.get_opt(&name).await? else {
        return Ok(());
    };
    let hook = sample_webhook();
    let current = installed
        .spec
        .conversion
        .as_ref()
        .and_then(|c| c.webhook.as_ref())
        .and_then(|w| w.client_config.as_ref());
    if current.is_some_and(|c| c.url.as_deref() == Some(hook.url.as_str()) && c.service.is_none()) {
        return Ok(());
    }
    let ca = serde_json::to_value(ByteString(hook.ca_pem.clone()))?;
    let patch = json!({"spec": {"conversion": {
        "strategy": "Webhook",
        "webhook": {
            "conversionReviewVersions": ["v1"],
            "clientConfig": {"url": hook.url, "caBundle": ca, "service": null},
        },
    }}});
    api.patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .with_context(|| format!("pointing {name} at the test webhook"))?;
    Ok(())
}
