//! `sample-controller`: run the Foo (and TestResource) controllers.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Parser;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, Patch, PatchParams};
use kube_codegen_runtime::controller::{Manager, StopToken, Stopped};
use kube_codegen_runtime::endpoints as serve;
use kube_codegen_runtime::events::{Recorder, Reporter};
use kube_codegen_runtime::informer::{
    SharedInformerFactory as RuntimeFactory, drop_managed_fields,
};
use kube_codegen_runtime::leader::{LeaderElectionConfig, LeaderElector};
use kube_codegen_runtime::ratelimit::{
    ClientOptions, LimitScope, RequestMetrics, client_with_options, default_user_agent,
};
use kube_codegen_runtime::sharding::{GroupConfig, ShardGate, ShardMember, ShardMode};
use kube_codegen_runtime::store::ObjectKey;
use kube_codegen_runtime::workqueue::WorkQueue;
use sample_api::Clientset;
use sample_api::apis::samplecontroller::v1alpha1::Foo;
use sample_api::generated::informers::SharedInformerFactory;
use sample_controller::{COMPONENT, FIELD_MANAGER, foo, foo_builder, testresource};
use tokio::sync::watch;

/// The CRDs kube-codegen generated for sample-api, for `--install-crds`.
const CRDS: &[&str] = &[
    include_str!("../config/crd/samplecontroller.k8s.io_foos.yaml"),
    include_str!("../config/crd/insujang.github.io_testresources.yaml"),
];

