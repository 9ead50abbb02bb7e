//! The conversion webhook of sample-api's multi-version kinds (Foo v1alpha1 <-> v1beta1),
//! served by the controller process with `--conversion-webhook-addr`: the generated
//! dispatch table (`sample_api::generated::conversion::KINDS`) behind the runtime's
//! webhook server.

use std::future::Future;
use std::net::SocketAddr;
use std::path::Path;

use anyhow::{Context, Result};
use k8s_openapi::ByteString;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceDefinition, WebhookClientConfig,
};
use kube_codegen_runtime::conversion::Converter;
use kube_codegen_runtime::webhook::{Server, TlsFiles};

// ANCHOR: webhook
/// Binds the webhook (reading `tls.crt` and `tls.key` in `cert_dir`): TLS problems fail
/// here, before the controllers start. The returned server is run with [`Server::run`].
pub async fn bind(addr: SocketAddr, cert_dir: &Path) -> Result<Server> {
    let server = Server::bind(
        addr,
        TlsFiles::in_dir(cert_dir),
        Converter::new(sample_api::generated::conversion::KINDS),
    )
    .await
    .context("starting the conversion webhook")?;
    tracing::info!(addr = %server.local_addr(), cert_dir = %cert_dir.display(), "conversion webhook listening");
    Ok(server)
}

/// Serves until `shutdown`.
pub async fn serve(server: Server, shutdown: impl Future<Output = ()>) -> Result<()> {
    server.run(shutdown).await.context("conversion webhook")
}
// ANCHOR_END: webhook

/// Points a CRD's webhook conversion at `url`, trusting the CA in `ca_file` (for a webhook
/// outside the cluster, as in a local run against the test control plane).
pub fn point_at(crd: &mut CustomResourceDefinition, url: &str, ca_file: &Path) -> Result<()> {
    let ca = std::fs::read(ca_file)
        .with_context(|| format!("reading the webhook CA {}", ca_file.display()))?;
    if let Some(w) = crd
        .spec
        .conversion
        .as_mut()
        .and_then(|c| c.webhook.as_mut())
    {
        w.client_config = Some(WebhookClientConfig {
            url: Some(url.to_owned()),
            service: None,
            ca_bundle: Some(ByteString(ca)),
        });
    }
    Ok(())
}
