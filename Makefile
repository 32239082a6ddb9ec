# The two commands the README opens with: `make demo` and `make test`.
# Each does its own set-up (scripts/setup.sh) and an incremental build.
PY    ?= python3
BUILD ?= build
JOBS  ?= $(shell nproc)

.PHONY: all setup build demo test test-full test-cpp test-python test-asan test-tsan lint bench fuzz clean

all: build

setup:
	@PY=$(PY) bash scripts/setup.sh

build: setup
	@PY=$(PY) BUILD=$(BUILD) JOBS=$(JOBS) bash scripts/build.sh

demo: build
	$(PY) examples/quickstart.py

test: build
	$(MAKE) --no-print-directory test-cpp test-python

# Everything `make test` runs, with the OpInfo sweep over every sample (not a subset), which
# also rewrites docs/supported_ops.md, every architecture of the transformers suite, the soak
# test (tests/python/test_soak.py), a fuzzing run and the sanitizer builds (ASan+UBSan, TSan).
test-full: build
	$(MAKE) --no-print-directory test-cpp
	TORCHAIR_GE_BUILD=$(abspath $(BUILD)) TORCHAIR_GE_FULL_SWEEP=1 TORCHAIR_GE_FULL_MODELS=1 TORCHAIR_GE_SOAK=1 \
	  $(PY) -m pytest -q tests/python tests/models
	$(PY) tests/opinfo_sweep.py
	FUZZ_SECONDS=60 PY=$(PY) bash scripts/fuzz.sh
	$(MAKE) --no-print-directory test-asan test-tsan

# ruff, clang-format, the engine's layer rules (the build checks them too) and clang-tidy's
# function-size check; builds first for clang-tidy's compile_commands.json.
lint: build
	@PY=$(PY) BUILD=$(BUILD) bash scripts/lint.sh

# The suite under sanitizers, each in its own build directory (scripts/sanitize.sh;
# docs/reliability.md): ASan + UBSan over ctest and a pytest subset; TSan over the concurrency tests.
test-asan:
	@PY=$(PY) JOBS=$(JOBS) bash scripts/sanitize.sh address

test-tsan:
	@PY=$(PY) JOBS=$(JOBS) bash scripts/sanitize.sh thread

test-cpp:
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

test-python:
	TORCHAIR_GE_BUILD=$(abspath $(BUILD)) $(PY) -m pytest -q tests/python tests/models

# Eager vs Inductor vs torchair_ge (vs ONNX Runtime) on the model zoo: bench/results/latest.{md,json,png}.
bench: build
	@PY=$(PY) bash scripts/setup_bench.sh
	$(PY) -m bench $(BENCH_ARGS)

# libFuzzer harnesses of the engine's parsers (model files, graph texts, op-plugin metadata,
# .npy), built by clang with ASan/UBSan in build-fuzz/: FUZZ_SECONDS each (default 60).
fuzz: build
	@PY=$(PY) bash scripts/fuzz.sh

clean:
	rm -rf $(BUILD) build-fuzz build-asan build-tsan torchair_ge/_C*.so
