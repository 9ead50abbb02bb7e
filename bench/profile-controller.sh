#!/usr/bin/env bash
# Where our sample-controller spends its CPU at scale: one run of part 2's scenario (N Foos
# created at once, default flags) under `perf record`, on the bench control plane.
#
#   bench/profile-controller.sh            N=1000 (BENCH_FOOS), writes
#                                          bench/results/controller-profile.txt
#   BENCH_PROFILE_ARGS="--kube-api-qps 5 --kube-api-burst 10" bench/profile-controller.sh
#
# The flat profile groups samples by symbol (no children), then by shared object, so
# kernel (TLS/socket syscalls, futex wake-ups), libc (malloc) and our own code can be told
# apart. perf.data stays in $W (printed) for `perf report -i` by hand.
. "$(dirname "$0")/lib.sh"
N=${BENCH_FOOS:-1000}
command -v perf >/dev/null || { blog "perf is not installed (apt-get install linux-perf)"; exit 1; }
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
# shellcheck disable=SC2086
perf record -F 999 -g -o "$W/perf.data" -- "$OURS" --controllers foo --workers 2 \
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
{
  echo "# bench/profile-controller.sh: N=$N, args: ${BENCH_PROFILE_ARGS:-(defaults)}, converged in $(echo "$t1 - $t0" | bc) s"
  echo "# by shared object"
  perf report -i "$W/perf.data" --no-children --sort dso --stdio 2>/dev/null | grep -v '^#' | grep -v '^$' | head -15
  echo "# by symbol (top 60)"
  perf report -i "$W/perf.data" --no-children --sort dso,symbol --stdio -g none 2>/dev/null | grep -v '^#' | grep -v '^$' | head -60
} | tee "$RESULTS/controller-profile.txt"
blog "perf.data: $W/perf.data"
