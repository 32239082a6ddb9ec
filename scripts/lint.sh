#!/usr/bin/env bash
# Lint: ruff over the Python code and the engine's layer rules (scripts/check_layers.py).
# Installs ruff (pinned) when it is missing. Fails on the first category with a finding.
set -euo pipefail
PY=${PY:-python3}
cd "$(dirname "$0")/.."
RUFF_VERSION=0.17.6
if ! "$PY" -m ruff --version 2>/dev/null | grep -q "$RUFF_VERSION"; then
  echo "lint: installing ruff==$RUFF_VERSION"
  "$PY" -m pip install -q "ruff==$RUFF_VERSION" 2>&1 | grep -v "Running pip as the 'root' user" || true
fi
echo "lint: ruff"
"$PY" -m ruff check torchair_ge tests bench examples scripts
echo "lint: layer rules"
"$PY" scripts/check_layers.py
echo "lint: clean"
