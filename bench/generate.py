"""A real transformers model through generate(): a LLaMA-style config of realistic width
(random weights, no download), greedy generation with model.forward compiled by each system
under default torch.compile settings, with transformers' dynamic cache and its static cache.

Time to first token = generate(max_new_tokens=1) (the prefill); decode tokens/s from
generate(max_new_tokens=N) minus that, over the N-1 later tokens (decode steps per second: with a
batch of B prompts a step makes B tokens). Medians of interleaved repetitions, after two warm-up
generations (every graph compiled). One prompt with each cache, and a batch of eight prompts with
the static cache (a decode step's products then have eight rows: batched serving, beam search)."""
import statistics
import time

import torch
import torch._dynamo

import torchair_ge
from bench import measure

SYSTEMS = ("eager", "inductor", "torchair_ge")
CONFIG = dict(hidden_size=512, intermediate_size=1408, num_hidden_layers=4, num_attention_heads=8,
              num_key_value_heads=4, vocab_size=8000, max_position_embeddings=1024, bos_token_id=0, eos_token_id=0)
PROMPT_TOKENS = 128
WORKLOADS = (("dynamic", 1), ("static", 1), ("static", 8))  # (cache, prompts in the batch)


def build_model():
    from transformers import LlamaConfig, LlamaForCausalLM
    torch.manual_seed(0)
    return LlamaForCausalLM(LlamaConfig(**CONFIG)).eval()


def _compile(system, model):
    if system == "eager":
        return None
    if system == "inductor":
        from torch._inductor.compile_fx import compile_fx
        counting = measure.CountingBackend(compile_fx)
    else:
        counting = measure.CountingBackend(torchair_ge.get_npu_backend())
    model.forward = torch.compile(model.forward, backend=counting)
    return counting


def _generate(model, prompt, tokens, cache):
    options = dict(max_new_tokens=tokens, min_new_tokens=tokens, do_sample=False, pad_token_id=0)
    if cache == "static":
        options["cache_implementation"] = "static"
    with torch.no_grad():
        start = time.perf_counter()
        out = model.generate(prompt, **options)
        return out, time.perf_counter() - start


def run_system(system, cache, quick, reference=None, batch=1):
    torch._dynamo.reset()
    model = build_model()
    counting = _compile(system, model)
    prompt = torch.randint(1, CONFIG["vocab_size"], (batch, PROMPT_TOKENS), generator=torch.Generator().manual_seed(1))
    new_tokens = 8 if quick else 32
    for _ in range(2):  # compiles: prefill, first decode step, the symbolic decode graph
        tokens, _ = _generate(model, prompt, new_tokens, cache)
    first, full = [], []
    for _ in range(1 if quick else 5):
        first.append(_generate(model, prompt, 1, cache)[1])
        full.append(_generate(model, prompt, new_tokens, cache)[1])
    ttft, total = statistics.median(first), statistics.median(full)
    torch._dynamo.reset()
    return {"system": system, "cache": cache, "batch": batch, "ttft_ms": ttft * 1e3,
            "decode_tokens_per_s": (new_tokens - 1) / max(total - ttft, 1e-9), "new_tokens": new_tokens,
            "graphs": counting.graphs if counting else 0,
            "tokens_equal": None if reference is None else bool(torch.equal(tokens, reference)), "_tokens": tokens}


def run(quick=False, log=print, systems=SYSTEMS):
    rows = []
    for cache, batch in WORKLOADS:
        reference = None
        for system in systems:
            try:
                row = run_system(system, cache, quick, reference, batch)
            except Exception as e:  # noqa: BLE001 - reported per system
                row = {"system": system, "cache": cache, "batch": batch,
                       "error": f"{type(e).__name__}: {str(e).splitlines()[0][:160]}"}
                log(f"  generate {cache:<8} batch {batch} {system:<12} {row['error']}")
                rows.append(row)
                continue
            if system == "eager":
                reference = row["_tokens"]
            row.pop("_tokens")
            rows.append(row)
            log(f"  generate {cache:<8} batch {batch} {system:<12} first token {row['ttft_ms']:7.1f} ms  "
                f"decode {row['decode_tokens_per_s']:7.1f} tok/s  graphs {row['graphs']}  same tokens {row['tokens_equal']}")
    return {"config": CONFIG, "prompt_tokens": PROMPT_TOKENS, "rows": rows}


def markdown(results):
    config = results["config"]
    lines = ["", "## transformers generate()", "",
             f"LlamaForCausalLM, hidden {config['hidden_size']}, {config['num_hidden_layers']} layers, "
             f"{config['num_attention_heads']} query / {config['num_key_value_heads']} KV heads, vocab "
             f"{config['vocab_size']}, random weights; prompt {results['prompt_tokens']} tokens each, greedy, "
             "a batch of 1 or 8 prompts (decode tok/s: steps per second, each a token of every prompt); "
             "model.forward compiled under default torch.compile settings. Ratios within this run.", "",
             "| cache | batch | system | first token ms | decode tok/s | tok/s / eager | tok/s / inductor | graphs "
             "| same tokens |",
             "|---|---|---|---|---|---|---|---|---|"]
    for row in results["rows"]:
        batch = row.get("batch", 1)
        if "error" in row:
            lines.append(f"| {row['cache']} | {batch} | {row['system']} | — | — | | | | {row['error']} |")
            continue
        base = {r["system"]: r for r in results["rows"]
                if (r["cache"], r.get("batch", 1)) == (row["cache"], batch) and "error" not in r}
        ratio = lambda b: f"{row['decode_tokens_per_s'] / base[b]['decode_tokens_per_s']:.2f}" if b in base else ""  # noqa: E731
        same = "" if row["tokens_equal"] is None else "yes" if row["tokens_equal"] else "**no**"
        lines.append(f"| {row['cache']} | {batch} | {row['system']} | {row['ttft_ms']:.1f} | "
                     f"{row['decode_tokens_per_s']:.1f} | {ratio('eager')} | {ratio('inductor')} | {row['graphs']} | {same} |")
    return lines


if __name__ == "__main__":
    for line in markdown(run(quick=True)):
        print(line)
