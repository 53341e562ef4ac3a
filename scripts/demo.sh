#!/usr/bin/env bash
# The main job: set up, check and render the examples offline, then run the local scale-from-zero
# runner until Ctrl-C. Extra arguments go to `noctaya dev`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION=20 JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION=1
.venv/bin/noctaya validate examples/
.venv/bin/noctaya synth examples/ -o dist/examples --force   # byte-identical to the committed dist/
# point an OpenAI client at the printed URL and watch the backend go 0 -> 1 -> N -> 0; Ctrl-C stops all
exec .venv/bin/noctaya dev "$@"
