#!/usr/bin/env bash
# A real Kubernetes control plane (etcd + kube-apiserver + kube-controller-manager) on
# 127.0.0.1, for developers and the benchmarks (bench/), detached: it runs until `down`.
# All of it is the kube-codegen-envtest command (envtest/src/main.rs; the version pins and
# the build live in envtest/src/binaries.rs); this script builds that command from the
# workspace and runs it. The e2e tests start their own control planes with the same
# crate, from the binaries `build` caches.
#
#   hack/testenv.sh build              build (or find cached) the pinned binaries
#   hack/testenv.sh up [flags]         build if needed, start detached; last stdout line = kubeconfig path
#   hack/testenv.sh down               stop everything, remove the runtime dir's files
#   hack/testenv.sh env                eval "$(hack/testenv.sh env)" -> KUBECONFIG, PATH (kubectl)
#   hack/testenv.sh status             which processes run (exit 0 only if all run and it is ready)
#   hack/testenv.sh kill-apiserver     SIGKILL kube-apiserver (fault drills)
#   hack/testenv.sh start-apiserver    start it again with the same flags, wait for /readyz
#   hack/testenv.sh apiserver-restart  kill-apiserver + start-apiserver
#   hack/testenv.sh versions           the pinned Kubernetes and etcd versions
#   hack/testenv.sh help               every subcommand and flag
#
# `up` here is `kube-codegen-envtest up --detach --build --controller-manager`; every other
# subcommand is passed through as is. Feature gates of kube-apiserver are flags of `up`:
#   hack/testenv.sh up --feature-gate ShardedListAndWatch=true   (sharded list and watch) Environment (flags win; `help up` lists them):
#   KUBE_CODEGEN_CACHE        binary cache root      (default ~/.cache/kube-codegen)
#   KUBE_CODEGEN_TESTENV_DIR  runtime dir (certs, logs, pids, etcd data) (default /tmp/kube-codegen-testenv)
#   KUBE_CODEGEN_TESTENV_TIMEOUT seconds `up` waits for readiness (default 90)
#   KUBE_CODEGEN_APISERVER_EXTRA_ARGS / KUBE_CODEGEN_KCM_EXTRA_ARGS  extra flags (split at whitespace)
#   KUBE_CODEGEN_{ETCD,ETCD_PEER,APISERVER,KCM}_PORT  loopback ports (23790 23800 16443 16257)
#   KUBE_CODEGEN_TESTENV_PORT_OFFSET  add this to every default port (a second instance;
#                                     give it its own KUBE_CODEGEN_TESTENV_DIR too)
#   CARGO_TARGET_DIR          where the command is built (default ~/.cache/kube-codegen/target,
#                             as hack/test.sh)
set -euo pipefail
REPO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/kube-codegen/target}

# --manifest-path rather than cd: paths in the arguments (--crd-dir) stay relative to the
# caller's directory. `cargo run` replaces itself with the command, so its exit status is
# ours; -q keeps cargo's own output off stdout (and quiet on stderr unless it fails).
envtest=(cargo run -q --manifest-path "$REPO_ROOT/Cargo.toml" -p kube-codegen-envtest --features cli --)
case ${1:-} in
  up) shift; exec "${envtest[@]}" up --detach --build --controller-manager "$@" ;;
  *) exec "${envtest[@]}" "$@" ;;
esac
