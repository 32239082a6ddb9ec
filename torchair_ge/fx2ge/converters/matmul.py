"""Matrix products: mm/addmm/linear map onto MatMulV2, bmm onto BatchMatMulV2, _grouped_mm onto
GroupedMatMul."""
import torch

from torchair_ge import ge
from torchair_ge.fx2ge.converters.common import promote, to_dtype
from torchair_ge.fx2ge.registry import register_fx_node_ge_converter

aten = torch.ops.aten


@register_fx_node_ge_converter(aten.mm.default)
def convert_mm(self, mat2, *, meta_outputs=None):
    return ge.MatMulV2(*promote(meta_outputs, self, mat2))


@register_fx_node_ge_converter(aten.addmm.default)
def convert_addmm(bias, mat1, mat2, *, beta=1, alpha=1, meta_outputs=None):
    bias, mat1, mat2 = promote(meta_outputs, bias, mat1, mat2)
    n = meta_outputs.shape[1]
    if beta == 1 and alpha == 1 and list(bias.shape) == [n]:
        return ge.MatMulV2(mat1, mat2, bias)  # the bias is fused into the product
    product = ge.MatMulV2(mat1, mat2)
    if alpha != 1:
        product = ge.Mul(product, to_dtype(alpha, meta_outputs.dtype))
    if beta != 1:
        bias = ge.Mul(bias, to_dtype(beta, meta_outputs.dtype))
    return ge.Add(product, bias)


@register_fx_node_ge_converter(aten.bmm.default)
def convert_bmm(self, mat2, *, meta_outputs=None):
    return ge.BatchMatMulV2(*promote(meta_outputs, self, mat2))


@register_fx_node_ge_converter(aten.linear.default)
def convert_linear(x, weight, bias=None, *, meta_outputs=None):
    x, weight = promote(meta_outputs, x, weight)
    bias = None if bias is None else to_dtype(bias, meta_outputs.dtype)
    if len(x.shape) == 2:
        return ge.MatMulV2(x, weight, bias, transpose_x2=True)
    return ge.BatchMatMulV2(x, weight, bias, adj_x2=True)


@register_fx_node_ge_converter(aten._grouped_mm.default)
def convert_grouped_mm(self, mat2, offs=None, bias=None, out_dtype=None, *, meta_outputs=None):
    """transformers' MoE experts in bf16: tokens sorted by expert, one product per expert."""
    if offs is None or bias is not None or len(self.shape) != 2 or len(mat2.shape) != 3:
        return NotImplemented  # the other _grouped_mm layouts (3-D x 3-D, 2-D x 2-D): host fallback
    if meta_outputs.dtype != ge.ge_to_torch(self.dtype):
        return NotImplemented  # an out_dtype other than the inputs'
    return ge.GroupedMatMul(self, mat2, offs)
