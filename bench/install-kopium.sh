#!/usr/bin/env bash
# Installs kopium (kube-rs/kopium, the CRD -> Rust tool the import comparison in FIDELITY.md
# measures) from crates.io into ~/.cache/kube-codegen/kopium/bin; idempotent.
set -euo pipefail
version=${KOPIUM_VERSION:-0.24}
root=$HOME/.cache/kube-codegen/kopium
if [[ -x $root/bin/kopium ]]; then
    echo "$root/bin/kopium: $("$root/bin/kopium" --version)"
    exit 0
fi
cargo install --locked --root "$root" kopium --version "~$version"
echo "$root/bin/kopium: $("$root/bin/kopium" --version)"
