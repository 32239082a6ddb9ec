"""How close the zoo runs to the machine's limits. Two probes: memory bandwidth (a STREAM-like
triad a = b + s*c over arrays far larger than the caches) and GEMM peak (the faster of MKL's
sgemm and oneDNN's inner product on a 2048^3 float32 product). Then, per model, torchair_ge's
achieved rate: GB/s for gpt_decode (a decode step must read every weight and its KV cache once:
parameter + buffer bytes per call), GFLOP/s for the compute-bound models (FLOPs counted by
torch's FlopCounterMode on the eager forward)."""
import time

import torch
from torch.utils.flop_counter import FlopCounterMode

TRIAD_ELEMENTS = 1 << 25  # 128 MiB per array
GEMM = 2048
BANDWIDTH_MODELS = ("gpt_decode",)
COMPUTE_MODELS = ("mlp", "bert", "llama_block", "resnet_b1", "resnet_b8")


def _best_s(fn, repeats):
    fn()
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def bandwidth_gbs(repeats=5):
    b, c = torch.rand(TRIAD_ELEMENTS), torch.rand(TRIAD_ELEMENTS)
    a = torch.empty(TRIAD_ELEMENTS)
    seconds = _best_s(lambda: torch.add(b, c, alpha=3.0, out=a), repeats)
    return 3 * TRIAD_ELEMENTS * 4 / seconds / 1e9  # read b and c, write a


def gemm_peak_gflops(repeats=3):
    x, w = torch.randn(GEMM, GEMM), torch.randn(GEMM, GEMM)
    y = torch.empty(GEMM, GEMM)
    flops = 2 * GEMM ** 3
    rates = {"mkl": flops / _best_s(lambda: torch.mm(x, w, out=y), repeats) / 1e9}
    linear = getattr(torch.ops.mkldnn, "_linear_pointwise", None)
    if linear is not None and torch.backends.mkldnn.is_available():
        rates["onednn"] = flops / _best_s(lambda: linear(x, w, None, "none", [], ""), repeats) / 1e9
    return max(rates.values()), rates


def _flops(entry):
    model, inputs = entry.build()
    counter = FlopCounterMode(display=False)
    with torch.no_grad(), counter:
        model(*inputs)
    return counter.get_total_flops()


def _bytes_read(entry):
    model, _ = entry.build()
    return sum(t.numel() * t.element_size() for t in list(model.parameters()) + list(model.buffers()))


def run(model_results, entries, quick=False, log=print):
    """model_results: the bench's per-model rows (torchair_ge's median_ms is read)."""
    bandwidth = bandwidth_gbs(2 if quick else 5)
    peak, gemm_rates = gemm_peak_gflops(1 if quick else 3)
    log(f"  limits: triad {bandwidth:.1f} GB/s, GEMM peak {peak:.1f} GFLOP/s ({gemm_rates})")
    by_name = {e.name: e for e in entries}
    rows = []
    for model in model_results:
        ours = next((r for r in model["systems"] if r["system"] == "torchair_ge" and r.get("median_ms")), None)
        entry = by_name.get(model["name"])
        if ours is None or entry is None:
            continue
        seconds = ours["median_ms"] / 1e3
        if model["name"] in BANDWIDTH_MODELS:
            rate = _bytes_read(entry) / seconds / 1e9
            rows.append({"model": model["name"], "bound": "bandwidth", "achieved": rate, "unit": "GB/s",
                         "share": rate / bandwidth})
        elif model["name"] in COMPUTE_MODELS:
            rate = _flops(entry) / seconds / 1e9
            rows.append({"model": model["name"], "bound": "GEMM peak", "achieved": rate, "unit": "GFLOP/s",
                         "share": rate / peak})
    return {"bandwidth_gbs": bandwidth, "gemm_peak_gflops": peak, "gemm_rates": gemm_rates, "models": rows}


def markdown(limits):
    lines = ["", "## Against the machine's limits", "",
             f"Triad bandwidth **{limits['bandwidth_gbs']:.1f} GB/s**; GEMM peak **{limits['gemm_peak_gflops']:.1f} "
             "GFLOP/s** (" + ", ".join(f"{k} {v:.1f}" for k, v in limits["gemm_rates"].items()) + "; 2048^3 float32). "
             "torchair_ge's achieved rate per model: bytes a decode step must read (weights and KV cache) or FLOPs "
             "of the forward, over its median latency.", "",
             "| model | bound | achieved | share of the bound |", "|---|---|---|---|"]
    for r in limits["models"]:
        lines.append(f"| {r['model']} | {r['bound']} | {r['achieved']:.1f} {r['unit']} | {r['share']:.0%} |")
    return lines