#[derive(Parser, Debug, Clone)]
#[command(
    name = "sample-controller",
    version,
    about = "Foo -> Deployment controller (Rust port of kubernetes/sample-controller)"
)]
struct Args {
    /// Path to a kubeconfig. Without it: $KUBECONFIG, ~/.kube/config, then in-cluster config.
    #[arg(long)]
    kubeconfig: Option<PathBuf>,
    /// Concurrent workers per controller.
    #[arg(long, default_value_t = 2)]
    workers: usize,
    /// Watch only this namespace (all namespaces when unset).
    #[arg(long)]
    namespace: Option<String>,
    /// Elect a leader through a coordination.k8s.io Lease before running.
    #[arg(long)]
    leader_elect: bool,
    #[arg(long, default_value = "sample-controller")]
    leader_elect_lease_name: String,
    /// Namespace of the Lease (default: $POD_NAMESPACE, else "default").
    #[arg(long)]
    leader_elect_namespace: Option<String>,
    /// Identity in the Lease (default: hostname and a random suffix).
    #[arg(long)]
    leader_elect_identity: Option<String>,
    /// With --leader-elect: a standby starts its informers and syncs its caches before it
    /// wins the Lease (controller-runtime starts its caches before leadership too, and
    /// v0.22's `EnableWarmup` its controllers' sources), so a failover costs the Lease's
    /// expiry and not a full list. `false`: a standby lists only once it leads.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    warm_standby: bool,
    /// Serve Prometheus metrics here (/metrics).
    #[arg(long, default_value = "127.0.0.1:8080")]
    metrics_addr: SocketAddr,
    /// Serve /healthz and /readyz here (ready once caches have synced).
    #[arg(long, default_value = "127.0.0.1:8081")]
    health_addr: SocketAddr,
    /// Client-side request rate limit (queries per second; 0 disables). client-go's default is 5.
    #[arg(long, default_value_t = 20.0)]
    kube_api_qps: f32,
    /// Client-side burst above the QPS limit. client-go's default is 10.
    #[arg(long, default_value_t = 30)]
    kube_api_burst: u32,
    /// Which requests share a QPS/burst bucket: `group-version` (one bucket per API
    /// group/version, as client-go's typed clients get when QPS is left unset) or `client`
    /// (one bucket for every request, as a clientset built with an explicit QPS).
    #[arg(long, default_value = "group-version")]
    kube_api_limit_scope: LimitScope,
    /// Threads of the async runtime (1: a single-threaded runtime).
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// Register the CRDs and wait until they are Established before starting.
    #[arg(long)]
    install_crds: bool,
    /// Which controllers to run.
    #[arg(long, value_delimiter = ',', default_value = "foo,testresource")]
    controllers: Vec<String>,
    /// How the Foo controller writes its Deployment and the Foo's status: `apply`
    /// (server-side apply under one field manager) or `update` (create/update, as the Go
    /// sample-controller does).
    #[arg(long, default_value = "apply")]
    write_mode: foo::WriteMode,
    /// How the Foo controller is wired: `client-go` (the Go sample-controller's handlers
    /// and worker loop, ported) or `builder` (the runtime's controller builder around the
    /// same sync).
    #[arg(long, default_value = "client-go", value_parser = ["client-go", "builder"])]
    foo_controller: String,
    /// Spread the Foos (and TestResources) over the replicas: `off` (every replica, or the
    /// leader with --leader-elect, handles every object) or `auto` (join the shard group
    /// --shard-group: each replica holds a member Lease, the uid hash space's 64 slots are
    /// dealt over the live members, and each replica caches and reconciles only its
    /// slots; runs the Foo controller on the builder).
    #[arg(long, default_value = "off", value_parser = ["off", "auto"])]
    shards: String,
    /// The shard group to join with --shards auto: the name of its table Lease and the
    /// label of its members' Leases.
    #[arg(long, default_value = "sample-controller")]
    shard_group: String,
    /// Namespace of the shard group's Leases (default: $POD_NAMESPACE, else "default").
    #[arg(long)]
    shard_namespace: Option<String>,
    /// Identity in the shard group (default: hostname and a random suffix).
    #[arg(long)]
    shard_identity: Option<String>,
    /// How the replicas get their slots' objects: `auto` (a probe list tells whether the
    /// API server applies shardSelector: selector mode if it does, else label mode),
    /// `selector` or `label` (forced, e.g. label mode on a server with the gate on).
    #[arg(long, value_enum, default_value_t = ShardModeArg::Auto)]
    shard_mode: ShardModeArg,
    /// How the Foo controller caches its Deployments: `typed` (k8s-openapi objects, the
    /// runtime's default) or `compact` (each kept as its JSON and decoded on every lister
    /// read: about a quarter of the heap per Deployment, for a decode of some
    /// microseconds per sync).
    #[arg(long, value_enum, default_value_t = CacheEncoding::Typed)]
    deployment_cache: CacheEncoding,
    /// Append a line per Foo reconcile start and end (time, replica, key) to this file.
    #[arg(long)]
    audit_log: Option<PathBuf>,
    /// Log format: text or json.
    #[arg(long, default_value = "text")]
    log_format: String,
    /// Serve the webhooks here (HTTPS): the conversion of Foo's versions (`/convert`) and
    /// Foo's defaulting and validation (`/mutate-samplecontroller-k8s-io-v1beta1-foo`,
    /// `/validate-samplecontroller-k8s-io-v1beta1-foo`).
    #[arg(long, visible_alias = "webhook-addr")]
    conversion_webhook_addr: Option<SocketAddr>,
    /// `tls.crt` and `tls.key` of the webhooks (controller-runtime's default directory),
    /// re-read when they change.
    #[arg(
        long,
        visible_alias = "webhook-cert-dir",
        default_value = "/tmp/k8s-webhook-server/serving-certs"
    )]
    conversion_webhook_cert_dir: PathBuf,
    /// With --install-crds: point the CRDs' webhook conversion at this URL instead of the
    /// in-cluster Service the generated CRD names (a controller run outside the cluster).
    #[arg(long, requires = "conversion_webhook_ca")]
    conversion_webhook_url: Option<String>,
    /// The CA (PEM) the API server trusts the webhook's certificate with, for
    /// --conversion-webhook-url.
    #[arg(long)]
    conversion_webhook_ca: Option<PathBuf>,
}

async fn kube_config(args: &Args) -> Result<kube::Config> {
    Ok(match &args.kubeconfig {
        Some(path) => {
            let kc = kube::config::Kubeconfig::read_from(path)
                .with_context(|| format!("reading kubeconfig {}", path.display()))?;
            kube::Config::from_custom_kubeconfig(kc, &Default::default()).await?
        }
        None => kube::Config::infer()
            .await
            .context("no kubeconfig and not in a cluster")?,
    })
}

