"""Training through the engine: AOT autograd's forward and backward graphs both compiled by
torchair_ge, checked step by step against eager training of an identical copy of the model
(loss, every gradient, batch-norm running statistics, the parameters after the step)."""
import copy

import pytest
import torch
from torch import nn

import torchair_ge
from bench.models.resnet import small_resnet

TOLERANCE = dict(rtol=1e-4, atol=1e-5)


class TinyTransformer(nn.Module):
    """Embedding, two pre-LN encoder layers (GELU feed-forward), mean pooling, a classifier."""

    def __init__(self, vocab=100, hidden=32, heads=4, classes=5, dropout=0.0):
        super().__init__()
        self.embed = nn.Embedding(vocab, hidden)
        layer = nn.TransformerEncoderLayer(hidden, heads, 2 * hidden, dropout=dropout, activation="gelu",
                                           batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        self.head = nn.Linear(hidden, classes)

    def forward(self, ids):
        return self.head(self.encoder(self.embed(ids)).mean(dim=1))


def _mlp():
    return nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 32), nn.Tanh(), nn.Linear(32, 4))


def _batches(kind, steps):
    """Random inputs and labels: nothing to learn across batches, so the loss need not fall --
    what is checked is that every step equals eager's (learning: the example's test)."""
    g = torch.Generator().manual_seed(2)
    for _ in range(steps):
        if kind == "mlp":
            yield torch.randn(8, 16, generator=g), torch.randn(8, 4, generator=g)
        elif kind == "cnn":
            yield torch.randn(4, 3, 32, 32, generator=g), torch.randint(0, 10, (4,), generator=g)
        else:
            yield torch.randint(0, 100, (4, 12), generator=g), torch.randint(0, 5, (4,), generator=g)


def _loss(kind, out, target):
    return nn.functional.mse_loss(out, target) if kind == "mlp" else nn.functional.cross_entropy(out, target)


def _resync(eager, model, opt_e, opt_c):
    """Makes the eager copy start the next step from the compiled model's state. Training is
    chaotic: a difference in the last bit flips a ReLU or a max-pool choice a few steps later and
    the two runs part ways (within 20 steps for the CNN), so each step is checked from one state."""
    with torch.no_grad():
        for mine, theirs in ((model.parameters(), eager.parameters()), (model.buffers(), eager.buffers())):
            for src, dst in zip(mine, theirs):
                dst.copy_(src)
        for p_c, p_e in zip(opt_c.param_groups[0]["params"], opt_e.param_groups[0]["params"]):
            for key, value in opt_c.state[p_c].items():
                if isinstance(value, torch.Tensor):
                    opt_e.state[p_e][key].copy_(value)


def _check_optimizer_state(opt_c, opt_e, step):
    for p_c, p_e in zip(opt_c.param_groups[0]["params"], opt_e.param_groups[0]["params"]):
        for key, value in opt_c.state[p_c].items():
            torch.testing.assert_close(value, opt_e.state[p_e][key], **TOLERANCE,
                                       msg=lambda m: f"step {step} optimizer state {key}: {m}")


def _train_side_by_side(kind, model, steps, optimizer=torch.optim.SGD, dtype=None, **optimizer_args):
    """Trains `model` compiled and an identical eager copy on the same batches (floating inputs in
    `dtype` when given); checks every step (loss, gradients, buffers, parameters and optimizer state
    after the step)."""
    torch.manual_seed(0)
    eager = copy.deepcopy(model)
    backend = torchair_ge.get_npu_backend()
    compiled = torch.compile(model, backend=backend, dynamic=False)
    opt_c = optimizer(model.parameters(), **optimizer_args)
    opt_e = optimizer(eager.parameters(), **optimizer_args)
    for step, (x, target) in enumerate(_batches(kind, steps)):
        x = x.to(dtype) if dtype is not None and x.is_floating_point() else x
        loss_c = _loss(kind, compiled(x), target)
        loss_e = _loss(kind, eager(x), target)
        torch.testing.assert_close(loss_c, loss_e, **TOLERANCE, msg=lambda m: f"step {step} loss: {m}")
        loss_c.backward()
        loss_e.backward()
        for (name, p), q in zip(model.named_parameters(), eager.parameters()):
            torch.testing.assert_close(p.grad, q.grad, **TOLERANCE, msg=lambda m: f"step {step} grad {name}: {m}")
        opt_c.step()
        opt_e.step()
        opt_c.zero_grad()
        opt_e.zero_grad()
        for (name, b), c in zip(model.named_buffers(), eager.buffers()):
            torch.testing.assert_close(b, c, **TOLERANCE, msg=lambda m: f"step {step} buffer {name}: {m}")
        for (name, p), q in zip(model.named_parameters(), eager.parameters()):
            torch.testing.assert_close(p, q, **TOLERANCE, msg=lambda m: f"step {step} parameter {name}: {m}")
        _check_optimizer_state(opt_c, opt_e, step)
        _resync(eager, model, opt_e, opt_c)
    return backend


