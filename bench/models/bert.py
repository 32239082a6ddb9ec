"""A BERT-style encoder: token + position embeddings, post-LN transformer layers with a
padding mask on attention, GELU feed-forward."""
import math

import torch
from torch import nn
import torch.nn.functional as F


class SelfAttention(nn.Module):
    def __init__(self, hidden, heads):
        super().__init__()
        self.heads, self.head_dim = heads, hidden // heads
        self.query, self.key, self.value = (nn.Linear(hidden, hidden) for _ in range(3))
        self.out = nn.Linear(hidden, hidden)

    def split(self, x):
        b, s, _ = x.shape
        return x.view(b, s, self.heads, self.head_dim).transpose(1, 2)

    def forward(self, x, mask_bias):
        q, k, v = self.split(self.query(x)), self.split(self.key(x)), self.split(self.value(x))
        scores = q @ k.transpose(-1, -2) / math.sqrt(self.head_dim) + mask_bias
        context = torch.softmax(scores, dim=-1) @ v
        b, _, s, _ = context.shape
        return self.out(context.transpose(1, 2).reshape(b, s, -1))


class EncoderLayer(nn.Module):
    def __init__(self, hidden, heads, ffn):
        super().__init__()
        self.attention = SelfAttention(hidden, heads)
        self.ln1 = nn.LayerNorm(hidden, eps=1e-12)
        self.ff1, self.ff2 = nn.Linear(hidden, ffn), nn.Linear(ffn, hidden)
        self.ln2 = nn.LayerNorm(hidden, eps=1e-12)

    def forward(self, x, mask_bias):
        x = self.ln1(x + self.attention(x, mask_bias))
        return self.ln2(x + self.ff2(F.gelu(self.ff1(x))))


class BertEncoder(nn.Module):
    def __init__(self, vocab=8000, hidden=256, heads=4, layers=4, max_len=512):
        super().__init__()
        self.tokens = nn.Embedding(vocab, hidden)
        self.positions = nn.Embedding(max_len, hidden)
        self.ln = nn.LayerNorm(hidden, eps=1e-12)
        self.layers = nn.ModuleList(EncoderLayer(hidden, heads, 4 * hidden) for _ in range(layers))

    def forward(self, input_ids, attention_mask):
        positions = torch.arange(input_ids.shape[1], device=input_ids.device)
        x = self.ln(self.tokens(input_ids) + self.positions(positions))
        # 1 = attend, 0 = padding; padded keys get a large negative score.
        mask_bias = (1.0 - attention_mask[:, None, None, :].to(x.dtype)) * -10000.0
        for layer in self.layers:
            x = layer(x, mask_bias)
        return x


def build(batch=4, seq=128):
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(0, 8000, (batch, seq), generator=g)
    lengths = torch.tensor([seq, seq * 3 // 4, seq // 2, seq // 3][:batch] + [seq] * max(0, batch - 4))
    mask = (torch.arange(seq)[None, :] < lengths[:, None]).long()
    return BertEncoder().eval(), (ids, mask)
