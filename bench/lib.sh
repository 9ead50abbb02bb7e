# Shared settings for the bench/ scripts. Source it: `. "$(dirname "$0")/lib.sh"`.
set -euo pipefail
BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$BENCH_DIR/.." && pwd)
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/kube-codegen/target}
CACHE_ROOT=${KUBE_CODEGEN_CACHE:-$HOME/.cache/kube-codegen}
# Go reference tools, installed by module path, outside the repo.
ANCHORS=${KUBE_CODEGEN_GO_ANCHORS:-$CACHE_ROOT/go-anchors}
ANCHOR_BIN=$ANCHORS/bin
# Pinned anchor versions. code-generator follows the k8s minor we target (1.37);
# k8s.io/sample-controller v0.37.2 is not served by the module proxy (403), v0.37.0 is.
CODE_GENERATOR_VERSION=${CODE_GENERATOR_VERSION:-v0.37.2}
CONTROLLER_TOOLS_VERSION=${CONTROLLER_TOOLS_VERSION:-v0.23.0}
SAMPLE_CONTROLLER_VERSION=${SAMPLE_CONTROLLER_VERSION:-v0.37.0}
RESULTS=${BENCH_RESULTS:-$BENCH_DIR/results}
# Cargo profile of our measured binaries: release for figures; smoke.sh uses dev, which
# the test suite has already built, so CI does not pay for a second (release) build.
BENCH_PROFILE=${BENCH_PROFILE:-release}
PROFILE_DIR=$([[ $BENCH_PROFILE == dev ]] && echo debug || echo "$BENCH_PROFILE")
# The runtime's binaries (sample-controller, the cache and conversion probes) build with
# the workspace's `release-lto` profile (fat LTO, one codegen unit: what pays for a
# long-running controller) where the generator's figures use `release`; smoke keeps dev.
BENCH_CONTROLLER_PROFILE=${BENCH_CONTROLLER_PROFILE:-$([[ $BENCH_PROFILE == release ]] && echo release-lto || echo "$BENCH_PROFILE")}
CONTROLLER_PROFILE_DIR=$([[ $BENCH_CONTROLLER_PROFILE == dev ]] && echo debug || echo "$BENCH_CONTROLLER_PROFILE")
# Number of runs for medians (>= 5 for published figures; smoke uses 1).
RUNS=${BENCH_RUNS:-5}

GO=${GO:-$(command -v go || echo /usr/local/go/bin/go)}
blog() { echo "bench: $*" >&2; }

have_go() { [[ -x $GO ]] || command -v "$GO" >/dev/null 2>&1; }

# The code-generator module's directory in the module cache (kube_codegen.sh lives there).
code_generator_dir() {
  "$GO" mod download -json "k8s.io/code-generator@$CODE_GENERATOR_VERSION" |
    sed -n 's/^\t"Dir": "\(.*\)",$/\1/p'
}

anchors_installed() {
  [[ -x $ANCHOR_BIN/controller-gen && -x $ANCHOR_BIN/deepcopy-gen && -x $ANCHOR_BIN/client-gen \
    && -x $ANCHOR_BIN/lister-gen && -x $ANCHOR_BIN/informer-gen && -x $ANCHOR_BIN/register-gen ]]
}

# median of numbers on stdin (one per line)
median() { sort -g | awk '{a[NR]=$1} END {if (NR==0) {print "nan"} else if (NR%2) {print a[(NR+1)/2]} else {print (a[NR/2]+a[NR/2+1])/2}}'; }

