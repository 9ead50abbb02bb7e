//! Fault injection against a real control plane of our own (a kube-codegen-envtest
//! environment; see `kube_codegen_tests::faults`): the apiserver is SIGKILLed and
//! restarted, etcd history is compacted under a watching informer, a second writer causes
//! a conflict storm, the leader replica is SIGKILLed, the controller is SIGTERMed mid-work,
//! and many Foos are created at once. RELIABILITY.md lists what each scenario injects and
//! checks, and the figures it measured.
//!
//! One test runs the scenarios in sequence (several kill the apiserver they all share) and
//! reports every failure at the end. `KUBE_CODEGEN_FAULTS_ONLY=storm,load` runs a subset
//! (by scenario name) while working on one. Like every e2e test it fails, never skips,
//! when the control-plane binaries are missing.

use std::collections::{BTreeMap, BTreeSet};
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};
use futures::{FutureExt, StreamExt};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::{Client, Resource};
use kube_codegen_runtime::informer::{DeleteEvent, HandlerFuncs, SharedInformerFactory};
use kube_codegen_runtime::store::meta_namespace_key;
use kube_codegen_tests::faults::*;
use kube_codegen_tests::{apply_crd, parse_crd, repo_root};
use sample_api::apis::samplecontroller::v1alpha1::{Foo, FooSpec};
use serde_json::json;

type Scenario = for<'a> fn(&'a FaultEnv) -> Pin<Box<dyn Future<Output = Result<()>> + Send + 'a>>;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn faults() {
    let scenarios: Vec<(&str, Scenario)> = vec![
        ("relist", |e| {
            Box::pin(informer_relists_after_watch_expiry(e))
        }),
        ("restart", |e| {
            Box::pin(apiserver_killed_mid_run(e, "client-go"))
        }),
        ("restart-builder", |e| {
            Box::pin(apiserver_killed_mid_run(e, "builder"))
        }),
        ("storm", |e| {
            Box::pin(conflict_storm(e, "update", "client-go"))
        }),
        ("storm-apply", |e| {
            Box::pin(conflict_storm(e, "apply", "client-go"))
        }),
        // The Foo controller on the runtime's controller builder: the same retries.
        ("storm-builder", |e| {
            Box::pin(conflict_storm(e, "update", "builder"))
        }),
        ("failover", |e| Box::pin(leader_failover(e, "client-go"))),
        ("failover-builder", |e| {
            Box::pin(leader_failover(e, "builder"))
        }),
        ("sigterm", |e| Box::pin(sigterm_during_work(e, "client-go"))),
        ("sigterm-builder", |e| {
            Box::pin(sigterm_during_work(e, "builder"))
        }),
        ("load", |e| Box::pin(bounded_load(e, "client-go"))),
        ("load-builder", |e| Box::pin(bounded_load(e, "builder"))),
    ];
    let only: Option<BTreeSet<String>> = std::env::var("KUBE_CODEGEN_FAULTS_ONLY")
        .ok()
        .filter(|s| !s.trim().is_empty())
        .map(|s| s.split(',').map(|x| x.trim().to_owned()).collect());

    let start = Instant::now();
    let env = FaultEnv::up().await.expect("fault-test control plane up");
    let client = env.client().await.expect("client");
    install_crds(&client).await.expect("CRDs installed");
    // Leases live in the controller's namespace.
    create_namespace(&client, CONTROLLER_NAMESPACE)
        .await
        .expect("controller namespace");
    eprintln!("faults: control plane up in {:?}", start.elapsed());

    let mut failures = vec![];
    for (name, scenario) in scenarios {
        if only.as_ref().is_some_and(|o| !o.contains(name)) {
            continue;
        }
        let t = Instant::now();
        eprintln!("faults: --- {name} ---");
        let result = AssertUnwindSafe(scenario(&env)).catch_unwind().await;
        let outcome = match result {
            Ok(Ok(())) => "ok".to_owned(),
            Ok(Err(e)) => format!("FAILED: {e:#}"),
            Err(panic) => format!(
                "PANICKED: {}",
                panic
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                    .unwrap_or_default()
            ),
        };
        eprintln!("faults: {name}: {outcome} ({:.1?})", t.elapsed());
        if outcome != "ok" {
            failures.push(format!("{name}: {outcome}"));
        }
    }
    eprintln!("faults: total {:.1?}", start.elapsed());
    if !failures.is_empty() {
        env.keep_logs();
    }
    drop(env); // stops the control plane (also on panic, through Drop)
    assert!(
        failures.is_empty(),
        "fault scenarios failed (logs in {DIR}):\n{}",
        failures.join("\n")
    );
}

async fn install_crds(client: &Client) -> Result<()> {
    let dir = repo_root().join("sample-controller/config/crd");
    for entry in std::fs::read_dir(dir)? {
        apply_crd(client, &parse_crd(&std::fs::read_to_string(entry?.path())?)).await?;
    }
    Ok(())
}

