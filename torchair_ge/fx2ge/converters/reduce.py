"""Reductions. The input is cast to the result dtype first (sum of int32 gives int64 in torch)."""
import torch

from torchair_ge import ge
from torchair_ge.fx2ge.converters.common import int_vector, to_dtype
from torchair_ge.fx2ge.registry import register_fx_node_ge_converter

aten = torch.ops.aten


def _reduce(ir_op, self, dim, keepdim, meta_outputs):
    dims = [] if dim is None else ([dim] if isinstance(dim, int) else list(dim))
    return ge.op(ir_op, to_dtype(self, meta_outputs.dtype), int_vector(dims), keep_dims=bool(keepdim))


@register_fx_node_ge_converter(aten.sum.dim_IntList)
def convert_sum_dim(self, dim, keepdim=False, *, dtype=None, meta_outputs=None):
    return _reduce("ReduceSum", self, dim, keepdim, meta_outputs)


@register_fx_node_ge_converter(aten.sum.default)
def convert_sum(self, *, dtype=None, meta_outputs=None):
    return _reduce("ReduceSum", self, None, False, meta_outputs)


@register_fx_node_ge_converter(aten.mean.dim)
def convert_mean_dim(self, dim, keepdim=False, *, dtype=None, meta_outputs=None):
    return _reduce("ReduceMean", self, dim, keepdim, meta_outputs)


@register_fx_node_ge_converter(aten.mean.default)
def convert_mean(self, *, dtype=None, meta_outputs=None):
    return _reduce("ReduceMean", self, None, False, meta_outputs)


def _variance(self, dim, correction, keepdim, meta_outputs):
    """(var, mean) in two passes (the mean first, then the mean square deviation): the one-pass
    E[x^2] - E[x]^2 loses the variance of values far from zero to cancellation."""
    rank = len(self.shape)
    dims = list(range(rank)) if dim is None else ([dim] if isinstance(dim, int) else list(dim))
    dims = [d + rank if d < 0 else d for d in dims] or list(range(rank))
    count = 1
    for d in dims:
        count *= self.shape[d]
    x = to_dtype(self, meta_outputs.dtype)
    mean = ge.ReduceMean(x, int_vector(dims), keep_dims=True)
    deviation = ge.Sub(x, mean)
    square_sum = ge.ReduceSum(ge.Mul(deviation, deviation), int_vector(dims), keep_dims=bool(keepdim))
    correction = 1 if correction is None else correction
    # torch: a divisor <= 0 gives inf/nan, as the division by zero does here
    var = ge.RealDiv(square_sum, ge.Const(float(max(count - correction, 0)), meta_outputs.dtype))
    if not keepdim:
        mean = ge.Reshape(mean, int_vector(list(var.shape)))
    return var, mean


@register_fx_node_ge_converter(aten.var_mean.correction)
def convert_var_mean(self, dim=None, *, correction=None, keepdim=False, meta_outputs=None):
    if not meta_outputs[0].dtype.is_floating_point or any(not isinstance(d, int) for d in self.shape):
        return NotImplemented
    return _variance(self, dim, correction, keepdim, meta_outputs[0])


@register_fx_node_ge_converter(aten.var.correction)
def convert_var(self, dim=None, *, correction=None, keepdim=False, meta_outputs=None):
    if not meta_outputs.dtype.is_floating_point or any(not isinstance(d, int) for d in self.shape):
        return NotImplemented
    return _variance(self, dim, correction, keepdim, meta_outputs)[0]
