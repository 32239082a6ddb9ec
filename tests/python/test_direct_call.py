"""Inference graphs called without AOT autograd's runtime wrapper (torchair_ge/direct_call.py):
taken only where that wrapper would do nothing, and every case it handles keeps it."""
import sys

import torch

import torchair_ge
from bench.models.mlp import MLP


def _compile(fn, **kwargs):
    backend = torchair_ge.get_npu_backend()
    return torch.compile(fn, backend=backend, fullgraph=True, **kwargs), backend


def _python_calls(fn, wanted, *args):
    """fn(*args), and the names of the Python functions `wanted(code)` picks that ran meanwhile."""
    calls = []

    def profile(frame, event, arg):
        if event == "call" and wanted(frame.f_code):
            calls.append(frame.f_code.co_name)

    sys.setprofile(profile)
    try:
        result = fn(*args)
    finally:
        sys.setprofile(None)
    return result, calls


def _aot_wrapper_calls(fn, *args):
    """How many times AOT autograd's runtime wrapper runs during fn(*args)."""
    result, calls = _python_calls(fn, lambda code: code.co_name in ("runtime_wrapper", "_runtime_wrapper"), *args)
    return result, len(calls)


def _compiled_mlp():
    torch.manual_seed(0)
    model, x = MLP(width=64, in_features=32).eval(), torch.randn(8, 32)
    return model, x, *_compile(model, dynamic=False)


def test_a_static_inference_graph_skips_aots_wrapper_after_its_first_call():
    model, x, compiled, backend = _compiled_mlp()
    with torch.no_grad():
        expected = model(x)
        first, first_calls = _aot_wrapper_calls(compiled, x)  # AOT's one-time checks run here
        later, later_calls = _aot_wrapper_calls(compiled, x)
    torch.testing.assert_close(first, expected)
    torch.testing.assert_close(later, expected)
    assert backend.compiler.reports[-1]["aot_wrapper"] == []
    assert first_calls > 0 and later_calls == 0  # the probe sees the wrapper when it runs


def _frames_in(fn, filename, *args):
    """fn(*args), and the Python functions of `filename` (a torchair_ge module) that ran meanwhile."""
    return _python_calls(fn, lambda code: code.co_filename.endswith(filename), *args)


def test_a_plain_graph_runs_the_engine_straight_and_torch_profiler_still_sees_it():
    model, x, compiled, _ = _compiled_mlp()
    with torch.no_grad():
        expected = model(x)
        compiled(x)
        out, calls = _frames_in(compiled, "concrete_graph.py", x)
        torch.testing.assert_close(out, expected)
        assert calls == []  # ConcreteGraph.plain_run's callable: no Python frame of the graph's own
        with torch.profiler.profile() as prof:
            out, calls = _frames_in(compiled, "concrete_graph.py", x)
    torch.testing.assert_close(out, expected)
    assert "__call__" in calls  # under the profiler the call goes through the graph's span
    assert any(e.name.startswith("torchair_ge::graph_") for e in prof.events())


def test_grad_enabled_inference_graph_returns_outputs_without_history():
    def f(x, y):
        return torch.relu(x @ y) + 1

    x, y = torch.randn(4, 5), torch.randn(5, 3)
    compiled, backend = _compile(f, dynamic=False)
    for _ in range(2):
        out = compiled(x, y)
    torch.testing.assert_close(out, f(x, y))
    assert not out.requires_grad and out.grad_fn is None
    assert backend.compiler.reports[-1]["aot_wrapper"] == []


def test_inputs_written_in_the_graph_are_bumped_like_eager():
    def f(x, y):
        x.add_(y)
        return x * 2

    x, y = torch.randn(3, 4), torch.randn(3, 4)
    x_eager = x.clone()
    compiled, backend = _compile(f, dynamic=False)
    with torch.no_grad():
        for _ in range(3):
            before, before_eager = x._version, x_eager._version
            out, calls = _aot_wrapper_calls(compiled, x, y)
            expected = f(x_eager, y)
            torch.testing.assert_close(out, expected)
            torch.testing.assert_close(x, x_eager)
            assert x._version - before >= 1 and x_eager._version - before_eager >= 1  # autograd sees the write
    assert calls == 0 and backend.compiler.reports[-1]["aot_wrapper"] == []


