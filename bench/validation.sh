#!/usr/bin/env bash
# Validation: kube-codegen-runtime's `validate()` (defaults + schema + CEL) per object vs the
# API server's dry-run create round trip, on the same objects generated from three CRDs of
# tests/fixtures/crd-corpus. Needs the control-plane binaries (hack/testenv.sh build).
# Writes bench/results/validation.md.
set -euo pipefail
cd "$(dirname "$0")/.."
out=bench/results/validation.md
: "${BENCH_OBJECTS:=300}"
export BENCH_OBJECTS
{
  echo "# validate() vs dry-run create ($(date -u +%Y-%m-%d), BENCH_OBJECTS=$BENCH_OBJECTS)"
  echo
  echo '| kind | objects | rejected | validate() per object | dry-run round trip (sequential) | dry-run, 16 in flight | ratio (round trip / validate) |'
  echo '|---|---|---|---|---|---|---|'
  cargo test --release -q -p kube-codegen-tests --test validation_differential \
    validation_throughput_against_dry_run -- --ignored --nocapture 2>/dev/null | grep '^| '
} | tee "$out"
