#!/usr/bin/env bash
# A real Kubernetes control plane for the cluster test tier, built from pinned Go modules.
#
#   bash scripts/cluster.sh build   build missing binaries (versions: scripts/cluster.versions)
#   bash scripts/cluster.sh up      build if needed; start etcd, kube-apiserver, controller-manager,
#                                   scheduler and KWOK (kwokctl, binary runtime), then KEDA's operator
#                                   and metrics API server (registered as the APIService
#                                   v1beta1.external.metrics.k8s.io); install KEDA's and Noctaya's
#                                   CRDs; write .cluster/kubeconfig
#   bash scripts/cluster.sh down    stop everything `up` started
#   bash scripts/cluster.sh bin     print the directory holding the binaries
#
# `up` and `down` are idempotent. NOCTAYA_CLUSTER_NAME names the cluster (default: noctaya-<worktree
# hash>), NOCTAYA_CLUSTER_DIR where its state lives (default: .cluster); NOCTAYA_KWOK_STAGES adds KWOK
# Stages (a YAML file) to KWOK's default ones, NOCTAYA_KUBE_AUDIT_POLICY turns on the API server's audit
# log (<state>/kwok/clusters/<name>/logs/audit.log), NOCTAYA_CLUSTER_HOST_IP the non-loopback address
# KEDA's metrics API server listens on (default: the host's first). Binaries are built into a cache outside the work
# tree, keyed by the pinned versions and the Go toolchain (NOCTAYA_CACHE, default ~/.cache/noctaya);
# nothing is vendored.
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
KEDA_NS=keda
ADAPTER_SERVICE=keda-operator-metrics-apiserver
# KEDA's metrics gRPC service (operator -> metrics API server) on a loopback address of this cluster's own
METRICS_SERVICE_FILE="$STATE/keda/metrics-service"

kctl() { "$BIN/kubectl" --kubeconfig "$KUBECONFIG_OUT" "$@"; }

# A simulated node KWOK keeps Ready: room for every Pod the tests create, accelerators included.
node_manifest() {
  cat <<YAML
apiVersion: v1
kind: Node
metadata:
  name: kwok-node-0
  annotations: {kwok.x-k8s.io/node: fake, node.alpha.kubernetes.io/ttl: "0"}
  labels: {kubernetes.io/hostname: kwok-node-0, kubernetes.io/os: linux, kubernetes.io/arch: amd64, type: kwok}
status:
  allocatable: {cpu: "64", memory: 512Gi, pods: "256", nvidia.com/gpu: "16", ephemeral-storage: 1Ti}
  capacity: {cpu: "64", memory: 512Gi, pods: "256", nvidia.com/gpu: "16", ephemeral-storage: 1Ti}
  nodeInfo: {architecture: amd64, operatingSystem: linux, kubeletVersion: fake, kubeProxyVersion: fake}
  phase: Running
YAML
}

# Serving and client certificates of KEDA's metrics gRPC service (the operator refuses to start without
# them; the metrics API server dials it with them) and of the metrics API server itself (its Service
# name is in the SANs: the aggregator checks it against the APIService's caBundle).
keda_certs() {
  local dir="$STATE/keda/certs"
  [ -f "$dir/tls.crt" ] && return 0
  command -v openssl >/dev/null || die "openssl is required for KEDA's certificates"
  mkdir -p "$dir"
  openssl req -x509 -newkey rsa:2048 -nodes -days 30 -subj "/CN=noctaya-cluster-ca" \
    -keyout "$dir/ca.key" -out "$dir/ca.crt" 2>/dev/null
  openssl req -newkey rsa:2048 -nodes -subj "/CN=keda-operator" -keyout "$dir/tls.key" -out "$dir/tls.csr" 2>/dev/null
  printf 'subjectAltName=DNS:localhost,DNS:keda-operator,DNS:keda-operator.%s.svc,DNS:%s.%s.svc,IP:127.0.0.1\n' \
    "$KEDA_NS" "$ADAPTER_SERVICE" "$KEDA_NS" >"$dir/san.ext"
  openssl x509 -req -in "$dir/tls.csr" -CA "$dir/ca.crt" -CAkey "$dir/ca.key" -CAcreateserial -days 30 \
    -extfile "$dir/san.ext" -out "$dir/tls.crt" 2>/dev/null
}

running() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

# The address of KEDA's metrics gRPC service: a random 127.0.0.0/8 address (all local) chosen once per
# cluster, the port KEDA's manifests use; two clusters on one machine share no port.
metrics_service() {
  if [ ! -s "$METRICS_SERVICE_FILE" ]; then
    mkdir -p "$(dirname "$METRICS_SERVICE_FILE")"
    echo "127.$((RANDOM % 254 + 1)).$((RANDOM % 254 + 1)).$((RANDOM % 253 + 2)):9666" >"$METRICS_SERVICE_FILE"
  fi
  cat "$METRICS_SERVICE_FILE"
}

# The address the aggregator reaches the metrics API server on: kube-apiserver runs with
# --enable-aggregator-routing (no kube-proxy here), so it dials the Service's endpoint directly, and an
# endpoint may not be a loopback address. NOCTAYA_CLUSTER_HOST_IP, else the host's first address.
host_ip() {
  local ip="${NOCTAYA_CLUSTER_HOST_IP:-}"
  [ -n "$ip" ] || ip="$(hostname -I 2>/dev/null | tr ' ' '\n' | grep -E '^[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+$' | grep -v '^127\.' | head -1)"
  [ -n "$ip" ] || die "no non-loopback IPv4 address for KEDA's metrics API server (set NOCTAYA_CLUSTER_HOST_IP)"
  echo "$ip"
}

