"""Auto-fusion end to end: zoo models match eager with fusion on and run fewer kernels; the
kernel cache hits on a second compile, rebuilds a corrupt entry, and a machine without a C++
compiler still runs every model (library kernels, one warning)."""
import os
import stat

import pytest
import torch

import torchair_ge
from bench import models as zoo


def _compile(model, inputs, **experimental):
    config = torchair_ge.CompilerConfig()
    for key, value in experimental.items():
        setattr(config.experimental_config, key, value)
    backend = torchair_ge.get_npu_backend(compiler_config=config)
    torch._dynamo.reset()
    with torch.no_grad():
        out = torch.compile(model, backend=backend, dynamic=False)(*inputs)
    return out, backend.compiler.reports


@pytest.mark.parametrize("entry", zoo.get(), ids=lambda e: e.name)
def test_zoo_models_match_eager_with_fewer_kernels(entry):
    model, inputs = entry.build()
    reference, ref_inputs = entry.build()
    with torch.no_grad():
        expected = reference(*ref_inputs)
    fused, fused_reports = _compile(model, inputs)
    torch.testing.assert_close(fused, expected, rtol=1e-3, atol=1e-3)
    model, inputs = entry.build()
    plain, plain_reports = _compile(model, inputs, enable_autofuse=False)
    torch.testing.assert_close(plain, expected, rtol=1e-3, atol=1e-3)
    fused_tasks = sum(r["tasks"] for r in fused_reports)
    plain_tasks = sum(r["tasks"] for r in plain_reports)
    assert all(not r["autofuse"]["fallback"] for r in fused_reports)
    assert all(r["autofuse"]["kernels"] == 0 for r in plain_reports)
    assert fused_tasks <= plain_tasks
    if entry.name in ("bert", "llama_block", "tiny_chain", "gpt_decode"):
        assert fused_tasks < plain_tasks


class _Block(torch.nn.Module):
    """A small transformer-ish block: layer norm, matmul + GELU (tanh) (a library epilogue: the
    product's), softmax, residual (generated kernels)."""

    def __init__(self, width=48):
        super().__init__()
        self.norm = torch.nn.LayerNorm(width)
        self.up = torch.nn.Linear(width, 2 * width)
        self.down = torch.nn.Linear(2 * width, width)

    def forward(self, x):
        h = torch.nn.functional.gelu(self.up(self.norm(x)), approximate="tanh")
        return x + self.down(h).softmax(-1) * torch.sigmoid(x)


def _block():
    torch.manual_seed(0)
    return _Block().eval(), (torch.randn(3, 17, 48),)


def test_cache_hits_on_the_second_compile_and_rebuilds_a_corrupt_entry(tmp_path, monkeypatch, caplog):
    monkeypatch.setenv("TORCHAIR_GE_CACHE_DIR", str(tmp_path / "cache"))
    model, inputs = _block()
    with torch.no_grad():
        expected = model(*inputs)
    out, (first,) = _compile(model, inputs)
    torch.testing.assert_close(out, expected, rtol=1e-4, atol=1e-5)
    info = first["autofuse"]
    assert info["kernels"] >= 1 and not info["cache_hit"] and info["build_ms"] > 0
    assert info["library"].startswith(str(tmp_path / "cache"))
    assert stat.S_IMODE(os.stat(tmp_path / "cache" / "kernels").st_mode) == 0o700
    assert "extern \"C\"" in open(info["source"]).read()

    out, (second,) = _compile(model, inputs)
    torch.testing.assert_close(out, expected, rtol=1e-4, atol=1e-5)
    assert second["autofuse"]["cache_hit"] and second["autofuse"]["library"] == info["library"]

    with open(info["library"], "r+b") as f:  # a torn write or a bit flip
        f.seek(100)
        f.write(b"\0garbage\0")
    out, (third,) = _compile(model, inputs)
    torch.testing.assert_close(out, expected, rtol=1e-4, atol=1e-5)
    assert not third["autofuse"]["cache_hit"] and third["autofuse"]["kernels"] == info["kernels"]


