#!/usr/bin/env bash
# Full generation against the Go generators run directly as binaries, not through
# kube_codegen.sh (issue 35): deepcopy-gen, applyconfiguration-gen, client-gen, lister-gen,
# informer-gen and controller-gen, each timed alone on the synthetic API, beside
# `kube-codegen generate` (every generator: CRDs, deep-copy, apply configurations,
# clientset + fake, listers, informers and the rest).
#
#   bench/gogen.sh             the 100-kind synthetic API (20 x 5), BENCH_RUNS (default 5) runs each
#   bench/gogen.sh --smoke     2 x 2 kinds, 1 run; skipped (with a line) without the Go anchors
#
# The Go commands are not written here by hand: kube_codegen.sh (gen_helpers, and gen_client
# --with-watch --with-applyconfig) runs once under `bash -x`, and each generator's
# invocation is taken from its trace, with the arguments kube_codegen.sh gives it. Then each
# runs alone under hyperfine (warm: outputs present, as a regeneration; Go's build cache
# and the page cache warm), in kube_codegen.sh's working directory. kube_codegen.sh's own
# work around them (`go install` of the generators, `go list` per package, grep for
# markers, deleting old outputs) is not counted: that is bench/codegen.sh's row.
# Output: bench/results/gogen.md and gogen-<tool>.json (hyperfine).
. "$(dirname "$0")/lib.sh"
SMOKE=0
[[ ${1:-} == --smoke ]] && SMOKE=1 RUNS=1
GROUPS_N=${BENCH_GROUPS:-20} KINDS_N=${BENCH_KINDS:-5}
((SMOKE)) && GROUPS_N=2 KINDS_N=2
command -v hyperfine >/dev/null || { blog "hyperfine missing: apt-get install -y hyperfine"; exit 1; }
mkdir -p "$RESULTS"
if ! { have_go && anchors_installed; }; then
  ((SMOKE)) || { blog "Go anchors not installed: run bench/install-anchors.sh"; exit 1; }
  blog "Go anchors not installed (smoke): nothing to compare"
  printf '| tool | skipped: no Go anchors |\n|---|---|\n' >"$RESULTS/gogen.md"
  exit 0
fi

blog "building kube-codegen ($BENCH_PROFILE)"
cargo build --profile "$BENCH_PROFILE" -q -p kube-codegen --manifest-path "$REPO_ROOT/Cargo.toml"
KCG=$CARGO_TARGET_DIR/$PROFILE_DIR/kube-codegen

W=$(mktemp -d /tmp/kcg-bench-gogen.XXXXXX)
trap 'rm -rf "$W"' EXIT
python3 "$BENCH_DIR/gen-synthetic.py" "$W/synthetic" --groups "$GROUPS_N" --kinds "$KINDS_N"
GODIR=$W/synthetic/go
(cd "$GODIR" && GOFLAGS=-mod=mod "$GO" mod tidy >/dev/null 2>&1)
CG_DIR=$(code_generator_dir)
export GOBIN=$ANCHOR_BIN PATH="$ANCHOR_BIN:$PATH" GOFLAGS=-mod=mod GOTOOLCHAIN=local

blog "tracing kube_codegen.sh for the generators' invocations"
(
  cd "$GODIR"
  # shellcheck disable=SC1091
  source "$CG_DIR/kube_codegen.sh"
  set -x
  kube::codegen::gen_helpers --boilerplate hack/boilerplate.go.txt apis
  kube::codegen::gen_client --with-watch --with-applyconfig --output-dir generated \
    --output-pkg bench.example.com/synthetic/generated --boilerplate hack/boilerplate.go.txt apis
) 2>"$W/trace" >/dev/null
python3 - "$W/trace" "$W/cmds" <<'PY'
import re, shlex, sys
trace, out = sys.argv[1:]
tools = ["deepcopy-gen", "applyconfiguration-gen", "client-gen", "lister-gen", "informer-gen"]
found = {}
for line in open(trace, errors="replace"):
    m = re.match(r"^\++ (\S*/(" + "|".join(tools) + r")) (.*)$", line.rstrip("\n"))
    if m and m.group(2) not in found:
        found[m.group(2)] = [m.group(1)] + shlex.split(m.group(3))
missing = [t for t in tools if t not in found]
if missing:
    sys.exit(f"gogen: no invocation of {missing} in kube_codegen.sh's trace")
with open(out, "w") as f:
    for t in tools:
        f.write(t + "\t" + shlex.join(found[t]) + "\n")
PY
printf 'controller-gen\t%s\n' "$ANCHOR_BIN/controller-gen crd paths=./apis/... output:crd:dir=crds" >>"$W/cmds"

run_hf() { # name dir cmd
  (cd "$2" && hyperfine -N --style basic --runs "$RUNS" --warmup $((SMOKE ? 0 : 1)) \
    --export-json "$RESULTS/gogen-$1.json" -n "$1" "$3" >"$W/hf-$1.txt" 2>&1) ||
    { cat "$W/hf-$1.txt" >&2; exit 1; }
}
while IFS=$'\t' read -r tool cmd; do
  blog "$tool"
  run_hf "$tool" "$GODIR" "$cmd"
done <"$W/cmds"
blog "kube-codegen generate"
run_hf kube-codegen "$W/synthetic/rust" "$KCG generate $W/synthetic/rust"

python3 - "$RESULTS" "$W/cmds" "$GROUPS_N" "$KINDS_N" "$RUNS" "$(cut -d' ' -f1-3 /proc/loadavg)" "$BENCH_PROFILE" >"$RESULTS/gogen.md" <<'PY'
import json, statistics, sys
res, cmds, g, k, runs, load, profile = sys.argv[1:]
tools = [l.split("\t")[0] for l in open(cmds)]
def hf(name):
    r = json.load(open(f"{res}/gogen-{name}.json"))["results"][0]
    return statistics.median(r["times"]), r["user"] + r["system"]
print(f"`bench/gogen.sh`: the {int(g) * int(k)}-kind synthetic API ({g} groups x {k} kinds), {profile} build, medians of {runs} runs (CPU: hyperfine's mean user+sys), load average {load} at the end\n")
print("| generator | wall | CPU |")
print("|---|---|---|")
wall = cpu = 0.0
for t in tools:
    w, c = hf(t)
    wall, cpu = wall + w, cpu + c
    print(f"| {t} | {w * 1e3:.0f} ms | {c * 1e3:.0f} ms |")
print(f"| **the Go generators, sum** | **{wall * 1e3:.0f} ms** | **{cpu * 1e3:.0f} ms** |")
w, c = hf("kube-codegen")
print(f"| kube-codegen generate (every generator) | {w * 1e3:.0f} ms | {c * 1e3:.0f} ms |")
print(f"| **ratio, Go sum / ours** | **{wall / w:.1f}x** | **{cpu / c:.1f}x** |")
PY
cat "$RESULTS/gogen.md"
