"""Every converter against eager PyTorch, over shapes (broadcasting, batch 1, odd sizes) and dtypes."""
import pytest
import torch
import torch.nn.functional as F

from conftest import check_against_eager, compile_with_ge

FLOATS = [torch.float32, torch.float16, torch.bfloat16]


def rand(*shape, dtype=torch.float32, positive=False, seed=0):
    g = torch.Generator().manual_seed(seed + sum(shape))
    if dtype in (torch.int64, torch.int32):
        return torch.randint(1 if positive else -5, 6, shape, generator=g, dtype=dtype)
    x = torch.randn(*shape, generator=g)
    return (x.abs() + 0.1 if positive else x).to(dtype)


BINARY_SHAPES = [((3, 5), (3, 5)), ((4, 1, 7), (6, 1)), ((1, 9), (9,)), ((2, 3, 1, 1), (1, 3, 4, 5))]
BINARY_OPS = {
    "add": torch.add,
    "sub": torch.sub,
    "mul": torch.mul,
    "div": torch.div,
    "maximum": torch.maximum,
    "minimum": torch.minimum,
    "add_alpha": lambda a, b: torch.add(a, b, alpha=2),
    "sub_alpha": lambda a, b: torch.sub(a, b, alpha=0.5),
}


@pytest.mark.parametrize("shapes", BINARY_SHAPES, ids=str)
@pytest.mark.parametrize("dtype", FLOATS + [torch.int64], ids=str)
@pytest.mark.parametrize("op", sorted(BINARY_OPS))
def test_binary(op, dtype, shapes):
    if dtype == torch.int64 and op == "sub_alpha":
        pytest.skip("torch rejects a float alpha for integer tensors")
    check_against_eager(BINARY_OPS[op], rand(*shapes[0], dtype=dtype), rand(*shapes[1], dtype=dtype, positive=True, seed=1))


SCALAR_OPS = {
    "add_scalar": lambda x: x + 2,
    "radd_float": lambda x: 0.25 + x,
    "rsub": lambda x: 1 - x,
    "mul_scalar": lambda x: x * 3,
    "div_scalar": lambda x: x / 4,
    "pow_2": lambda x: x ** 2,
    "pow_tensor": lambda x: torch.pow(x * x + 1, x * x),
    "scalar_pow": lambda x: torch.pow(2, x),
    "neg": lambda x: -x,
}


@pytest.mark.parametrize("dtype", FLOATS + [torch.int64], ids=str)
@pytest.mark.parametrize("op", sorted(SCALAR_OPS))
def test_scalar_and_unary_arithmetic(op, dtype):
    if dtype == torch.int64 and op in ("pow_tensor", "scalar_pow"):
        pytest.skip("integer powers with negative exponents are undefined in torch")
    check_against_eager(SCALAR_OPS[op], rand(2, 7, 3, dtype=dtype))


def test_mixed_dtype_promotion():
    # int64 + float32 -> float32, float16 * float32 -> float32, int / int -> float
    check_against_eager(lambda a, b: a + b, rand(3, 4, dtype=torch.int64), rand(3, 4))
    check_against_eager(lambda a, b: a * b, rand(3, 4, dtype=torch.float16), rand(3, 4))
    check_against_eager(lambda a, b: a / b, rand(3, 4, dtype=torch.int64), rand(3, 4, dtype=torch.int64, positive=True))
    check_against_eager(lambda a: a * 0.5, rand(5, dtype=torch.int64))


UNARY_OPS = {
    "relu": torch.relu,
    "gelu": F.gelu,
    "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"),
    "sigmoid": torch.sigmoid,
    "silu": F.silu,  # Swish (scale 1); a FusedMatMul epilogue after a product
    "tanh": torch.tanh,
    "exp": torch.exp,
    "log": lambda x: torch.log(x * x + 0.5),
    "sqrt": lambda x: torch.sqrt(x * x),
    "rsqrt": lambda x: torch.rsqrt(x * x + 0.1),
}


