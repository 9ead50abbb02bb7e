#!/usr/bin/env python3
"""Turn bench/results/*.json into the Markdown tables BENCHMARKS.md quotes.

    bench/summarize.py codegen RESULTS_DIR
    bench/summarize.py compile RESULTS_DIR
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


if __name__ == "__main__":
    {"codegen": codegen, "compile": compile_}[sys.argv[1]](sys.argv[2])