/// Apply the generated CRDs and wait for Established, as the tutorial does programmatically.
async fn install_crds(client: &kube::Client, args: &Args) -> Result<()> {
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    for text in CRDS {
        let mut crd: CustomResourceDefinition = serde_yaml::from_str(text)?;
        if let (Some(url), Some(ca)) = (&args.conversion_webhook_url, &args.conversion_webhook_ca) {
            sample_controller::conversion::point_at(&mut crd, url, ca)?;
        }
        let name = crd.metadata.name.clone().unwrap_or_default();
        api.patch(
            &name,
            &PatchParams::apply(FIELD_MANAGER).force(),
            &Patch::Apply(&crd),
        )
        .await
        .with_context(|| format!("applying CRD {name}"))?;
        let established = kube::runtime::wait::await_condition(
            api.clone(),
            &name,
            kube::runtime::wait::conditions::is_crd_established(),
        );
        tokio::time::timeout(Duration::from_secs(60), established)
            .await
            .with_context(|| format!("CRD {name} not Established in 60s"))??;
        tracing::info!(crd = %name, "CRD established");
    }
    Ok(())
}

/// `--shard-mode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum ShardModeArg {
    /// Probe the API server.
    Auto,
    /// Kubernetes' sharded list and watch (`shardSelector`).
    Selector,
    /// The slot label fallback.
    Label,
}

/// `--deployment-cache`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum CacheEncoding {
    /// Typed objects (`SharedInformerFactory::informer_for`).
    Typed,
    /// JSON, decoded on read (`SharedInformerFactory::compact`).
    Compact,
}

impl ShardModeArg {
    /// The forced mode, if any.
    fn forced(self) -> Option<ShardMode> {
        match self {
            ShardModeArg::Auto => None,
            ShardModeArg::Selector => Some(ShardMode::Selector),
            ShardModeArg::Label => Some(ShardMode::Label),
        }
    }
}

/// Where a replica's Lease lives and whom it names, for leader election and shard groups
/// alike: the namespace given, else `$POD_NAMESPACE`, else `default`; the identity given,
/// else hostname and a random suffix.
fn lease_place(namespace: &Option<String>, identity: &Option<String>) -> (String, String) {
    let namespace = namespace
        .clone()
        .or_else(|| std::env::var("POD_NAMESPACE").ok())
        .unwrap_or_else(|| "default".into());
    let identity = identity
        .clone()
        .unwrap_or_else(LeaderElectionConfig::default_identity);
    (namespace, identity)
}

/// Resolves on SIGTERM or SIGINT.
async fn shutdown_signal() {
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .expect("SIGTERM handler");
    tokio::select! {
        _ = term.recv() => tracing::info!("SIGTERM: shutting down"),
        _ = tokio::signal::ctrl_c() => tracing::info!("SIGINT: shutting down"),
    }
}

struct Running {
    foo_queue: WorkQueue<ObjectKey>,
    tr_queue: WorkQueue<ObjectKey>,
    foo_metrics: Arc<foo::ReconcileMetrics>,
    tr_metrics: Arc<kube_codegen_runtime::controller::Metrics>,
    /// The Foo controller's counters when it runs on the builder.
    foo_builder_metrics: Arc<kube_codegen_runtime::controller::Metrics>,
    /// With --shards auto: the shard group's gate.
    shard: Option<ShardGate>,
    /// The Foo cache, for the objects-cached gauge.
    foos_cached: std::sync::OnceLock<kube_codegen_runtime::store::Store<Foo>>,
    /// The Deployment cache, for the objects-cached gauge.
    deployments_cached: std::sync::OnceLock<kube_codegen_runtime::store::Store<Deployment>>,
    audit: Option<Arc<sample_controller::audit::Audit>>,
}

