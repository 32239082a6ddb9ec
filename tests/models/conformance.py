"""Runs one architecture of the suite: the model's forward compiled by the backend (default
torch.compile settings) against eager, and what ran where. Shared by the tests and by the
table in docs/models.md (python -m tests.models.table)."""
from dataclasses import dataclass, field

import torch
import torch._dynamo

import torchair_ge
from tests.models.architectures import VOCAB

# fp32: a few ulps of a float32 logit after a handful of layers; bf16: the compiled and eager
# models round at different points (fused kernels keep float32 inside), so the bound is
# relative to bf16's 8-bit mantissa over a few layers.
TOLERANCES = {torch.float32: dict(atol=2e-5, rtol=1e-4), torch.bfloat16: dict(atol=8e-2, rtol=5e-2)}


@dataclass
class Result:
    name: str
    dtype: torch.dtype
    max_abs_err: float
    graphs: int
    native_nodes: int
    fallback_nodes: int
    fallback_ops: dict = field(default_factory=dict)

    @property
    def native_share(self):
        total = self.native_nodes + self.fallback_nodes
        return self.native_nodes / total if total else 1.0


def _first_tensor(output):
    return output[0] if not isinstance(output, torch.Tensor) else output


def forward_kwargs(arch):
    """Caches off: the forward's result is the logits / hidden states alone."""
    return {"use_cache": False} if arch.kind in ("decoder", "encoder-decoder") else {}


def _backend():
    """The default backend, except that every new set of sizes compiles an engine instance at its
    first call: the default policy (amortize) would run a decode step's new cache length in eager
    PyTorch, and the suite checks the engine."""
    config = torchair_ge.CompilerConfig()
    config.inference_config.new_shape_policy = "compile"
    return torchair_ge.get_npu_backend(compiler_config=config)


def run_forward(arch, dtype=torch.float32):
    torch._dynamo.reset()
    model = arch.build(dtype)
    inputs = {k: v.to(dtype) if v.is_floating_point() else v for k, v in arch.inputs().items()}
    kwargs = forward_kwargs(arch)
    backend = _backend()
    compiled = torch.compile(model, backend=backend)
    with torch.no_grad():
        expected = _first_tensor(model(**inputs, **kwargs))
        got = _first_tensor(compiled(**inputs, **kwargs))
    torch.testing.assert_close(got, expected, **TOLERANCES[dtype], msg=lambda m: f"{arch.name} ({dtype}): {m}")
    reports = backend.compiler.reports
    fallback_ops = {}
    for report in reports:
        for op, n in report["fallback_ops"].items():
            fallback_ops[op] = fallback_ops.get(op, 0) + n
    torch._dynamo.reset()
    return Result(arch.name, dtype, (got.float() - expected.float()).abs().max().item(), len(reports),
                  sum(r["native_nodes"] for r in reports), sum(r["fallback_nodes"] for r in reports), fallback_ops)


NEW_TOKENS = 12


@dataclass
class GenerateResult:
    name: str
    cache: str  # "dynamic" | "static"
    tokens_equal: bool
    reports: list
    full_attention_layers: int  # decoder layers whose cache holds every position (not a sliding window)

    @property
    def compiles(self):
        return len(self.reports)


def _generate(model, prompt, cache):
    options = dict(max_new_tokens=NEW_TOKENS, min_new_tokens=NEW_TOKENS, do_sample=False, pad_token_id=0)
    if cache == "static":
        options["cache_implementation"] = "static"
    with torch.no_grad():
        return model.generate(**prompt, **options)


def run_generate(arch, cache):
    """Greedy generation with model.forward compiled by the backend (default torch.compile
    settings) against eager generation; None when transformers has no static cache for the
    model (it would silently ignore cache_implementation="static")."""
    torch._dynamo.reset()
    model = arch.build()
    if cache == "static" and not getattr(model, "_can_compile_fullgraph", True):
        return None
    prompt = {"input_ids": torch.randint(1, VOCAB, (1, 10), generator=torch.Generator().manual_seed(1))}
    expected = _generate(model, prompt, cache)
    backend = _backend()
    model.forward = torch.compile(model.forward, backend=backend)
    got = _generate(model, prompt, cache)
    torch._dynamo.reset()
    return GenerateResult(arch.name, cache, torch.equal(got, expected), backend.compiler.reports,
                          _full_attention_layers(model.config.get_text_config(decoder=True)))


def _full_attention_layers(config):
    """Layers of transformers' static cache that keep every position (its sliding-window layers
    roll their window and copy it back, in eager too)."""
    from transformers import StaticCache
    return sum(type(layer).__name__ == "StaticLayer" for layer in StaticCache(config=config, max_cache_len=8).layers)
