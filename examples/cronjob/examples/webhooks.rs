//! The port's webhooks alone (bench/admission.sh), the Rust side of
//! bench/go/cronjob-webhooks.go.txt: the server `cronjob-manager` runs (`cronjob::webhook::bind`:
//! conversion, and both versions' defaulting and validation) without the controller, so the
//! benchmark measures the webhook server and not the reconciles a burst of creates causes.
//!
//!     webhooks --webhook-cert-path DIR --webhook-port PORT

use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;

use clap::Parser;

#[derive(Parser)]
struct Args {
    /// The directory that contains tls.crt and tls.key.
    #[arg(long)]
    webhook_cert_path: PathBuf,
    /// Port the webhook server listens on (127.0.0.1).
    #[arg(long, default_value_t = 9443)]
    webhook_port: u16,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt().with_env_filter("warn").init();
    let args = Args::parse();
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, args.webhook_port));
    let server = cronjob::webhook::bind(addr, &args.webhook_cert_path).await?;
    server
        .run(async {
            let mut term =
                tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
                    .expect("SIGTERM handler");
            tokio::select! {
                _ = term.recv() => {}
                _ = tokio::signal::ctrl_c() => {}
            }
        })
        .await?;
    Ok(())
}
