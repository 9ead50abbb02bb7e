#!/usr/bin/env bash
# Part 2: the controller at scale. Our sample-controller (release) vs the Go
# k8s.io/sample-controller, each alone against the SAME real control plane
# (hack/testenv.sh, separate bench instance: /tmp/kube-codegen-bench, port offset 200,
# audit log on), same CRD (sample-controller/config/crd/samplecontroller.k8s.io_foos.yaml).
#
#   bench/controller.sh                 N=1000 Foos, BENCH_RUNS runs of each configuration
#   bench/controller.sh --smoke         N=10, 1 run, ours only unless the Go binary exists
#   BENCH_CONTROLLER_CONFIGS="ours-5 go" bench/controller.sh   a subset
#
# Configurations:
#   ours      defaults: --kube-api-qps 20 --kube-api-burst 30 per API group/version, 2 workers,
#             server-side apply of the Deployment and the Foo status (--write-mode apply)
#   ours-update  the same with --write-mode update (create/update, as the Go controller)
#   ours-5    --kube-api-qps 5 --kube-api-burst 10 per API group/version (client-go's defaults)
#   ours-builder, ours-builder-5  ours and ours-5 with --foo-controller builder (the Foo
#             sync on the runtime's controller builder instead of the ported client-go loop)
#   go        k8s.io/sample-controller as shipped: client-go defaults QPS 5 / burst 10 per
#             API group/version client (it leaves rest.Config.QPS unset, so each typed
#             group/version client builds its own limiter: apps/v1, core/v1, the Foo group), 2 workers
# Per run: fresh namespace; start the controller under /usr/bin/time -v; wait until its
# caches are synced (ours: /readyz; Go: 3 s, it has no probe endpoint); t0; create N Foos
# (replicas 1) with 4 parallel `kubectl create` of 250-object files; poll every 0.5 s until
# every Foo has its owned Deployment AND a written status (status.availableReplicas present:
# there is no kubelet, so it is 0; "status set" means the controller's UpdateStatus landed);
# t1; stop the controller (SIGTERM); delete the namespace and wait for it to go.
# Requests: counted in the apiserver audit log between controller start and stop, by
# userAgent (ours also reports rest_client_requests_total from --metrics-addr).
# CPU = user+sys of the whole process lifetime (startup + sync + convergence + idle poll).
# Output: bench/results/controller.md and controller-runs.jsonl
. "$(dirname "$0")/lib.sh"
SMOKE=0
[[ ${1:-} == --smoke ]] && SMOKE=1 RUNS=1
N=${BENCH_FOOS:-1000}
((SMOKE)) && N=10
CONFIGS=${BENCH_CONTROLLER_CONFIGS:-ours ours-5 go}
TIMEOUT=${BENCH_CONTROLLER_TIMEOUT:-1200}
mkdir -p "$RESULTS"
OUT=$RESULTS/controller-runs.jsonl
[[ -n ${BENCH_CONTROLLER_APPEND:-} ]] || rm -f "$OUT"
W=$(mktemp -d /tmp/kcg-bench-controller.XXXXXX)
CTRL_PID=
cleanup() {
  [[ -n $CTRL_PID ]] && kill "$CTRL_PID" 2>/dev/null || true
  rm -rf "$W"
}
trap cleanup EXIT

