#!/usr/bin/env bash
# Part 4: compile cost of an API crate, kube-codegen's generated code vs kube-derive.
#
#   bench/compile.sh            BENCH_RUNS (default 5) runs of each build
#   bench/compile.sh --smoke    1 run each (BENCH_RUNS=1)
#
# Three crates are written into a temp dir by this script, each its own workspace:
#   ours        the sample-api crate as committed (src/apis + src/generated: register,
#               deep-copy, clientset + fake, listers, informers), path-depending on the
#               workspace's runtime crate
#   ourstypes   the same crate without the client code: src/apis + generated register and
#               deep-copy only (clientset, fake, listers, informers removed), to separate
#               the cost of the types from the cost of the generated client code
#   kubederive  the same Foo / TestResource types with #[derive(CustomResource, JsonSchema)]
#               (kube "derive" feature + schemars), nothing else: kube-derive writes no
#               clientset, listers or informers; Api<Foo> and kube::runtime are used instead
# All enable k8s-openapi/v1_37, dev profile (the workspace's debug settings), lib target.
#
# Builds measured (wall clock and user+sys CPU, one `cargo build` each):
#   clean        the API crate alone, dependencies already built: `cargo clean -p <crate>`
#                (only in the benchmark's own target dir) then `cargo build`
#   incremental  one type file modified (a field's doc comment changed) then `cargo build`
#   full         (BENCH_COMPILE_FULL=1 only) the whole dependency graph from an empty
#                target dir; minutes per run on 2 cores
# Target dir: $KUBE_CODEGEN_CACHE/bench-compile-target (never the shared workspace one).
. "$(dirname "$0")/lib.sh"
[[ ${1:-} == --smoke ]] && RUNS=1
TGT=$CACHE_ROOT/bench-compile-target
W=$(mktemp -d /tmp/kcg-bench-compile.XXXXXX)
trap 'rm -rf "$W"' EXIT
mkdir -p "$RESULTS"
rm -f "$RESULTS"/compile-*.txt "$RESULTS"/compile-*.cpu

# Pin the dependency versions the workspace resolved, so every crate builds the same ones.
LOCK=$REPO_ROOT/Cargo.lock

# ---- ours -----------------------------------------------------------------------------
mkdir -p "$W/ours"
cp -r "$REPO_ROOT/sample-api/src" "$W/ours/"
# The generated validation (runtime feature `validation`, the CEL evaluator) is not part of
# what kube-derive gives either, so the comparison leaves it out, as it did before it existed.
rm "$W/ours/src/generated/validation.rs"
perl -0pi -e 's{///[^\n]*\n#\[rustfmt::skip\]\npub mod validation;\n}{}' "$W/ours/src/generated/mod.rs"
grep -q 'mod validation' "$W/ours/src/generated/mod.rs" && { echo "compile: could not drop the validation module" >&2; exit 1; }
cat >"$W/ours/Cargo.toml" <<EOF
[package]
name = "bench-api-ours"
version = "0.1.0"
edition = "2024"
publish = false

[lib]
path = "src/lib.rs"

[dependencies]
serde = { version = "1", features = ["derive"] }
serde_json = "1"
k8s-openapi = { version = "0.29.0", default-features = false, features = ["std", "v1_37"] }
kube = { version = "5.0.0", default-features = false, features = ["client", "rustls-tls", "ring", "runtime", "jsonpatch"] }
kube-codegen-runtime = { path = "$REPO_ROOT/runtime" }

[profile.dev]
debug = "line-tables-only"
[profile.dev.package."*"]
debug = false

[workspace]
EOF
cp "$LOCK" "$W/ours/Cargo.lock"

