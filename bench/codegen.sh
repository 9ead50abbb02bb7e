#!/usr/bin/env bash
# Part 1: generation speed, kube-codegen vs the Go pair (code-generator's kube_codegen.sh
# + controller-gen), on the same API, side by side.
#
#   bench/codegen.sh                 both workloads, BENCH_RUNS (default 5) runs each
#   BENCH_RUNS=1 bench/codegen.sh --smoke   tiny synthetic API (2x2), Go only if installed
#
# Workloads:
#   sample     the real sample-api crate (Foo + TestResource) / the same types in annotated Go
#   synthetic  bench/gen-synthetic.py: GROUPS x KINDS (default 20 x 5) in Rust and Go
# Modes:
#   crd   CRDs only, printed to stdout, against the fastest Go peer for that artifact:
#         `kube-codegen generate -o -` (the crd generator alone) vs `controller-gen crd
#         output:crd:stdout`; peak RSS of one run each in codegen-crd-rss.txt.
#   cold  output removed before every run (src/generated + crds; Go: generated/, crds/ and
#         every zz_generated.deepcopy.go). Go's module and build caches stay warm, as do
#         the OS page cache and our binary: "cold" means empty outputs, not a cold machine.
#   warm  regenerate with every output present and up to date.
# What each side generates:
#   ours  kube-codegen generate: CRDs, register, deep-copy, clientset + fake, listers, informers
#   Go    kube::codegen::gen_helpers (deepcopy) + kube::codegen::gen_client --with-watch
#         (clientset + fake, listers, informers) + controller-gen crd paths=./apis/...
#         kube_codegen.sh is used as documented (sourced from the module cache); it runs
#         `go install` of its generators and `go list` per package on every call, and that
#         is part of its cost. bench/results/codegen-go-breakdown.txt splits it.
# Output: bench/results/codegen.md (table) and codegen-<workload>-<mode>.json (hyperfine).
. "$(dirname "$0")/lib.sh"
SMOKE=0
[[ ${1:-} == --smoke ]] && SMOKE=1
GROUPS_N=${BENCH_GROUPS:-20} KINDS_N=${BENCH_KINDS:-5}
((SMOKE)) && GROUPS_N=2 KINDS_N=2
command -v hyperfine >/dev/null || { blog "hyperfine missing: apt-get install -y hyperfine"; exit 1; }
mkdir -p "$RESULTS"

blog "building kube-codegen ($BENCH_PROFILE)"
cargo build --profile "$BENCH_PROFILE" -q -p kube-codegen --manifest-path "$REPO_ROOT/Cargo.toml"
KCG=$CARGO_TARGET_DIR/$PROFILE_DIR/kube-codegen

W=$(mktemp -d /tmp/kcg-bench-codegen.XXXXXX)
trap 'rm -rf "$W"' EXIT

# ---- inputs -------------------------------------------------------------------------
mkdir -p "$W/sample/rust"
cp -r "$REPO_ROOT/sample-api/Cargo.toml" "$REPO_ROOT/sample-api/src" "$W/sample/rust/"
python3 "$BENCH_DIR/gen-synthetic.py" "$W/sample" --preset sample
python3 "$BENCH_DIR/gen-synthetic.py" "$W/synthetic" --groups "$GROUPS_N" --kinds "$KINDS_N"
# The generator wants Cargo.toml's [package.metadata]; workspace keys are fine unresolved.

GO_OK=0
if have_go && anchors_installed; then
  GO_OK=1
  CG_DIR=$(code_generator_dir)
  for wl in sample synthetic; do
    (cd "$W/$wl/go" && GOFLAGS=-mod=mod "$GO" mod tidy >/dev/null 2>&1)
    cat >"$W/$wl/gogen.sh" <<EOF
set -euo pipefail
cd "$W/$wl/go"
export GOBIN="$ANCHOR_BIN" PATH="$ANCHOR_BIN:\$PATH" GOFLAGS=-mod=mod GOTOOLCHAIN=local
source "$CG_DIR/kube_codegen.sh"
kube::codegen::gen_helpers --boilerplate hack/boilerplate.go.txt apis
kube::codegen::gen_client --with-watch --output-dir generated \\
  --output-pkg bench.example.com/synthetic/generated --boilerplate hack/boilerplate.go.txt apis
controller-gen crd paths=./apis/... output:crd:dir=crds
EOF
  done
else
  blog "Go anchors not installed (bench/install-anchors.sh): measuring kube-codegen only"
fi

