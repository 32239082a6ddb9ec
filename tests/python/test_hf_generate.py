"""transformers' generate() with the model's forward compiled by the backend under default
torch.compile settings: greedy tokens identical to eager, with the dynamic cache (the cache
length is a symbolic dim) and with the static cache. Tiny random configs, no downloads."""
import pytest
import torch
from transformers import GPT2Config, GPT2LMHeadModel, LlamaConfig, LlamaForCausalLM

import torchair_ge


def _gpt2():
    return GPT2LMHeadModel(GPT2Config(n_layer=2, n_head=4, n_embd=64, vocab_size=1000, n_positions=256,
                                      bos_token_id=0, eos_token_id=0))


def _llama():  # grouped-query attention: 2 KV heads for 4 query heads
    return LlamaForCausalLM(LlamaConfig(num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                                        hidden_size=64, intermediate_size=128, vocab_size=1000,
                                        max_position_embeddings=256, bos_token_id=0, eos_token_id=0))


@pytest.mark.parametrize("cache", [None, "static"], ids=["dynamic_cache", "static_cache"])
@pytest.mark.parametrize("build", [_gpt2, _llama], ids=["gpt2", "llama"])
def test_greedy_generate_matches_eager(build, cache):
    torch.manual_seed(0)
    model = build().eval()
    prompt = torch.randint(1, 1000, (1, 12), generator=torch.Generator().manual_seed(1))
    options = dict(max_new_tokens=16, do_sample=False, pad_token_id=0, min_new_tokens=16)
    if cache:
        options["cache_implementation"] = cache
    with torch.no_grad():
        expected = model.generate(prompt, **options)
    backend = torchair_ge.get_npu_backend()
    model.forward = torch.compile(model.forward, backend=backend)
    with torch.no_grad():
        got = model.generate(prompt, **options)
    assert torch.equal(got, expected)
    reports = backend.compiler.reports
    # prefill, first decode step (a 0/1-specialized shape), then one symbolic graph for the rest
    assert len(reports) <= 3, [r.get("symbolic") for r in reports]
    if cache is None:
        assert any(r.get("symbolic") for r in reports)
    native = sum(r["native_nodes"] for r in reports)
    fallback = sum(r["fallback_nodes"] for r in reports)
    assert fallback <= 0.05 * (native + fallback), [r["fallback_ops"] for r in reports]