# The Service, EndpointSlice and Endpoints of the metrics API server (no selector: its endpoint is this
# host) and the APIService v1beta1.external.metrics.k8s.io the HPA controller reads external metrics
# through.
adapter_manifest() {
  local ip="$1" port="$2" ca
  ca="$(base64 -w0 <"$STATE/keda/certs/ca.crt")"
  cat <<YAML
apiVersion: v1
kind: Service
metadata: {name: $ADAPTER_SERVICE, namespace: $KEDA_NS}
spec:
  ports: [{name: https, port: 443, protocol: TCP, targetPort: $port}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: $ADAPTER_SERVICE-host
  namespace: $KEDA_NS
  labels: {kubernetes.io/service-name: $ADAPTER_SERVICE, endpointslice.kubernetes.io/managed-by: noctaya-cluster}
addressType: IPv4
endpoints: [{addresses: ["$ip"], conditions: {ready: true}}]
ports: [{name: https, port: $port, protocol: TCP}]
---
apiVersion: v1
kind: Endpoints
metadata: {name: $ADAPTER_SERVICE, namespace: $KEDA_NS}
subsets: [{addresses: [{ip: "$ip"}], ports: [{name: https, port: $port, protocol: TCP}]}]
---
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata: {name: v1beta1.external.metrics.k8s.io}
spec:
  group: external.metrics.k8s.io
  version: v1beta1
  service: {name: $ADAPTER_SERVICE, namespace: $KEDA_NS, port: 443}
  caBundle: $ca
  groupPriorityMinimum: 100
  versionPriority: 100
YAML
}

# KEDA's metrics API server (cmd/adapter) as a local process on the host address. It serves with the
# KEDA certificates, authenticates the aggregator by its proxy client certificate (kwokctl's CA, from
# kube-system/extension-apiserver-authentication) and asks the API server to authorize. Its port cannot
# be 0 (the Service must name it): a random one, another if that one is taken (at most 5 tries).
start_keda_adapter() {
  local pidfile="$STATE/keda/adapter.pid" log="$STATE/keda/adapter.log" ip port attempt deadline
  if running "$pidfile"; then say "KEDA metrics API server already running (pid $(cat "$pidfile"))"; return 0; fi
  ip="$(host_ip)"
  for attempt in 1 2 3 4 5; do
    port=$((20000 + RANDOM % 30000))
    say "starting KEDA metrics API server ${KEDA} on $ip:$port (log: $log)"
    KUBECONFIG="$KUBECONFIG_OUT" WATCH_NAMESPACE="" KEDA_CLUSTER_OBJECT_NAMESPACE="$KEDA_NS" POD_NAMESPACE="$KEDA_NS" \
      setsid "$BIN/keda-adapter" --kubeconfig "$KUBECONFIG_OUT" --lister-kubeconfig "$KUBECONFIG_OUT" \
      --authentication-kubeconfig "$KUBECONFIG_OUT" --authorization-kubeconfig "$KUBECONFIG_OUT" \
      --bind-address "$ip" --secure-port "$port" --cert-dir "$STATE/keda/certs" \
      --tls-cert-file "$STATE/keda/certs/tls.crt" --tls-private-key-file "$STATE/keda/certs/tls.key" \
      --metrics-service-address "$(metrics_service)" --metrics-service-grpc-authority "keda-operator.$KEDA_NS.svc" \
      --port 0 >"$log" 2>&1 </dev/null &
    echo $! >"$pidfile"
    adapter_manifest "$ip" "$port" | kctl apply --server-side --force-conflicts -f - >&2
    deadline=$((SECONDS + 180))
    until kctl get --raw /apis/external.metrics.k8s.io/v1beta1 2>/dev/null | grep -q externalmetrics; do
      if ! running "$pidfile"; then
        grep -q "address already in use" "$log" && continue 2
        tail -20 "$log" >&2; die "KEDA metrics API server exited"
      fi
      [ $SECONDS -lt $deadline ] || { tail -20 "$log" >&2; kctl get apiservice v1beta1.external.metrics.k8s.io -o yaml >&2; die "external.metrics.k8s.io/v1beta1 not served through the aggregator within 180 s"; }
      sleep 1
    done
    say "KEDA metrics API server serves external.metrics.k8s.io/v1beta1 through the aggregator"
    return 0
  done
  die "KEDA metrics API server found no free port in 5 tries"
}

# KEDA's operator as a local process. NOCTAYA_KEDA_HOSTS (a hosts file) is bind-mounted over /etc/hosts
# in a mount namespace of the operator's own, so in-cluster Service names can resolve to local addresses.
start_keda() {
  local pidfile="$STATE/keda/operator.pid" log="$STATE/keda/operator.log"
  if running "$pidfile"; then say "KEDA operator already running (pid $(cat "$pidfile"))"; return 0; fi
  keda_certs
  local hosts="$STATE/keda/hosts"
  [ -f "$hosts" ] || cp /etc/hosts "$hosts"
  say "starting KEDA operator ${KEDA} (log: $log)"
  # shellcheck disable=SC2016
  KUBECONFIG="$KUBECONFIG_OUT" WATCH_NAMESPACE="" KEDA_CLUSTER_OBJECT_NAMESPACE="$KEDA_NS" POD_NAMESPACE="$KEDA_NS" \
    KEDA_OPERATOR_LEADER_ELECTION_LEASE_DURATION=10s KEDA_OPERATOR_LEADER_ELECTION_RENEW_DEADLINE=8s \
    setsid unshare --mount --propagation private -- sh -c 'mount --bind "$0" /etc/hosts && exec "$@"' "$hosts" \
    "$BIN/keda" --leader-elect --leader-election-id "operator.keda.sh" \
    --metrics-bind-address 0 --health-probe-bind-address 0 --metrics-service-bind-address "$(metrics_service)" \
    --cert-dir "$STATE/keda/certs" --ca-dir "$STATE/keda/certs" --zap-log-level info \
    --enable-webhook-patching=false --enable-apiservice-patching=false \
    >"$log" 2>&1 </dev/null &
  echo $! >"$pidfile"
  local deadline=$((SECONDS + 120))
  until kctl -n "$KEDA_NS" get lease operator.keda.sh -o jsonpath='{.spec.holderIdentity}' 2>/dev/null | grep -q .; do
    running "$pidfile" || { tail -20 "$log" >&2; die "KEDA operator exited"; }
    [ $SECONDS -lt $deadline ] || { tail -20 "$log" >&2; die "KEDA operator took no leadership within 120 s"; }
    sleep 1
  done
  say "KEDA operator leads (Lease $KEDA_NS/operator.keda.sh)"
}

stop_pid() {
  local pidfile="$1" what="$2" pid
  if running "$pidfile"; then
    pid="$(cat "$pidfile")"
    say "stopping $what (pid $pid)"
    kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid"
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    kill -KILL -- "-$pid" 2>/dev/null || true
  fi
  rm -f "$pidfile"
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

# kubectl wait ARGS, bounded by 120 s in all; it fails at once (rather than waiting) on an object whose
# status has no conditions yet, as a CRD just applied has, so such failures are retried
settled() {
  local deadline=$((SECONDS + 120))
  until kctl wait --timeout 30s "$@" >&2; do
    [ $SECONDS -lt $deadline ] || die "kubectl wait $* did not succeed within 120 s"
    sleep 1
  done
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
    # kwokctl's PKI: its admin certificate is the aggregator's proxy client certificate, so the
    # aggregated metrics API server trusts the identity it forwards (request headers) by that CA and name
    local pki="$KWOK_WORKDIR/clusters/$NAME/pki"
    "$BIN/kwokctl" create cluster --name "$NAME" --runtime binary "${config[@]}" \
      --kube-apiserver-binary "$BIN/kube-apiserver" \
      --kube-controller-manager-binary "$BIN/kube-controller-manager" \
      --kube-scheduler-binary "$BIN/kube-scheduler" \
      --kwok-controller-binary "$BIN/kwok" --etcd-binary "$BIN/etcd" \
      --kube-authorization --kube-admission \
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
  local deadline=$((SECONDS + 120))
  until kctl get --raw /readyz >/dev/null 2>&1; do
    [ $SECONDS -lt $deadline ] || die "kube-apiserver not ready within 120 s"
    sleep 1
  done
  say "kube-apiserver ready"
  node_manifest | kctl apply -f - >&2
  kctl create namespace "$KEDA_NS" --dry-run=client -o yaml | kctl apply -f - >&2
  say "installing KEDA's CRDs"
  kctl apply --server-side -f "$(keda_crds_dir)" >&2
  say "installing Noctaya's CRDs (dist/crds)"
  kctl apply --server-side -f "$ROOT/dist/crds" >&2
  settled --for condition=Established crd --all
  settled --for condition=Ready node/kwok-node-0
  start_keda
  start_keda_adapter
  say "up: export KUBECONFIG=$KUBECONFIG_OUT"
}

down() {
  stop_pid "$STATE/keda/adapter.pid" "KEDA metrics API server"
  stop_pid "$STATE/keda/operator.pid" "KEDA operator"
  if [ -x "$BIN/kwokctl" ] && "$BIN/kwokctl" get clusters 2>/dev/null | grep -qx "$NAME"; then
    say "deleting cluster $NAME"
    "$BIN/kwokctl" delete cluster --name "$NAME" >&2
  else
    say "no cluster $NAME"
  fi
  rm -f "$KUBECONFIG_OUT" "$KUBECONFIG_OUT.kwokctl"
  rm -rf "$STATE/keda"
  say "down"
}

case "${1:-}" in
  build) ensure_built; say "binaries in $BIN" ;;
  bin) echo "$BIN" ;;
  up) up ;;
  down) down ;;
  *) die "usage: $0 build|up|down|bin" ;;
esac