clean_rust() { echo "rm -rf $W/$1/rust/src/generated $W/$1/rust/crds"; }
clean_go() { echo "bash -c 'rm -rf $W/$1/go/generated $W/$1/go/crds; find $W/$1/go/apis -name zz_generated.deepcopy.go -delete'"; }

run_hf() { # name prepare cmd
  local name=$1 prep=$2 cmd=$3 extra=()
  [[ -n $prep ]] && extra=(--prepare "$prep")
  hyperfine -N --style basic --runs "$RUNS" --warmup $((SMOKE ? 0 : 1)) "${extra[@]}" \
    --export-json "$RESULTS/codegen-$name.json" -n "$name" "$cmd" >"$RESULTS/codegen-$name.txt" 2>&1 ||
    { cat "$RESULTS/codegen-$name.txt" >&2; return 1; }
}

for wl in sample synthetic; do
  blog "workload $wl: kube-codegen"
  run_hf "$wl-ours-cold" "$(clean_rust "$wl")" "$KCG generate $W/$wl/rust"
  run_hf "$wl-ours-warm" "" "$KCG generate $W/$wl/rust"
  run_hf "$wl-ours-crd" "" "$KCG generate $W/$wl/rust -o -"
  if ((GO_OK)); then
    blog "workload $wl: controller-gen alone (CRDs to stdout)"
    printf 'cd %q && GOFLAGS=-mod=mod GOTOOLCHAIN=local exec %q crd paths=./apis/... output:crd:stdout\n' \
      "$W/$wl/go" "$ANCHOR_BIN/controller-gen" >"$W/$wl/crdgen.sh"
    run_hf "$wl-go-crd" "" "bash $W/$wl/crdgen.sh"
    blog "workload $wl: kube_codegen.sh + controller-gen"
    run_hf "$wl-go-cold" "$(clean_go "$wl")" "bash $W/$wl/gogen.sh"
    run_hf "$wl-go-warm" "" "bash $W/$wl/gogen.sh"
  fi
done

# Sizes of what each side produced (last run).
{
  for wl in sample synthetic; do
    f=$(cd "$W/$wl/rust" && find src/generated crds -type f)
    echo "$wl ours: $(echo "$f" | wc -l) files, $(cd "$W/$wl/rust" && cat $f | wc -l) lines"
    if ((GO_OK)); then
      f=$(cd "$W/$wl/go" && find generated crds -type f && find apis -name zz_generated.deepcopy.go)
      echo "$wl go:   $(echo "$f" | wc -l) files, $(cd "$W/$wl/go" && cat $f | wc -l) lines"
    fi
  done
} >"$RESULTS/codegen-sizes.txt"

# Peak RSS of one CRD-only run each (GNU time's maximum resident set size, KiB).
{
  for wl in sample synthetic; do
    kib=$( { /usr/bin/time -f %M "$KCG" generate "$W/$wl/rust" -o - >/dev/null; } 2>&1 | tail -1)
    echo "$wl ours crd: $kib KiB"
    if ((GO_OK)); then
      kib=$( { /usr/bin/time -f %M bash "$W/$wl/crdgen.sh" >/dev/null; } 2>&1 | tail -1)
      echo "$wl controller-gen crd: $kib KiB"
    fi
  done
} >"$RESULTS/codegen-crd-rss.txt"

# Where the Go pair's time goes (one warm run, each step timed on its own).
if ((GO_OK)) && ((!SMOKE)); then
  (
    cd "$W/synthetic/go"
    export GOBIN="$ANCHOR_BIN" PATH="$ANCHOR_BIN:$PATH" GOFLAGS=-mod=mod GOTOOLCHAIN=local
    t() { local s e; s=$(date +%s.%N); "$@" >/dev/null 2>&1; e=$(date +%s.%N); printf '%-70s %6.2f s\n' "$*" "$(echo "$e - $s" | bc)"; }
    t bash -c "cd $CG_DIR && go install k8s.io/code-generator/cmd/{conversion-gen,deepcopy-gen,defaulter-gen,validation-gen}"
    t bash -c "source $CG_DIR/kube_codegen.sh && kube::codegen::gen_helpers --boilerplate hack/boilerplate.go.txt apis"
    t bash -c "source $CG_DIR/kube_codegen.sh && kube::codegen::gen_client --with-watch --output-dir generated --output-pkg bench.example.com/synthetic/generated --boilerplate hack/boilerplate.go.txt apis"
    t controller-gen crd paths=./apis/... output:crd:dir=crds
  ) >"$RESULTS/codegen-go-breakdown.txt"
fi

python3 "$BENCH_DIR/summarize.py" codegen "$RESULTS" >"$RESULTS/codegen.md"
cat "$RESULTS/codegen.md"
