//! Where the bytes of a cached object go: one bench ConfigMap (bench/cache.sh's shape) and
//! the informer store's own cost per object; then lister throughput over that store (as
//! informer_memory measures it against an API server). No API server needed.
//!
//! ```text
//! cargo run --release -p kube-codegen-runtime --example cache_bytes -- [OBJECTS] [OBJECT.json]
//! ```
//!
//! OBJECT.json: one ConfigMap as the API server returns it (`kubectl get cm X -o json`);
//! default: a built-in copy of bench/cache.sh's ConfigMap as a v1.37 apiserver returns it
//! after `kubectl create`. Its `ns/name` and the `idx` label are varied per object.
//!
//! Bytes are what the program asked the allocator for (`Layout::size`, the quantity
//! informer_memory's `heap_bytes_per_object` counts) and, in brackets, glibc's chunk size
//! for those requests (header and 16-byte rounding, minimum 32: what RSS pays before
//! fragmentation).

use std::alloc::{GlobalAlloc, Layout, System};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicIsize, Ordering};

use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ManagedFieldsEntry, ObjectMeta};
use kube::core::Selector;
use kube_codegen_runtime::lister::Lister;
use kube_codegen_runtime::store::{Store, label_index};

struct Counting;

static LIVE: AtomicIsize = AtomicIsize::new(0);
static CHUNKS: AtomicIsize = AtomicIsize::new(0);
static COUNT: AtomicIsize = AtomicIsize::new(0);

/// glibc malloc's chunk for a request of `size` bytes on 64-bit: 8-byte header, 16-byte
/// alignment, 32 bytes at least.
fn chunk(size: usize) -> isize {
    ((size + 8 + 15) & !15).max(32) as isize
}

// SAFETY: every call is forwarded to the system allocator unchanged; only counters are kept.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        CHUNKS.fetch_add(chunk(layout.size()), Ordering::Relaxed);
        COUNT.fetch_add(1, Ordering::Relaxed);
        // SAFETY: same layout contract as our caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        CHUNKS.fetch_sub(chunk(layout.size()), Ordering::Relaxed);
        COUNT.fetch_sub(1, Ordering::Relaxed);
        // SAFETY: ptr came from System.alloc with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_add(
            new_size as isize - layout.size() as isize,
            Ordering::Relaxed,
        );
        CHUNKS.fetch_add(chunk(new_size) - chunk(layout.size()), Ordering::Relaxed);
        // SAFETY: as for realloc's own contract.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// Live (requested bytes, chunk bytes, allocations).
#[derive(Clone, Copy)]
struct Live(isize, isize, isize);

fn live() -> Live {
    Live(
        LIVE.load(Ordering::Relaxed),
        CHUNKS.load(Ordering::Relaxed),
        COUNT.load(Ordering::Relaxed),
    )
}

impl std::ops::Sub for Live {
    type Output = Live;
    fn sub(self, o: Live) -> Live {
        Live(self.0 - o.0, self.1 - o.1, self.2 - o.2)
    }
}

/// What keeping the value `f` makes costs.
fn measure<T>(f: impl FnOnce() -> T) -> (T, Live) {
    let before = live();
    let value = f();
    (value, live() - before)
}

fn row(what: &str, l: Live, per: f64) {
    println!(
        "  {what:<58} {:>8.0} B  [{:>6.0} B chunks, {:>4.1} allocations]",
        l.0 as f64 / per,
        l.1 as f64 / per,
        l.2 as f64 / per
    );
}

/// bench/cache.sh's ConfigMap number `i`, as `kubectl get -o json` shows it after
/// `kubectl create` on a v1.37 apiserver.
fn bench_object(i: usize) -> serde_json::Value {
    serde_json::json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": format!("bench-cm-{i:06}"),
            "namespace": "bench-cache",
            "uid": format!("{:08x}-1b2c-4d5e-8f90-{:012x}", i * 2654435761 % (1 << 32), i),
            "resourceVersion": format!("{}", 20000 + i),
            "creationTimestamp": "2025-11-23T00:59:48Z",
            "labels": {"app": "bench", "idx": format!("{i}")},
            "managedFields": [{
                "manager": "kubectl-create",
                "operation": "Update",
                "apiVersion": "v1",
                "time": "2025-11-23T00:59:48Z",
                "fieldsType": "FieldsV1",
                "fieldsV1": {
                    "f:data": {".": {}, "f:checksum": {}, "f:config.yaml": {}, "f:mode": {}, "f:owner": {}},
                    "f:metadata": {"f:labels": {".": {}, "f:app": {}, "f:idx": {}}}
                }
            }]
        },
        "data": {
            "config.yaml": format!("replicas: 3\nimage: registry.example.com/app:v1.{}\n", i % 100),
            "mode": "production",
            "owner": format!("team-{}", i % 17),
            "checksum": format!("{:08x}{i:08x}", i * 2654435761 % (1 << 32)),
        }
    })
}

