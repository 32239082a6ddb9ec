"""ATen ops expressed with existing IR ops. Static shapes let factories fold into constants and
masks, split points and permutations be computed at compile time."""
import math

import torch

from torchair_ge import ge
from torchair_ge.fx2ge.converters.common import arange, int_vector, normalize_dim, promote, to_dtype
from torchair_ge.fx2ge.registry import register_fx_node_ge_converter

aten = torch.ops.aten


# ---- factories: known shapes, so the values fold into constants ------------------------------
def _filled(meta, value):
    """A scalar constant broadcast to the shape, not a constant of that shape: a graph with
    symbolic sizes then differs between sizes only in the shape's elements (size sites,
    fx2ge/size_template.py). The engine folds it into a constant (up to its folding limit) or
    fuses it into its users."""
    scalar = ge.Const(torch.tensor(value, dtype=meta.dtype))
    return ge.BroadcastTo(scalar, int_vector(meta.shape)) if meta.dim() else scalar


@register_fx_node_ge_converter(aten.zeros.default)
@register_fx_node_ge_converter(aten.zeros_like.default)
@register_fx_node_ge_converter(aten.new_zeros.default)
@register_fx_node_ge_converter(aten.empty.memory_format)
@register_fx_node_ge_converter(aten.empty_like.default)
@register_fx_node_ge_converter(aten.new_empty.default)
def convert_zeros(*args, meta_outputs=None, **kwargs):
    return _filled(meta_outputs, 0)  # empty: any contents are right; zeros are deterministic


@register_fx_node_ge_converter(aten.scalar_tensor.default)
def convert_scalar_tensor(value, *, meta_outputs=None, **kwargs):
    return _filled(meta_outputs, value)


@register_fx_node_ge_converter(aten.lift_fresh_copy.default)
def convert_lift_fresh_copy(self, *, meta_outputs=None):
    """A tensor literal of the user's code (torch.tensor([...])): a copy of a constant."""
    return ge.Identity(self)


@register_fx_node_ge_converter(aten.ones.default)
@register_fx_node_ge_converter(aten.ones_like.default)
@register_fx_node_ge_converter(aten.new_ones.default)
def convert_ones(*args, meta_outputs=None, **kwargs):
    return _filled(meta_outputs, 1)


@register_fx_node_ge_converter(aten.full.default)
def convert_full(size, fill_value, *, meta_outputs=None, **kwargs):
    return _filled(meta_outputs, fill_value)


@register_fx_node_ge_converter(aten.full_like.default)
@register_fx_node_ge_converter(aten.new_full.default)
def convert_full_like(self, fill_value_or_size, fill_value=None, *, meta_outputs=None, **kwargs):
    return _filled(meta_outputs, fill_value_or_size if fill_value is None else fill_value)


# ---- splitting -------------------------------------------------------------------------------
def _slices(self, sizes, dim):
    dim = normalize_dim(dim, len(self.shape))
    parts, start = [], 0
    for size in sizes:
        parts.append(ge.StridedSliceV2(self, int_vector([start]), int_vector([start + size]), int_vector([dim]),
                                       int_vector([1])))
        start += size
    return parts


@register_fx_node_ge_converter(aten.split.Tensor)
def convert_split(self, split_size, dim=0, *, meta_outputs=None):
    return _slices(self, [m.shape[dim] for m in meta_outputs], dim)


@register_fx_node_ge_converter(aten.split_with_sizes.default)
def convert_split_with_sizes(self, split_sizes, dim=0, *, meta_outputs=None):
    return _slices(self, list(split_sizes), dim)


@register_fx_node_ge_converter(aten.unbind.int)
def convert_unbind(self, dim=0, *, meta_outputs=None):
    dim = normalize_dim(dim, len(self.shape))
    return [ge.GatherV2(self, ge.Const(i, torch.int64), int_vector([dim])) for i in range(self.shape[dim])]


@register_fx_node_ge_converter(aten.glu.default)
def convert_glu(self, dim=-1, *, meta_outputs=None):
    half = self.shape[normalize_dim(dim, len(self.shape))] // 2
    a, b = _slices(self, [half, half], dim)
    return ge.Mul(a, ge.Sigmoid(b))


# ---- data movement with static parameters ----------------------------------------------------
def _triangle(self, diagonal, meta, upper):
    """Zeros where column - row is below (triu) or above (tril) `diagonal`; the mask is built
    from ranges, not a constant of the matrix's shape (one graph for every size)."""
    rows, cols = self.shape[-2], self.shape[-1]
    row = ge.Add(ge.Reshape(arange(0, rows), int_vector([rows, 1])), ge.Const(diagonal, torch.int64))
    col = ge.Reshape(arange(0, cols), int_vector([1, cols]))
    drop = ge.Less(col, row) if upper else ge.Greater(col, row)
    return ge.MaskedFill(self, drop, to_dtype(0, meta.dtype))


