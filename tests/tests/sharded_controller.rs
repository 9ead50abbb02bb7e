//! E2E: three sample-controller processes in one shard group (`--shards auto`) on the real
//! kube-apiserver v1.37.2, with its feature gate `ShardedListAndWatch` on (selector mode:
//! the server filters each slot's list and watch by `shardSelector`) and off (label mode:
//! the replicas label the Foos with their slot and list each slot by label selector). In
//! both, the Deployments carry their Foo's slot label and are cached by the Foo's replica.
//!
//! The replicas converge the Foos, each holding 21 or 22 of the 64 slots and caching exactly
//! the Foos of its slots; then, each
//! time while they work on an update of every Foo, one is SIGTERMed, one is cut from the
//! API server by a proxy (and healed), and one is SIGKILLed. The audit log of every
//! reconcile's start and end (per key, replica and time) must show no key reconciled by two
//! replicas at once, and every Foo converged by the survivor.
//!
//! Each test starts a control plane of its own (the gate is a flag of the API server); a
//! missing binary fails them. They run one at a time (a mutex): six controllers and two
//! API servers at once are too much for the two cores CI has.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use futures::{StreamExt, stream};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::Namespace;
use kube::Client;
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use kube_codegen_envtest::Environment;
use kube_codegen_runtime::sharding::{
    DEFAULT_SLOTS, SlotLabel, SlotTable, TABLE_ANNOTATION, hash_field, slot_of,
};
use kube_codegen_tests::faults::Proxy;
use kube_codegen_tests::{
    apply_crd, eventually, faults, free_port, parse_crd, repo_root, retry_transient,
};
use sample_api::apis::samplecontroller::v1alpha1::{Foo, FooSpec};

const NS: &str = "sharded";
const GROUP: &str = "foos";
const REPLICAS: usize = 3;

/// The Foos of each run: the issue asks for 1,000 in CI; see `FOOS` in the report.
const FOOS: usize = 1000;
/// Of which this many are created after the replicas started.
const LATE: usize = 50;

static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

struct Replica {
    name: String,
    child: Child,
    metrics: u16,
    log: PathBuf,
}

impl Replica {
    fn start(kubeconfig: &Path, name: &str, audit: &Path, dir: &Path) -> Replica {
        let (metrics, health) = (free_port(), free_port());
        let log = dir.join(format!("{name}.log"));
        let child = Command::new(faults::controller_binary())
            .arg("--kubeconfig")
            .arg(kubeconfig)
            .args([
                "--metrics-addr",
                &format!("127.0.0.1:{metrics}"),
                "--health-addr",
                &format!("127.0.0.1:{health}"),
                "--controllers",
                "foo",
                "--workers",
                "2",
                "--shards",
                "auto",
                "--shard-group",
                GROUP,
                "--shard-namespace",
                "default",
                "--shard-identity",
                name,
            ])
            .arg("--audit-log")
            .arg(audit)
            .env("RUST_LOG", "info,kube=warn,kube_codegen_runtime=info")
            // tracing writes to stdout.
            .stdout(std::fs::File::create(&log).unwrap())
            .stderr(Stdio::null())
            .spawn()
            .expect("start sample-controller");
        Replica {
            name: name.to_owned(),
            child,
            metrics,
            log,
        }
    }