# ---- the benchmark's own control plane (hack/testenv.sh, a separate instance) ----------
export KUBE_CODEGEN_TESTENV_DIR=${KUBE_CODEGEN_TESTENV_DIR:-/tmp/kube-codegen-bench}
export KUBE_CODEGEN_TESTENV_PORT_OFFSET=${KUBE_CODEGEN_TESTENV_PORT_OFFSET:-200}
# Starts it if needed; sets KUBECONFIG and puts the pinned kubectl first on PATH.
# The apiserver writes an audit log (Metadata level: verb, resource, userAgent per request)
# so requests can be counted per client, for the Go controller too.
BENCH_AUDIT_DIR=${BENCH_AUDIT_DIR:-/tmp/kube-codegen-bench-audit}
bench_cluster_up() {
  local kc
  mkdir -p "$BENCH_AUDIT_DIR"
  cat >"$BENCH_AUDIT_DIR/policy.yaml" <<'P'
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived, ResponseStarted]
rules:
- level: Metadata
P
  export KUBE_CODEGEN_APISERVER_EXTRA_ARGS="--audit-policy-file=$BENCH_AUDIT_DIR/policy.yaml --audit-log-path=$BENCH_AUDIT_DIR/audit.log --audit-log-maxsize=2000 --audit-log-maxbackup=1"
  # BENCH_FEATURE_GATES="ShardedListAndWatch=true ...": kube-apiserver feature gates (a
  # running instance keeps the gates it was started with: use another instance directory).
  local gates=() g
  for g in ${BENCH_FEATURE_GATES:-}; do gates+=(--feature-gate "$g"); done
  # BENCH_KCM_ARGS="--kube-api-qps=1000 ...": kube-controller-manager flags (likewise kept
  # by a running instance).
  for g in ${BENCH_KCM_ARGS:-}; do gates+=("--controller-manager-arg=$g"); done
  kc=$("$REPO_ROOT/hack/testenv.sh" up "${gates[@]}" | tail -n1)
  export KUBECONFIG=$kc
  eval "$("$REPO_ROOT/hack/testenv.sh" env)"
  blog "control plane: $KUBECONFIG ($(kubectl version -o json 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["serverVersion"]["gitVersion"])'))"
}
bench_cluster_down() { "$REPO_ROOT/hack/testenv.sh" down; }

# ---- part 2's workload (bench/controller.sh, bench/profile-controller.sh) ---------------
# The Foo CRD (status subresource on), installed and Established. Only its v1alpha1, as
# the storage version and without the conversion webhook: this workload measures the Foo
# loop on the version the Go sample-controller serves, not conversions (bench/conversion.sh).
install_foo_crd() {
  python3 - "$REPO_ROOT/sample-controller/config/crd/samplecontroller.k8s.io_foos.yaml" <<'PY' | kubectl apply -f - >/dev/null
import sys, yaml
crd = yaml.safe_load(open(sys.argv[1]))
crd["spec"].pop("conversion", None)
crd["spec"]["versions"] = [v for v in crd["spec"]["versions"] if v["name"] == "v1alpha1"]
crd["spec"]["versions"][0]["storage"] = True
yaml.safe_dump(crd, sys.stdout)
PY
  kubectl wait --for condition=established --timeout=60s crd/foos.samplecontroller.k8s.io >/dev/null
}

# write_foos DIR N: N Foos (replicas 1) as files of 250 objects each, for parallel creates.
write_foos() {
  python3 - "$1" "$2" <<'EOF'
import os, sys
out, n = sys.argv[1], int(sys.argv[2])
os.makedirs(out)
chunk = 250
for c in range(0, n, chunk):
    with open(f"{out}/{c:05d}.yaml", "w") as f:
        for i in range(c, min(n, c + chunk)):
            f.write(f"---\napiVersion: samplecontroller.k8s.io/v1alpha1\nkind: Foo\nmetadata:\n"
                    f"  name: foo-{i:05d}\nspec:\n  deploymentName: foo-{i:05d}-deploy\n  replicas: 1\n")
EOF
}

# foo_progress NS: "<deployments owned by a Foo> <foos with status written>"
foo_progress() {
  local d s
  d=$(kubectl get deployments -n "$1" -o jsonpath='{range .items[*]}{.metadata.ownerReferences[0].kind}{"\n"}{end}' 2>/dev/null | grep -c '^Foo$' || true)
  s=$(kubectl get foos -n "$1" -o jsonpath='{range .items[*]}{.status.availableReplicas}{"\n"}{end}' 2>/dev/null | grep -c . || true)
  echo "$d $s"
}

# ---- the CronJob port beside the Go project (bench/admission.sh, bench/cronjob.sh) ----------
# webhook_certs DIR: ca.crt, and tls.crt/tls.key for 127.0.0.1 signed by it (ECDSA P-256),
# the serving certificate of whichever webhook server runs.
webhook_certs() {
  local d=$1
  mkdir -p "$d"
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
    -subj /CN=bench-webhook-ca -keyout "$d/ca.key" -out "$d/ca.crt" 2>/dev/null
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj /CN=127.0.0.1 \
    -keyout "$d/tls.key" -out "$d/tls.csr" 2>/dev/null
  printf 'subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=serverAuth\n' >"$d/ext"
  openssl x509 -req -in "$d/tls.csr" -CA "$d/ca.crt" -CAkey "$d/ca.key" -CAcreateserial \
    -days 2 -extfile "$d/ext" -out "$d/tls.crt" 2>/dev/null
}