@register_fx_node_ge_converter(aten.triu.default)
def convert_triu(self, diagonal=0, *, meta_outputs=None):
    return _triangle(self, diagonal, meta_outputs, upper=True)


@register_fx_node_ge_converter(aten.tril.default)
def convert_tril(self, diagonal=0, *, meta_outputs=None):
    return _triangle(self, diagonal, meta_outputs, upper=False)


@register_fx_node_ge_converter(aten.flip.default)
def convert_flip(self, dims, *, meta_outputs=None):
    x = self
    for d in dims:
        d = normalize_dim(d, len(self.shape))
        x = ge.GatherV2(x, ge.Const(list(range(self.shape[d] - 1, -1, -1)), torch.int64), int_vector([d]))
    return x if dims else ge.Identity(x)


@register_fx_node_ge_converter(aten.roll.default)
def convert_roll(self, shifts, dims=(), *, meta_outputs=None):
    if not dims:  # roll of the flattened tensor
        flat = ge.Reshape(self, int_vector([-1]))
        return ge.Reshape(convert_roll(flat, shifts, [0], meta_outputs=meta_outputs), int_vector(self.shape))
    x = self
    for shift, d in zip(shifts, dims):
        d = normalize_dim(d, len(self.shape))
        size = self.shape[d]
        shift = shift % size if size else 0
        if shift:
            tail, head = _slices(x, [size - shift, shift], d)
            x = ge.ConcatV2([head, tail], int_vector([d]), N=2)
    return x if x is not self else ge.Identity(x)


@register_fx_node_ge_converter(aten.repeat.default)
def convert_repeat(self, repeats, *, meta_outputs=None):
    shape = [1] * (len(repeats) - len(self.shape)) + list(self.shape)
    # View as (1, d0, 1, d1, ...), broadcast to (r0, d0, r1, d1, ...), merge each pair.
    spread = [v for d in shape for v in (1, d)]
    target = [v for r, d in zip(repeats, shape) for v in (r, d)]
    x = ge.BroadcastTo(ge.Reshape(self, int_vector(spread)), int_vector(target))
    return ge.Reshape(x, int_vector(meta_outputs.shape))


