//! The manager (Go's `cmd/main.go`): the CronJob controller and, unless `ENABLE_WEBHOOKS=false`,
//! the webhooks (conversion, and both versions' defaulting and validation) on one HTTPS port,
//! which also answers `/healthz`, `/readyz` and `/metrics` (the webhooks' metrics); with
//! `--leader-elect`, the controller runs only while this process holds the Lease
//! `80807133.tutorial.kubebuilder.io`, as the Go manager's.
//!
//! As the Go manager, two listeners of their own: `--metrics-bind-address` (off with `0`,
//! Go's default) serves `/metrics` (the controller's, its work queue's and the webhooks'),
//! and `--health-probe-bind-address` (`:8081`) serves `/healthz` and `/readyz` (ready once
//! the caches have synced). They speak plain HTTP: the Go manager's `--metrics-secure`
//! (HTTPS with the API server's authentication and authorization) is not ported, and the
//! flag is refused rather than ignored.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Parser;
use cronjob::apis::batch::v1::CronJob;
use cronjob::controller::{CronJobReconciler, RealClock, reconcile, setup};
use k8s_openapi::api::batch::v1::Job;
use kube_codegen_runtime::controller::Manager;
use kube_codegen_runtime::endpoints::{self, Routes};
use kube_codegen_runtime::informer::SharedInformerFactory;
use kube_codegen_runtime::leader::{LeaderElectionConfig, LeaderElector};
use kube_codegen_runtime::ratelimit::{
    ClientOptions, RequestMetrics, client_with_options, default_user_agent,
};

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
    /// The address the metrics endpoint binds to (plain HTTP). Use :8080 for every
    /// interface, or leave as 0 to disable the metrics service.
    #[arg(long, default_value = "0", value_parser = bind_address)]
    metrics_bind_address: BindAddress,
    /// The address the probe endpoint binds to (/healthz, /readyz); 0 disables it.
    #[arg(long, default_value = ":8081", value_parser = bind_address)]
    health_probe_bind_address: BindAddress,
    /// Client-side requests per second to the API server, per API group/version (0: no
    /// limit). The Go manager has no flag: controller-runtime sets 20 when the config
    /// leaves it unset, as the project's does.
    #[arg(long, default_value_t = 20.0)]
    kube_api_qps: f32,
    /// Client-side burst above --kube-api-qps (controller-runtime's default: 30).
    #[arg(long, default_value_t = 30)]
    kube_api_burst: u32,
}

/// A listener's address, or none (`0`).
#[derive(Clone, Copy, Debug)]
struct BindAddress(Option<SocketAddr>);

fn bind_address(text: &str) -> Result<BindAddress, String> {
    endpoints::parse_bind_address(text).map(BindAddress)
}

async fn client(args: &Args) -> Result<(kube::Client, Arc<RequestMetrics>)> {
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
    let options = ClientOptions::new(args.kube_api_qps, args.kube_api_burst).user_agent(
        default_user_agent("cronjob-manager", env!("CARGO_PKG_VERSION")),
    );
    Ok(client_with_options(config, &options)?)
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
    let (client, requests) = client(&args).await?;

    let factory = SharedInformerFactory::new(client.clone());
    let jobs = factory.informer_for::<Job>();
    let controller =
        setup(factory.informer_for::<CronJob>(), &jobs).context("Failed to create controller")?;
    let controller_metrics = controller.metrics();
    let queue = controller.queue().clone();
    let mut webhook_metrics = None;
    let reconciler = Arc::new(CronJobReconciler {
        client: client.clone(),
        jobs,
        clock: Arc::new(RealClock),
        time_zone: jiff::tz::TimeZone::system(),
    });

    let mut manager = Manager::new().shutdown_on_signals();
    // The webhooks, metrics and probes are served by every replica, leading or not (as
    // controller-runtime's servers, which are not leader-election runnables), until the
    // manager stops.
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let stopped = move || {
        let mut rx = stop_rx.clone();
        async move {
            let _ = rx.wait_for(|s| *s).await;
        }
    };
    let mut servers = Vec::new();
    if std::env::var("ENABLE_WEBHOOKS").as_deref() != Ok("false") {
        let addr = SocketAddr::new(args.webhook_host, args.webhook_port);
        let server = cronjob::webhook::bind(addr, &args.webhook_cert_path)
            .await
            .context("Failed to create webhook")?;
        tracing::info!(addr = %server.local_addr(), "webhooks listening");
        webhook_metrics = Some(server.metrics());
        let stopped = stopped();
        servers.push(tokio::spawn(async move {
            if let Err(e) = server.run(stopped).await {
                tracing::error!(error = %e, "webhook server");
            }
        }));
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
    // Bound before the caches sync, as the Go manager's: a probe sees "not ready", not a
    // refused connection, while they fill.
    let (synced_tx, synced) = tokio::sync::watch::channel(false);
    if let BindAddress(Some(addr)) = args.health_probe_bind_address {
        let routes: Routes = Arc::new(move |path: &str| match path {
            "/healthz" => Some((200, "ok".into())),
            "/readyz" if *synced.borrow() => Some((200, "ok".into())),
            "/readyz" => Some((503, "caches not synced".into())),
            _ => None,
        });
        servers.push(listener(addr, routes, "health probes", stopped()).await?);
    }
    if let BindAddress(Some(addr)) = args.metrics_bind_address {
        let routes: Routes = Arc::new(move |path: &str| {
            (path == "/metrics").then(|| {
                let mut text = controller_metrics.render_prometheus("cronjob");
                text += &queue.render_prometheus();
                text += &requests.render_prometheus();
                if let Some(w) = &webhook_metrics {
                    text += &w.render_prometheus();
                }
                (200, text)
            })
        });
        servers.push(listener(addr, routes, "metrics", stopped()).await?);
    }
    factory.start();
    factory
        .wait_for_cache_sync(Duration::from_secs(120))
        .await
        .context("caches")?;
    synced_tx.send_replace(true);
    tracing::info!("Starting manager");
    let stopped = manager.add(controller, reconciler, reconcile).run().await;
    tracing::info!(?stopped, "manager stopped");
    stop_tx.send_replace(true);
    for s in servers {
        let _ = s.await;
    }
    Ok(())
}

/// Binds `addr` now (a taken port fails the start, as in Go) and serves `routes` there
/// until `stopped` resolves.
async fn listener(
    addr: SocketAddr,
    routes: Routes,
    what: &'static str,
    stopped: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<tokio::task::JoinHandle<()>> {
    let bound = tokio::net::TcpListener::bind(addr)
        .await
        .with_context(|| format!("{what}: cannot listen on {addr}"))?;
    tracing::info!(addr = ?bound.local_addr().ok(), "{what} listening");
    Ok(tokio::spawn(async move {
        if let Err(e) = endpoints::serve_on(bound, routes, stopped).await {
            tracing::error!(error = %e, "{what} server");
        }
    }))
}
