#!/usr/bin/env bash
# Smoke test of the benchmark harness, for CI: every part's code path runs once with a
# tiny workload (1 run; 2x2 synthetic API; 200 ConfigMaps; 10 Foos; 20 CronJob creates
# through the webhooks; 5 CronJobs over one schedule tick). It asserts that the
# harness works and produces its tables, never timings. Go anchors are used only where
# they are already installed (bench/install-anchors.sh); nothing is downloaded for them.
# Uses its own control plane instance (/tmp/kube-codegen-bench-smoke, port offset 300)
# and stops it at the end. Results go to a temp dir, not bench/results/.
set -euo pipefail
BENCH=$(cd "$(dirname "$0")" && pwd)
export BENCH_RUNS=1 BENCH_PROFILE=${BENCH_PROFILE:-dev}
export BENCH_RESULTS=${BENCH_RESULTS:-$(mktemp -d /tmp/kcg-bench-smoke.XXXXXX)}
export KUBE_CODEGEN_TESTENV_DIR=/tmp/kube-codegen-bench-smoke
export KUBE_CODEGEN_TESTENV_PORT_OFFSET=300
export BENCH_AUDIT_DIR=/tmp/kube-codegen-bench-smoke-audit
trap '"$BENCH/../hack/testenv.sh" down >/dev/null 2>&1 || true' EXIT

# What the harness needs from Debian (a fresh CI machine may lack them).
if ! command -v hyperfine >/dev/null || [[ ! -x /usr/bin/time ]]; then
  (apt-get install -y -q hyperfine time >/dev/null 2>&1 ||
    { apt-get update -q >/dev/null 2>&1 && apt-get install -y -q hyperfine time >/dev/null 2>&1; }) ||
    echo "bench-smoke: could not install hyperfine/time" >&2
fi

passed=0 failed=0
part() { # name table
  if bash "$BENCH/$1.sh" --smoke && [[ -s $BENCH_RESULTS/$2 ]] && grep -q '^|' "$BENCH_RESULTS/$2"; then
    echo "bench-smoke: $1 ok"
    passed=$((passed + 1))
  else
    echo "bench-smoke: $1 FAILED" >&2
    failed=$((failed + 1))
  fi
}
part codegen codegen.md
part compile compile.md
part cache cache.md
part controller controller.md
part admission admission.md
part cronjob cronjob.md
echo "bench-smoke: results in $BENCH_RESULTS"
echo "bench-smoke: $passed passed, $failed failed"
((failed == 0))