fn foo(name: &str, replicas: i32) -> Foo {
    Foo::new(
        name,
        FooSpec {
            deployment_name: format!("{name}-deploy"),
            replicas: Some(replicas),
        },
    )
}

async fn create_namespace(client: &Client, name: &str) -> Result<()> {
    let ns: Namespace = serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Namespace", "metadata": { "name": name },
    }))?;
    Api::<Namespace>::all(client.clone())
        .patch(
            name,
            &PatchParams::apply("kube-codegen-faults").force(),
            &Patch::Apply(&ns),
        )
        .await?;
    Ok(())
}

/// Create a Foo, retrying through apiserver outages; a create whose response was lost may
/// have succeeded, so AlreadyExists counts as created.
async fn create_foo_retrying(api: &Api<Foo>, foo: &Foo, deadline: Duration) -> Result<()> {
    let start = Instant::now();
    loop {
        match api.create(&PostParams::default(), foo).await {
            Ok(_) => return Ok(()),
            Err(kube::Error::Api(e)) if e.code == 409 => return Ok(()),
            Err(e) if start.elapsed() > deadline => {
                return Err(e).context("creating a Foo through the outage");
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(300)).await,
        }
    }
}

/// What is not converged in `ns`: a Foo without its Deployment (controlled by it, with its
/// replicas), or without status. Empty when every Foo is done; `expected` Foos must exist.
async fn unconverged(client: &Client, ns: &str, expected: usize) -> Result<Vec<String>> {
    let foos: Api<Foo> = Api::namespaced(client.clone(), ns);
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), ns);
    let foos = foos.list(&ListParams::default()).await?.items;
    let deployments: BTreeMap<String, Deployment> = deployments
        .list(&ListParams::default())
        .await?
        .items
        .into_iter()
        .map(|d| (d.metadata.name.clone().unwrap_or_default(), d))
        .collect();
    let mut problems = vec![];
    if foos.len() != expected {
        problems.push(format!("{} Foos, expected {expected}", foos.len()));
    }
    for f in &foos {
        let name = f.metadata.name.clone().unwrap_or_default();
        match deployments.get(&f.spec.deployment_name) {
            None => problems.push(format!("{name}: no Deployment")),
            Some(d) => {
                let owned =
                    d.metadata.owner_references.iter().flatten().any(|r| {
                        r.controller == Some(true) && Some(&r.uid) == f.metadata.uid.as_ref()
                    });
                if !owned {
                    problems.push(format!("{name}: Deployment not controlled by it"));
                }
                if d.spec.replicas != f.spec.replicas {
                    problems.push(format!("{name}: Deployment replicas differ"));
                }
            }
        }
        if f.status.is_none() {
            problems.push(format!("{name}: no status"));
        }
    }
    Ok(problems)
}