@pytest.mark.parametrize("shape", [(1,), (3, 17), (2, 5, 1, 3)], ids=str)
@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("op", sorted(UNARY_OPS))
def test_unary(op, dtype, shape):
    check_against_eager(UNARY_OPS[op], rand(*shape, dtype=dtype))


def test_unary_on_integers_promotes_to_float():
    check_against_eager(torch.exp, rand(4, 3, dtype=torch.int64))
    check_against_eager(torch.relu, rand(4, 3, dtype=torch.int64))


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
@pytest.mark.parametrize("m,k,n", [(1, 7, 3), (5, 16, 9), (33, 1, 2)])
def test_mm_addmm_linear(m, k, n, dtype):
    a, b, bias = rand(m, k, dtype=dtype), rand(k, n, dtype=dtype, seed=1), rand(n, dtype=dtype, seed=2)
    tol = {} if dtype == torch.float32 else dict(rtol=2e-2, atol=2e-2)
    check_against_eager(torch.mm, a, b, **tol)
    check_against_eager(torch.addmm, bias, a, b, **tol)
    check_against_eager(lambda bb, x, y: torch.addmm(bb, x, y, beta=0.5, alpha=2), rand(m, n, dtype=dtype), a, b, **tol)
    check_against_eager(F.linear, a, b.t().contiguous(), bias, **tol)


def test_linear_on_3d_input_and_bmm():
    check_against_eager(F.linear, rand(2, 5, 8), rand(4, 8, seed=1), rand(4, seed=2))
    check_against_eager(torch.bmm, rand(3, 4, 5), rand(3, 5, 2, seed=1))
    check_against_eager(lambda a, b: torch.bmm(a.transpose(1, 2), b), rand(1, 6, 4), rand(1, 6, 3, seed=1))


@pytest.mark.parametrize("groups,stride,padding,dilation,bias", [
    (1, 1, 0, 1, True), (1, 2, 1, 1, False), (2, 1, 2, 2, True), (4, (2, 1), (1, 0), 1, True)])
