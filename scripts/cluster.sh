#!/usr/bin/env bash
# A real Kubernetes control plane for the cluster test tier, built from pinned Go modules.
#
#   bash scripts/cluster.sh build   build missing binaries (versions: scripts/cluster.versions)
#   bash scripts/cluster.sh up      build if needed; start etcd, kube-apiserver, controller-manager,
#                                   scheduler and KWOK (kwokctl, binary runtime); write
#                                   .cluster/kubeconfig; then `python -m noctaya.dev.cluster up`
#                                   installs KEDA's and Noctaya's CRDs and starts KEDA's operator and
#                                   metrics API server (registered as the APIService
#                                   v1beta1.external.metrics.k8s.io)
#   bash scripts/cluster.sh try     after `up`, until Ctrl-C: the operator, each LLMService's gateway
#                                   and a model server per Ready backend Pod as processes on this host
#                                   (`python -m noctaya.dev.cluster try`; --help for its options)
#   bash scripts/cluster.sh down    stop everything `up` started (KEDA's processes, then the cluster)
#   bash scripts/cluster.sh bin     print the directory holding the binaries
#
# `up` and `down` are idempotent. NOCTAYA_CLUSTER_NAME names the cluster (default: noctaya-<worktree
# hash>), NOCTAYA_CLUSTER_DIR where its state lives (default: .cluster); NOCTAYA_KWOK_STAGES adds KWOK
# Stages (a YAML file) to KWOK's default ones, NOCTAYA_KUBE_AUDIT_POLICY turns on the API server's audit
# log (<state>/kwok/clusters/<name>/logs/audit.log), NOCTAYA_CLUSTER_HOST_IP the non-loopback address
# KEDA's metrics API server listens on (default: the host's first). Binaries are built into a cache outside the work
# tree, keyed by the pinned versions and the Go toolchain (NOCTAYA_CACHE, default ~/.cache/noctaya);
# nothing is vendored. KEDA's processes and certificates are the Python side's (noctaya/dev/cluster.py,
# run with NOCTAYA_PYTHON, default .venv/bin/python).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
VERSIONS="$ROOT/scripts/cluster.versions"
# shellcheck source=/dev/null
source <(grep -E '^[A-Z_]+=[^ ]+$' "$VERSIONS")

say() { echo "cluster: $*" >&2; }
die() { echo "cluster: error: $*" >&2; exit 1; }

command -v go >/dev/null || die "the Go toolchain is required to build the control plane (go not on PATH)"
GO_VERSION="$(go env GOVERSION)"
CACHE_ROOT="${NOCTAYA_CACHE:-$HOME/.cache/noctaya}/cluster"
KEY="$( (grep -E '^[A-Z_]+=' "$VERSIONS"; echo "$GO_VERSION") | sha256sum | cut -c1-16)"
CACHE="$CACHE_ROOT/$KEY"
BIN="$CACHE/bin"
# kwokctl runs `kubectl` from PATH (and would download one if none were there): ours, at the pinned version
export PATH="$BIN:$PATH"
# A module and build cache of the tier's own, so a build from nothing is one `rm -rf` away.
export GOMODCACHE="$CACHE_ROOT/go/mod" GOCACHE="$CACHE_ROOT/go/build" GOPATH="$CACHE_ROOT/go/path"
export CGO_ENABLED=0 GOFLAGS=-trimpath GOTOOLCHAIN=local GOTELEMETRY=off

