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
#   ours-5-compact  ours-5 with --deployment-cache compact (the Deployments cached as JSON)
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
#
#   bench/controller.sh --failover      leader failover, warm vs cold standby (N=3000 Foos)
#
# Failover (configurations warm, cold): ours on the builder (--foo-controller builder, for
# its --audit-log of reconcile starts), no client-side rate limit (--kube-api-qps 0: the
# failover, not the first convergence, is measured), --leader-elect with the default Lease (15 s, renew
# 10 s, retry 2 s). Per run: fresh namespace; replica a starts and leads; N Foos created
# and converged; replica b starts as a standby (warm: --warm-standby=true, waited for until
# it is ready with all N Foos cached; cold: --warm-standby=false, given 5 s); b's RSS;
# SIGKILL a; then from the kill: b wins the Lease (its log's "became leader" line), b's
# first reconcile starts, b has reconciled every Foo once (its audit log: a new leader syncs every key, as
# client-go's informers replay their cache as adds). The Go sample-controller has no leader
# election (k8s.io/sample-controller runs one replica), so no Go row.
# Output: bench/results/failover.md and failover-runs.jsonl
#
#   bench/controller.sh --shards        scale-out: 1, 2 and 4 replicas in a shard group, N=3000
#
# Scale-out (configurations shards-R, and go): R sample-controller replicas with --shards
# auto in one group (each its own client, its default QPS 20 / burst 30 per API
# group/version); per run: fresh namespace; start them; wait until every one is ready and
# the group's 64 slots are all worked; t0; create N Foos (as above); poll until every Foo
# has its Deployment and status; t1. Per replica: peak RSS (VmHWM), CPU (utime+stime from
# /proc) over the run, Foos and Deployments cached at t1, and the group's mode (selector
# with the API server's ShardedListAndWatch gate, BENCH_FEATURE_GATES=ShardedListAndWatch=true
# on a fresh instance; label without it). `go` is the Go sample-controller alone (one
# replica, run_one above), for comparison. BENCH_CONTROLLER_APPEND=1 keeps earlier rows.
# Output: bench/results/shards.md and shards-runs.jsonl
#
#   bench/controller.sh --precreated    N=10,000 Foos over 100 namespaces, created beforehand
#
# Pre-created (configurations ours-5, go): the controllers only sync and confirm. Per run,
# before the controller starts: BENCH_NAMESPACES (100) fresh namespaces, N Foos spread over
# them (replicas 1, no status), and each Foo's Deployment as the controller would make it
# (its name, labels, selector, nginx template, controller ownerReference to the Foo's UID),
# created paused: the kube-controller-manager then writes each one's status once and makes
# no ReplicaSets or Pods, so no Deployment event reaches the controllers mid-run (an
# unpaused one, with no kubelet, flips to ProgressDeadlineExceeded after 600 s). The run
# waits until the kube-controller-manager has observed every Deployment, then starts the
# controller: t0 is its start; converged when every Foo has its status written (both
# controllers must write all N statuses, at 5 QPS at least N/5 s). This mode runs its own
# control plane instance (/tmp/kube-codegen-bench-precreated, port offset 400) with the
# kube-controller-manager's client limit raised (--kube-api-qps 1000), so that setting up
# and deleting 2N objects does not take the kube-controller-manager's default 20 QPS.
# Output: bench/results/controller-precreated.md and controller-precreated-runs.jsonl
# Not with --smoke: smoke.sh's own instance serves every part (and is the one it stops).
if [[ " $* " == *" --precreated "* && " $* " != *" --smoke "* ]]; then
    export KUBE_CODEGEN_TESTENV_DIR=${BENCH_PRECREATED_TESTENV_DIR:-/tmp/kube-codegen-bench-precreated}
    export KUBE_CODEGEN_TESTENV_PORT_OFFSET=${BENCH_PRECREATED_PORT_OFFSET:-400}
    export BENCH_AUDIT_DIR=${BENCH_AUDIT_DIR:-/tmp/kube-codegen-bench-precreated-audit}
    export BENCH_KCM_ARGS=${BENCH_KCM_ARGS:---kube-api-qps=1000 --kube-api-burst=2000}
fi
. "$(dirname "$0")/lib.sh"
SMOKE=0 FAILOVER=0 SHARDS=0 PRECREATED=0
for a in "$@"; do
  case $a in
    --smoke) SMOKE=1 RUNS=1 ;;
    --failover) FAILOVER=1 ;;
    --shards) SHARDS=1 ;;
    --precreated) PRECREATED=1 ;;
    *) blog "unknown argument $a"; exit 2 ;;
  esac
