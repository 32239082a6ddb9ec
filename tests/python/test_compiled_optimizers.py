"""Compiled optimizer steps: `torch.compile(opt.step, backend=...)` for SGD (momentum), Adam and
AdamW, per-parameter loops and `foreach` (the `_foreach_*` ops), against eager steps of an identical
model; parameters and optimizer state are updated in their own memory, with no copy per step."""
import copy

import pytest
import torch
from torch import nn

import torchair_ge

OPTIMIZERS = {
    "sgd_momentum": lambda params, foreach: torch.optim.SGD(params, lr=0.05, momentum=0.9, foreach=foreach),
    "adam": lambda params, foreach: torch.optim.Adam(params, lr=0.01, foreach=foreach),
    "adamw": lambda params, foreach: torch.optim.AdamW(params, lr=0.01, weight_decay=0.1, foreach=foreach),
}


def _model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 32), nn.GELU(), nn.Linear(32, 4))


@pytest.mark.parametrize("foreach", [False, True])
@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_compiled_step_equals_eager_in_place(name, foreach):
    model = _model()
    eager = copy.deepcopy(model)
    opt_c = OPTIMIZERS[name](model.parameters(), foreach)
    opt_e = OPTIMIZERS[name](eager.parameters(), foreach)
    backend = torchair_ge.get_npu_backend()
    step = torch.compile(opt_c.step, backend=backend)
    storage = [p.data_ptr() for p in model.parameters()]
    g = torch.Generator().manual_seed(3)
    for i in range(20):
        x = torch.randn(8, 16, generator=g)
        # The same gradients on both sides, and (below) the same state before each step: the test
        # is of one step at a time (rounding differences must not compound through training).
        model(x).square().mean().backward()
        for p, q in zip(model.parameters(), eager.parameters()):
            q.grad = p.grad.clone()
        step()
        opt_e.step()
        opt_c.zero_grad()
        opt_e.zero_grad()
        for (n, p), q in zip(model.named_parameters(), eager.parameters()):
            torch.testing.assert_close(p, q, rtol=1e-5, atol=1e-6, msg=lambda m: f"step {i} {n}: {m}")
        for p, q in zip(model.parameters(), eager.parameters()):
            for key, value in opt_c.state[p].items():
                torch.testing.assert_close(value, opt_e.state[q][key], rtol=1e-5, atol=1e-6,
                                           msg=lambda m: f"step {i} state {key}: {m}")
                opt_e.state[q][key].copy_(value)
        with torch.no_grad():
            for p, q in zip(model.parameters(), eager.parameters()):
                q.copy_(p)
    assert [p.data_ptr() for p in model.parameters()] == storage
    fallbacks = {op for r in backend.compiler.reports for op in r["fallback_ops"]}
    assert not fallbacks, fallbacks
    # Every parameter and state tensor the step writes is computed in its own memory: the graph's
    # Assigns have nothing to copy. (The first step, which creates the state, may differ.)
    last = backend.compiler.reports[-1]
    assert last["mutated_inputs"], "the step updates its inputs inside the graph"
    assert last["updates_in_input"] == len(last["mutated_inputs"]), last
    # Reading a tensor the step then overwrites does not keep a node out of its kernel: one
    # kernel per parameter for the update (plus, for Adam, one for its step's scalar math).
    params = len(list(model.parameters()))
    assert last["tasks"] <= (2 if name.startswith("adam") else 1) * params, last


def test_a_step_that_reads_a_parameter_after_updating_it_stays_correct():
    """A value read after the update (the old parameter kept for a report) forces the copy; the
    numbers stay eager's either way."""
    def step(p, g, log):
        old = p.clone()
        p.sub_(g, alpha=0.1)
        log.copy_(old + p)

    p, g, log = torch.randn(64), torch.randn(64), torch.zeros(64)
    p_e, log_e = p.clone(), log.clone()
    step(p_e, g, log_e)
    compiled = torch.compile(step, backend="torchair_ge", dynamic=False)
    compiled(p, g, log)
    torch.testing.assert_close(p, p_e)
    torch.testing.assert_close(log, log_e)
