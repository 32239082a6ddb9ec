"""Data dump, accuracy compare (a planted converter bug is found and named), run_eagerly,
profiling (Chrome trace + op table that adds up to the run time), compile statistics, logs."""
import json
import logging
import os
import re
import subprocess
import sys
import time

import numpy as np
import pytest
import torch

import torchair_ge
from bench import models as zoo
from torchair_ge import _C, ge, register_fx_node_ge_converter
from torchair_ge.debug import compare_with_eager, load_data_dump, profile_report
from torchair_ge.fx2ge import registry
from conftest import check_against_eager, compile_with_ge

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(16, 16)
        self.norm = torch.nn.LayerNorm(16)

    def forward(self, x):
        h = torch.relu(self.fc(x))
        g = h * 0.5  # the op the planted bug breaks
        return self.norm(g + x).softmax(-1)


def make_block():
    torch.manual_seed(0)
    return Block().eval(), (torch.randn(4, 16),)


def test_data_dump_writes_every_task_output_per_step(tmp_path):
    config = torchair_ge.CompilerConfig()
    config.experimental_config.enable_autofuse = False  # every op its own task, each dumped
    config.debug.data_dump.type = "npy"
    config.debug.data_dump.path = str(tmp_path)
    model, (x,) = make_block()
    compiled = compile_with_ge(model, config)
    with torch.no_grad():
        compiled(x)
        compiled(x * 2)
    (graph_dir,) = tmp_path.iterdir()
    assert re.match(rf"graph_\d+_pid{os.getpid()}$", graph_dir.name)
    steps = sorted(p.name for p in graph_dir.iterdir())
    assert steps == ["step_000000", "step_000001"]
    first, second = (load_data_dump(str(graph_dir / s)) for s in steps)
    assert set(first) == set(second) and len(first) >= 6
    # The dumped ReLU output is exactly relu(fc(x)) of that step.
    relu = [name for name in first if name.lower().startswith("relu")]
    assert relu, sorted(first)
    with torch.no_grad():
        for dumped, inp in ((first, x), (second, x * 2)):
            want = torch.relu(model.fc(inp)).numpy()
            np.testing.assert_allclose(dumped[relu[0]][0], want, rtol=1e-5, atol=1e-6)


def test_data_dump_filter_picks_nodes_by_name_or_type(tmp_path):
    config = torchair_ge.CompilerConfig()
    config.debug.data_dump.type = "npy"
    config.debug.data_dump.path = str(tmp_path)
    config.debug.data_dump.filter = "^(SoftmaxV2|LayerNorm)$"
    config.experimental_config.enable_autofuse = False  # else they are inside fused kernels
    model, (x,) = make_block()
    with torch.no_grad():
        compile_with_ge(model, config)(x)
    (graph_dir,) = tmp_path.iterdir()
    dumped = load_data_dump(str(graph_dir / "step_000000"))
    assert len(dumped) == 2, sorted(dumped)
    with torch.no_grad():
        softmax = [v for k, v in dumped.items() if v[0].shape == (4, 16) and np.allclose(v[0].sum(-1), 1, atol=1e-5)]
        assert softmax  # the SoftmaxV2 output: rows sum to one


def test_data_dump_of_bfloat16_and_bool_reads_back():
    # bfloat16 is widened to float32 in .npy (NumPy has no bfloat16); bool stays bool.
    def f(x):
        return (x.to(torch.bfloat16) * 3).to(torch.float32), x > 0

    import tempfile
    with tempfile.TemporaryDirectory() as d:
        config = torchair_ge.CompilerConfig()
        config.debug.data_dump.type = "npy"
        config.debug.data_dump.path = d
        config.experimental_config.enable_autofuse = False  # the bf16 value lives inside a fused kernel otherwise
        x = torch.randn(5)
        check_against_eager(f, x, config=config)
        (graph_dir,) = os.listdir(d)
        dumped = load_data_dump(os.path.join(d, graph_dir, "step_000000"))
        arrays = [v[0] for v in dumped.values()]
        assert any(a.dtype == np.bool_ and (a == (x > 0).numpy()).all() for a in arrays)
        want = (x.to(torch.bfloat16) * 3).float().numpy()
        assert any(a.dtype == np.float32 and a.shape == (5,) and np.array_equal(a, want) for a in arrays)