/// Run the controllers until `stop` resolves, then drain: stop taking work, finish what
/// is in flight, stop the informers. The caches sync at once; the workers start when
/// `lead` resolves (at once, or when a warm standby wins its Lease).
///
/// Leader election: one Lease in the controller's namespace, and its events there. A shard
/// group (`--shards auto`) lists its members' Leases there too.
///
/// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;list;create;update,namespace=sample-controller,roleName=sample-controller-leader-election
/// +kubebuilder:rbac:groups=core,resources=events,verbs=create;patch,namespace=sample-controller,roleName=sample-controller-leader-election
async fn run_controllers(
    args: &Args,
    clientset: Clientset,
    ready: watch::Sender<bool>,
    running: &Running,
    lead: impl std::future::Future<Output = ()>,
    stop: impl std::future::Future<Output = ()>,
) -> Result<()> {
    let mut builder = RuntimeFactory::builder(clientset.client().clone())
        .with_transform(drop_managed_fields)
        .with_default_resync(Duration::from_secs(30));
    if let Some(ns) = &args.namespace {
        builder = builder.with_namespace(ns);
    }
    let factory = SharedInformerFactory::from_runtime(builder.build());
    let recorder = Recorder::new(clientset.client().clone(), Reporter::new(COMPONENT));
    let run_foo = args.controllers.iter().any(|c| c == "foo");
    let run_tr = args.controllers.iter().any(|c| c == "testresource");

    let mut workers = vec![];
    let mut foo_builder_controller = None;
    if run_foo {
        let foos = factory.samplecontroller().v1alpha1().foos();
        let deployments = match args.deployment_cache {
            CacheEncoding::Typed => factory.informer_for::<Deployment>(),
            CacheEncoding::Compact => factory.compact().informer_for::<Deployment>(),
        };
        let controller = foo::Controller::new(
            clientset.clone(),
            foos.lister(),
            deployments.lister(),
            recorder.clone(),
            running.foo_queue.clone(),
        );
        let controller = Arc::new(
            controller
                .with_metrics(running.foo_metrics.clone())
                .with_write_mode(args.write_mode)
                .with_audit(running.audit.clone())
                .with_shard_gate(running.shard.clone()),
        );
        let _ = running.foos_cached.set(foos.informer().store().clone());
        let _ = running.deployments_cached.set(deployments.store().clone());
        if args.foo_controller == "builder" || running.shard.is_some() {
            foo_builder_controller = Some((
                foo_builder::controller(
                    foos.informer().clone(),
                    deployments.clone(),
                    running.foo_queue.clone(),
                    running.foo_builder_metrics.clone(),
                    args.workers,
                    running.shard.clone(),
                ),
                controller,
            ));
        } else {
            controller.register_handlers(foos.informer(), &deployments);
            workers.push(controller);
        }
    }
    let mut tr_controller = None;
    if run_tr {
        let trs = factory.insujang().v1beta1().testresources();
        tr_controller = Some(testresource::controller(
            trs.informer().clone(),
            running.tr_queue.clone(),
            running.tr_metrics.clone(),
            args.workers,
            running.shard.clone(),
        ));
    }
    factory.start();
    tracing::info!("waiting for informer caches to sync");
    let mut stop = std::pin::pin!(stop);
    // A SIGTERM (or a lost Lease) while the caches sync is a clean stop, not a sync
    // failure: the caches of a CRD not installed yet never sync.
    tokio::select! {
        synced = factory.wait_for_cache_sync(foo::CACHE_SYNC_TIMEOUT) => synced?,
        () = &mut stop => {
            tracing::info!("stopped before the caches synced");
            factory.shutdown();
            return Ok(());
        }
    }
    ready.send_replace(true);
    tokio::select! {
        () = lead => {}
        () = &mut stop => {
            tracing::info!("stopped before leading (a warm standby)");
            factory.shutdown();
            return Ok(());
        }
    }
    tracing::info!(workers = args.workers, "caches synced; starting workers");

    let mut tasks = vec![];
    for c in workers {
        tasks.push(tokio::spawn(c.run_workers(args.workers)));
    }
    if let Some((c, sync)) = foo_builder_controller {
        // Stopped with the other queues below, like the TestResource controller.
        tasks.push(tokio::spawn(c.run(
            sync,
            foo_builder::reconcile,
            std::future::pending(),
        )));
    }
    if let Some(c) = tr_controller {
        let ctx = Arc::new(testresource::Context {
            clientset: clientset.clone(),
            recorder: recorder.clone(),
        });
        // Stopped with the other queues below (shutdown_with_drain), so it needs no signal
        // of its own.
        tasks.push(tokio::spawn(c.run(
            ctx,
            testresource::reconcile,
            std::future::pending(),
        )));
    }
    stop.await;
    ready.send_replace(false);
    tracing::info!("draining work queues");
    tokio::join!(
        running.foo_queue.shutdown_with_drain(),
        running.tr_queue.shutdown_with_drain()
    );
    for t in tasks {
        let _ = t.await;
    }
    // Events are best effort (client-go drops what its broadcaster still holds at
    // shutdown): give queued ones a few seconds, never the pod's whole grace period.
    if tokio::time::timeout(EVENT_FLUSH_TIMEOUT, recorder.flush())
        .await
        .is_err()
    {
        tracing::warn!(timeout = ?EVENT_FLUSH_TIMEOUT, "events still queued at shutdown were dropped");
    }
    factory.shutdown();
    tracing::info!("workers stopped");
    Ok(())
}

