//! Informer cache memory and lister throughput, against a real API server (bench/cache.sh).
//!
//! ```text
//! KUBECONFIG=... cargo run --release -p kube-codegen-runtime --example informer_memory -- \
//!     NAMESPACE EXPECTED_OBJECTS [none|drop-managed-fields] [configmaps|deployments] [full|metadata] \
//!     [typed|compact]
//! ```
//!
//! Caches every ConfigMap (default) or Deployment of NAMESPACE with `SharedInformerFactory`
//! (optionally with the `drop_managed_fields` transform): whole objects (`informer_for`,
//! default) or metadata only (`metadata_informer_for`, `PartialObjectMeta<K>`). Waits until
//! the cache holds EXPECTED_OBJECTS, and prints one JSON line. `compact` caches with the
//! factory's compact informers (`factory.compact()`: each object kept as its JSON, decoded
//! on every lister read) instead of the typed ones.
//!
//!
//! - `heap_bytes_per_object`: live heap bytes (a counting global allocator) after sync minus
//!   before the informer started, divided by the object count; the same quantity as Go's
//!   `runtime.MemStats.HeapAlloc` after `runtime.GC()`;
//! - `rss_bytes_per_object`: the same with the process's resident set (`/proc/self/statm`);
//! - lister throughput: `get` by namespace/name, `list` of the namespace with a label
//!   selector, in operations per second.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};
use std::time::{Duration, Instant};

use std::fmt::Debug;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::Resource;
use kube::core::Selector;
use kube_codegen_runtime::informer::{Informer, SharedInformerFactory, drop_managed_fields};
use serde::de::DeserializeOwned;

struct Counting;

static LIVE: AtomicIsize = AtomicIsize::new(0);

// SAFETY: every call is forwarded to the system allocator unchanged; only a counter is kept.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: same layout contract as our caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: ptr came from System.alloc with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_add(
            new_size as isize - layout.size() as isize,
            Ordering::Relaxed,
        );
        // SAFETY: as for realloc's own contract.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

fn rss_bytes() -> i64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: i64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    pages * 4096
}

fn ops_per_sec(mut f: impl FnMut(usize), min_ops: usize) -> f64 {
    let start = Instant::now();
    let mut n = 0;
    while n < min_ops || start.elapsed() < Duration::from_millis(500) {
        f(n);
        n += 1;
    }
    n as f64 / start.elapsed().as_secs_f64()
}

