"""Indexing with static parameters: select/slice/expand/stack/embedding/index_select, their
scatter forms (slice_scatter/select_scatter), fill/copy, and arange (a Range node, folded into a
constant at compile time)."""
import sys

import torch

from torchair_ge import ge
from torchair_ge.fx2ge.converters.common import arange, int_vector, normalize_dim, to_dtype
from torchair_ge.fx2ge.registry import register_fx_node_ge_converter

aten = torch.ops.aten


@register_fx_node_ge_converter(aten.select.int)
def convert_select(self, dim, index, *, meta_outputs=None):
    rank = len(self.shape)
    dim = normalize_dim(dim, rank)
    index = index + self.shape[dim] if index < 0 else index
    return ge.GatherV2(self, ge.Const(index, torch.int64), int_vector([dim]))


@register_fx_node_ge_converter(aten.slice.Tensor)
def convert_slice(self, dim=0, start=None, end=None, step=1, *, meta_outputs=None):
    dim = normalize_dim(dim, len(self.shape))
    start = 0 if start is None else start
    end = sys.maxsize if end is None else end
    size = self.shape[dim]
    end = min(end, size) if end >= 0 else end  # python's huge "to the end" sentinel would overflow int64 math
    return ge.StridedSliceV2(self, int_vector([start]), int_vector([end]), int_vector([dim]), int_vector([step]))


@register_fx_node_ge_converter(aten.expand.default)
def convert_expand(self, size, *, implicit=False, meta_outputs=None):
    return ge.BroadcastTo(self, int_vector(meta_outputs.shape))


@register_fx_node_ge_converter(aten.stack.default)
def convert_stack(tensors, dim=0, *, meta_outputs=None):
    parts = [to_dtype(t, meta_outputs.dtype) for t in tensors]
    return ge.Pack(parts, axis=normalize_dim(dim, len(meta_outputs.shape)), N=len(parts))


@register_fx_node_ge_converter(aten.embedding.default)
def convert_embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False, *, meta_outputs=None):
    # padding_idx and scale_grad_by_freq only change gradients.
    return ge.GatherV2(weight, indices, int_vector([0]))


@register_fx_node_ge_converter(aten.index_select.default)
def convert_index_select(self, dim, index, *, meta_outputs=None):
    if not self.shape:
        return NotImplemented  # 0-d input: torch treats it as 1-element 1-D; left to the fallback
    return ge.GatherV2(self, index, int_vector([normalize_dim(dim, len(self.shape))]))


@register_fx_node_ge_converter(aten.arange.default)
@register_fx_node_ge_converter(aten.arange.start)
@register_fx_node_ge_converter(aten.arange.start_step)
def convert_arange(*args, dtype=None, layout=None, device=None, pin_memory=None, meta_outputs=None):
    start, end, step = (0, args[0], 1) if len(args) == 1 else (*args[:2], args[2] if len(args) > 2 else 1)
    return arange(start, end, step, meta_outputs.dtype)


def _slice_bounds(size, start, end):
    """python's slice clamping of [start, end) on a dim of `size`."""
    start = 0 if start is None else start
    end = size if end is None else end
    start, end = (v + size if v < 0 else v for v in (start, end))
    return max(0, min(start, size)), max(0, min(end, size))


@register_fx_node_ge_converter(aten.slice_scatter.default)
def convert_slice_scatter(self, src, dim=0, start=None, end=None, step=1, *, meta_outputs=None):
    """self with self[start:end:step] along dim replaced by src. Step 1 is a concat of the kept
    parts and src; other steps scatter src through a broadcast 1-D index."""
    dim = normalize_dim(dim, len(self.shape))
    start, end = _slice_bounds(self.shape[dim], start, end)
    src = to_dtype(src, meta_outputs.dtype)
    if step == 1:
        parts = [p for p, n in ((convert_slice(self, dim, 0, start), start), (src, end - start),
                                (convert_slice(self, dim, end, None), self.shape[dim] - end)) if n > 0]
        return parts[0] if len(parts) == 1 else ge.ConcatV2(parts, int_vector([dim]), N=len(parts))
    spread = [1] * len(self.shape)
    spread[dim] = src.shape[dim]
    positions = ge.Reshape(arange(start, end, step), int_vector(spread))
    index = ge.BroadcastTo(positions, int_vector(src.shape))
    return ge.ScatterElements(self, index, src, axis=dim, reduction="none")


@register_fx_node_ge_converter(aten.select_scatter.default)
def convert_select_scatter(self, src, dim, index, *, meta_outputs=None):
    dim = normalize_dim(dim, len(self.shape))
    index = index + self.shape[dim] if index < 0 else index
    shape = list(self.shape)
    shape[dim] = 1
    return convert_slice_scatter(self, ge.Reshape(src, int_vector(shape)), dim, index, index + 1,
                                 meta_outputs=meta_outputs)


@register_fx_node_ge_converter(aten.fill.Tensor)
@register_fx_node_ge_converter(aten.fill.Scalar)
@register_fx_node_ge_converter(aten.copy.default)
def convert_fill_or_copy(self, value, non_blocking=False, *, meta_outputs=None):
    """fill(self, value) and copy(self, src): value/src broadcast to self's shape and dtype."""
    return ge.BroadcastTo(to_dtype(value, meta_outputs.dtype), int_vector(meta_outputs.shape))
