"""Custom operators with zero extra artifacts: two operators registered with torch.library the
normal way (a CPU implementation and a fake one), used in a compiled model. No converter, no IR
file, no C++: each becomes an IR op derived from its schema and runs through the dispatcher.

    python examples/custom_op.py
"""
import torch
from torch import Tensor

import torchair_ge


@torch.library.custom_op("demo::gated_residual", mutates_args=())
def gated_residual(x: Tensor, h: Tensor, gate_bias: float) -> Tensor:
    """x + sigmoid(h + gate_bias) * h: an out-of-place op."""
    return x + torch.sigmoid(h + gate_bias) * h


@gated_residual.register_fake
def _(x, h, gate_bias):
    return torch.empty_like(x)


@torch.library.custom_op("demo::write_rows_", mutates_args=("cache",))
def write_rows_(cache: Tensor, rows: Tensor, start: int) -> None:
    """cache[start:start + len(rows)] = rows: an in-place op (a KV-cache style update)."""
    cache[start:start + rows.shape[0]].copy_(rows)


@write_rows_.register_fake
def _(cache, rows, start):
    return None


class Block(torch.nn.Module):
    def __init__(self, width=64):
        super().__init__()
        self.proj = torch.nn.Linear(width, width)

    def forward(self, x, cache):
        y = gated_residual(x, self.proj(x), -0.5)
        write_rows_(cache, y[:, -1], 3)  # the caller's cache is updated in place
        return y.relu(), cache.sum()


def main():
    torch.manual_seed(0)
    model = Block().eval()
    x = torch.randn(2, 5, 64)
    cache_eager, cache_compiled = torch.zeros(8, 64), torch.zeros(8, 64)
    backend = torchair_ge.get_npu_backend()
    compiled = torch.compile(model, backend=backend, dynamic=False, fullgraph=True)
    with torch.no_grad():
        expected = model(x, cache_eager)
        got = compiled(x, cache_compiled)
    for e, g in zip(expected, got):
        torch.testing.assert_close(g, e)
    torch.testing.assert_close(cache_compiled, cache_eager)
    report = backend.compiler.reports[0]
    custom = {op: n for op, n in report["ir_ops"].items() if op.startswith("demo::")}
    print(f"custom ops in the graph: {custom}; host-fallback ops: {report['fallback_ops'] or 'none'}")
    print("matches eager, and the caller's cache was updated in place")


if __name__ == "__main__":
    main()