def test_compare_with_eager_agrees_on_a_correct_graph():
    report = compare_with_eager(*(lambda m, i: (m, *i))(*make_block()))
    assert report.outputs_match and report.first_mismatch is None
    compared = [n for n in report.nodes if n.status == "ok"]
    assert len(compared) >= 6 and all(n.max_abs <= 1e-4 for n in compared)


def test_compare_with_eager_names_a_planted_converter_bug():
    op = torch.ops.aten.mul.Tensor
    original = registry.lookup_converter(op)

    @register_fx_node_ge_converter(op)
    def wrong_mul(self, other, *, meta_outputs=None):  # adds instead of multiplying
        other = other if isinstance(other, _C.EsTensor) else ge.Const(other, dtype=meta_outputs.dtype)
        return ge.Add(self, other)

    try:
        model, inputs = make_block()
        report = compare_with_eager(model, *inputs)
    finally:
        register_fx_node_ge_converter(op)(original)
    assert not report.outputs_match
    first = report.first_mismatch
    assert first is not None and first.target == "aten.mul.Tensor", str(report)
    assert first.ir_type == "Add" and first.shape == (4, 16) and first.max_abs > 0.1
    assert re.search(r"test_debug_tools.py:\d+ \| g = h \* 0.5", first.source), first.source
    # Everything before it matched.
    before = report.nodes[:report.nodes.index(first)]
    assert before and all(n.status in ("ok", "not dumped") for n in before)
    assert "first mismatch" in str(report) and "'mul'" in str(report)


