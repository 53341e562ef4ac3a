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
if [ -z "${NOCTAYA_LLAMA_SERVER:-}" ] && { [ $# -eq 0 ] || [[ " $* " == *engines* ]]; }; then
  # the real-engine tier (tests/engines) runs llama.cpp's server, built once per version and cached
  echo "== llama.cpp server (built from the llama-cpp-python sdist; cached by version)"
  NOCTAYA_LLAMA_SERVER=$(nice -n 10 bash scripts/llama-server.sh)
  export NOCTAYA_LLAMA_SERVER
fi
echo "== pytest";        .venv/bin/python -m pytest -n "${NOCTAYA_TEST_WORKERS:-4}" --dist loadgroup "$@"