async fn wait_converged(
    client: &Client,
    ns: &str,
    expected: usize,
    timeout: Duration,
) -> Result<()> {
    let mut last = vec![];
    let start = Instant::now();
    loop {
        match unconverged(client, ns, expected).await {
            Ok(p) if p.is_empty() => return Ok(()),
            Ok(p) => last = p,
            Err(e) => last = vec![format!("{e:#}")],
        }
        if start.elapsed() > timeout {
            let n = last.len();
            last.truncate(10);
            bail!("{ns} not converged after {timeout:?}: {n} problems, e.g. {last:?}");
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

fn metric(m: &BTreeMap<String, f64>, series: &str) -> f64 {
    m.get(series).copied().unwrap_or(0.0)
}

const RETRIES: &str = "workqueue_retries_total{name=\"foos\"}";
const OK: &str = "controller_reconcile_total{controller=\"foo\",result=\"success\"}";
const ERR: &str = "controller_reconcile_total{controller=\"foo\",result=\"error\"}";
const DROPPED: &str = "controller_reconcile_total{controller=\"foo\",result=\"dropped\"}";

/// The series the bounds are about, for messages.
fn summary(m: &BTreeMap<String, f64>) -> String {
    format!(
        "reconciles ok {} err {} dropped {}, retries {}",
        metric(m, OK),
        metric(m, ERR),
        metric(m, DROPPED),
        metric(m, RETRIES)
    )
}

fn reconciles(m: &BTreeMap<String, f64>) -> f64 {
    metric(m, OK) + metric(m, ERR) + metric(m, DROPPED)
}

fn block<T>(f: impl FnOnce() -> T) -> T {
    tokio::task::block_in_place(f)
}

// ---------------------------------------------------------------------------------------
// 1. The apiserver is SIGKILLed while Foos are being created, and restarted.

/// `style` is `--foo-controller`: the ported client-go loop or the builder (here and in
/// the scenarios below).
async fn apiserver_killed_mid_run(env: &FaultEnv, style: &str) -> Result<()> {
    let ns = format!("faults-restart-{style}");
    let (ns, name) = (ns.as_str(), format!("restart-{style}"));
    const N: usize = 60;
    let client = env.client().await?;
    create_namespace(&client, ns).await?;
    let mut c = ControllerProcess::start(
        &name,
        &env.kubeconfig,
        &["--namespace", ns, "--foo-controller", style],
    )?;
    c.wait_ready(Duration::from_secs(60)).await?;

    // A creator that keeps going through the outage (a client of its own: the old
    // connections die with the apiserver).
    let creator = {
        let api: Api<Foo> = Api::namespaced(env.client().await?, ns);
        tokio::spawn(async move {
            for i in 0..N {
                create_foo_retrying(&api, &foo(&format!("foo-{i}"), 1), Duration::from_secs(90))
                    .await?;
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            anyhow::Ok(())
        })
    };
    tokio::time::sleep(Duration::from_millis(1500)).await;
    block(|| env.kill_apiserver())?;
    let killed = Instant::now();
    tokio::time::sleep(Duration::from_secs(5)).await;
    env.start_apiserver().await?;
    eprintln!("faults: apiserver down for {:.1?}", killed.elapsed());
    creator.await??;

    wait_converged(&client, ns, N, Duration::from_secs(120))
        .await
        .with_context(|| c.logs())?;
    c.assert_healthy();
    let m = c.metrics()?;
    ensure!(
        metric(&m, DROPPED) == 0.0,
        "keys were dropped: {}",
        summary(&m)
    );
    ensure!(
        metric(&m, OK) >= N as f64,
        "fewer successful reconciles than Foos: {}",
        summary(&m)
    );
    ensure!(
        c.logs().contains("watch failed"),
        "the informers never saw the outage (the test did not test anything)"
    );
    let status = {
        c.sigterm()?;
        c.wait_exit(Duration::from_secs(30)).await?
    };
    ensure!(status.success(), "exit status {status:?}\n{}", c.logs());
    Ok(())
}

// ---------------------------------------------------------------------------------------
// 2. A watch that cannot resume (410 Gone): the informer relists and its cache equals the
//    server's state.

#[derive(Default, Debug)]
struct Seen {
    adds: Vec<String>,
    updates: Vec<String>,
    deletes: Vec<String>,
    tombstones: Vec<String>,
}

async fn informer_relists_after_watch_expiry(env: &FaultEnv) -> Result<()> {
    const NS: &str = "faults-relist";
    let client = env.client().await?;
    create_namespace(&client, NS).await?;
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), NS);
    let cm = |name: &str, v: &str| -> ConfigMap {
        serde_json::from_value(json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": { "name": name }, "data": { "v": v },
        }))
        .expect("configmap")
    };
    for i in 0..30 {
        cms.create(&PostParams::default(), &cm(&format!("cm-{i}"), "0"))
            .await?;
    }

    // The informer talks to the apiserver through a proxy we can cut.
    let proxy = Proxy::start(env.apiserver_port)?;
    let factory = SharedInformerFactory::builder(env.client_via(proxy.port).await?)
        .with_namespace(NS)
        .build();
    let informer = factory.informer_for::<ConfigMap>();
    let seen = Arc::new(Mutex::new(Seen::default()));
    let (s1, s2, s3) = (seen.clone(), seen.clone(), seen.clone());
    informer.add_event_handler(
        HandlerFuncs::new()
            .on_add(move |o: Arc<ConfigMap>, _| {
                s1.lock().unwrap().adds.push(meta_namespace_key(o.as_ref()))
            })
            .on_update(move |old: Arc<ConfigMap>, new: Arc<ConfigMap>| {
                if old.metadata.resource_version != new.metadata.resource_version {
                    s2.lock()
                        .unwrap()
                        .updates
                        .push(meta_namespace_key(new.as_ref()))
                }
            })
            .on_delete(move |d: DeleteEvent<ConfigMap>| {
                let mut s = s3.lock().unwrap();
                match &d {
                    DeleteEvent::Object(o) => s.deletes.push(meta_namespace_key(o.as_ref())),
                    DeleteEvent::Tombstone(t) => s.tombstones.push(t.key.to_string()),
                }
            }),
    );
    factory.start();
    factory
        .wait_for_cache_sync(Duration::from_secs(30))
        .await
        .context("initial sync")?;
    let cache_state = || -> BTreeMap<String, String> {
        informer
            .store()
            .list()
            .iter()
            .map(|o| {
                (
                    meta_namespace_key(o.as_ref()),
                    o.metadata.resource_version.clone().unwrap_or_default(),
                )
            })
            .collect()
    };
    let server_state = || async {
        let list = cms.list(&ListParams::default()).await?;
        anyhow::Ok(
            list.items
                .iter()
                .map(|o| {
                    (
                        meta_namespace_key(o),
                        o.metadata.resource_version.clone().unwrap_or_default(),
                    )
                })
                .collect::<BTreeMap<_, _>>(),
        )
    };
    ensure!(
        cache_state() == server_state().await?,
        "initial cache differs"
    );
    *seen.lock().unwrap() = Seen::default();

    // Partition the informer, change things it cannot see, and make the history it would
    // resume from unavailable: compact etcd, and restart the apiserver so its watch cache
    // (which would otherwise still serve the old events) starts over.
    proxy.partition();
    for i in 0..10 {
        cms.delete(&format!("cm-{i}"), &DeleteParams::default())
            .await?;
    }
    for i in 10..20 {
        cms.patch(
            &format!("cm-{i}"),
            &PatchParams::default(),
            &Patch::Merge(json!({"data": {"v": "1"}})),
        )
        .await?;
    }
    for i in 0..10 {
        cms.create(&PostParams::default(), &cm(&format!("new-{i}"), "0"))
            .await?;
    }
    let revision = block(|| etcd_revision(&env.etcd_url))?;
    block(|| etcd_compact(&env.etcd_url, revision))?;
    block(|| env.kill_apiserver())?;
    env.start_apiserver().await?;
    proxy.heal();

    let want = server_state().await?;
    wait_for(
        "the informer's cache to equal the server's state",
        Duration::from_secs(90),
        || async { Ok((cache_state() == want).then_some(())) },
    )
    .await
    .with_context(|| format!("cache {:?}\nserver {want:?}", cache_state()))?;

    let seen = std::mem::take(&mut *seen.lock().unwrap());
    let keys = |prefix: &str, r: std::ops::Range<usize>| -> BTreeSet<String> {
        r.map(|i| format!("{NS}/{prefix}-{i}")).collect()
    };
    let set = |v: &[String]| v.iter().cloned().collect::<BTreeSet<_>>();
    // Deletions missed while partitioned arrive as tombstones: proof of a relist (a resumed
    // watch would have delivered them as ordinary deletes).
    ensure!(
        set(&seen.tombstones) == keys("cm", 0..10) && seen.deletes.is_empty(),
        "deletes: {seen:?}"
    );
    ensure!(
        set(&seen.updates) == keys("cm", 10..20),
        "updates: {seen:?}"
    );
    ensure!(set(&seen.adds) == keys("new", 0..10), "adds: {seen:?}");
    factory.shutdown();
    Ok(())
}