def test_compare_cli(tmp_path):
    script = tmp_path / "target.py"
    script.write_text("import torch\n"
                      "def make():\n"
                      "    torch.manual_seed(0)\n"
                      "    return torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.GELU()).eval(), (torch.randn(3, 8),)\n")
    done = subprocess.run([sys.executable, "-m", "torchair_ge.debug", "compare", f"{script}:make"],
                          capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "no node differs beyond tolerance" in done.stdout
    bad = subprocess.run([sys.executable, "-m", "torchair_ge.debug", "compare", f"{script}:nothing"],
                         capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert bad.returncode != 0 and "defines no 'nothing'" in bad.stderr


def test_run_eagerly_skips_the_engine():
    config = torchair_ge.CompilerConfig()
    config.debug.run_eagerly = True
    backend = torchair_ge.get_npu_backend(compiler_config=config)
    f = torch.compile(lambda x: torch.special.erfcx(x) + 1, backend=backend, dynamic=False)
    x = torch.randn(6)
    torch.testing.assert_close(f(x), torch.special.erfcx(x) + 1)
    assert backend.compiler.reports == []  # nothing reached the engine


def test_profiling_trace_and_table_add_up_to_the_run_time(tmp_path):
    entry = zoo.ZOO["bert"]
    model, inputs = entry.build()
    config = torchair_ge.CompilerConfig()
    config.profiling.enable = True
    config.profiling.path = str(tmp_path)
    compiled = compile_with_ge(model, config)
    with torch.no_grad():
        compiled(*inputs)
        profile_report()  # the warm-up run is not measured
        wall = []
        for _ in range(5):
            start = time.perf_counter()
            compiled(*inputs)
            wall.append(time.perf_counter() - start)
    report = profile_report()
    assert report.runs == 5
    measured_us = sum(wall) * 1e6
    assert report.task_us <= measured_us
    assert report.task_us >= 0.9 * measured_us, report.table()   # within 10% of the measured time
    assert abs(report.task_us - report.run_us) <= 0.1 * report.run_us
    assert abs(sum(r.share for r in report.rows) - 1) < 1e-6
    # The block's matmuls run inside fused kernels (as their producers) or alone.
    matmul = next(r for r in report.rows if r.op_type in ("FusedKernel", "MatMulV2"))
    assert matmul.engine == "native" and matmul.count % 5 == 0 and matmul.average_us > 0

    trace_path, table_path = report.write(str(tmp_path))
    trace = json.load(open(trace_path))
    spans = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    assert all({"name", "ts", "dur", "pid", "tid"} <= set(e) and e["dur"] >= 0 for e in spans)
    runs = [e for e in spans if e["cat"] == "graph"]
    assert len(runs) == 5
    tasks = [e for e in spans if e["cat"] != "graph"]
    for run in runs:  # every task lies inside a run span
        inside = [t for t in tasks if run["ts"] <= t["ts"] and t["ts"] + t["dur"] <= run["ts"] + run["dur"] + 1e-3]
        assert len(inside) == len(tasks) // 5
    rows = open(table_path).read().splitlines()
    assert rows[0] == "op_type,engine,count,total_us,average_us,share" and len(rows) == len(report.rows) + 1


def test_graph_runs_show_up_in_torch_profiler():
    f = compile_with_ge(lambda x: torch.tanh(x) * 2)
    x = torch.randn(8)
    f(x)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        f(x)
    names = [e.name for e in prof.events()]
    assert any(re.match(r"torchair_ge::graph_\d+$", n) for n in names), names


def test_compile_statistics_json(tmp_path):
    config = torchair_ge.CompilerConfig()
    config.ge_config.export_compile_stat = True
    config.ge_config.compile_stat_path = str(tmp_path)
    model, (x,) = make_block()
    with torch.no_grad():
        compile_with_ge(model, config)(x)
    (path,) = tmp_path.iterdir()
    assert re.match(rf"compile_stat_graph_\d+_pid{os.getpid()}\.json$", path.name)
    stat = json.load(open(path))
    assert [s["name"] for s in stat["stages"]] == ["convert", "prepare", "optimize_original", "optimize_stage1",
                                                   "optimize_stage2", "collective_copies", "autofuse", "partition",
                                                   "memory", "final"]
    for s in stat["stages"]:
        assert s["ms"] >= 0 and s["nodes_after"] > 0
    assert stat["stages"][1]["nodes_before"] == stat["stages"][0]["nodes_after"]
    passes = {p["name"] for p in stat["passes"]}
    assert {"DeadCodeElimination", "NoOpElimination", "TransposeMatMulFold", "InferShape"} <= passes
    assert all(p["nodes_removed"] == p["nodes_before"] - p["nodes_after"] for p in stat["passes"])
    assert stat["memory"]["arena_bytes"] >= stat["memory"]["arena_lower_bound"] > 0
    assert stat["tasks"] == stat["engines"]["native"] and stat["fallback_ops"] == {}
    # The block's elementwise ops (and the matmuls feeding them) became generated kernels.
    assert stat["fused_groups"] == stat["autofuse"]["kernels"] >= 1 and stat["autofuse"]["fused_nodes"] >= 2


def test_log_lines_share_one_format(tmp_path):
    code = ("import torch, torchair_ge\n"
            "f = torch.compile(lambda x: x.relu() + 1, backend=torchair_ge.get_npu_backend(), dynamic=False)\n"
            "f(torch.randn(3)); f(torch.randn(3))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "TNG_LOG_LEVEL": "INFO"}, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith("[torchair_ge")]
    pattern = re.compile(r"\[torchair_ge (DEBUG|INFO|WARNING|ERROR|EVENT) (\d+):(\d+)\] [\w.]+:\d+ ")
    assert all(pattern.match(line) for line in lines), lines
    kinds = {pattern.match(line).group(1) + (":py" if ".py:" in line else ":cc") for line in lines}
    assert {"INFO:py", "EVENT:cc"} <= kinds, lines  # Python and engine lines, stage and run timings
    assert any("run:" in line and "us" in line for line in lines) and any("stage memory" in line for line in lines)
    quiet = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                           env={**os.environ, "TNG_LOG_LEVEL": "WARNING"}, cwd=ROOT)
    assert "[torchair_ge" not in quiet.stderr


def test_set_log_level_sets_both_sides():
    before = _C.log_level()
    try:
        torchair_ge.set_log_level("event")
        assert _C.log_level() == "EVENT" and logging.getLogger("torchair_ge").level == logging.INFO
        with pytest.raises(ValueError, match="unknown log level"):
            torchair_ge.set_log_level("LOUD")
    finally:
        torchair_ge.set_log_level(before)
        logging.getLogger("torchair_ge").setLevel(logging.WARNING)
