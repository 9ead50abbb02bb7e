#!/usr/bin/env bash
# The kopium side by side of FIDELITY.md ("Imported CRDs"): kopium's types for each of the
# 73 corpus CRDs (`kopium -f FILE -A`: --schema=derived, JsonSchema, docs), regenerated with
# kube-derive's `crd()` (kube 5, k8s-openapi v1_37), compared keyword by keyword with the
# originals by generator/tests/import_crd.rs (kopium_side_by_side), beside our round trip.
# Needs network once (cargo install kopium; crates for the scratch crate), then cached.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
corpus=$here/tests/fixtures/crd-corpus
work=${KOPIUM_WORK:-$HOME/.cache/kube-codegen/kopium-compare}
"$here/bench/install-kopium.sh" >&2
kopium=$HOME/.cache/kube-codegen/kopium/bin/kopium

rm -rf "$work/src"
mkdir -p "$work/src"
mods=()
kinds=()
start=$(date +%s.%N)
i=0
for f in $(find "$corpus" -name '*.yaml' | sort); do
    i=$((i + 1))
    out=$work/src/m$i.rs
    if ! "$kopium" -f "$f" -A > "$out" 2> "$work/src/m$i.err"; then
        echo "kopium failed on $f: $(head -1 "$work/src/m$i.err")" >&2
        rm -f "$out"
        continue
    fi
    # The Rust type kube-derive generates: `root = "HttpRoute"` when kopium renamed it.
    kind=$(grep -oP 'root = "\K[^"]+' "$out" | head -1 || true)
    [[ -n $kind ]] || kind=$(grep -oP 'kind = "\K[^"]+' "$out" | head -1 || true)
    if [[ -z $kind ]]; then
        echo "no kind in kopium's output for $f (no spec?)" >&2
        rm -f "$out"
        continue
    fi
    mods+=("m$i")
    kinds+=("$kind")
done
end=$(date +%s.%N)
echo "kopium: ${#mods[@]} of $i CRDs in $(echo "$end - $start" | bc) s" >&2

cat > "$work/Cargo.toml" <<TOML
[package]
name = "kopium-compare"
version = "0.0.0"
edition = "2021"
publish = false

[dependencies]
kube = { version = "5", default-features = false, features = ["derive"] }
k8s-openapi = { version = "0.29", default-features = false, features = ["std", "schemars", "v1_37"] }
schemars = "1"
serde = { version = "1", features = ["derive"] }
serde_json = "1"

[workspace]
TOML
{
    for m in "${mods[@]}"; do echo "#[allow(warnings)] mod $m;"; done
    echo 'fn main() {'
    echo '    use kube::CustomResourceExt;'
    for n in "${!mods[@]}"; do
        echo "    println!(\"{}\", serde_json::to_string(&${mods[$n]}::${kinds[$n]}::crd()).unwrap());"
    done
    echo '}'
} > "$work/src/main.rs"
(cd "$work" && cargo run --release --quiet > "$work/kopium-crds.jsonl")
echo "wrote $work/kopium-crds.jsonl ($(wc -l < "$work/kopium-crds.jsonl") CRDs)" >&2
cd "$here" && KOPIUM_CRDS=$work/kopium-crds.jsonl cargo test -p kube-codegen --test import_crd kopium_side_by_side -- --nocapture 2>&1 | grep -E '^kopium|^  '