// ---------------------------------------------------------------------------------------
// 3. Conflict storm: a second writer keeps changing the Foos and their Deployments.

/// Events the controller's informers deliver (resyncs excluded), counted by an informer of
/// our own on the same namespace.
#[derive(Default)]
struct EventCount(std::sync::atomic::AtomicU64);

impl EventCount {
    fn inc(&self) {
        self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }
    fn get(&self) -> u64 {
        self.0.load(std::sync::atomic::Ordering::Relaxed)
    }
}

fn count_events<K>(informer: &kube_codegen_runtime::informer::Informer<K>, count: Arc<EventCount>)
where
    K: Resource + Clone + serde::de::DeserializeOwned + std::fmt::Debug + Send + Sync + 'static,
{
    let (a, u, d) = (count.clone(), count.clone(), count);
    informer.add_event_handler_with_resync(
        HandlerFuncs::new()
            .on_add(move |_: Arc<K>, _| a.inc())
            .on_update(move |old: Arc<K>, new: Arc<K>| {
                if old.meta().resource_version != new.meta().resource_version {
                    u.inc()
                }
            })
            .on_delete(move |_| d.inc()),
        None,
    );
}

/// `mode` is the controller's `--write-mode`. With `update` the storm makes the
/// controller's cached copies stale, so its writes fail with 409 and are retried: the
/// retry path is what is tested. With `apply` (server-side apply, forced) there is no
/// optimistic lock to lose: the same storm must cause no failed reconcile at all.
/// `style` is `--foo-controller`: the ported client-go loop or the builder.
async fn conflict_storm(env: &FaultEnv, mode: &str, style: &str) -> Result<()> {
    let ns = format!("faults-storm-{mode}-{style}");
    let ns = ns.as_str();
    const N: usize = 20;
    const STORM: Duration = Duration::from_secs(20);
    let client = env.client().await?;
    create_namespace(&client, ns).await?;
    let foos: Api<Foo> = Api::namespaced(client.clone(), ns);
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), ns);
    for i in 0..N {
        foos.create(&PostParams::default(), &foo(&format!("foo-{i}"), 1))
            .await?;
    }

    // Count every event the controller will see, from before it starts.
    let factory = SharedInformerFactory::builder(client.clone())
        .with_namespace(ns)
        .build();
    let events = Arc::new(EventCount::default());
    count_events(&factory.informer_for::<Foo>(), events.clone());
    count_events(&factory.informer_for::<Deployment>(), events.clone());
    factory.start();
    factory.wait_for_cache_sync(Duration::from_secs(30)).await?;

    let started = Instant::now();
    let mut c = ControllerProcess::start(
        &format!("storm-{mode}-{style}"),
        &env.kubeconfig,
        &[
            "--namespace",
            ns,
            "--write-mode",
            mode,
            "--foo-controller",
            style,
        ],
    )?;
    c.wait_ready(Duration::from_secs(60)).await?;
    wait_converged(&client, ns, N, Duration::from_secs(60)).await?;

    // The storm: annotations and replicas on the Foos (so the controller must write the
    // Deployments), labels on the Deployments (so its cached copies go stale: 409s).
    let storm_start = Instant::now();
    let mut writes = 0u64;
    let mut round = 0u64;
    while storm_start.elapsed() < STORM {
        for i in 0..N {
            let mut patch = json!({"metadata": {"annotations": {"storm": round.to_string()}}});
            if round.is_multiple_of(2) {
                patch["spec"] = json!({"replicas": 1 + (round as usize / 2 + i) % 3});
            }
            foos.patch(
                &format!("foo-{i}"),
                &PatchParams::default(),
                &Patch::Merge(patch),
            )
            .await?;
            deployments
                .patch(
                    &format!("foo-{i}-deploy"),
                    &PatchParams::default(),
                    &Patch::Merge(json!({"metadata": {"labels": {"storm": round.to_string()}}})),
                )
                .await?;
            writes += 2;
        }
        round += 1;
    }
    eprintln!("faults: storm: {writes} writes in {round} rounds");
    wait_converged(&client, ns, N, Duration::from_secs(60))
        .await
        .with_context(|| c.logs())?;
    let t = started.elapsed().as_secs_f64();
    // Let in-flight retries of the storm settle before reading the counters.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let m = c.metrics()?;
    let e = events.get() as f64;
    let (retries, errors, total) = (metric(&m, RETRIES), metric(&m, ERR), reconciles(&m));
    // The bound (RELIABILITY.md): every reconcile is started by an informer event (at most
    // one per event), a resync (N per 30 s period), or a rate-limited retry falling due;
    // the token bucket (10 qps, burst 100) lets at most 100 + 10 t retries fall due in t
    // seconds. Every failed reconcile is retried exactly once, so retries == errors.
    let t_now = started.elapsed().as_secs_f64();
    let bound = e + (N as f64) * ((t_now / 30.0).floor() + 1.0) + 100.0 + 10.0 * t_now;
    eprintln!(
        "faults: storm: t={t:.1}s events={e} reconciles={total} errors={errors} retries={retries} bound={bound:.0}"
    );
    if mode == "update" {
        ensure!(
            errors > 0.0,
            "the storm caused no failed reconcile: it tested nothing ({})",
            summary(&m)
        );
    } else {
        ensure!(
            errors == 0.0,
            "server-side apply lost to the storm: {errors} failed reconciles ({})",
            summary(&m)
        );
    }
    ensure!(
        retries == errors,
        "retries ({retries}) != failed reconciles ({errors})"
    );
    ensure!(
        total <= bound,
        "{total} reconciles exceed the bound {bound:.0} (events {e}, t {t_now:.1}s)"
    );

    // No hot loop: once the storm is over, every reconcile has a cause: an informer event
    // (kube-controller-manager still settles the Deployments' status for a while), a
    // resync (at most one round of N in 10 s), or work already there when the window opens
    // (the queue's depth then, and one reconcile in flight per worker: the test's watch can
    // count an event before the controller has reconciled it). Nothing fails, so nothing
    // is retried.
    const WORKERS: f64 = 2.0; // the sample-controller's default `--workers`
    let (e0, before) = (events.get(), c.metrics()?);
    let backlog = metric(&before, "workqueue_depth{name=\"foos\"}") + WORKERS;
    tokio::time::sleep(Duration::from_secs(10)).await;
    let (e1, after) = (events.get(), c.metrics()?);
    let d = |s: &str| metric(&after, s) - metric(&before, s);
    let quiet = format!(
        "{} -> {} (events {e0} -> {e1})",
        summary(&before),
        summary(&after)
    );
    eprintln!("faults: storm: quiet 10 s: {quiet}");
    ensure!(
        d(RETRIES) == 0.0 && d(ERR) == 0.0,
        "retries keep coming with nobody writing: {quiet}"
    );
    ensure!(
        reconciles(&after) - reconciles(&before) <= (e1 - e0) as f64 + N as f64 + backlog,
        "reconciles without a cause (hot loop): {quiet} (backlog at the start {backlog})"
    );
    c.assert_healthy();
    factory.shutdown();
    Ok(())
}

