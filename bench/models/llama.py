"""LLaMA-style decoder layers: RMSNorm, rotary position embeddings, SwiGLU MLP, causal
attention through scaled_dot_product_attention (as Hugging Face's models call it)."""
import torch
from torch import nn
import torch.nn.functional as F


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return self.weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps))


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat([-x[..., half:], x[..., :half]], dim=-1)


class Attention(nn.Module):
    def __init__(self, hidden, heads):
        super().__init__()
        self.heads, self.head_dim = heads, hidden // heads
        self.q, self.k, self.v, self.o = (nn.Linear(hidden, hidden, bias=False) for _ in range(4))

    def forward(self, x, cos, sin):
        b, s, _ = x.shape
        q, k, v = (proj(x).view(b, s, self.heads, self.head_dim).transpose(1, 2) for proj in (self.q, self.k, self.v))
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.o(out.transpose(1, 2).reshape(b, s, -1))


class Layer(nn.Module):
    def __init__(self, hidden, heads, ffn):
        super().__init__()
        self.attn_norm, self.mlp_norm = RMSNorm(hidden), RMSNorm(hidden)
        self.attention = Attention(hidden, heads)
        self.gate, self.up = nn.Linear(hidden, ffn, bias=False), nn.Linear(hidden, ffn, bias=False)
        self.down = nn.Linear(ffn, hidden, bias=False)

    def forward(self, x, cos, sin):
        x = x + self.attention(self.attn_norm(x), cos, sin)
        h = self.mlp_norm(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


class LlamaBlock(nn.Module):
    def __init__(self, hidden=512, heads=8, ffn=1408, layers=2, max_len=256):
        super().__init__()
        self.layers = nn.ModuleList(Layer(hidden, heads, ffn) for _ in range(layers))
        head_dim = hidden // heads
        inv_freq = 1.0 / (10000 ** (torch.arange(0, head_dim, 2).float() / head_dim))
        angles = torch.outer(torch.arange(max_len).float(), inv_freq)
        angles = torch.cat([angles, angles], dim=-1)
        self.register_buffer("cos", angles.cos())
        self.register_buffer("sin", angles.sin())

    def forward(self, x):
        s = x.shape[1]
        cos, sin = self.cos[:s], self.sin[:s]
        for layer in self.layers:
            x = layer(x, cos, sin)
        return x


def build(seq=64, hidden=512):
    torch.manual_seed(0)
    return LlamaBlock(hidden=hidden).eval(), (torch.randn(1, seq, hidden),)
