"""transformers' own model classes, as users bring them: small configs of ten architectures
(random weights, no download), the forward of a [2, 128] batch of token ids (ViT: two 112x112
images) compiled under default torch.compile settings by each system. The zoo's models are
written for the bench; these run transformers' code paths (SDPA attention, rotary and partial
rotary embeddings, GELU written out, ALiBi, Conv1D projections), where a slow op of ours shows
up first -- GPT-2's GELU (x ** 3) did. Four of them also train: a step of forward, loss,
backward and AdamW (the optimizer step eager in every system, as a Trainer runs it), the first
losses checked against eager's."""
import statistics

import torch
import torch._dynamo

import torchair_ge
from bench import measure

SYSTEMS = ("eager", "inductor", "torchair_ge")
BATCH, TOKENS, VOCAB = 2, 128, 1000
TRAINED = ("bert", "gpt2", "llama", "vit")  # encoder, GELU'd decoder, grouped-query decoder, vision
LOSSES_CHECKED, LOSS_RTOL = 3, 1e-3


def _configs():
    import transformers as t
    text = dict(vocab_size=VOCAB)
    return {
        "bert": (t.BertModel, t.BertConfig(hidden_size=256, num_hidden_layers=4, num_attention_heads=4,
                                           intermediate_size=1024, **text)),
        "gpt2": (t.GPT2LMHeadModel, t.GPT2Config(n_embd=256, n_layer=4, n_head=4, bos_token_id=0, eos_token_id=0,
                                                 **text)),
        "llama": (t.LlamaForCausalLM, t.LlamaConfig(hidden_size=256, intermediate_size=704, num_hidden_layers=4,
                                                    num_attention_heads=8, num_key_value_heads=4, **text)),
        "qwen2": (t.Qwen2ForCausalLM, t.Qwen2Config(hidden_size=256, intermediate_size=704, num_hidden_layers=4,
                                                    num_attention_heads=8, num_key_value_heads=4, **text)),
        "mistral": (t.MistralForCausalLM, t.MistralConfig(hidden_size=256, intermediate_size=704, num_hidden_layers=4,
                                                          num_attention_heads=8, num_key_value_heads=2, **text)),
        "phi": (t.PhiForCausalLM, t.PhiConfig(hidden_size=256, num_hidden_layers=4, num_attention_heads=4,
                                              intermediate_size=1024, **text)),
        "opt": (t.OPTForCausalLM, t.OPTConfig(hidden_size=256, num_hidden_layers=4, num_attention_heads=4,
                                              ffn_dim=1024, word_embed_proj_dim=256, **text)),
        "bloom": (t.BloomForCausalLM, t.BloomConfig(hidden_size=256, n_layer=4, n_head=4, **text)),
        "t5_encoder": (t.T5EncoderModel, t.T5Config(d_model=256, d_kv=32, d_ff=1024, num_layers=4, num_heads=8,
                                                    **text)),
        "vit": (t.ViTModel, t.ViTConfig(hidden_size=256, num_hidden_layers=4, num_attention_heads=4,
                                        intermediate_size=1024, image_size=112, patch_size=16)),
    }


def _inputs(name):
    generator = torch.Generator().manual_seed(1)
    if name == "vit":
        return (torch.randn(BATCH, 3, 112, 112, generator=generator),)
    return (torch.randint(0, VOCAB, (BATCH, TOKENS), generator=generator),)


def _first_tensor(output):
    return output[0] if isinstance(output, (tuple, list)) else next(iter(output.values()))


def _compiled(model, system):
    if system == "eager":
        return model
    return torch.compile(model, backend=torchair_ge.get_npu_backend() if system == "torchair_ge" else "inductor")


def run_model(name, cls, config, quick, log=print, systems=SYSTEMS):
    torch.manual_seed(0)
    model = cls(config).eval()
    inputs = _inputs(name)
    row = {"model": name, "systems": {}}
    runners = {}
    with torch.no_grad():
        reference = _first_tensor(model(*inputs))
        for system in systems:
            torch._dynamo.reset()
            fn = _compiled(model, system)
            try:
                err = (_first_tensor(fn(*inputs)) - reference).abs().max().item()
            except Exception as e:  # noqa: BLE001 - a failing system is reported, not hidden
                row["systems"][system] = {"error": f"{type(e).__name__}: {str(e).splitlines()[0][:160]}"}
                log(f"  {name:<11} {system:<12} {row['systems'][system]['error']}")
                continue
            row["systems"][system] = {"max_abs_err": err}
            runners[system] = lambda fn=fn: fn(*inputs)
        samples = measure.interleaved_latency(runners, 3 if quick else 10, batch_target_s=0.02 if quick else 0.05)
    for system, times in samples.items():
        row["systems"][system]["median_ms"] = statistics.median(times) * 1e3
    log(f"  {name:<11} " + "  ".join(f"{s} {r['median_ms']:.2f} ms" for s, r in row["systems"].items() if "median_ms" in r))
    torch._dynamo.reset()
    return row