@pytest.mark.parametrize("batch", [1, 3])
def test_conv2d(batch, groups, stride, padding, dilation, bias):
    x = rand(batch, 4, 11, 9)
    w = rand(8, 4 // groups, 3, 3, seed=1)
    b = rand(8, seed=2) if bias else None
    check_against_eager(lambda x, w, b: F.conv2d(x, w, b, stride, padding, dilation, groups), x, w, b)


def test_conv2d_unbatched():
    check_against_eager(lambda x, w: F.conv2d(x, w, padding=1), rand(3, 8, 8), rand(5, 3, 3, 3, seed=1))


@pytest.mark.parametrize("kernel,stride,padding,ceil_mode",
                         [(2, None, 0, False), (3, 2, 1, False), (3, 2, 1, True), ((3, 2), (2, 1), (1, 0), False)])
def test_max_pool2d(kernel, stride, padding, ceil_mode):
    check_against_eager(lambda x: F.max_pool2d(x, kernel, stride, padding, ceil_mode=ceil_mode), rand(2, 3, 13, 10))
    # With the argmax (what training saves for the backward): MaxPoolWithArgmaxV2, indices too.
    check_against_eager(lambda x: F.max_pool2d(x, kernel, stride, padding, ceil_mode=ceil_mode, return_indices=True),
                        rand(2, 3, 13, 10))
    check_against_eager(lambda x: F.max_pool2d(x, kernel, stride, padding, ceil_mode=ceil_mode, return_indices=True),
                        rand(3, 13, 10))  # unbatched


@pytest.mark.parametrize("count_include_pad", [True, False])
@pytest.mark.parametrize("kernel,stride,padding,ceil_mode",
                         [(2, None, 0, False), (3, 2, 1, True), ((3, 3), (2, 2), (1, 1), False)])
def test_avg_pool2d(kernel, stride, padding, ceil_mode, count_include_pad):
    check_against_eager(lambda x: F.avg_pool2d(x, kernel, stride, padding, ceil_mode, count_include_pad), rand(1, 4, 11, 12))


@pytest.mark.parametrize("output_size", [1, (3, 5), (7, 2)], ids=str)
def test_adaptive_avg_pool2d(output_size):
    check_against_eager(lambda x: F.adaptive_avg_pool2d(x, output_size), rand(2, 3, 14, 11))


@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("shape", [(2, 3, 5, 5), (4, 6), (1, 3, 7, 2)], ids=str)
def test_batch_norm_inference(shape, affine):
    c = shape[1]
    mean, var = rand(c, seed=3), rand(c, positive=True, seed=4)
    weight, bias = (rand(c, seed=5), rand(c, seed=6)) if affine else (None, None)
    check_against_eager(lambda x: F.batch_norm(x, mean, var, weight, bias, training=False, eps=1e-3), rand(*shape))


@pytest.mark.parametrize("dim", [-1, 0, 1])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
def test_softmax(dim, dtype):
    check_against_eager(lambda x: torch.softmax(x, dim), rand(3, 17, dtype=dtype))


@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("shape,normalized", [((2, 5, 16), (16,)), ((3, 4, 6), (4, 6)), ((1, 33), (33,))], ids=str)
def test_layer_norm(shape, normalized, affine):
    w, b = (rand(*normalized, seed=1), rand(*normalized, seed=2)) if affine else (None, None)
    check_against_eager(lambda x: F.layer_norm(x, normalized, w, b, eps=1e-6), rand(*shape))


SHAPE_OPS = {
    "view": lambda x: x.view(6, -1) * 2,
    "reshape_transposed": lambda x: x.transpose(0, 1).reshape(-1) + 1,
    "flatten": lambda x: torch.flatten(x, 1) - 1,
    "unsqueeze_squeeze": lambda x: (x.unsqueeze(0) + 1).squeeze(0),
    "permute": lambda x: x.permute(2, 0, 1) * 3,
    "transpose": lambda x: x.transpose(-1, 0) + 0,
    "t": lambda x: torch.flatten(x, 1).t() * 2,
    "cat": lambda x: torch.cat([x, x * 2], dim=-1),
    "cat_dim0": lambda x: torch.cat([x * 2, x, x + 1]),
    "clone": lambda x: x.clone(),
    "sum_dims": lambda x: x.sum(dim=(0, 2)),
    "sum_keepdim": lambda x: x.sum(dim=-1, keepdim=True),
    "sum_all": lambda x: x.sum(),
    "mean_dim": lambda x: x.mean(dim=1),
    "mean_all": lambda x: x.mean(),
}


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16], ids=str)
@pytest.mark.parametrize("op", sorted(SHAPE_OPS))
def test_shape_and_reduce(op, dtype):
    tol = {} if dtype == torch.float32 else dict(rtol=2e-3, atol=2e-3)
    check_against_eager(SHAPE_OPS[op], rand(2, 3, 4, dtype=dtype), **tol)


def test_integer_reductions_and_casts():
    check_against_eager(lambda x: x.sum(dim=0), rand(4, 5, dtype=torch.int32))  # int32 sums to int64
    check_against_eager(lambda x: x.to(torch.float16) * 2, rand(4, 5))
    check_against_eager(lambda x: x.float() / 3, rand(4, 5, dtype=torch.int64))
    check_against_eager(lambda x: (x * 3.7).to(torch.int32), rand(4, 5))  # truncation toward zero
    check_against_eager(lambda x: torch.cat([x, x.to(torch.float64)]), rand(2, 3))
    # prims' conversion (decompositions leave it in graphs): native, as _to_copy
    check_against_eager(lambda x: torch.ops.prims.convert_element_type(x * 2.5, torch.int32) + 1, rand(4, 5))
    check_against_eager(lambda x: torch.ops.prims.convert_element_type(x, torch.float32) / 3,
                        rand(4, 5, dtype=torch.int64))