def _fallbacks(backend):
    return {op: n for report in backend.compiler.reports for op, n in report["fallback_ops"].items()}


def test_mlp_trains_like_eager_and_runs_natively():
    backend = _train_side_by_side("mlp", _mlp(), 50, lr=0.05)
    assert len(backend.compiler.reports) == 2, "one forward and one backward graph"
    assert not _fallbacks(backend)


def test_cnn_with_batch_norm_in_training_mode():
    # In float64: ReLU and max-pool route the gradient by the sign or the order of forward values,
    # so where two float32 runs differ in the last bit (MKL against oneDNN, chosen by timing, and a
    # pre-activation within an ulp of zero) the gradients below that point part ways by far more
    # than any tolerance -- seen at one step in fifty, depending on the kernels timing picked.
    # float64 keeps every op and its backward on the same native kernels without such near-ties.
    model = small_resnet().train().double()
    backend = _train_side_by_side("cnn", model, 50, lr=0.02, momentum=0.9, dtype=torch.float64)
    # running_mean/var and num_batches_tracked were compared with eager's after every step
    # (AOT autograd writes the updated statistics back into the module's buffers).
    assert model.stem[1].num_batches_tracked.item() == 50
    # Max-pool keeps its argmax for the backward (MaxPoolWithArgmaxV2): every op runs natively.
    assert not _fallbacks(backend), _fallbacks(backend)


def test_small_transformer_trains_like_eager():
    # SGD: the key projection's bias has an exactly-zero gradient in exact arithmetic (softmax
    # ignores a shift of all scores), so Adam's first step (about lr * sign(grad)) turns rounding
    # noise of 1e-10 into updates of lr, in eager too. Adam and AdamW: test_compiled_optimizers.py.
    backend = _train_side_by_side("transformer", TinyTransformer(), 50, lr=0.05, momentum=0.9)
    # Attention keeps its log-sum-exp for the backward, which recomputes the probabilities from
    # it: both directions run natively.
    assert not _fallbacks(backend), _fallbacks(backend)
    forward, backward = backend.compiler.reports[:2]
    assert forward["ir_ops"].get("ReduceLogSumExp") == 2, "one log-sum-exp per attention layer"


def test_backward_of_a_graph_whose_input_requires_grad():
    """Gradients flow to an input tensor as well as to parameters; a second backward through a
    retained graph gives the same gradients."""
    model = _mlp()
    compiled = torch.compile(model, backend="torchair_ge", dynamic=False)
    x = torch.randn(8, 16, requires_grad=True)
    x_e = x.detach().clone().requires_grad_()
    out = compiled(x).square().sum()
    out.backward()
    model(x_e).square().sum().backward()
    torch.testing.assert_close(x.grad, x_e.grad, **TOLERANCE)


def test_dropout_in_training_mode_keeps_its_rate():
    """Dropout draws random numbers: compiled and eager masks need not agree bit for bit, but the
    rate and the scaling must (and the gradient is masked like the output)."""
    drop = nn.Dropout(p=0.3).train()
    compiled = torch.compile(drop, backend="torchair_ge", dynamic=False)
    x = torch.ones(200, 500, requires_grad=True)
    y = compiled(x)
    zeros = (y == 0).float().mean().item()
    assert abs(zeros - 0.3) < 0.01, zeros
    torch.testing.assert_close(y[y != 0], torch.full_like(y[y != 0], 1 / 0.7))
    y.sum().backward()
    torch.testing.assert_close(x.grad, (y != 0).float() / 0.7)


@pytest.mark.parametrize("p", [0.1])
def test_transformer_with_dropout_learns(p):
    """With dropout on, compiled training still lowers the loss like eager's does (statistically:
    the masks differ)."""
    torch.manual_seed(0)
    model = TinyTransformer(dropout=p)
    compiled = torch.compile(model, backend="torchair_ge", dynamic=False)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    x, target = next(_batches("transformer", 1))
    losses = []
    for _ in range(30):
        loss = _loss("transformer", compiled(x), target)
        loss.backward()
        opt.step()
        opt.zero_grad()
        losses.append(loss.item())
    assert losses[-1] < 0.5 * losses[0], losses


