#!/usr/bin/env bash
# Cold build of a build.rs user: a crate whose only dependency is kube-codegen in
# [build-dependencies], generating one kind into OUT_DIR (its lib is empty, so the figure
# is the build script's cost alone). Two variants, each from an empty target dir:
#   lean     kube-codegen = { path = ..., default-features = false }   (no `cli`: no clap)
#   default  kube-codegen = { path = ... }                             (`cli` on, as before
#            the feature existed: the library then always compiled clap)
#
#   bench/buildrs.sh     BENCH_RUNS (default 5) runs of each, alternating, `cargo build -j2`
# Prints wall and user+sys CPU per run. Lockfile: the workspace's, so versions match.
. "$(dirname "$0")/lib.sh"
W=$(mktemp -d /tmp/kcg-bench-buildrs.XXXXXX)
trap 'rm -rf "$W"' EXIT
for v in lean default; do
  mkdir -p "$W/$v/src/api"
  extra=$([[ $v == lean ]] && echo ', default-features = false' || true)
  cat >"$W/$v/Cargo.toml" <<EOF
[package]
name = "buildrs-$v"
version = "0.1.0"
edition = "2024"
publish = false

[build-dependencies]
kube-codegen = { path = "$REPO_ROOT/generator"$extra }

[workspace]
EOF
  cat >"$W/$v/build.rs" <<'EOF'
fn main() -> Result<(), Box<dyn std::error::Error>> {
    kube_codegen::Config::new()
        .input("src/api")
        .out_dir(std::env::var("OUT_DIR")?)
        .single_file("kube_codegen.rs")
        .emit_rerun_if_changed(true)
        .write()?;
    Ok(())
}
EOF
  : >"$W/$v/src/lib.rs"
  cat >"$W/$v/src/api/mod.rs" <<'EOF'
//! +groupName=buildrs.example.com

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::core::TypeMeta;
use serde::{Deserialize, Serialize};

/// +genclient
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Widget {
    #[serde(flatten)]
    pub types: TypeMeta,
    pub metadata: ObjectMeta,
    pub spec: WidgetSpec,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct WidgetSpec {
    pub size: i32,
}
EOF
  cp "$REPO_ROOT/Cargo.lock" "$W/$v/"
done
for ((i = 1; i <= RUNS; i++)); do
  for v in lean default; do
    rm -rf "$W/target-$v"
    /usr/bin/time -f "$v run $i: wall %e s, user %U s, sys %S s" \
      env CARGO_TARGET_DIR="$W/target-$v" cargo build -q -j2 --manifest-path "$W/$v/Cargo.toml"
    echo "$v run $i: $(find "$W/target-$v/debug/deps" -name '*.rlib' | wc -l) rlibs"
  done
done
