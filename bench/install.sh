#!/usr/bin/env bash
# Install cost from cold (issue 35): what a user waits for before the first `kube-codegen`,
# beside `go install` of controller-gen from a cold Go build cache, side by side.
#
#   bench/install.sh            BENCH_RUNS (default 5) rounds, each: go, path, packaged
#   bench/install.sh --smoke    1 round, debug builds, warm target dir, no Go build (CI)
#
# Variants (one command each, run in turn in every round so machine load hits all alike):
#   path      cargo install --path generator: the workspace's [profile.release]
#   packaged  the install a registry user gets: `cargo package` of kube-codegen and its
#             unpublished siblings (templates, validation), then `cargo install --path` of
#             the unpacked kube-codegen crate with its own packaged manifest (no workspace,
#             so no workspace profile), the siblings supplied through
#             `--config patch.crates-io.<name>.path=...`, as `.ci/run`'s dry run supplies them
#   go        GOCACHE=<empty> go install sigs.k8s.io/controller-tools/cmd/controller-gen@v
# "Cold" means an empty target dir (cargo) or build cache (Go); the downloaded sources
# (cargo's registry, Go's module cache) stay, as they do on a CI cache or a second project.
# Each run: wall seconds and user+sys CPU seconds (GNU time), and the 1-minute load
# average before it (other work on the machine inflates wall time, not CPU).
# Output: bench/results/install.md (medians) and install-<variant>.txt (one run a line).
. "$(dirname "$0")/lib.sh"
SMOKE=0
[[ ${1:-} == --smoke ]] && SMOKE=1 RUNS=1
[[ -x /usr/bin/time ]] || { blog "GNU time missing: apt-get install -y time"; exit 1; }
mkdir -p "$RESULTS"
rm -f "$RESULTS"/install-*.txt

W=$(mktemp -d /tmp/kcg-bench-install.XXXXXX)
# Cold target dirs live next to the configured one (same disk), one at a time.
COLD=${BENCH_INSTALL_TARGET:-$CARGO_TARGET_DIR-install-cold}
trap 'rm -rf "$W" "$COLD"' EXIT
# Smoke: the code path only, in the workspace's own (warm, debug) target dir.
TGT=$COLD
((SMOKE)) && TGT=$CARGO_TARGET_DIR

# ---- the packaged crates ------------------------------------------------------------------
# The same set as .ci/run's dry run: packaging resolves each crate's dev-dependencies too
# (templates' tests use the runtime), so the unpublished ones must be in it.
blog "packaging the workspace's published crates"
(cd "$REPO_ROOT" && cargo package -q --no-verify --allow-dirty -p kube-codegen-templates \
  -p kube-codegen-validation -p kube-codegen-runtime -p kube-codegen -p kube-codegen-envtest)
mkdir -p "$W/pkg"
for c in kube-codegen-templates kube-codegen-validation kube-codegen; do
  tar -xzf "$CARGO_TARGET_DIR/package/$c-0.1.0.crate" -C "$W/pkg"
done
PATCH=()
for c in kube-codegen-templates kube-codegen-validation; do
  PATCH+=(--config "patch.crates-io.$c.path=\"$W/pkg/$c-0.1.0\"")
done

CARGO_FLAGS=()
((SMOKE)) && CARGO_FLAGS=(--debug)
measure() { # variant cmd...: one run, appends "wall cpu load" to install-<variant>.txt
  local v=$1; shift
  local load; load=$(cut -d' ' -f1 /proc/loadavg)
  /usr/bin/time -o "$W/time" -f '%e %U %S' "$@" >"$W/$v.log" 2>&1 ||
    { cat "$W/$v.log" >&2; return 1; }
  awk -v l="$load" '{printf "%.1f %.1f %s\n", $1, $2 + $3, l}' "$W/time" >>"$RESULTS/install-$v.txt"
}
cold() { ((SMOKE)) && return; rm -rf "$COLD"; }

for ((i = 1; i <= RUNS; i++)); do
  if ((!SMOKE)) && have_go; then
    blog "round $i: go install controller-gen@$CONTROLLER_TOOLS_VERSION (cold GOCACHE)"
    rm -rf "$W/gocache" "$W/gobin"
    measure go env GOCACHE="$W/gocache" GOBIN="$W/gobin" GOFLAGS=-mod=mod GOTOOLCHAIN=local \
      "$GO" install "sigs.k8s.io/controller-tools/cmd/controller-gen@$CONTROLLER_TOOLS_VERSION"
  fi
  blog "round $i: cargo install --path generator"
  cold
  measure path env CARGO_TARGET_DIR="$TGT" cargo install -q "${CARGO_FLAGS[@]}" \
    --path "$REPO_ROOT/generator" --root "$W/root-path" --force
  "$W/root-path/bin/kube-codegen" --version >/dev/null
  blog "round $i: cargo install of the packaged crate"
  cold
  measure packaged env CARGO_TARGET_DIR="$TGT" cargo install -q "${CARGO_FLAGS[@]}" "${PATCH[@]}" \
    --path "$W/pkg/kube-codegen-0.1.0" --root "$W/root-pkg" --force
  "$W/root-pkg/bin/kube-codegen" --version >/dev/null
done

python3 "$BENCH_DIR/summarize.py" install "$RESULTS" >"$RESULTS/install.md"
cat "$RESULTS/install.md"
