#!/usr/bin/env bash
# The baseline: the Go project's own envtest suites (go-project/internal/controller, 6 `It`s;
# go-project/internal/webhook/v1, 8 `It`s; internal/webhook/v2, an empty scaffold) run with
# `go test`, as its Makefile's `test` target runs them, against the control-plane binaries
# the Rust port's suites use (KUBEBUILDER_ASSETS: etcd, kube-apiserver and kubectl v1.37.2,
# built from Go modules by hack/testenv.sh build, cached in ~/.cache/kube-codegen). Go
# fetches the project's modules (controller-runtime v0.24.1, ginkgo, gomega, ...) from the
# module proxy by go.mod. Extra arguments go to `go test` (e.g. -v, -run).
# The Makefile's `manifests generate fmt vet` steps are not run: the suites use the
# committed config/ (controller-gen's output) as they are.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
# As hack/test.sh: the envtest command builds outside the clone.
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/kube-codegen/target}
assets="$("$root/hack/testenv.sh" build | tail -n 1)"
for bin in etcd kube-apiserver kubectl; do
    [ -x "$assets/$bin" ] || { echo "go-suites.sh: $assets/$bin missing (hack/testenv.sh build)" >&2; exit 1; }
done
cd "$here/../go-project"
export KUBEBUILDER_ASSETS="$assets"
echo "KUBEBUILDER_ASSETS=$KUBEBUILDER_ASSETS"
go test ./internal/controller/... ./internal/webhook/... -count=1 "$@" \
    -ginkgo.v -ginkgo.no-color
