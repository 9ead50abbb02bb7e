//! Work queue throughput: one producer adds N keys while K workers loop on get → done.
//!
//! ```text
//! cargo run --release -p kube-codegen-runtime --example workqueue_throughput -- [ITEMS] [WORKERS]
//! ```
//!
//! Defaults: 200000 items, 4 workers, on a multi-threaded tokio runtime with one thread per
//! core. Prints one line per scenario:
//!
//! - `distinct`: every add is a new key (`default/foo-<i>`), so every add is processed;
//! - `hot`: the adds cycle over 64 keys, so most are deduplicated while queued or
//!   processing (a burst of events for a few objects).
//!
//! `ops_per_sec` counts every queue call (adds + gets + dones) per second of wall time.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use kube_codegen_runtime::workqueue::WorkQueue;

struct Run {
    processed: u64,
    secs: f64,
}

async fn run(keys: &[String], workers: usize) -> Run {
    let queue: WorkQueue<String> = WorkQueue::new("bench");
    let processed = Arc::new(AtomicU64::new(0));
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
    for (i, key) in keys.iter().enumerate() {
        queue.add(key.clone());
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
    for (name, keys) in &scenarios {
        // A short warm-up so the first scenario does not pay for allocator and thread start.
        run(&keys[..keys.len().min(10_000)], workers).await;
        let r = run(keys, workers).await;
        let ops = items as u64 + 2 * r.processed;
        println!(
            "workqueue_throughput scenario={name} items={items} workers={workers} threads={threads} \
             processed={} elapsed_ms={:.1} items_per_sec={:.0} ops_per_sec={:.0}",
            r.processed,
            r.secs * 1e3,
            items as f64 / r.secs,
            ops as f64 / r.secs,
        );
    }
}
