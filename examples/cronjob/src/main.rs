//! The manager (Go's `cmd/main.go`): the CronJob controller and, unless `ENABLE_WEBHOOKS=false`,
//! the webhooks (conversion, and both versions' defaulting and validation) on one HTTPS port,
//! which also answers `/healthz`, `/readyz` and `/metrics` (the webhooks' metrics); with
//! `--leader-elect`, the controller runs only while this process holds the Lease
//! `80807133.tutorial.kubebuilder.io`, as the Go manager's.
//!
//! Not here yet: the Go manager's separate `--metrics-bind-address` and
//! `--health-probe-bind-address` servers.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Parser;
use cronjob::apis::batch::v1::CronJob;
use cronjob::controller::{CronJobReconciler, RealClock, reconcile, setup};
use k8s_openapi::api::batch::v1::Job;
use kube_codegen_runtime::controller::{Manager, StopToken};
use kube_codegen_runtime::informer::SharedInformerFactory;
use kube_codegen_runtime::leader::{LeaderElectionConfig, LeaderElector};

/// The Lease of the Go manager (`LeaderElectionID`).
const LEADER_ELECTION_ID: &str = "80807133.tutorial.kubebuilder.io";

#[derive(Parser, Debug)]
#[command(
    name = "cronjob-manager",
    version,
    about = "The CronJob operator (Rust port of kubebuilder's CronJob tutorial project)"
)]
struct Args {
    /// Path to a kubeconfig. Without it: $KUBECONFIG, ~/.kube/config, then in-cluster config.
    #[arg(long)]
    kubeconfig: Option<PathBuf>,
    /// Enable leader election for the controller manager, ensuring only one active manager.
    #[arg(long)]
    leader_elect: bool,
    /// Namespace of the Lease (default: $POD_NAMESPACE, else "default").
    #[arg(long)]
    leader_elect_namespace: Option<String>,
    /// The directory that contains the webhook certificate (tls.crt, tls.key).
    #[arg(long, default_value = "/tmp/k8s-webhook-server/serving-certs")]
    webhook_cert_path: PathBuf,
    /// Port the webhook server listens on.
    #[arg(long, default_value_t = 9443)]
    webhook_port: u16,
    /// Address the webhook server binds.
    #[arg(long, default_value = "0.0.0.0")]
    webhook_host: std::net::IpAddr,
}

async fn client(args: &Args) -> Result<kube::Client> {
    let config = match &args.kubeconfig {
        Some(path) => {
            let kc = kube::config::Kubeconfig::read_from(path)
                .with_context(|| format!("reading kubeconfig {}", path.display()))?;
            kube::Config::from_custom_kubeconfig(kc, &Default::default()).await?
        }
        None => kube::Config::infer()
            .await
            .context("no kubeconfig and not in a cluster")?,
    };
    Ok(kube::Client::try_from(config)?)
}

#[tokio::main]
async fn main() -> Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .init();
    let args = Args::parse();
    let client = client(&args).await?;

    let factory = SharedInformerFactory::new(client.clone());
    let jobs = factory.informer_for::<Job>();
    let controller =
        setup(factory.informer_for::<CronJob>(), &jobs).context("Failed to create controller")?;
    let reconciler = Arc::new(CronJobReconciler {
        client: client.clone(),
        jobs,
        clock: Arc::new(RealClock),
        time_zone: jiff::tz::TimeZone::system(),
    });

    let mut manager = Manager::new().shutdown_on_signals();
    if std::env::var("ENABLE_WEBHOOKS").as_deref() != Ok("false") {
        let addr = SocketAddr::new(args.webhook_host, args.webhook_port);
        let server = cronjob::webhook::bind(addr, &args.webhook_cert_path)
            .await
            .context("Failed to create webhook")?;
        tracing::info!(addr = %server.local_addr(), "webhooks listening");
        manager = manager.add_runnable(move |stop: StopToken| async move {
            if let Err(e) = server.run(async move { stop.stopped().await }).await {
                tracing::error!(error = %e, "webhook server");
            }
        });
    }
    if args.leader_elect {
        let namespace = args
            .leader_elect_namespace
            .clone()
            .or_else(|| std::env::var("POD_NAMESPACE").ok())
            .unwrap_or_else(|| "default".into());
        let config = LeaderElectionConfig::new(
            LEADER_ELECTION_ID,
            namespace,
            LeaderElectionConfig::default_identity(),
        );
        manager = manager.leader_election(LeaderElector::new(client.clone(), config)?);
    }
    factory.start();
    factory
        .wait_for_cache_sync(Duration::from_secs(120))
        .await
        .context("caches")?;
    tracing::info!("Starting manager");
    let stopped = manager.add(controller, reconciler, reconcile).run().await;
    tracing::info!(?stopped, "manager stopped");
    Ok(())
}