// ---------------------------------------------------------------------------------------
// 4. Leader failover: two replicas, the leader is SIGKILLed.

async fn lease_holder(client: &Client, name: &str) -> Result<Option<String>> {
    let leases: Api<Lease> = Api::namespaced(client.clone(), CONTROLLER_NAMESPACE);
    Ok(leases
        .get_opt(name)
        .await?
        .and_then(|l| l.spec)
        .and_then(|s| s.holder_identity)
        .filter(|h| !h.is_empty()))
}

async fn leader_failover(env: &FaultEnv, style: &str) -> Result<()> {
    let names = [
        format!("faults-failover-{style}"),
        format!("replica-a-{style}"),
        format!("replica-b-{style}"),
    ];
    let [ns, ra, rb] = names.each_ref().map(String::as_str);
    let lease = ns;
    // The ported client-go loop runs with a warm standby (the default: informers synced
    // before the Lease is won), the builder with a cold one (`--warm-standby=false`), so
    // both paths fail over.
    let warm = style == "client-go";
    let warm_flag = format!("--warm-standby={warm}");
    let client = env.client().await?;
    create_namespace(&client, ns).await?;
    let replica = |id: &str, kubeconfig: &std::path::Path| {
        ControllerProcess::start(
            id,
            kubeconfig,
            &[
                "--namespace",
                ns,
                "--leader-elect",
                "--leader-elect-lease-name",
                lease,
                "--leader-elect-namespace",
                CONTROLLER_NAMESPACE,
                "--leader-elect-identity",
                id,
                "--foo-controller",
                style,
                &warm_flag,
            ],
        )
    };
    // Distinct ServiceAccounts, so the audit log tells the replicas' writes apart.
    let (kc_a, kc_b) = (
        env.service_account_kubeconfig(ra).await?,
        env.service_account_kubeconfig(rb).await?,
    );
    let user = |sa: &str| format!("system:serviceaccount:{CONTROLLER_NAMESPACE}:{sa}");
    let mut a = replica(ra, &kc_a)?;
    wait_for("replica-a leading", Duration::from_secs(30), || async {
        Ok((lease_holder(&client, lease).await?.as_deref() == Some(ra)).then_some(()))
    })
    .await?;
    a.wait_ready(Duration::from_secs(60)).await?;
    let mut b = replica(rb, &kc_b)?;

    let foos: Api<Foo> = Api::namespaced(client.clone(), ns);
    for i in 0..10 {
        foos.create(&PostParams::default(), &foo(&format!("foo-{i}"), 1))
            .await?;
    }
    wait_converged(&client, ns, 10, Duration::from_secs(60))
        .await
        .with_context(|| a.logs())?;
    if warm {
        // Warm: the standby's caches hold every Foo before it leads (and it is ready:
        // it serves its webhooks and probes like the leader).
        wait_for(
            "the warm standby's cache to hold the 10 Foos",
            Duration::from_secs(30),
            || async {
                let cached = http_get(b.metrics_port, "/metrics").and_then(|(_, body)| {
                    body.lines().find_map(|l| {
                        l.strip_prefix("sample_controller_foos_cached ")?
                            .trim()
                            .parse::<f64>()
                            .ok()
                    })
                });
                Ok((cached == Some(10.0)).then_some(()))
            },
        )
        .await
        .with_context(|| b.logs())?;
        ensure!(
            http_get(b.health_port, "/readyz").map(|r| r.0) == Some(200),
            "the warm standby does not report ready"
        );
        ensure!(
            b.logs()
                .contains("warm standby: informers start before the Lease is won"),
            "the standby does not say it runs warm"
        );
    } else {
        ensure!(
            http_get(b.health_port, "/readyz").map(|r| r.0) == Some(503),
            "the cold standby replica reports ready"
        );
    }
    // Let the standby see a few renewals, as it would in a long-running deployment.
    tokio::time::sleep(Duration::from_secs(3)).await;

    let killed_at = k8s_openapi::jiff::Timestamp::now();
    let killed = Instant::now();
    a.sigkill()?;
    for i in 10..20 {
        foos.create(&PostParams::default(), &foo(&format!("foo-{i}"), 1))
            .await?;
    }
    wait_for("replica-b leading", Duration::from_secs(45), || async {
        Ok((lease_holder(&client, lease).await?.as_deref() == Some(rb)).then_some(()))
    })
    .await
    .with_context(|| b.logs())?;
    let takeover = killed.elapsed();
    wait_converged(&client, ns, 20, Duration::from_secs(60))
        .await
        .with_context(|| b.logs())?;
    // Lease 15 s, counted from the standby's last observed renewal (at most the kill), plus
    // one jittered retry period (2 s x 2.2) and request slack.
    eprintln!("faults: failover: replica-b took over {takeover:.1?} after the SIGKILL");
    ensure!(
        takeover <= Duration::from_secs(25),
        "takeover took {takeover:?}, more than the lease duration (15 s) + retry slack"
    );

    // The audit log: the replicas' writes to Foo status and Deployments never interleave.
    let writes = |who: &str| -> Result<Vec<AuditEvent>> {
        Ok(env
            .audit_events()?
            .into_iter()
            .filter(|e| {
                e.username == user(who)
                    && e.namespace == ns
                    && matches!(e.verb.as_str(), "create" | "update" | "patch")
                    && ((e.resource == "foos" && e.subresource == "status")
                        || (e.resource == "deployments" && e.subresource.is_empty()))
            })
            .collect())
    };
    let (wa, wb) = (writes(ra)?, writes(rb)?);
    ensure!(
        !wa.is_empty() && !wb.is_empty(),
        "audit log: {} writes by replica-a, {} by replica-b",
        wa.len(),
        wb.len()
    );
    let last_a = wa
        .iter()
        .map(|e| parse_time(&e.completed))
        .collect::<Result<Vec<_>>>()?;
    let first_b = wb
        .iter()
        .map(|e| parse_time(&e.received))
        .collect::<Result<Vec<_>>>()?;
    let (last_a, first_b) = (
        *last_a.iter().max().expect("non-empty"),
        *first_b.iter().min().expect("non-empty"),
    );
    eprintln!(
        "faults: failover: {} writes by replica-a (last {last_a}), {} by replica-b (first {first_b}), kill at {killed_at}",
        wa.len(),
        wb.len()
    );
    ensure!(
        last_a < first_b,
        "the replicas' writes interleave: replica-a wrote until {last_a}, replica-b from {first_b}"
    );
    ensure!(
        first_b > killed_at,
        "replica-b wrote at {first_b}, before the leader was killed at {killed_at}"
    );
    b.assert_healthy();
    b.sigterm()?;
    let status = b.wait_exit(Duration::from_secs(30)).await?;
    ensure!(status.success(), "replica-b exit status {status:?}");
    Ok(())
}