blog "building sample-controller ($BENCH_CONTROLLER_PROFILE)"
cargo build --profile "$BENCH_CONTROLLER_PROFILE" -q -p sample-controller --manifest-path "$REPO_ROOT/Cargo.toml"
OURS=$CARGO_TARGET_DIR/$CONTROLLER_PROFILE_DIR/sample-controller
GOCTL=$ANCHOR_BIN/sample-controller
if [[ ! -x $GOCTL ]] && ((!SMOKE)); then bash "$BENCH_DIR/install-anchors.sh" controller; fi
[[ -x $GOCTL ]] || { CONFIGS=${CONFIGS//go/}; blog "Go sample-controller not installed: ours only"; }

bench_cluster_up
install_foo_crd

# Each controller runs as its own ServiceAccount (cluster-admin), so the audit log can
# count its requests by user name (and shows each one's User-Agent).
kubeconfig_for() { # sa -> path of a kubeconfig with a token for it
  kubectl get serviceaccount "$1" -n default >/dev/null 2>&1 || kubectl create serviceaccount "$1" -n default >/dev/null
  kubectl get clusterrolebinding "$1" >/dev/null 2>&1 ||
    kubectl create clusterrolebinding "$1" --clusterrole cluster-admin --serviceaccount "default:$1" >/dev/null
  local server ca token
  server=$(kubectl config view --minify -o jsonpath='{.clusters[0].cluster.server}')
  ca=$(kubectl config view --raw --minify -o jsonpath='{.clusters[0].cluster.certificate-authority-data}')
  [[ -n $ca ]] || ca=$(base64 -w0 <"$(kubectl config view --raw --minify -o jsonpath='{.clusters[0].cluster.certificate-authority}')")
  token=$(kubectl create token "$1" -n default --duration 12h)
  cat >"$W/kubeconfig-$1" <<K
apiVersion: v1
kind: Config
clusters: [{name: bench, cluster: {server: "$server", certificate-authority-data: "$ca"}}]
users: [{name: $1, user: {token: "$token"}}]
contexts: [{name: bench, context: {cluster: bench, user: $1}}]
current-context: bench
K
  echo "$W/kubeconfig-$1"
}
KC_OURS=$(kubeconfig_for bench-ours)
KC_GO=$(kubeconfig_for bench-go)

write_foos "$W/foos" "$N"

audit_count() { # start-epoch end-epoch user-name -> count, and the user-agent table
  python3 - "$BENCH_AUDIT_DIR/audit.log" "$@" <<'EOF'
import json, re, sys, collections
from datetime import datetime
path, t0, t1, user = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
n, uas = 0, collections.Counter()
for line in open(path, errors="replace"):
    try:
        e = json.loads(line)
    except ValueError:
        continue
    if e.get("stage") != "ResponseComplete":
        continue
    ts = datetime.fromisoformat(e["requestReceivedTimestamp"].replace("Z", "+00:00")).timestamp()
    if not (t0 <= ts <= t1):
        continue
    if e.get("user", {}).get("username") != user:
        continue
    n += 1
    uas[e.get("userAgent", "").split(" ")[0] or "(none)"] += 1
print(n)
print(json.dumps(dict(uas.most_common(6))), file=sys.stderr)
EOF
}

run_one() { # config run#
  local cfg=$1 run=$2 ns="bench-ctl-$1-$2" port=$((18280 + RANDOM % 500)) args user
  kubectl create namespace "$ns" >/dev/null
  local ours=("$OURS" --controllers foo --workers 2 --metrics-addr "127.0.0.1:$port" --health-addr "127.0.0.1:$((port + 1))" --kubeconfig "$KC_OURS")
  user=system:serviceaccount:default:bench-ours
  case $cfg in
    ours) args=("${ours[@]}") ;;
    ours-update) args=("${ours[@]}" --write-mode update) ;;
    ours-5) args=("${ours[@]}" --kube-api-qps 5 --kube-api-burst 10) ;;
    ours-builder) args=("${ours[@]}" --foo-controller builder) ;;
    ours-builder-5) args=("${ours[@]}" --foo-controller builder --kube-api-qps 5 --kube-api-burst 10) ;;
    go) args=("$GOCTL" -kubeconfig "$KC_GO") user=system:serviceaccount:default:bench-go ;;
    *) blog "unknown configuration $cfg"; exit 2 ;;
  esac
  local t_start t0 t1 t_stop p d s
  t_start=$(date +%s.%N)
  /usr/bin/time -v -o "$W/time-$cfg-$run" "${args[@]}" >"$W/log-$cfg-$run" 2>&1 &
  CTRL_PID=$!
  if [[ $cfg == go ]]; then
    sleep 3
  else
    for _ in $(seq 100); do curl -sf "127.0.0.1:$((port + 1))/readyz" >/dev/null && break; sleep 0.1; done
  fi
  local cpid anon_kib=0 file_kib=0 a f
  cpid=$(pgrep -P "$CTRL_PID" | head -1)
  # Peak private (anonymous) and file-backed resident memory, sampled every poll: RSS
  # alone mixes the heap with the executable's own pages.
  sample_mem() {
    a=$(awk '/^RssAnon/ {print $2}' "/proc/$cpid/status" 2>/dev/null || echo 0)
    f=$(awk '/^RssFile/ {print $2}' "/proc/$cpid/status" 2>/dev/null || echo 0)
    ((${a:-0} > anon_kib)) && anon_kib=$a
    ((${f:-0} > file_kib)) && file_kib=$f
    return 0
  }
  t0=$(date +%s.%N)
  ls "$W"/foos/*.yaml | xargs -P 4 -n 1 kubectl create -n "$ns" -f >/dev/null
  t_created=$(date +%s.%N)
  while :; do
    kill -0 "$CTRL_PID" 2>/dev/null || { tail -20 "$W/log-$cfg-$run" >&2; blog "$cfg run $run: controller exited"; exit 1; }
    sample_mem
    read -r d s < <(foo_progress "$ns")
    [[ $d -ge $N && $s -ge $N ]] && break
    if (($(echo "$(date +%s.%N) - $t0 > $TIMEOUT" | bc))); then blog "$cfg run $run: timeout ($d deployments, $s statuses)"; break; fi
    sleep 0.5
  done
  t1=$(date +%s.%N)
  sample_mem
  local metric_reqs=null
  if [[ $cfg != go ]]; then
    metric_reqs=$(curl -sf "127.0.0.1:$port/metrics" | awk '/^rest_client_requests_total/ {s += $NF} END {print s+0}')
  fi
  # Signal the controller, not /usr/bin/time (which must live to write its report).
  kill -TERM "$(pgrep -P "$CTRL_PID")"; wait "$CTRL_PID" || true
  CTRL_PID=
  t_stop=$(date +%s.%N)
  sleep 2 # audit log flush
  local audit_reqs ua_table
  audit_reqs=$(audit_count "$t_start" "$t_stop" "$user" 2>"$W/ua")
  ua_table=$(cat "$W/ua")
  local utime stime rss
  utime=$(awk -F': ' '/User time/ {print $2}' "$W/time-$cfg-$run")
  stime=$(awk -F': ' '/System time/ {print $2}' "$W/time-$cfg-$run")
  rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$W/time-$cfg-$run")
  printf '{"config":"%s","run":%d,"foos":%d,"deployments":%d,"statuses":%d,"create_secs":%.2f,"converge_secs":%.2f,"cpu_secs":%.2f,"max_rss_kib":%d,"peak_anon_kib":%d,"peak_file_kib":%d,"audit_requests":%d,"metric_requests":%s,"user_agents":%s}\n' \
    "$cfg" "$run" "$N" "$d" "$s" "$(echo "$t_created - $t0" | bc)" "$(echo "$t1 - $t0" | bc)" \
    "$(echo "$utime + $stime" | bc)" "$rss" "$anon_kib" "$file_kib" "$audit_reqs" "$metric_reqs" "$ua_table" | tee -a "$OUT"
  kubectl delete namespace "$ns" --wait=true --timeout=300s >/dev/null || blog "namespace $ns still terminating"
}

for run in $(seq "$RUNS"); do
  for cfg in $CONFIGS; do
    blog "controller: $cfg run $run (N=$N)"
    run_one "$cfg" "$run"
  done
done

python3 - "$OUT" >"$RESULTS/controller.md" <<'EOF'
import json, statistics, sys, collections
g = collections.defaultdict(list)
for l in open(sys.argv[1]):
    if l.strip():
        r = json.loads(l); g[r["config"]].append(r)
names = {"ours": "ours, QPS 20 / burst 30 per group/version (default: server-side apply)", "ours-update": "ours, the same with --write-mode update (create/update)", "ours-5": "ours, QPS 5 / burst 10 per group/version", "ours-builder": "ours on the controller builder, QPS 20 / burst 30", "ours-builder-5": "ours on the controller builder, QPS 5 / burst 10", "go": "Go sample-controller, QPS 5 / burst 10 per group/version (client-go default)"}
med = lambda rs, k: statistics.median(r[k] for r in rs)
anon = lambda rs: (f"{med(rs,'peak_anon_kib')/1024:.1f} / {med(rs,'peak_file_kib')/1024:.1f}"
                   if all("peak_anon_kib" in r for r in rs) else "-")
print("| controller | Foos | converged (s, median) | CPU user+sys (s) | peak RSS (MiB) | peak anon / file RSS (MiB, sampled) | requests (audit log) | requests (own metric) | runs |")
print("|---|---|---|---|---|---|---|---|---|")
for c in ("ours", "ours-builder", "ours-update", "ours-5", "ours-builder-5", "go"):
    rs = g.get(c)
    if not rs: continue
    m = [r["metric_requests"] for r in rs if r["metric_requests"] is not None]
    ok = all(r["deployments"] >= r["foos"] and r["statuses"] >= r["foos"] for r in rs)
    print(f"| {names[c]} | {rs[0]['foos']} | {med(rs,'converge_secs'):.1f}{'' if ok else ' (TIMEOUT)'} | {med(rs,'cpu_secs'):.2f} | "
          f"{med(rs,'max_rss_kib')/1024:.1f} | {anon(rs)} | {med(rs,'audit_requests'):.0f} | {statistics.median(m) if m else '-'} | {len(rs)} |")
EOF
cat "$RESULTS/controller.md"