def test_the_training_example_runs_and_learns():
    """examples/train.py (docs/training.md) trains both models compiled and asserts they learn."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    result = subprocess.run([sys.executable, str(root / "examples" / "train.py"), "--steps", "40"],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.count("time per step") == 2, result.stdout


def test_bf16_autocast_training_matches_eager():
    model = _mlp()
    eager = copy.deepcopy(model)
    backend = torchair_ge.get_npu_backend()
    compiled = torch.compile(model, backend=backend, dynamic=False)
    x, target = next(_batches("mlp", 1))
    with torch.autocast("cpu", dtype=torch.bfloat16):
        loss_c = _loss("mlp", compiled(x).float(), target)
        loss_e = _loss("mlp", eager(x).float(), target)
    loss_c.backward()
    loss_e.backward()
    torch.testing.assert_close(loss_c, loss_e, rtol=1.6e-2, atol=1e-3)
    for (name, p), q in zip(model.named_parameters(), eager.parameters()):
        assert p.grad.dtype == torch.float32
        torch.testing.assert_close(p.grad, q.grad, rtol=1.6e-2, atol=1e-3, msg=lambda m: f"grad {name}: {m}")
    assert not _fallbacks(backend)


def test_activation_checkpointing_recomputes_in_the_backward_graph():
    from torch.utils.checkpoint import checkpoint

    class Checkpointed(nn.Module):
        def __init__(self):
            super().__init__()
            self.inner, self.head = nn.Linear(16, 32), nn.Linear(32, 4)

        def forward(self, x):
            return self.head(checkpoint(lambda y: torch.tanh(self.inner(y)), x, use_reentrant=False))

    torch.manual_seed(0)
    model = Checkpointed()
    eager = copy.deepcopy(model)
    backend = torchair_ge.get_npu_backend()
    compiled = torch.compile(model, backend=backend, dynamic=False)
    x, target = next(_batches("mlp", 1))
    _loss("mlp", compiled(x), target).backward()
    _loss("mlp", eager(x), target).backward()
    for (name, p), q in zip(model.named_parameters(), eager.parameters()):
        torch.testing.assert_close(p.grad, q.grad, **TOLERANCE, msg=lambda m: f"grad {name}: {m}")
    assert not _fallbacks(backend)
    forward, backward = backend.compiler.reports
    assert backward["ir_ops"].get("Tanh") == 1, "the checkpointed tanh is recomputed in the backward graph"


@pytest.mark.parametrize("case", ["padding_mask", "causal_scaled", "bool_mask", "grouped_query", "grouped_causal"])
def test_attention_gradients_run_natively(case):
    g = torch.Generator().manual_seed(5)
    length, source = (6, 6) if case in ("causal_scaled", "grouped_causal") else (5, 7)
    # Grouped-query attention (LLaMA, Qwen2, Mistral): 6 query heads share 2 key/value heads;
    # each key/value head's gradient sums its group's.
    heads, kv_heads = (6, 2) if case.startswith("grouped") else (3, 3)
    q = torch.randn(2, heads, length, 4, generator=g, requires_grad=True)
    k, v = (torch.randn(2, kv_heads, source, 4, generator=g, requires_grad=True) for _ in range(2))
    mask = {"padding_mask": torch.randn(2, 1, length, source, generator=g),
            "bool_mask": torch.rand(2, 3, length, source, generator=g) > 0.3,
            "grouped_query": torch.randn(2, 1, length, source, generator=g)}.get(case)
    mask = None if mask is None else mask.index_fill(-1, torch.tensor([0]), True if mask.dtype == torch.bool else 0.0)

    def attend(q, k, v):
        return torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=mask is None,
                                                                scale=0.3 if mask is None else None,
                                                                enable_gqa=heads != kv_heads)
    backend = torchair_ge.get_npu_backend()
    grad_out = torch.randn(2, heads, length, 4, generator=g)
    out = torch.compile(attend, backend=backend, dynamic=False)(q, k, v)
    out.backward(grad_out)
    grads = [t.grad for t in (q, k, v)]
    q_e, k_e, v_e = (t.detach().clone().requires_grad_() for t in (q, k, v))
    expected = attend(q_e, k_e, v_e)
    expected.backward(grad_out)
    torch.testing.assert_close(out, expected, **TOLERANCE)
    for name, got, want in zip("qkv", grads, (q_e.grad, k_e.grad, v_e.grad)):
        torch.testing.assert_close(got, want, **TOLERANCE, msg=lambda m: f"grad {name}: {m}")
    assert not _fallbacks(backend), _fallbacks(backend)
    assert backend.compiler.graphs[1].graph_text().count('type: "FusedAttentionGrad"') == 1


def test_bf16_attention_in_training_stays_with_atens_flash_kernels():
    # Below float32 the recomputed probabilities would differ from the flash kernel's (which
    # accumulates in float32), so both directions run on the host-fallback engine, named.
    q, k, v = (torch.randn(2, 3, 5, 4, dtype=torch.bfloat16, generator=torch.Generator().manual_seed(i),
                           requires_grad=True) for i in range(3))

    def attend(q, k, v):
        return torch.nn.functional.scaled_dot_product_attention(q, k, v)
    backend = torchair_ge.get_npu_backend()
    torch.compile(attend, backend=backend, dynamic=False)(q, k, v).float().sum().backward()
    grads = [t.grad.clone() for t in (q, k, v)]
    for t in (q, k, v):
        t.grad = None
    attend(q, k, v).float().sum().backward()
    for got, t in zip(grads, (q, k, v)):
        torch.testing.assert_close(got, t.grad)
    assert set(_fallbacks(backend)) == {"aten._scaled_dot_product_flash_attention_for_cpu.default",
                                        "aten._scaled_dot_product_flash_attention_for_cpu_backward.default"}
