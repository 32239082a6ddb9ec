#!/usr/bin/env bash
# What `make bench` needs beyond `make build`: ONNX Runtime (+ the exporter's onnx/onnxscript),
# OpenVINO (its torch.compile backend) and matplotlib for the chart. Idempotent and quiet when
# all is there.
set -euo pipefail
PY=${PY:-python3}
missing=()
for mod in onnxruntime onnx onnxscript openvino matplotlib; do
  "$PY" -c "import $mod" 2>/dev/null || missing+=("$mod")
done
if ((${#missing[@]})); then
  echo "setup: installing bench packages: ${missing[*]}"
  # torch stays pinned: none of these may upgrade it.
  "$PY" -m pip install -q "${missing[@]}" torch==2.13.0 2>&1 | grep -v "Running pip as the 'root' user" || true
fi
