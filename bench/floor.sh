#!/usr/bin/env bash
# CRDs only, against the floor and controller-gen, as the API grows (issue 35):
#
#   bench/floor.sh             10, 100 and 1000 kinds, BENCH_RUNS (default 5) runs each
#   bench/floor.sh --smoke     10 kinds, 1 run (CI: the code path, not the figures)
#   BENCH_FLOOR_KINDS="100" bench/floor.sh
#
# Per size, the synthetic API of bench/gen-synthetic.py (10 kinds: 2 groups x 5; 100: 20 x 5;
# 1000: 100 x 10), in Rust and in Go, and three measurements in one run:
#   floor           bench/floor (crd-floor): syn::parse_file of every input file plus the
#                   crd generator's YAML writer on the same CRDs already built, one thread,
#                   median thread CPU time of BENCH_RUNS in-process repetitions
#   ours            kube-codegen generate CRATE -o - (the crd generator alone)
#   controller-gen  controller-gen crd paths=./apis/... output:crd:stdout
# ours and controller-gen run alternately (ours, go, ours, go, ...) after one warm-up each,
# so load from other work hits both alike; wall is the median, CPU the median of the run's
# user+sys (children's rusage, getrusage). The 1-minute load average before the size is recorded.
# Output: bench/results/floor.md and floor-<kinds>.txt.
. "$(dirname "$0")/lib.sh"
SMOKE=0
[[ ${1:-} == --smoke ]] && SMOKE=1 RUNS=1
SIZES=${BENCH_FLOOR_KINDS:-10 100 1000}
((SMOKE)) && SIZES=10
mkdir -p "$RESULTS"
rm -f "$RESULTS"/floor-*.txt

blog "building kube-codegen and crd-floor ($BENCH_PROFILE)"
cargo build --profile "$BENCH_PROFILE" -q -p kube-codegen -p kube-codegen-bench-floor \
  --manifest-path "$REPO_ROOT/Cargo.toml"
KCG=$CARGO_TARGET_DIR/$PROFILE_DIR/kube-codegen
FLOOR=$CARGO_TARGET_DIR/$PROFILE_DIR/crd-floor

W=$(mktemp -d /tmp/kcg-bench-floor.XXXXXX)
trap 'rm -rf "$W"' EXIT
GO_OK=0
have_go && [[ -x $ANCHOR_BIN/controller-gen ]] && GO_OK=1
((GO_OK)) || blog "controller-gen not installed (bench/install-anchors.sh): measuring kube-codegen only"

for kinds in $SIZES; do
  case $kinds in
    10) g=2 k=5 ;; 100) g=20 k=5 ;; 1000) g=100 k=10 ;;
    *) blog "BENCH_FLOOR_KINDS: 10, 100 or 1000, not $kinds"; exit 1 ;;
  esac
  d=$W/k$kinds
  python3 "$BENCH_DIR/gen-synthetic.py" "$d" --groups "$g" --kinds "$k"
  "$KCG" generate "$d/rust" -o - >"$d/crds.yaml"
  probe=$("$FLOOR" "$d/rust" "$d/crds.yaml" "$RUNS")
  gocmd=()
  if ((GO_OK)); then
    (cd "$d/go" && GOFLAGS=-mod=mod "$GO" mod tidy >/dev/null 2>&1)
    gocmd=(env -C "$d/go" GOFLAGS=-mod=mod GOTOOLCHAIN=local "$ANCHOR_BIN/controller-gen" crd paths=./apis/... output:crd:stdout)
    # Both must print the same number of CRDs, or they are not doing the same job.
    n_go=$("${gocmd[@]}" | grep -c '^kind: CustomResourceDefinition$')
    n_ours=$(grep -c '^kind: CustomResourceDefinition$' "$d/crds.yaml")
    [[ $n_go == "$n_ours" ]] || { blog "$kinds kinds: controller-gen printed $n_go CRDs, we $n_ours"; exit 1; }
  fi
  blog "$kinds kinds: $probe; timing (load $(cut -d' ' -f1 /proc/loadavg))"
  load=$(cut -d' ' -f1 /proc/loadavg)
  times=$(python3 - "$RUNS" "$((SMOKE ? 0 : 1))" "$KCG" "$d/rust" -- "${gocmd[@]}" <<'PY'
import resource, statistics, subprocess, sys, time
runs, warm, kcg, crate = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
go = sys.argv[sys.argv.index("--") + 1:]
cmds = {"ours": [kcg, "generate", crate, "-o", "-"]}
if go:
    cmds["go"] = go
res = {n: ([], []) for n in cmds}
def once(cmd):
    # getrusage, not os.times: microseconds rather than 10 ms ticks (a 10-kind run is ~10 ms).
    r0, t0 = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, check=True)
    t1, r1 = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
    return t1 - t0, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
for _ in range(warm):
    for c in cmds.values():
        once(c)
for _ in range(runs):
    for n, c in cmds.items():  # alternately
        w, cpu = once(c)
        res[n][0].append(w); res[n][1].append(cpu)
out = []
for n, (w, c) in res.items():
    out.append(f"{n}_ms={statistics.median(w) * 1e3:.1f} {n}_cpu_ms={statistics.median(c) * 1e3:.1f}")
    out.append(f"{n}_runs_ms={','.join(f'{x * 1e3:.0f}' for x in w)}")
print(" ".join(out))
PY
)
  echo "kinds=$kinds load=$load runs=$RUNS $probe $times" >"$RESULTS/floor-$kinds.txt"
  cat "$RESULTS/floor-$kinds.txt" >&2
done

python3 "$BENCH_DIR/summarize.py" floor "$RESULTS" >"$RESULTS/floor.md"
cat "$RESULTS/floor.md"