fn metrics_text(running: &Running, requests: &RequestMetrics) -> String {
    // One exposition for both queues: each metric family's HELP/TYPE appears once.
    let mut out = kube_codegen_runtime::workqueue::render_prometheus(&[
        running.foo_queue.metrics(),
        running.tr_queue.metrics(),
    ]);
    out += &running.foo_metrics.render_prometheus("foo");
    out += &running.tr_metrics.render_prometheus("testresources");
    out += &running.foo_builder_metrics.render_prometheus("foos");
    out += &requests.render_prometheus();
    if let Some(store) = running.foos_cached.get() {
        out += "# HELP sample_controller_foos_cached Foos in this replica's cache.\n";
        out += "# TYPE sample_controller_foos_cached gauge\n";
        out += &format!("sample_controller_foos_cached {}\n", store.len());
    }
    if let Some(store) = running.deployments_cached.get() {
        out += "# HELP sample_controller_deployments_cached Deployments in this replica's cache.\n";
        out += "# TYPE sample_controller_deployments_cached gauge\n";
        out += &format!("sample_controller_deployments_cached {}\n", store.len());
    }
    if let Some(gate) = &running.shard {
        out += "# HELP shard_slots_working Slots of the shard group this replica reconciles (fenced).\n";
        out += "# TYPE shard_slots_working gauge\n";
        out += &format!("shard_slots_working {}\n", gate.working().len());
        out += "# HELP shard_slots_cached Slots of the shard group this replica caches.\n";
        out += "# TYPE shard_slots_cached gauge\n";
        out += &format!("shard_slots_cached {}\n", gate.cached().len());
        let owned: Vec<String> = gate.working().iter().map(ToString::to_string).collect();
        out += "# HELP shard_slots_owned_info The slots this replica reconciles.\n";
        out += "# TYPE shard_slots_owned_info gauge\n";
        out += &format!(
            "shard_slots_owned_info{{slots=\"{}\"}} 1\n",
            owned.join(",")
        );
        if let Some(mode) = gate.mode() {
            out += "# HELP shard_mode_info How this replica lists its slots: selector (the API server's sharded list and watch) or label (the slot label fallback).\n";
            out += "# TYPE shard_mode_info gauge\n";
            out += &format!("shard_mode_info{{mode=\"{mode}\"}} 1\n");
        }
    }
    out
}

/// How long shutdown waits for queued events to be written.
const EVENT_FLUSH_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

fn main() -> Result<()> {
    let args = Args::parse();
    // The controller waits on the network almost all the time: one thread serves it with no
    // cross-thread wake-ups (a third of the CPU profile on two threads was the kernel
    // switching between idle tokio workers); more threads for CPU-heavy reconciles.
    let runtime = match args.threads {
        0 | 1 => tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?,
        n => tokio::runtime::Builder::new_multi_thread()
            .worker_threads(n)
            .enable_all()
            .build()?,
    };
    runtime.block_on(run(args))
}

