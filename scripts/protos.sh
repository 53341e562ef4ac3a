#!/usr/bin/env bash
# Generate the gRPC stubs for proto/*.proto into noctaya/scaler/_pb/ (git-ignored).
# The include path maps proto/ onto the package directory, so the generated stubs import each other
# as `noctaya.scaler._pb.<name>_pb2` and work from any working directory.
set -euo pipefail
cd "$(dirname "$0")/.."
py=${PYTHON:-.venv/bin/python}
[ -x "$py" ] || py=python3
out=noctaya/scaler/_pb
mkdir -p "$out"
"$py" -m grpc_tools.protoc -I"$out=proto" --python_out=. --grpc_python_out=. --pyi_out=. \
  "$out"/externalscaler.proto
printf '"""Generated from proto/ by scripts/protos.sh; never edited by hand."""\n' > "$out/__init__.py"
echo "protos: generated $out"