/// The JSON of object `i`: the template with its name, uid and idx label varied.
fn object_json(template: Option<&serde_json::Value>, i: usize) -> Vec<u8> {
    let mut v = match template {
        Some(t) => {
            let mut v = t.clone();
            let meta = &mut v["metadata"];
            // bench-cm-000123 -> bench-cm-<i>, as long as the template's own number.
            let name = meta["name"].as_str().unwrap_or("cm");
            let prefix = name.trim_end_matches(|c: char| c.is_ascii_digit());
            let width = name.len() - prefix.len();
            meta["name"] = format!("{prefix}{i:0width$}").into();
            if let Some(uid) = meta["uid"].as_str() {
                meta["uid"] = format!("{}{i:012x}", &uid[..uid.len().saturating_sub(12)]).into();
            }
            v
        }
        None => bench_object(i),
    };
    if let Some(labels) = v["metadata"]["labels"].as_object_mut() {
        labels.insert("idx".into(), format!("{i}").into());
    }
    serde_json::to_vec(&v).expect("JSON")
}

fn decode(json: &[u8], drop_managed_fields: bool) -> Arc<ConfigMap> {
    let mut cm: ConfigMap = serde_json::from_slice(json).expect("a ConfigMap");
    if drop_managed_fields {
        cm.metadata.managed_fields = None;
    }
    Arc::new(cm)
}

type Map = BTreeMap<String, String>;

fn meta_strings(m: &ObjectMeta) -> impl Iterator<Item = &String> {
    [
        &m.name,
        &m.namespace,
        &m.uid,
        &m.resource_version,
        &m.generate_name,
        &m.self_link,
    ]
    .into_iter()
    .flatten()
}