    /// A gauge of /metrics.
    fn gauge(&self, name: &str) -> Option<f64> {
        let (_, body) = faults::http_get(self.metrics, "/metrics")?;
        body.lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.trim().parse().ok())
    }

    fn logs(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    fn signal(&self, sig: &str) {
        let ok = Command::new("kill")
            .arg(format!("-{sig}"))
            .arg(self.child.id().to_string())
            .status()
            .unwrap()
            .success();
        assert!(ok, "kill -{sig} {}", self.name);
    }

    fn wait_exit(&mut self, within: Duration) -> std::process::ExitStatus {
        let start = Instant::now();
        while start.elapsed() < within {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!(
            "{} did not exit within {within:?}\n{}",
            self.name,
            self.logs()
        );
    }
}

impl Drop for Replica {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn unix_nanos() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos()
}

fn foo(i: usize) -> Foo {
    Foo::new(
        &format!("foo-{i:04}"),
        FooSpec {
            deployment_name: format!("foo-{i:04}-deploy"),
            replicas: Some(1),
        },
    )
}

/// Creates the Foos numbered `range`, 16 at a time.
async fn create_foos(foos: &Api<Foo>, range: std::ops::Range<usize>) {
    stream::iter(range)
        .for_each_concurrent(16, |i| {
            let foos = foos.clone();
            async move {
                foos.create(&PostParams::default(), &foo(i))
                    .await
                    .unwrap_or_else(|e| panic!("create foo {i}: {e}"));
            }
        })
        .await;
}

/// Every Deployment of the Foos, by name, with its replicas.
async fn deployments(client: &Client) -> BTreeMap<String, i32> {
    Api::<Deployment>::namespaced(client.clone(), NS)
        .list(&ListParams::default())
        .await
        .map(|l| {
            l.items
                .into_iter()
                .map(|d| {
                    let r = d.spec.replicas.unwrap_or_default();
                    (d.metadata.name.unwrap_or_default(), r)
                })
                .collect()
        })
        .unwrap_or_default()
}

/// One reconcile of one key by one replica: `[start, end]`, the end `None` if the replica
/// died before it.
#[derive(Debug, Clone)]
struct Interval {
    replica: String,
    start: u128,
    end: Option<u128>,
}

fn read_audit(path: &Path) -> BTreeMap<String, Vec<Interval>> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut open: BTreeMap<(String, String), Vec<u128>> = BTreeMap::new();
    let mut out: BTreeMap<String, Vec<Interval>> = BTreeMap::new();
    for line in text.lines() {
        let parts: Vec<&str> = line.split(' ').collect();
        assert_eq!(parts.len(), 4, "audit line {line:?}");
        let (what, at, replica, key) = (
            parts[0],
            parts[1].parse::<u128>().unwrap(),
            parts[2],
            parts[3],
        );
        let id = (replica.to_owned(), key.to_owned());
        match what {
            "start" => open.entry(id).or_default().push(at),
            "end" => {
                let start = open
                    .get_mut(&id)
                    .and_then(Vec::pop)
                    .unwrap_or_else(|| panic!("end without start: {line}"));
                out.entry(key.to_owned()).or_default().push(Interval {
                    replica: replica.to_owned(),
                    start,
                    end: Some(at),
                });
            }
            _ => panic!("audit line {line:?}"),
        }
    }
    for ((replica, key), starts) in open {
        for start in starts {
            out.entry(key.clone()).or_default().push(Interval {
                replica: replica.clone(),
                start,
                end: None,
            });
        }
    }
    out
}

/// Pairs of intervals of one key, from different replicas, that overlap. A reconcile
/// left open by the SIGKILLed replica ends at the kill (`killed`: replica and time).
fn overlaps(
    audit: &BTreeMap<String, Vec<Interval>>,
    killed: (&str, u128),
) -> Vec<(String, Interval, Interval)> {
    let mut out = vec![];
    for (key, intervals) in audit {
        let end = |i: &Interval| {
            i.end.unwrap_or_else(|| {
                assert_eq!(
                    i.replica, killed.0,
                    "{key}: reconcile by {} never ended",
                    i.replica
                );
                killed.1
            })
        };
        for (n, a) in intervals.iter().enumerate() {
            for b in &intervals[n + 1..] {
                if a.replica != b.replica && a.start < end(b) && b.start < end(a) {
                    out.push((key.clone(), a.clone(), b.clone()));
                }
            }
        }
    }
    out
}

