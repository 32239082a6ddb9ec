"""Scaled dot-product attention. The forward on the math path: softmax(q @ k^T * scale + mask)
@ v, with a causal mask built from two ranges (a constant once compiled), which the optimizer's
FusedAttention rule makes one flash kernel. (On CPU torch lowers F.scaled_dot_product_attention
to the flash kernel; the math path gives the same values up to rounding, and a query that sees no
key gets 0 from both.) Grouped-query attention (fewer key/value heads than query heads) repeats
each KV head for its group of query heads. The backward is one FusedAttentionGrad."""
import math

import torch

from torchair_ge import ge
from torchair_ge.fx2ge.converters.common import arange, int_vector, to_dtype
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


def _shared_heads(query, key, value):
    """Key and value with a head per query head: grouped-query attention's KV heads (fewer than
    the query's) repeated for their group."""
    if len(query.shape) < 3 or query.shape[-3] == key.shape[-3]:
        return key, value
    if query.shape[-3] % key.shape[-3]:
        raise ValueError(f"query heads {query.shape[-3]} are not a multiple of key/value heads {key.shape[-3]}")
    groups = query.shape[-3] // key.shape[-3]
    return repeat_heads(key, groups), repeat_heads(value, groups)


def _scale(query, scale):
    return scale if scale is not None else 1.0 / math.sqrt(query.shape[-1])


def scores_of(query, key, attn_mask, is_causal, scale, dtype):
    """q @ k^T * scale plus the causal and explicit masks: the logits the softmax reads."""
    scores = ge.Mul(ge.BatchMatMulV2(query, key, adj_x2=True), to_dtype(_scale(query, scale), dtype))
    length, source = query.shape[-2], key.shape[-2]
    if is_causal:  # query i sees keys 0..i (torch's top-left causal mask), built from ranges
        rows = ge.Reshape(arange(0, length), int_vector([length, 1]))
        columns = ge.Reshape(arange(0, source), int_vector([1, source]))
        scores = ge.MaskedFill(scores, ge.Greater(columns, rows), to_dtype(float("-inf"), dtype))
    if attn_mask is not None:
        if attn_mask.dtype == ge.DataType.DT_BOOL:  # True = attend
            scores = ge.MaskedFill(scores, ge.LogicalNot(attn_mask), to_dtype(float("-inf"), dtype))
        else:
            scores = ge.Add(scores, to_dtype(attn_mask, dtype))
    return scores


def attention(query, key, value, attn_mask, is_causal, scale, dtype):
    key, value = _shared_heads(query, key, value)
    scores = scores_of(query, key, attn_mask, is_causal, scale, dtype)
    # SafeSoftmax: a query that sees no key gets 0, as eager's flash kernel and math path give
    return ge.BatchMatMulV2(ge.SafeSoftmax(scores, axes=[-1]), value), scores


def _differentiable(query, dropout_p=0.0):
    """Training attention runs natively for float32 without dropout (grouped-query included);
    the rest stays with torch: below float32 the recomputed probabilities would differ from the
    flash kernel's, which accumulates in float32. Takes IR values or FakeTensors."""
    return query.dtype in (torch.float32, ge.DataType.DT_FLOAT) and not dropout_p


@register_fx_node_ge_converter(aten._scaled_dot_product_flash_attention_for_cpu.default,
                               unproduced_outputs=lambda q, k, v, dropout_p=0.0, *_: () if _differentiable(q, dropout_p)
                               else (1,))
def convert_sdpa_flash_cpu(query, key, value, dropout_p=0.0, is_causal=False, *, attn_mask=None, scale=None,
                           meta_outputs=None):
    """The output, and the log-sum-exp of the logits per query row that training saves for the
    backward (a ReduceLogSumExp of the same scores; dead code when nothing reads it, so the
    optimizer still makes an inference graph's attention one FusedAttention)."""
    if dropout_p:
        return NotImplemented  # random dropout stays with torch
    out, scores = attention(query, key, value, attn_mask, is_causal, scale, meta_outputs[0].dtype)
    if not _differentiable(query):
        return out, NotProduced("attention logsumexp (float32 only)")
    return out, ge.ReduceLogSumExp(scores, int_vector([-1]), keep_dims=False)


def _finite_rows(logsumexp):
    """The saved log-sum-exp with a query that saw no key (-inf when the forward's attention was
    not one fused kernel; the kernels and eager save 0) taken as 0, as FusedAttentionGrad wants it."""
    dtype = ge.DataType.DT_FLOAT
    return ge.SelectV2(ge.Equal(logsumexp, to_dtype(float("-inf"), dtype)), to_dtype(0.0, dtype), logsumexp)


def _additive_mask(attn_mask, dtype):
    """SDPA's mask as one added to the scores: a boolean one (True = attend) becomes 0 / -inf."""
    if attn_mask is None or attn_mask.dtype != ge.DataType.DT_BOOL:
        return None if attn_mask is None else to_dtype(attn_mask, dtype)
    return ge.SelectV2(attn_mask, to_dtype(0.0, dtype), to_dtype(float("-inf"), dtype))


@register_fx_node_ge_converter(aten._scaled_dot_product_flash_attention_for_cpu_backward.default)
def convert_sdpa_flash_cpu_backward(grad_out, query, key, value, out, logsumexp, dropout_p=0.0, is_causal=False, *,
                                    attn_mask=None, scale=None, meta_outputs=None):
    """Attention's gradients from the saved output and log-sum-exp: one FusedAttentionGrad, whose
    kernels recompute the probabilities block by block as the flash kernel's backward does
    (dV = P^T dO, dS = P * (dO V^T - rowsum(dO * O)) * scale, dQ = dS K, dK = dS^T Q) and take
    grouped-query attention's key/value heads as they are (their gradients summed over each group)."""
    if not _differentiable(query, dropout_p):
        return NotImplemented
    dtype = ge.DataType.DT_FLOAT
    return ge.FusedAttentionGrad(query, key, value, _additive_mask(attn_mask, dtype), grad_out, out,
                                 _finite_rows(logsumexp), scale=float(_scale(query, scale)), is_causal=bool(is_causal))


@register_fx_node_ge_converter(aten.scaled_dot_product_attention.default)
def convert_sdpa(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, *, scale=None, enable_gqa=False,
                 meta_outputs=None):
    if dropout_p:
        return NotImplemented
    return attention(query, key, value, attn_mask, is_causal, scale, meta_outputs.dtype)[0]
