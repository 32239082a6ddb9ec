#!/usr/bin/env bash
# `make fuzz`: builds the engine with clang, libFuzzer, ASan and UBSan (build-fuzz/), makes seed
# corpora from real exports and dumps (tests/fuzz/make_seeds.py, needs `make build`), and runs
# every harness for FUZZ_SECONDS (default 60) each. A crash or sanitizer report fails the run and
# leaves the reproducer in build-fuzz/artifacts/.
# FUZZ_RUNS=N stops a harness after N executions instead, when that comes first.
# Usage: FUZZ_SECONDS=1800 FUZZ_RUNS=1000000 FUZZ_TARGETS="model_file npy" bash scripts/fuzz.sh
set -euo pipefail
PY=${PY:-python3}
SECONDS_EACH=${FUZZ_SECONDS:-60}
TARGETS=${FUZZ_TARGETS:-"model_file graph_text op_plugin npy size_expr"}
OUT=${FUZZ_BUILD:-build-fuzz}
cd "$(dirname "$0")/.."

source scripts/debian.sh
ensure_debian_packages fuzz clang-14 libclang-rt-14-dev

if [ ! -f "$OUT/CMakeCache.txt" ]; then
  launcher=()
  command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  cmake -S . -B "$OUT" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTORCHAIR_GE_FUZZ=ON \
    -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 \
    -DPython3_EXECUTABLE="$(command -v "$PY")" "${launcher[@]}" >/dev/null
fi
cmake --build "$OUT" -j "${JOBS:-2}"

seeds="$OUT/seeds"
[ -d "$seeds/size_expr" ] || "$PY" tests/fuzz/make_seeds.py "$seeds"

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
mkdir -p "$OUT/artifacts"
for t in $TARGETS; do
  corpus="$OUT/corpus/$t"
  mkdir -p "$corpus"
  echo "fuzz: $t for ${SECONDS_EACH}s"
  runs=()
  [ -n "${FUZZ_RUNS:-}" ] && runs=(-runs="$FUZZ_RUNS")
  # tests/fuzz/regressions/<harness>: inputs that once crashed, kept as seeds.
  "$OUT/fuzz_$t" "$corpus" "$seeds/$t" $(ls -d "tests/fuzz/regressions/$t" 2>/dev/null) -max_total_time="$SECONDS_EACH" "${runs[@]}" -rss_limit_mb=4096 -timeout=20 \
    -artifact_prefix="$OUT/artifacts/${t}_" -print_final_stats=1 2>"$OUT/fuzz_$t.log" || {
    tail -40 "$OUT/fuzz_$t.log"
    echo "fuzz: $t FAILED (reproducer in $OUT/artifacts/)"
    exit 1
  }
  grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "$OUT/fuzz_$t.log" | sed "s/^/fuzz: $t /"
done
