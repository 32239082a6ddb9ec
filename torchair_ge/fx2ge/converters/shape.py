"""Shape and data movement: views become Reshape (target shape from the meta), permutes
Transpose, cat ConcatV2; copies and dtype conversions Identity/Cast."""
import math

import torch

from torchair_ge import ge
from torchair_ge.fx2ge.converters.common import int_vector, normalize_dim, to_dtype
from torchair_ge.fx2ge.registry import register_fx_node_ge_converter

aten = torch.ops.aten


def _reshape_to_meta(self, meta_outputs):
    return ge.Reshape(self, int_vector(meta_outputs.shape))


for _view_op in [aten.view.default, aten._unsafe_view.default, aten.reshape.default, aten.unsqueeze.default,
                 aten.squeeze.default, aten.squeeze.dim, aten.squeeze.dims, aten.flatten.using_ints]:
    register_fx_node_ge_converter(_view_op)(
        lambda self, *args, meta_outputs=None, **kwargs: _reshape_to_meta(self, meta_outputs))


@register_fx_node_ge_converter(aten.permute.default)
def convert_permute(self, dims, *, meta_outputs=None):
    rank = len(self.shape)
    return ge.Transpose(self, int_vector([normalize_dim(d, rank) for d in dims]))


@register_fx_node_ge_converter(aten.transpose.int)
def convert_transpose(self, dim0, dim1, *, meta_outputs=None):
    rank = len(self.shape)
    if rank < 2:
        return ge.Identity(self)
    perm = list(range(rank))
    a, b = normalize_dim(dim0, rank), normalize_dim(dim1, rank)
    perm[a], perm[b] = perm[b], perm[a]
    return ge.Transpose(self, int_vector(perm))


@register_fx_node_ge_converter(aten.t.default)
def convert_t(self, *, meta_outputs=None):
    if len(self.shape) < 2:
        return ge.Identity(self)
    return ge.Transpose(self, int_vector([1, 0]))


@register_fx_node_ge_converter(aten.cat.default)
def convert_cat(tensors, dim=0, *, meta_outputs=None):
    # torch.cat skips legacy empty 1-D inputs and promotes dtypes; do both.
    parts = [to_dtype(t, meta_outputs.dtype) for t in tensors if list(t.shape) != [0]]
    if not parts:  # only legacy empty inputs: the result is empty too
        return ge.Const(torch.empty(tuple(meta_outputs.shape), dtype=meta_outputs.dtype))
    rank = len(meta_outputs.shape)
    return ge.ConcatV2(parts, int_vector([normalize_dim(dim, rank)]), N=len(parts))


@register_fx_node_ge_converter(aten.clone.default)
@register_fx_node_ge_converter(aten.alias.default)
@register_fx_node_ge_converter(aten.detach.default)
def convert_copy(self, *, memory_format=None, meta_outputs=None):
    return ge.Identity(self)


@register_fx_node_ge_converter(aten.copy_.default)
def convert_copy_(self, src, non_blocking=False, *, meta_outputs=None):
    # After functionalization copy_ only writes back inputs the model mutates.
    if self.node_type != "Data":
        raise NotImplementedError("copy_ into a tensor computed inside the graph is not supported")
    return ge.Assign(self, to_dtype(src, meta_outputs.dtype))


@register_fx_node_ge_converter(aten._to_copy.default)
def convert_to_copy(self, *, dtype=None, layout=None, device=None, pin_memory=None, non_blocking=False,
                    memory_format=None, meta_outputs=None):
    if device is not None and torch.device(device).type != "cpu":
        raise NotImplementedError(f"copies to device {device} are not supported by the CPU device")
    out = to_dtype(self, meta_outputs.dtype)
    return ge.Identity(out) if out is self else out


@register_fx_node_ge_converter(torch.ops.prims.convert_element_type.default)
def convert_element_type(self, dtype, *, meta_outputs=None):
    """prims' dtype conversion, which decompositions leave in graphs (a rotary embedding's
    `.float()` of positions): a Cast, as _to_copy."""
    out = to_dtype(self, meta_outputs.dtype)
    return ge.Identity(out) if out is self else out


def _contiguous_strides(shape):
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= size
    return strides[::-1]


@register_fx_node_ge_converter(aten.as_strided.default, input_metas=True)
def convert_as_strided(self, size, stride, storage_offset=None, *, meta_inputs, meta_outputs=None):
    """as_strided that only restates a dense layout (e.g. new strides on size-1 dims, which
    Dynamo's pooling decompositions emit) is a Reshape. Any other as_strided reads the input's
    storage in an order the IR's dense values do not keep: host fallback."""
    source = meta_inputs[0]
    offset = source.storage_offset() if storage_offset is None else storage_offset
    dense = [s for n, s in zip(size, stride) if n != 1] == [s for n, s in zip(size, _contiguous_strides(size)) if n != 1]
    if not (source.is_contiguous() and offset == source.storage_offset() and dense and source.numel() == math.prod(size)):
        return NotImplemented
    return ge.Reshape(self, int_vector(meta_outputs.shape))