// ---------------------------------------------------------------------------------------
// 5. SIGTERM while items are being processed.

async fn sigterm_during_work(env: &FaultEnv, style: &str) -> Result<()> {
    let names = [
        format!("faults-sigterm-{style}"),
        format!("terminator-{style}"),
    ];
    let [ns, identity] = names.each_ref().map(String::as_str);
    let lease = ns;
    const N: usize = 120;
    let client = env.client().await?;
    create_namespace(&client, ns).await?;
    let foos: Api<Foo> = Api::namespaced(client.clone(), ns);
    futures::stream::iter(0..N)
        .map(|i| {
            let foos = foos.clone();
            async move {
                foos.create(&PostParams::default(), &foo(&format!("foo-{i}"), 1))
                    .await
            }
        })
        .buffer_unordered(8)
        .collect::<Vec<_>>()
        .await
        .into_iter()
        .collect::<Result<Vec<_>, _>>()?;

    // A slow controller (5 requests/s), so that most Foos are still queued at SIGTERM.
    let mut c = ControllerProcess::start(
        ns,
        &env.kubeconfig,
        &[
            "--namespace",
            ns,
            "--leader-elect",
            "--leader-elect-lease-name",
            lease,
            "--leader-elect-namespace",
            CONTROLLER_NAMESPACE,
            "--leader-elect-identity",
            identity,
            "--foo-controller",
            style,
            "--kube-api-qps",
            "5",
            "--kube-api-burst",
            "5",
        ],
    )?;
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), ns);
    let done_before = wait_for("work in progress", Duration::from_secs(60), || async {
        let n = deployments
            .list_metadata(&ListParams::default())
            .await?
            .items
            .len();
        Ok((n >= 3).then_some(n))
    })
    .await
    .with_context(|| c.logs())?;
    ensure!(
        done_before < N,
        "the controller finished before the SIGTERM"
    );
    let t = Instant::now();
    c.sigterm()?;
    let status = c.wait_exit(Duration::from_secs(30)).await?;
    let stop_time = t.elapsed();
    let logs = c.logs();
    eprintln!("faults: sigterm: exited {status:?} {stop_time:.1?} after SIGTERM");
    ensure!(status.success(), "exit status {status:?}\n{logs}");
    ensure!(!logs.contains("panicked"), "panic:\n{logs}");
    ensure!(
        !logs.contains("dropping it"),
        "in-flight work was cut off instead of finishing:\n{logs}"
    );
    ensure!(
        logs.contains("workers stopped"),
        "the workers did not drain:\n{logs}"
    );
    let holder = Api::<Lease>::namespaced(client.clone(), CONTROLLER_NAMESPACE)
        .get(lease)
        .await?
        .spec
        .and_then(|s| s.holder_identity)
        .unwrap_or_default();
    ensure!(holder.is_empty(), "the Lease is still held by {holder:?}");

    // Every item that was started finished: a Foo whose Deployment the controller created
    // also got its status (the next step of the same reconcile).
    let with_status: BTreeSet<String> = foos
        .list(&ListParams::default())
        .await?
        .items
        .into_iter()
        .filter(|f| f.status.is_some())
        .filter_map(|f| f.metadata.name)
        .collect();
    let half_done: Vec<String> = deployments
        .list_metadata(&ListParams::default())
        .await?
        .items
        .into_iter()
        .filter_map(|d| d.metadata.name)
        .map(|d| d.trim_end_matches("-deploy").to_owned())
        .filter(|f| !with_status.contains(f))
        .collect();
    ensure!(
        half_done.is_empty(),
        "reconciles cut in the middle (Deployment created, status not written): {half_done:?}"
    );
    Ok(())
}

