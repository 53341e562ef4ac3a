#!/usr/bin/env bash
# KEDA HTTP add-on's interceptor, the bench's Go peer (python -m bench.gateway --peers ...,interceptor),
# built from its pinned Go module into a cache outside the work tree; nothing is vendored.
#
#   bash scripts/interceptor.sh            build if missing; print the binary's path on stdout
#   bash scripts/interceptor.sh path       print where the binary is (or would be), build nothing
#   bash scripts/interceptor.sh crds       print the module's CRD directory (config/crd/bases in the
#                                          module cache: HTTPScaledObject, InterceptorRoute), fetching
#                                          the module if needed
#
# NOCTAYA_INTERCEPTOR_VERSION overrides the pinned version; the cache (NOCTAYA_CACHE, default
# ~/.cache/noctaya) is keyed by the version and the Go toolchain: <cache>/interceptor/<key>/bin.
set -euo pipefail

MODULE=github.com/kedacore/http-add-on
VERSION="${NOCTAYA_INTERCEPTOR_VERSION:-v0.15.0}"

say() { echo "interceptor: $*" >&2; }
die() { echo "interceptor: error: $*" >&2; exit 1; }

command -v go >/dev/null || die "the Go toolchain is required to build the interceptor (go not on PATH)"
CACHE_ROOT="${NOCTAYA_CACHE:-$HOME/.cache/noctaya}/interceptor"
KEY="$(printf '%s\n' "$MODULE" "$VERSION" "$(go env GOVERSION)" | sha256sum | cut -c1-16)"
CACHE="$CACHE_ROOT/$KEY"
BIN="$CACHE/bin/interceptor"
# a module and build cache of its own, so a build from nothing is one `rm -rf` away
export GOMODCACHE="$CACHE_ROOT/go/mod" GOCACHE="$CACHE_ROOT/go/build" GOPATH="$CACHE_ROOT/go/path"
export CGO_ENABLED=0 GOFLAGS=-trimpath GOTOOLCHAIN=local GOTELEMETRY=off

# A module of ours requiring MODULE@VERSION (the upstream go.mod has no replace directives, so its
# requirements are what the build selects); `go install pkg@version` is not used because it asks the
# proxy for the module's version list, which the proxy may refuse.
module_dir() {
  local dir="$CACHE/src"
  mkdir -p "$dir"
  local upstream
  upstream="$(cd "$dir" && go mod download -json "$MODULE@$VERSION" | sed -n 's/^\t"GoMod": "\(.*\)",$/\1/p')"
  [ -f "$upstream" ] || die "no go.mod for $MODULE@$VERSION"
  if grep -qE '^replace' "$upstream"; then
    die "$MODULE@$VERSION's go.mod has replace directives: this script does not carry them over"
  fi
  {
    echo "module noctaya.local/bench/interceptor"
    echo
    grep -m1 -E '^go [0-9.]+$' "$upstream"
    echo
    echo "require $MODULE $VERSION"
  } >"$dir/go.mod"
  echo "$dir"
}

build() {
  local start dir
  start="$(date +%s)"
  say "building $MODULE/interceptor@$VERSION with $(go env GOVERSION) (a few minutes on 2 cores)"
  dir="$(module_dir)"
  (
    cd "$dir"
    go get "$MODULE/interceptor@$VERSION" >/dev/null
    mkdir -p "$CACHE/bin.tmp"
    nice -n 10 go build -ldflags="-s -w -X $MODULE/pkg/build.version=$VERSION" -o "$CACHE/bin.tmp/" \
      "$MODULE/interceptor" >&2
  )
  mkdir -p "$CACHE/bin"
  mv -f "$CACHE/bin.tmp/interceptor" "$BIN"
  rm -rf "$CACHE/bin.tmp"
  say "built in $(($(date +%s) - start)) s: $BIN"
}

crds() {
  local dir
  dir="$(cd "$(module_dir)" && go mod download -json "$MODULE@$VERSION" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')"
  [ -d "$dir/config/crd/bases" ] || die "no config/crd/bases in $MODULE@$VERSION ($dir)"
  echo "$dir/config/crd/bases"
}

case "${1:-build}" in
  build)
    [ -x "$BIN" ] || build
    [ -x "$BIN" ] || die "the build left no $BIN"
    echo "$BIN"
    ;;
  path) echo "$BIN" ;;
  crds) crds ;;
  *) die "usage: $0 [build|path|crds]" ;;
esac