@register_fx_node_ge_converter(aten.constant_pad_nd.default)
def convert_constant_pad_nd(self, pad, value=0, *, meta_outputs=None):
    """Pairs of pad widths from the last dim backwards: crop where negative, then concatenate
    constant blocks on either side."""
    x, shape = self, list(self.shape)
    for i in range(len(pad) // 2):
        d = len(shape) - 1 - i
        left, right = pad[2 * i], pad[2 * i + 1]
        if left < 0 or right < 0:
            start, end = max(0, -left), shape[d] - max(0, -right)
            x = ge.StridedSliceV2(x, int_vector([start]), int_vector([end]), int_vector([d]), int_vector([1]))
            shape[d] = max(0, end - start)
            left, right = max(0, left), max(0, right)

        def block(width):
            return ge.Const(torch.full(shape[:d] + [width] + shape[d + 1:], value, dtype=meta_outputs.dtype))

        pieces = ([block(left)] if left else []) + [x] + ([block(right)] if right else [])
        if len(pieces) > 1:
            x = ge.ConcatV2(pieces, int_vector([d]), N=len(pieces))
        shape[d] += left + right
    return x if x is not self else ge.Identity(x)


# ---- elementwise compositions ----------------------------------------------------------------
@register_fx_node_ge_converter(aten.logical_xor.default)
def convert_logical_xor(self, other, *, meta_outputs=None):
    return ge.NotEqual(to_dtype(self, torch.bool), to_dtype(other, torch.bool))


def _is_floating(value):
    return ge.ge_to_torch(value.dtype).is_floating_point


@register_fx_node_ge_converter(aten.isnan.default)
def convert_isnan(self, *, meta_outputs=None):
    if not _is_floating(self):
        return _filled(meta_outputs, False)
    return ge.NotEqual(self, self)  # only NaN differs from itself


@register_fx_node_ge_converter(aten.isinf.default)
def convert_isinf(self, *, meta_outputs=None):
    if not _is_floating(self):
        return _filled(meta_outputs, False)
    return ge.Equal(ge.Abs(self), to_dtype(math.inf, ge.ge_to_torch(self.dtype)))


def _lerp(self, end, weight, dtype):
    # ATen's formula: from the nearer end, so that lerp(a, b, 1) == b exactly.
    diff = ge.Sub(end, self)
    low = ge.Add(self, ge.Mul(weight, diff))
    high = ge.Sub(end, ge.Mul(diff, ge.Sub(to_dtype(1, dtype), weight)))
    return low, high


@register_fx_node_ge_converter(aten.lerp.Scalar)
def convert_lerp_scalar(self, end, weight, *, meta_outputs=None):
    self, end = promote(meta_outputs, self, end)
    low, high = _lerp(self, end, to_dtype(weight, meta_outputs.dtype), meta_outputs.dtype)
    return low if abs(weight) < 0.5 else high


@register_fx_node_ge_converter(aten.lerp.Tensor)
def convert_lerp_tensor(self, end, weight, *, meta_outputs=None):
    self, end, weight = promote(meta_outputs, self, end, weight)
    low, high = _lerp(self, end, weight, meta_outputs.dtype)
    return ge.SelectV2(ge.Less(ge.Abs(weight), to_dtype(0.5, meta_outputs.dtype)), low, high)


@register_fx_node_ge_converter(aten.addcmul.default)
def convert_addcmul(self, tensor1, tensor2, *, value=1, meta_outputs=None):
    self, t1, t2 = promote(meta_outputs, self, tensor1, tensor2)
    return ge.Add(self, ge.Mul(ge.Mul(t1, t2), to_dtype(value, meta_outputs.dtype)))


@register_fx_node_ge_converter(torch.ops.prims.fma.default)
def convert_fma(a, b, c, *, meta_outputs=None):
    """a * b + c: what addcmul_ becomes when AOT autograd functionalizes Adam's in-place steps."""
    a, b, c = promote(meta_outputs, a, b, c)
    return ge.Add(ge.Mul(a, b), c)


@register_fx_node_ge_converter(aten.addcdiv.default)
def convert_addcdiv(self, tensor1, tensor2, *, value=1, meta_outputs=None):
    if not meta_outputs.dtype.is_floating_point:
        return NotImplemented
    self, t1, t2 = promote(meta_outputs, self, tensor1, tensor2)
    return ge.Add(self, ge.Mul(ge.RealDiv(t1, t2), to_dtype(value, meta_outputs.dtype)))


@register_fx_node_ge_converter(aten.baddbmm.default)
def convert_baddbmm(self, batch1, batch2, *, beta=1, alpha=1, meta_outputs=None):
    self, b1, b2 = promote(meta_outputs, self, batch1, batch2)
    product = ge.BatchMatMulV2(b1, b2)
    if alpha != 1:
        product = ge.Mul(product, to_dtype(alpha, meta_outputs.dtype))
    if beta == 0:  # torch ignores self (even NaN) when beta is 0
        return product
    return ge.Add(product, self if beta == 1 else ge.Mul(self, to_dtype(beta, meta_outputs.dtype)))


@register_fx_node_ge_converter(aten.nan_to_num.default)
def convert_nan_to_num(self, nan=None, posinf=None, neginf=None, *, meta_outputs=None):
    dtype = meta_outputs.dtype
    if not dtype.is_floating_point:
        return ge.Identity(self)
    info = torch.finfo(dtype)
    x = ge.SelectV2(ge.NotEqual(self, self), to_dtype(0.0 if nan is None else nan, dtype), self)
    x = ge.SelectV2(ge.Equal(x, to_dtype(math.inf, dtype)), to_dtype(info.max if posinf is None else posinf, dtype), x)
    return ge.SelectV2(ge.Equal(x, to_dtype(-math.inf, dtype)), to_dtype(info.min if neginf is None else neginf, dtype), x)


@register_fx_node_ge_converter(aten.linalg_vector_norm.default)
def convert_vector_norm(self, ord=2, dim=None, keepdim=False, *, dtype=None, meta_outputs=None):
    if not meta_outputs.dtype.is_floating_point:
        return NotImplemented
    x = to_dtype(self, meta_outputs.dtype)
    axes = int_vector([] if dim is None else [dim] if isinstance(dim, int) else list(dim))
    magnitude = ge.Abs(x)
    if ord == math.inf:
        return ge.ReduceMax(magnitude, axes, keep_dims=keepdim)
    if ord == -math.inf:
        return ge.ReduceMin(magnitude, axes, keep_dims=keepdim)
    if ord == 0:
        nonzero = ge.Cast(ge.NotEqual(x, to_dtype(0, meta_outputs.dtype)), meta_outputs.dtype)
        return ge.ReduceSum(nonzero, axes, keep_dims=keepdim)
    if ord == 1:
        return ge.ReduceSum(magnitude, axes, keep_dims=keepdim)
    if ord == 2:
        return ge.Sqrt(ge.ReduceSum(ge.Mul(x, x), axes, keep_dims=keepdim))
    powered = ge.ReduceSum(ge.Pow(magnitude, to_dtype(float(ord), meta_outputs.dtype)), axes, keep_dims=keepdim)
    return ge.Pow(powered, to_dtype(1.0 / ord, meta_outputs.dtype))


@register_fx_node_ge_converter(aten.exp2.default)
def convert_exp2(self, *, meta_outputs=None):
    return ge.Pow(to_dtype(2, meta_outputs.dtype), to_dtype(self, meta_outputs.dtype))
