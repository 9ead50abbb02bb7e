//! Lister `get` throughput without a cluster: the lister half of `informer_memory`
//! (bench/cache.sh), on a store filled directly, so that a change to the store or the
//! listers can be measured before and after on one machine in seconds.
//!
//! ```text
//! cargo run --release -p kube-codegen-runtime --example lister_get -- [OBJECTS] [ROUNDS] [OPS [ns|key]]
//! ```
//!
//! Fills a `Store<ConfigMap>` with OBJECTS (10,000) ConfigMaps named like bench/cache.sh's
//! (`bench-cm-000000`, ... in namespace `bench-cache`), then, ROUNDS (5) times, measures
//! for at least 0.5 s each, cycling over all names:
//!
//! - `ns_get`: `lister.namespaced(ns).get(name)` (what bench/cache.sh reports as lister get/s);
//! - `key_get`: `lister.get(&key)` by a typed key built once per object.
//!
//! With OPS, each measurement does exactly OPS gets instead (for instruction counts that a
//! busy machine does not disturb: `perf stat -e instructions` with OPS and with 0, divided
//! by the difference in gets); `ns` or `key` after OPS runs only that measurement (the
//! other does 0 gets).
//!
//! Prints one JSON line per round and the medians. Rates are per second of this thread's
//! on-CPU time (`/proc/thread-self/schedstat`), so time the scheduler gives to other
//! processes on a busy machine does not count; `wall_*` fields are per wall-clock second.

use std::sync::Arc;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::ObjectMeta;
use kube_codegen_runtime::lister::Lister;
use kube_codegen_runtime::store::{Store, key_of};

/// Nanoseconds this thread has run on a CPU (Linux; `None` elsewhere).
fn thread_cpu_ns() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    stat.split_whitespace().next()?.parse().ok()
}

/// (operations per on-CPU second, per wall-clock second); exactly `fixed` operations if set.
fn ops_per_sec(mut f: impl FnMut(usize), min_ops: usize, fixed: Option<usize>) -> (f64, f64) {
    let cpu0 = thread_cpu_ns();
    let start = Instant::now();
    let mut n = 0;
    while match fixed {
        Some(ops) => n < ops,
        None => n < min_ops || start.elapsed() < Duration::from_millis(500),
    } {
        f(n);
        n += 1;
    }
    let wall = start.elapsed().as_secs_f64();
    let cpu = match (cpu0, thread_cpu_ns()) {
        (Some(a), Some(b)) if b > a => (b - a) as f64 / 1e9,
        _ => wall,
    };
    (n as f64 / cpu, n as f64 / wall)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let objects: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(10_000);
    let rounds: usize = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(5);
    let fixed: Option<usize> = args.get(3).and_then(|a| a.parse().ok());
    let only = args.get(4).map(String::as_str);
    let (fixed_ns, fixed_key) = match only {
        Some("ns") => (fixed, Some(0)),
        Some("key") => (Some(0), fixed),
        _ => (fixed, fixed),
    };
    let ns = "bench-cache";
    let store = Store::<ConfigMap>::new();
    let mut names = Vec::with_capacity(objects);
    let mut keys = Vec::with_capacity(objects);
    for i in 0..objects {
        let name = format!("bench-cm-{i:06}");
        let cm = Arc::new(ConfigMap {
            metadata: ObjectMeta {
                name: Some(name.clone()),
                namespace: Some(ns.into()),
                ..Default::default()
            },
            ..Default::default()
        });
        keys.push(key_of(cm.as_ref()));
        store.upsert(cm);
        names.push(name);
    }
    let lister = Lister::new(store);
    let nsl = lister.namespaced(ns);
    let (mut ns_gets, mut key_gets) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        let (ns_get, wall_ns_get) = ops_per_sec(
            |i| {
                std::hint::black_box(nsl.get(&names[i % names.len()]));
            },
            100_000,
            fixed_ns,
        );
        let (key_get, wall_key_get) = ops_per_sec(
            |i| {
                std::hint::black_box(lister.get(&keys[i % keys.len()]));
            },
            100_000,
            fixed_key,
        );
        println!(
            "{{\"round\":{round},\"ns_get_per_sec\":{ns_get:.0},\"key_get_per_sec\":{key_get:.0},\
             \"wall_ns_get_per_sec\":{wall_ns_get:.0},\"wall_key_get_per_sec\":{wall_key_get:.0}}}"
        );
        ns_gets.push(ns_get);
        key_gets.push(key_get);
    }
    println!(
        "{{\"objects\":{objects},\"median_ns_get_per_sec\":{:.0},\"median_key_get_per_sec\":{:.0}}}",
        median(ns_gets),
        median(key_gets)
    );
}
