#!/usr/bin/env bash
# Lint: ruff (Python), clang-format (C++ layout), the engine's layer rules, and clang-tidy's
# function-size check over the engine. Installs what is missing (ruff pinned, Debian's
# clang-format-14 and clang-tidy-14). Needs a configured build (compile_commands.json): `make
# lint` builds first. Fails on the first category with a finding.
set -euo pipefail
PY=${PY:-python3}
BUILD=${BUILD:-build}
cd "$(dirname "$0")/.."
RUFF_VERSION=0.17.6
if ! "$PY" -m ruff --version 2>/dev/null | grep -q "$RUFF_VERSION"; then
  echo "lint: installing ruff==$RUFF_VERSION"
  "$PY" -m pip install -q "ruff==$RUFF_VERSION" 2>&1 | grep -v "Running pip as the 'root' user" || true
fi
source "$(dirname "$0")/debian.sh"
ensure_debian_packages lint clang-format-14 clang-tidy-14

echo "lint: ruff"
"$PY" -m ruff check torchair_ge tests bench examples scripts
echo "lint: clang-format"
git ls-files 'csrc/*.cc' 'csrc/*.h' 'tests/cpp/*.cc' 'examples/*.cc' 'examples/*.c' 'torchair_ge/include/*.h' |
  xargs clang-format-14 --style=file --dry-run --Werror
echo "lint: layer rules"
"$PY" scripts/check_layers.py
echo "lint: clang-tidy (function size) over csrc/ge"
git ls-files 'csrc/ge/*.cc' | xargs -P "$(nproc)" -n 8 clang-tidy-14 -p "$BUILD" --quiet 2>&1 |
  grep -v "warnings generated\|^Suppressed\|^Use -header-filter\|^$" | tee "$BUILD/clang_tidy.log" || true
if grep -q "error:" "$BUILD/clang_tidy.log"; then exit 1; fi
echo "lint: clean"
