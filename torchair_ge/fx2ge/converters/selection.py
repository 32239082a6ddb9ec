"""gather/scatter, advanced indexing (index, index_put), histc, topk/sort, bitwise ops, any/all,
logsumexp, var/std, group norm."""
import torch

from torchair_ge import ge
from torchair_ge.fx2ge.converters.common import common_dtype, int_vector, normalize_dim, to_dtype
from torchair_ge.fx2ge.registry import register_fx_node_ge_converter

aten = torch.ops.aten


def _dim(x, dim):
    return normalize_dim(dim, len(x.shape)) if x.shape else 0


def _int_index(index):
    """The IR's index inputs are int32/int64; torch also takes uint8 etc. (host fallback)."""
    return index.dtype in (ge.DataType.DT_INT32, ge.DataType.DT_INT64)


def _axes(dim):
    return [] if dim is None else [dim] if isinstance(dim, int) else list(dim)


@register_fx_node_ge_converter(aten.gather.default)
def convert_gather(self, dim, index, *, sparse_grad=False, meta_outputs=None):
    if len(index.shape) != len(self.shape) or not _int_index(index):
        return NotImplemented
    return ge.GatherElements(self, index, dim=_dim(self, dim))


def _scatter(self, dim, index, src, reduction):
    if list(src.shape) != list(index.shape) or len(index.shape) != len(self.shape) or not _int_index(index):
        return NotImplemented  # a larger src (only its index-shaped corner is used): host fallback
    return ge.ScatterElements(self, index, src, axis=_dim(self, dim), reduction=reduction)


@register_fx_node_ge_converter(aten.scatter.src)
def convert_scatter(self, dim, index, src, *, meta_outputs=None):
    return _scatter(self, dim, index, to_dtype(src, meta_outputs.dtype), "none")


@register_fx_node_ge_converter(aten.scatter.value)
def convert_scatter_value(self, dim, index, value, *, meta_outputs=None):
    src = ge.BroadcastTo(to_dtype(value, meta_outputs.dtype), int_vector(index.shape))
    return _scatter(self, dim, index, src, "none")


@register_fx_node_ge_converter(aten.scatter_add.default)
def convert_scatter_add(self, dim, index, src, *, meta_outputs=None):
    return _scatter(self, dim, index, to_dtype(src, meta_outputs.dtype), "add")


@register_fx_node_ge_converter(aten.index_copy.default)
def convert_index_copy(self, dim, index, source, *, meta_outputs=None):
    """self with source's slices written at `index` along dim (a static KV cache's prefill): the
    1-D index spread over source's shape, then ScatterElements."""
    if not self.shape or len(index.shape) != 1 or len(source.shape) != len(self.shape) or not _int_index(index):
        return NotImplemented  # a 0-d tensor or a 0-d index: host fallback
    d = _dim(self, dim)
    spread = [1] * len(self.shape)
    spread[d] = index.shape[0]
    indices = ge.BroadcastTo(ge.Reshape(index, int_vector(spread)), int_vector(source.shape))
    return _scatter(self, d, indices, to_dtype(source, meta_outputs.dtype), "none")


@register_fx_node_ge_converter(aten.topk.default)
def convert_topk(self, k, dim=-1, largest=True, sorted=True, *, meta_outputs=None):
    if meta_outputs[0].dtype == torch.bool:
        return NotImplemented
    return ge.TopKV2(self, ge.Const([k], torch.int64), dim=_dim(self, dim), largest=largest, sorted=sorted)


@register_fx_node_ge_converter(aten.sort.default)
def convert_sort(self, dim=-1, descending=False, *, meta_outputs=None):
    return convert_sort_stable(self, stable=False, dim=dim, descending=descending, meta_outputs=meta_outputs)


@register_fx_node_ge_converter(aten.sort.stable)
def convert_sort_stable(self, *, stable=None, dim=-1, descending=False, meta_outputs=None):
    if meta_outputs[0].dtype == torch.bool:
        return NotImplemented
    return ge.Sort(self, axis=_dim(self, dim), descending=descending, stable=bool(stable))


def _bitwise(ir_op):
    def convert(self, other, *, meta_outputs=None):
        dtype = common_dtype(self, other)
        if dtype.is_floating_point:
            return NotImplemented
        return ge.op(ir_op, to_dtype(self, dtype), to_dtype(other, dtype))
    return convert


