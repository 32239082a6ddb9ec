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



@register_fx_node_ge_converter(aten.var_mean.correction)
def convert_var_mean(self, dim=None, *, correction=None, keepdim=False, meta_outputs=None):
    """Batch norm's training statistics (its decomposition): ReduceVar and ReduceMean."""
    if not meta_outputs[0].dtype.is_floating_point:
        return NotImplemented
    dims = [] if dim is None else ([dim] if isinstance(dim, int) else list(dim))
    var = ge.ReduceVar(self, int_vector(dims), keep_dims=bool(keepdim),
                       correction=1.0 if correction is None else float(correction))
    return var, ge.ReduceMean(self, int_vector(dims), keep_dims=bool(keepdim))
