"""More elementwise math, parametrized activations, clamping, floor division and remainder,
extreme/product/arg reductions, log_softmax and cumsum."""
import torch

from torchair_ge import ge
from torchair_ge.fx2ge.converters.common import int_vector, normalize_dim, promote, to_dtype
from torchair_ge.fx2ge.registry import register_fx_node_ge_converter

aten = torch.ops.aten


def _unary(aten_op, ir_op, float_only):
    @register_fx_node_ge_converter(aten_op)
    def convert(self, *, meta_outputs=None):
        dtype = meta_outputs.dtype
        if dtype == torch.bool or (float_only and not dtype.is_floating_point):
            return NotImplemented  # outside the IR op's dtypes: host fallback
        return ge.op(ir_op, to_dtype(self, dtype))

    return convert


for _op, _ir, _float_only in [
    (aten.abs.default, "Abs", False), (aten.sign.default, "Sign", False), (aten.floor.default, "Floor", False),
    (aten.ceil.default, "Ceil", False), (aten.round.default, "Round", False), (aten.trunc.default, "Trunc", False),
    (aten.reciprocal.default, "Reciprocal", True), (aten.expm1.default, "Expm1", True),
    (aten.log1p.default, "Log1p", True), (aten.log2.default, "Log2", True), (aten.sin.default, "Sin", True),
    (aten.cos.default, "Cos", True),
    (aten.tan.default, "Tan", True), (aten.atan.default, "Atan", True), (aten.erf.default, "Erf", True),
    (aten.hardsigmoid.default, "HardSigmoid", True), (aten.hardswish.default, "HardSwish", True),
    (aten.mish.default, "Mish", True),
]:
    _unary(_op, _ir, _float_only)


@register_fx_node_ge_converter(aten.leaky_relu.default)
def convert_leaky_relu(self, negative_slope=0.01, *, meta_outputs=None):
    return ge.LeakyRelu(self, negative_slope=float(negative_slope))


@register_fx_node_ge_converter(aten.silu.default)
def convert_silu(self, *, meta_outputs=None):
    return ge.Swish(self, scale=1.0)


@register_fx_node_ge_converter(aten.elu.default)
def convert_elu(self, alpha=1.0, scale=1.0, input_scale=1.0, *, meta_outputs=None):
    return ge.Elu(self, alpha=float(alpha), scale=float(scale), input_scale=float(input_scale))


@register_fx_node_ge_converter(aten.softplus.default)
def convert_softplus(self, beta=1.0, threshold=20.0, *, meta_outputs=None):
    return ge.Softplus(self, beta=float(beta), threshold=float(threshold))


def _bound(value, dtype, lowest):
    """A clamp bound as an IR value of `dtype`; None is the dtype's extreme."""
    if value is None:
        info = torch.finfo(dtype) if dtype.is_floating_point else torch.iinfo(dtype)
        value = float("-inf") if lowest and dtype.is_floating_point else float("inf") if dtype.is_floating_point \
            else (info.min if lowest else info.max)
    return to_dtype(value, dtype)


def _clip(self, low, high, meta):
    dtype = meta.dtype
    if dtype == torch.bool:
        return NotImplemented
    return ge.ClipByValue(to_dtype(self, dtype), _bound(low, dtype, True), _bound(high, dtype, False))


@register_fx_node_ge_converter(aten.clamp.default)
@register_fx_node_ge_converter(aten.clamp.Tensor)
def convert_clamp(self, min=None, max=None, *, meta_outputs=None):
    return _clip(self, min, max, meta_outputs)


@register_fx_node_ge_converter(aten.clamp_min.default)
def convert_clamp_min(self, min, *, meta_outputs=None):
    return _clip(self, min, None, meta_outputs)


@register_fx_node_ge_converter(aten.clamp_max.default)
def convert_clamp_max(self, max, *, meta_outputs=None):
    return _clip(self, None, max, meta_outputs)