def test_layer_norm_statistics_outputs():
    x, w, b = rand(3, 8), rand(8, seed=1), rand(8, seed=2)
    check_against_eager(lambda x: torch.ops.aten.native_layer_norm(x, [8], w, b, 1e-5), x)


COMPARISONS = {
    "eq": torch.eq, "ne": torch.ne, "lt": torch.lt, "le": torch.le, "gt": torch.gt, "ge": torch.ge,
}


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int64], ids=str)
@pytest.mark.parametrize("op", sorted(COMPARISONS))
def test_comparisons(op, dtype):
    fn = COMPARISONS[op]
    a, b = rand(3, 4, dtype=dtype), rand(4, dtype=dtype, seed=1)
    b[0] = a[0, 0]  # some equal elements
    check_against_eager(fn, a, b)
    check_against_eager(lambda x: fn(x, 0.5), a)          # scalar other, promoted as torch does
    check_against_eager(lambda x, y: fn(x, y), a, rand(3, 4, dtype=torch.float32, seed=2))  # mixed dtypes


def test_logical_ops_masked_fill_where():
    a, b = rand(3, 5), rand(3, 5, seed=1)
    check_against_eager(lambda x, y: torch.logical_and(x > 0, y > 0) | torch.logical_not(x < y), a, b)
    check_against_eager(lambda x: torch.logical_or(x, x * 0) ^ torch.logical_not(x), a)  # non-bool inputs
    check_against_eager(lambda x: ~(x > 0), a)
    check_against_eager(lambda x: ~x, rand(3, 5, dtype=torch.int64), native_only=False)  # integer inversion: host fallback
    check_against_eager(lambda x: x.masked_fill(x > 0.5, -1.0), a)
    check_against_eager(lambda x: x.masked_fill(torch.tensor([True, False, True, False, True]), float("-inf")), a)
    check_against_eager(lambda x, y: x.masked_fill(y > 0, y.sum()), a, b)  # tensor value
    check_against_eager(lambda x, y: torch.where(x > y, x, y * 2), a, b)
    check_against_eager(lambda x: torch.where(x > 0, x, 0.0), a)
    check_against_eager(lambda x: torch.where(x[:, :1] > 0, x, torch.zeros(5)), a)


INDEXING = {
    "select": lambda x: x[:, 2] * 1,
    "select_negative": lambda x: x.select(0, -1) + 1,
    "slice": lambda x: x[1:3, ::2] * 2,
    "slice_negative": lambda x: x[-2:, -3:-1] + 1,
    "slice_open": lambda x: x[:, 1:] - 1,
    "expand": lambda x: x[:, :1].expand(4, 6) + 0,
    "expand_new_dims": lambda x: x[0].expand(2, 3, 6) * 1,
    "stack": lambda x: torch.stack([x, x * 2, x + 1], dim=1),
    "stack_last": lambda x: torch.stack([x[0], x[1]], dim=-1),
    "index_select": lambda x: torch.index_select(x, 1, torch.tensor([5, 0, 2])),
}


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64], ids=str)
@pytest.mark.parametrize("op", sorted(INDEXING))
def test_indexing(op, dtype):
    check_against_eager(INDEXING[op], rand(4, 6, dtype=dtype))


def test_embedding_and_arange():
    weight = rand(20, 8)
    ids = torch.tensor([[0, 5, 19], [3, 3, 7]])
    check_against_eager(lambda w, i: torch.nn.functional.embedding(i, w), weight, ids)
    check_against_eager(lambda w, i: torch.nn.functional.embedding(i.int(), w) * 2, weight, ids)
    check_against_eager(lambda x: x + torch.arange(6), rand(4, 6))
    check_against_eager(lambda x: x + torch.arange(2, 14, 2, dtype=torch.float32), rand(4, 6))


