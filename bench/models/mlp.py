import torch
from torch import nn


class MLP(nn.Module):
    def __init__(self, width=1024, depth=4, in_features=None):
        super().__init__()
        layers, dim = [], in_features or width
        for _ in range(depth):
            layers += [nn.Linear(dim, width), nn.ReLU()]
            dim = width
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x)


def build(batch=64, width=1024):
    torch.manual_seed(0)
    return MLP(width).eval(), (torch.randn(batch, width),)
