#!/usr/bin/env bash
# The CronJob operator side by side: the Rust port's manager (cronjob-manager, release)
# vs the kubebuilder project's Go manager (examples/cronjob/go-project's cmd/main.go on
# controller-runtime v0.24.1, built from a copy), each alone against the SAME control
# plane, alternating within each round, the same workload.
#
#   bench/cronjob.sh               BENCH_CRONJOBS=300, BENCH_TICKS=5 schedule ticks, BENCH_RUNS rounds
#   bench/cronjob.sh --smoke       5 CronJobs, 1 tick, 1 round (Go only if its modules are cached)
#
# Both managers run whole: controller, webhooks (conversion, defaulting, validation on one
# TLS port, the configurations pointed at https://127.0.0.1:PORT, lib.sh), health probes;
# no leader election. cronjob-manager runs with its defaults (20 QPS, burst 30 per API
# group/version) unless BENCH_CRONJOB_OURS_ARGS says otherwise (e.g. "--kube-api-qps 0":
# no client-side limit; its rows are labelled with it); BENCH_CRONJOB_APPEND=1 keeps the
# rows of earlier runs.
# Per round and manager: fresh namespace; start it; wait for /readyz; t0; create N v1
# CronJobs on a one-minute schedule ("*/1 * * * *", 8 concurrent creates through the
# webhooks, examples/cronjob/examples/admission_burst.rs, which first checks defaulting and
# validation: N+1 CronJobs, one on */5); then TICKS minute boundaries pass (each fires every
# */1 CronJob: the controller creates its Job) and 25 s after the last one, stop.
# No kubelet runs: the driver (examples/cronjob/examples/job_finisher.rs) watches the
# namespace's Jobs and marks each finished (succeeded, Complete) 5 s after its creation, so
# the controllers record and prune finished Jobs (history limits 3 and 1) as in a cluster;
# it also records every Job's lag, pruned ones included.
# Not a figure: the time to every CronJob's Available condition. The Go manager had not
# written it on any of 300 CronJobs 80 s into a run, after its first Jobs (its log shows
# status updates that conflict and requeue), so a wait for it did not end.
# Figures: the time to create the N CronJobs through the manager's webhooks; each Job's lag, its creationTimestamp minus
# its scheduled-at annotation (seconds: the API server's timestamps have 1 s resolution; the
# finisher's p50/p99 over every Job of the run);
# CPU (utime+stime, /proc/PID/stat) for the whole run and for the ticks window (created
# to stop); peak RSS (VmHWM) at stop. Output: bench/results/cronjob.md, cronjob-runs.jsonl.
. "$(dirname "$0")/lib.sh"
SMOKE=0
[[ ${1:-} == --smoke ]] && SMOKE=1 RUNS=1
N=${BENCH_CRONJOBS:-300}
TICKS=${BENCH_TICKS:-5}
((SMOKE)) && N=5 TICKS=1
CONFIGS=${BENCH_CRONJOB_CONFIGS:-go ours}
mkdir -p "$RESULTS"
OUT=$RESULTS/cronjob-runs.jsonl
[[ -n ${BENCH_CRONJOB_APPEND:-} ]] || rm -f "$OUT"
W=$(mktemp -d /tmp/kcg-bench-cronjob.XXXXXX)
MGR_PID= FIN_PID=
cleanup() {
  [[ -n $MGR_PID ]] && kill "$MGR_PID" 2>/dev/null || true
  [[ -n $FIN_PID ]] && kill "$FIN_PID" 2>/dev/null || true
  rm -rf "$W"
}
trap cleanup EXIT
load_before=$(cut -d' ' -f1-3 /proc/loadavg)

blog "building cronjob-manager and the load generator ($BENCH_PROFILE)"
cargo build --profile "$BENCH_PROFILE" -q -p cronjob --bin cronjob-manager --example admission_burst \
  --example job_finisher --manifest-path "$REPO_ROOT/Cargo.toml"
FINISHER=$CARGO_TARGET_DIR/$PROFILE_DIR/examples/job_finisher
OURS=$CARGO_TARGET_DIR/$PROFILE_DIR/cronjob-manager
BURST=$CARGO_TARGET_DIR/$PROFILE_DIR/examples/admission_burst
GOMGR=$W/go/bin
go_side "$W/go" manager
webhook_endpoint "$W"
bench_cluster_up
install_cronjob_crd "$BASE" "$CERTS/ca.crt"
cronjob_webhook_objects "$BASE" "$CERTS/ca.crt" webhooks | kubectl apply -f - >/dev/null