async fn three_replicas_hand_over_without_overlap(gate: bool) {
    let _one = ONE_AT_A_TIME.lock().await;
    let env = Environment::builder()
        .feature_gate("ShardedListAndWatch", gate)
        // No Deployment controller: the Foos' Deployments need not run pods here.
        .controller_manager(false)
        .timeout(Duration::from_secs(90))
        .start()
        .await
        .expect("control plane (kube-codegen-envtest; hack/testenv.sh build makes the binaries)");
    let client = env.client();
    let dir = env.dir().join("sharded-controller");
    std::fs::create_dir_all(&dir).unwrap();
    for entry in std::fs::read_dir(repo_root().join("sample-controller/config/crd")).unwrap() {
        let crd = parse_crd(&std::fs::read_to_string(entry.unwrap().path()).unwrap());
        apply_crd(&client, &crd).await.unwrap();
    }
    let ns: Namespace =
        serde_json::from_value(serde_json::json!({"metadata": {"name": NS}})).unwrap();
    Api::<Namespace>::all(client.clone())
        .create(&PostParams::default(), &ns)
        .await
        .unwrap();
    let foos: Api<Foo> = Api::namespaced(client.clone(), NS);
    // Most Foos exist before the replicas start (their first lists, or in label mode their
    // labeler's first list, find them); the last LATE are created while they run.
    create_foos(&foos, 0..FOOS - LATE).await;

    let audit = dir.join("audit.log");
    let started = Instant::now();
    // replica-0 talks to the API server through a proxy the test can cut.
    let apiserver_port: u16 = env
        .apiserver_url()
        .rsplit(':')
        .next()
        .and_then(|p| p.trim_end_matches('/').parse().ok())
        .expect("the API server's port");
    let proxy = Proxy::start(apiserver_port).unwrap();
    let proxied = dir.join("proxied.kubeconfig");
    let admin = std::fs::read_to_string(env.kubeconfig_path()).unwrap();
    let server = env.apiserver_url();
    assert!(admin.contains(&server), "the kubeconfig names {server}");
    std::fs::write(
        &proxied,
        admin.replace(&server, &format!("https://127.0.0.1:{}", proxy.port)),
    )
    .unwrap();
    let mut replicas: Vec<Replica> = (0..REPLICAS)
        .map(|i| {
            let kubeconfig = if i == 0 {
                proxied.as_path()
            } else {
                env.kubeconfig_path()
            };
            Replica::start(kubeconfig, &format!("replica-{i}"), &audit, &dir)
        })
        .collect();
    // A Deployment made before the controller labelled its Deployments: foo-0000's, owned
    // by it but without the slot label. Its replica's informer (by label) does not see it;
    // the controller writes the label when it applies (the update path adopts it on
    // AlreadyExists).
    let first = foos.get("foo-0000").await.unwrap();
    Api::<Deployment>::namespaced(client.clone(), NS)
        .create(
            &PostParams::default(),
            &sample_controller::foo::new_deployment(&first),
        )
        .await
        .unwrap();
    create_foos(&foos, FOOS - LATE..FOOS).await;
    let dump = |replicas: &[Replica]| {
        replicas
            .iter()
            .map(|r| format!("--- {}\n{}", r.name, r.logs()))
            .collect::<Vec<_>>()
            .join("\n")
    };

    // 1. Converge, spread evenly.
    let converged = eventually(
        "every Foo's Deployment",
        Duration::from_secs(180),
        || async { Ok((deployments(&client).await.len() == FOOS).then_some(())) },
    )
    .await;
    converged.unwrap_or_else(|e| panic!("{e}\n{}", dump(&replicas)));
    // The split is exact, not statistical: each replica holds 21 or 22 of the 64 slots in
    // the group's table Lease, works on exactly those, and caches exactly the Foos whose
    // UID hashes into them (a tolerance on an even share of random UIDs would be flaky).
    let leases: Api<Lease> = Api::namespaced(client.clone(), "default");
    let spread = eventually(
        "every slot held and worked, each replica's cache exactly the Foos of its slots",
        Duration::from_secs(120),
        || async {
            let table = leases.get(GROUP).await?;
            let table: SlotTable = serde_json::from_str(
                table
                    .metadata
                    .annotations
                    .as_ref()
                    .and_then(|a| a.get(TABLE_ANNOTATION))
                    .ok_or_else(|| anyhow::anyhow!("the table Lease has no slots yet"))?,
            )?;
            let uids: Vec<String> = foos
                .list_metadata(&ListParams::default())
                .await?
                .items
                .into_iter()
                .filter_map(|f| f.metadata.uid)
                .collect();
            // Each Foo has one Deployment, cached by the Foo's replica.
            let mut state = Vec::new();
            for r in &replicas {
                let held = table.held_by(&r.name);
                let expected = uids
                    .iter()
                    .filter(|u| held.contains(&slot_of(hash_field(u), DEFAULT_SLOTS)))
                    .count() as f64;
                state.push((
                    r.name.clone(),
                    held.len(),
                    r.gauge("shard_slots_working"),
                    r.gauge("shard_slots_cached"),
                    expected,
                    r.gauge("sample_controller_foos_cached"),
                    r.gauge("sample_controller_deployments_cached"),
                ));
            }
            let sizes = state.iter().map(|s| s.1);
            let even = sizes.clone().max().unwrap_or(0) - sizes.min().unwrap_or(0) <= 1;
            let ok = uids.len() == FOOS
                && even
                && state.iter().map(|s| s.1).sum::<usize>() == DEFAULT_SLOTS.get()
                && state
                    .iter()
                    .all(|(_, held, working, cached, expected, foos, deployments)| {
                        *working == Some(*held as f64)
                            && *cached == Some(*held as f64)
                            && *foos == Some(*expected)
                            && *deployments == Some(*expected)
                    });
            if ok {
                return Ok(Some(state));
            }
            // The state of this try becomes the timeout's "last error".
            Err(anyhow::anyhow!(
                "(replica, slots held, working, cached, Foos expected, Foos cached, Deployments cached): {state:?}"
            ))
        },
    )
    .await
    .unwrap_or_else(|e| panic!("{e}\n{}", dump(&replicas)));
    eprintln!(
        "gate {gate}: {FOOS} Foos converged in {:?}; (replica, slots, working, cached, Foos expected, Foos cached, Deployments cached) {spread:?}",
        started.elapsed(),
    );
    // The mode: one line per replica says which runs, and the gauge says it too.
    // kube-apiserver 1.37.2 filters lists of custom resources but leaves out their
    // shardInfo: with the gate the Foo informer's slot lists hold only their objects (one
    // line says so); without it no shardSelector is sent at all.
    let (mode, other) = if gate {
        ("sharding: selector mode", "sharding: label mode")
    } else {
        ("sharding: label mode", "sharding: selector mode")
    };
    let mode_gauge = format!(
        "shard_mode_info{{mode=\"{}\"}}",
        if gate { "selector" } else { "label" }
    );
    for r in &replicas {
        let logs = r.logs();
        let once = if gate {
            vec![mode, "but held only selected objects"]
        } else {
            vec![mode]
        };
        for line in once {
            assert_eq!(
                logs.matches(line).count(),
                1,
                "{}: one log line saying {line:?}\n{logs}",
                r.name
            );
        }
        for line in [other, "the API server ignored the shard selector"] {
            assert_eq!(
                logs.matches(line).count(),
                0,
                "{}: no line saying {line:?}\n{logs}",
                r.name
            );
        }
        assert_eq!(r.gauge(&mode_gauge), Some(1.0), "{}: {mode_gauge}", r.name);
    }
    // Every Deployment carries its Foo's slot (the label its replica lists it by); in label
    // mode every Foo carries its own, the slot its uid hashes into; in selector mode Foos
    // carry none.
    let label = SlotLabel::for_group(GROUP);
    let slot_of_uid = |uid: &str| slot_of(hash_field(uid), DEFAULT_SLOTS).to_string();
    let all_foos = foos
        .list_metadata(&ListParams::default())
        .await
        .unwrap()
        .items;
    assert_eq!(all_foos.len(), FOOS);
    for f in &all_foos {
        let got = f.metadata.labels.as_ref().and_then(|l| l.get(label.key()));
        let want = (!gate).then(|| slot_of_uid(f.metadata.uid.as_deref().unwrap()));
        assert_eq!(got, want.as_ref(), "Foo {:?}", f.metadata.name);
    }
    let all_deployments = Api::<Deployment>::namespaced(client.clone(), NS)
        .list_metadata(&ListParams::default())
        .await
        .unwrap()
        .items;
    assert_eq!(all_deployments.len(), FOOS);
    for d in &all_deployments {
        let owner = &d.metadata.owner_references.as_ref().unwrap()[0];
        let got = d.metadata.labels.as_ref().and_then(|l| l.get(label.key()));
        assert_eq!(
            got,
            Some(&slot_of_uid(&owner.uid)),
            "Deployment {:?}",
            d.metadata.name
        );
    }

    // 2. Every Foo changes; while the replicas work on it, one is SIGTERMed: it frees its
    // slots on the way out, and the other two take them without waiting for its Lease.
    let patch_all = |replicas: i32| {
        let foos = foos.clone();
        async move {
            let patch = Patch::Merge(serde_json::json!({"spec": {"replicas": replicas}}));
            stream::iter(0..FOOS)
                .for_each_concurrent(16, |i| {
                    let (foos, patch) = (foos.clone(), &patch);
                    async move {
                        // The test's own writes: a transient server error (the suite
                        // runs beside other control planes) is retried, not a failure of
                        // the replicas under test.
                        let (name, params) = (format!("foo-{i:04}"), PatchParams::default());
                        retry_transient(|| foos.patch(&name, &params, patch))
                            .await
                            .unwrap_or_else(|e| panic!("patch foo {i}: {e}"));
                    }
                })
                .await;
        }
    };
    patch_all(2).await;
    replicas[1].signal("TERM");
    let termed = Instant::now();
    // The other two take its slots while it still drains (its events flush, at most 5s).
    let two = [&replicas[0], &replicas[2]];
    eventually(
        "two replicas work on every slot",
        Duration::from_secs(60),
        || async {
            let sum: f64 = two
                .iter()
                .filter_map(|r| r.gauge("shard_slots_working"))
                .sum();
            Ok((sum == 64.0).then_some(()))
        },
    )
    .await
    .unwrap_or_else(|e| panic!("{e}\n{}", dump(&replicas)));
    let term_handover = termed.elapsed();
    let status = replicas[1].wait_exit(Duration::from_secs(30));
    assert!(
        status.success(),
        "SIGTERM: {status}\n{}",
        replicas[1].logs()
    );
    let term_exit = termed.elapsed();
    // It released its member Lease and freed its slots.
    let leases: Api<Lease> = Api::namespaced(client.clone(), "default");
    let released: Vec<String> = leases
        .list(&ListParams::default().labels(&format!("sharding.kube-codegen.io/group={GROUP}")))
        .await
        .unwrap()
        .items
        .into_iter()
        .filter(|l| {
            l.spec
                .as_ref()
                .and_then(|s| s.holder_identity.as_deref())
                .is_none_or(str::is_empty)
        })
        .filter_map(|l| l.metadata.name)
        .collect();
    assert_eq!(
        released.len(),
        1,
        "one member Lease released (replica-1's): {released:?}"
    );
    let table = leases.get(GROUP).await.unwrap();
    let table = &table.metadata.annotations.unwrap()["sharding.kube-codegen.io/slots"];
    assert!(
        !table.contains("replica-1"),
        "replica-1 freed its slots: {table}"
    );

    // 3. Every Foo changes again; while the two work on it, replica-0 is cut from the API
    // server: it stops working when it cannot renew its Lease within the renew deadline,
    // and the survivor takes its slots once the Lease is seen unrenewed for the lease
    // duration (the audit below shows the order). Healed, replica-0 joins again.
    patch_all(3).await;
    proxy.partition();
    let partitioned = Instant::now();
    let survivor = &replicas[2];
    eventually(
        "the partitioned replica stops working and the survivor works on every slot",
        Duration::from_secs(60),
        || async {
            let cut = replicas[0].gauge("shard_slots_working");
            let all = survivor.gauge("shard_slots_working");
            Ok((cut == Some(0.0) && all == Some(64.0)).then_some(()))
        },
    )
    .await
    .unwrap_or_else(|e| panic!("{e}\n{}", dump(&replicas)));
    let partition_handover = partitioned.elapsed();
    proxy.heal();
    eventually(
        "the healed replica works on a share again",
        Duration::from_secs(90),
        || async {
            let back = replicas[0].gauge("shard_slots_working").unwrap_or(0.0);
            let all = survivor.gauge("shard_slots_working").unwrap_or(0.0);
            Ok((back > 0.0 && back + all == 64.0).then_some(()))
        },
    )
    .await
    .unwrap_or_else(|e| panic!("{e}\n{}", dump(&replicas)));
    eprintln!(
        "gate {gate}: partition: the survivor held every slot {partition_handover:?} after the cut, the healed replica a share again {:?} after it",
        partitioned.elapsed()
    );

    // 4. Every Foo changes again; while the two work on it, one is SIGKILLed: its slots
    // move once its Lease is seen unrenewed for the lease duration.
    patch_all(4).await;
    replicas[0].signal("KILL");
    let killed_at = unix_nanos();
    let killed = Instant::now();
    replicas[0].wait_exit(Duration::from_secs(10));
    let survivor = &replicas[2];
    let took_over = eventually(
        "the survivor works on every slot",
        Duration::from_secs(60),
        || async { Ok((survivor.gauge("shard_slots_working") == Some(64.0)).then_some(())) },
    )
    .await;
    took_over.unwrap_or_else(|e| panic!("{e}\n{}", dump(&replicas)));
    let kill_handover = killed.elapsed();
    let converged = eventually(
        "every Deployment at 4 replicas",
        Duration::from_secs(180),
        || async {
            let d = deployments(&client).await;
            Ok((d.len() == FOOS && d.values().all(|&r| r == 4)).then_some(()))
        },
    )
    .await;
    converged.unwrap_or_else(|e| panic!("{e}\n{}", dump(&replicas)));
    eprintln!(
        "gate {gate}: SIGTERM: the replica exited in {term_exit:?}, the other two held its slots {term_handover:?} after the signal; SIGKILL: the survivor held every slot {kill_handover:?} after it (lease duration 15s)"
    );
    assert_eq!(
        survivor.gauge("sample_controller_foos_cached"),
        Some(FOOS as f64),
        "the survivor caches every Foo"
    );
    assert_eq!(
        survivor.gauge("sample_controller_deployments_cached"),
        Some(FOOS as f64),
        "the survivor caches every Deployment"
    );

    // 5. The audit: no key reconciled by two replicas at once; every key reconciled.
    let log = read_audit(&audit);
    let bad = overlaps(&log, ("replica-0", killed_at));
    assert!(
        bad.is_empty(),
        "{} overlapping reconciles, e.g. {:?}",
        bad.len(),
        &bad[..bad.len().min(5)]
    );
    let moved = log
        .values()
        .filter(|i| i.iter().any(|a| a.replica != i[0].replica))
        .count();
    assert!(
        moved > 0,
        "some keys were reconciled by two replicas, one after the other"
    );
    let keys = log.len();
    assert_eq!(keys, FOOS, "every Foo was reconciled");
    let by: BTreeMap<&str, usize> = log.values().flatten().fold(BTreeMap::new(), |mut m, i| {
        *m.entry(i.replica.as_str()).or_default() += 1;
        m
    });
    assert_eq!(by.len(), REPLICAS, "every replica reconciled: {by:?}");
    eprintln!(
        "gate {gate}: reconciles per replica {by:?}; {moved} keys reconciled by more than one replica, 0 overlapping, 0 lost keys"
    );
    drop(replicas);
    env.stop().await.unwrap();
}

#[tokio::test]
async fn with_the_gate_three_replicas_converge_and_hand_over_without_overlap() {
    three_replicas_hand_over_without_overlap(true).await;
}

#[tokio::test]
async fn without_the_gate_three_replicas_shard_by_label_and_hand_over_without_overlap() {
    three_replicas_hand_over_without_overlap(false).await;
}
