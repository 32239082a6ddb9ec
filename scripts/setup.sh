#!/usr/bin/env bash
# Installs what the build and tests need and nothing else. Idempotent and quiet when all is there.
set -euo pipefail
PY=${PY:-python3}

deb_pkgs=(g++ make libprotobuf-dev protobuf-compiler libfmt-dev libgtest-dev ccache libxsimd-dev)
# libxsimd-dev: the SIMD library generated vector kernels include (compiled at run time)
missing=()
for p in "${deb_pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing Debian packages: ${missing[*]}"
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# torch is pinned: an unpinned torch pulls the CUDA build.
"$PY" - <<'PYEOF' || need_pip=1
import importlib.metadata as md, sys
want = {"torch": "2.13.0", "numpy": None, "pytest": None, "cmake": None, "ninja": None, "setuptools": None,
        "expecttest": None, "onnx": None, "transformers": "5.23.0"}
# expecttest: torch's OpInfo database; onnx: checks onnx dumps; transformers: generate() tests
for name, ver in want.items():
    try:
        have = md.version(name)
    except md.PackageNotFoundError:
        sys.exit(1)
    if ver and not have.startswith(ver):
        sys.exit(1)
PYEOF
if [ "${need_pip:-0}" = 1 ]; then
  echo "setup: installing Python packages"
  "$PY" -m pip install -q torch==2.13.0 numpy pytest cmake ninja "setuptools>=64" wheel expecttest onnx \
    transformers==5.23.0
fi
