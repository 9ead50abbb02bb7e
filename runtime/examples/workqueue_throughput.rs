//! Work queue throughput: one producer adds N keys while K workers loop on get → done.
//!
//! ```text
//! cargo run --release -p kube-codegen-runtime --example workqueue_throughput -- [ITEMS] [WORKERS] [SCENARIO...]
//! ```
//!
//! Defaults: 200000 items, 4 workers, on a multi-threaded tokio runtime with one thread per
//! core. Prints one line per scenario:
//!
//! - `distinct`: every add is a new key (`default/foo-<i>`), so every add is processed;
//! - `hot`: the adds cycle over 64 keys, so most are deduplicated while queued or
//!   processing (a burst of events for a few objects).
//!
//! Each scenario runs twice: with the queue's default metrics (`distinct`, `hot`: queue
//! latency and work duration measured, a clock read per add, get and done) and with timing
//! metrics off (`distinct-no-timing`, `hot-no-timing`: what client-go's default no-op metrics
//! provider records, the configuration its probe measures).
//!
//! SCENARIO names run only those (e.g. `distinct-no-timing`, for a profile); default all.
//!
//! `ops_per_sec` counts every queue call (adds + gets + dones) per second of wall time;
//! `cpu_ms` is the CPU time all the process's threads used during the run (from
//! `/proc/self/task/*/schedstat`; 0 where that is not available), a figure that a busy
//! machine disturbs less than wall time.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use kube_codegen_runtime::workqueue::WorkQueue;

struct Run {
    processed: u64,
    secs: f64,
    cpu_ns: u64,
}

/// CPU time used so far by all threads of this process, in nanoseconds.
fn cpu_ns() -> u64 {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return 0;
    };
    tasks
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("schedstat")).ok())
        .filter_map(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .sum()
}

async fn run(keys: &[String], workers: usize, timing: bool) -> Run {
    let queue: WorkQueue<String> = WorkQueue::builder("bench").timing_metrics(timing).build();
    let processed = Arc::new(AtomicU64::new(0));
    // The keys are allocated before the clock starts, as in the Go probe (whose `Add` copies
    // a string header): what is timed is the queue, not making keys.
    let owned = keys.to_vec();
    let cpu0 = cpu_ns();
    let start = Instant::now();
    let tasks: Vec<_> = (0..workers)
        .map(|_| {
            let queue = queue.clone();
            let processed = processed.clone();
            tokio::spawn(async move {
                let mut n = 0;
                while let Some(key) = queue.get().await {
                    n += 1;
                    queue.done(&key);
                }
                processed.fetch_add(n, Ordering::Relaxed);
            })
        })
        .collect();
    for (i, key) in owned.into_iter().enumerate() {
        queue.add(key);
        if i % 1024 == 1023 {
            // Let workers on this thread run too, as an informer handler would.
            tokio::task::yield_now().await;
        }
    }
    queue.shutdown_with_drain().await;
    for task in tasks {
        task.await.expect("worker panicked");
    }
    Run {
        processed: processed.load(Ordering::Relaxed),
        secs: start.elapsed().as_secs_f64(),
        cpu_ns: cpu_ns().saturating_sub(cpu0),
    }
}

fn arg(n: usize, default: usize) -> usize {
    std::env::args()
        .nth(n)
        .map(|a| {
            a.parse()
                .unwrap_or_else(|_| panic!("argument {n} must be a number, got {a}"))
        })
        .unwrap_or(default)
}

#[tokio::main(flavor = "multi_thread")]
async fn main() {
    let items = arg(1, 200_000);
    let workers = arg(2, 4).max(1);
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let scenarios: [(&str, Vec<String>); 2] = [
        (
            "distinct",
            (0..items).map(|i| format!("default/foo-{i}")).collect(),
        ),
        (
            "hot",
            (0..items)
                .map(|i| format!("default/foo-{}", i % 64))
                .collect(),
        ),
    ];
    let only: Vec<String> = std::env::args().skip(3).collect();
    for (timing, suffix) in [(true, ""), (false, "-no-timing")] {
        for (scenario, keys) in &scenarios {
            let name = format!("{scenario}{suffix}");
            if only.is_empty() || only.contains(&name) {
                report(&name, keys, workers, threads, timing).await;
            }
        }
    }
}

async fn report(name: &str, keys: &[String], workers: usize, threads: usize, timing: bool) {
    let items = keys.len();
    // A short warm-up so the first scenario does not pay for allocator and thread start.
    run(&keys[..items.min(10_000)], workers, timing).await;
    let r = run(keys, workers, timing).await;
    let ops = items as u64 + 2 * r.processed;
    println!(
        "workqueue_throughput scenario={name} items={items} workers={workers} threads={threads} \
         processed={} elapsed_ms={:.1} cpu_ms={:.1} items_per_sec={:.0} ops_per_sec={:.0}",
        r.processed,
        r.secs * 1e3,
        r.cpu_ns as f64 / 1e6,
        items as f64 / r.secs,
        ops as f64 / r.secs,
    );
}
