#!/usr/bin/env bash
# Smoke test of the benchmark harness, for CI: every part's code path runs once with a
# tiny workload (1 run; 2x2 synthetic API; 200 ConfigMaps; 10 Foos). It asserts that the
# harness works and produces its tables, never timings. Go anchors are used only where
# they are already installed (bench/install-anchors.sh); nothing is downloaded for them.
# Uses its own control plane instance (/tmp/kube-codegen-bench-smoke, port offset 300)
# and stops it at the end. Results go to a temp dir, not bench/results/.
set -euo pipefail
BENCH=$(cd "$(dirname "$0")" && pwd)
export BENCH_RUNS=1
export BENCH_RESULTS=${BENCH_RESULTS:-$(mktemp -d /tmp/kcg-bench-smoke.XXXXXX)}
export KUBE_CODEGEN_TESTENV_DIR=/tmp/kube-codegen-bench-smoke
export KUBE_CODEGEN_TESTENV_PORT_OFFSET=300
export BENCH_AUDIT_DIR=/tmp/kube-codegen-bench-smoke-audit
trap '"$BENCH/../hack/testenv.sh" down >/dev/null 2>&1 || true' EXIT

fail=0
check() { # part table
  if [[ -s $BENCH_RESULTS/$2 ]] && grep -q '^|' "$BENCH_RESULTS/$2"; then
    echo "bench-smoke: $1 ok"
  else
    echo "bench-smoke: $1 FAILED (no $2)" >&2
    fail=1
  fi
}
bash "$BENCH/codegen.sh" --smoke && check codegen codegen.md || { echo "bench-smoke: codegen FAILED" >&2; fail=1; }
bash "$BENCH/compile.sh" --smoke && check compile compile.md || { echo "bench-smoke: compile FAILED" >&2; fail=1; }
bash "$BENCH/cache.sh" --smoke && check cache cache.md || { echo "bench-smoke: cache FAILED" >&2; fail=1; }
bash "$BENCH/controller.sh" --smoke && check controller controller.md || { echo "bench-smoke: controller FAILED" >&2; fail=1; }
if ((fail)); then
  echo "bench-smoke: 0 passed, 1 failed"
  exit 1
fi
echo "bench-smoke: results in $BENCH_RESULTS"
