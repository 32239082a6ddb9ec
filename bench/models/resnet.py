"""ResNet-18-style CNN: conv/bn/relu stem, max-pool, 4 stages of 2 basic blocks, global
average pool, linear."""
import torch
from torch import nn


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.down = None
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        y = torch.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return torch.relu(y + (x if self.down is None else self.down(x)))


class ResNet(nn.Module):
    def __init__(self, widths=(64, 128, 256, 512), blocks_per_stage=2, classes=1000):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, widths[0], 7, 2, 3, bias=False), nn.BatchNorm2d(widths[0]), nn.ReLU(),
                                  nn.MaxPool2d(3, 2, 1))
        blocks, cin = [], widths[0]
        for i, w in enumerate(widths):
            for b in range(blocks_per_stage):
                blocks.append(BasicBlock(cin, w, 2 if (i > 0 and b == 0) else 1))
                cin = w
        self.blocks = nn.Sequential(*blocks)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(cin, classes)

    def forward(self, x):
        x = self.blocks(self.stem(x))
        return self.fc(torch.flatten(self.pool(x), 1))


def randomize_batchnorm(model, seed=0):
    """Non-trivial running statistics so that batch-norm numerics are really exercised."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.copy_(torch.randn(m.num_features, generator=g) * 0.1)
                m.running_var.copy_(torch.rand(m.num_features, generator=g) + 0.5)
                m.weight.copy_(torch.rand(m.num_features, generator=g) + 0.5)
                m.bias.copy_(torch.randn(m.num_features, generator=g) * 0.1)
    return model


def small_resnet(classes=10):
    """A narrow 3-stage variant for quick tests and the quick start."""
    return randomize_batchnorm(ResNet(widths=(16, 32, 64), classes=classes)).eval()


def build(batch=1, size=112):
    torch.manual_seed(0)
    return randomize_batchnorm(ResNet()).eval(), (torch.randn(batch, 3, size, size),)
