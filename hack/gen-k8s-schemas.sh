#!/usr/bin/env bash
# Regenerates the generator's schemas of embedded Kubernetes types, for every Kubernetes
# version the generator supports (KubernetesVersion in generator/src/kubernetes.rs, the
# versions k8s-openapi has):
#   generator/src/kubernetes/schemas/v1_NN.json   controller-gen's schema of every
#       k8s-openapi type, de-inlined; the newest version in full, older ones as the
#       difference from it
#   generator/tests/fixtures/k8s_embedded/controller-gen.yaml
#       controller-gen's CRD for the fixture's Go original, newest version (golden)
# Per version it writes a Go module with one kind whose spec has a field per k8s-openapi
# type (k8s.io/api, apimachinery, apiextensions-apiserver, kube-aggregator at the version
# below), runs controller-gen $CONTROLLER_TOOLS_VERSION on it, and lets the tool in
# hack/k8s-schemas (built against k8s-openapi of that version) split and de-inline the
# result; the tool checks that re-inlining gives controller-gen's output exactly, and that
# an older version's delta gives its full data back.
# For a new Kubernetes version: bump k8s-openapi, add the version to KubernetesVersion, to
# MODULES below and to KUBERNETES_VERSION in envtest/src/binaries.rs, then run this script.
# VERSIONS="1.36 1.37" regenerates only those (the newest must be among them when any is).
set -euo pipefail
cd "$(dirname "$0")/.."
# The tool versions bench/ pins (controller-gen and where it is installed), without the rest
# of bench/lib.sh's settings.
eval "$(bash -c '. bench/lib.sh && declare -p ANCHOR_BIN CONTROLLER_TOOLS_VERSION GO')"
# The Go modules per Kubernetes version: the newest patch the Go proxy served when this was
# written, and for the newest version the one the test control plane runs (the pin in
# envtest/src/binaries.rs, as `kube-codegen-envtest versions` prints it).
pinned=$(hack/testenv.sh versions)
declare -A MODULES=(
  [1.33]=v0.33.13 [1.34]=v0.34.13 [1.35]=v0.35.10 [1.36]=v0.36.6
  [1.37]=v0.$(sed -n 's/^kubernetes v1\.//p' <<<"$pinned")
)
NEWEST=1.37
VERSIONS=${VERSIONS:-1.33 1.34 1.35 1.36 1.37}
[[ ${MODULES[$NEWEST]} =~ ^v0\.37\.[0-9]+$ ]] || { echo "KUBERNETES_VERSION in envtest/src/binaries.rs is not 1.37.x" >&2; exit 1; }
data=generator/src/kubernetes/schemas
tool_target=${GEN_K8S_SCHEMAS_TARGET:-$HOME/.cache/kube-codegen/target-k8s-schemas}

bash bench/install-anchors.sh >&2
controller_gen=$ANCHOR_BIN/controller-gen

# GEN_K8S_SCHEMAS_WORK=dir keeps the Go modules and controller-gen's output there.
if [[ -n ${GEN_K8S_SCHEMAS_WORK:-} ]]; then
  work=$GEN_K8S_SCHEMAS_WORK; rm -rf "$work"; mkdir -p "$work"
else
  work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
fi
export GOFLAGS=-mod=mod GOTOOLCHAIN=local

gomod() { # dir module-name k8s-modules-version
  (cd "$1" && printf 'module %s\n\ngo 1.24\n' "$2" > go.mod \
    && for m in api apimachinery apiextensions-apiserver kube-aggregator; do
         "$GO" mod edit -require="k8s.io/$m@$3"; done \
    && "$GO" mod tidy)
}

# The tool, built against k8s-openapi of Kubernetes $1 with the type table $2.
tool() { # 1.NN k8s_types.rs args...
  local v=$1 table=$2; shift 2
  K8S_OPENAPI_ENABLED_VERSION=$v K8S_TYPES_RS=$table CARGO_TARGET_DIR=$tool_target \
    cargo run -q --manifest-path hack/k8s-schemas/Cargo.toml -- "$@"
}

