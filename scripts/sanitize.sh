#!/usr/bin/env bash
# `make test-asan` / `make test-tsan` (docs/reliability.md): the engine, the CPU device, the gtest
# binary and the Python module built with sanitizers in their own build directory, then
#   address: every ctest test under ASan + UBSan, and a pytest subset with the module loaded
#            into an uninstrumented Python (the ASan runtime preloaded);
#   thread:  the concurrency tests (runs on one compiled graph from 8 threads while graphs are
#            compiled and removed; a model file with symbolic sizes run at several sizes at once)
#            under TSan.
# A sanitizer report fails the run. Usage: bash scripts/sanitize.sh address|thread
set -euo pipefail
MODE=${1:?usage: sanitize.sh address|thread}
PY=${PY:-python3}
JOBS=${JOBS:-2}
cd "$(dirname "$0")/.."
case "$MODE" in
  address) OUT=${SANITIZE_BUILD:-build-asan} ;;
  thread) OUT=${SANITIZE_BUILD:-build-tsan} ;;
  *) echo "sanitize.sh: mode must be address or thread, got '$MODE'" >&2; exit 2 ;;
esac
export CCACHE_BASEDIR="$(pwd)"

if [ ! -f "$OUT/CMakeCache.txt" ]; then
  launcher=()
  command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  cmake -S . -B "$OUT" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTORCHAIR_GE_SANITIZE="$MODE" \
    -DCMAKE_PREFIX_PATH="$("$PY" -c 'import torch.utils; print(torch.utils.cmake_prefix_path)')" \
    -DPython3_EXECUTABLE="$(command -v "$PY")" "${launcher[@]}" >/dev/null
fi

# Reports stop the run; leaks are not checked (Python and libtorch keep memory until exit).
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}  # libgomp is not instrumented

if [ "$MODE" = address ]; then
  cmake --build "$OUT" -j "$JOBS"
  export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:abort_on_error=1:halt_on_error=1}
  ctest --test-dir "$OUT" --output-on-failure -j "$JOBS"
  # The package from the checkout with the sanitized module; the ASan runtime must come first.
  pkg="$OUT/python/torchair_ge"
  rm -rf "$OUT/python" && mkdir -p "$pkg"
  for entry in torchair_ge/*; do
    case "$(basename "$entry")" in _C.*.so) ;; *) ln -s "$(pwd)/$entry" "$pkg/" ;; esac
  done
  cp "$OUT"/sanitized_module/_C.*.so "$pkg/"
  # -P and the pythonpath override keep the checkout (and its editable install) from shadowing
  # the copy; the module actually imported is checked first.
  export LD_PRELOAD="$(gcc -print-file-name=libasan.so):$(gcc -print-file-name=libubsan.so)"
  export PYTHONPATH="$(pwd)/$OUT/python:$(pwd)" TORCHAIR_GE_BUILD="$(pwd)/$OUT"
  module=$(cd / && "$PY" -P -c "import torchair_ge._C as c; print(c.__file__)")
  case "$module" in "$(pwd)/$OUT/"*) ;; *) echo "sanitize.sh: imported $module, not the sanitized module" >&2; exit 1 ;; esac
  "$PY" -P -m pytest -q -p no:cacheprovider -o pythonpath="$OUT/python" ${SANITIZE_PYTEST:-tests/python/test_errors.py \
    tests/python/test_bad_inputs.py tests/python/test_export.py tests/python/test_dynamic_shapes.py}
else
  cmake --build "$OUT" -j "$JOBS" --target ge_tests
  export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}
  "$OUT/ge_tests" --gtest_filter="${SANITIZE_GTEST:-*Concurrent*}" --gtest_brief=1
fi
echo "sanitize ($MODE): clean"
