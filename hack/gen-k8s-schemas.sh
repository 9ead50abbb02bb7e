#!/usr/bin/env bash
# Regenerates the schemas of embedded Kubernetes types from upstream, for the pinned version:
#   generator/src/generators/crd/k8s_types.rs       every k8s-openapi type (hack/gen-k8s-registry.sh)
#   generator/src/generators/crd/k8s_schemas.json   controller-gen's schema of each, de-inlined
#   generator/tests/fixtures/k8s_embedded/controller-gen.yaml
#                                    controller-gen's CRD for the fixture's Go original (golden)
# It writes a Go module with one kind whose spec has a field per type (k8s.io/api,
# apimachinery, apiextensions-apiserver, kube-aggregator at $K8S_MODULES_VERSION), runs
# controller-gen $CONTROLLER_TOOLS_VERSION on it, and lets examples/gen_k8s_schemas.rs split
# and de-inline the result; that tool checks that re-inlining gives controller-gen's output
# exactly. For the next Kubernetes version: bump k8s-openapi's version feature in
# generator/Cargo.toml and K8S_VERSION in hack/testenv.sh, then run this script
# (K8S_MODULES_VERSION=v0.38.0 overrides the Go modules' version).
set -euo pipefail
cd "$(dirname "$0")/.."
# The tool versions bench/ pins (controller-gen and where it is installed), without the rest
# of bench/lib.sh's settings.
eval "$(bash -c '. bench/lib.sh && declare -p ANCHOR_BIN CONTROLLER_TOOLS_VERSION GO')"
# The Go modules of the Kubernetes version the test control plane runs (v1.37.2 -> v0.37.2).
K8S_MODULES_VERSION=${K8S_MODULES_VERSION:-v0.$(sed -n 's/^K8S_VERSION=v1\.//p' hack/testenv.sh)}
[[ $K8S_MODULES_VERSION =~ ^v0\.[0-9]+\.[0-9]+$ ]] || { echo "no K8S_VERSION in hack/testenv.sh" >&2; exit 1; }
feature=$(sed -n 's/.*k8s-openapi = {.*features = \["\(v1_[0-9]*\)".*/\1/p' generator/Cargo.toml)
[[ -n $feature ]] || { echo "no k8s-openapi version feature in generator/Cargo.toml" >&2; exit 1; }

hack/gen-k8s-registry.sh
bash bench/install-anchors.sh >&2
controller_gen=$ANCHOR_BIN/controller-gen

# GEN_K8S_SCHEMAS_WORK=dir keeps the Go modules and controller-gen's output there.
if [[ -n ${GEN_K8S_SCHEMAS_WORK:-} ]]; then
  work=$GEN_K8S_SCHEMAS_WORK; rm -rf "$work"; mkdir -p "$work"
else
  work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
fi
export GOFLAGS=-mod=mod GOTOOLCHAIN=local

