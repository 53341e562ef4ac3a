#!/usr/bin/env bash
# Build llama.cpp's HTTP server (CPU only) from the llama.cpp that PyPI's llama-cpp-python sdist
# carries, once per version, into a cache outside the work tree. Prints the binary's path on stdout.
# The real-engine tests (tests/engines/) run behind it; a failed build fails them loudly.
#
#   bash scripts/llama-server.sh            -> ~/.cache/noctaya/llama/<version>/llama-server
#   NOCTAYA_LLAMA_CACHE=/elsewhere bash scripts/llama-server.sh
set -euo pipefail
cd "$(dirname "$0")/.."

version=${NOCTAYA_LLAMA_VERSION:-0.3.36}     # llama-cpp-python on PyPI; its vendor/llama.cpp is what we build
cache=${NOCTAYA_LLAMA_CACHE:-${HOME}/.cache/noctaya/llama}
out="${cache}/${version}"
bin="${out}/llama-server"
jobs=${NOCTAYA_LLAMA_JOBS:-2}

if [ -x "$bin" ] && "$bin" --version >/dev/null 2>&1; then
  echo "$bin"
  exit 0
fi

say() { echo "llama-server: $*" >&2; }
need=()
command -v cmake >/dev/null 2>&1 || need+=(cmake)
command -v c++ >/dev/null 2>&1 || need+=(g++)
command -v make >/dev/null 2>&1 || command -v ninja >/dev/null 2>&1 || need+=(make)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    say "installing ${need[*]}"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
  else
    say "please install: ${need[*]}"; exit 1
  fi
fi

python=${PYTHON:-python3}
[ -x .venv/bin/python ] && python=.venv/bin/python
work=$(mktemp -d "${TMPDIR:-/tmp}/noctaya-llama.XXXXXX")
trap 'rm -rf "$work"' EXIT
start=$(date +%s)

say "downloading the llama-cpp-python ${version} sdist"
# only this package as source: its build requirements (scikit-build-core…) may come as wheels, which
# pip needs to read the sdist's metadata; nothing of them is used for the build below
"$python" -m pip download -q --no-deps --no-binary llama-cpp-python -d "$work/dl" "llama-cpp-python==${version}" >&2
sdist=$(find "$work/dl" -maxdepth 1 -name 'llama[-_]cpp[-_]python-*.tar.gz' | head -1)
[ -n "$sdist" ] || { say "no sdist downloaded for llama-cpp-python==${version}"; exit 1; }
tar -xzf "$sdist" -C "$work"
src=$(find "$work" -maxdepth 3 -type d -path '*/vendor/llama.cpp' | head -1)
[ -n "$src" ] && [ -f "$src/CMakeLists.txt" ] || { say "the sdist has no vendor/llama.cpp"; exit 1; }

generator=()
command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)
say "configuring (CPU only) from $(basename "$sdist")"
cmake -S "$src" -B "$work/build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DGGML_NATIVE=OFF -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DBUILD_SHARED_LIBS=OFF \
  -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=ON -DLLAMA_BUILD_SERVER=ON >&2
say "building llama-server with ${jobs} jobs (several minutes on 2 cores)"
cmake --build "$work/build" --target llama-server -j "$jobs" >&2
built=$(find "$work/build" -type f -name llama-server -perm -u+x | head -1)
[ -n "$built" ] || { say "the build produced no llama-server"; exit 1; }
"$built" --version >&2 || { say "the built llama-server does not run"; exit 1; }

mkdir -p "$out"
cp "$built" "$bin.tmp.$$"
mv "$bin.tmp.$$" "$bin"
say "built in $(( $(date +%s) - start )) s: $bin"
echo "$bin"