def test_dynamic_sizes_skip_the_wrapper_and_keep_dynamos_hints():
    torch.manual_seed(0)
    model = MLP(width=32, in_features=16).eval()
    compiled, backend = _compile(model, dynamic=True)
    with torch.no_grad():
        for batch in (3, 5, 7, 5):
            x = torch.randn(batch, 16)
            out = compiled(x)
            torch.testing.assert_close(out, model(x))
    assert backend.compiler.reports[-1]["aot_wrapper"] == []
    assert getattr(out, "_dynamo_propagated_dynamic_indices", None) == {0}  # as AOT's wrapper marks it


def test_an_output_aliasing_an_input_keeps_the_wrapper():
    def f(x):
        return x.view(-1), x * 2

    x = torch.randn(3, 4)
    compiled, backend = _compile(f, dynamic=False)
    with torch.no_grad():
        got = compiled(x)
    torch.testing.assert_close(got, f(x))
    assert got[0].data_ptr() == x.data_ptr()
    assert any("aliasing an input" in r for r in backend.compiler.reports[-1]["aot_wrapper"])


def test_mutations_applied_after_the_graph_keep_the_wrapper():
    def f(x, y):
        x.mul_(y)
        return x + 1

    config = torchair_ge.CompilerConfig()
    config.experimental_config.keep_inference_input_mutations = False
    backend = torchair_ge.get_npu_backend(compiler_config=config)
    compiled = torch.compile(f, backend=backend, fullgraph=True, dynamic=False)
    x, y = torch.randn(3, 4), torch.randn(3, 4)
    x_eager = x.clone()
    with torch.no_grad():
        for _ in range(2):
            torch.testing.assert_close(compiled(x, y), f(x_eager, y))
            torch.testing.assert_close(x, x_eager)
    assert any("applied after the graph" in r for r in backend.compiler.reports[-1]["aot_wrapper"])


def test_aliased_inputs_aot_merges_keep_the_wrapper():
    def f(a, b):
        a.add_(1)
        return b * 2

    a = torch.randn(4, 4)
    a_eager = a.clone()
    compiled, backend = _compile(f, dynamic=False)
    with torch.no_grad():
        for _ in range(2):
            torch.testing.assert_close(compiled(a, a[0]), f(a_eager, a_eager[0]))
            torch.testing.assert_close(a, a_eager)
    assert any("changed the inputs" in r for r in backend.compiler.reports[-1]["aot_wrapper"])


def test_autocast_keeps_the_wrapper():
    def f(x, y):
        return (x @ y).float() + 1

    x, y = torch.randn(8, 16), torch.randn(16, 8)
    compiled, backend = _compile(f, dynamic=False)
    with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
        got, expected = compiled(x, y), f(x, y)
    torch.testing.assert_close(got, expected, atol=0.1, rtol=0.02)
    assert any("autocast" in r for r in backend.compiler.reports[-1]["aot_wrapper"])


def test_a_training_graph_is_not_an_inference_graph():
    torch.manual_seed(0)
    model = MLP(width=16, in_features=8)
    compiled, backend = _compile(model, dynamic=False)
    compiled(torch.randn(4, 8)).sum().backward()
    assert all("aot_wrapper" not in report for report in backend.compiler.reports)
    assert all(p.grad is not None for p in model.parameters())


def test_outputs_viewing_another_output_share_its_memory_as_in_eager():
    def f(x):
        y = x * 2
        return y.t(), y, y[1:].view(-1)

    x = torch.randn(3, 4)
    compiled, backend = _compile(f, dynamic=False)
    with torch.no_grad():
        for _ in range(2):
            got = compiled(x)
    torch.testing.assert_close(got, f(x))
    assert got[0].data_ptr() == got[1].data_ptr() and got[2].data_ptr() == got[1][1].data_ptr()
    got[1].add_(1)  # a write through one output is seen through the others, as in eager
    torch.testing.assert_close(got[0], got[1].t())
    torch.testing.assert_close(got[2], got[1][1:].reshape(-1))
    assert backend.compiler.reports[-1]["aot_wrapper"] == []