# Every k8s-openapi type with a schemars schema: "<path> <OpenAPI name without io.k8s.>".
ver=$(cargo metadata --format-version 1 | python3 -c 'import json,sys; print([p for p in json.load(sys.stdin)["packages"] if p["name"]=="k8s-openapi"][0]["manifest_path"])')
src=$(dirname "$ver")/src/$feature
(cd "$src" && grep -rn -A2 "impl crate::schemars::JsonSchema for [A-Za-z0-9_]* {" .) | awk '
  /impl crate::schemars::JsonSchema for/ {
    dir = $0; sub(/^\.\//, "", dir); sub(/\/[^\/]*\.rs:[0-9]+:.*/, "", dir); gsub(/\//, "::", dir)
    ty = $0; sub(/.*JsonSchema for /, "", ty); sub(/ \{.*/, "", ty)
    path = dir "::" ty
  }
  /"io\.k8s\./ { name = $0; sub(/.*"io\.k8s\./, "", name); sub(/".*/, "", name); print path, name }' \
  | sort -u > "$work/types.txt"

# A Go module: one kind, one spec field per type, named by its k8s-openapi path.
# io.k8s.api.core.v1.PodSpec is k8s.io/api/core/v1.PodSpec.
mkdir -p "$work/probe/api/v1"
awk '
  { n = split($2, a, "."); pkg = "k8s.io/" a[1]; for (i = 2; i < n; i++) pkg = pkg "/" a[i]
    if (!(pkg in alias)) { alias[pkg] = "p" (++np); order[np] = pkg }
    fields[++nf] = sprintf("\tF%d %s.%s `json:\"%s\"`", nf, alias[pkg], a[n], $1) }
  END {
    meta = alias["k8s.io/apimachinery/pkg/apis/meta/v1"]
    print "// +groupName=probe.example.com\n// +kubebuilder:object:generate=false\npackage v1\n\nimport ("
    for (i = 1; i <= np; i++) printf "\t%s \"%s\"\n", alias[order[i]], order[i]
    print ")\n\n// +kubebuilder:object:root=true\ntype Probe struct {"
    printf "\t%s.TypeMeta   `json:\",inline\"`\n\t%s.ObjectMeta `json:\"metadata,omitempty\"`\n", meta, meta
    print "\tSpec ProbeSpec `json:\"spec\"`\n}\n\ntype ProbeSpec struct {"
    for (i = 1; i <= nf; i++) print fields[i]
    print "}"
  }' "$work/types.txt" > "$work/probe/api/v1/types.go"

gomod() { # dir module-name
  (cd "$1" && printf 'module %s\n\ngo 1.24\n' "$2" > go.mod \
    && for m in api apimachinery apiextensions-apiserver kube-aggregator; do
         "$GO" mod edit -require="k8s.io/$m@$K8S_MODULES_VERSION"; done \
    && "$GO" mod tidy)
}
gomod "$work/probe" example.com/probe

# Floats are allowed (the generator maps f64 to number); controller-gen needs the opt-in.
(cd "$work/probe" && "$controller_gen" crd:allowDangerousTypes=true paths=./api/... output:crd:dir=out) \
  > "$work/cg.log" 2>&1 || true
crd=$work/probe/out/probe.example.com_probes.yaml
[[ -s $crd ]] || { cat "$work/cg.log" >&2; echo "controller-gen wrote no CRD" >&2; exit 1; }

# controller-gen's errors. "without JSON tag": a type serialized by a MarshalJSON of its own,
# which controller-gen renders as an empty object: unsupported (with every type containing
# it). A marker controller-gen refuses on an upstream type: it leaves the marker out and
# the rest stands, which is all controller-gen gives a Go user too. Anything else stops here.
: > "$work/unsupported.tsv"
while IFS= read -r line; do
  case $line in
    *"without JSON tag in type"*)
      file=${line%%:*}
      pkg=$(dirname "${file#*/pkg/mod/}"); pkg=${pkg/@$K8S_MODULES_VERSION/}
      ty=$(sed -n 's/.*without JSON tag in type "\([A-Za-z0-9_]*\)".*/\1/p' <<< "$line")
      name=$(sed 's#^k8s\.io/##; s#/#.#g' <<< "$pkg").$ty
      printf '%s\t%s\n' "$name" "controller-gen cannot see its JSON encoding (a MarshalJSON of its own) and renders it as an empty object" >> "$work/unsupported.tsv" ;;
    *"must apply listMapKey to an associative-list"* | *"must apply listType to an array"*)
      echo "controller-gen refuses a marker of an upstream type, kept out: $line" >&2 ;;
    "Error: not all generators ran successfully" | "run \`controller-gen"*) ;;
    *) echo "controller-gen: unexpected error, stopping: $line" >&2; exit 1 ;;
  esac
done < "$work/cg.log"
sort -u -o "$work/unsupported.tsv" "$work/unsupported.tsv"

cargo run -q -p kube-codegen --example gen_k8s_schemas -- \
  "$work/types.txt" "$crd" "$work/unsupported.tsv" generator/src/generators/crd/k8s_schemas.json \
  "controller-gen $CONTROLLER_TOOLS_VERSION on k8s.io/api $K8S_MODULES_VERSION (hack/gen-k8s-schemas.sh)"

# The golden of tests/k8s_embedded.rs: controller-gen on the fixture's Go original.
fixture=generator/tests/fixtures/k8s_embedded
mkdir -p "$work/embed/api/v1"
cp "$fixture/go/types.go" "$work/embed/api/v1/"
gomod "$work/embed" example.com/embed
(cd "$work/embed" && "$controller_gen" crd paths=./api/... output:crd:dir=out)
cp "$work/embed/out/embed.example.com_embeds.yaml" "$fixture/controller-gen.yaml"
echo "wrote generator/src/generators/crd/k8s_schemas.json and $fixture/controller-gen.yaml" >&2
