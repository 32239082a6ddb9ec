"""Bad input at compile and call time: clear errors naming the op/input/shape/dtype."""
import pytest
import torch
from torch.fx.experimental.proxy_tensor import make_fx

import torchair_ge
from conftest import compile_with_ge


def compiled_graph(fn, *example_inputs):
    """The engine's compiled object for `fn`, called directly (no Dynamo guards in between)."""
    gm = make_fx(fn, tracing_mode="fake")(*example_inputs)
    return torchair_ge.get_compiler()(gm, list(example_inputs))


def test_call_time_input_checks():
    graph = compiled_graph(lambda x, y: torch.relu(x) + y, torch.randn(2, 3), torch.randn(3))
    x, y = torch.randn(2, 3), torch.randn(3)
    torch.testing.assert_close(graph([x, y])[0], torch.relu(x) + y)
    # relu + add became one fused kernel; the node lists what it replaced.
    assert 'type: "FusedKernel"' in graph.graph_text() and "Relu:" in graph.graph_text()
    assert "_mem_offsets" in graph.graph_text()
    with pytest.raises(RuntimeError, match=r"takes 2 inputs, 1 given"):
        graph([x])
    with pytest.raises(RuntimeError, match=r"input 0: expected shape \[2,3\], got \[3,2\]"):
        graph([torch.randn(3, 2), y])
    with pytest.raises(RuntimeError, match=r"input 1: expected dtype DT_FLOAT, got DT_INT64"):
        graph([x, torch.ones(3, dtype=torch.int64)])
    with pytest.raises(RuntimeError, match=r"input 0 is on meta"):
        graph([torch.empty(2, 3, device="meta"), y])
    with pytest.raises(TypeError, match=r"input 1 is int, expected a tensor"):
        graph([x, 3])


def test_strided_inputs_are_accepted():
    graph = compiled_graph(lambda x: x * 2, torch.randn(3, 4))
    base = torch.randn(4, 3)
    torch.testing.assert_close(graph([base.t()])[0], base.t() * 2)


def test_outputs_that_are_inputs_come_back_as_the_same_tensor():
    graph = compiled_graph(lambda x, y: (x, y * 2), torch.randn(2), torch.randn(2))
    x, y = torch.randn(2), torch.randn(2)
    out = graph([x, y])
    assert out[0] is x
    torch.testing.assert_close(out[1], y * 2)


def test_ops_that_cannot_fall_back_are_named_with_reason_and_source_line():
    def complex_math(x):
        return torch.view_as_real(torch.view_as_complex(x) * 2)

    with pytest.raises(Exception) as info:
        compile_with_ge(complex_math)(torch.randn(4, 2))
    message = str(info.value)
    assert "cannot run on the host-fallback engine" in message
    assert "aten.view_as_complex.default: torch dtype torch.complex64 is not supported" in message
    assert "test_errors.py" in message and "complex_math" in message
    assert info.value.inner_exception.missing_ops == ["aten.view_as_complex.default"]


def test_reading_an_unproduced_output_moves_the_node_to_the_fallback_engine():
    def uses_indices(x):
        values, indices = torch.nn.functional.max_pool2d(x, 2, return_indices=True)
        return values + indices

    x = torch.randn(1, 1, 4, 4)
    with torch.no_grad():
        torch.testing.assert_close(compile_with_ge(uses_indices)(x), uses_indices(x))
