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
  kc=$("$REPO_ROOT/hack/testenv.sh" up | tail -n1)
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
