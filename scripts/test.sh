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
echo "== ruff";          .venv/bin/ruff check . && .venv/bin/ruff format --check .
echo "== mypy (strict)"; .venv/bin/mypy
echo "== import-linter"; .venv/bin/lint-imports
# The cluster tier (tests/cluster) runs a real control plane built from pinned Go modules. From nothing
# (empty module and build caches) it took 52 min on 2 cores shared with other builds: 18.6 min user +
# 4.1 min sys CPU (no less than 12 min on 2 idle cores, plus the module downloads). With the cache warm
# it is a check of the cache.
echo "== cluster build"; bash scripts/cluster.sh build
echo "== pytest";        .venv/bin/python -m pytest -n "${NOCTAYA_TEST_WORKERS:-4}" --dist loadgroup "$@"