def test_without_a_compiler_the_model_runs_on_library_kernels(tmp_path, monkeypatch, capfd):
    monkeypatch.setenv("TORCHAIR_GE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("PATH", str(tmp_path))  # no c++, g++ or clang++ here
    monkeypatch.delenv("CXX", raising=False)
    model, inputs = _block()
    with torch.no_grad():
        expected = model(*inputs)
    out, (report,) = _compile(model, inputs)
    torch.testing.assert_close(out, expected, rtol=1e-4, atol=1e-5)
    assert report["autofuse"]["kernels"] == 0
    assert "no C++ compiler found" in report["autofuse"]["fallback"]
    assert "running library kernels instead" in capfd.readouterr().err


def test_switches_turn_generated_kernels_off(monkeypatch):
    model, inputs = _block()
    for switch in ({"enable_autofuse": False}, {"static_kernel_compile": False}):
        _, (report,) = _compile(model, inputs, **switch)
        assert report["autofuse"]["kernels"] == 0
    monkeypatch.setenv("AUTOFUSE_FLAGS", "--enable_autofuse=false")
    _, (report,) = _compile(model, inputs)
    assert report["autofuse"]["kernels"] == 0


def _fake_compiler(path, body):
    """A 'compiler' that answers --version like one and does `body` when asked to compile."""
    path.write_text("#!/bin/sh\nif [ \"$1\" = --version ]; then echo fake-c++ 1.0; exit 0; fi\n" + body + "\n")
    path.chmod(0o755)
    return str(path)


@pytest.mark.parametrize("body, reason", [("echo 'error: broken' >&2; exit 1", "failed (exit 1)"),
                                          ("sleep 30", "did not finish within 1 s")])
def test_a_failing_or_hanging_compiler_falls_back_to_library_kernels(tmp_path, monkeypatch, capfd, body, reason):
    monkeypatch.setenv("TORCHAIR_GE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("CXX", _fake_compiler(tmp_path / "fake-c++", body))
    monkeypatch.setenv("TORCHAIR_GE_KERNEL_COMPILE_TIMEOUT", "1")
    model, inputs = _block()
    with torch.no_grad():
        expected = model(*inputs)
    out, (report,) = _compile(model, inputs)
    torch.testing.assert_close(out, expected, rtol=1e-4, atol=1e-5)
    assert report["autofuse"]["kernels"] == 0 and reason in report["autofuse"]["fallback"]
    assert "running library kernels instead" in capfd.readouterr().err


def test_without_xsimd_the_kernels_are_written_as_blocks(tmp_path, monkeypatch, capfd):
    # A compiler on a machine without libxsimd-dev: every unit that includes xsimd fails with
    # the prelude's own #error line, as GCC reports it.
    monkeypatch.setenv("TORCHAIR_GE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("CXX", _fake_compiler(tmp_path / "fake-c++", (
        'for a; do last="$a"; done\n'
        'if grep -q "xsimd/xsimd.hpp" "$last"; then\n'
        '  echo "$last:3:2: error: $(grep -h -m1 "#error" "$last")"; exit 1\n'
        'fi\nexec g++ "$@"')))
    model, inputs = _block()
    with torch.no_grad():
        expected = model(*inputs)
    out, (report,) = _compile(model, inputs)
    torch.testing.assert_close(out, expected, rtol=1e-4, atol=1e-5)
    assert report["autofuse"]["kernels"] >= 1 and not report["autofuse"]["fallback"]
    source = open(report["autofuse"]["source"]).read()
    assert "GeV" not in source and "ge_fused_0" in source  # block kernels ran
    assert "xsimd headers not found" in capfd.readouterr().err


class _Gate(torch.nn.Module):
    """An MMoE gate: a masked softmax over four experts per row, weighted by the experts' scores
    (rows shorter than a vector: one row per lane, row_lanes_writer)."""

    def forward(self, logits, mask, scores):
        weights = torch.softmax(logits.masked_fill(mask, -1e4) * 0.5, dim=-1)
        return weights * scores, weights.amax(-1)


@pytest.mark.parametrize("rows", [512, 37])
def test_short_rows_run_one_row_per_lane(rows):
    torch.manual_seed(0)
    inputs = (torch.randn(rows, 4), torch.rand(rows, 4) > 0.7, torch.randn(rows, 4))
    with torch.no_grad():
        expected = _Gate()(*inputs)
    out, (report,) = _compile(_Gate(), inputs)
    for got, want in zip(out, expected):
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-6)
    assert report["autofuse"]["kernels"] == 1 and report["tasks"] == 1
    assert "_lanes(int64_t" in open(report["autofuse"]["source"]).read()


def test_short_rows_stay_in_lanes_when_the_row_count_varies():
    """The default torch.compile makes the row count dynamic at a second shape: the kernel then
    reads its sizes at run time and still runs the rows in lanes (their extent, 4, is every
    instance's); whole groups in lanes, the rest (all of 5 rows) through the row body."""
    backend = torchair_ge.get_npu_backend()
    torch._dynamo.reset()
    compiled = torch.compile(_Gate(), backend=backend)
    with torch.no_grad():
        for rows in (512, 37, 100, 5):
            torch.manual_seed(rows)
            inputs = (torch.randn(rows, 4), torch.rand(rows, 4) > 0.7, torch.randn(rows, 4))
            for got, want in zip(compiled(*inputs), _Gate()(*inputs)):
                torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-6)
    static, dynamic = backend.compiler.reports
    assert static["autofuse"]["size_expr_kernels"] == 0 and dynamic["autofuse"]["size_expr_kernels"] == 1
    assert "_lanes(int64_t" in open(dynamic["autofuse"]["source"]).read()


