"""Arithmetic with broadcasting. Operands are cast to the result dtype that torch's type
promotion chose (read from the meta), then one IR op computes in that dtype, as ATen does."""
import torch

from torchair_ge import ge
from torchair_ge.fx2ge.converters.common import promote, to_dtype
from torchair_ge.fx2ge.registry import register_fx_node_ge_converter

aten = torch.ops.aten


def _scaled(value, alpha, dtype):
    return value if alpha == 1 else ge.Mul(value, to_dtype(alpha, dtype))


@register_fx_node_ge_converter(aten.add.Tensor)
@register_fx_node_ge_converter(aten.add.Scalar)
def convert_add(self, other, *, alpha=1, meta_outputs=None):
    x, y = promote(meta_outputs, self, other)
    return ge.Add(x, _scaled(y, alpha, meta_outputs.dtype))


@register_fx_node_ge_converter(aten.sub.Tensor)
@register_fx_node_ge_converter(aten.sub.Scalar)
def convert_sub(self, other, *, alpha=1, meta_outputs=None):
    x, y = promote(meta_outputs, self, other)
    return ge.Sub(x, _scaled(y, alpha, meta_outputs.dtype))


@register_fx_node_ge_converter(aten.rsub.Tensor)
@register_fx_node_ge_converter(aten.rsub.Scalar)
def convert_rsub(self, other, *, alpha=1, meta_outputs=None):
    x, y = promote(meta_outputs, self, other)
    return ge.Sub(y, _scaled(x, alpha, meta_outputs.dtype))


@register_fx_node_ge_converter(aten.mul.Tensor)
@register_fx_node_ge_converter(aten.mul.Scalar)
def convert_mul(self, other, *, meta_outputs=None):
    return ge.Mul(*promote(meta_outputs, self, other))


@register_fx_node_ge_converter(aten.div.Tensor)
@register_fx_node_ge_converter(aten.div.Scalar)
def convert_div(self, other, *, meta_outputs=None):
    # True division: torch already promoted integer operands to a floating result dtype.
    return ge.RealDiv(*promote(meta_outputs, self, other))


@register_fx_node_ge_converter(aten.div.Tensor_mode)
def convert_div_mode(self, other, *, rounding_mode=None, meta_outputs=None):
    if rounding_mode == "floor":
        return ge.FloorDiv(*promote(meta_outputs, self, other))
    if rounding_mode == "trunc" and meta_outputs.dtype.is_floating_point:
        return ge.Trunc(ge.RealDiv(*promote(meta_outputs, self, other)))
    if rounding_mode is not None:
        return NotImplemented  # integer truncating division runs on the host-fallback engine
    return ge.RealDiv(*promote(meta_outputs, self, other))


@register_fx_node_ge_converter(aten.neg.default)
def convert_neg(self, *, meta_outputs=None):
    return ge.Neg(self)


@register_fx_node_ge_converter(aten.maximum.default)
def convert_maximum(self, other, *, meta_outputs=None):
    return ge.Maximum(*promote(meta_outputs, self, other))


@register_fx_node_ge_converter(aten.minimum.default)
def convert_minimum(self, other, *, meta_outputs=None):
    return ge.Minimum(*promote(meta_outputs, self, other))


@register_fx_node_ge_converter(aten.pow.Tensor_Tensor)
@register_fx_node_ge_converter(aten.pow.Tensor_Scalar)
@register_fx_node_ge_converter(aten.pow.Scalar)
def convert_pow(self, exponent, *, meta_outputs=None):
    return ge.Pow(*promote(meta_outputs, self, exponent))