# ---- ours, types only (register + deep-copy, no client code) -----------------------------
mkdir -p "$W/ourstypes"
cp -r "$REPO_ROOT/sample-api/src" "$W/ourstypes/"
rm "$W/ourstypes/src/generated/"{applyconfigurations,clientset,fake,informers,listers}.rs
cat >"$W/ourstypes/src/generated/mod.rs" <<'EOF'
//! register and deep-copy only (bench/compile.sh), and the conversions between Foo's
//! versions that the types' own hand-written conversion code implements.
#[rustfmt::skip]
pub mod conversion;
#[rustfmt::skip]
pub mod deepcopy;
#[rustfmt::skip]
pub mod register;
EOF
# The crate root's front door (its doc comment and the re-export) names client code.
sed -i '/^\/\/\/ The front door/,/^pub use generated::{Clientset, SharedInformerFactory};$/d' "$W/ourstypes/src/lib.rs"
# Fail here, not in rustc, when sample-api's root changes shape.
if grep -q 'Clientset\|SharedInformerFactory' "$W/ourstypes/src/lib.rs"; then
  echo "bench: compile.sh no longer strips the client re-exports from sample-api/src/lib.rs" >&2; exit 1
fi
sed 's/^name = "bench-api-ours"$/name = "bench-api-ourstypes"/' "$W/ours/Cargo.toml" >"$W/ourstypes/Cargo.toml"
cp "$LOCK" "$W/ourstypes/Cargo.lock"

# ---- kube-derive -------------------------------------------------------------------------
mkdir -p "$W/kubederive/src"
cat >"$W/kubederive/Cargo.toml" <<'EOF'
[package]
name = "bench-api-kubederive"
version = "0.1.0"
edition = "2024"
publish = false

[dependencies]
serde = { version = "1", features = ["derive"] }
serde_json = "1"
schemars = "1.2.3"
k8s-openapi = { version = "0.29.0", default-features = false, features = ["std", "v1_37"] }
kube = { version = "5.0.0", default-features = false, features = ["client", "rustls-tls", "ring", "runtime", "jsonpatch", "derive"] }

[profile.dev]
debug = "line-tables-only"
[profile.dev.package."*"]
debug = false

[workspace]
EOF
cp "$LOCK" "$W/kubederive/Cargo.lock"
cat >"$W/kubederive/src/lib.rs" <<'EOF'
//! The sample API (Foo, TestResource) with kube-derive.
pub mod foo;
pub mod testresource;
EOF
cat >"$W/kubederive/src/foo.rs" <<'EOF'
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// FooSpec is the spec for a Foo resource.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "samplecontroller.k8s.io",
    version = "v1alpha1",
    kind = "Foo",
    namespaced,
    status = "FooStatus",
    shortname = "fo",
    category = "samples",
    annotation("api-approved.kubernetes.io", "unapproved, experimental-only"),
    printcolumn = r#"{"name":"Deployment","type":"string","jsonPath":".spec.deploymentName"}"#,
    printcolumn = r#"{"name":"Replicas","type":"integer","jsonPath":".spec.replicas"}"#,
    printcolumn = r#"{"name":"Available","type":"integer","jsonPath":".status.availableReplicas"}"#,
    printcolumn = r#"{"name":"Age","type":"date","jsonPath":".metadata.creationTimestamp"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct FooSpec {
    /// The name of the Deployment the controller creates and owns for this Foo.
    pub deployment_name: String,
    /// How many replicas the Deployment runs.
    #[schemars(range(min = 1, max = 10))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
}

/// FooStatus is the status for a Foo resource.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FooStatus {
    /// Ready replicas of the owned Deployment.
    #[serde(default)]
    pub available_replicas: i32,
}
EOF
cat >"$W/kubederive/src/testresource.rs" <<'EOF'
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// TestResourceSpec specifies the 'spec' of TestResource CRD.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "insujang.github.io",
    version = "v1beta1",
    kind = "TestResource",
    namespaced,
    status = "String",
    shortname = "ts",
    printcolumn = r#"{"name":"command","type":"string","jsonPath":".spec.command"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct TestResourceSpec {
    /// The command to run; only `echo` commands are accepted.
    #[schemars(regex(pattern = r"^(echo).*"))]
    pub command: String,
    pub custom_property: String,
}
EOF

