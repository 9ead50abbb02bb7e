#!/usr/bin/env python3
"""Turn bench/results/*.json into the Markdown tables BENCHMARKS.md quotes.

    bench/summarize.py codegen RESULTS_DIR
    bench/summarize.py compile RESULTS_DIR
    bench/summarize.py install RESULTS_DIR
    bench/summarize.py floor RESULTS_DIR
"""
import glob
import json
import os
import statistics
import sys


def hf(path):
    with open(path) as f:
        r = json.load(f)["results"][0]
    return {
        "median": statistics.median(r["times"]),
        "min": min(r["times"]),
        "max": max(r["times"]),
        "cpu": r["user"] + r["system"],  # hyperfine exports the mean user/system only
        "runs": len(r["times"]),
        "cmd": r["command"],
    }


def fmt(s):
    return f"{s * 1000:.1f} ms" if s < 1 else f"{s:.2f} s"


def codegen(d):
    # Mode `crd` compares `generate -o -` with controller-gen alone (the fastest Go peer for
    # CRDs); `cold` and `warm` every generator with kube_codegen.sh + controller-gen.
    print("| workload | mode | kube-codegen wall (median) | Go wall (median) | wall ratio Go/ours "
          "| kube-codegen CPU (mean user+sys) | Go CPU | CPU ratio | runs |")
    print("|---|---|---|---|---|---|---|---|---|")
    for wl in ("sample", "synthetic"):
        for mode in ("crd", "cold", "warm"):
            o = os.path.join(d, f"codegen-{wl}-ours-{mode}.json")
            g = os.path.join(d, f"codegen-{wl}-go-{mode}.json")
            if not os.path.exists(o):
                continue
            o = hf(o)
            if os.path.exists(g):
                g = hf(g)
                print(f"| {wl} | {mode} | {fmt(o['median'])} | {fmt(g['median'])} | "
                      f"**{g['median'] / o['median']:.0f}x** | {fmt(o['cpu'])} | {fmt(g['cpu'])} | "
                      f"{g['cpu'] / o['cpu']:.0f}x | {o['runs']}/{g['runs']} |")
            else:
                print(f"| {wl} | {mode} | {fmt(o['median'])} | (no Go anchors) | - | "
                      f"{fmt(o['cpu'])} | - | - | {o['runs']} |")


def compile_(d):
    rows = {}
    for p in sorted(glob.glob(os.path.join(d, "compile-*-*.txt"))):
        name = os.path.basename(p)[len("compile-"):-4]
        with open(p) as f:
            vals = [float(x) for x in f.read().split()]
        if vals:
            rows[name] = vals
    print("| crate | build | wall (median) | runs | all runs (s) |")
    print("|---|---|---|---|---|")
    for name, vals in rows.items():
        crate, _, kind = name.rpartition("-")
        print(f"| {crate} | {kind} | {fmt(statistics.median(vals))} | {len(vals)} | "
              f"{' '.join(f'{v:.2f}' for v in vals)} |")


def install(d):
    # install-<variant>.txt: one run a line, "wall_s cpu_s load1".
    names = {"go": "go install controller-gen (cold GOCACHE)",
             "path": "cargo install --path generator",
             "packaged": "cargo install of the packaged crate"}
    print("| install | wall (median) | CPU user+sys (median) | load avg before (median) | runs | wall of each run (s) |")
    print("|---|---|---|---|---|---|")
    for v in ("go", "path", "packaged"):
        p = os.path.join(d, f"install-{v}.txt")
        if not os.path.exists(p):
            continue
        with open(p) as f:
            runs = [[float(x) for x in line.split()] for line in f if line.strip()]
        if not runs:
            continue
        wall, cpu, load = (statistics.median(r[i] for r in runs) for i in range(3))
        print(f"| {names[v]} | {wall:.1f} s | {cpu:.1f} s | {load:.1f} | {len(runs)} | "
              f"{' '.join(f'{r[0]:.1f}' for r in runs)} |")


def floor(d):
    # floor-<kinds>.txt: one run a line, the probe's key=value fields plus hyperfine medians
    # of both tools (ours_ms, go_ms, ours_cpu_ms, go_cpu_ms).
    print("| kinds | input | floor (parse + YAML, 1 thread) | kube-codegen -o - wall | CPU "
          "| controller-gen wall | CPU | ours / floor (CPU) | controller-gen / ours (wall, CPU) |")
    print("|---|---|---|---|---|---|---|---|---|")
    rows = []
    for p in glob.glob(os.path.join(d, "floor-*.txt")):
        with open(p) as f:
            kv = dict(x.split("=", 1) for x in f.read().split())
        rows.append((int(kv["kinds"]), kv))
    for kinds, kv in sorted(rows):
        g = lambda k: float(kv[k]) if k in kv else None
        floor_ms, ours, ours_cpu = g("floor_ms"), g("ours_ms"), g("ours_cpu_ms")
        go, go_cpu = g("go_ms"), g("go_cpu_ms")
        go_cols = (f"{go:.1f} ms | {go_cpu:.1f} ms | {ours_cpu / floor_ms:.1f}x | "
                   f"**{go / ours:.1f}x**, **{go_cpu / ours_cpu:.1f}x**" if go is not None
                   else f"- | - | {ours_cpu / floor_ms:.1f}x | (no controller-gen)")
        print(f"| {kinds} | {kv['files']} files, {int(kv['bytes']) // 1024} KiB | "
              f"{floor_ms:.1f} ms (parse {g('parse_ms'):.1f} + YAML {g('yaml_ms'):.1f}) | "
              f"{ours:.1f} ms | {ours_cpu:.1f} ms | {go_cols} |")


if __name__ == "__main__":
    {"codegen": codegen, "compile": compile_, "install": install,
     "floor": floor}[sys.argv[1]](sys.argv[2])
