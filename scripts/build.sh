#!/usr/bin/env bash
# Incremental CMake build of every target, then a one-time editable install so that
# `import torchair_ge` and the Dynamo backend name work from anywhere.
set -euo pipefail
PY=${PY:-python3}
BUILD=${BUILD:-build}
JOBS=${JOBS:-2}
cd "$(dirname "$0")/.."
# ccache: hash paths relative to the checkout, so clones elsewhere (CI) reuse the cache.
export CCACHE_BASEDIR="$(pwd)"

if [ ! -f "$BUILD/CMakeCache.txt" ]; then
  launcher=()
  command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_PREFIX_PATH="$("$PY" -c 'import torch.utils; print(torch.utils.cmake_prefix_path)')" \
    -DPython3_EXECUTABLE="$(command -v "$PY")" "${launcher[@]}" >/dev/null
fi
cmake --build "$BUILD" -j "$JOBS"

# (Re)install when torchair_ge does not resolve to this checkout: first build, a clone in
# another directory, or an install made before the package existed.
here="$(pwd)/torchair_ge/__init__.py"
if ! (cd / && "$PY" -c "import sys, torchair_ge; sys.exit(torchair_ge.__file__ != '$here')") 2>/dev/null; then
  "$PY" -m pip install -q --no-build-isolation --no-deps -e . 2>&1 | grep -v "Running pip as the 'root' user" || true
fi
