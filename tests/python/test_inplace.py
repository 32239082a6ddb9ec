"""Input mutations: the engine writes the caller's tensors (no copy-back by AOT autograd), and
the static KV-cache pattern updates only the new rows, in place."""
import torch

import torchair_ge
from bench.models import ZOO


def test_decode_kv_cache_is_updated_in_place_like_eager():
    entry = ZOO["gpt_decode"]
    reference, _ = entry.build()
    model, _ = entry.build()
    backend = torchair_ge.get_npu_backend()
    compiled = torch.compile(model, backend=backend, dynamic=False)
    caches = [(layer.attention.k_cache, layer.attention.v_cache) for layer in model.layers]
    pointers = [(k.data_ptr(), v.data_ptr()) for k, v in caches]
    with torch.no_grad():
        for step, position in enumerate([100, 101, 102, 103]):
            args = (torch.tensor([[7 + step]]), torch.tensor([position]))
            torch.testing.assert_close(compiled(*args), reference(*args))
    for layer, ref_layer, (k, v), (k_ptr, v_ptr) in zip(model.layers, reference.layers, caches, pointers):
        assert layer.attention.k_cache is k and k.data_ptr() == k_ptr and v.data_ptr() == v_ptr  # same storage
        torch.testing.assert_close(k, ref_layer.attention.k_cache)
        torch.testing.assert_close(v, ref_layer.attention.v_cache)
    (report,) = backend.compiler.reports
    assert report["ir_ops"]["InplaceIndexCopy"] == 16  # k and v of 8 layers, written row by row
    assert "Assign" not in report["ir_ops"], "no whole-cache copy"
    assert report["fallback_nodes"] == 0 and len(report["mutated_inputs"]) == 16


def test_general_input_mutations_match_eager():
    def f(x, y, z):
        x.add_(y)                  # whole-tensor update
        z[:, :2].copy_(y[:, :2])   # update of a slice of an input
        return x * 2 + z.sum()

    args = [torch.randn(3, 4), torch.randn(3, 4), torch.randn(3, 4)]
    expected_args = [a.clone() for a in args]
    backend = torchair_ge.get_npu_backend()
    compiled = torch.compile(f, backend=backend, dynamic=False, fullgraph=True)
    with torch.no_grad():
        torch.testing.assert_close(compiled(*args), f(*expected_args))
    for got, want in zip(args, expected_args):
        torch.testing.assert_close(got, want)
    (report,) = backend.compiler.reports
    assert report["ir_ops"]["Assign"] == 2 and sorted(report["mutated_inputs"]) == [0, 2]


def test_strided_input_updated_in_place_is_written_back():
    def f(x):
        x.mul_(3)
        return x + 1

    base = torch.randn(4, 5)
    expected_base = base.clone()
    compiled = torch.compile(f, backend=torchair_ge.get_npu_backend(), dynamic=False)
    with torch.no_grad():
        torch.testing.assert_close(compiled(base.t()), f(expected_base.t()))
    torch.testing.assert_close(base, expected_base)


def test_module_buffer_counter():
    class Counter(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("steps", torch.zeros(1))

        def forward(self, x):
            self.steps += 1
            return x * self.steps

    model, reference = Counter(), Counter()
    compiled = torch.compile(model, backend=torchair_ge.get_npu_backend(), dynamic=False)
    x = torch.randn(3)
    with torch.no_grad():
        for _ in range(3):
            torch.testing.assert_close(compiled(x), reference(x))
    assert model.steps.item() == 3


import pytest  # noqa: E402


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64])
@pytest.mark.parametrize("dim,positions", [(2, [5]), (2, [0, 7, 3]), (0, [1]), (1, [2, 0]), (-1, [3, 1])])
@pytest.mark.parametrize("contiguous_update", [True, False])
def test_index_copy_into_a_cache_matches_eager(dtype, dim, positions, contiguous_update):
    """The engine copies index_copy_'s slices itself (inplace_kernels.cc, SliceCopy): any dim,
    several positions, an update that is contiguous (runs copied whole) or a transposed view
    (element by element), other dtypes."""
    def f(cache, update, index):
        cache.index_copy_(dim, index, update)
        return cache.to(torch.float32) * 2

    shape = [2, 3, 8, 4]
    cache = (torch.arange(64 * 3) % 7).reshape(shape).to(dtype)
    update_shape = list(shape)
    update_shape[dim] = len(positions)
    count = torch.Size(update_shape).numel()
    if contiguous_update:
        update = (torch.arange(count) % 11 + 20).reshape(update_shape).to(dtype)
    else:  # the same shape, every stride reversed
        update = (torch.arange(count) % 11 + 20).reshape(update_shape[::-1]).to(dtype).permute(3, 2, 1, 0)
        assert not update.is_contiguous()
    index = torch.tensor(positions)
    expected_cache = cache.clone()
    compiled = torch.compile(f, backend=torchair_ge.get_npu_backend(), dynamic=False, fullgraph=True)
    with torch.no_grad():
        expected = f(expected_cache, update, index)
        torch.testing.assert_close(compiled(cache, update, index), expected)
    torch.testing.assert_close(cache, expected_cache, rtol=0, atol=0)


def test_index_copy_out_of_bounds_is_eagers_error():
    def f(cache, index, update):
        cache.index_copy_(2, index, update)
        return cache * 2

    cache, update = torch.zeros(1, 2, 4, 3), torch.ones(1, 2, 1, 3)
    compiled = torch.compile(f, backend=torchair_ge.get_npu_backend(), dynamic=False)
    with torch.no_grad():
        compiled(cache, torch.tensor([1]), update)
        with pytest.raises(Exception, match=r"index_copy_\(\): index 5 is out of bounds for dimension 2 with size 4"):
            compiled(cache, torch.tensor([5]), update)
