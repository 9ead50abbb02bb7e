#!/usr/bin/env bash
# Admission webhooks under a burst of creates: the CronJob port's webhook server (the
# runtime's, examples/cronjob/examples/webhooks.rs: cronjob::webhook::bind, as
# cronjob-manager serves it) vs controller-runtime's serving the kubebuilder CronJob
# project's own webhooks (bench/go/cronjob-webhooks.go.txt, built in a copy of
# examples/cronjob/go-project), each alone against the SAME control plane, alternating
# within each round, plus a round without webhook configurations (the API server's own
# create cost).
#
#   bench/admission.sh              BENCH_CREATES=2000 creates, 32 concurrent, BENCH_RUNS rounds
#   bench/admission.sh --smoke      20 creates, 1 round (Go only if its modules are cached)
#   BENCH_ADMISSION_CONFIGS="ours go" bench/admission.sh
#
# Setup: the CronJob CRD (examples/cronjob/config/crd/bases) with its conversion webhook
# and config/webhook/manifests.yaml (controller-gen's four webhooks: mutating and validating,
# v1 and v2) pointed at https://127.0.0.1:PORT with a CA made here (openssl, ECDSA P-256);
# both servers use the same certificate and port. controller-gen writes no matchPolicy, so
# the API server's default (Equivalent) calls the v2 webhooks for v1 creates too, converting
# through /convert: each create is 4 admission calls and 2 conversions, as in a kubebuilder
# deployment.
# Per round and server: start it, wait for its TLS port, warm up (50 creates), then the
# burst: examples/cronjob/examples/admission_burst.rs (kube-rs, release) creates N v1
# CronJobs from C concurrent tasks in a fresh namespace; it first checks a create comes
# back defaulted and a bad schedule is refused (so both servers do the same work).
# Figures: client-side create latency p50/p99 (the API server's whole create, webhooks
# included: ms, request to response); the API server's own mean per webhook call
# (apiserver_admission_webhook_admission_duration_seconds sum/count deltas over the burst,
# from its /metrics); the webhook process's CPU over the burst (utime+stime from
# /proc/PID/stat) and its peak RSS (VmHWM) at the end. Output: bench/results/admission.md
# and admission-runs.jsonl.
. "$(dirname "$0")/lib.sh"
SMOKE=0
[[ ${1:-} == --smoke ]] && SMOKE=1 RUNS=1
N=${BENCH_CREATES:-2000}
C=${BENCH_CONCURRENCY:-32}
WARM=50
((SMOKE)) && N=20 WARM=5
CONFIGS=${BENCH_ADMISSION_CONFIGS:-go ours none}
mkdir -p "$RESULTS"
OUT=$RESULTS/admission-runs.jsonl
rm -f "$OUT"
W=$(mktemp -d /tmp/kcg-bench-admission.XXXXXX)
SRV_PID=
cleanup() {
  [[ -n $SRV_PID ]] && kill "$SRV_PID" 2>/dev/null || true
  rm -rf "$W"
}
trap cleanup EXIT
load_before=$(cut -d' ' -f1-3 /proc/loadavg)

blog "building the Rust webhook server and the load generator ($BENCH_PROFILE)"
cargo build --profile "$BENCH_PROFILE" -q -p cronjob --example webhooks --example admission_burst \
  --manifest-path "$REPO_ROOT/Cargo.toml"
OURS=$CARGO_TARGET_DIR/$PROFILE_DIR/examples/webhooks
BURST=$CARGO_TARGET_DIR/$PROFILE_DIR/examples/admission_burst

# The Go side: the project's webhooks on controller-runtime, built from a copy (the
# project in the repo is left as it is). Smoke runs build it only from the module cache.
GOHOOKS=$W/go/bin
go_side "$W/go" webhooks "$BENCH_DIR/go/cronjob-webhooks.go.txt"

# A CA and a serving certificate for 127.0.0.1, shared by both servers.
webhook_endpoint "$W"

bench_cluster_up
install_cronjob_crd "$BASE" "$CERTS/ca.crt"
webhooks_on() {
  cronjob_webhook_objects "$BASE" "$CERTS/ca.crt" webhooks | kubectl apply -f - >/dev/null
  sleep 3 # the API server's informer for webhook configurations
}
webhooks_off() {
  kubectl delete mutatingwebhookconfiguration mutating-webhook-configuration --ignore-not-found >/dev/null
  kubectl delete validatingwebhookconfiguration validating-webhook-configuration --ignore-not-found >/dev/null
  sleep 3
}

# api_webhook_metrics: {"<name>/<type>": [sum_seconds, count]} from the API server.
api_webhook_metrics() {
  kubectl get --raw /metrics | python3 -c '
import json, re, sys
out = {}
for line in sys.stdin:
    m = re.match(r"apiserver_admission_webhook_admission_duration_seconds_(sum|count)\{(.*)\} (\S+)$", line)
    if not m:
        continue
    labels = dict(re.findall(r"(\w+)=\"([^\"]*)\"", m.group(2)))
    key = labels["name"] + "/" + labels["type"]
    v = out.setdefault(key, [0.0, 0.0])
    v[0 if m.group(1) == "sum" else 1] += float(m.group(3))
print(json.dumps(out))'
}

