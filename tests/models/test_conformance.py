"""The transformers conformance suite: every architecture's compiled forward equals eager (fp32,
and bf16 for the decoder LLMs), Dynamo hands the backend one graph, and every node runs on a
native kernel. `make test` runs the quick subset; `make test-full` (TORCHAIR_GE_FULL_MODELS=1)
all of them. docs/models.md is the table of the same runs (python -m tests.models.table)."""
import os

import pytest
import torch

from tests.models.architectures import ARCHITECTURES
from tests.models.conformance import run_forward

FULL = os.environ.get("TORCHAIR_GE_FULL_MODELS") == "1"
SELECTED = [a for a in ARCHITECTURES if FULL or a.quick]


@pytest.mark.parametrize("arch", SELECTED, ids=lambda a: a.name)
def test_forward_matches_eager(arch):
    result = run_forward(arch)
    assert result.graphs == 1, f"{arch.name}: Dynamo split the model into {result.graphs} graphs"
    assert not result.fallback_ops, f"{arch.name}: ran on the host-fallback engine: {result.fallback_ops}"


@pytest.mark.parametrize("arch", [a for a in SELECTED if a.bf16], ids=lambda a: a.name)
def test_bf16_forward_matches_eager(arch):
    result = run_forward(arch, torch.bfloat16)
    assert result.graphs == 1
    assert not result.fallback_ops, f"{arch.name}: ran on the host-fallback engine: {result.fallback_ops}"


def test_the_suite_covers_what_the_issue_names():
    kinds = {a.kind for a in ARCHITECTURES}
    assert kinds == {"decoder", "encoder", "encoder-decoder", "vision", "speech"}
    assert len(ARCHITECTURES) >= 30
    assert len({a.name for a in ARCHITECTURES}) == len(ARCHITECTURES)
