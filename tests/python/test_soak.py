"""Soak (make test-full; TORCHAIR_GE_SOAK=1): a compiled zoo model run 10,000 times keeps its RSS
flat, and 200 graphs compiled and discarded grow the process no more than the same churn through
Dynamo's own aot_eager backend (what Dynamo and AOT autograd keep is theirs, not ours)."""
import gc
import os

import pytest
import torch
import torch._dynamo

from bench.models import mlp

pytestmark = pytest.mark.skipif(os.environ.get("TORCHAIR_GE_SOAK") != "1",
                                reason="the soak runs in make test-full (TORCHAIR_GE_SOAK=1)")


def _rss_mb():
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS")) / 1024


def test_ten_thousand_runs_keep_rss_flat():
    model, (x,) = mlp.build(batch=8, width=64)
    compiled = torch.compile(model, backend="torchair_ge", dynamic=False)
    with torch.no_grad():
        want = model(x)
        for _ in range(500):  # allocator pools and caches settle
            compiled(x)
        gc.collect()
        before = _rss_mb()
        for _ in range(10_000):
            out = compiled(x)
        gc.collect()
        grown = _rss_mb() - before
    torch.testing.assert_close(out, want)
    assert grown <= 1.0, f"RSS grew {grown:.2f} MB over 10,000 runs"


def _churn(backend, graphs):
    """RSS growth (MB) over `graphs` graphs, each compiled, run once and dropped."""
    gc.collect()
    start = _rss_mb()
    for k in range(graphs):
        torch._dynamo.reset()
        fn = torch.compile(lambda a: torch.relu(a) * 2 + 1, backend=backend, dynamic=False)
        x = torch.randn(4, 3 + k % 50)
        with torch.no_grad():
            torch.testing.assert_close(fn(x), torch.relu(x) * 2 + 1)
        del fn
    torch._dynamo.reset()
    gc.collect()
    return _rss_mb() - start


def test_compiling_and_discarding_200_graphs_grows_no_more_than_dynamos_own_churn():
    for backend in ("aot_eager", "torchair_ge"):  # first-use allocations out of the way
        _churn(backend, 20)
    reference = _churn("aot_eager", 200)
    ours = _churn("torchair_ge", 200)
    assert ours <= reference + 16, f"torchair_ge grew {ours:.1f} MB over 200 graphs, aot_eager {reference:.1f} MB"
