#!/usr/bin/env bash
# The project's test command (README: "The two commands of this repository"):
#   1. builds (or finds cached) the pinned control-plane binaries (etcd, kube-apiserver,
#      kube-controller-manager, kubectl),
#   2. checks that the generated files committed in sample-api are current,
#   3. runs every test in the workspace, e2e included: each e2e test binary starts its own
#      control plane from those binaries (kube-codegen-envtest, free loopback ports) and
#      stops it when it exits, also when a test fails.
# Needs: Rust (cargo), Go (to build the pinned Kubernetes once), curl.
set -euo pipefail
cd "$(dirname "$0")/.."

# Heavy build output lives outside the clone so fresh clones (and CI) reuse it.
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/kube-codegen/target}

# The e2e tests never build Kubernetes themselves (a missing binary fails them, loudly):
# this does it, once, into the cache kube-codegen-envtest reads.
hack/testenv.sh build

# Generated code and CRDs committed in the repo must be current.
cargo run -q -p kube-codegen -- check sample-api
cargo run -q -p kube-codegen -- check sample-api --crd-dir ../sample-controller/config/crd
cargo run -q -p kube-codegen -- check sample-controller   # its RBAC, from its markers
cargo run -q -p kube-codegen -- check examples/cronjob     # the CronJob port: CRD, RBAC, webhooks, Rust
# The e2e suite runs the real sample-controller binary.
cargo build -q -p sample-controller
# The fuzz targets (generator/tests/fuzz.rs and fuzz_import.rs, the webhook's) run a minute each here,
# a few dozen cases elsewhere (RELIABILITY.md, "Fuzzing").
export KUBE_CODEGEN_FUZZ_SECONDS=${KUBE_CODEGEN_FUZZ_SECONDS:-60}
# The envtest command's own tests (envtest/tests/cli.rs) need the command built.
cargo test --workspace --no-fail-fast --features kube-codegen-envtest/cli "$@"
# The evaluator as the generator builds it, without the time-zone database (the workspace
# build above unifies features and turns it on).
cargo test -p kube-codegen-validation --no-default-features --lib