@pytest.mark.parametrize("width", [1, 3, 4, 8, 16, 32, 100])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64], ids=str)
def test_row_gathers_of_every_width(width, dtype):
    """Embedding lookups copy whole table rows (fixed-size copies for common widths): every
    width and element size, int64 and int32 ids, a strided column of ids (recsys models index
    one sparse feature per column), a 3-D table and enough rows to run on several threads."""
    table = rand(50, width, dtype=dtype)
    ids = torch.randint(0, 50, (64, 4))
    check_against_eager(lambda w, i: torch.nn.functional.embedding(i[:, 1], w), table, ids)
    check_against_eager(lambda w, i: torch.nn.functional.embedding(i.int(), w), table, ids)
    check_against_eager(lambda w, i: torch.index_select(w, 0, i.flatten()), rand(50, 2, width, dtype=dtype), ids)
    many = torch.randint(0, 50, (20000,))
    check_against_eager(lambda w, i: torch.nn.functional.embedding(i, w), table, many)


def test_a_gather_index_outside_the_table_is_a_clear_error():
    compiled = compile_with_ge(lambda w, i: torch.nn.functional.embedding(i, w) + 1)
    table = rand(10, 4)
    with torch.no_grad():
        compiled(table, torch.tensor([0, 9]))
        for bad in (10, -1):
            with pytest.raises(Exception, match=rf"GatherV2 '.*': index {bad} \(position 1\) is out of range for a "
                                                r"table of 10 rows"):
                compiled(table, torch.tensor([0, bad]))
    check_against_eager(lambda x: x * torch.arange(0.5, 3.5, 0.5), rand(4, 6))


@pytest.mark.parametrize("causal,mask", [(False, None), (True, None), (False, "float"), (False, "bool")])
def test_scaled_dot_product_attention(causal, mask):
    kv_len = 8 if causal else 10
    q, k, v = rand(2, 4, 8, 16), rand(2, 4, kv_len, 16, seed=1), rand(2, 4, kv_len, 16, seed=2)
    attn_mask = None
    if mask == "float":
        attn_mask = rand(8, 10, seed=3)
    elif mask == "bool":
        attn_mask = rand(8, 10, seed=3) > -0.5
    check_against_eager(lambda q, k, v: torch.nn.functional.scaled_dot_product_attention(
        q, k, v, attn_mask=attn_mask, is_causal=causal), q, k, v, rtol=1e-5, atol=1e-5)
    check_against_eager(lambda q, k, v: torch.nn.functional.scaled_dot_product_attention(q, k, v, scale=0.3), q, k, v,
                        rtol=1e-5, atol=1e-5)
    # grouped-query attention: 2 key/value heads serve 4 query heads (LLaMA 2/3, Mistral, Qwen)
    kv = [rand(2, 2, 7, 8, seed=s) for s in (5, 6)]
    check_against_eager(lambda q, k, v: torch.nn.functional.scaled_dot_product_attention(
        q, k, v, is_causal=True, enable_gqa=True), rand(2, 4, 7, 8, seed=4), *kv, rtol=1e-5, atol=1e-5)


def test_a_causal_sdpa_runs_the_flash_kernel_causally():
    """is_causal's mask (a constant once folded) becomes FusedAttention's is_causal: the flash
    kernel skips the blocks above the diagonal and the scores are never materialized."""
    import torchair_ge
    backend = torchair_ge.get_npu_backend()
    compiled = compile_with_ge(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True),
                               backend=backend)
    q, k, v = rand(1, 4, 24, 16), rand(1, 2, 24, 16, seed=1), rand(1, 2, 24, 16, seed=2)
    with torch.no_grad():
        torch.testing.assert_close(compiled(q, k, v), F.scaled_dot_product_attention(q, k, v, is_causal=True,
                                                                                      enable_gqa=True))
    text = backend.compiler.graphs[0].graph_text()
    assert text.count('type: "FusedAttention"') == 1 and "SoftmaxV2" not in text and "MaskedFill" not in text, text
    causal = text[text.index('key: "is_causal"'):]
    assert causal[:causal.index("}")].split()[-1] == "true", causal[:80]