async fn run(args: Args) -> Result<()> {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        // `kube=warn` would also match `kube_codegen_runtime` (targets match by prefix).
        .unwrap_or_else(|_| "info,kube=warn,kube_codegen_runtime=info".into());
    if args.log_format == "json" {
        tracing_subscriber::fmt()
            .json()
            .with_env_filter(filter)
            .init();
    } else {
        tracing_subscriber::fmt().with_env_filter(filter).init();
    }
    // The config holds credentials: log only where we connect, never the config itself.
    let config = kube_config(&args).await?;
    tracing::info!(server = %config.cluster_url, qps = args.kube_api_qps, burst = args.kube_api_burst, scope = ?args.kube_api_limit_scope, "connecting");
    let options = ClientOptions::new(args.kube_api_qps, args.kube_api_burst)
        .scope(args.kube_api_limit_scope)
        .user_agent(default_user_agent(COMPONENT, env!("CARGO_PKG_VERSION")));
    let (client, requests) = client_with_options(config, &options)?;
    // The webhook first: reading Foo in a version other than the stored one needs it.
    let webhook = match args.conversion_webhook_addr {
        Some(addr) => Some(
            sample_controller::conversion::bind(addr, &args.conversion_webhook_cert_dir).await?,
        ),
        None => None,
    };
    if args.install_crds {
        install_crds(&client, &args).await?;
    }
    let clientset = Clientset::new(client.clone());

    let member = if args.shards == "auto" {
        if args.leader_elect {
            anyhow::bail!(
                "--shards auto and --leader-elect exclude each other: in a shard group every replica works (on its slots)"
            );
        }
        let (namespace, identity) = lease_place(&args.shard_namespace, &args.shard_identity);
        tracing::info!(group = %args.shard_group, %namespace, %identity, "sharding: --shards auto joins a shard group; the Foo controller runs on the builder");
        // ANCHOR: shard_member
        let member = ShardMember::new(
            client.clone(),
            GroupConfig::new(&args.shard_group, namespace, identity),
        )?;
        // ANCHOR_END: shard_member
        if let Some(mode) = args.shard_mode.forced() {
            tracing::info!(%mode, "sharding: --shard-mode forces {mode} mode");
            member.gate().set_mode(mode);
        }
        Some(member)
    } else {
        None
    };
    let audit = match &args.audit_log {
        Some(path) => {
            let replica = member
                .as_ref()
                .map(|m| m.config().identity.clone())
                .or_else(|| args.leader_elect_identity.clone())
                .unwrap_or_else(|| "sample-controller".to_owned());
            Some(Arc::new(
                sample_controller::audit::Audit::open(path, &replica)
                    .with_context(|| format!("opening the audit log {}", path.display()))?,
            ))
        }
        None => None,
    };

    let running = Arc::new(Running {
        foo_queue: WorkQueue::new("foos"),
        tr_queue: WorkQueue::new("testresources"),
        foo_metrics: Arc::default(),
        tr_metrics: Arc::default(),
        foo_builder_metrics: Arc::default(),
        shard: member.as_ref().map(ShardMember::gate),
        foos_cached: std::sync::OnceLock::new(),
        deployments_cached: std::sync::OnceLock::new(),
        audit,
    });
    let (ready_tx, ready_rx) = watch::channel(false);
    let (stop_tx, stop_rx) = watch::channel(false);
    let stop_tx = Arc::new(stop_tx);
    let stopped = {
        let rx = stop_rx.clone();
        move || {
            let mut rx = rx.clone();
            async move {
                let _ = rx.wait_for(|s| *s).await;
            }
        }
    };

    let health_routes: serve::Routes = {
        let ready = ready_rx.clone();
        Arc::new(move |path: &str| match path {
            "/healthz" | "/livez" => Some((200, "ok\n".into())),
            "/readyz" if *ready.borrow() => Some((200, "ok\n".into())),
            "/readyz" => Some((503, "caches not synced\n".into())),
            _ => None,
        })
    };
    let metrics_routes: serve::Routes = {
        let running = running.clone();
        let requests = requests.clone();
        Arc::new(move |path: &str| {
            (path == "/metrics").then(|| (200, metrics_text(&running, &requests)))
        })
    };
    let health = tokio::spawn(serve::serve(args.health_addr, health_routes, stopped()));
    let webhook = webhook.map(|w| tokio::spawn(sample_controller::conversion::serve(w, stopped())));
    let metrics = tokio::spawn(serve::serve(args.metrics_addr, metrics_routes, stopped()));
    let signalled = stop_tx.clone();
    tokio::spawn(async move {
        shutdown_signal().await;
        let _ = signalled.send(true);
    });
    // The shard group: on SIGTERM the member closes its gate (reconciles in flight are
    // dropped), frees its slots and releases its Lease, so the others take over at once.
    // ANCHOR: shard_run
    let member = member.map(|m| tokio::spawn(m.run(stopped())));
    // ANCHOR_END: shard_run

    // The runtime's manager: the controllers run only while this replica leads (with
    // --leader-elect) and drain on SIGTERM; the Lease is released on the way out.
    let mut manager = Manager::new().graceful_shutdown_on(stopped());
    if args.leader_elect {
        let (namespace, identity) =
            lease_place(&args.leader_elect_namespace, &args.leader_elect_identity);
        let config =
            LeaderElectionConfig::new(&args.leader_elect_lease_name, &namespace, &identity);
        tracing::info!(%identity, lease = %args.leader_elect_lease_name, %namespace, "leader election");
        manager = manager.leader_election(LeaderElector::new(client.clone(), config)?);
    }
    let run_args = args.clone();
    let running2 = running.clone();
    let (failed_tx, mut failed_rx) = tokio::sync::mpsc::unbounded_channel();
    let mut warm = None;
    let manager = if args.leader_elect && args.warm_standby {
        // A warm standby: the controllers run (caches syncing) from now; the manager's
        // runnable, started on winning the Lease, only lets the workers go, and on the
        // loss of the Lease or shutdown stops them and waits for their drain, before the
        // Lease is released.
        let (lead_tx, lead_rx) = watch::channel(false);
        let (halt_tx, halt_rx) = watch::channel(false);
        let (done_tx, done_rx) = watch::channel(false);
        let lead = async move {
            let mut rx = lead_rx;
            let _ = rx.wait_for(|l| *l).await;
        };
        let halted = stopped();
        let stop = async move {
            let mut rx = halt_rx;
            tokio::select! {
                () = halted => {}
                _ = rx.wait_for(|h| *h) => {}
            }
        };
        warm = Some(tokio::spawn(async move {
            let result =
                run_controllers(&run_args, clientset, ready_tx, &running2, lead, stop).await;
            if result.is_err() {
                // A standby whose caches cannot sync must not sit there as if healthy:
                // stop the whole process (the error is returned below).
                let _ = stop_tx.send(true);
            }
            let _ = done_tx.send(true);
            result
        }));
        tracing::info!("warm standby: informers start before the Lease is won");
        manager.add_runnable(move |stop: StopToken| async move {
            let _ = lead_tx.send(true);
            let (mut done, mut ended) = (done_rx.clone(), done_rx);
            tokio::select! {
                () = stop.stopped() => {
                    let _ = halt_tx.send(true);
                    let _ = done.wait_for(|d| *d).await.map(|_| ());
                }
                // The controllers ended by themselves (an error): nothing left to lead for.
                () = async { let _ = ended.wait_for(|d| *d).await; } => {}
            }
        })
    } else {
        manager.add_runnable(move |stop: StopToken| async move {
            let stopped = async move { stop.stopped().await };
            let lead = std::future::ready(());
            if let Err(e) =
                run_controllers(&run_args, clientset, ready_tx, &running2, lead, stopped).await
            {
                let _ = failed_tx.send(e);
            }
        })
    };
    let stopped_by = manager.run().await;
    tracing::info!(?stopped_by, "controllers stopped");
    if let Ok(e) = failed_rx.try_recv() {
        return Err(e.context("running the controllers"));
    }
    if let Some(w) = warm {
        // Lost leadership leaves it running (the process exits below); otherwise it has
        // stopped or stops with the shutdown signal.
        if stopped_by != Stopped::LostLeadership {
            w.await?.context("running the controllers")?;
        }
    }
    if stopped_by == Stopped::LostLeadership {
        // Exit non-zero so the replica restarts and competes again.
        anyhow::bail!("lost leadership");
    }
    if let Some(m) = member {
        m.await?;
    }
    let _ = tokio::join!(health, metrics);
    if let Some(w) = webhook {
        w.await??;
    }
    tracing::info!("exiting");
    Ok(())
}
