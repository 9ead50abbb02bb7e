#!/usr/bin/env bash
# Part 3: informer cache memory per object, lister get/list throughput, workqueue
# throughput; ours (runtime/examples/*.rs) vs client-go (bench/go/probe.go.txt, built here
# in a temp module against k8s.io/client-go $CLIENT_GO_VERSION).
#
#   bench/cache.sh               N=10000 ConfigMaps, BENCH_RUNS (5) runs per figure
#   bench/cache.sh --smoke       N=200, 1 run, queue 20000 items; Go side only if Go works
#
# Informers run against the SAME real kube-apiserver (hack/testenv.sh, a separate instance:
# KUBE_CODEGEN_TESTENV_DIR=/tmp/kube-codegen-bench, port offset 200), holding N ConfigMaps
# in namespace bench-cache, each with labels app=bench,idx=<i>, 4 data keys (~200 bytes)
# and the managedFields entry `kubectl create` leaves. Each run is a fresh process that
# lists+watches the namespace; memory = (after sync - before the informer started) / N.
#   heap: ours = live bytes by a counting global allocator; Go = MemStats.HeapAlloc after GC
#   rss:  /proc/self/statm resident pages, both
# Per-object byte breakdown of our cache (runtime/examples/cache_bytes.rs, no timing): one
# of the ConfigMaps as the apiserver returns it, decoded N times, and the store's overhead.
# Workqueue lines: ours runs each scenario with the queue's timing metrics (default) and
# without (`-no-timing`: what client-go's default no-op metrics provider records).
# Output: bench/results/cache.md, cache-*.jsonl and cache-bytes.txt
. "$(dirname "$0")/lib.sh"
SMOKE=0
[[ ${1:-} == --smoke ]] && SMOKE=1 RUNS=1
N=${BENCH_CACHE_OBJECTS:-10000} QUEUE_ITEMS=${BENCH_QUEUE_ITEMS:-200000} WORKERS=${BENCH_QUEUE_WORKERS:-4}
((SMOKE)) && N=200 QUEUE_ITEMS=20000
CLIENT_GO_VERSION=${CLIENT_GO_VERSION:-v0.37.2}
NS=bench-cache
mkdir -p "$RESULTS"
rm -f "$RESULTS"/cache-*.jsonl
W=$(mktemp -d /tmp/kcg-bench-cache.XXXXXX)
trap 'rm -rf "$W"' EXIT

blog "building the Rust probes ($BENCH_CONTROLLER_PROFILE)"
cargo build --profile "$BENCH_CONTROLLER_PROFILE" -q -p kube-codegen-runtime --example informer_memory --example workqueue_throughput \
  --example cache_bytes --manifest-path "$REPO_ROOT/Cargo.toml"
RUST_INF=$CARGO_TARGET_DIR/$CONTROLLER_PROFILE_DIR/examples/informer_memory
RUST_WQ=$CARGO_TARGET_DIR/$CONTROLLER_PROFILE_DIR/examples/workqueue_throughput
RUST_BYTES=$CARGO_TARGET_DIR/$CONTROLLER_PROFILE_DIR/examples/cache_bytes

GO_PROBE=
if have_go; then
  blog "building the client-go probe ($CLIENT_GO_VERSION)"
  mkdir -p "$W/probe"
  cp "$BENCH_DIR/go/probe.go.txt" "$W/probe/main.go"
  (
    cd "$W/probe"
    export GOFLAGS=-mod=mod GOTOOLCHAIN=local
    cat >go.mod <<EOF
module bench.example.com/probe

go 1.25.0

require (
	k8s.io/api $CLIENT_GO_VERSION
	k8s.io/apimachinery $CLIENT_GO_VERSION
	k8s.io/client-go $CLIENT_GO_VERSION
)
EOF
    "$GO" mod tidy >/dev/null 2>&1
    "$GO" build -o probe .
  ) && GO_PROBE=$W/probe/probe
fi

# ---- workqueue ---------------------------------------------------------------------
blog "workqueue: $QUEUE_ITEMS items, $WORKERS workers"
for i in $(seq "$RUNS"); do
  "$RUST_WQ" "$QUEUE_ITEMS" "$WORKERS" | python3 -c '
import sys, json
for line in sys.stdin:
    kv = dict(p.split("=", 1) for p in line.split()[1:])
    print(json.dumps({"impl": "rust", "scenario": kv["scenario"], "ops_per_sec": float(kv["ops_per_sec"]), "processed": int(kv["processed"]), "cpu_ms": float(kv["cpu_ms"])}))