run_one() { # config round
  local cfg=$1 round=$2 ns=cj-$1-$2-$RANDOM hp bin t0 tc t1 c0 cc c1 rss next end
  kubectl create namespace "$ns" >/dev/null
  hp=$(free_port)
  case $cfg in
    ours) bin=(env RUST_LOG=warn "$OURS" --webhook-host 127.0.0.1 ${BENCH_CRONJOB_OURS_ARGS:-}) ;;
    go) bin=("$GOMGR" --zap-log-level=error) ;;
  esac
  "${bin[@]}" --webhook-cert-path "$CERTS" --webhook-port "$PORT" \
    --health-probe-bind-address "127.0.0.1:$hp" --metrics-bind-address 0 >"$W/mgr-$cfg-$round.log" 2>&1 &
  MGR_PID=$!
  for _ in $(seq 1 300); do
    [[ $(curl -s --max-time 1 "http://127.0.0.1:$hp/readyz") == ok ]] && break
    kill -0 "$MGR_PID" 2>/dev/null || { cat "$W/mgr-$cfg-$round.log" >&2; exit 1; }
    sleep 0.2
  done
  wait_https "$BASE/" "$CERTS/ca.crt" "$MGR_PID" "$W/mgr-$cfg-$round.log"
  "$FINISHER" "$ns" 5 >"$W/fin-$cfg-$round.json" 2>"$W/fin-$cfg-$round.log" &
  FIN_PID=$!
  c0=$(cpu_ticks "$MGR_PID")
  t0=$(date +%s.%N)
  "$BURST" "$ns" "$N" 8 cj >/dev/null
  tc=$(date +%s.%N)
  cc=$(cpu_ticks "$MGR_PID")
  # TICKS minute boundaries from now, then 25 s for the Jobs of the last one.
  next=$(( ($(date +%s) / 60 + TICKS) * 60 ))
  end=$((next + 25))
  sleep $((end - $(date +%s)))
  t1=$(date +%s.%N)
  c1=$(cpu_ticks "$MGR_PID")
  rss=$(awk '/^VmHWM/ {print $2}' "/proc/$MGR_PID/status")
  kill -TERM "$FIN_PID"
  wait "$FIN_PID" || { cat "$W/fin-$cfg-$round.log" >&2; exit 1; }
  FIN_PID=
  # While the manager still converts (the namespace's deletion lists CronJobs in every
  # version); the next manager must not find them either.
  kubectl delete --raw "/apis/batch.tutorial.kubebuilder.io/v1/namespaces/$ns/cronjobs" >/dev/null
  kill "$MGR_PID"
  wait "$MGR_PID" 2>/dev/null || true
  MGR_PID=
  python3 - "$cfg" "$round" "$N" "$TICKS" "$t0" "$tc" "$t1" "$c0" "$cc" "$c1" "$rss" "$(getconf CLK_TCK)" "$W/fin-$cfg-$round.json" <<'PY' | tee -a "$OUT"
import json, os, sys
cfg, rnd, n, ticks, t0, tc, t1, c0, cc, c1, rss, hz, fin = sys.argv[1:]
t0, tc, t1 = float(t0), float(tc), float(t1)
hz = int(hz)
fin = json.load(open(fin))
print(json.dumps({
    "config": cfg + (" " + os.environ["BENCH_CRONJOB_OURS_ARGS"] if cfg == "ours" and os.environ.get("BENCH_CRONJOB_OURS_ARGS") else ""), "round": int(rnd), "cronjobs": int(n), "ticks": int(ticks),
    "created_s": round(tc - t0, 2), "jobs": fin["jobs"], "jobs_finished": fin["finished"], "lag_p50_s": fin["lag_p50_s"], "lag_p99_s": fin["lag_p99_s"],
    "cpu_total_s": (int(c1) - int(c0)) / hz, "cpu_ticks_s": (int(c1) - int(cc)) / hz,
    "ticks_window_s": round(t1 - tc, 1), "peak_rss_mib": round(int(rss) / 1024, 1),
}))
PY
  kubectl delete namespace "$ns" --timeout=120s >/dev/null || blog "namespace $ns still terminating"
}

for round in $(seq 1 "$RUNS"); do
  for cfg in $CONFIGS; do
    blog "round $round: $cfg"
    run_one "$cfg" "$round"
  done
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

python3 - "$OUT" "$N" "$TICKS" "$RUNS" "$load_before" "$load_after" "$BENCH_PROFILE" <<'PY' >"$RESULTS/cronjob.md"
import json, os, statistics, sys
out, n, ticks, runs, lb, la, profile = sys.argv[1:]
rows = [json.loads(l) for l in open(out)]
med = lambda xs: statistics.median(xs) if xs else float("nan")
names = {"go": "Go manager (controller-runtime v0.24.1)", "ours": "cronjob-manager (kube-codegen runtime)"}
print(f"# CronJob operator: {n} CronJobs on a one-minute schedule, {ticks} ticks\n")
print(f"`bench/cronjob.sh` ({profile} builds; medians of {runs} rounds, alternating within each round; load average {lb} before, {la} after; {os.cpu_count()} cores). cronjob-manager at its default 20 QPS / burst 30 per API group/version unless its row names other arguments; the Go manager as the project builds it.\n")
print("| manager | created s | Jobs (expected) | Job lag p50 s | Job lag p99 s | CPU s, whole run | CPU s, ticks window | peak RSS MiB |")
print("|---|---|---|---|---|---|---|---|")
for cfg in sorted({r["config"] for r in rows}):
    rs = [r for r in rows if r["config"] == cfg]
    f = lambda k: med([r[k] for r in rs if r[k] is not None])
    print(f"| {names.get(cfg, 'cronjob-manager ' + cfg[5:])} | {f('created_s'):.1f} | {f('jobs'):.0f} ({int(n) * int(ticks)}) | {f('lag_p50_s'):.0f} | {f('lag_p99_s'):.0f} | {f('cpu_total_s'):.2f} | {f('cpu_ticks_s'):.2f} | {f('peak_rss_mib'):.1f} |")
print("\nPer round (raw: cronjob-runs.jsonl):\n")
print("| round | manager | created s | Jobs | lag p50/p99 s | CPU s whole / ticks | window s | peak RSS MiB |")
print("|---|---|---|---|---|---|---|---|")
for r in rows:
    print(f"| {r['round']} | {r['config']} | {r['created_s']} | {r['jobs']} | {r['lag_p50_s']}/{r['lag_p99_s']} | {r['cpu_total_s']:.2f} / {r['cpu_ticks_s']:.2f} | {r['ticks_window_s']} | {r['peak_rss_mib']} |")
PY
cat "$RESULTS/cronjob.md"