/// The heap cost of strings' buffers.
fn strings<'a>(all: impl Iterator<Item = &'a String>) -> Live {
    all.filter(|s| s.capacity() > 0)
        .fold(Live(0, 0, 0), |acc, s| {
            Live(
                acc.0 + s.capacity() as isize,
                acc.1 + chunk(s.capacity()),
                acc.2 + 1,
            )
        })
}

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(10_000);
    let template: Option<serde_json::Value> = std::env::args().nth(2).map(|path| {
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
    });
    let jsons: Vec<Vec<u8>> = (0..n).map(|i| object_json(template.as_ref(), i)).collect();

    println!(
        "sizes: ConfigMap {} B (ObjectMeta {} B), Arc<ConfigMap> block {} B",
        size_of::<ConfigMap>(),
        size_of::<ObjectMeta>(),
        size_of::<ConfigMap>() + 2 * size_of::<usize>()
    );

    for drop_mf in [true, false] {
        let (objects, total) =
            measure(|| jsons.iter().map(|j| decode(j, drop_mf)).collect::<Vec<_>>());
        let vec_bytes = Live(
            (objects.capacity() * size_of::<Arc<ConfigMap>>()) as isize,
            chunk(objects.capacity() * size_of::<Arc<ConfigMap>>()),
            1,
        );
        let per = n as f64;
        println!(
            "\none ConfigMap, managedFields {} (mean of {} objects):",
            if drop_mf { "dropped" } else { "kept" },
            n
        );
        let objects_only = total - vec_bytes;
        row(
            "object total (Arc block + everything it owns)",
            objects_only,
            per,
        );
        let arc = size_of::<ConfigMap>() + 16;
        let mut parts = Live(0, 0, 0);
        let mut part = |what: &str, l: Live| {
            row(&format!("  {what}"), l, per);
            parts = Live(parts.0 + l.0, parts.1 + l.1, parts.2 + l.2);
        };
        part(
            "Arc block: counts 16 + ConfigMap struct (ObjectMeta inline)",
            Live((arc * n) as isize, chunk(arc) * n as isize, n as isize),
        );
        part(
            "metadata strings (name, namespace, uid, resourceVersion)",
            strings(objects.iter().flat_map(|o| meta_strings(&o.metadata))),
        );
        for (what, get) in [
            (
                "labels",
                (|o| &o.metadata.labels) as fn(&ConfigMap) -> &Option<Map>,
            ),
            ("data", |o| &o.data),
        ] {
            let maps: Vec<&Map> = objects.iter().filter_map(|o| get(o).as_ref()).collect();
            let entries = maps.iter().map(|m| m.len()).sum::<usize>() as f64 / per;
            let key_values = strings(maps.iter().flat_map(|m| m.iter().flat_map(|(k, v)| [k, v])));
            // The maps' own nodes: a copy of each map, minus its strings.
            let (copies, l) = measure(|| maps.iter().map(|m| (*m).clone()).collect::<Vec<Map>>());
            let copies_vec = chunk(copies.capacity() * size_of::<Map>());
            let vec_live = Live(
                (copies.capacity() * size_of::<Map>()) as isize,
                copies_vec,
                1,
            );
            part(
                &format!("{what}: BTreeMap<String, String> nodes ({entries:.0} entries)"),
                l - vec_live - key_values,
            );
            part(&format!("{what}: key and value strings"), key_values);
        }
        if !drop_mf {
            let (copies, l) = measure(|| {
                objects
                    .iter()
                    .map(|o| o.metadata.managed_fields.clone())
                    .collect::<Vec<_>>()
            });
            let vec_live = Live(
                (copies.capacity() * size_of_val(&copies[0])) as isize,
                chunk(copies.capacity() * size_of_val(&copies[0])),
                1,
            );
            part(
                "managedFields (FieldsV1 as a serde_json::Value tree)",
                l - vec_live,
            );
            // A clone allocates exactly; the decoded Vec grew as serde pushed entries.
            let spare = objects
                .iter()
                .filter_map(|o| o.metadata.managed_fields.as_ref())
                .fold(Live(0, 0, 0), |acc, v| {
                    let size = size_of::<ManagedFieldsEntry>();
                    let (cap, len) = (v.capacity() * size, v.len() * size);
                    Live(
                        acc.0 + (cap - len) as isize,
                        acc.1 + chunk(cap) - chunk(len),
                        acc.2,
                    )
                });
            part("managedFields: the decoded Vec's spare capacity", spare);
        }
        row("  other", objects_only - parts, per);

        // The store, built as the informer builds it: one `replace` after the list.
        let (store, l) = measure(|| {
            let store: Store<ConfigMap> = Store::new();
            store.replace(objects.clone());
            store
        });
        row("store after the list (replace), all structures", l, per);
        drop(store);
        let (store, l) = measure(|| {
            let store: Store<ConfigMap> = Store::new();
            for o in &objects {
                store.upsert(o.clone());
            }
            store
        });
        row("store built by watch events (upsert each)", l, per);
        drop(store);
        let (store, l) = measure(|| {
            let store: Store<ConfigMap> = Store::new();
            store
                .add_indexers([("app".to_string(), label_index::<ConfigMap>("app"))])
                .expect("new index");
            store.replace(objects.clone());
            store
        });
        row(
            "store with an `app` label index (one value for all)",
            l,
            per,
        );
        drop(store);
        let (store, l) = measure(|| {
            let store: Store<ConfigMap> = Store::new();
            store
                .add_indexers([("idx".to_string(), label_index::<ConfigMap>("idx"))])
                .expect("new index");
            store.replace(objects.clone());
            store
        });
        row(
            "store with an `idx` label index (a value per object)",
            l,
            per,
        );
        drop(store);
        if drop_mf {
            lister_throughput(&objects);
        }
        drop(objects);
    }
}

fn ops_per_sec(mut f: impl FnMut(usize), min_ops: usize) -> f64 {
    let start = std::time::Instant::now();
    let mut n = 0;
    while n < min_ops || start.elapsed() < std::time::Duration::from_millis(500) {
        f(n);
        n += 1;
    }
    n as f64 / start.elapsed().as_secs_f64()
}

/// informer_memory's lister figures, over a store filled by `replace`.
fn lister_throughput(objects: &[Arc<ConfigMap>]) {
    let store: Store<ConfigMap> = Store::new();
    store.replace(objects.to_vec());
    let lister = Lister::new(store);
    let ns = objects[0].metadata.namespace.clone().unwrap_or_default();
    let nsl = lister.namespaced(&ns);
    let names: Vec<String> = objects
        .iter()
        .filter_map(|o| o.metadata.name.clone())
        .collect();
    let get = ops_per_sec(
        |i| {
            std::hint::black_box(nsl.get(&names[i % names.len()]));
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
    println!(
        "  lister over {} objects: get {get:.0}/s, list(ns, app=bench) {list:.1}/s",
        objects.len()
    );
}
