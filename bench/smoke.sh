#!/usr/bin/env bash
# Smoke test of the benchmark harness, for CI: every part's code path runs once with a
# tiny workload (1 run; 2x2 synthetic API; 10 kinds for the floor; 200 ConfigMaps and 20
# Deployments; 10 Foos, 10 pre-created over 2 namespaces, a failover of 10 warm and cold, and 10 over 1, 2 and 4 shards; 20 CronJob creates through the webhooks; 5 CronJobs over one schedule
# tick; the install in debug, into the warm target dir, without Go). It asserts that the
# harness works and produces its tables and rows, never timings. Go anchors are used only where
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
part() { # name[:mode] table [row pattern...]: every pattern must match a table row
  local name=${1%%:*} mode= table=$2 pattern ok=1
  [[ $1 == *:* ]] && mode=--${1#*:}
  shift 2
  bash "$BENCH/$name.sh" --smoke $mode && [[ -s $BENCH_RESULTS/$table ]] && grep -q '^|' "$BENCH_RESULTS/$table" || ok=0
  for pattern in "$@"; do
    ((ok)) && ! grep -Eq "^\| $pattern" "$BENCH_RESULTS/$table" && { echo "bench-smoke: $name: no row '$pattern'" >&2; ok=0; }
  done
  if ((ok)); then
    echo "bench-smoke: $name ok"
    passed=$((passed + 1))
  else
    echo "bench-smoke: $name FAILED" >&2
    failed=$((failed + 1))
  fi
}
part codegen codegen.md
part gogen gogen.md
part floor floor.md
part install install.md
part compile compile.md
# The cache table's rows: each kind cached whole and metadata only, managedFields kept and
# dropped, by our typed and our compact informers (client-go's beside them when Go is there).
cache_rows=()
for kind in configmaps deployments; do
  for cached in "whole object" "metadata only"; do
    for mf in kept dropped; do
      cache_rows+=("$kind \\| $cached \\| $mf \\| ours \\(" "$kind \\| $cached \\| $mf \\| ours, compact \\(")
    done
  done
done
part cache cache.md "${cache_rows[@]}"
part controller controller.md
part controller:failover failover.md "warm \| 10 \|" "cold \| 10 \|"
part controller:precreated controller-precreated.md "ours, QPS 5 / burst 10 per group/version \| 10 \(2\)"
part controller:shards shards.md "ours, sharded, [a-z]+ mode \| 1 \|" "ours, sharded, [a-z]+ mode \| 2 \|" "ours, sharded, [a-z]+ mode \| 4 \|"
part admission admission.md
part cronjob cronjob.md
echo "bench-smoke: results in $BENCH_RESULTS"
echo "bench-smoke: $passed passed, $failed failed"
((failed == 0))
