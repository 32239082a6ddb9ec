import os

import pytest
import torch
import torch._dynamo
from torch._dynamo.utils import counters

import torchair_ge

# Every optimizer pass is followed by a full type check of the graph in tests.
os.environ.setdefault("TORCHAIR_GE_VERIFY_PASSES", "1")


@pytest.fixture(autouse=True)
def fresh_dynamo():
    torch._dynamo.reset()
    counters.clear()
    yield
    torch._dynamo.reset()


def compile_with_ge(fn, config=None):
    """fullgraph=True: any graph break fails the test, so every op really ran in our engine."""
    return torch.compile(fn, backend=torchair_ge.get_npu_backend(compiler_config=config), dynamic=False,
                         fullgraph=True)


def check_against_eager(fn, *inputs, config=None, **tolerances):
    compiled = compile_with_ge(fn, config)
    with torch.no_grad():
        expected = fn(*inputs)
        got = compiled(*inputs)
    torch.testing.assert_close(got, expected, **tolerances)
    return got
