#!/usr/bin/env bash
# A real Kubernetes control plane (etcd + kube-apiserver + kube-controller-manager)
# on 127.0.0.1, for developers and the benchmarks (bench/). The e2e tests start their
# own through the envtest crate (kube-codegen-envtest), from the binaries that
# `build` caches here. No containers, no kubelet: pods stay Pending,
# but everything the API server and the controllers do (validation, RBAC,
# ServiceAccounts and tokens, Deployment -> ReplicaSet -> Pod, garbage collection,
# namespace deletion) is the real thing.
#
#   hack/testenv.sh build              build (or find cached) the pinned binaries
#   hack/testenv.sh up                 start everything; last stdout line = kubeconfig path
#   hack/testenv.sh down               stop everything
#   hack/testenv.sh env                eval "$(hack/testenv.sh env)" -> KUBECONFIG, PATH (kubectl)
#   hack/testenv.sh status             which processes run (exit 0 only if all run)
#   hack/testenv.sh kill-apiserver     SIGKILL kube-apiserver (fault tests)
#   hack/testenv.sh start-apiserver    start it again with the same flags, wait for /readyz
#   hack/testenv.sh apiserver-restart  kill-apiserver + start-apiserver
#
# Environment:
#   KUBE_CODEGEN_CACHE        binary cache root      (default ~/.cache/kube-codegen)
#   KUBE_CODEGEN_TESTENV_DIR  runtime dir (certs, logs, pids, etcd data) (default /tmp/kube-codegen-testenv)
#   KUBE_CODEGEN_TESTENV=debian  force the Kubernetes 1.20 fallback (see below)
#   KUBE_CODEGEN_TESTENV_TIMEOUT seconds `up` waits for readiness (default 90)
#   KUBE_CODEGEN_APISERVER_EXTRA_ARGS / KUBE_CODEGEN_KCM_EXTRA_ARGS  extra flags (word-split)
#   KUBE_CODEGEN_{ETCD,ETCD_PEER,APISERVER,KCM}_PORT  loopback ports (23790 23800 16443 16257)
#   KUBE_CODEGEN_TESTENV_PORT_OFFSET  add this to every default port (a second instance;
#                                     give it its own KUBE_CODEGEN_TESTENV_DIR too)
#
# Binaries are built from Go modules with the machine's Go toolchain and cached
# outside the clone, keyed by version, so a fresh CI machine can build from nothing
# and later runs are a no-op. Only if that is impossible (no Go, or the build fails)
# do we fall back to the Debian-source Kubernetes 1.20 recipe in shared/.
set -euo pipefail

# ---- pins -------------------------------------------------------------------------
# The Rust side uses k8s-openapi feature v1_37; keep the server on the same minor.
K8S_VERSION=v1.37.2
# etcd server version: the one k8s.io/kubernetes v1.37.2 itself requires in its
# go.mod (go.etcd.io/etcd/server/v3 v3.7.0, also build/dependencies.yaml "etcd: 3.7.0").
# It must not be higher than that: etcd is built in the same Go module as the
# Kubernetes commands, so a higher pin would also upgrade the apiserver's etcd client.
ETCD_VERSION=v3.7.0

# ---- layout -----------------------------------------------------------------------
REPO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE_ROOT=${KUBE_CODEGEN_CACHE:-$HOME/.cache/kube-codegen}
CACHE=$CACHE_ROOT/k8s-$K8S_VERSION
BIN=$CACHE/bin
DIR=${KUBE_CODEGEN_TESTENV_DIR:-/tmp/kube-codegen-testenv}
TIMEOUT=${KUBE_CODEGEN_TESTENV_TIMEOUT:-90}

# Fallback recipe (Kubernetes 1.20 from Debian's source package). Its build puts
# kube-apiserver and kube-controller-manager in $K8S_CACHE/bin; etcd and kubectl
# come from Debian packages.
DEBIAN_SCRIPT=$REPO_ROOT/../shared/testenv/debian-k8s-1.20.sh
DEBIAN_CACHE=$CACHE_ROOT/debian-k8s-1.20