# A free loopback port.
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# cronjob_webhook_objects BASE CA KIND...: the CronJob port's committed CRD (`crd`) and/or
# webhook configurations (`webhooks`, controller-gen's four) with every client config
# pointed at https URL BASE (+ the path) and CA's bundle, as YAML on stdout.
cronjob_webhook_objects() {
  python3 - "$REPO_ROOT/examples/cronjob/config" "$@" <<'PY'
import base64, sys, yaml
config, base, ca, kinds = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
bundle = base64.b64encode(open(ca, "rb").read()).decode()
docs = []
if "crd" in kinds:
    crd = yaml.safe_load(open(f"{config}/crd/bases/batch.tutorial.kubebuilder.io_cronjobs.yaml"))
    crd["spec"]["conversion"]["webhook"]["clientConfig"] = {"url": f"{base}/convert", "caBundle": bundle}
    docs.append(crd)
if "webhooks" in kinds:
    for d in yaml.safe_load_all(open(f"{config}/webhook/manifests.yaml")):
        if not d:
            continue
        for w in d["webhooks"]:
            w["clientConfig"] = {"url": base + w["clientConfig"]["service"]["path"], "caBundle": bundle}
        docs.append(d)
yaml.safe_dump_all(docs, sys.stdout)
PY
}

# install_cronjob_crd BASE CA: the CRD, its conversion webhook at BASE/convert, Established.
install_cronjob_crd() {
  cronjob_webhook_objects "$1" "$2" crd | kubectl apply -f - >/dev/null
  # Polled: `kubectl wait` fails outright on a CRD whose status has no conditions yet.
  local crd=crd/cronjobs.batch.tutorial.kubebuilder.io
  for _ in $(seq 1 120); do
    [[ $(kubectl get $crd -o jsonpath='{.status.conditions[?(@.type=="Established")].status}' 2>/dev/null) == True ]] && return 0
    sleep 0.5
  done
  blog "$crd not Established"; return 1
}

# build_go_cronjob DIR SMOKE [MAIN.go.txt]: a copy of the Go project in DIR (the one in the
# repo is left as it is); with MAIN, that file becomes cmd/extra/main.go. Builds ./cmd (or
# ./cmd/extra) to DIR/bin; with SMOKE=1 only from the module cache (GOPROXY=off). Fails
# with the build's output.
build_go_cronjob() {
  local dir=$1 smoke=$2 main=${3:-} pkg=./cmd
  rm -rf "$dir"
  cp -r "$REPO_ROOT/examples/cronjob/go-project" "$dir"
  if [[ -n $main ]]; then
    mkdir -p "$dir/cmd/extra"
    cp "$main" "$dir/cmd/extra/main.go"
    pkg=./cmd/extra
  fi
  (
    cd "$dir"
    if ((smoke)); then export GOPROXY=off GOFLAGS=-mod=mod; fi
    "$GO" build -o "$dir/bin" "$pkg"
  ) >"$dir.build.log" 2>&1 || { cat "$dir.build.log" >&2; return 1; }
}

# go_side DIR WHAT [MAIN.go.txt]: when CONFIGS names `go`, the Go project's WHAT built to
# DIR/bin (build_go_cronjob); a smoke run (SMOKE=1) whose modules are not cached drops `go`
# from CONFIGS instead of failing.
go_side() {
  [[ $CONFIGS == *go* ]] || return 0
  blog "building the Go project's $2 (controller-runtime)"
  if ! build_go_cronjob "$1" "$SMOKE" "${3:-}"; then
    ((SMOKE)) || exit 1
    blog "Go $2 not buildable offline (smoke): ours only"
    CONFIGS=${CONFIGS//go/}
  fi
}

# webhook_endpoint DIR: one TLS endpoint both sides serve on: CERTS (DIR/certs, webhook_certs),
# a free PORT, and BASE=https://127.0.0.1:PORT.
webhook_endpoint() {
  CERTS=$1/certs
  webhook_certs "$CERTS"
  PORT=$(free_port)
  BASE=https://127.0.0.1:$PORT
}

# wait_https URL CA PID LOG: until URL answers over TLS (any status), or PID exits (its log
# printed, failure).
wait_https() {
  for _ in $(seq 1 300); do
    curl -s -o /dev/null --max-time 1 --cacert "$2" "$1" && return 0
    kill -0 "$3" 2>/dev/null || { cat "$4" >&2; return 1; }
    sleep 0.2
  done
  blog "$1 did not answer"; return 1
}

# cpu_ticks PID: utime+stime in clock ticks (getconf CLK_TCK a second).
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
