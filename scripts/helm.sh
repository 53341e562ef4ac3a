#!/usr/bin/env bash
# Build Helm from its Go module (helm.sh/helm/v4) at the pinned version into a cache outside the work
# tree, once, and print the binary's path: ${NOCTAYA_CACHE:-~/.cache/noctaya}/helm/<version>/helm.
# Fails loudly (non-zero, with the reason) when Go is missing or the build fails.
set -euo pipefail
HELM_VERSION=v4.3.2
dir="${NOCTAYA_CACHE:-$HOME/.cache/noctaya}/helm/$HELM_VERSION"
bin="$dir/helm"
if [ -x "$bin" ] && "$bin" version --template '{{.Version}}' 2>/dev/null | grep -qx "$HELM_VERSION"; then
  echo "$bin"
  exit 0
fi
if ! command -v go >/dev/null 2>&1; then
  echo "helm.sh: Go is needed to build Helm $HELM_VERSION from helm.sh/helm/v4 (none on PATH)" >&2
  exit 1
fi
mkdir -p "$dir"
echo "helm.sh: building Helm $HELM_VERSION into $dir (a few minutes, once)" >&2
if ! GOBIN="$dir" GOFLAGS=-mod=mod nice -n 10 go install -trimpath \
    -ldflags "-s -w -X helm.sh/helm/v4/internal/version.version=$HELM_VERSION" \
    "helm.sh/helm/v4/cmd/helm@$HELM_VERSION" >&2; then
  echo "helm.sh: building Helm $HELM_VERSION failed" >&2
  exit 1
fi
"$bin" version --template '{{.Version}}' | grep -qx "$HELM_VERSION" || {
  echo "helm.sh: $bin does not report $HELM_VERSION" >&2; exit 1; }
echo "$bin"
