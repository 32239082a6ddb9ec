"""Comparisons (operands promoted to their common dtype, as torch compares), logical ops,
masked_fill and where."""
import torch

from torchair_ge import ge
from torchair_ge.fx2ge.converters.common import common_dtype, int_vector, to_dtype
from torchair_ge.fx2ge.registry import register_fx_node_ge_converter

aten = torch.ops.aten


def _compare(aten_name, ir_op):
    def convert(self, other, *, meta_outputs=None):
        dtype = common_dtype(self, other)
        return ge.op(ir_op, to_dtype(self, dtype), to_dtype(other, dtype))

    for overload in ("Tensor", "Scalar"):
        register_fx_node_ge_converter(getattr(getattr(aten, aten_name), overload))(convert)


for _name, _ir in [("eq", "Equal"), ("ne", "NotEqual"), ("lt", "Less"), ("le", "LessEqual"), ("gt", "Greater"),
                   ("ge", "GreaterEqual")]:
    _compare(_name, _ir)


def _as_bool(value):
    return to_dtype(value, torch.bool)


@register_fx_node_ge_converter(aten.logical_not.default)
def convert_logical_not(self, *, meta_outputs=None):
    return ge.LogicalNot(_as_bool(self))


@register_fx_node_ge_converter(aten.logical_and.default)
def convert_logical_and(self, other, *, meta_outputs=None):
    return ge.LogicalAnd(_as_bool(self), _as_bool(other))


@register_fx_node_ge_converter(aten.logical_or.default)
def convert_logical_or(self, other, *, meta_outputs=None):
    return ge.LogicalOr(_as_bool(self), _as_bool(other))


@register_fx_node_ge_converter(aten.bitwise_not.default)
def convert_bitwise_not(self, *, meta_outputs=None):
    if meta_outputs.dtype != torch.bool:
        return NotImplemented  # integer bit inversion runs on the host-fallback engine
    return ge.LogicalNot(self)


@register_fx_node_ge_converter(aten.masked_fill.Scalar)
@register_fx_node_ge_converter(aten.masked_fill.Tensor)
def convert_masked_fill(self, mask, value, *, meta_outputs=None):
    if list(self.shape) != list(meta_outputs.shape):  # a larger mask broadcasts the result
        self = ge.BroadcastTo(self, int_vector(meta_outputs.shape))
    return ge.MaskedFill(self, _as_bool(mask), to_dtype(value, meta_outputs.dtype))


@register_fx_node_ge_converter(aten.where.self)
def convert_where(condition, self, other, *, meta_outputs=None):
    return ge.SelectV2(_as_bool(condition), to_dtype(self, meta_outputs.dtype), to_dtype(other, meta_outputs.dtype))
