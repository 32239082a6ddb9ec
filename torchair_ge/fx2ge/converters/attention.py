"""Scaled dot-product attention on the math path: softmax(q @ k^T * scale + mask) @ v, with a
causal mask built from two ranges (a constant once compiled). (On CPU, torch lowers F.scaled_dot_product_attention to the flash
kernel; the math path gives the same values up to rounding, and a query that sees no key gets 0
from both.) Grouped-query attention (fewer
key/value heads than query heads) repeats each KV head for its group of query heads."""
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


def _group_heads(query, key):
    """How many query heads share each key/value head (1 without grouped-query attention)."""
    if len(query.shape) < 3 or query.shape[-3] == key.shape[-3]:
        return 1
    if query.shape[-3] % key.shape[-3]:
        raise ValueError(f"query heads {query.shape[-3]} are not a multiple of key/value heads {key.shape[-3]}")
    return query.shape[-3] // key.shape[-3]


def _shared_heads(query, key, value):
    """Key and value with a head per query head (grouped-query attention's KV heads repeated),
    and how many query heads share each original KV head."""
    groups = _group_heads(query, key)
    if groups == 1:
        return key, value, 1
    return repeat_heads(key, groups), repeat_heads(value, groups), groups


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
    key, value, _ = _shared_heads(query, key, value)
    scores = scores_of(query, key, attn_mask, is_causal, scale, dtype)
    # SafeSoftmax: a query that sees no key gets 0, as eager's flash kernel and math path give
    return ge.BatchMatMulV2(ge.SafeSoftmax(scores, axes=[-1]), value), scores


def _differentiable(query, dropout_p=0.0):
    """Training attention runs natively for float32 without dropout (grouped-query included);
    the rest stays with torch: below float32 the recomputed probabilities would differ from the
    flash kernel's, which accumulates in float32. Takes IR values or FakeTensors."""
    return query.dtype in (torch.float32, ge.DataType.DT_FLOAT) and not dropout_p


def _sum_over_groups(grad, groups):
    """The gradient of repeat_heads: [..., H * groups, S, D] -> [..., H, S, D], each head's
    `groups` copies summed."""
    if groups == 1:
        return grad
    *batch, heads, length, dim = grad.shape
    grouped = ge.Reshape(grad, int_vector([*batch, heads // groups, groups, length, dim]))
    return ge.ReduceSum(grouped, int_vector([-3]), keep_dims=False)


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
    """The saved log-sum-exp as a column [..., L, 1], a query that saw no key (-inf when the
    forward's attention was not one fused kernel; the kernels and eager save 0) taken as 0: its
    probabilities exp(-inf - 0) are then 0, not NaN."""
    dtype = ge.DataType.DT_FLOAT
    finite = ge.SelectV2(ge.Equal(logsumexp, to_dtype(float("-inf"), dtype)), to_dtype(0.0, dtype), logsumexp)
    return ge.Reshape(finite, int_vector([*logsumexp.shape, 1]))


@register_fx_node_ge_converter(aten._scaled_dot_product_flash_attention_for_cpu_backward.default)
def convert_sdpa_flash_cpu_backward(grad_out, query, key, value, out, logsumexp, dropout_p=0.0, is_causal=False, *,
                                    attn_mask=None, scale=None, meta_outputs=None):
    """Attention's gradients from the saved output and log-sum-exp, the probabilities recomputed
    from the logits (as the flash kernel's backward does): dV = P^T dO, dS = P * (dO V^T -
    rowsum(dO * O)) * scale, dQ = dS K, dK = dS^T Q. Under grouped-query attention the key and
    value heads are repeated as in the forward and each head's gradient is the sum over its group."""
    if not _differentiable(query, dropout_p):
        return NotImplemented
    key, value, groups = _shared_heads(query, key, value)
    scores = scores_of(query, key, attn_mask, is_causal, scale, ge.DataType.DT_FLOAT)
    probs = ge.Exp(ge.Sub(scores, _finite_rows(logsumexp)))
    grad_value = ge.BatchMatMulV2(probs, grad_out, adj_x1=True)
    grad_probs = ge.BatchMatMulV2(grad_out, value, adj_x2=True)
    row_dot = ge.ReduceSum(ge.Mul(grad_out, out), int_vector([-1]), keep_dims=True)
    grad_scores = ge.Mul(ge.Mul(probs, ge.Sub(grad_probs, row_dot)), to_dtype(_scale(query, scale), ge.DataType.DT_FLOAT))
    grad_key = ge.BatchMatMulV2(grad_scores, query, adj_x1=True)
    return (ge.BatchMatMulV2(grad_scores, key), _sum_over_groups(grad_key, groups), _sum_over_groups(grad_value, groups))


@register_fx_node_ge_converter(aten.scaled_dot_product_attention.default)
def convert_sdpa(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, *, scale=None, enable_gqa=False,
                 meta_outputs=None):
    if dropout_p:
        return NotImplemented
    return attention(query, key, value, attn_mask, is_causal, scale, meta_outputs.dtype)[0]
