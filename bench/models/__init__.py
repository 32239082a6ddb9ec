"""The model zoo: plain PyTorch, seeded random weights, shaped like the real models but small
enough for 2 cores. Each entry builds a fresh (model, inputs) pair, so systems that mutate
state (KV caches) never share it."""
from dataclasses import dataclass
from collections.abc import Callable

from bench.models import bert, gpt_decode, llama, mlp, recsys, resnet, tiny_chain


@dataclass(frozen=True)
class ZooEntry:
    name: str
    description: str
    build: Callable  # () -> (torch.nn.Module in eval mode, tuple of example inputs)
    no_grad: bool = True


ZOO = {e.name: e for e in [
    ZooEntry("mlp", "4 x (Linear 1024 + ReLU), batch 64", mlp.build),
    ZooEntry("resnet_b1", "ResNet-18-style CNN, 1x3x112x112", lambda: resnet.build(batch=1)),
    ZooEntry("resnet_b8", "ResNet-18-style CNN, 8x3x112x112", lambda: resnet.build(batch=8)),
    ZooEntry("bert", "4-layer BERT encoder, hidden 256, 4 heads, seq 128, padding mask, batch 4", bert.build),
    ZooEntry("gpt_decode", "one decode step, 8-layer GPT, hidden 512, static KV cache 256 updated in place", gpt_decode.build),
    ZooEntry("llama_block", "2 LLaMA layers (RMSNorm, RoPE, SwiGLU, causal attention), seq 64", llama.build),
    ZooEntry("widedeep", "Wide & Deep: 8 embedding features + 13 dense, MLP 256-128-64, batch 512", recsys.build_widedeep),
    ZooEntry("mmoe", "MMoE: 4 experts, 2 gated task towers, batch 512", recsys.build_mmoe),
    ZooEntry("tiny_chain", "200 elementwise ops on 64x64 (host overhead)", tiny_chain.build),
]}


def get(names=None):
    """Zoo entries by name (all when names is None); unknown names raise with the known ones."""
    if not names:
        return list(ZOO.values())
    unknown = [n for n in names if n not in ZOO]
    if unknown:
        raise ValueError(f"unknown models {unknown}; known: {', '.join(ZOO)}")
    return [ZOO[n] for n in names]
