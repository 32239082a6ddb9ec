"""Generated kernels alone: a fused chain of 200 elementwise ops (tiny_chain) as vector kernels
(one xsimd vector at a time through every op, in registers), as block kernels (blocks of
elements op by op over stack arrays: the previous generator) and under Inductor, on one thread
and on all, small (host overhead matters) and large (the kernel is the time). Medians of
interleaved rounds, ratios within this run."""
import statistics

import torch
import torch._dynamo

import torchair_ge
from bench import measure
from bench.models.tiny_chain import TinyChain

CASES = [("64x64", 64), ("512x512", 512)]


def _compiled(model, codegen):
    config = torchair_ge.CompilerConfig()
    config.experimental_config.kernel_codegen = codegen
    return torch.compile(model, backend=torchair_ge.get_npu_backend(compiler_config=config), dynamic=False)


def run_case(size, threads, quick):
    torch.manual_seed(0)
    model, x = TinyChain(200).eval(), torch.randn(size, size)
    previous = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        torch._dynamo.reset()
        systems = {"vector": _compiled(model, "vector"), "blocks": _compiled(model, "blocks"),
                   "inductor": torch.compile(model, dynamic=False)}
        with torch.no_grad():
            reference = model(x)
            err = max((fn(x) - reference).abs().max().item() for fn in systems.values())
            runners = {k: (lambda fn=fn: fn(x)) for k, fn in systems.items()}
            samples = measure.interleaved_latency(runners, 3 if quick else 15,
                                                  batch_target_s=0.005 if quick else 0.05)
    finally:
        torch.set_num_threads(previous)
        torch._dynamo.reset()
    return {"ms": {k: statistics.median(v) * 1e3 for k, v in samples.items()}, "max_abs_err": err}


def run(quick=False, log=print):
    rows = []
    for name, size in CASES:
        for threads in sorted({1, torch.get_num_threads()}):
            row = {"name": name, "threads": threads, **run_case(size, threads, quick)}
            rows.append(row)
            log(f"  codegen {name:<8} {threads} thread(s) " + "  ".join(f"{k} {v:.4f} ms" for k, v in row["ms"].items()))
    return rows


def markdown(rows):
    lines = ["", "## Generated kernels: vector vs blocks (200-op elementwise chain)", "",
             "The whole call (Dynamo guards and host overhead included: they dominate at 64x64) of one fused "
             "kernel of 200 ops, written as vector kernels (default), as block kernels (the previous "
             "generator) and by Inductor.", "",
             "| input | threads | vector ms | blocks ms | inductor ms | vector / blocks | vector / inductor "
             "| max abs err |", "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        ms = r["ms"]
        lines.append(f"| {r['name']} | {r['threads']} | {ms['vector']:.4f} | {ms['blocks']:.4f} | "
                     f"{ms['inductor']:.4f} | {ms['vector'] / ms['blocks']:.2f} | {ms['vector'] / ms['inductor']:.2f} "
                     f"| {r['max_abs_err']:.1e} |")
    return lines


if __name__ == "__main__":
    print("\n".join(markdown(run())))
