"""MLP and CNN end to end: eager numbers at default fp32 tolerances, one engine graph, no breaks."""
import pytest
import torch
import torch._dynamo
from torch._dynamo.utils import counters

import torchair_ge
from conftest import check_against_eager
from bench.models.mlp import MLP
from bench.models.resnet import small_resnet


@pytest.mark.parametrize("batch", [1, 64])
def test_mlp_matches_eager(batch):
    torch.manual_seed(0)
    model = MLP(width=256, in_features=64).eval()
    check_against_eager(model, torch.randn(batch, 64))


@pytest.mark.parametrize("batch,size", [(1, 64), (4, 48), (2, 37)])
def test_cnn_matches_eager(batch, size):
    torch.manual_seed(0)
    model = small_resnet()
    check_against_eager(model, torch.randn(batch, 3, size, size))


def test_cnn_is_one_engine_graph():
    torch.manual_seed(0)
    model = small_resnet()
    compiled_graphs = []
    inner = torchair_ge.get_compiler()

    def counting_compiler(gm, example_inputs):
        compiled = inner(gm, example_inputs)
        compiled_graphs.append(compiled)
        return compiled

    from torch._dynamo.backends.common import aot_autograd
    from torchair_ge.decompositions import default_decompositions
    backend = aot_autograd(fw_compiler=counting_compiler, inference_compiler=counting_compiler,
                           decompositions=default_decompositions())
    counters.clear()
    compiled = torch.compile(model, backend=backend, dynamic=False)
    x = torch.randn(2, 3, 64, 64)
    with torch.no_grad():
        torch.testing.assert_close(compiled(x), model(x))
    assert counters["stats"]["unique_graphs"] == 1
    assert not counters["graph_break"], dict(counters["graph_break"])
    assert len(compiled_graphs) == 1
    summary = compiled_graphs[0].summary
    assert summary["engines"]["native"] == summary["task_num"]
    # every convolution is a task of this one graph (each with its batch norm, residual add and ReLU
    # folded in: FusedConv2D), and so are the pools and the linear layer
    convolutions = sum(isinstance(m, torch.nn.Conv2d) for m in model.modules())
    assert convolutions > 10 and summary["task_num"] > convolutions


def test_repeated_runs_reuse_the_compiled_graph_and_stay_correct():
    torch.manual_seed(0)
    model = MLP(width=256, in_features=64).eval()
    compiled = torch.compile(model, backend=torchair_ge.get_npu_backend(), dynamic=False)
    with torch.no_grad():
        for seed in range(5):
            x = torch.randn(8, 64, generator=torch.Generator().manual_seed(seed))
            torch.testing.assert_close(compiled(x), model(x))
    assert counters["stats"]["unique_graphs"] == 1


def test_forward_in_grad_mode_matches_eager():
    # Without no_grad, AOT autograd hands over the training forward (which also returns what
    # backward saves); the MLP's forward is fully supported.
    torch.manual_seed(0)
    model = MLP(width=256, in_features=64).eval()
    x = torch.randn(4, 64)
    compiled = torch.compile(model, backend=torchair_ge.get_npu_backend(), dynamic=False)
    torch.testing.assert_close(compiled(x), model(x))


def test_cnn_training_forward_keeps_max_pool_indices_natively():
    # The training forward also returns the max-pool argmax indices for backward:
    # MaxPoolWithArgmaxV2 computes them, so every node runs natively.
    model = small_resnet()
    backend = torchair_ge.get_npu_backend()
    compiled = torch.compile(model, backend=backend, dynamic=False)
    x = torch.randn(1, 3, 32, 32)
    torch.testing.assert_close(compiled(x), model(x))
    (report,) = backend.compiler.reports
    assert report["fallback_ops"] == {} and report["ir_ops"]["MaxPoolWithArgmaxV2"] == 1, report


def test_named_backend():
    torch.manual_seed(0)
    model = MLP(width=256, in_features=64).eval()
    x = torch.randn(3, 64)
    compiled = torch.compile(model, backend="torchair_ge", dynamic=False)
    with torch.no_grad():
        torch.testing.assert_close(compiled(x), model(x))


def test_parameter_updates_are_seen_without_recompiling():
    # Parameters are graph inputs read in place, not constants baked in at compile time.
    model = torch.nn.Linear(4, 3).eval()
    compiled = torch.compile(model, backend=torchair_ge.get_npu_backend(), dynamic=False)
    x = torch.randn(2, 4)
    with torch.no_grad():
        compiled(x)
        model.weight.mul_(2)
        torch.testing.assert_close(compiled(x), model(x))


def test_concurrent_calls_from_python_threads():
    # The engine releases the GIL and gives each concurrent run its own arena.
    import threading
    torch.manual_seed(0)
    model = small_resnet()
    compiled = torch.compile(model, backend=torchair_ge.get_npu_backend(), dynamic=False)
    inputs = [torch.randn(1, 3, 32, 32, generator=torch.Generator().manual_seed(i)) for i in range(4)]
    with torch.no_grad():
        expected = [model(x) for x in inputs]
        compiled(inputs[0])  # compile once before the threads start
    errors = []

    def worker(i):
        try:
            with torch.no_grad():
                for _ in range(10):
                    torch.testing.assert_close(compiled(inputs[i]), expected[i])
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]