def test_the_cache_keeps_only_the_most_recently_used_entries(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCHAIR_GE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("TORCHAIR_GE_CACHE_MAX_ENTRIES", "2")
    libraries = []
    for width in (8, 16, 24):  # three different graphs, three cache entries
        torch.manual_seed(0)
        model, inputs = _Block(width).eval(), (torch.randn(2, 5, width),)
        with torch.no_grad():
            expected = model(*inputs)
        out, (report,) = _compile(model, inputs)
        torch.testing.assert_close(out, expected, rtol=1e-4, atol=1e-5)
        libraries.append(report["autofuse"]["library"])
    kept = sorted(p.name for p in (tmp_path / "cache" / "kernels").glob("*.so"))
    assert len(kept) == 2 and os.path.basename(libraries[0]) not in kept, kept
    assert all(os.path.basename(lib) in kept for lib in libraries[1:])


class _TwoKernels(torch.nn.Module):
    """Two generated kernels: a cumulative sum (a library op) between two softmax chains."""

    def forward(self, x):
        return (torch.cumsum((x.sin() * 2 + 1).softmax(-1), -1).exp() - 1).log_softmax(-1)


@pytest.mark.parametrize("cores", [1, 2])
def test_a_librarys_kernels_compile_side_by_side_one_unit_per_core(tmp_path, monkeypatch, cores):
    """Each usable core compiles a unit of the graph's kernels into an object, the objects are
    linked into the library; on one core the kernels are one compiler run, straight to it."""
    if len(os.sched_getaffinity(0)) < cores:
        pytest.skip(f"fewer than {cores} usable cores")
    log = tmp_path / "calls"
    compiler = tmp_path / "logging-c++"  # logs each call, then runs the real compiler
    compiler.write_text(f"#!/bin/sh\necho \"$*\" >> {log}\nexec c++ \"$@\"\n")
    compiler.chmod(0o755)
    monkeypatch.setenv("TORCHAIR_GE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("CXX", str(compiler))
    model, inputs = _TwoKernels(), (torch.randn(3, 17, 48),)
    with torch.no_grad():
        expected = model(*inputs)
    allowed = os.sched_getaffinity(0)
    os.sched_setaffinity(0, sorted(allowed)[:cores])
    try:
        out, (report,) = _compile(model, inputs)
    finally:
        os.sched_setaffinity(0, allowed)
    torch.testing.assert_close(out, expected, rtol=1e-4, atol=1e-5)
    assert report["autofuse"]["kernels"] >= 2 and not report["autofuse"]["cache_hit"]
    calls = [c for c in log.read_text().splitlines() if "--version" not in c and "c++-header" not in c]
    objects = [c for c in calls if " -c " in c]
    assert len(objects) == (cores if cores > 1 else 0), calls
    assert len(calls) == len(objects) + 1 and " -shared " in calls[-1] + " ", calls


class _GateUp(torch.nn.Module):
    """Phi-3's MLP: one product for gate and up, chunked in two, up * silu(gate), then down."""

    def __init__(self, width=32, hidden=40):
        super().__init__()
        self.gate_up = torch.nn.Linear(width, 2 * hidden, bias=False)
        self.down = torch.nn.Linear(hidden, width, bias=False)

    def forward(self, x):
        gate, up = self.gate_up(x).chunk(2, dim=-1)
        return self.down(up * torch.nn.functional.silu(gate))


def test_a_product_read_as_two_halves_stays_a_library_op():
    """The generated kernel reads the gate-up product twice (two slices): the product cannot
    run inside it as its producer (its output would fill one input's buffer, not the other's) and
    stays a library op -- compiling once failed with "cannot remove Reshape ... still has users"."""
    torch.manual_seed(0)
    model, x = _GateUp().eval(), torch.randn(2, 5, 32)
    backend = torchair_ge.get_npu_backend()
    with torch.no_grad():
        torch.testing.assert_close(torch.compile(model, backend=backend, dynamic=False)(x), model(x))
    fused = backend.compiler.reports[0]["autofuse"]
    assert fused["kernels"] >= 1 and fused["fused_nodes"] >= 4, fused  # both slices, silu and the multiply
