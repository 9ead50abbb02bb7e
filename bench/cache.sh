#!/usr/bin/env bash
# Part 3: informer cache memory per object, lister get/list throughput, workqueue
# throughput; ours (runtime/examples/*.rs) vs client-go (bench/go/probe.go.txt, built here
# in a temp module against k8s.io/client-go $CLIENT_GO_VERSION).
#
#   bench/cache.sh               N=10000 ConfigMaps, D=2000 Deployments, BENCH_RUNS (5) runs per figure
#   bench/cache.sh --smoke       N=200, D=20, 1 run, queue 20000 items; Go side only if Go works
#
# Informers run against the SAME real kube-apiserver (hack/testenv.sh, a separate instance:
# KUBE_CODEGEN_TESTENV_DIR=/tmp/kube-codegen-bench, port offset 200), holding N ConfigMaps
# in namespace bench-cache, each with labels app=bench,idx=<i>, 4 data keys (~200 bytes)
# and the managedFields entry `kubectl create` leaves; and D Deployments in namespace
# bench-cache-deploy (sample-controller's shape: nginx, labels app=bench,idx=<i>,
# controller=<foo>; `paused`, so kube-controller-manager writes their status and makes no
# ReplicaSets), with the managedFields entries of `kubectl create` and of the controller
# manager's status writes. Each kind is cached whole (`informer_for`; client-go's typed
# informer) and metadata only (`metadata_informer_for`; client-go's metadatainformer),
# with managedFields kept and dropped; ours also with the compact cache (`factory.compact()`:
# each object kept as its JSON, decoded by every lister read). Each run is a fresh process that lists+watches the
# namespace; memory = (after sync - before the informer started) / objects.
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
D=${BENCH_CACHE_DEPLOYMENTS:-2000}
((SMOKE)) && N=200 D=20 QUEUE_ITEMS=20000
CLIENT_GO_VERSION=${CLIENT_GO_VERSION:-v0.37.2}
NS=bench-cache DNS=bench-cache-deploy
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
# populate NS RESOURCE COUNT TEMPLATE: unless NS holds COUNT objects of RESOURCE labelled
# app=bench, (re)create NS with COUNT of them. TEMPLATE is one object's YAML as a Python
# f-string of its index `i`; kubectl creates them from files of 250, four files at a time.
populate() {
  local ns=$1 resource=$2 count=$3 template=$4 have
  have=$(kubectl get "$resource" -n "$ns" -l app=bench --no-headers 2>/dev/null | wc -l)
  if [[ $have != "$count" ]]; then
    kubectl delete namespace "$ns" --ignore-not-found --wait=true >/dev/null
    kubectl create namespace "$ns" >/dev/null
    blog "creating $count $resource in $ns"
    python3 - "$W/$ns" "$count" "$template" <<'EOF'
import os, sys
out, n, template = sys.argv[1], int(sys.argv[2]), sys.argv[3]
render = eval("lambda i: f" + repr(template))
os.makedirs(out)
chunk = 250
for c in range(0, n, chunk):
    with open(f"{out}/{c:06d}.yaml", "w") as f:
        for i in range(c, min(n, c + chunk)):
            f.write("---\n" + render(i))
EOF
    ls "$W/$ns"/*.yaml | xargs -P 4 -n 1 kubectl create -n "$ns" -f >/dev/null
  fi
  blog "$(kubectl get "$resource" -n "$ns" -l app=bench --no-headers | wc -l) $resource present"
}

populate "$NS" configmaps "$N" 'apiVersion: v1
kind: ConfigMap
metadata:
  name: bench-cm-{i:06d}
  labels: {{app: bench, idx: "{i}"}}
data:
  config.yaml: "replicas: 3\nimage: registry.example.com/app:v1.{i % 100}\n"
  mode: production
  owner: team-{i % 17}
  checksum: "{i * 2654435761 % 2**32:08x}{i:08x}"
'
populate "$DNS" deployments "$D" 'apiVersion: apps/v1
kind: Deployment
metadata:
  name: foo-{i:06d}-deploy
  labels: {{app: bench, idx: "{i}", controller: foo-{i:06d}}}
spec:
  paused: true
  replicas: 1
  selector:
    matchLabels: {{app: nginx, controller: foo-{i:06d}}}
  template:
    metadata:
      labels: {{app: nginx, controller: foo-{i:06d}}}
    spec:
      containers:
      - name: nginx
        image: nginx:latest
'
# Wait until kube-controller-manager has written every Deployment's status, so the objects
# do not change under the measurement.
written=0
for _ in $(seq 900); do
  written=$(kubectl get deployments -n "$DNS" -l app=bench -o jsonpath='{range .items[*]}{.status.observedGeneration}{"\n"}{end}' | grep -c . || true)
  [[ $written == "$D" ]] && break
  sleep 1
done
blog "$written of $D Deployments with their status written"

for i in $(seq "$RUNS"); do
  for kind in configmaps deployments; do
    if [[ $kind == configmaps ]]; then ns=$NS n=$N; else ns=$DNS n=$D; fi
    for mode in full metadata; do
      for t in none drop-managed-fields; do
        "$RUST_INF" "$ns" "$n" "$t" "$kind" "$mode" typed >>"$RESULTS/cache-informer.jsonl"
        "$RUST_INF" "$ns" "$n" "$t" "$kind" "$mode" compact >>"$RESULTS/cache-informer.jsonl"
        [[ -n $GO_PROBE ]] && "$GO_PROBE" informer "$ns" "$n" "$t" "$kind" "$mode" >>"$RESULTS/cache-informer.jsonl"
      done
    done
  done
done
# The namespaces are kept for the next run (same N and D); delete them by hand when done.

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
    g[(r.get("kind", "configmaps"), r.get("mode", "full"), r["transform"], r["impl"], r.get("cache", "typed"))].append(r)
def med(rs, k):
    return statistics.median(r[k] for r in rs)
print("| kind | cached | managedFields | informer | objects | heap bytes/object | RSS bytes/object | lister get/s | lister list(ns, app=bench)/s | sync (s) | runs |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for (kind, mode, t, impl, cache), rs in sorted(g.items()):
    name = {("rust", "full", "typed"): "ours (informer_for)", ("rust", "metadata", "typed"): "ours (metadata_informer_for)",
            ("rust", "full", "compact"): "ours, compact (compact().informer_for)",
            ("rust", "metadata", "compact"): "ours, compact (compact().metadata_informer_for)",
            ("go", "full", "typed"): "client-go (informers)", ("go", "metadata", "typed"): "client-go (metadatainformer)"}[(impl, mode, cache)]
    print(f"| {kind} | {'metadata only' if mode == 'metadata' else 'whole object'} | {'dropped' if t else 'kept'} | {name} | "
          f"{rs[0]['objects']} | {med(rs,'heap_bytes_per_object'):.0f} | "
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