done
N=${BENCH_FOOS:-1000}
((FAILOVER || SHARDS)) && N=${BENCH_FOOS:-3000}
((PRECREATED)) && N=${BENCH_FOOS:-10000}
((SMOKE)) && N=10 BENCH_NAMESPACES=2
CONFIGS=${BENCH_CONTROLLER_CONFIGS:-ours ours-5 go}
((FAILOVER)) && CONFIGS=${BENCH_CONTROLLER_CONFIGS:-warm cold}
((SHARDS)) && CONFIGS=${BENCH_CONTROLLER_CONFIGS:-shards-1 shards-2 shards-4 go}
((PRECREATED)) && CONFIGS=${BENCH_CONTROLLER_CONFIGS:-ours-5 go}
TIMEOUT=${BENCH_CONTROLLER_TIMEOUT:-1200}
((PRECREATED)) && TIMEOUT=${BENCH_CONTROLLER_TIMEOUT:-$((N / 5 * 2 + 600))}
mkdir -p "$RESULTS"
OUT=$RESULTS/controller-runs.jsonl
((FAILOVER)) && OUT=$RESULTS/failover-runs.jsonl
((SHARDS)) && OUT=$RESULTS/shards-runs.jsonl
((PRECREATED)) && OUT=$RESULTS/controller-precreated-runs.jsonl
[[ -n ${BENCH_CONTROLLER_APPEND:-} ]] || rm -f "$OUT"
W=$(mktemp -d /tmp/kcg-bench-controller.XXXXXX)
CTRL_PID=
cleanup() {
  # shellcheck disable=SC2086 # one pid, or the replicas of a shard group
  [[ -n $CTRL_PID ]] && kill $CTRL_PID 2>/dev/null || true
  rm -rf "$W"
}
trap cleanup EXIT

# BENCH_OURS_BIN=<path>: a prebuilt sample-controller instead (an A/B of two builds).
if [[ -n ${BENCH_OURS_BIN:-} ]]; then
  OURS=$BENCH_OURS_BIN
else
  blog "building sample-controller ($BENCH_CONTROLLER_PROFILE)"
  cargo build --profile "$BENCH_CONTROLLER_PROFILE" -q -p sample-controller --manifest-path "$REPO_ROOT/Cargo.toml"
  OURS=$CARGO_TARGET_DIR/$CONTROLLER_PROFILE_DIR/sample-controller
fi
GOCTL=$ANCHOR_BIN/sample-controller
if [[ ! -x $GOCTL ]] && ((!SMOKE && !FAILOVER)) && [[ $CONFIGS == *go* ]]; then bash "$BENCH_DIR/install-anchors.sh" controller; fi
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

((PRECREATED)) || write_foos "$W/foos" "$N"

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

# config_args CONFIG PORT: the command line of CONFIG in ARGS, its audit user in AUDIT_USER
# (metrics on PORT, health on PORT + 1).
config_args() {
  local cfg=$1 port=$2
  local ours=("$OURS" --controllers foo --workers 2 --metrics-addr "127.0.0.1:$port" --health-addr "127.0.0.1:$((port + 1))" --kubeconfig "$KC_OURS")
  AUDIT_USER=system:serviceaccount:default:bench-ours
  case $cfg in
    ours) ARGS=("${ours[@]}") ;;
    ours-update) ARGS=("${ours[@]}" --write-mode update) ;;
    ours-5) ARGS=("${ours[@]}" --kube-api-qps 5 --kube-api-burst 10) ;;
    ours-5-compact) ARGS=("${ours[@]}" --kube-api-qps 5 --kube-api-burst 10 --deployment-cache compact) ;;
    ours-builder) ARGS=("${ours[@]}" --foo-controller builder) ;;
    ours-builder-5) ARGS=("${ours[@]}" --foo-controller builder --kube-api-qps 5 --kube-api-burst 10) ;;
    go) ARGS=("$GOCTL" -kubeconfig "$KC_GO") AUDIT_USER=system:serviceaccount:default:bench-go ;;
    *) blog "unknown configuration $cfg"; exit 2 ;;
  esac
}

