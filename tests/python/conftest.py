import os

import pytest
import torch
import torch._dynamo
from torch._dynamo.utils import counters

import torchair_ge

# Every optimizer pass is followed by a full type check of the graph in tests.
os.environ.setdefault("TORCHAIR_GE_VERIFY_PASSES", "1")
# Every set of sizes of a symbolic graph runs on an engine instance, so the tests check the
# engine's numbers for each; the default policy (amortize) would run rarely seen sizes in eager
# PyTorch. Its own tests set it (test_dynamic_shapes.py).
os.environ.setdefault("TORCHAIR_GE_NEW_SHAPE_POLICY", "compile")


@pytest.fixture(autouse=True)
def fresh_dynamo():
    torch._dynamo.reset()
    counters.clear()
    yield
    torch._dynamo.reset()


def compile_with_ge(fn, config=None, backend=None):
    """fullgraph=True: any graph break fails the test, so every op really ran in our engine."""
    backend = backend or torchair_ge.get_npu_backend(compiler_config=config)
    return torch.compile(fn, backend=backend, dynamic=False, fullgraph=True)


def check_against_eager(fn, *inputs, config=None, native_only=True, **tolerances):
    """Compiled equals eager. native_only (the default): every op also ran on a native kernel, so a
    converter that starts returning NotImplemented (host fallback) fails the test instead of
    passing through the fallback engine. Tests of fallback paths pass native_only=False."""
    backend = torchair_ge.get_npu_backend(compiler_config=config)
    compiled = compile_with_ge(fn, backend=backend)
    with torch.no_grad():
        expected = fn(*inputs)
        got = compiled(*inputs)
    torch.testing.assert_close(got, expected, **tolerances)
    if native_only:
        fallbacks = {op: n for report in backend.compiler.reports for op, n in report["fallback_ops"].items()}
        assert not fallbacks, f"ops ran on the host-fallback engine, not natively: {fallbacks}"
    return got
