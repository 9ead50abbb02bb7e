#!/usr/bin/env bash
# The project's test command (README: "Run the tests"):
#   1. builds (or finds cached) and starts a real control plane on loopback,
#   2. checks that the generated files committed in sample-api are current,
#   3. runs every test in the workspace, e2e included, against that control plane,
#   4. stops the control plane, also when something fails.
# Needs: Rust (cargo), Go (to build the pinned Kubernetes once), openssl, curl.
set -euo pipefail
cd "$(dirname "$0")/.."

# Heavy build output lives outside the clone so fresh clones (and CI) reuse it.
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/kube-codegen/target}

hack/testenv.sh build
trap 'hack/testenv.sh down || true' EXIT
kubeconfig=$(hack/testenv.sh up | tail -n 1)
eval "$(hack/testenv.sh env)"
export KUBE_CODEGEN_KUBECONFIG=$kubeconfig
echo "test: control plane up, kubeconfig $kubeconfig, $(kubectl version 2>/dev/null | tr '\n' ' ')"

# Generated code and CRDs committed in the repo must be current.
cargo run -q -p kube-codegen -- check sample-api
cargo run -q -p kube-codegen -- check sample-api --crd-dir ../sample-controller/config/crd
# The e2e suite runs the real sample-controller binary.
cargo build -q -p sample-controller
cargo test --workspace --no-fail-fast "$@"
