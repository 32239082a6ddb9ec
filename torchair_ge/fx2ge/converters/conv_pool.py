"""Convolution and pooling (2-D, NCHW). Unbatched 3-D inputs are given a batch dim of 1."""
import torch

from torchair_ge import ge
from torchair_ge.fx2ge.converters.common import int_vector, pair
from torchair_ge.fx2ge.registry import register_fx_node_ge_converter

aten = torch.ops.aten


def _float(meta):
    """The IR's conv/pool ops are floating point; other dtypes run on the host-fallback engine."""
    return meta.dtype.is_floating_point


def _batched(x):
    """(x as 4-D, function restoring the original rank)."""
    if len(x.shape) == 4:
        return x, lambda y: y
    if len(x.shape) == 3:
        unbatched = lambda y: ge.Reshape(y, int_vector(list(y.shape)[1:]))  # noqa: E731
        return ge.Reshape(x, int_vector([1] + list(x.shape))), unbatched
    raise NotImplementedError(f"expected a 3-D or 4-D input, got shape {list(x.shape)}")


@register_fx_node_ge_converter(aten.convolution.default)
def convert_convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups, *,
                        meta_outputs=None):
    if not _float(meta_outputs) or len(weight.shape) not in (3, 4) or (transposed and len(weight.shape) != 4):
        return NotImplemented  # 3-D, transposed 1-D or integer convolution: host fallback
    if len(weight.shape) == 3:  # 1-D: a 2-D convolution over a height of 1
        return _conv1d(input, weight, bias, stride, padding, dilation, groups, meta_outputs)
    x, restore = _batched(input)
    sh, sw = pair(stride)
    ph, pw = pair(padding)
    dh, dw = pair(dilation)
    attrs = dict(strides=[1, 1, sh, sw], pads=[ph, ph, pw, pw], dilations=[1, 1, dh, dw], groups=groups)
    if transposed:
        oh, ow = pair(output_padding)
        return restore(ge.Conv2DTranspose(x, weight, bias, output_padding=[0, 0, oh, ow], **attrs))
    return restore(ge.Conv2D(x, weight, bias, **attrs))


@register_fx_node_ge_converter(aten.convolution_backward.default)
def convert_convolution_backward(grad_output, input, weight, bias_sizes, stride, padding, dilation, transposed,
                                 output_padding, groups, output_mask, *, meta_outputs=None):
    """2-D convolution's gradients: the input's is the transposed convolution of the output's
    gradient (output padding restores the sizes the stride rounded off), the filter's one
    Conv2DBackpropFilterD, the bias's a sum over batch and space."""
    if (transposed or len(weight.shape) != 4 or len(input.shape) != 4
            or not all(m is None or m.dtype.is_floating_point for m in meta_outputs)):
        return NotImplemented  # 1-D/3-D, transposed or integer convolutions: host fallback
    (sh, sw), (ph, pw), (dh, dw) = pair(stride), pair(padding), pair(dilation)
    attrs = dict(strides=[1, 1, sh, sw], pads=[ph, ph, pw, pw], dilations=[1, 1, dh, dw], groups=groups)
    grads = [None, None, None]
    if output_mask[0]:
        kh, kw = weight.shape[2:]
        ho, wo = grad_output.shape[2:]
        lost = [input.shape[2] - ((ho - 1) * sh - 2 * ph + dh * (kh - 1) + 1),
                input.shape[3] - ((wo - 1) * sw - 2 * pw + dw * (kw - 1) + 1)]
        grads[0] = ge.Conv2DTranspose(grad_output, weight, None, output_padding=[0, 0, *lost], **attrs)
    if output_mask[1]:
        grads[1] = ge.Conv2DBackpropFilterD(input, grad_output, filter_size=list(weight.shape), **attrs)
    if output_mask[2]:
        grads[2] = ge.ReduceSum(grad_output, int_vector([0, 2, 3]), keep_dims=False)
    return tuple(grads)


def _conv1d(input, weight, bias, stride, padding, dilation, groups, meta):
    batched = len(input.shape) == 3
    n, c, length = (input.shape if batched else [1, *input.shape])
    x = ge.Reshape(input, int_vector([n, c, 1, length]))
    w = ge.Reshape(weight, int_vector([weight.shape[0], weight.shape[1], 1, weight.shape[2]]))
    (s,), (p,), (d,) = [v if isinstance(v, (list, tuple)) else [v] for v in (stride, padding, dilation)]
    y = ge.Conv2D(x, w, bias, strides=[1, 1, 1, s], pads=[0, 0, p, p], dilations=[1, 1, 1, d], groups=groups)
    return ge.Reshape(y, int_vector(meta.shape))


def _pool_window(kernel_size, stride, padding):
    kh, kw = pair(kernel_size)
    sh, sw = pair(stride) if stride else (kh, kw)  # torch: an empty stride means the kernel size
    ph, pw = pair(padding)
    return dict(ksize=[1, 1, kh, kw], strides=[1, 1, sh, sw], pads=[ph, ph, pw, pw])


@register_fx_node_ge_converter(aten.max_pool2d_with_indices.default)
def convert_max_pool2d_with_indices(self, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False, *,
                                    meta_outputs=None):
    """MaxPoolWithArgmaxV2: the values and where each maximum was (training saves the indices for
    max_pool2d_with_indices_backward; inference graphs have max_pool2d, a MaxPoolV3)."""
    if pair(dilation) != [1, 1] or not _float(meta_outputs[0]):
        return NotImplemented
    x, restore = _batched(self)
    values, indices = ge.MaxPoolWithArgmaxV2(x, ceil_mode=ceil_mode, **_pool_window(kernel_size, stride, padding))
    return restore(values), restore(indices)


@register_fx_node_ge_converter(aten.max_pool2d.default)
def convert_max_pool2d(self, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False, *, meta_outputs=None):
    if pair(dilation) != [1, 1] or not _float(meta_outputs):
        return NotImplemented  # MaxPoolV3 has no dilation and is floating point only
    x, restore = _batched(self)
    return restore(ge.MaxPoolV3(x, ceil_mode=ceil_mode, **_pool_window(kernel_size, stride, padding)))


@register_fx_node_ge_converter(aten.avg_pool2d.default)
def convert_avg_pool2d(self, kernel_size, stride=(), padding=0, ceil_mode=False, count_include_pad=True,
                       divisor_override=None, *, meta_outputs=None):
    if not _float(meta_outputs):
        return NotImplemented
    x, restore = _batched(self)
    return restore(ge.AvgPoolV2(x, ceil_mode=ceil_mode, exclusive=not count_include_pad,
                                divisor_override=divisor_override or 0,
                                **_pool_window(kernel_size, stride, padding)))


@register_fx_node_ge_converter(aten._adaptive_avg_pool2d.default)
@register_fx_node_ge_converter(aten.adaptive_avg_pool2d.default)
def convert_adaptive_avg_pool2d(self, output_size, *, meta_outputs=None):
    if not _float(meta_outputs):
        return NotImplemented
    x, restore = _batched(self)
    return restore(ge.AdaptiveAvgPool2d(x, output_size=list(meta_outputs.shape[-2:])))
