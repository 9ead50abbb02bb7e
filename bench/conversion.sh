#!/usr/bin/env bash
# The conversion webhook: latency (p50/p99) and throughput of ConversionReviews of
# sample-api's Foo (v1beta1 <-> v1alpha1) posted over keep-alive HTTPS to the runtime's
# webhook server on 127.0.0.1, one review at a time per connection, single objects and
# batches of 100 (a list). Writes bench/results/conversion.md.
#   bench/conversion.sh [reviews per single-object scenario, default 2000]
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/kube-codegen/target}
out=bench/results/conversion.md
# The controller binaries' profile (fat LTO; Cargo.toml [profile.release-lto]).
cargo build -q --profile release-lto -p sample-controller --example conversion_bench
{
  echo "# Conversion webhook ($(date -u +%Y-%m-%d), $(nproc) cores, release-lto build)"
  echo
  echo "\`bench/conversion.sh ${1:-2000}\`"
  echo
  "$CARGO_TARGET_DIR/release-lto/examples/conversion_bench" "${1:-2000}"
} | tee "$out"