# sample_mem PID: raises ANON_KIB and FILE_KIB to PID's resident anonymous and file-backed
# memory now (reset both to 0 before a run). Peak private (anonymous) and file-backed
# resident memory, sampled every poll: RSS alone mixes the heap with the executable's pages.
sample_mem() {
  local a f
  a=$(awk '/^RssAnon/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0)
  f=$(awk '/^RssFile/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0)
  ((${a:-0} > ANON_KIB)) && ANON_KIB=$a
  ((${f:-0} > FILE_KIB)) && FILE_KIB=$f
  return 0
}

# stop_controller: TERM to the controller, not to /usr/bin/time (CTRL_PID), which must live
# to write its report; then wait for both.
stop_controller() {
  kill -TERM "$(pgrep -P "$CTRL_PID")"
  wait "$CTRL_PID" || true
  CTRL_PID=
}

# run_report TIME_FILE START STOP USER: after a run, CPU_SECS (user+sys) and MAX_RSS_KIB
# from /usr/bin/time -v's report, AUDIT_REQS and UA_TABLE (requests by user agent) of USER
# between START and STOP from the audit log.
run_report() {
  sleep 2 # audit log flush
  AUDIT_REQS=$(audit_count "$2" "$3" "$4" 2>"$W/ua")
  UA_TABLE=$(cat "$W/ua")
  local utime stime
  utime=$(awk -F': ' '/User time/ {print $2}' "$1")
  stime=$(awk -F': ' '/System time/ {print $2}' "$1")
  CPU_SECS=$(echo "$utime + $stime" | bc)
  MAX_RSS_KIB=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$1")
}

run_one() { # config run#
  local cfg=$1 run=$2 ns="bench-ctl-$1-$2" port=$((18280 + RANDOM % 500)) args user
  kubectl create namespace "$ns" >/dev/null
  config_args "$cfg" "$port"
  args=("${ARGS[@]}") user=$AUDIT_USER
  local t_start t0 t1 t_stop p d s
  t_start=$(date +%s.%N)
  /usr/bin/time -v -o "$W/time-$cfg-$run" "${args[@]}" >"$W/log-$cfg-$run" 2>&1 &
  CTRL_PID=$!
  if [[ $cfg == go ]]; then
    sleep 3
  else
    for _ in $(seq 100); do curl -sf "127.0.0.1:$((port + 1))/readyz" >/dev/null && break; sleep 0.1; done
  fi
  local cpid
  cpid=$(pgrep -P "$CTRL_PID" | head -1)
  ANON_KIB=0 FILE_KIB=0
  t0=$(date +%s.%N)
  ls "$W"/foos/*.yaml | xargs -P 4 -n 1 kubectl create -n "$ns" -f >/dev/null
  t_created=$(date +%s.%N)
  while :; do
    kill -0 "$CTRL_PID" 2>/dev/null || { tail -20 "$W/log-$cfg-$run" >&2; blog "$cfg run $run: controller exited"; exit 1; }
    sample_mem "$cpid"
    read -r d s < <(foo_progress "$ns")
    [[ $d -ge $N && $s -ge $N ]] && break
    if (($(echo "$(date +%s.%N) - $t0 > $TIMEOUT" | bc))); then blog "$cfg run $run: timeout ($d deployments, $s statuses)"; break; fi
    sleep 0.5
  done
  t1=$(date +%s.%N)
  sample_mem "$cpid"
  local metric_reqs=null
  if [[ $cfg != go ]]; then
    metric_reqs=$(curl -sf "127.0.0.1:$port/metrics" | awk '/^rest_client_requests_total/ {s += $NF} END {print s+0}')
  fi
  stop_controller
  t_stop=$(date +%s.%N)
  run_report "$W/time-$cfg-$run" "$t_start" "$t_stop" "$user"
  printf '{"config":"%s","run":%d,"foos":%d,"deployments":%d,"statuses":%d,"create_secs":%.2f,"converge_secs":%.2f,"cpu_secs":%.2f,"max_rss_kib":%d,"peak_anon_kib":%d,"peak_file_kib":%d,"audit_requests":%d,"metric_requests":%s,"user_agents":%s}\n' \
    "$cfg" "$run" "$N" "$d" "$s" "$(echo "$t_created - $t0" | bc)" "$(echo "$t1 - $t0" | bc)" \
    "$CPU_SECS" "$MAX_RSS_KIB" "$ANON_KIB" "$FILE_KIB" "$AUDIT_REQS" "$metric_reqs" "$UA_TABLE" | tee -a "$OUT"
  kubectl delete namespace "$ns" --wait=true --timeout=300s >/dev/null || blog "namespace $ns still terminating"
}

# precreate TAG: BENCH_NAMESPACES namespaces "TAG-NN" holding N Foos and their paused
# Deployments, everything labelled bench-precreated=TAG; returns once the
# kube-controller-manager has observed every Deployment (its one status write).
precreate() {
  local tag=$1 nss=${BENCH_NAMESPACES:-100} i observed=0
  rm -rf "${W:?}/pre" && mkdir -p "$W/pre/foos" "$W/pre/deploy"
  python3 - "$W/pre/foos" "$N" "$nss" "$tag" <<'PY'
import sys
out, n, nss, tag = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
for k in range(nss):
    with open(f"{out}/{k:03d}.yaml", "w") as f:
        f.write(f"---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: {tag}-{k:02d}\n"
                f"  labels: {{bench-precreated: {tag}}}\n")
        for i in range(k, n, nss):
            f.write(f"---\napiVersion: samplecontroller.k8s.io/v1alpha1\nkind: Foo\nmetadata:\n"
                    f"  name: foo-{i:05d}\n  namespace: {tag}-{k:02d}\n  labels: {{bench-precreated: {tag}}}\n"
                    f"spec:\n  deploymentName: foo-{i:05d}-deploy\n  replicas: 1\n")
PY
  ls "$W"/pre/foos/*.yaml | xargs -P 4 -n 1 kubectl create -f >/dev/null
  # The Deployments as both controllers build them (k8s.io/sample-controller's
  # newDeployment: labels app=nginx and controller=<foo> on the selector and template),
  # owned by the Foos' UIDs.
  kubectl get foos -A -l "bench-precreated=$tag" -o json >"$W/pre/foos.json"
  python3 - "$W/pre/foos.json" "$W/pre/deploy" <<'PY'
import json, sys
src, out = sys.argv[1], sys.argv[2]
files = {}
for foo in json.load(open(src))["items"]:
    m = foo["metadata"]
    labels = {"app": "nginx", "controller": m["name"]}
    d = {"apiVersion": "apps/v1", "kind": "Deployment",
         "metadata": {"name": foo["spec"]["deploymentName"], "namespace": m["namespace"],
                      "labels": dict(labels, **{"bench-precreated": m["labels"]["bench-precreated"]}),
                      "ownerReferences": [{"apiVersion": foo["apiVersion"], "kind": "Foo", "name": m["name"],
                                           "uid": m["uid"], "controller": True, "blockOwnerDeletion": True}]},
         "spec": {"replicas": foo["spec"]["replicas"], "paused": True, "selector": {"matchLabels": labels},
                  "template": {"metadata": {"labels": labels},
                               "spec": {"containers": [{"name": "nginx", "image": "nginx:latest"}]}}}}
    files.setdefault(m["namespace"], []).append(d)
for ns, ds in files.items():
    with open(f"{out}/{ns}.json", "w") as f:
        json.dump({"apiVersion": "v1", "kind": "List", "items": ds}, f)
PY
  ls "$W"/pre/deploy/*.json | xargs -P 4 -n 1 kubectl create -f >/dev/null
  for i in $(seq 600); do
    observed=$(kubectl get deployments -A -l "bench-precreated=$tag" -o jsonpath='{range .items[*]}{.status.observedGeneration}{"\n"}{end}' | grep -c . || true)
    ((observed >= N)) && return 0
    sleep 2
  done
  blog "precreate $tag: only $observed of $N Deployments observed"
  exit 1
}

# precreated_one CONFIG RUN#: pre-create, start the controller, wait until every Foo has
# its status; as run_one, but t0 is the controller's start.
precreated_one() {
  local cfg=$1 run=$2 tag="bench-pre-$1-$2" port t_pre t_start t1 t_stop s=0
  port=$(free_port)
  t_pre=$(date +%s.%N)
  precreate "$tag"
  blog "$cfg run $run: $N Foos and Deployments pre-created in $(echo "$(date +%s.%N) - $t_pre" | bc) s"
  sleep 5
  config_args "$cfg" "$port"
  t_start=$(date +%s.%N)
  /usr/bin/time -v -o "$W/time-$cfg-$run" "${ARGS[@]}" >"$W/log-$cfg-$run" 2>&1 &
  CTRL_PID=$!
  sleep 1
  local cpid
  cpid=$(pgrep -P "$CTRL_PID" | head -1)
  ANON_KIB=0 FILE_KIB=0
  while :; do
    kill -0 "$CTRL_PID" 2>/dev/null || { tail -20 "$W/log-$cfg-$run" >&2; blog "$cfg run $run: controller exited"; exit 1; }
    sample_mem "$cpid"
    # A list of N Foos every 5 s, not 0.5 s: it is the API server's work, and N is large.
    s=$(kubectl get foos -A -l "bench-precreated=$tag" -o jsonpath='{range .items[*]}{.status.availableReplicas}{"\n"}{end}' 2>/dev/null | grep -c . || true)
    ((s >= N)) && break
    if (($(echo "$(date +%s.%N) - $t_start > $TIMEOUT" | bc))); then blog "$cfg run $run: timeout ($s statuses)"; break; fi
    sleep 5
  done
  t1=$(date +%s.%N)
  stop_controller
  t_stop=$(date +%s.%N)
  run_report "$W/time-$cfg-$run" "$t_start" "$t_stop" "$AUDIT_USER"
  printf '{"config":"%s","run":%d,"foos":%d,"namespaces":%d,"statuses":%d,"converge_secs":%.2f,"cpu_secs":%.2f,"max_rss_kib":%d,"peak_anon_kib":%d,"peak_file_kib":%d,"audit_requests":%d,"user_agents":%s,"load":"%s"}\n' \
    "$cfg" "$run" "$N" "${BENCH_NAMESPACES:-100}" "$s" "$(echo "$t1 - $t_start" | bc)" "$CPU_SECS" \
    "$MAX_RSS_KIB" "$ANON_KIB" "$FILE_KIB" "$AUDIT_REQS" "$UA_TABLE" "$(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$OUT"
  kubectl delete namespace -l "bench-precreated=$tag" --wait=true --timeout=600s >/dev/null || blog "namespaces of $tag still terminating"
}

# wait_ready PORT PID LOG: until http://127.0.0.1:PORT/readyz answers 200 (or PID exits).
wait_ready() {
  for _ in $(seq 600); do
    curl -sf "127.0.0.1:$1/readyz" >/dev/null && return 0
    kill -0 "$2" 2>/dev/null || { tail -20 "$3" >&2; blog "controller exited"; exit 1; }
    sleep 0.1
  done
  blog "127.0.0.1:$1 not ready"; exit 1
}

failover_one() { # warm|cold run#
  local cfg=$1 run=$2 ns="bench-fo-$1-$2" warm=true pa pb ha hb a b t_kill d s
  [[ $cfg == cold ]] && warm=false
  kubectl create namespace "$ns" >/dev/null
  pa=$(free_port) pb=$(free_port) ha=$(free_port) hb=$(free_port)
  local common=("$OURS" --controllers foo --foo-controller builder --workers 2 --namespace "$ns"
    --leader-elect --leader-elect-lease-name "$ns" --leader-elect-namespace default
    --warm-standby="$warm" --kube-api-qps 0 --kubeconfig "$KC_OURS")
  "${common[@]}" --leader-elect-identity a --metrics-addr "127.0.0.1:$pa" --health-addr "127.0.0.1:$ha" \
    --audit-log "$W/fo-$cfg-$run-a.audit" >"$W/fo-$cfg-$run-a.log" 2>&1 &
  a=$! CTRL_PID=$!
  wait_ready "$ha" "$a" "$W/fo-$cfg-$run-a.log"
  ls "$W"/foos/*.yaml | xargs -P 4 -n 1 kubectl create -n "$ns" -f >/dev/null
  while :; do
    read -r d s < <(foo_progress "$ns")
    [[ $d -ge $N && $s -ge $N ]] && break
    kill -0 "$a" 2>/dev/null || { tail -20 "$W/fo-$cfg-$run-a.log" >&2; exit 1; }
    sleep 0.5
  done
  "${common[@]}" --leader-elect-identity b --metrics-addr "127.0.0.1:$pb" --health-addr "127.0.0.1:$hb" \
    --audit-log "$W/fo-$cfg-$run-b.audit" >"$W/fo-$cfg-$run-b.log" 2>&1 &
  b=$!
  if [[ $warm == true ]]; then
    wait_ready "$hb" "$b" "$W/fo-$cfg-$run-b.log"
    for _ in $(seq 600); do
      [[ $(curl -sf "127.0.0.1:$pb/metrics" | awk '/^sample_controller_foos_cached / {print $2}') == "$N" ]] && break
      sleep 0.1
    done
  else
    sleep 5
  fi
  sleep 2 # a renewal or two seen by the standby
  local rss_standby
  rss_standby=$(awk '/^VmRSS/ {print $2}' "/proc/$b/status")
  t_kill=$(date +%s.%N)
  kill -KILL "$a"; wait "$a" 2>/dev/null || true
  CTRL_PID=$b
  # Every Foo reconciled once by b (its audit log), or 120 s. When b won the Lease comes
  # from its own log below: no kubectl poll runs on the 2 cores during the takeover.
  for _ in $(seq 1200); do
    (($(awk '$1 == "start" {print $4}' "$W/fo-$cfg-$run-b.audit" 2>/dev/null | sort -u | wc -l) >= N)) && break
    sleep 0.1
  done
  local rss_leader
  rss_leader=$(awk '/^VmHWM/ {print $2}' "/proc/$b/status")
  kill -TERM "$b"; wait "$b" 2>/dev/null || true
  CTRL_PID=
  python3 - "$cfg" "$run" "$N" "$t_kill" "$W/fo-$cfg-$run-b.audit" "$rss_standby" "$rss_leader" "$W/fo-$cfg-$run-b.log" <<'PY' | tee -a "$OUT"
import datetime, json, re, sys
cfg, run, n, t_kill, audit, rss_standby, rss_leader, log = sys.argv[1:]
n, t_kill = int(n), float(t_kill)
# When b won the Lease, by its own log line.
won = None
for line in open(log, errors="replace"):
    line = re.sub(r"\x1b\[[0-9;]*m", "", line)
    if "became leader" in line:
        won = datetime.datetime.fromisoformat(line.split()[0].replace("Z", "+00:00")).timestamp()
        break
first = {}
for line in open(audit):
    what, nanos, _, key = line.split(maxsplit=3)
    if what == "start":
        first.setdefault(key.strip(), int(nanos) / 1e9)
starts = sorted(first.values())
print(json.dumps({
    "config": cfg, "run": int(run), "foos": n,
    "won_s": round(won - t_kill, 2) if won else None,
    "won_to_first_s": round(starts[0] - won, 3) if won and starts else None,
    "won_to_all_s": round(starts[n - 1] - won, 3) if won and len(starts) >= n else None,
    "first_reconcile_s": round(starts[0] - t_kill, 2) if starts else None,
    "all_reconciled_s": round(starts[n - 1] - t_kill, 2) if len(starts) >= n else None,
    "keys_reconciled": len(starts),
    "standby_rss_mib": round(int(rss_standby) / 1024, 1),
    "leader_peak_rss_mib": round(int(rss_leader) / 1024, 1),
}))
PY
  kubectl delete namespace "$ns" --wait=true --timeout=300s >/dev/null || blog "namespace $ns still terminating"
}

shards_one() { # replicas run#
  local r=$1 run=$2 ns="bench-sh-$1-$2" i port hport pids=() ports=() hports=() t0 t1 d s
  kubectl create namespace "$ns" >/dev/null
  for i in $(seq 0 $((r - 1))); do
    # Free ports each (random ones collided between replicas): metrics, then health.
    port=$(free_port) hport=$(free_port)
    "$OURS" --controllers foo --workers 2 --namespace "$ns" --shards auto --shard-group "$ns" \
      --shard-namespace default --shard-identity "r$i" --kubeconfig "$KC_OURS" \
      --metrics-addr "127.0.0.1:$port" --health-addr "127.0.0.1:$hport" >"$W/sh-$r-$run-$i.log" 2>&1 &
    pids+=($!) ports+=("$port") hports+=("$hport")
    CTRL_PID="${pids[*]}"
  done
  for i in $(seq 0 $((r - 1))); do wait_ready "${hports[i]}" "${pids[i]}" "$W/sh-$r-$run-$i.log"; done
  metric() { curl -sf "127.0.0.1:$1/metrics" | awk -v m="$2" '$1 == m {print $2; f = 1} END {if (!f) print "null"}'; }
  for _ in $(seq 600); do
    local worked=0 w
    for i in $(seq 0 $((r - 1))); do w=$(metric "${ports[i]}" shard_slots_working); [[ $w == null ]] || worked=$((worked + w)); done
    ((worked == 64)) && break
    sleep 0.2
  done
  t0=$(date +%s.%N)
  ls "$W"/foos/*.yaml | xargs -P 4 -n 1 kubectl create -n "$ns" -f >/dev/null
  while :; do
    read -r d s < <(foo_progress "$ns")
    [[ $d -ge $N && $s -ge $N ]] && break
    if (($(echo "$(date +%s.%N) - $t0 > $TIMEOUT" | bc))); then blog "shards-$r run $run: timeout ($d deployments, $s statuses)"; break; fi
    sleep 0.5
  done
  t1=$(date +%s.%N)
  sleep 2 # the caches catch up with the last writes
  local per=()
  for i in $(seq 0 $((r - 1))); do
    per+=("$(printf '{"replica":"r%d","cpu_secs":%.2f,"max_rss_kib":%d,"foos_cached":%s,"deployments_cached":%s}' "$i" \
      "$(echo "$(cpu_ticks "${pids[i]}") / $(getconf CLK_TCK)" | bc -l)" "$(awk '/^VmHWM/ {print $2}' "/proc/${pids[i]}/status")" \
      "$(metric "${ports[i]}" sample_controller_foos_cached)" "$(metric "${ports[i]}" sample_controller_deployments_cached)")")
  done
  # The mode the group runs in (selector: the server filters; label: the fallback).
  local mode
  mode=$(curl -sf "127.0.0.1:${ports[0]}/metrics" | sed -n 's/^shard_mode_info{mode="\([a-z]*\)"} 1$/\1/p')
  kill -TERM "${pids[@]}"; wait "${pids[@]}" 2>/dev/null || true
  CTRL_PID=
  local joined
  joined=$(IFS=,; echo "${per[*]}")
  printf '{"config":"shards-%d","mode":"%s","run":%d,"foos":%d,"deployments":%d,"statuses":%d,"converge_secs":%.2f,"replicas":[%s]}\n' \
    "$r" "${mode:-unknown}" "$run" "$N" "$d" "$s" "$(echo "$t1 - $t0" | bc)" "$joined" | tee -a "$OUT"
  kubectl delete namespace "$ns" --wait=true --timeout=300s >/dev/null || blog "namespace $ns still terminating"
}

# each_run LABEL FUNCTION: FUNCTION CONFIG RUN# for every configuration of every run.
each_run() {
  local run cfg
  for run in $(seq "$RUNS"); do
    for cfg in $CONFIGS; do
      blog "$1: $cfg run $run (N=$N)"
      "$2" "$cfg" "$run"
    done
  done
}

shards_or_go() { # shards-R|go run#
  if [[ $1 == go ]]; then run_one go "$2"; else shards_one "${1#shards-}" "$2"; fi
}

if ((SHARDS)); then
  each_run shards shards_or_go
  python3 - "$OUT" "$RUNS" "$(cut -d' ' -f1-3 /proc/loadavg)" "$BENCH_CONTROLLER_PROFILE" >"$RESULTS/shards.md" <<'EOF'
import json, statistics, sys
out, runs, load, profile = sys.argv[1:]
rows = [json.loads(l) for l in open(out) if l.strip()]
med = lambda xs: statistics.median(xs) if xs else float("nan")
print(f"`bench/controller.sh --shards` ({profile} build; medians of {runs} runs; load average {load} at the end)\n")
print("| controller | replicas | Foos | converged (s) | per replica: peak RSS MiB (max) | CPU s (max) | Foos cached (min-max) | Deployments cached (min-max) | total RSS MiB | total CPU s | runs |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
def rng(xs):
    xs = [x for x in xs if x is not None]
    return f"{min(xs):.0f}-{max(xs):.0f}" if xs else "-"
key = lambda r: r["config"] if r["config"] == "go" else (r["config"], r.get("mode", "?"))
for k in sorted({key(r) for r in rows}, key=lambda k: (k == "go", str(k[1]) if k != "go" else "", k)):
    rs = [r for r in rows if key(r) == k]
    cfg = rs[0]["config"]
    ok = all(r["deployments"] >= r["foos"] and r["statuses"] >= r["foos"] for r in rs)
    conv = f"{med([r['converge_secs'] for r in rs]):.1f}{'' if ok else ' (TIMEOUT)'}"
    if cfg == "go":
        print(f"| Go sample-controller | 1 | {rs[0]['foos']} | {conv} | {med([r['max_rss_kib'] for r in rs]) / 1024:.1f} | {med([r['cpu_secs'] for r in rs]):.2f} | {rs[0]['foos']} (all) | all | {med([r['max_rss_kib'] for r in rs]) / 1024:.1f} | {med([r['cpu_secs'] for r in rs]):.2f} | {len(rs)} |")
        continue
    n = len(rs[0]["replicas"])
    rss = med([max(x["max_rss_kib"] for x in r["replicas"]) for r in rs]) / 1024
    cpu = med([max(x["cpu_secs"] for x in r["replicas"]) for r in rs])
    trss = med([sum(x["max_rss_kib"] for x in r["replicas"]) for r in rs]) / 1024
    tcpu = med([sum(x["cpu_secs"] for x in r["replicas"]) for r in rs])
    last = rs[-1]["replicas"]
    print(f"| ours, sharded, {rs[0].get('mode', '?')} mode | {n} | {rs[0]['foos']} | {conv} | {rss:.1f} | {cpu:.2f} | {rng([x['foos_cached'] for x in last])} | {rng([x['deployments_cached'] for x in last])} | {trss:.1f} | {tcpu:.2f} | {len(rs)} |")
EOF
  cat "$RESULTS/shards.md"
  exit 0
fi

if ((FAILOVER)); then
  each_run failover failover_one
  python3 - "$OUT" "$RUNS" "$(cut -d' ' -f1-3 /proc/loadavg)" "$BENCH_CONTROLLER_PROFILE" >"$RESULTS/failover.md" <<'EOF'
import json, statistics, sys
out, runs, load, profile = sys.argv[1:]
rows = [json.loads(l) for l in open(out) if l.strip()]
med = lambda xs: statistics.median(xs) if xs else float("nan")
print(f"`bench/controller.sh --failover` ({profile} build; medians of {runs} runs; load average {load} at the end)\n")
print("| standby | Foos | SIGKILL to Lease won (s) | Lease won to first reconcile (s) | Lease won to every Foo reconciled (s) | SIGKILL to every Foo reconciled (s) | standby RSS (MiB) | new leader peak RSS (MiB) | runs |")
print("|---|---|---|---|---|---|---|---|---|")
for cfg in ("warm", "cold"):
    rs = [r for r in rows if r["config"] == cfg]
    if not rs:
        continue
    f = lambda k: med([r[k] for r in rs if r[k] is not None])
    done = all(r["all_reconciled_s"] is not None for r in rs)
    g = lambda k: med([r[k] for r in rs if r.get(k) is not None])
    print(f"| {cfg} | {rs[0]['foos']} | {g('won_s'):.1f} | {g('won_to_first_s'):.2f} | {g('won_to_all_s'):.2f} | {f('all_reconciled_s'):.2f}{'' if done else ' (not all)'} | {f('standby_rss_mib'):.1f} | {f('leader_peak_rss_mib'):.1f} | {len(rs)} |")
EOF
  cat "$RESULTS/failover.md"
  exit 0
fi

if ((PRECREATED)); then
  each_run precreated precreated_one
  python3 - "$OUT" "$RUNS" "$BENCH_CONTROLLER_PROFILE" >"$RESULTS/controller-precreated.md" <<'PY'
import json, statistics, sys
out, runs, profile = sys.argv[1:]
rows = [json.loads(l) for l in open(out) if l.strip()]
med = lambda rs, k: statistics.median(r[k] for r in rs)
names = {"ours-5": "ours, QPS 5 / burst 10 per group/version", "ours-5-compact": "ours, QPS 5 / burst 10, Deployments in the compact cache", "go": "Go sample-controller, QPS 5 / burst 10 per group/version (client-go default)"}
print(f"`bench/controller.sh --precreated` ({profile} build; medians of {runs} runs; the load at the end of each run is in the jsonl)\n")
print("| controller | Foos (namespaces) | start to every status written (s) | CPU user+sys (s) | peak RSS (MiB) | peak anon / file RSS (MiB, sampled every 5 s) | requests (audit log) | runs |")
print("|---|---|---|---|---|---|---|---|")
for c in names:
    rs = [r for r in rows if r["config"] == c]
    if not rs:
        continue
    ok = all(r["statuses"] >= r["foos"] for r in rs)
    print(f"| {names[c]} | {rs[0]['foos']} ({rs[0]['namespaces']}) | {med(rs,'converge_secs'):.1f}{'' if ok else ' (TIMEOUT)'} | {med(rs,'cpu_secs'):.2f} | "
          f"{med(rs,'max_rss_kib')/1024:.1f} | {med(rs,'peak_anon_kib')/1024:.1f} / {med(rs,'peak_file_kib')/1024:.1f} | {med(rs,'audit_requests'):.0f} | {len(rs)} |")
PY
  cat "$RESULTS/controller-precreated.md"
  exit 0
fi

each_run controller run_one

python3 - "$OUT" >"$RESULTS/controller.md" <<'EOF'
import json, statistics, sys, collections
g = collections.defaultdict(list)
for l in open(sys.argv[1]):
    if l.strip():
        r = json.loads(l); g[r["config"]].append(r)
names = {"ours": "ours, QPS 20 / burst 30 per group/version (default: server-side apply)", "ours-update": "ours, the same with --write-mode update (create/update)", "ours-5": "ours, QPS 5 / burst 10 per group/version", "ours-5-compact": "ours, QPS 5 / burst 10, Deployments in the compact cache (--deployment-cache compact)", "ours-builder": "ours on the controller builder, QPS 20 / burst 30", "ours-builder-5": "ours on the controller builder, QPS 5 / burst 10", "go": "Go sample-controller, QPS 5 / burst 10 per group/version (client-go default)"}
med = lambda rs, k: statistics.median(r[k] for r in rs)
anon = lambda rs: (f"{med(rs,'peak_anon_kib')/1024:.1f} / {med(rs,'peak_file_kib')/1024:.1f}"
                   if all("peak_anon_kib" in r for r in rs) else "-")
print("| controller | Foos | converged (s, median) | CPU user+sys (s) | peak RSS (MiB) | peak anon / file RSS (MiB, sampled) | requests (audit log) | requests (own metric) | runs |")
print("|---|---|---|---|---|---|---|---|---|")
for c in ("ours", "ours-builder", "ours-update", "ours-5", "ours-5-compact", "ours-builder-5", "go"):
    rs = g.get(c)
    if not rs: continue
    m = [r["metric_requests"] for r in rs if r["metric_requests"] is not None]
    ok = all(r["deployments"] >= r["foos"] and r["statuses"] >= r["foos"] for r in rs)
    print(f"| {names[c]} | {rs[0]['foos']} | {med(rs,'converge_secs'):.1f}{'' if ok else ' (TIMEOUT)'} | {med(rs,'cpu_secs'):.2f} | "
          f"{med(rs,'max_rss_kib')/1024:.1f} | {anon(rs)} | {med(rs,'audit_requests'):.0f} | {statistics.median(m) if m else '-'} | {len(rs)} |")
EOF
cat "$RESULTS/controller.md"
