"""The host-fallback engine: ops without a converter run through the torch dispatcher inside
the same engine graph (no graph break), and the compile report names them."""
import logging

import torch

import torchair_ge
from conftest import check_against_eager as _check_against_eager


def check_against_eager(fn, *inputs, **kwargs):
    """These tests are about the host-fallback engine: ops may (and some must) fall back."""
    return _check_against_eager(fn, *inputs, native_only=False, **kwargs)


def compile_and_report(fn, *inputs):
    backend = torchair_ge.get_npu_backend()
    compiled = torch.compile(fn, backend=backend, dynamic=False, fullgraph=True)
    with torch.no_grad():
        torch.testing.assert_close(compiled(*inputs), fn(*inputs))
    (report,) = backend.compiler.reports  # one graph: the fallback caused no break
    return report


def test_special_i0_runs_via_fallback_and_is_reported(caplog):
    with caplog.at_level(logging.INFO, logger="torchair_ge"):
        report = compile_and_report(lambda x: torch.special.i0(x) * 2 + 1, torch.randn(5, 3))
    assert report["fallback_ops"] == {"aten.i0.default": 1}
    # * 2 + 1 fuse into one generated kernel next to the fallback op.
    assert report["fallback_nodes"] == 1 and report["native_nodes"] == 1 and report["autofuse"]["kernels"] == 1
    assert "aten.i0.default x1" in caplog.text


def test_fallback_argument_kinds():
    x = torch.randn(4, 6)
    # int and optional dtype, scalar, list of ints, bool and float args, float list
    check_against_eager(lambda t: torch.cumsum(t, 1, dtype=torch.float64), x)
    check_against_eager(lambda t: torch.clamp(t, min=-0.5, max=0.5) + 1, x)
    check_against_eager(lambda t: torch.roll(t, shifts=[1, -2], dims=[0, 1]), x)
    check_against_eager(lambda t: torch.nn.functional.leaky_relu(t, 0.2), x)
    check_against_eager(lambda t: torch.nn.functional.interpolate(t[None, None], scale_factor=(2.0, 1.5), mode="bilinear"), x)
    check_against_eager(lambda t: torch.full((2, 3), 7.5) + t[:2, :3], x)


def test_fallback_multi_output_list_output_and_list_input():
    def f(x):
        values, indices = torch.sort(x, dim=-1, descending=True)
        first, second, third = torch.split(values, 2, dim=1)
        return torch.stack([first, second, third]).sum(0), indices

    check_against_eager(f, torch.randn(4, 6))


def test_fallback_optional_tensor_list_advanced_indexing():
    idx = torch.tensor([2, 0, 1])
    check_against_eager(lambda x: x[idx] * 2, torch.randn(4, 5))
    check_against_eager(lambda x: x[:, idx] + 1, torch.randn(4, 5))


def test_fallback_and_native_nodes_share_one_graph_with_integer_and_bool_outputs():
    def f(x):
        mask = x > 0
        return torch.where(mask, x, torch.zeros_like(x)) * 3, mask, torch.argmax(x, dim=1)

    check_against_eager(f, torch.randn(5, 7))


def test_fx_summary_csv_lists_native_and_fallback_ops(tmp_path):
    import csv
    config = torchair_ge.CompilerConfig()
    config.debug.fx_summary.type = "csv"
    config.debug.fx_summary.path = str(tmp_path)
    check_against_eager(lambda x: torch.special.i0(x) + torch.relu(x) + torch.relu(x * 2), torch.randn(4), config=config)
    (summary,) = tmp_path.iterdir()
    rows = {r["op"]: r for r in csv.DictReader(open(summary))}
    assert rows["aten.i0.default"]["engine"] == "host_fallback" and rows["aten.i0.default"]["count"] == "1"
    assert rows["aten.relu.default"]["engine"] == "native" and rows["aten.relu.default"]["count"] == "2"