def train_model(name, cls, config, quick, log=print, systems=SYSTEMS):
    """Training steps of one model per system, from the same initial weights (dropout off, so
    every system computes the same numbers): the first LOSSES_CHECKED losses against eager's,
    then interleaved step times."""
    inputs = _inputs(name)
    row = {"model": name, "systems": {}}
    steps, reference = {}, None
    for system in systems:
        torch._dynamo.reset()
        torch.manual_seed(0)
        model = cls(config).train()
        for module in model.modules():
            if isinstance(module, torch.nn.Dropout):
                module.p = 0.0
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
        fn = _compiled(model, system)

        def step(fn=fn, optimizer=optimizer):
            loss = _first_tensor(fn(*inputs)).float().pow(2).mean()
            loss.backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            return loss.detach()
        try:
            losses = [step().item() for _ in range(LOSSES_CHECKED)]
        except Exception as e:  # noqa: BLE001 - a failing system is reported, not hidden
            row["systems"][system] = {"error": f"{type(e).__name__}: {str(e).splitlines()[0][:160]}"}
            log(f"  {name:<11} {system:<12} training {row['systems'][system]['error']}")
            continue
        reference = losses if system == "eager" else reference
        err = None if reference is None else max(abs(a - b) / max(abs(b), 1e-12) for a, b in zip(losses, reference))
        row["systems"][system] = {"losses": losses, "loss_rel_err": err}
        if err is not None and err > LOSS_RTOL:
            row["systems"][system]["error"] = f"wrong: the losses differ from eager's by {err:.2g} (relative)"
            continue
        steps[system] = step
    samples = measure.interleaved_latency(steps, 3 if quick else 8, batch_target_s=0.05 if quick else 0.15)
    for system, times in samples.items():
        row["systems"][system]["median_ms"] = statistics.median(times) * 1e3
    log(f"  {name:<11} training " + "  ".join(f"{s} {r['median_ms']:.1f} ms" for s, r in row["systems"].items()
                                             if "median_ms" in r))
    torch._dynamo.reset()
    return row


def run(quick=False, log=print, systems=SYSTEMS, training=True):
    configs = _configs()
    names = ("gpt2", "llama", "bert") if quick else tuple(configs)
    trained = () if quick or not training else TRAINED
    return {"batch": BATCH, "tokens": TOKENS,
            "rows": [run_model(name, *configs[name], quick, log, systems) for name in names],
            "training_rows": [train_model(name, *configs[name], quick, log, systems) for name in trained]}


def wrong_training(results):
    """(model, system) of every training row whose losses were not eager's."""
    return [(f"transformers training {row['model']}", system) for row in results.get("training_rows", [])
            for system, r in row["systems"].items() if r.get("error", "").startswith("wrong")]


def _table(rows, digits, err_key):
    """One line per model: each system's median ms (or its error), ours over eager's and
    Inductor's, and our error against eager (`err_key`)."""
    lines = ["| model | eager ms | inductor ms | torchair_ge ms | / eager | / inductor | "
             f"{'max abs err' if err_key == 'max_abs_err' else 'loss rel err'} |", "|---|---|---|---|---|---|---|"]
    for row in rows:
        s = row["systems"]
        ms = {k: v.get("median_ms") for k, v in s.items()}
        cell = lambda k: f"{ms[k]:.{digits}f}" if ms.get(k) else s.get(k, {}).get("error", "—")  # noqa: E731
        ours = ms.get("torchair_ge")
        ratio = lambda k: f"{ours / ms[k]:.2f}" if ours and ms.get(k) else ""  # noqa: E731
        err = s.get("torchair_ge", {}).get(err_key)
        lines.append(f"| {row['model']} | {cell('eager')} | {cell('inductor')} | {cell('torchair_ge')} | {ratio('eager')} | "
                     f"{ratio('inductor')} | {'' if err is None else f'{err:.1e}'} |")
    return lines


def markdown(results):
    lines = ["", "## transformers models", "",
             f"transformers' model classes, small configs (hidden 256, 4 layers, random weights), the forward of "
             f"[{results['batch']}, {results['tokens']}] token ids (ViT: {results['batch']} images of 112x112) under "
             "default torch.compile settings; median ms of interleaved calls, ratios within this run.", ""]
    lines += _table(results["rows"], 2, "max_abs_err")
    if results.get("training_rows"):
        lines += ["", "Training steps of the same classes (bert, gpt2, llama, vit): forward of the same batch, loss "
                  "(mean square of the first output), backward, AdamW step (eager in every system), `zero_grad`; "
                  f"dropout off; the first {LOSSES_CHECKED} losses compared with eager's. Median ms of interleaved "
                  "steps.", ""]
        lines += _table(results["training_rows"], 1, "loss_rel_err")
    return lines


if __name__ == "__main__":
    for line in markdown(run(quick=True)):
        print(line)