// ---------------------------------------------------------------------------------------
// 6. Bounded load: many Foos in many namespaces.

async fn bounded_load(env: &FaultEnv, style: &str) -> Result<()> {
    // Namespaces of their own per loop: the controller watches all namespaces, and the
    // other loop's converged Foos must not count here.
    let prefix = if style == "builder" {
        "loadb-"
    } else {
        "load-"
    };
    let n = env_usize("KUBE_CODEGEN_LOAD_FOOS", 500);
    let namespaces = env_usize("KUBE_CODEGEN_LOAD_NAMESPACES", 10).max(1);
    let qps = std::env::var("KUBE_CODEGEN_LOAD_QPS").unwrap_or_else(|_| "50".into());
    let burst = std::env::var("KUBE_CODEGEN_LOAD_BURST").unwrap_or_else(|_| "100".into());
    let client = env.client().await?;
    for ns in 0..namespaces {
        create_namespace(&client, &format!("{prefix}{ns}")).await?;
    }
    let mut c = ControllerProcess::start(
        &format!("load-{style}"),
        &env.kubeconfig,
        &[
            "--foo-controller",
            style,
            "--workers",
            "4",
            "--kube-api-qps",
            &qps,
            "--kube-api-burst",
            &burst,
        ],
    )?;
    c.wait_ready(Duration::from_secs(60)).await?;
    let start = Instant::now();
    let created = futures::stream::iter(0..n)
        .map(|i| {
            let api: Api<Foo> =
                Api::namespaced(client.clone(), &format!("{prefix}{}", i % namespaces));
            async move {
                create_foo_retrying(&api, &foo(&format!("foo-{i}"), 1), Duration::from_secs(60))
                    .await
            }
        })
        .buffer_unordered(16)
        .collect::<Vec<_>>()
        .await;
    created.into_iter().collect::<Result<Vec<_>>>()?;
    let creation = start.elapsed();

    let all_foos: Api<Foo> = Api::all(client.clone());
    let all_deployments: Api<Deployment> = Api::all(client.clone());
    let timeout = Duration::from_secs(120 + n as u64 / 5);
    let poll = Duration::from_millis(if n > 1000 { 3000 } else { 1000 });
    let mut last;
    loop {
        let owned: BTreeSet<(String, String)> = all_deployments
            .list_metadata(&ListParams::default())
            .await?
            .items
            .into_iter()
            .filter(|d| {
                d.metadata
                    .namespace
                    .as_deref()
                    .is_some_and(|n| n.starts_with(prefix))
                    && d.metadata
                        .owner_references
                        .iter()
                        .flatten()
                        .any(|r| r.kind == "Foo" && r.controller == Some(true))
            })
            .map(|d| {
                (
                    d.metadata.namespace.unwrap_or_default(),
                    d.metadata.name.unwrap_or_default(),
                )
            })
            .collect();
        let foos = all_foos.list(&ListParams::default()).await?.items;
        let foos: Vec<_> = foos
            .iter()
            .filter(|f| {
                f.metadata
                    .namespace
                    .as_deref()
                    .is_some_and(|n| n.starts_with(prefix))
            })
            .collect();
        let with_deployment = foos
            .iter()
            .filter(|f| {
                owned.contains(&(
                    f.metadata.namespace.clone().unwrap_or_default(),
                    f.spec.deployment_name.clone(),
                ))
            })
            .count();
        let with_status = foos.iter().filter(|f| f.status.is_some()).count();
        last = format!(
            "{} Foos, {with_deployment} with their Deployment, {with_status} with status",
            foos.len()
        );
        if foos.len() == n && with_deployment == n && with_status == n {
            break;
        }
        c.assert_healthy();
        if start.elapsed() > timeout {
            bail!(
                "load not converged after {timeout:?}: {last}\n{}",
                tail(&c.logs())
            );
        }
        tokio::time::sleep(poll).await;
    }
    let converged = start.elapsed();
    let rss = c.peak_rss_kib().unwrap_or_default();
    let m = c.metrics()?;
    let line = format!(
        "load: {n} Foos in {namespaces} namespaces (qps {qps}, burst {burst}, 4 workers): created in {creation:.1?}, all converged {converged:.1?} after the first create; controller peak RSS (VmHWM) {:.1} MiB; reconciles ok {} err {} retries {}",
        rss as f64 / 1024.0,
        metric(&m, OK),
        metric(&m, ERR),
        metric(&m, RETRIES)
    );
    eprintln!("faults: {line} ({last})");
    std::fs::write(format!("{DIR}/load-{n}.txt"), format!("{line}\n"))?;
    c.assert_healthy();
    c.sigterm()?;
    let status = c.wait_exit(Duration::from_secs(30)).await?;
    ensure!(status.success(), "exit status {status:?}");
    Ok(())
}

fn tail(s: &str) -> String {
    let lines: Vec<&str> = s.lines().collect();
    lines[lines.len().saturating_sub(30)..].join("\n")
}