def test_selection_ops_and_statistics():
    x = rand(4, 6)
    idx = torch.tensor([[0, 1, 0], [3, 2, 1], [1, 1, 1], [2, 0, 3]])
    check_against_eager(lambda t: torch.gather(t, 0, idx[:, :3].T.contiguous()), x)
    check_against_eager(lambda t: torch.zeros(4, 6).scatter_add(0, idx, t[:, :3]), x)
    check_against_eager(lambda t: t.scatter(1, idx[:, :2], 5.0), x)
    rows = torch.tensor([3, 0])
    check_against_eager(lambda t, s: t.index_copy(0, rows, s), x, rand(2, 6, seed=2))
    check_against_eager(lambda t, s: t.index_copy(1, torch.tensor([5, 1, 2]), s), x, rand(4, 3, seed=3))
    check_against_eager(lambda t: torch.topk(t, 3, dim=1), x)
    check_against_eager(lambda t: torch.topk(t, 2, dim=0, largest=False), x)
    check_against_eager(lambda t: torch.sort(t, dim=1, descending=True), x)
    check_against_eager(lambda t: torch.sort(t, stable=True, dim=0), x)
    check_against_eager(lambda a, b: (a & b) | (a ^ 3), rand(5, dtype=torch.int64), rand(5, dtype=torch.int64, seed=1))
    check_against_eager(lambda t: (torch.any(t > 1, dim=1), torch.all(t > -3), t.gt(0).any()), x)
    check_against_eager(lambda t: (torch.logsumexp(t, 1), t.var(0), t.std(1, correction=0, keepdim=True)), x)


@pytest.mark.parametrize("shape", [(8, 16, 6, 6), (32, 8), (2, 3, 4, 5, 6), (1, 4, 1)])
@pytest.mark.parametrize("correction", [0, 1, 2.5])
def test_variance_over_every_dim_but_the_channels(shape, correction):
    # Batch norm's training statistics: ATen's per-channel kernel computes them (then rescaled).
    dims = [d for d in range(len(shape)) if d != 1]
    x = rand(*shape) * 3 + 5  # a large mean: a one-pass sum of squares would lose the variance
    check_against_eager(lambda t: (torch.var(t, dims, correction=correction), torch.var_mean(t, dims, keepdim=True,
                                                                                            correction=correction)),
                        x, equal_nan=True)  # (1, 4, 1): one element per channel, NaN with a correction


def test_group_norm_including_an_empty_batch():
    w, b = rand(6, seed=1), rand(6, seed=2)
    check_against_eager(lambda t: torch.nn.functional.group_norm(t, 3, w, b), rand(2, 6, 5))
    check_against_eager(lambda t: torch.nn.functional.group_norm(t, 2), rand(0, 6, 4))  # once divided by zero


def test_advanced_indexing_runs_natively():
    x = rand(4, 6, 5)
    rows, cols = torch.tensor([3, -1, 0]), torch.tensor([[1], [5]])
    check_against_eager(lambda t: t[rows], x)  # one index tensor, negative entries
    check_against_eager(lambda t: t[:, rows], x)
    check_against_eager(lambda t: t[rows[:2, None], cols.T], x)  # adjacent: broadcast [2, 2] in place
    check_against_eager(lambda t: t[rows, :, torch.tensor([4, 0, 2])], x)  # separated: broadcast dims first
    mask = torch.rand(2, 7, generator=torch.Generator().manual_seed(0)) > 0.5  # transformers' padding mask
    check_against_eager(lambda m: m[torch.arange(2)[:, None, None, None], torch.arange(7)[None, None, None, :]], mask)


