#!/usr/bin/env bash
# Install the cdk8s CLI from npm at the pinned version into a cache outside the work tree, once, and
# print the path of its `cdk8s` command: ${NOCTAYA_CACHE:-~/.cache/noctaya}/cdk8s-cli/<version>/.
# Fails loudly (non-zero, with the reason) when npm is missing or the install fails.
set -euo pipefail
CDK8S_CLI_VERSION=2.207.60
dir="${NOCTAYA_CACHE:-$HOME/.cache/noctaya}/cdk8s-cli/$CDK8S_CLI_VERSION"
bin="$dir/node_modules/.bin/cdk8s"
if [ ! -x "$bin" ]; then
  if ! command -v npm >/dev/null 2>&1; then
    echo "cdk8s.sh: npm is needed to install cdk8s-cli $CDK8S_CLI_VERSION (none on PATH)" >&2
    exit 1
  fi
  mkdir -p "$dir"
  echo "cdk8s.sh: installing cdk8s-cli $CDK8S_CLI_VERSION into $dir" >&2
  if ! npm install --prefix "$dir" --no-save --no-audit --no-fund --loglevel=error \
      "cdk8s-cli@$CDK8S_CLI_VERSION" >&2; then
    echo "cdk8s.sh: installing cdk8s-cli $CDK8S_CLI_VERSION failed" >&2
    exit 1
  fi
fi
echo "$bin"