one_version() { # 1.NN: writes $work/1.NN/full.json
  local v=$1 mods=${MODULES[$1]:?no Go modules version for $1} feature=v1_${1#1.}
  local w=$work/$v; mkdir -p "$w"
  local manifest src crd
  manifest=$(cargo metadata --format-version 1 | python3 -c 'import json,sys; print([p for p in json.load(sys.stdin)["packages"] if p["name"]=="k8s-openapi"][0]["manifest_path"])')
  src=$(dirname "$manifest")/src/$feature
  # Every k8s-openapi type with a schemars schema: "<path> <OpenAPI name without io.k8s.>".
  (cd "$src" && grep -rn -A2 "impl crate::schemars::JsonSchema for [A-Za-z0-9_]* {" .) | awk '
    /impl crate::schemars::JsonSchema for/ {
      dir = $0; sub(/^\.\//, "", dir); sub(/\/[^\/]*\.rs:[0-9]+:.*/, "", dir); gsub(/\//, "::", dir)
      ty = $0; sub(/.*JsonSchema for /, "", ty); sub(/ \{.*/, "", ty)
      path = dir "::" ty
    }
    /"io\.k8s\./ { name = $0; sub(/.*"io\.k8s\./, "", name); sub(/".*/, "", name); print path, name }' \
    | sort -u > "$w/types.txt"
  
  # A Go module: one kind, one spec field per type, named by its k8s-openapi path.
  # io.k8s.api.core.v1.PodSpec is k8s.io/api/core/v1.PodSpec.
  mkdir -p "$w/probe/api/v1"
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
    }' "$w/types.txt" > "$w/probe/api/v1/types.go"
  
  gomod "$w/probe" example.com/probe "$mods"
  
  # Floats are allowed (the generator maps f64 to number); controller-gen needs the opt-in.
  (cd "$w/probe" && "$controller_gen" crd:allowDangerousTypes=true paths=./api/... output:crd:dir=out) \
    > "$w/cg.log" 2>&1 || true
  crd=$w/probe/out/probe.example.com_probes.yaml
  [[ -s $crd ]] || { cat "$w/cg.log" >&2; echo "controller-gen wrote no CRD" >&2; exit 1; }
  
  # controller-gen's errors. "without JSON tag": a type serialized by a MarshalJSON of its own,
  # which controller-gen renders as an empty object: unsupported (with every type containing
  # it). A marker controller-gen refuses on an upstream type (or an enum whose values it
  # cannot find): it leaves the marker out and
  # the rest stands, which is all controller-gen gives a Go user too. Anything else stops here.
  : > "$w/unsupported.tsv"
  while IFS= read -r line; do
    case $line in
      *"without JSON tag in type"*)
        file=${line%%:*}
        pkg=$(dirname "${file#*/pkg/mod/}"); pkg=${pkg/@$mods/}
        ty=$(sed -n 's/.*without JSON tag in type "\([A-Za-z0-9_]*\)".*/\1/p' <<< "$line")
        name=$(sed 's#^k8s\.io/##; s#/#.#g' <<< "$pkg").$ty
        printf '%s\t%s\n' "$name" "controller-gen cannot see its JSON encoding (a MarshalJSON of its own) and renders it as an empty object" >> "$w/unsupported.tsv" ;;
      *"must apply listMapKey to an associative-list"* | *"must apply listType to an array"* \
        | *"no enum values found for type"*)
        echo "controller-gen refuses a marker of an upstream type, kept out: $line" >&2 ;;
      "Error: not all generators ran successfully" | "run \`controller-gen"*) ;;
      *) echo "controller-gen: unexpected error, stopping: $line" >&2; exit 1 ;;
    esac
  done < "$w/cg.log"
  sort -u -o "$w/unsupported.tsv" "$w/unsupported.tsv"
  
  hack/gen-k8s-registry.sh "$feature" "$w/k8s_types.rs"
  tool "$v" "$w/k8s_types.rs" "$w/types.txt" "$crd" "$w/unsupported.tsv" "$w/full.json" \
    "controller-gen $CONTROLLER_TOOLS_VERSION on k8s.io/api $mods (hack/gen-k8s-schemas.sh)"
}

for v in $VERSIONS; do echo "== Kubernetes $v" >&2; one_version "$v"; done
newest_full=$work/$NEWEST/full.json
[[ -s $newest_full ]] || newest_full=$data/v1_${NEWEST#1.}.json
# Any type table builds the tool; the delta step reads no k8s-openapi schema.
table=$(ls "$work"/*/k8s_types.rs | head -1)
for v in $VERSIONS; do
  out=$data/v1_${v#1.}.json
  if [[ $v == "$NEWEST" ]]; then
    cp "$work/$v/full.json" "$out"
  else
    tool "$(basename "$(dirname "$table")")" "$table" delta "$newest_full" "$work/$v/full.json" "$out"
  fi
done

# The golden of tests/k8s_embedded.rs: controller-gen on the fixture's Go original.
fixture=generator/tests/fixtures/k8s_embedded
mkdir -p "$work/embed/api/v1"
cp "$fixture/go/types.go" "$work/embed/api/v1/"
gomod "$work/embed" example.com/embed "${MODULES[$NEWEST]}"
(cd "$work/embed" && "$controller_gen" crd paths=./api/... output:crd:dir=out)
cp "$work/embed/out/embed.example.com_embeds.yaml" "$fixture/controller-gen.yaml"
echo "wrote $data/ (Kubernetes $VERSIONS) and $fixture/controller-gen.yaml" >&2