def test_index_put_histc_and_scatter_forms_run_natively():
    x, perm = rand(6, 3), torch.tensor([2, 0, 5, 1, 4, 3])
    check_against_eager(lambda t: torch.empty_like(perm).index_put((perm,), torch.arange(6)), x)  # MoE inverse perm
    check_against_eager(lambda t, v: t.index_put((perm[:2], torch.tensor([0, 2])), v, accumulate=True), x,
                        rand(2, seed=1))
    check_against_eager(lambda t: torch.histc(t, bins=4, min=-1, max=1), x)
    check_against_eager(lambda t: torch.histc(t, bins=5), x)  # min == max: the data's own range
    base = rand(5, 7, seed=2)
    check_against_eager(lambda b, s: torch.slice_scatter(b, s, 1, 2, 5), base, rand(5, 3, seed=3))
    check_against_eager(lambda b, s: torch.slice_scatter(b, s, 0, 0, None, 2), base, rand(3, 7, seed=4))
    check_against_eager(lambda b, s: torch.select_scatter(b, s, 1, -1), base, rand(5, seed=5))
    check_against_eager(lambda b, s: torch.slice_scatter(b, s, 0), base, rand(5, 7, seed=6))  # all of it


def test_in_place_writes_into_a_graph_intermediate_run_natively():
    # BEiT's relative position index: slices of a fresh tensor filled and updated in place.
    def build(t):
        index = torch.zeros(5, 5, dtype=torch.int64)
        index[1:, 1:] = (t * 10).long()
        index[0, 0:] = 7
        index[0:, 0] = 8
        index[0, 0] = 9
        return index
    check_against_eager(build, rand(4, 4))


def test_as_strided_restating_a_dense_layout_is_a_reshape():
    check_against_eager(lambda t: torch.nn.functional.adaptive_avg_pool1d(t.transpose(1, 2), 1).flatten(1),
                        rand(2, 5, 8))
    # a real restride (overlapping windows) is left to the host-fallback engine, and still right
    check_against_eager(lambda t: (t + 1).as_strided((3, 3), (1, 1)), rand(9), native_only=False)


@pytest.mark.parametrize("autofuse", [True, False])
def test_safe_softmax_gives_a_row_of_minus_inf_zeros(autofuse):
    """SDPA's math path's softmax is one SafeSoftmax (generated code: autofuse_test.cc; ATen's
    softmax with the masked rows zeroed without auto-fusion). A row that is -inf throughout gives 0, not NaN; a row with a NaN
    stays NaN."""
    import torchair_ge
    config = torchair_ge.CompilerConfig()
    config.experimental_config.enable_autofuse = autofuse
    scores = rand(2, 4, 6)
    scores[:, 1, :] = float("-inf")
    scores[1, 2, 3] = float("nan")
    scores[0, 3, 1:] = float("-inf")  # one key seen: probability 1
    for dim, x in ((-1, scores), (1, scores.transpose(1, 2).contiguous())):
        backend = torchair_ge.get_npu_backend(compiler_config=config)
        compiled = compile_with_ge(lambda s: torch.ops.aten._safe_softmax(s, dim), backend=backend)
        got = compiled(x)
        torch.testing.assert_close(got, torch.ops.aten._safe_softmax(x, dim), equal_nan=True)
        assert got.isnan().sum() == 6 and (got == 0).sum() >= 12, got
        text = backend.compiler.graphs[0].graph_text()
        assert 'type: "SafeSoftmax"' in text, text


def test_weight_norm_decomposes_to_native_ops():
    conv = torch.nn.utils.parametrizations.weight_norm(torch.nn.Conv1d(4, 4, 3, padding=1), dim=2)
    check_against_eager(conv, rand(2, 4, 9))


def test_grouped_mm_runs_natively():
    dtype = torch.bfloat16  # torch's meta kernel takes bf16 only (transformers' MoE in bf16)
    x, w = rand(10, 8, dtype=dtype), rand(3, 8, 16, dtype=dtype, seed=1)
    offsets = torch.tensor([4, 4, 10], dtype=torch.int32)  # an expert without tokens
    check_against_eager(lambda a, b: torch._grouped_mm(a, b, offs=offsets), x, w)
