"""A GPT-style decoder whose KV cache grows by concatenation (transformers' DynamicCache): a
prefill over the prompt, then one token per step; every call has a new cache length."""
import math

import torch
from torch import nn
import torch.nn.functional as F


class GrowingCacheAttention(nn.Module):
    def __init__(self, hidden, heads):
        super().__init__()
        self.heads, self.head_dim = heads, hidden // heads
        self.qkv = nn.Linear(hidden, 3 * hidden)
        self.out = nn.Linear(hidden, hidden)

    def forward(self, x, k_cache, v_cache):
        b, t, _ = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.heads, self.head_dim).permute(2, 0, 3, 1, 4)
        k, v = torch.cat([k_cache, k], dim=2), torch.cat([v_cache, v], dim=2)
        past = k_cache.shape[2]
        # Causal over the whole cache: query i sees keys up to past + i.
        visible = torch.arange(past + t)[None, :] <= (torch.arange(t)[:, None] + past)
        scores = (q @ k.transpose(-1, -2)) / math.sqrt(self.head_dim)
        scores = scores.masked_fill(~visible, float("-inf"))
        context = torch.softmax(scores, dim=-1) @ v
        return self.out(context.transpose(1, 2).reshape(b, t, -1)), k, v


class DecoderLayer(nn.Module):
    def __init__(self, hidden, heads):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(hidden), nn.LayerNorm(hidden)
        self.attention = GrowingCacheAttention(hidden, heads)
        self.fc, self.proj = nn.Linear(hidden, 4 * hidden), nn.Linear(4 * hidden, hidden)

    def forward(self, x, k_cache, v_cache):
        attended, k, v = self.attention(self.ln1(x), k_cache, v_cache)
        x = x + attended
        return x + self.proj(F.gelu(self.fc(self.ln2(x)), approximate="tanh")), k, v


class GrowingCacheGpt(nn.Module):
    def __init__(self, vocab=4096, hidden=256, heads=4, layers=4, max_len=512):
        super().__init__()
        self.heads, self.head_dim = heads, hidden // heads
        self.tokens = nn.Embedding(vocab, hidden)
        self.positions = nn.Embedding(max_len, hidden)
        self.layers = nn.ModuleList(DecoderLayer(hidden, heads) for _ in range(layers))
        self.ln = nn.LayerNorm(hidden)
        self.head = nn.Linear(hidden, vocab, bias=False)

    def empty_cache(self, batch=1):
        shape = (batch, self.heads, 0, self.head_dim)
        return [(torch.zeros(shape), torch.zeros(shape)) for _ in self.layers]

    def forward(self, tokens, cache):
        past = cache[0][0].shape[2]
        x = self.tokens(tokens) + self.positions(torch.arange(past, past + tokens.shape[1]))[None]
        new_cache = []
        for layer, (k_cache, v_cache) in zip(self.layers, cache):
            x, k, v = layer(x, k_cache, v_cache)
            new_cache.append((k, v))
        return self.head(self.ln(x[:, -1:])), new_cache


def build():
    torch.manual_seed(0)
    return GrowingCacheGpt().eval()


def generate(forward, prompt, steps, cache):
    """Greedy: a prefill over `prompt` ([1, n] token ids) from `cache` (model.empty_cache()),
    then `steps` single-token calls of `forward` (the model, or it compiled). Returns the
    generated token ids."""
    logits, cache = forward(prompt, cache)
    tokens = []
    for _ in range(steps):
        token = logits.argmax(-1)
        tokens.append(token)
        logits, cache = forward(token, cache)
    return torch.cat(tokens, dim=1)
