#!/usr/bin/env bash
# Set up a development environment from nothing: Node.js (jsii runs cdk8s on it), a virtualenv in
# .venv with the pinned dependencies, and the generated gRPC stubs. Safe to run again: it skips what
# is already done.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
command -v node >/dev/null 2>&1 || need_apt+=(nodejs)
command -v npm >/dev/null 2>&1 || need_apt+=(npm)               # the cdk8s CLI (scripts/cdk8s.sh)
command -v openssl >/dev/null 2>&1 || need_apt+=(openssl)       # throwaway certificates (noctaya dev --scaler-tls, tests)
command -v setpriv >/dev/null 2>&1 || need_apt+=(util-linux)    # child processes die with noctaya dev
command -v promtool >/dev/null 2>&1 || need_apt+=(prometheus)     # promtool evaluates the rendered alert rules (tests)
command -v python3 >/dev/null 2>&1 || need_apt+=(python3 python3-venv python3-dev)
if [ ${#need_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
  else
    echo "setup: please install: ${need_apt[*]}" >&2; exit 1
  fi
fi

python3 - <<'PY'
import sys
if sys.version_info < (3, 11):
    sys.exit(f"setup: Python 3.11 or newer is needed, found {sys.version.split()[0]}")
PY

[ -x .venv/bin/python ] || python3 -m venv .venv
stamp=.venv/.noctaya-installed
want=$(cat pyproject.toml constraints.txt | sha256sum | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  .venv/bin/python -m pip install -q --upgrade pip
  # pyproject.toml holds ranges; constraints.txt the exact versions everything is tested with
  .venv/bin/python -m pip install -q -c constraints.txt -e '.[all,dev]'
  echo "$want" > "$stamp"
fi

if [ -f scripts/protos.sh ]; then bash scripts/protos.sh; fi
echo "setup: ready (.venv)"