for _name, _ir in [("bitwise_and", "BitwiseAnd"), ("bitwise_or", "BitwiseOr"), ("bitwise_xor", "BitwiseXor")]:
    for _overload in ("Tensor", "Scalar"):
        register_fx_node_ge_converter(getattr(getattr(aten, _name), _overload))(_bitwise(_ir))


def _bool_reduce(ir_op, self, dim, keepdim):
    return ge.op(ir_op, to_dtype(self, torch.bool), int_vector(_axes(dim)), keep_dims=bool(keepdim))


@register_fx_node_ge_converter(aten.any.default)
@register_fx_node_ge_converter(aten.any.dim)
@register_fx_node_ge_converter(aten.any.dims)
def convert_any(self, dim=None, keepdim=False, *, meta_outputs=None):
    if meta_outputs.dtype != torch.bool:
        return NotImplemented  # any() of uint8 returns uint8
    return _bool_reduce("ReduceAny", self, dim, keepdim)


@register_fx_node_ge_converter(aten.all.default)
@register_fx_node_ge_converter(aten.all.dim)
@register_fx_node_ge_converter(aten.all.dims)
def convert_all(self, dim=None, keepdim=False, *, meta_outputs=None):
    if meta_outputs.dtype != torch.bool:
        return NotImplemented
    return _bool_reduce("ReduceAll", self, dim, keepdim)


@register_fx_node_ge_converter(aten.logsumexp.default)
def convert_logsumexp(self, dim, keepdim=False, *, meta_outputs=None):
    return ge.ReduceLogSumExp(to_dtype(self, meta_outputs.dtype), int_vector(_axes(dim)), keep_dims=keepdim)


@register_fx_node_ge_converter(aten.var.correction)
def convert_var(self, dim=None, *, correction=None, keepdim=False, meta_outputs=None):
    return ge.ReduceVar(self, int_vector(_axes(dim)), keep_dims=keepdim,
                        correction=1.0 if correction is None else float(correction))


@register_fx_node_ge_converter(aten.std.correction)
def convert_std(self, dim=None, *, correction=None, keepdim=False, meta_outputs=None):
    return ge.ReduceStd(self, int_vector(_axes(dim)), keep_dims=keepdim,
                        correction=1.0 if correction is None else float(correction))


@register_fx_node_ge_converter(aten.native_group_norm.default)
def convert_native_group_norm(input, weight, bias, N, C, HxW, group, eps, *, meta_outputs=None):
    return ge.GroupNorm(input, weight, bias, num_groups=group, eps=eps)


def _indexed(indices):
    """torch's index list (None = whole dim) as (dims, index tensors of one dtype), or None when
    an index is a boolean mask: the result's size then depends on the data (host fallback)."""
    present = [(d, i) for d, i in enumerate(indices) if i is not None]
    if not present or not all(_int_index(i) for _, i in present):
        return None
    dims = [d for d, _ in present]
    tensors = [i for _, i in present]
    if len({i.dtype for i in tensors}) > 1:
        tensors = [to_dtype(i, torch.int64) for i in tensors]
    return dims, tensors


@register_fx_node_ge_converter(aten.index.Tensor)
@register_fx_node_ge_converter(aten._unsafe_index.Tensor)
def convert_index(self, indices, *, meta_outputs=None):
    indexed = _indexed(indices)
    if indexed is None:
        return NotImplemented
    dims, tensors = indexed
    return ge.Index(self, tensors, indexed_dims=dims, N=len(tensors))


@register_fx_node_ge_converter(aten.index_put.default)
@register_fx_node_ge_converter(aten._unsafe_index_put.default)
def convert_index_put(self, indices, values, accumulate=False, *, meta_outputs=None):
    indexed = _indexed(indices)
    if indexed is None:
        return NotImplemented
    dims, tensors = indexed
    return ge.IndexPut(self, to_dtype(values, meta_outputs.dtype), tensors, indexed_dims=dims, N=len(tensors),
                       accumulate=bool(accumulate))


@register_fx_node_ge_converter(aten.histc.default)
def convert_histc(self, bins=100, min=0, max=0, *, meta_outputs=None):
    return ge.Histc(self, bins=int(bins), min=float(min), max=float(max))
