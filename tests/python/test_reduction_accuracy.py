"""Generated float reductions sum in a cascade: over 2^20..2^26 elements their error against
float64 stays within 4x eager's (ATen sums in a cascade too), in vector and in block kernels.
A single accumulator per lane would drift (relative error ~1e-6 at 2^22) and stop growing once
it is 2^24 times its addends."""
import pathlib

import pytest
import torch

import torchair_ge


def _compile(fn, codegen):
    config = torchair_ge.CompilerConfig()
    config.experimental_config.kernel_codegen = codegen
    backend = torchair_ge.get_npu_backend(compiler_config=config)
    torch._dynamo.reset()
    return torch.compile(fn, backend=backend, dynamic=False), backend.compiler.reports


def _relative_error(value, reference):
    return ((value.double() - reference).abs() / reference.abs().clamp_min(1e-30)).max().item()


def _allowed(eager_error, reference):
    # The float result's own rounding (half an ulp) is the least any sum can promise; eager is
    # sometimes luckier than that, which says nothing about its summation order.
    rounding = torch.finfo(torch.float32).eps / 2
    return 4 * max(eager_error, rounding)


def _fused_source(reports):
    sources = [r["autofuse"]["source"] for r in reports if r["autofuse"]["kernels"]]
    assert sources, "the reduction was not fused into a generated kernel"
    return pathlib.Path(sources[0]).read_text()


@pytest.mark.parametrize("codegen", ["vector", "blocks"])
@pytest.mark.parametrize("log2_size", [20, 22, 24, 26])
def test_a_long_sum_is_as_accurate_as_eager(codegen, log2_size):
    def f(x):
        return (x * 2 + 1).sum()

    torch.manual_seed(log2_size)
    x = torch.randn(2**log2_size)
    reference = f(x.double())
    compiled, reports = _compile(f, codegen)
    with torch.no_grad():
        ours = compiled(x)
    eager_error = _relative_error(f(x), reference)
    assert _relative_error(ours, reference) <= _allowed(eager_error, reference)
    source = _fused_source(reports)
    assert ("GeSum" in source) == (codegen == "vector")  # the kernel style that was asked for ran


@pytest.mark.parametrize("codegen", ["vector", "blocks"])
def test_row_means_and_variances_are_as_accurate_as_eager(codegen):
    def f(x):
        return x.mean(-1), (x - x.mean(-1, keepdim=True)).square().mean(-1)

    torch.manual_seed(0)
    x = torch.randn(8, 2**21) * 3 + 10  # a large mean: the sum grows far past its addends
    compiled, _ = _compile(f, codegen)
    with torch.no_grad():
        ours = compiled(x)
    references = f(x.double())
    for got, eager, reference in zip(ours, f(x), references):
        assert _relative_error(got, reference) <= _allowed(_relative_error(eager, reference), reference)
