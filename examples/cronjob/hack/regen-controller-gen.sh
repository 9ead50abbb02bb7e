#!/usr/bin/env bash
# Regenerates controller-gen/crd-k8s-1.37.yaml: controller-gen's CRD for go-project's API with
# the Kubernetes the Rust port targets. go-project pins k8s.io/api v0.36.0 (its committed
# config/crd/bases is controller-gen v0.21.0 on Kubernetes 1.36's PodSpec); the port's
# k8s-openapi types are Kubernetes 1.37's, so the like-for-like reference is controller-gen
# on the same Go API with k8s.io/api v0.37.2, the version of the test control plane.
# controller-gen v0.23.0 is the version the rest of this repository compares with (it reads
# 1.37's declarative validation tags, `+k8s:maxItems` and the like; v0.21.0 does not).
# Options as go-project's Makefile passes them (crd:maxDescLen=0).
# Needs Go and the module proxy. tests/manifests.rs compares the port's CRD with this file.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cp -r "$here/../go-project" "$work/project"
cd "$work/project"
go get k8s.io/api@v0.37.2 k8s.io/apimachinery@v0.37.2
go run sigs.k8s.io/controller-tools/cmd/controller-gen@v0.23.0 \
    crd:maxDescLen=0 paths=./api/... output:crd:artifacts:config="$work/out"
cp "$work/out/batch.tutorial.kubebuilder.io_cronjobs.yaml" "$here/controller-gen/crd-k8s-1.37.yaml"
echo "wrote $here/controller-gen/crd-k8s-1.37.yaml"
