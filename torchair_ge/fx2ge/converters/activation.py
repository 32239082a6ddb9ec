"""Unary math and activations. Integer inputs of float-valued ops (exp of an int tensor) are
cast to the float result dtype first, as torch does."""
import torch

from torchair_ge import ge
from torchair_ge.fx2ge.converters.common import to_dtype
from torchair_ge.fx2ge.registry import register_fx_node_ge_converter

aten = torch.ops.aten


def _unary(aten_op, ir_op):
    @register_fx_node_ge_converter(aten_op)
    def convert(self, *, meta_outputs=None):
        return ge.op(ir_op, to_dtype(self, meta_outputs.dtype))

    convert.__name__ = f"convert_{ir_op.lower()}"
    return convert


for _aten_op, _ir_op in [
    (aten.relu.default, "Relu"),
    (aten.sigmoid.default, "Sigmoid"),
    (aten.tanh.default, "Tanh"),
    (aten.exp.default, "Exp"),
    (aten.log.default, "Log"),
    (aten.sqrt.default, "Sqrt"),
    (aten.rsqrt.default, "Rsqrt"),
]:
    _unary(_aten_op, _ir_op)


@register_fx_node_ge_converter(aten.gelu.default)
def convert_gelu(self, *, approximate="none", meta_outputs=None):
    return ge.Gelu(self, approximate=approximate)
