"""Attention alone, prefill and decode shapes of a grouped-query LLM layer: ATen's CPU flash
kernel (eager F.scaled_dot_product_attention), the explicit path (KV heads repeated, scores
materialized, softmax, product: what a model written out by hand runs) and torchair_ge's
compiled SDPA (one FusedAttention node reading the KV heads unrepeated). Medians of interleaved
rounds, ratios within this run."""
import math
import statistics

import torch
import torch._dynamo
import torch.nn.functional as F

import torchair_ge
from bench import measure

# (name, query heads, kv heads, query length, key length, head dim, causal, padding mask)
CASES = [
    ("prefill_512", 16, 4, 512, 512, 64, True, False),
    ("decode_2048", 32, 8, 1, 2048, 128, False, False),
    ("decode_2048_padded", 32, 8, 1, 2048, 128, False, True),
]


def _inputs(heads, kv_heads, length, source, dim, padded):
    g = torch.Generator().manual_seed(0)
    q = torch.randn(1, heads, length, dim, generator=g)
    k, v = (torch.randn(1, kv_heads, source, dim, generator=g) for _ in range(2))
    mask = None
    if padded:  # the first 100 cache positions are padding (a left-padded batch row)
        mask = torch.ones(1, 1, length, source, dtype=torch.bool)
        mask[..., :100] = False
    return q, k, v, mask


def _sdpa(causal):
    def attention(q, k, v, mask):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=causal, enable_gqa=True)
    return attention


def _explicit(causal):
    def attention(q, k, v, mask):
        groups = q.shape[1] // k.shape[1]
        k, v = k.repeat_interleave(groups, 1), v.repeat_interleave(groups, 1)
        scores = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
        if causal:
            scores = scores.masked_fill(torch.ones(scores.shape[-2:], dtype=torch.bool).triu(1), float("-inf"))
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        return scores.softmax(-1) @ v
    return attention


def run_case(case, quick):
    name, heads, kv_heads, length, source, dim, causal, padded = case
    args = _inputs(heads, kv_heads, length, source, dim, padded)
    torch._dynamo.reset()
    compiled = torch.compile(_sdpa(causal), backend=torchair_ge.get_npu_backend(), dynamic=False)
    systems = {"aten_flash": _sdpa(causal), "explicit": _explicit(causal), "torchair_ge": compiled}
    with torch.no_grad():
        reference = systems["aten_flash"](*args)
        err = max((fn(*args) - reference).abs().max().item() for fn in systems.values())
        runners = {k: (lambda fn=fn: fn(*args)) for k, fn in systems.items()}
        samples = measure.interleaved_latency(runners, 3 if quick else 15, batch_target_s=0.005 if quick else 0.05)
    torch._dynamo.reset()
    return {"name": name, "shape": f"q [1, {heads}, {length}, {dim}], kv [1, {kv_heads}, {source}, {dim}]"
            + (", causal" if causal else "") + (", padding mask" if padded else ""),
            "ms": {k: statistics.median(v) * 1e3 for k, v in samples.items()}, "max_abs_err": err}


def run(quick=False, log=print):
    rows = []
    for case in CASES:
        rows.append(run_case(case, quick))
        ms = rows[-1]["ms"]
        log(f"  attention {rows[-1]['name']:<20} " + "  ".join(f"{k} {v:.3f} ms" for k, v in ms.items()))
    return rows


def markdown(rows):
    lines = ["", "## Attention (grouped-query, one layer)", "",
             "ATen's CPU flash kernel (eager SDPA), the explicit path (repeated KV heads, materialized scores) and "
             "torchair_ge's compiled SDPA (FusedAttention reading the KV heads unrepeated).", "",
             "| case | shapes | aten flash ms | explicit ms | torchair_ge ms | torchair_ge / flash | max abs err |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        ms = r["ms"]
        lines.append(f"| {r['name']} | {r['shape']} | {ms['aten_flash']:.3f} | {ms['explicit']:.3f} | "
                     f"{ms['torchair_ge']:.3f} | {ms['torchair_ge'] / ms['aten_flash']:.2f} | {r['max_abs_err']:.1e} |")
    return lines


if __name__ == "__main__":
    print("\n".join(markdown(run())))