run_one() { # config round
  local cfg=$1 round=$2 ns=adm-$1-$2-$RANDOM bin= t0 t1 m0 m1 burst rss
  kubectl create namespace "$ns" >/dev/null
  case $cfg in
    ours) bin=$OURS ;;
    go) bin=$GOHOOKS ;;
    none) ;;
  esac
  if [[ -n $bin ]]; then
    "$bin" --webhook-cert-path "$CERTS" --webhook-port "$PORT" >"$W/server-$cfg-$round.log" 2>&1 &
    SRV_PID=$!
    wait_https "$BASE/" "$CERTS/ca.crt" "$SRV_PID" "$W/server-$cfg-$round.log"
  fi
  [[ -n $bin ]] || export ADMISSION_BURST_CHECK=0
  "$BURST" "$ns" "$WARM" "$C" warm >/dev/null
  m0=$(api_webhook_metrics)
  [[ -n $bin ]] && t0=$(cpu_ticks "$SRV_PID")
  burst=$("$BURST" "$ns" "$N" "$C" b)
  if [[ -n $bin ]]; then
    t1=$(cpu_ticks "$SRV_PID")
    rss=$(awk '/^VmHWM/ {print $2}' "/proc/$SRV_PID/status")
    kill "$SRV_PID"
    wait "$SRV_PID" 2>/dev/null || true
    SRV_PID=
  else
    t0=0 t1=0 rss=0
  fi
  unset ADMISSION_BURST_CHECK
  m1=$(api_webhook_metrics)
  # One deletecollection in the stored version (v1), which needs no conversion; the
  # namespace's deletion would list CronJobs in every version, which needs the conversion
  # webhook (down after these runs, never up in the run without webhooks).
  kubectl delete --raw "/apis/batch.tutorial.kubebuilder.io/v1/namespaces/$ns/cronjobs" >/dev/null
  python3 - "$cfg" "$round" "$burst" "$m0" "$m1" "$t0" "$t1" "$rss" "$(getconf CLK_TCK)" <<'PY' | tee -a "$OUT"
import json, sys
cfg, rnd, burst, m0, m1, t0, t1, rss, hz = sys.argv[1:]
b, m0, m1 = json.loads(burst), json.loads(m0), json.loads(m1)
calls = {}
for k, (s, c) in m1.items():
    s0, c0 = m0.get(k, [0.0, 0.0])
    if c - c0 > 0:
        calls[k] = {"calls": int(c - c0), "mean_ms": round((s - s0) / (c - c0) * 1e3, 3)}
b.update(config=cfg, round=int(rnd), cpu_s=(int(t1) - int(t0)) / int(hz), peak_rss_mib=round(int(rss) / 1024, 1), webhooks=calls)
print(json.dumps(b))
PY
  kubectl delete namespace "$ns" --wait=false >/dev/null
}

for round in $(seq 1 "$RUNS"); do
  for cfg in $CONFIGS; do
    if [[ $cfg == none ]]; then webhooks_off; else webhooks_on; fi
    blog "round $round: $cfg"
    run_one "$cfg" "$round"
  done
done
webhooks_off
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

python3 - "$OUT" "$N" "$C" "$RUNS" "$load_before" "$load_after" "$BENCH_PROFILE" <<'PY' >"$RESULTS/admission.md"
import json, statistics, sys
out, n, c, runs, lb, la, profile = sys.argv[1:]
rows = [json.loads(l) for l in open(out)]
med = lambda xs: statistics.median(xs) if xs else float("nan")
names = {"go": "controller-runtime v0.24.1 (the Go project's webhooks)", "ours": "kube-codegen runtime (the port's webhooks)", "none": "no webhooks (the API server alone)"}
print(f"# Admission webhooks: a burst of {n} CronJob creates, {c} concurrent\n")
print(f"`bench/admission.sh` ({profile} build; medians of {runs} rounds, alternating within each round; load average {lb} before, {la} after; {__import__('os').cpu_count()} cores)\n")
print("Client-side latency: one create, request to response (API server, etcd and the four webhook calls). API server's mean per call: apiserver_admission_webhook_admission_duration_seconds sum/count over the burst. CPU and peak RSS: the webhook process (utime+stime over the burst; VmHWM).\n")
print("| server | creates/s | create p50 ms | create p99 ms | webhook CPU s | CPU ms per 1,000 creates | peak RSS MiB | API server mean per call, ms (mutating v1 / validating v1 / mutating v2 / validating v2) |")
print("|---|---|---|---|---|---|---|---|")
for cfg in ["go", "ours", "none"]:
    rs = [r for r in rows if r["config"] == cfg]
    if not rs:
        continue
    def call(name):
        xs = [r["webhooks"][name]["mean_ms"] for r in rs if name in r["webhooks"]]
        return f"{med(xs):.2f}" if xs else "-"
    calls = " / ".join(call(k) for k in ["mcronjob-v1.kb.io/admit", "vcronjob-v1.kb.io/validating", "mcronjob-v2.kb.io/admit", "vcronjob-v2.kb.io/validating"])
    cpu = med([r["cpu_s"] for r in rs])
    rss = med([r["peak_rss_mib"] for r in rs])
    rate = med([r["creates"] / r["wall_s"] for r in rs])
    p50, p99 = med([r["p50_ms"] for r in rs]), med([r["p99_ms"] for r in rs])
    if cfg == "none":
        cells = ["-", "-", "-", "-"]
    else:
        cells = [f"{cpu:.2f}", f"{cpu / int(n) * 1e6:.0f}", f"{rss:.1f}", calls]
    print(f"| {names[cfg]} | {rate:.0f} | {p50:.1f} | {p99:.1f} | " + " | ".join(cells) + " |")
print("\nPer round (raw: admission-runs.jsonl):\n")
print("| round | server | creates/s | p50 ms | p99 ms | CPU s | peak RSS MiB |")
print("|---|---|---|---|---|---|---|")
for r in rows:
    print(f"| {r['round']} | {r['config']} | {r['creates'] / r['wall_s']:.0f} | {r['p50_ms']:.1f} | {r['p99_ms']:.1f} | {r['cpu_s']:.2f} | {r['peak_rss_mib']} |")
PY
cat "$RESULTS/admission.md"