# Non-default ports, all on loopback, so a developer's own cluster or a second
# etcd on the machine does not clash with ours.
# Two control planes on one machine need their own runtime dir and ports.
HOST=127.0.0.1
# A second instance (benchmarks, fault tests) shifts every port by one offset.
PORT_OFFSET=${KUBE_CODEGEN_TESTENV_PORT_OFFSET:-0}
ETCD_CLIENT_PORT=${KUBE_CODEGEN_ETCD_PORT:-$((23790 + PORT_OFFSET))}
ETCD_PEER_PORT=${KUBE_CODEGEN_ETCD_PEER_PORT:-$((23800 + PORT_OFFSET))}
APISERVER_PORT=${KUBE_CODEGEN_APISERVER_PORT:-$((16443 + PORT_OFFSET))}
KCM_PORT=${KUBE_CODEGEN_KCM_PORT:-$((16257 + PORT_OFFSET))}

TOKEN=kube-codegen-admin-token
COMPONENTS=(etcd apiserver kcm)

log() { echo "testenv: $*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# ---- which binaries ---------------------------------------------------------------
# "pinned" = our Go-module build; "debian" = the 1.20 fallback.
pinned_built() {
  local b
  for b in kube-apiserver kube-controller-manager kubectl etcd; do
    [[ -x $BIN/$b ]] || return 1
  done
}

flavor() {
  if [[ ${KUBE_CODEGEN_TESTENV:-} == debian ]]; then echo debian
  # While a control plane runs, keep naming the binaries it was started from.
  elif [[ -f $DIR/flavor ]] && { running etcd || running apiserver; }; then cat "$DIR/flavor"
  elif pinned_built; then echo pinned
  elif [[ -x $DEBIAN_CACHE/bin/kube-apiserver ]]; then echo debian
  else echo pinned
  fi
}

# Sets KUBE_APISERVER, KCM, ETCD, KUBECTL_DIR for the flavor in use.
select_binaries() {
  FLAVOR=$(flavor)
  if [[ $FLAVOR == pinned ]]; then
    KUBE_APISERVER=$BIN/kube-apiserver KCM=$BIN/kube-controller-manager ETCD=$BIN/etcd
    KUBECTL_DIR=$BIN
  else
    KUBE_APISERVER=$DEBIAN_CACHE/bin/kube-apiserver KCM=$DEBIAN_CACHE/bin/kube-controller-manager
    ETCD=$(command -v etcd || echo /usr/bin/etcd)
    KUBECTL_DIR=$(dirname "$(command -v kubectl || echo /usr/bin/kubectl)")
  fi
}

debian_warning() {
  [[ -z ${WARNED:-} ]] || return 0 # once per run is loud enough
  WARNED=1
  cat >&2 <<W
######################################################################################
##  WARNING: USING THE FALLBACK CONTROL PLANE: KUBERNETES 1.20 (Debian source build) ##
##  This is NOT the pinned Kubernetes $K8S_VERSION. APIs newer than 1.20 are missing and  ##
##  e2e results do not prove compatibility with the version the crate targets.       ##
######################################################################################
W
}

# ---- build ------------------------------------------------------------------------
find_go() {
  local g
  # The machine's own toolchain first: the fallback recipe apt-installs an old
  # Debian golang-go that may come first on PATH.
  for g in "${GO:-}" /usr/local/go/bin/go "$(command -v go || true)"; do
    [[ -n $g && -x $g ]] && { echo "$g"; return 0; }
  done
  return 1
}

# Writes the temporary module that builds the four binaries: it requires
# k8s.io/kubernetes and the etcd server, and replaces every staging module that
# k8s.io/kubernetes's own go.mod maps to ./staging/src/... with its published
# v0.<minor>.<patch> release (those ./staging paths do not exist outside its repo).
write_module() {
  local go=$1 mod=$2 kmod staging_version goversion m
  kmod=$("$go" mod download -json "k8s.io/kubernetes@$K8S_VERSION" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",*$/\1/p')
  [[ -f $kmod ]] || { log "could not download the go.mod of k8s.io/kubernetes@$K8S_VERSION"; return 1; }
  staging_version=v0.${K8S_VERSION#v1.}

  mkdir -p "$mod/etcd"
  rm -f "$mod/go.mod"
  (cd "$mod" && "$go" mod init kube-codegen-testenv >/dev/null 2>&1)
  # Same language version and GODEBUG defaults as upstream builds the binaries with.
  goversion=$(sed -n 's/^go \([0-9.]*\)$/\1/p' "$kmod")
  "$go" mod edit -go="$goversion" "$mod/go.mod"
  while read -r m; do
    "$go" mod edit -godebug="$m" "$mod/go.mod"
  done < <(awk '/^godebug \(/{b=1;next} b&&/^\)/{b=0} b{print $1} /^godebug [^(]/{print $2}' "$kmod")

  "$go" mod edit -require="k8s.io/kubernetes@$K8S_VERSION" \
    -require="go.etcd.io/etcd/server/v3@$ETCD_VERSION" "$mod/go.mod"
  local n=0
  while read -r m; do
    "$go" mod edit -replace="$m=$m@$staging_version" "$mod/go.mod"
    n=$((n + 1))
  done < <(awk '$2 == "=>" && $3 ~ /^\.\/staging\// {print $1}' "$kmod")
  (( n > 0 )) || { log "found no staging replace lines in $kmod"; return 1; }
  log "module: k8s.io/kubernetes $K8S_VERSION, $n staging modules -> $staging_version, etcd $ETCD_VERSION"

  # etcd's own command is one call; keep it in our module so it is built with the
  # same toolchain, flags and dependency graph as the Kubernetes commands.
  cat > "$mod/etcd/main.go" <<'GO'
// Command etcd is the etcd server, built from go.etcd.io/etcd/server/v3.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
GO
}

build_pinned() {
  local go mod tmp info date ldflags pkgs=() b
  go=$(find_go) || { log "no Go toolchain found"; return 1; }
  mod=$CACHE/gomod
  mkdir -p "$CACHE"
  # A module in the cache dir, never in the repo; GOWORK=off so that a go.work
  # somewhere above can't take part; -mod=mod lets go build fill in go.sum.
  export GOWORK=off GOFLAGS=-mod=mod CGO_ENABLED=0
  write_module "$go" "$mod" || return 1

  # Version stamping as Kubernetes' hack/lib/version.sh does, so /version and
  # `kubectl version` say v1.37.2 instead of v0.0.0-master.
  info=$("$go" mod download -json "k8s.io/kubernetes@$K8S_VERSION" | sed -n 's/^[[:space:]]*"Info": "\(.*\)",*$/\1/p')
  date=$(sed -n 's/.*"Time":"\([^"]*\)".*/\1/p' "$info" 2>/dev/null || true)
  local minor=${K8S_VERSION#v1.}; minor=${minor%%.*}
  ldflags="-s -w"
  local p kv
  for p in k8s.io/client-go/pkg/version k8s.io/component-base/version; do
    for kv in gitVersion=$K8S_VERSION gitMajor=1 gitMinor=$minor gitTreeState=clean buildDate=${date:-1970-01-01T00:00:00Z}; do
      ldflags+=" -X $p.$kv"
    done
  done

  for b in kube-apiserver kube-controller-manager kubectl; do
    [[ -x $BIN/$b ]] || pkgs+=("k8s.io/kubernetes/cmd/$b")
  done
  [[ -x $BIN/etcd ]] || pkgs+=(./etcd)

  # Build into a temp dir and move into place, so an interrupted build never
  # leaves a half-written binary that a later run would take as cached.
  rm -rf "$CACHE"/tmp-bin.* # left by a killed earlier build; we hold the lock
  tmp=$(mktemp -d "$CACHE/tmp-bin.XXXXXX")
  # This runs in a subshell of its own (see cmd_build), so an EXIT trap is ours.
  # Expanded now: $tmp is a local and gone by the time the trap runs.
  # shellcheck disable=SC2064
  trap "rm -rf '$tmp'" EXIT
  log "building ${pkgs[*]} with $("$go" env GOVERSION) (cold, with module downloads: about 6-8 min on 2 cores) ..."
  local start=$SECONDS ok=0 try
  for try in 1 2; do # a second try only to ride out a flaky module download
    if (cd "$mod" && "$go" build -trimpath -ldflags "$ldflags" -o "$tmp/" "${pkgs[@]}"); then
      ok=1; break
    fi
    log "go build failed (try $try)"
  done
  if (( ok )); then
    local got
    got=$(cd "$mod" && "$go" list -m -f '{{.Version}}' go.etcd.io/etcd/server/v3)
    [[ $got == "$ETCD_VERSION" ]] || log "warning: etcd resolved to $got, not the pinned $ETCD_VERSION"
    mkdir -p "$BIN"
    for b in "$tmp"/*; do mv -f "$b" "$BIN/"; done
    printf 'kubernetes %s\netcd %s\ngo %s\n' "$K8S_VERSION" "$got" "$("$go" env GOVERSION)" > "$BIN/VERSIONS"
    log "built in $((SECONDS - start)) s into $BIN"
  fi
  rm -rf "$tmp"
  (( ok ))
}

build_debian() {
  debian_warning
  [[ -f $DEBIAN_SCRIPT ]] || die "fallback recipe $DEBIAN_SCRIPT not found"
  # stdout to stderr: `up` keeps its stdout for the kubeconfig path.
  K8S_CACHE=$DEBIAN_CACHE bash "$DEBIAN_SCRIPT" build >&2
  # The recipe installs etcd-server; kubectl is a separate Debian package.
  command -v kubectl >/dev/null || apt-get install -y -qq kubernetes-client >/dev/null ||
    log "warning: no kubectl on this machine"
}

cmd_build() {
  if [[ ${KUBE_CODEGEN_TESTENV:-} == debian ]]; then build_debian; return; fi
  pinned_built && return 0
  mkdir -p "$CACHE"
  # One build at a time (e.g. two test jobs calling `up` at once). The lock fd
  # is closed again below so that daemons started later do not inherit it.
  exec 9>"$CACHE/.build.lock"
  flock 9
  # build_pinned runs in a subshell: its Go environment (GOFLAGS=-mod=mod, ...)
  # must not leak into the fallback's GOPATH-mode build.
  if ! pinned_built; then
    (build_pinned) || pinned_built || {
      log "building Kubernetes $K8S_VERSION from Go modules failed; falling back"
      build_debian
    }
  fi
  exec 9>&-
}

# ---- processes --------------------------------------------------------------------
pidfile() { echo "$DIR/$1.pid"; }

# True if the component's pid file names a live process that is really that
# component (a stale pid file may name a recycled pid).
running() {
  local f pid want
  f=$(pidfile "$1")
  [[ -f $f ]] || return 1
  pid=$(<"$f")
  [[ $pid =~ ^[0-9]+$ && -r /proc/$pid/cmdline ]] || return 1
  case $1 in etcd) want=etcd ;; apiserver) want=kube-apiserver ;; kcm) want=kube-controller-manager ;; esac
  # Compare the program name (argv[0]), not the whole command line: the
  # apiserver's flags mention "etcd" too.
  local argv0
  argv0=$(tr '\0' '\n' < "/proc/$pid/cmdline" 2>/dev/null | head -n 1)
  [[ ${argv0##*/} == "$want" ]] || return 1
  # A zombie is not running.
  [[ $(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null) != Z ]]
}

# Sends a signal, then waits up to $3 seconds for the process to exit.
stop() {
  local name=$1 sig=$2 wait=$3 pid i
  running "$name" || { rm -f "$(pidfile "$name")"; return 0; }
  pid=$(<"$(pidfile "$name")")
  kill "-$sig" "$pid" 2>/dev/null || true
  for ((i = 0; i < wait * 10; i++)); do
    [[ -d /proc/$pid ]] || break
    # Our daemons are children of init once `up` has exited, so they are reaped.
    [[ $(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null) == Z ]] && break
    sleep 0.1
  done
  if [[ -d /proc/$pid ]] && [[ $(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null) != Z ]]; then
    [[ $sig == KILL ]] && die "$name (pid $pid) did not exit"
    log "$name (pid $pid) ignored SIGTERM for ${wait}s; sending SIGKILL"
    stop "$name" KILL 10
    return
  fi
  rm -f "$(pidfile "$name")"
}

# Starts a daemon detached from our session (setsid) so that a Ctrl-C or the end
# of the calling shell does not take it down; stdin/stdout/stderr never hold a
# pipe of the caller, so `$(hack/testenv.sh up)` returns.
spawn() {
  local name=$1; shift
  setsid "$@" </dev/null >>"$DIR/$name.log" 2>&1 9>&- &
  local pid=$! i
  echo "$pid" > "$(pidfile "$name")"
  # `$!` is the forked shell until it has exec'd setsid and setsid has exec'd the daemon;
  # `running` checks the program name, so wait for the exec (a loaded machine can take a
  # while) rather than report a daemon that is still starting as exited.
  for ((i = 0; i < 100; i++)); do
    running "$name" && return 0
    [[ -d /proc/$pid ]] || return 0
    sleep 0.05
  done
}

port_busy() { (exec 3<>"/dev/tcp/$HOST/$1") 2>/dev/null; }

api() { # GET an apiserver path as the admin user; prints the body
  curl -sf --max-time 5 --cacert "$DIR/ca.crt" -H "Authorization: Bearer $TOKEN" "https://$HOST:$APISERVER_PORT$1"
}

# ---- certificates and config ------------------------------------------------------
# A throwaway CA, an apiserver serving cert for 127.0.0.1/localhost, the
# ServiceAccount signing key pair, the static admin token and the kubeconfig.
# Certificates are regenerated when missing or about to expire (the runtime dir
# may live long in /tmp); the kubeconfig is rewritten on every fresh `up`, since
# the port may have changed.
write_pki() {
  if [[ -f $DIR/tokens.csv && -f $DIR/sa.pub && -f $DIR/apiserver.crt ]] &&
     openssl x509 -checkend 86400 -noout -in "$DIR/apiserver.crt" >/dev/null 2>&1; then
    write_kubeconfig
    return 0
  fi
  log "generating certificates in $DIR"
  (
    cd "$DIR"
    openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 30 \
      -subj "/CN=kube-codegen-testenv-ca" 2>/dev/null
    openssl req -newkey rsa:2048 -nodes -keyout apiserver.key -out apiserver.csr \
      -subj "/CN=kube-apiserver" 2>/dev/null
    printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n' > san.ext
    openssl x509 -req -in apiserver.csr -CA ca.crt -CAkey ca.key -CAcreateserial \
      -out apiserver.crt -days 30 -extfile san.ext 2>/dev/null
    openssl genrsa -out sa.key 2048 2>/dev/null
    openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
    # token,user,uid,"groups": system:masters bypasses RBAC entirely.
    echo "$TOKEN,kube-codegen-admin,kube-codegen-admin,\"system:masters\"" > tokens.csv
    chmod 600 ca.key apiserver.key sa.key tokens.csv
  )
  write_kubeconfig
}

write_kubeconfig() {
  cat > "$DIR/kubeconfig.tmp" <<K
apiVersion: v1
kind: Config
clusters:
- name: kube-codegen-testenv
  cluster:
    server: https://$HOST:$APISERVER_PORT
    certificate-authority: $DIR/ca.crt
users:
- name: kube-codegen-admin
  user:
    token: $TOKEN
contexts:
- name: kube-codegen-testenv
  context:
    cluster: kube-codegen-testenv
    user: kube-codegen-admin
    namespace: default
current-context: kube-codegen-testenv
K
  chmod 600 "$DIR/kubeconfig.tmp"
  mv -f "$DIR/kubeconfig.tmp" "$DIR/kubeconfig"
}

# ---- the three components ---------------------------------------------------------
start_etcd() {
  local extra=()
  # Tests wipe the data on every `up`; fsync only slows CI disks down.
  # (--unsafe-no-fsync does not exist in the fallback's etcd 3.4.)
  [[ $FLAVOR == pinned ]] && extra+=(--unsafe-no-fsync)
  spawn etcd "$ETCD" --name default --data-dir "$DIR/etcd-data" \
    --listen-client-urls "http://$HOST:$ETCD_CLIENT_PORT" \
    --advertise-client-urls "http://$HOST:$ETCD_CLIENT_PORT" \
    --listen-peer-urls "http://$HOST:$ETCD_PEER_PORT" \
    --initial-advertise-peer-urls "http://$HOST:$ETCD_PEER_PORT" \
    --initial-cluster "default=http://$HOST:$ETCD_PEER_PORT" \
    "${extra[@]}"
}

# The one place that knows the apiserver's command line: `up` and the
# restart commands both go through here, so a restart is the same server.
# --endpoint-reconciler-type=none: the reconciler that publishes the apiserver's
# address as the endpoints of the `kubernetes` Service refuses a loopback
# address ("may not be in the loopback range") and the server exits. Nothing
# here reaches the apiserver through that Service (no kubelet, no pods run), so
# the Service simply has no endpoints.
start_apiserver() {
  local extra=()
  # 1.20 still had the insecure HTTP port (8080); 1.37 removed the flag.
  [[ $FLAVOR == debian ]] && extra+=(--insecure-port=0)
  # shellcheck disable=SC2206 # deliberate word splitting of user-supplied flags
  extra+=(${KUBE_CODEGEN_APISERVER_EXTRA_ARGS:-})
  spawn apiserver "$KUBE_APISERVER" \
    --etcd-servers="http://$HOST:$ETCD_CLIENT_PORT" \
    --bind-address=$HOST --advertise-address=$HOST --secure-port="$APISERVER_PORT" \
    --endpoint-reconciler-type=none \
    --cert-dir="$DIR/apiserver-certs" \
    --tls-cert-file="$DIR/apiserver.crt" --tls-private-key-file="$DIR/apiserver.key" \
    --client-ca-file="$DIR/ca.crt" \
    --token-auth-file="$DIR/tokens.csv" \
    --authorization-mode=Node,RBAC \
    --service-account-issuer=https://kubernetes.default.svc.cluster.local \
    --service-account-key-file="$DIR/sa.pub" \
    --service-account-signing-key-file="$DIR/sa.key" \
    --service-cluster-ip-range=10.96.0.0/16 \
    --allow-privileged=true \
    "${extra[@]}"
}

start_kcm() {
  local extra=()
  [[ $FLAVOR == debian ]] && extra+=(--port=0) # 1.20's insecure port, gone in 1.37
  # shellcheck disable=SC2206
  extra+=(${KUBE_CODEGEN_KCM_EXTRA_ARGS:-})
  # '*' = every controller that is on by default: garbage collector, deployment,
  # replicaset, namespace, serviceaccount, serviceaccount-token,
  # root-ca-cert-publisher, ... Each controller uses its own ServiceAccount
  # (as in kubeadm clusters), so their RBAC is exercised too.
  # No --authentication/--authorization-kubeconfig for kcm's own HTTPS port: they
  # make it expect the apiserver's front-proxy (requestheader) CA, which this
  # cluster has no use for, and it logs an error about that every few seconds.
  # Its /healthz is served to anyone anyway.
  spawn kcm "$KCM" \
    --kubeconfig="$DIR/kubeconfig" \
    --bind-address=$HOST --secure-port="$KCM_PORT" --cert-dir="$DIR/kcm-certs" \
    --leader-elect=false \
    --controllers='*' \
    --use-service-account-credentials=true \
    --service-account-private-key-file="$DIR/sa.key" \
    --root-ca-file="$DIR/ca.crt" \
    --cluster-signing-cert-file="$DIR/ca.crt" --cluster-signing-key-file="$DIR/ca.key" \
    "${extra[@]}"
}

# Waits until "$@" succeeds, the deadline passes, or component $1 dies.
wait_for() {
  local name=$1 what=$2 deadline=$3; shift 3
  until "$@" >/dev/null 2>&1; do
    running "$name" || fail "$name exited while waiting for $what"
    (( SECONDS < deadline )) || fail "timed out waiting for $what"
    sleep 0.5
  done
}

fail() {
  log "ERROR: $*"
  local c
  for c in "${COMPONENTS[@]}"; do
    [[ -f $DIR/$c.log ]] || continue
    echo "----- last lines of $DIR/$c.log -----" >&2
    tail -n 25 "$DIR/$c.log" >&2
  done
  log "stopping what was started; logs are kept in $DIR"
  cmd_down >/dev/null 2>&1 || true
  exit 1
}

apiserver_ready() { [[ $(api /readyz) == ok ]]; }
etcd_healthy() { curl -sf --max-time 2 "http://$HOST:$ETCD_CLIENT_PORT/health" | grep -q '"health":"true"'; }
# The default ServiceAccount and the kube-root-ca.crt ConfigMap in "default" are
# made by the serviceaccount and root-ca-cert-publisher controllers: kcm works.
kcm_working() {
  api /api/v1/namespaces/default/serviceaccounts/default &&
    api /api/v1/namespaces/default/configmaps/kube-root-ca.crt
}

all_running() {
  local c
  for c in "${COMPONENTS[@]}"; do running "$c" || return 1; done
}

cmd_up() {
  cmd_build >&2
  select_binaries
  [[ $FLAVOR == debian ]] && debian_warning
  mkdir -p "$DIR"

  if all_running && apiserver_ready; then
    echo "$DIR/kubeconfig"
    return 0
  fi
  local c p
  for c in "${COMPONENTS[@]}"; do
    if running "$c"; then
      log "found a partial or unhealthy control plane; restarting it from scratch"
      cmd_down
      break
    fi
  done
  for p in $ETCD_CLIENT_PORT $ETCD_PEER_PORT $APISERVER_PORT $KCM_PORT; do
    port_busy "$p" && die "port $HOST:$p is in use by something else (not started by this script)"
  done

  # Every `up` from the down state starts from an empty cluster.
  rm -rf "$DIR/etcd-data"
  for c in "${COMPONENTS[@]}"; do : > "$DIR/$c.log"; done
  echo "$FLAVOR" > "$DIR/flavor"
  write_pki

  local deadline=$((SECONDS + TIMEOUT))
  start_etcd
  wait_for etcd "etcd /health" $deadline etcd_healthy
  start_apiserver
  wait_for apiserver "kube-apiserver /readyz" $deadline apiserver_ready
  start_kcm
  wait_for kcm "the default ServiceAccount (kube-controller-manager)" $deadline kcm_working
  log "control plane up ($FLAVOR: $("$KUBE_APISERVER" --version 2>/dev/null || echo '?')) in $DIR"
  echo "$DIR/kubeconfig"
}

cmd_down() {
  local c p
  # Reverse start order: clients before the store they talk to.
  for c in kcm apiserver etcd; do stop "$c" TERM 20; done
  for p in $ETCD_CLIENT_PORT $ETCD_PEER_PORT $APISERVER_PORT $KCM_PORT; do
    port_busy "$p" && log "warning: port $HOST:$p is still in use (not by a process this script started)"
  done
  return 0
}

cmd_env() {
  select_binaries
  printf 'export KUBECONFIG=%q\n' "$DIR/kubeconfig"
  # Our kubectl first: a fresh CI machine may have none of its own.
  # shellcheck disable=SC2016 # $PATH is for the eval-ing shell to expand
  printf 'export PATH=%q:"$PATH"\n' "$KUBECTL_DIR"
}

cmd_status() {
  select_binaries
  local c ok=0 pid
  echo "flavor: $FLAVOR ($( [[ -f $BIN/VERSIONS && $FLAVOR == pinned ]] && tr '\n' ' ' < "$BIN/VERSIONS" || echo 'kubernetes 1.20'))"
  for c in "${COMPONENTS[@]}"; do
    if running "$c"; then
      pid=$(<"$(pidfile "$c")")
      echo "$c: running (pid $pid, log $DIR/$c.log)"
    else
      echo "$c: stopped"; ok=1
    fi
  done
  if running apiserver && apiserver_ready; then echo "apiserver /readyz: ok"; else echo "apiserver /readyz: not ready"; ok=1; fi
  echo "kubeconfig: $DIR/kubeconfig"
  return $ok
}

cmd_kill_apiserver() {
  stop apiserver KILL 10
  # The port must really be free before anyone starts the next apiserver: a restart
  # right after the kill otherwise races the old process's exit ("address already in use").
  local i pid
  for ((i = 0; i < 100; i++)); do
    port_busy "$APISERVER_PORT" || return 0
    sleep 0.1
  done
  # Still held: a kube-apiserver our pid file lost track of. Only ever kill that.
  for pid in $(ss -ltnpH "sport = :$APISERVER_PORT" 2>/dev/null | grep -o 'pid=[0-9]*' | cut -d= -f2 | sort -u); do
    if [[ $(tr '\0' '\n' <"/proc/$pid/cmdline" 2>/dev/null | head -n 1) == */kube-apiserver ]]; then
      log "killing stray kube-apiserver (pid $pid) holding port $APISERVER_PORT"
      kill -KILL "$pid" 2>/dev/null || true
    fi
  done
  for ((i = 0; i < 100; i++)); do
    port_busy "$APISERVER_PORT" || return 0
    sleep 0.1
  done
  die "port $APISERVER_PORT is still in use after killing kube-apiserver"
}

cmd_start_apiserver() {
  select_binaries
  running etcd || die "etcd is not running; use 'up'"
  if ! running apiserver; then
    start_apiserver
  fi
  local deadline=$((SECONDS + TIMEOUT))
  until apiserver_ready; do
    running apiserver || { tail -n 25 "$DIR/apiserver.log" >&2; die "kube-apiserver exited"; }
    (( SECONDS < deadline )) || { tail -n 25 "$DIR/apiserver.log" >&2; die "kube-apiserver not ready after ${TIMEOUT}s"; }
    sleep 0.5
  done
}

usage() {
  sed -n 's/^#   \(hack\/testenv.sh .*\)/  \1/p' "${BASH_SOURCE[0]}" >&2
  exit 2
}

case "${1:-}" in
  build) cmd_build ;;
  up) cmd_up ;;
  down) cmd_down ;;
  env) cmd_env ;;
  status) cmd_status ;;
  kill-apiserver) cmd_kill_apiserver ;;
  start-apiserver) cmd_start_apiserver ;;
  apiserver-restart) cmd_kill_apiserver; cmd_start_apiserver ;;
  *) usage ;;
esac
