#!/usr/bin/env bash
# Installs what the build and tests need and nothing else. Idempotent and quiet when all is there.
set -euo pipefail
PY=${PY:-python3}

deb_pkgs=(g++ make libprotobuf-dev protobuf-compiler libfmt-dev libgtest-dev ccache libxsimd-dev libssl-dev libdnnl-dev libxxhash-dev)
# libxsimd-dev: the SIMD library generated vector kernels include (compiled at run time);
# libssl-dev: OpenSSL's HMAC, which authenticates kernel-cache entries;
# libdnnl-dev: oneDNN, whose convolution primitives the CPU device runs on its own buffers;
# libxxhash-dev: XXH3, the digest that tells a weight that is an input changed since it was packed
source "$(dirname "$0")/debian.sh"
ensure_debian_packages setup "${deb_pkgs[@]}"

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