# ---- measure ----------------------------------------------------------------------------
build() { # dir [crate kind]: with crate and kind, appends wall and CPU seconds to results
  local s e
  s=$(date +%s.%N)
  /usr/bin/time -o "$W/time" -f '%U %S' \
    cargo build -q --lib --manifest-path "$1/Cargo.toml" --target-dir "$TGT" >"$W/build.log" 2>&1 ||
    { cat "$W/build.log" >&2; return 1; }
  e=$(date +%s.%N)
  if [[ -n ${2:-} ]]; then
    echo "$e - $s" | bc >>"$RESULTS/compile-$2-$3.txt"
    awk '{print $1 + $2}' "$W/time" >>"$RESULTS/compile-$2-$3.cpu"
  fi
}

CRATES=(ours ourstypes kubederive)
declare -A FILE=([ours]=src/apis/samplecontroller/v1alpha1.rs
  [ourstypes]=src/apis/samplecontroller/v1alpha1.rs [kubederive]=src/foo.rs)
declare -A PKG=([ours]=bench-api-ours [ourstypes]=bench-api-ourstypes
  [kubederive]=bench-api-kubederive)
for c in "${CRATES[@]}"; do
  blog "compile: $c (deps first, not timed)"
  build "$W/$c"
  for i in $(seq "$RUNS"); do
    cargo clean -q -p "${PKG[$c]}" --manifest-path "$W/$c/Cargo.toml" --target-dir "$TGT"
    build "$W/$c" "$c" clean
  done
  for i in $(seq "$RUNS"); do
    # Modify the doc comment of one field in the Foo type file (changes the item, not just mtime).
    sed -i "s|/// How many replicas the Deployment runs\..*|/// How many replicas the Deployment runs. (edit $i)|" "$W/$c/${FILE[$c]}"
    build "$W/$c" "$c" incremental
  done
done

if [[ ${BENCH_COMPILE_FULL:-0} == 1 ]]; then
  for c in "${CRATES[@]}"; do
    for i in $(seq "$RUNS"); do
      rm -rf "$W/full-target"
      s=$(date +%s.%N)
      /usr/bin/time -o "$W/time" -f '%U %S' \
        cargo build -q --lib --manifest-path "$W/$c/Cargo.toml" --target-dir "$W/full-target"
      e=$(date +%s.%N)
      echo "$e - $s" | bc >>"$RESULTS/compile-$c-full.txt"
      awk '{print $1 + $2}' "$W/time" >>"$RESULTS/compile-$c-full.cpu"
    done
  done
  rm -rf "$W/full-target"
fi

# Lines each crate hands the compiler.
{
  echo "ours: $(cat $(find "$W/ours/src" -name '*.rs') | wc -l) lines of Rust (types + generated)"
  echo "ourstypes: $(cat $(find "$W/ourstypes/src" -name '*.rs') | wc -l) lines of Rust (types + generated register, deep-copy)"
  echo "kubederive: $(cat $(find "$W/kubederive/src" -name '*.rs') | wc -l) lines of Rust (types; derive expands at compile time)"
} >"$RESULTS/compile-sizes.txt"
{
  python3 "$BENCH_DIR/summarize.py" compile "$RESULTS"
  # CPU time (user+sys of cargo and rustc): steadier than wall clock on a shared machine.
  echo
  echo "| crate | build | CPU user+sys (median) | runs | all runs (s) |"
  echo "|---|---|---|---|---|"
  for c in "${CRATES[@]}"; do
    for k in clean incremental full; do
      f=$RESULTS/compile-$c-$k.cpu
      [[ -s $f ]] || continue
      echo "| $c | $k | $(median <"$f") s | $(wc -l <"$f") | $(tr '\n' ' ' <"$f" | sed 's/ $//') |"
    done
  done
} >"$RESULTS/compile.md"
cat "$RESULTS/compile.md" "$RESULTS/compile-sizes.txt"
