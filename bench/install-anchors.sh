#!/usr/bin/env bash
# Install the Go reference tools side by side, by module path, into
# $KUBE_CODEGEN_GO_ANCHORS (default ~/.cache/kube-codegen/go-anchors/bin). Idempotent.
#   bench/install-anchors.sh            code-generator + controller-gen
#   bench/install-anchors.sh controller also k8s.io/sample-controller
. "$(dirname "$0")/lib.sh"
have_go || { blog "go not found"; exit 1; }
mkdir -p "$ANCHOR_BIN"
export GOBIN=$ANCHOR_BIN GOFLAGS=-mod=mod GOTOOLCHAIN=local
if ! anchors_installed; then
  blog "installing k8s.io/code-generator@$CODE_GENERATOR_VERSION and controller-tools@$CONTROLLER_TOOLS_VERSION"
  "$GO" install "k8s.io/code-generator/cmd/...@$CODE_GENERATOR_VERSION"
  "$GO" install "sigs.k8s.io/controller-tools/cmd/controller-gen@$CONTROLLER_TOOLS_VERSION"
fi
if [[ ${1:-} == controller && ! -x $ANCHOR_BIN/sample-controller ]]; then
  blog "installing k8s.io/sample-controller@$SAMPLE_CONTROLLER_VERSION"
  # `go install k8s.io/sample-controller@v...` fails here: the proxy answers 403 for the
  # module's version list (needed for the deprecation check), though the version itself is
  # served. So download that version and build it in place (module cache, read-only).
  dir=$("$GO" mod download -json "k8s.io/sample-controller@$SAMPLE_CONTROLLER_VERSION" |
    sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
  [[ -n $dir ]] || { blog "k8s.io/sample-controller@$SAMPLE_CONTROLLER_VERSION not downloadable"; exit 1; }
  (cd "$dir" && "$GO" build -o "$ANCHOR_BIN/sample-controller" .)
fi
code_generator_dir >/dev/null
blog "anchors in $ANCHOR_BIN: $(ls "$ANCHOR_BIN" | tr '\n' ' ')"
