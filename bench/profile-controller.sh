#!/usr/bin/env bash
# Where our sample-controller spends its CPU at scale: one run of part 2's scenario (N Foos
# created at once, default flags) under `perf record`, on the bench control plane.
#
#   bench/profile-controller.sh            N=1000 (BENCH_FOOS), writes
#                                          bench/results/controller-profile.txt
#   BENCH_PROFILE_ARGS="--kube-api-qps 5 --kube-api-burst 10" bench/profile-controller.sh
#   bench/profile-controller.sh --heap     the same run under heaptrack: peak heap by owner,
#                                          bench/results/controller-heap.txt
#
# The flat profile groups samples by symbol (no children), then by shared object, so
# kernel (TLS/socket syscalls, futex wake-ups), libc (malloc) and our own code can be told
# apart. perf.data stays in $W (printed) for `perf report -i` by hand.
. "$(dirname "$0")/lib.sh"
N=${BENCH_FOOS:-1000}
HEAP=0
[[ ${1:-} == --heap ]] && HEAP=1
if ((HEAP)); then
  command -v heaptrack >/dev/null || { blog "heaptrack is not installed (apt-get install heaptrack)"; exit 1; }
else
  command -v perf >/dev/null || { blog "perf is not installed (apt-get install linux-perf)"; exit 1; }
fi
W=$(mktemp -d /tmp/kcg-bench-profile.XXXXXX)
mkdir -p "$RESULTS"
blog "building sample-controller ($BENCH_CONTROLLER_PROFILE)"
cargo build --profile "$BENCH_CONTROLLER_PROFILE" -q -p sample-controller --manifest-path "$REPO_ROOT/Cargo.toml"
OURS=$CARGO_TARGET_DIR/$CONTROLLER_PROFILE_DIR/sample-controller
bench_cluster_up
install_foo_crd
ns=bench-profile-$$
kubectl create namespace "$ns" >/dev/null
write_foos "$W/foos" "$N"
port=$((18800 + RANDOM % 100))
PROFILER=(perf record -F 999 -g -o "$W/perf.data" --)
((HEAP)) && PROFILER=(heaptrack -o "$W/heap")
# shellcheck disable=SC2086
"${PROFILER[@]}" "$OURS" --controllers foo --workers 2 \
  --metrics-addr "127.0.0.1:$port" --health-addr "127.0.0.1:$((port + 1))" ${BENCH_PROFILE_ARGS:-} \
  >"$W/log" 2>&1 &
PERF_PID=$!
for _ in $(seq 100); do curl -sf "127.0.0.1:$((port + 1))/readyz" >/dev/null && break; sleep 0.1; done
t0=$(date +%s.%N)
ls "$W"/foos/*.yaml | xargs -P 4 -n 1 kubectl create -n "$ns" -f >/dev/null
while :; do
  read -r d s < <(foo_progress "$ns")
  [[ $d -ge $N && $s -ge $N ]] && break
  sleep 0.5
done
t1=$(date +%s.%N)
kill -TERM "$(pgrep -P "$PERF_PID" sample-control || pgrep -f "^$OURS")"
wait "$PERF_PID" || true
kubectl delete namespace "$ns" --wait=false >/dev/null
if ((HEAP)); then
  heap=$(compgen -G "$W/heap*" | head -1)
  heaptrack_print -f "$heap" --flamegraph-cost-type peak -F "$W/peak.stacks" >"$W/summary.txt"
  {
    echo "# bench/profile-controller.sh --heap: N=$N, args: ${BENCH_PROFILE_ARGS:-(defaults)}, converged in $(echo "$t1 - $t0" | bc) s"
    grep -E '^(total runtime|calls to allocation|peak heap|peak RSS)' "$W/summary.txt"
    echo "# peak heap by owner (flamegraph stacks of peak cost, grouped by owner: the frames a stack contains)"
    python3 - "$W/peak.stacks" <<'PY'
import collections, sys
# The first owner whose every key is in some frame of the stack; the order puts the specific
# before the general (a Foo's ObjectMeta is not a Deployment's).
OWNERS = [
    ("event recorder (correlator LRUs, queued Events)", ("events::",)),
    ("informer cache: Deployments, PodSpec", ("Deployment", "PodSpec")),
    ("informer cache: Deployments, ObjectMeta", ("Deployment", "ObjectMeta")),
    ("informer cache: Deployments, rest", ("Deployment",)),
    ("informer cache: Foos", ("Foo",)),
    ("informer cache: other (Arc blocks, store)", ("informer",)),
    ("HTTP/TLS buffers", ("hyper",)),
    ("HTTP/TLS buffers", ("rustls",)),
]
total, by = 0, collections.Counter()
for line in open(sys.argv[1], errors="replace"):
    stack, _, cost = line.rstrip().rpartition(" ")
    if not cost.isdigit():
        continue
    total += int(cost)
    frames = stack.split(";")
    owner = next((name for name, keys in OWNERS
                  if all(any(k in f for f in frames) for k in keys)), "other")
    by[owner] += int(cost)
print(f" {total / 1e6:.2f} MB total")
for name, cost in by.most_common():
    print(f"  {cost / 1e6:.2f} MB  {name}")
PY
  } | tee "$RESULTS/controller-heap.txt"
  blog "heaptrack data: $heap"
  exit 0
fi
{
  echo "# bench/profile-controller.sh: N=$N, args: ${BENCH_PROFILE_ARGS:-(defaults)}, converged in $(echo "$t1 - $t0" | bc) s"
  echo "# by shared object"
  perf report -i "$W/perf.data" --no-children --sort dso --stdio 2>/dev/null | grep -v '^#' | grep -v '^$' | head -15
  echo "# by symbol (top 60)"
  perf report -i "$W/perf.data" --no-children --sort dso,symbol --stdio -g none 2>/dev/null | grep -v '^#' | grep -v '^$' | head -60
} | tee "$RESULTS/controller-profile.txt"
blog "perf.data: $W/perf.data"