# module_dir NAME MODULE VERSION LOCALVER: a module of ours requiring MODULE@VERSION with the replace
# directives of MODULE's own go.mod (a replace to a local path becomes a requirement of that module
# path at LOCALVER; replaces to a forbidden placeholder are dropped).
module_dir() {
  local name="$1" module="$2" version="$3" localver="$4" dir="$CACHE/src/$1"
  mkdir -p "$dir"
  local upstream
  upstream="$(cd "$dir" && go mod download -json "$module@$version" | sed -n 's/^\t"GoMod": "\(.*\)",$/\1/p')"
  [ -f "$upstream" ] || die "no go.mod for $module@$version"
  {
    echo "module noctaya.local/cluster/$name"
    echo
    grep -m1 -E '^go [0-9.]+$' "$upstream"
    echo
    echo "require $module $version"
    echo
    awk -v localver="$localver" '
      function emit(line,   lhs, rhs, n, parts) {
        n = split(line, parts, /[ \t]*=>[ \t]*/); if (n != 2) return
        lhs = parts[1]; rhs = parts[2]; sub(/^[ \t]+/, "", lhs); sub(/[ \t]+$/, "", rhs)
        split(lhs, l, /[ \t]+/)
        if (rhs ~ /FORBIDDEN/) return
        if (rhs ~ /^\.\.?\//) print "replace " l[1] " => " l[1] " " localver
        else print "replace " lhs " => " rhs
      }
      /^replace \(/ { inblock = 1; next }
      inblock && /^\)/ { inblock = 0; next }
      inblock { sub(/\/\/.*/, ""); if ($0 ~ /=>/) emit($0); next }
      /^replace / { sub(/^replace /, ""); sub(/\/\/.*/, ""); emit($0) }
    ' "$upstream"
  } >"$dir/go.mod"
  echo "$dir"
}

# The name `go build` gives a main package's binary: its last path element, a /vN suffix left off.
binary_name() {
  local pkg="$1"
  [[ "$pkg" =~ /v[0-9]+$ ]] && pkg="${pkg%/v*}"
  basename "$pkg"
}

# build NAME MODULE VERSION LOCALVER LDFLAGS PACKAGE...
build() {
  local name="$1" module="$2" version="$3" localver="$4" ldflags="$5"; shift 5
  local missing=0 pkg
  for pkg in "$@"; do [ -x "$BIN/$(binary_name "$pkg")" ] || missing=1; done
  [ "$missing" = 1 ] || return 0
  local start dir
  start="$(date +%s)"
  say "building $name ($module@$version): $*"
  dir="$(module_dir "$name" "$module" "$version" "$localver")"
  (
    cd "$dir"
    for pkg in "$@"; do go get "$pkg@$version" >/dev/null; done
    mkdir -p "$BIN.tmp"
    nice -n 10 go build -ldflags="-s -w $ldflags" -o "$BIN.tmp/" "$@"
  )
  mkdir -p "$BIN"
  for pkg in "$@"; do mv -f "$BIN.tmp/$(binary_name "$pkg")" "$BIN/"; done
  say "built $name in $(($(date +%s) - start)) s"
}

build_all() {
  local kv="k8s.io/component-base/version" kminor
  kminor="$(echo "$KUBERNETES" | cut -d. -f2)"
  if [ ! -x "$BIN/etcd" ]; then
    build etcd go.etcd.io/etcd/server/v3 "$ETCD" "$ETCD" \
      "-X go.etcd.io/etcd/api/v3/version.GitSHA=$ETCD" \
      go.etcd.io/etcd/server/v3
    mv -f "$BIN/server" "$BIN/etcd"
  fi
  build kubernetes k8s.io/kubernetes "$KUBERNETES" "$KUBERNETES_STAGING" \
    "-X $kv.gitVersion=$KUBERNETES -X $kv.gitMajor=1 -X $kv.gitMinor=$kminor -X $kv.gitTreeState=clean -X $kv.buildDate=1970-01-01T00:00:00Z" \
    k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
    k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubectl
  build kwok sigs.k8s.io/kwok "$KWOK" "$KWOK" \
    "-X sigs.k8s.io/kwok/pkg/consts.Version=${KWOK#v} -X sigs.k8s.io/kwok/pkg/consts.KubeVersion=${KUBERNETES#v}" \
    sigs.k8s.io/kwok/cmd/kwok sigs.k8s.io/kwok/cmd/kwokctl
  # named as in KEDA's images (the name is also the field manager KEDA's writes are recorded under):
  # the operator, and the metrics API server (cmd/adapter) the HPA reads external metrics through.
  if [ ! -x "$BIN/keda" ]; then
    build keda github.com/kedacore/keda/v2 "$KEDA" "$KEDA" \
      "-X github.com/kedacore/keda/v2/version.Version=${KEDA#v}" \
      github.com/kedacore/keda/v2/cmd/operator
    mv -f "$BIN/operator" "$BIN/keda"
  fi
  if [ ! -x "$BIN/keda-adapter" ]; then
    build keda github.com/kedacore/keda/v2 "$KEDA" "$KEDA" \
      "-X github.com/kedacore/keda/v2/version.Version=${KEDA#v}" \
      github.com/kedacore/keda/v2/cmd/adapter
    mv -f "$BIN/adapter" "$BIN/keda-adapter"
  fi
  rm -rf "$BIN.tmp"
}

BINARIES="etcd kube-apiserver kube-controller-manager kube-scheduler kubectl kwok kwokctl keda keda-adapter"

ensure_built() {
  local want
  for want in $BINARIES; do
    [ -x "$BIN/$want" ] || { build_all; break; }
  done
  for want in $BINARIES; do
    [ -x "$BIN/$want" ] || die "build left no $BIN/$want"
  done
}

# ------------------------------------------------------------------------------------------- cluster
STATE="${NOCTAYA_CLUSTER_DIR:-$ROOT/.cluster}"
NAME="${NOCTAYA_CLUSTER_NAME:-noctaya-$(echo "$ROOT" | sha256sum | cut -c1-8)}"
export KWOK_WORKDIR="$STATE/kwok"
KUBECONFIG_OUT="$STATE/kubeconfig"
PYTHON="${NOCTAYA_PYTHON:-$ROOT/.venv/bin/python}"

keda_side() {
  [ -x "$PYTHON" ] || die "no Python environment at $PYTHON (bash scripts/setup.sh makes it)"
  "$PYTHON" -m noctaya.dev.cluster --bin "$BIN" --state "$STATE" --kubeconfig "$KUBECONFIG_OUT" "$@"
}

# `try` becomes the Python process (exec), so a SIGINT or SIGTERM sent to this script reaches it
try_here() {
  [ -x "$PYTHON" ] || die "no Python environment at $PYTHON (bash scripts/setup.sh makes it)"
  [ -x "$BIN/kubectl" ] || die "no kubectl in $BIN: bash scripts/cluster.sh up first"
  exec "$PYTHON" -m noctaya.dev.cluster --bin "$BIN" --state "$STATE" --kubeconfig "$KUBECONFIG_OUT" try "$@"
}

module_dir_of() {
  (cd "$CACHE/src/$1" && go list -m -f '{{.Dir}}' "$2")
}

# kwokctl's configuration: KWOK's default Stages (from the KWOK module) and NOCTAYA_KWOK_STAGES. Given
# any Stage, kwokctl uses only the ones given, so the defaults are listed here too.
kwok_config() {
  local kwok out="$STATE/kwok-config.yaml" f
  kwok="$(module_dir_of kwok sigs.k8s.io/kwok)/kustomize/stage"
  : >"$out"
  for f in "$kwok/node/fast/node-initialize.yaml" "$kwok/node/heartbeat-with-lease/node-heartbeat-with-lease.yaml" \
    "$kwok/pod/fast/pod-ready.yaml" "$kwok/pod/fast/pod-complete.yaml" "$kwok/pod/fast/pod-delete.yaml" \
    "$NOCTAYA_KWOK_STAGES"; do
    [ -f "$f" ] || die "no stage file $f"
    { echo "---"; cat "$f"; echo; } >>"$out"
  done
  echo "$out"
}

keda_crds_dir() {
  echo "$(module_dir_of keda github.com/kedacore/keda/v2)/config/crd/bases"
}

up() {
  ensure_built
  mkdir -p "$STATE"
  if "$BIN/kwokctl" get clusters 2>/dev/null | grep -qx "$NAME"; then
    say "cluster $NAME exists; starting it (idempotent)"
    "$BIN/kwokctl" start cluster --name "$NAME" >&2
  else
    say "creating cluster $NAME (kwokctl, binary runtime, Kubernetes $KUBERNETES, etcd $ETCD, KWOK $KWOK)"
    local config=()
    [ -z "${NOCTAYA_KWOK_STAGES:-}" ] || config=(--config "$(kwok_config)")
    # one controller manager and one scheduler, without leader election: on a loaded machine a Lease
    # renewal that misses its deadline would end them ("leaderelection lost"), and nothing restarts them
    # kwokctl's PKI: its admin certificate is the aggregator's proxy client certificate, so the
    # aggregated metrics API server trusts the identity it forwards (request headers) by that CA and name
    local pki="$KWOK_WORKDIR/clusters/$NAME/pki"
    "$BIN/kwokctl" create cluster --name "$NAME" --runtime binary "${config[@]}" \
      --kube-apiserver-binary "$BIN/kube-apiserver" \
      --kube-controller-manager-binary "$BIN/kube-controller-manager" \
      --kube-scheduler-binary "$BIN/kube-scheduler" \
      --kwok-controller-binary "$BIN/kwok" --etcd-binary "$BIN/etcd" \
      --kube-authorization --kube-admission \
      --extra-args kube-controller-manager=leader-elect=false \
      --extra-args kube-scheduler=leader-elect=false \
      --extra-args kube-apiserver=enable-aggregator-routing=true \
      --extra-args kube-apiserver=enable-admission-plugins=OwnerReferencesPermissionEnforcement \
      --extra-args "kube-apiserver=requestheader-client-ca-file=$pki/ca.crt" \
      --extra-args kube-apiserver=requestheader-allowed-names=kwok-admin \
      --extra-args kube-apiserver=requestheader-username-headers=X-Remote-User \
      --extra-args kube-apiserver=requestheader-group-headers=X-Remote-Group \
      --extra-args kube-apiserver=requestheader-extra-headers-prefix=X-Remote-Extra- \
      ${NOCTAYA_KUBE_AUDIT_POLICY:+--kube-audit-policy "$NOCTAYA_KUBE_AUDIT_POLICY"} \
      --kubeconfig "$KUBECONFIG_OUT.kwokctl" --wait 5m --timeout 10m >&2
  fi
  "$BIN/kwokctl" get kubeconfig --name "$NAME" >"$KUBECONFIG_OUT.tmp"
  mv "$KUBECONFIG_OUT.tmp" "$KUBECONFIG_OUT"
  say "kubeconfig: $KUBECONFIG_OUT"
  keda_side up --crds "$(keda_crds_dir)" --crds "$ROOT/dist/crds" --host-ip "${NOCTAYA_CLUSTER_HOST_IP:-}"
  say "up: export KUBECONFIG=$KUBECONFIG_OUT"
}

down() {
  keda_side down
  if [ -x "$BIN/kwokctl" ] && "$BIN/kwokctl" get clusters 2>/dev/null | grep -qx "$NAME"; then
    say "deleting cluster $NAME"
    "$BIN/kwokctl" delete cluster --name "$NAME" >&2
  else
    say "no cluster $NAME"
  fi
  rm -f "$KUBECONFIG_OUT" "$KUBECONFIG_OUT.kwokctl"
  say "down"
}

case "${1:-}" in
  build) ensure_built; say "binaries in $BIN" ;;
  bin) echo "$BIN" ;;
  up) up ;;
  down) down ;;
  try) shift; try_here "$@" ;;
  *) die "usage: $0 build|up|try|down|bin" ;;
esac