#[tokio::main(flavor = "multi_thread")]
async fn main() -> anyhow_free::Result {
    let args: Vec<String> = std::env::args().collect();
    let ns = args.get(1).cloned().unwrap_or_else(|| "default".into());
    let expected: usize = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(0);
    let transform = match args.get(3).map_or("none", String::as_str) {
        "none" => false,
        "drop-managed-fields" => true,
        other => return Err(format!("transform {other:?}: none or drop-managed-fields").into()),
    };
    let kind = args.get(4).map_or("configmaps", String::as_str).to_owned();
    let mode = args.get(5).map_or("full", String::as_str).to_owned();
    let cache = args.get(6).map_or("typed", String::as_str).to_owned();

    let client = kube::Client::try_default().await?;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let (heap0, rss0) = (LIVE.load(Ordering::Relaxed), rss_bytes());

    let mut builder = SharedInformerFactory::builder(client).with_namespace(ns.clone());
    if transform {
        builder = builder.with_transform(drop_managed_fields);
    }
    let factory = builder.build();
    let probe = Probe {
        factory: &factory,
        ns: &ns,
        expected,
    };
    let compact = factory.compact();
    let m = match (kind.as_str(), mode.as_str(), cache.as_str()) {
        ("configmaps", "full", "typed") => probe.run(factory.informer_for::<ConfigMap>()).await?,
        ("configmaps", "metadata", "typed") => {
            probe
                .run(factory.metadata_informer_for::<ConfigMap>())
                .await?
        }
        ("deployments", "full", "typed") => probe.run(factory.informer_for::<Deployment>()).await?,
        ("deployments", "metadata", "typed") => {
            probe
                .run(factory.metadata_informer_for::<Deployment>())
                .await?
        }
        ("configmaps", "full", "compact") => probe.run(compact.informer_for::<ConfigMap>()).await?,
        ("configmaps", "metadata", "compact") => {
            probe
                .run(compact.metadata_informer_for::<ConfigMap>())
                .await?
        }
        ("deployments", "full", "compact") => {
            probe.run(compact.informer_for::<Deployment>()).await?
        }
        ("deployments", "metadata", "compact") => {
            probe
                .run(compact.metadata_informer_for::<Deployment>())
                .await?
        }
        _ => {
            return Err(format!(
                "kind {kind:?} / mode {mode:?} / cache {cache:?}: configmaps or deployments, \
                 full or metadata, typed or compact"
            )
            .into());
        }
    };
    println!(
        "{{\"impl\":\"rust\",\"kind\":\"{kind}\",\"mode\":\"{mode}\",\"cache\":\"{cache}\",\"transform\":{transform},\"objects\":{},\"sync_secs\":{:.3},\
\"heap_bytes_per_object\":{:.0},\"rss_bytes_per_object\":{:.0},\"heap_bytes\":{},\"rss_bytes\":{},\
\"lister_get_per_sec\":{:.0},\"lister_list_per_sec\":{:.2}}}",
        m.objects,
        m.sync_secs,
        (m.heap1 - heap0) as f64 / m.objects.max(1) as f64,
        (m.rss1 - rss0) as f64 / m.objects.max(1) as f64,
        m.heap1,
        m.rss1,
        m.get,
        m.list,
    );
    factory.shutdown();
    Ok(())
}

/// What one informer is measured against.
struct Probe<'a> {
    factory: &'a SharedInformerFactory,
    ns: &'a str,
    expected: usize,
}

/// One informer's figures.
struct Measured {
    objects: usize,
    sync_secs: f64,
    heap1: isize,
    rss1: i64,
    get: f64,
    list: f64,
}

impl Probe<'_> {
    /// Start the factory, wait for `informer` to hold the expected objects, measure memory,
    /// then the lister.
    async fn run<K>(&self, informer: Informer<K>) -> anyhow_free::Result<Measured>
    where
        K: Resource + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
    {
        let started = Instant::now();
        self.factory.start();
        self.factory
            .wait_for_cache_sync(Duration::from_secs(300))
            .await
            .map_err(|e| e.to_string())?;
        while informer.store().len() < self.expected {
            if started.elapsed() > Duration::from_secs(300) {
                return Err(format!(
                    "cache holds {} of {}",
                    informer.store().len(),
                    self.expected
                )
                .into());
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let sync_secs = started.elapsed().as_secs_f64();
        // Let the list's transient buffers go before measuring.
        tokio::time::sleep(Duration::from_millis(500)).await;
        let (heap1, rss1) = (LIVE.load(Ordering::Relaxed), rss_bytes());
        let objects = informer.store().len();

        let lister = informer.lister();
        let names: Vec<String> = informer
            .store()
            .keys()
            .iter()
            .map(|k| k.name().to_owned())
            .collect();
        let nsl = lister.namespaced(self.ns);
        let get = ops_per_sec(
            |i| {
                let name = &names[i % names.len().max(1)];
                std::hint::black_box(nsl.get(name));
            },
            100_000,
        );
        let selector: Selector = [("app", "bench")].into_iter().collect();
        let list = ops_per_sec(
            |_| {
                std::hint::black_box(nsl.list(&selector));
            },
            5,
        );
        Ok(Measured {
            objects,
            sync_secs,
            heap1,
            rss1,
            get,
            list,
        })
    }
}

/// `Result` without pulling anyhow into the runtime's dev-dependencies.
mod anyhow_free {
    pub type Result<T = ()> = std::result::Result<T, Box<dyn std::error::Error + Send + Sync>>;
}
