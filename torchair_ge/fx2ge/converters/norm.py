"""Normalization and softmax."""
import torch

from torchair_ge import ge
from torchair_ge.fx2ge.converters.common import to_dtype
from torchair_ge.fx2ge.registry import register_fx_node_ge_converter

aten = torch.ops.aten


@register_fx_node_ge_converter(aten._native_batch_norm_legit_no_training.default)
def convert_batch_norm_inference(input, weight, bias, running_mean, running_var, momentum, eps, *,
                                 meta_outputs=None):
    channels = input.shape[1]
    stat_dtype = running_mean.dtype
    if weight is None:
        weight = ge.Const(torch.ones(channels), stat_dtype)
    if bias is None:
        bias = ge.Const(torch.zeros(channels), stat_dtype)
    y = ge.BatchNorm(input, weight, bias, running_mean, running_var, epsilon=eps, is_training=False)
    # In inference ATen returns empty save_mean/save_invstd; a grad-mode forward still lists them.
    empty = [ge.Const(torch.empty(tuple(m.shape), dtype=m.dtype)) for m in meta_outputs[1:]]
    return (y, *empty)


@register_fx_node_ge_converter(aten.native_layer_norm.default)
def convert_native_layer_norm(input, normalized_shape, weight, bias, eps, *, meta_outputs=None):
    axis = len(input.shape) - len(normalized_shape)
    y, mean, variance = ge.LayerNorm(input, weight, bias, begin_norm_axis=axis, begin_params_axis=axis, epsilon=eps)
    # ATen's third output is rstd = 1/sqrt(var + eps) (saved for backward); the IR gives the
    # variance, so rstd is recomputed from it (equal to ATen's up to rounding).
    rstd = ge.Rsqrt(ge.Add(variance, ge.Const(eps, meta_outputs[2].dtype)))
    return y, mean, rstd


@register_fx_node_ge_converter(aten._softmax.default)
def convert_softmax(self, dim, half_to_float, *, meta_outputs=None):
    if half_to_float:
        raise NotImplementedError("_softmax with half_to_float=True is not supported yet")
    return ge.SoftmaxV2(self, axes=[dim])


@register_fx_node_ge_converter(aten._safe_softmax.default)
def convert_safe_softmax(self, dim, dtype=None, *, meta_outputs=None):
    """SDPA's math path's softmax: a row that is -inf throughout gives 0, not NaN."""
    return ge.SafeSoftmax(to_dtype(self, meta_outputs.dtype) if dtype is not None else self, axes=[dim])
