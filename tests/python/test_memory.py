"""Memory planning end to end: zoo models give eager's numbers with reuse on and off, and the
arena stays within 1.10x of the live-bytes lower bound."""
import pytest
import torch

import torchair_ge
from bench import models as zoo


@pytest.mark.parametrize("entry", zoo.get(), ids=lambda e: e.name)
def test_arena_near_the_bound_and_reuse_off_matches(entry):
    reports = {}
    for reuse in (True, False):
        model, inputs = entry.build()
        reference, ref_inputs = entry.build()
        config = torchair_ge.CompilerConfig()
        config.ge_config.memory_reuse = reuse
        backend = torchair_ge.get_npu_backend(compiler_config=config)
        torch._dynamo.reset()
        with torch.no_grad():
            got = torch.compile(model, backend=backend, dynamic=False)(*inputs)
            torch.testing.assert_close(got, reference(*ref_inputs), rtol=1e-3, atol=1e-3)
        (reports[reuse],) = backend.compiler.reports
    on, off = reports[True], reports[False]
    assert off["arena_bytes"] == off["arena_no_reuse"] >= on["arena_bytes"]
    if on["ir_ops"].get("Reshape"):
        assert on["view_values"] > 0  # reshapes read their input's bytes
    assert off["view_values"] == off["inplace_values"] == 0
    assert on["arena_bytes"] <= 1.10 * on["arena_lower_bound"], on
    # With reuse on, reshapes are views: fewer values need bytes of their own at all.
    assert on["arena_no_reuse"] <= off["arena_no_reuse"]


class _Slicer(torch.nn.Module):
    """Row slices, a select and a chunk that each take one contiguous block, next to column
    slices that cannot."""

    def forward(self, x, cache):
        h = torch.tanh(x)                      # [6, 8]: arena
        top, bottom = h.chunk(2, dim=0)        # two contiguous row blocks of h
        first = x[0]                           # a row of the caller's input
        window = cache[:, 1:3]                 # [1, 2, 8] of [1, 4, 8]: leading dim 1, contiguous
        left = h[:, :4]                        # columns: strided, a copy
        return top * bottom + first, window.sum(-1) + left.sum(), torch.relu(bottom[1:]).mean()


def test_contiguous_slices_are_views_with_eager_numbers():
    x, cache = torch.randn(6, 8), torch.randn(1, 4, 8)
    reports = {}
    for reuse in (True, False):
        config = torchair_ge.CompilerConfig()
        config.ge_config.memory_reuse = reuse
        config.experimental_config.enable_autofuse = False  # fused kernels would read some slices themselves
        backend = torchair_ge.get_npu_backend(compiler_config=config)
        torch._dynamo.reset()
        got = torch.compile(_Slicer(), backend=backend, dynamic=False)(x, cache)
        torch.testing.assert_close(got, _Slicer()(x, cache))
        (reports[reuse],) = backend.compiler.reports
    # top, bottom, x[0], the cache window and bottom[1:] read their source's bytes.
    assert reports[True]["view_values"] >= 5, reports[True]
    assert reports[False]["view_values"] == 0
    assert reports[True]["tasks"] < reports[False]["tasks"]


def test_permuted_inputs_are_read_in_their_own_layout():
    # A transposed weight (as AOT autograd saves it for the backward), a channels-last image and a
    # permuted activation: the engine takes each in the layout it has (no copy before the run);
    # the transpose back folds into the product's flags or runs inside the graph.
    def f(x, weight_t, image, conv_weight, permuted):
        return torch.relu(x @ weight_t), torch.nn.functional.conv2d(image, conv_weight), permuted * 2

    args = (torch.randn(4, 8), torch.randn(16, 8).t(), torch.randn(2, 3, 6, 6).to(memory_format=torch.channels_last),
            torch.randn(5, 3, 3, 3), torch.randn(3, 4, 5).permute(2, 0, 1))
    backend = torchair_ge.get_npu_backend()
    torch._dynamo.reset()
    got = torch.compile(f, backend=backend, dynamic=False)(*args)
    torch.testing.assert_close(got, f(*args))
    (report,) = backend.compiler.reports
    assert report["ir_ops"]["Transpose"] == 3 and report["passes_fired"].get("TransposeMatMulFold"), report
    # A call whose input has other strides than at compile time is still right (Dynamo recompiles
    # on strides; the engine makes an input contiguous when the permutation does not).
    contiguous = tuple(a.contiguous() for a in args)
    torch.testing.assert_close(torch.compile(f, backend=backend, dynamic=False)(*contiguous), f(*contiguous))


def test_dense_layout_finds_the_permutation_of_dense_tensors_only():
    from torchair_ge.fx2ge.interpreter import dense_layout
    assert dense_layout(torch.empty(4, 8)) is None
    assert dense_layout(torch.empty(16, 8).t()) == [1, 0]
    assert dense_layout(torch.empty(2, 3, 4, 5).to(memory_format=torch.channels_last)) == [0, 2, 3, 1]
    assert dense_layout(torch.empty(8, 1, 4).permute(2, 1, 0)) == [1, 2, 0]  # a size-1 dim goes anywhere
    assert dense_layout(torch.empty(8, 8)[:, :4]) is None  # a column slice is not dense
    assert dense_layout(torch.empty(8, 8)[::2].t()) is None
