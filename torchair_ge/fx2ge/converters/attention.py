"""Scaled dot-product attention on the math path: softmax(q @ k^T * scale + mask) @ v, with a
causal mask as a constant. (On CPU, torch lowers F.scaled_dot_product_attention to the flash
kernel; the math path gives the same values up to rounding.) Grouped-query attention (fewer
key/value heads than query heads) repeats each KV head for its group of query heads."""
import math

import torch

from torchair_ge import ge
from torchair_ge.fx2ge.converters.common import int_vector, to_dtype
from torchair_ge.fx2ge.errors import NotProduced
from torchair_ge.fx2ge.registry import register_fx_node_ge_converter

aten = torch.ops.aten


def repeat_heads(x, groups):
    """[..., H, S, D] -> [..., H * groups, S, D], each head repeated `groups` times in place
    (repeat_interleave over the head axis): grouped-query attention's KV heads."""
    *batch, heads, length, dim = x.shape
    spread = ge.BroadcastTo(ge.Reshape(x, int_vector([*batch, heads, 1, length, dim])),
                            int_vector([*batch, heads, groups, length, dim]))
    return ge.Reshape(spread, int_vector([*batch, heads * groups, length, dim]))


def attention(query, key, value, attn_mask, is_causal, scale, dtype):
    if len(query.shape) >= 3 and query.shape[-3] != key.shape[-3]:  # grouped-query attention
        if query.shape[-3] % key.shape[-3]:
            raise ValueError(f"query heads {query.shape[-3]} are not a multiple of key/value heads {key.shape[-3]}")
        groups = query.shape[-3] // key.shape[-3]
        key, value = repeat_heads(key, groups), repeat_heads(value, groups)
    scale = scale if scale is not None else 1.0 / math.sqrt(query.shape[-1])
    scores = ge.Mul(ge.BatchMatMulV2(query, key, adj_x2=True), to_dtype(scale, dtype))
    length, source = query.shape[-2], key.shape[-2]
    if is_causal:
        causal = torch.full((length, source), float("-inf")).triu(1)
        scores = ge.Add(scores, ge.Const(causal, dtype))
    if attn_mask is not None:
        if attn_mask.dtype == ge.DataType.DT_BOOL:  # True = attend
            scores = ge.MaskedFill(scores, ge.LogicalNot(attn_mask), to_dtype(float("-inf"), dtype))
        else:
            scores = ge.Add(scores, to_dtype(attn_mask, dtype))
    return ge.BatchMatMulV2(ge.SoftmaxV2(scores, axes=[-1]), value)


@register_fx_node_ge_converter(aten._scaled_dot_product_flash_attention_for_cpu.default, unproduced_outputs=(1,))
def convert_sdpa_flash_cpu(query, key, value, dropout_p=0.0, is_causal=False, *, attn_mask=None, scale=None,
                           meta_outputs=None):
    if dropout_p:
        return NotImplemented  # random dropout stays with torch
    out = attention(query, key, value, attn_mask, is_causal, scale, meta_outputs[0].dtype)
    return out, NotProduced("attention logsumexp")


@register_fx_node_ge_converter(aten.scaled_dot_product_attention.default)
def convert_sdpa(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, *, scale=None, enable_gqa=False,
                 meta_outputs=None):
    if dropout_p:
        return NotImplemented
    return attention(query, key, value, attn_mask, is_causal, scale, meta_outputs.dtype)
