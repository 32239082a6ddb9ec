"""Training with the torchair_ge backend (docs/training.md): a small ResNet-style CNN with batch
norm and a small transformer classifier, each trained on synthetic data compiled and in eager
from the same initial weights, with the optimizer step compiled too; prints both loss curves
side by side and the time per step.

    python examples/train.py [--steps 200]
"""
import argparse
import copy
import os
import sys
import time

import torch
from torch import nn

import torchair_ge  # noqa: F401  (registers the "torchair_ge" backend)

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from bench.models.resnet import small_resnet  # noqa: E402


class TinyTransformer(nn.Module):
    def __init__(self, vocab=100, hidden=64, heads=4, classes=5):
        super().__init__()
        self.embed = nn.Embedding(vocab, hidden)
        layer = nn.TransformerEncoderLayer(hidden, heads, 4 * hidden, dropout=0.0, activation="gelu",
                                           batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        self.head = nn.Linear(hidden, classes)

    def forward(self, ids):
        return self.head(self.encoder(self.embed(ids)).mean(dim=1))


def synthetic_task(kind, batches=8):
    """A fixed set of batches with learnable labels (a function of the inputs)."""
    g = torch.Generator().manual_seed(0)
    data = []
    for _ in range(batches):
        if kind == "cnn":
            x = torch.randn(8, 3, 32, 32, generator=g)
            data.append((x, (x.mean(dim=(1, 2, 3)) * 40).long().clamp(-5, 4) + 5))
        else:
            ids = torch.randint(0, 100, (8, 16), generator=g)
            data.append((ids, ids[:, 0] % 5))
    return data


def train(model, data, steps, compile_it):
    opt = torch.optim.AdamW(model.parameters(), lr=2e-3)
    forward, step = model, opt.step
    if compile_it:
        forward = torch.compile(model, backend="torchair_ge", dynamic=False)
        step = torch.compile(opt.step, backend="torchair_ge")
    losses, start = [], None
    for i in range(steps):
        if i == 3:  # after the compiles (forward, backward, the optimizer's first and later steps)
            start = time.perf_counter()
        x, y = data[i % len(data)]
        loss = nn.functional.cross_entropy(forward(x), y)
        loss.backward()
        step()
        opt.zero_grad()
        losses.append(loss.item())
    return losses, (time.perf_counter() - start) / (steps - 3) * 1e3


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=200)
    steps = parser.parse_args().steps
    for name, build, kind in [("ResNet-style CNN (batch norm, train mode)", lambda: small_resnet().train(), "cnn"),
                              ("Transformer classifier (2 layers)", TinyTransformer, "transformer")]:
        torch.manual_seed(0)
        model = build()
        data = synthetic_task(kind)
        eager_losses, eager_ms = train(copy.deepcopy(model), data, steps, compile_it=False)
        compiled_losses, compiled_ms = train(model, data, steps, compile_it=True)
        print(f"{name}: {steps} steps, AdamW")
        print(f"  {'step':>5} {'eager loss':>11} {'compiled loss':>14}")
        for i in list(range(0, steps, max(1, steps // 8))) + [steps - 1]:
            print(f"  {i:>5} {eager_losses[i]:>11.4f} {compiled_losses[i]:>14.4f}")
        print(f"  time per step: eager {eager_ms:.2f} ms, torchair_ge {compiled_ms:.2f} ms "
              f"({eager_ms / compiled_ms:.2f}x)\n")
        assert compiled_losses[-1] < 0.5 * compiled_losses[0], "the compiled model did not learn"


if __name__ == "__main__":
    main()
