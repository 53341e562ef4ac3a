#!/usr/bin/env bash
# Set up (if needed), then run every check CI runs: lint, types, architecture contracts, tests.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION=20 JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION=1
# the real tools the tests drive, built or installed when missing (each fails loudly if it cannot)
echo "== tools"
NOCTAYA_HELM=$(bash scripts/helm.sh); export NOCTAYA_HELM
bash scripts/prometheus.sh
NOCTAYA_CDK8S=$(bash scripts/cdk8s.sh); export NOCTAYA_CDK8S
echo "== ruff";          .venv/bin/ruff check .; .venv/bin/ruff format --check .
echo "== mypy (strict)"; .venv/bin/mypy
echo "== import-linter"; .venv/bin/lint-imports
# Two real tiers need builds, each cached outside the work tree by version (with the cache warm both are
# a check of the cache). They run side by side, so one's downloads overlap the other's compiling:
# - tests/engines runs llama.cpp's server, built from the llama-cpp-python sdist (~18 min on 2 cores);
# - tests/cluster runs a real control plane built from pinned Go modules. From nothing (empty module and
#   build caches) it took 52 min on 2 cores shared with other builds: 18.6 min user + 4.1 min sys CPU
#   (no less than 12 min on 2 idle cores, plus the module downloads), KEDA's metrics adapter not included.
echo "== builds: llama.cpp server, cluster"
llama_out=$(mktemp); llama_err=$(mktemp)
trap 'kill "${llama_pid:-}" 2>/dev/null || true; rm -f "$llama_out" "$llama_err"' EXIT
if [ -z "${NOCTAYA_LLAMA_SERVER:-}" ]; then
  nice -n 10 bash scripts/llama-server.sh >"$llama_out" 2>"$llama_err" &
  llama_pid=$!
fi
bash scripts/cluster.sh build
if [ -n "${llama_pid:-}" ]; then
  if ! wait "$llama_pid"; then
    cat "$llama_err" >&2; echo "the llama.cpp server build failed (above)" >&2; exit 1
  fi
  llama_pid=
  cat "$llama_err" >&2
  NOCTAYA_LLAMA_SERVER=$(cat "$llama_out")
fi
export NOCTAYA_LLAMA_SERVER
echo "== pytest";        .venv/bin/python -m pytest -n "${NOCTAYA_TEST_WORKERS:-4}" --dist loadgroup "$@"
