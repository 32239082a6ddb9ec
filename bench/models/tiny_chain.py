"""A long chain of tiny elementwise ops: the run time is almost all per-op host overhead."""
import torch
from torch import nn


class TinyChain(nn.Module):
    def __init__(self, ops=200):
        super().__init__()
        if ops % 4:
            raise ValueError("ops must be a multiple of 4")
        self.rounds = ops // 4

    def forward(self, x):
        for _ in range(self.rounds):
            x = torch.relu(x * 0.9 + 0.1) - 0.05
        return x


def build(ops=200, size=64):
    torch.manual_seed(0)
    return TinyChain(ops).eval(), (torch.randn(size, size),)
