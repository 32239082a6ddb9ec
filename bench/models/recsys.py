"""Recommendation models: sparse features through embedding tables, dense features, MLP
towers. MMoE adds 4 experts and one softmax gate per task: many small parallel branches."""
import torch
from torch import nn

SPARSE_FEATURES, VOCAB, EMBED_DIM, DENSE_FEATURES = 8, 1000, 16, 13


def mlp(sizes, last_activation=True):
    layers = []
    for i in range(len(sizes) - 1):
        layers.append(nn.Linear(sizes[i], sizes[i + 1]))
        if last_activation or i < len(sizes) - 2:
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


class SparseEmbedding(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.tables = nn.ModuleList(nn.Embedding(VOCAB, dim) for _ in range(SPARSE_FEATURES))

    def forward(self, sparse):
        return torch.cat([table(sparse[:, i]) for i, table in enumerate(self.tables)], dim=1)


class WideDeep(nn.Module):
    def __init__(self):
        super().__init__()
        self.wide_sparse = SparseEmbedding(1)  # one weight per category: the linear "wide" part
        self.wide_dense = nn.Linear(DENSE_FEATURES, 1)
        self.deep_embed = SparseEmbedding(EMBED_DIM)
        self.deep = mlp([SPARSE_FEATURES * EMBED_DIM + DENSE_FEATURES, 256, 128, 64, 1], last_activation=False)

    def forward(self, sparse, dense):
        wide = self.wide_sparse(sparse).sum(dim=1, keepdim=True) + self.wide_dense(dense)
        deep = self.deep(torch.cat([self.deep_embed(sparse), dense], dim=1))
        return torch.sigmoid(wide + deep)


class MMoE(nn.Module):
    def __init__(self, experts=4, tasks=2, expert_sizes=(64, 32), tower_sizes=(16, 1)):
        super().__init__()
        self.embed = SparseEmbedding(EMBED_DIM)
        dim = SPARSE_FEATURES * EMBED_DIM + DENSE_FEATURES
        self.experts = nn.ModuleList(mlp([dim, *expert_sizes]) for _ in range(experts))
        self.gates = nn.ModuleList(nn.Linear(dim, experts) for _ in range(tasks))
        self.towers = nn.ModuleList(mlp([expert_sizes[-1], *tower_sizes], last_activation=False) for _ in range(tasks))

    def forward(self, sparse, dense):
        x = torch.cat([self.embed(sparse), dense], dim=1)
        experts = torch.stack([expert(x) for expert in self.experts], dim=1)  # [B, E, D]
        outputs = []
        for gate, tower in zip(self.gates, self.towers):
            weights = torch.softmax(gate(x), dim=-1).unsqueeze(-1)              # [B, E, 1]
            outputs.append(torch.sigmoid(tower((weights * experts).sum(dim=1))))
        return torch.cat(outputs, dim=1)


def _inputs(batch):
    g = torch.Generator().manual_seed(1)
    return torch.randint(0, VOCAB, (batch, SPARSE_FEATURES), generator=g), torch.randn(batch, DENSE_FEATURES, generator=g)


def build_widedeep(batch=512):
    torch.manual_seed(0)
    return WideDeep().eval(), _inputs(batch)


def build_mmoe(batch=512):
    torch.manual_seed(0)
    return MMoE().eval(), _inputs(batch)