@register_fx_node_ge_converter(aten.hardtanh.default)
def convert_hardtanh(self, min_val=-1.0, max_val=1.0, *, meta_outputs=None):
    return _clip(self, min_val, max_val, meta_outputs)


@register_fx_node_ge_converter(aten.floor_divide.default)
@register_fx_node_ge_converter(aten.floor_divide.Scalar)
def convert_floor_divide(self, other, *, meta_outputs=None):
    return ge.FloorDiv(*promote(meta_outputs, self, other))


@register_fx_node_ge_converter(aten.remainder.Tensor)
@register_fx_node_ge_converter(aten.remainder.Scalar)
def convert_remainder(self, other, *, meta_outputs=None):
    return ge.FloorMod(*promote(meta_outputs, self, other))


def _axes(dim):
    return [] if dim is None else [dim] if isinstance(dim, int) else list(dim)


@register_fx_node_ge_converter(aten.amax.default)
def convert_amax(self, dim=(), keepdim=False, *, meta_outputs=None):
    return ge.ReduceMax(self, int_vector(_axes(dim)), keep_dims=keepdim)


@register_fx_node_ge_converter(aten.amin.default)
def convert_amin(self, dim=(), keepdim=False, *, meta_outputs=None):
    return ge.ReduceMin(self, int_vector(_axes(dim)), keep_dims=keepdim)


@register_fx_node_ge_converter(aten.prod.default)
def convert_prod(self, *, dtype=None, meta_outputs=None):
    return ge.ReduceProd(to_dtype(self, meta_outputs.dtype), int_vector([]))


@register_fx_node_ge_converter(aten.prod.dim_int)
def convert_prod_dim(self, dim, keepdim=False, *, dtype=None, meta_outputs=None):
    return ge.ReduceProd(to_dtype(self, meta_outputs.dtype), int_vector([dim]), keep_dims=keepdim)


def _arg(ir_op, self, dim, keepdim):
    if dim is None or not self.shape:
        return NotImplemented  # over the flattened tensor: host fallback
    return ge.op(ir_op, self, int_vector([normalize_dim(dim, len(self.shape))]), keep_dims=keepdim)


@register_fx_node_ge_converter(aten.argmax.default)
def convert_argmax(self, dim=None, keepdim=False, *, meta_outputs=None):
    return _arg("ArgMaxV2", self, dim, keepdim)


@register_fx_node_ge_converter(aten.argmin.default)
def convert_argmin(self, dim=None, keepdim=False, *, meta_outputs=None):
    return _arg("ArgMin", self, dim, keepdim)


def _extreme_with_index(reduce_op, arg_op, self, dim, keepdim):
    if not self.shape:
        return NotImplemented
    axis = normalize_dim(dim, len(self.shape))
    return (ge.op(reduce_op, self, int_vector([axis]), keep_dims=keepdim),
            ge.op(arg_op, self, int_vector([axis]), keep_dims=keepdim))


@register_fx_node_ge_converter(aten.max.dim)
def convert_max_dim(self, dim, keepdim=False, *, meta_outputs=None):
    return _extreme_with_index("ReduceMax", "ArgMaxV2", self, dim, keepdim)


@register_fx_node_ge_converter(aten.min.dim)
def convert_min_dim(self, dim, keepdim=False, *, meta_outputs=None):
    return _extreme_with_index("ReduceMin", "ArgMin", self, dim, keepdim)


@register_fx_node_ge_converter(aten._log_softmax.default)
def convert_log_softmax(self, dim, half_to_float, *, meta_outputs=None):
    if half_to_float:
        return NotImplemented
    return ge.LogSoftmaxV2(self, axes=[dim])


@register_fx_node_ge_converter(aten.cumsum.default)
def convert_cumsum(self, dim, *, dtype=None, meta_outputs=None):
    x = to_dtype(self, meta_outputs.dtype)
    return ge.Cumsum(x, axis=normalize_dim(dim, len(self.shape)) if self.shape else 0)