' >>"$RESULTS/cache-workqueue.jsonl"
  [[ -n $GO_PROBE ]] && "$GO_PROBE" workqueue "$QUEUE_ITEMS" "$WORKERS" >>"$RESULTS/cache-workqueue.jsonl"
done

# ---- informer memory + listers -------------------------------------------------------
bench_cluster_up
have=$(kubectl get configmaps -n "$NS" -l app=bench --no-headers 2>/dev/null | wc -l)
if [[ $have != "$N" ]]; then
kubectl delete namespace "$NS" --ignore-not-found --wait=true >/dev/null
kubectl create namespace "$NS" >/dev/null
blog "creating $N ConfigMaps in $NS"
python3 - "$W/cms" "$N" <<'EOF'
import os, sys
out, n = sys.argv[1], int(sys.argv[2])
os.makedirs(out)
chunk = 250
for c in range(0, n, chunk):
    with open(f"{out}/{c:06d}.yaml", "w") as f:
        for i in range(c, min(n, c + chunk)):
            f.write(f"""---
apiVersion: v1
kind: ConfigMap
metadata:
  name: bench-cm-{i:06d}
  labels: {{app: bench, idx: "{i}"}}
data:
  config.yaml: "replicas: 3\\nimage: registry.example.com/app:v1.{i % 100}\\n"
  mode: production
  owner: team-{i % 17}
  checksum: "{i * 2654435761 % 2**32:08x}{i:08x}"
""")
EOF
ls "$W"/cms/*.yaml | xargs -P 4 -n 1 kubectl create -n "$NS" -f >/dev/null
fi
blog "$(kubectl get configmaps -n "$NS" -l app=bench --no-headers | wc -l) ConfigMaps present"

for i in $(seq "$RUNS"); do
  for t in none drop-managed-fields; do
    "$RUST_INF" "$NS" "$N" "$t" >>"$RESULTS/cache-informer.jsonl"
    [[ -n $GO_PROBE ]] && "$GO_PROBE" informer "$NS" "$N" "$t" >>"$RESULTS/cache-informer.jsonl"
  done
done
# The namespace is kept for the next run (same N); delete it by hand when done.

blog "byte breakdown of one cached ConfigMap"
kubectl get configmap -n "$NS" bench-cm-000000 -o json --show-managed-fields >"$W/cm.json"
"$RUST_BYTES" "$N" "$W/cm.json" >"$RESULTS/cache-bytes.txt"

python3 - "$RESULTS" >"$RESULTS/cache.md" <<'EOF'
import json, statistics, sys, collections
d = sys.argv[1]
def load(p):
    return [json.loads(l) for l in open(p) if l.strip()]
inf = load(f"{d}/cache-informer.jsonl")
g = collections.defaultdict(list)
for r in inf:
    g[(r["impl"], r["transform"])].append(r)
def med(rs, k):
    return statistics.median(r[k] for r in rs)
print("| informer | managedFields | objects | heap bytes/object | RSS bytes/object | lister get/s | lister list(ns, app=bench)/s | sync (s) | runs |")
print("|---|---|---|---|---|---|---|---|---|")
for (impl, t), rs in sorted(g.items()):
    name = {"rust": "ours (SharedInformerFactory)", "go": "client-go"}[impl]
    print(f"| {name} | {'dropped' if t else 'kept'} | {rs[0]['objects']} | {med(rs,'heap_bytes_per_object'):.0f} | "
          f"{med(rs,'rss_bytes_per_object'):.0f} | {med(rs,'lister_get_per_sec'):,.0f} | "
          f"{med(rs,'lister_list_per_sec'):,.1f} | {med(rs,'sync_secs'):.2f} | {len(rs)} |")
wq = load(f"{d}/cache-workqueue.jsonl")
g = collections.defaultdict(list)
for r in wq:
    g[(r["impl"], r["scenario"])].append(r["ops_per_sec"])
print()
print("| workqueue | scenario | ops/s (add+get+done, median) | runs |")
print("|---|---|---|---|")
for (impl, sc), v in sorted(g.items()):
    print(f"| {'ours' if impl == 'rust' else 'client-go'} | {sc} | {statistics.median(v):,.0f} | {len(v)} |")
print()
print("Byte breakdown of our cache (runtime/examples/cache_bytes.rs):")
print()
print("```text")
print(open(f"{d}/cache-bytes.txt").read().rstrip())
print("```")
EOF
cat "$RESULTS/cache.md"
