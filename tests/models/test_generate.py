"""transformers' generate() with the model's forward compiled by the backend under default
torch.compile settings: greedy tokens identical to eager, with the dynamic cache (the cache
length is a symbolic dim) and with the static cache (updated in place). Decoder LLMs and the
encoder-decoders of the suite; quick subset in `make test`, all in `make test-full`."""
import os

import pytest

from tests.models.architectures import ARCHITECTURES
from tests.models.conformance import run_generate

FULL = os.environ.get("TORCHAIR_GE_FULL_MODELS") == "1"
GENERATING = [a for a in ARCHITECTURES if a.generate and (FULL or a.quick)]


@pytest.mark.parametrize("cache", ["dynamic", "static"])
@pytest.mark.parametrize("arch", GENERATING, ids=lambda a: a.name)
def test_greedy_generate_matches_eager(arch, cache):
    result = run_generate(arch, cache)
    if result is None:
        pytest.skip(f"transformers has no static cache for {arch.name}")
    assert result.tokens_equal
    reports = result.reports
    # prefill, the first decode step (Dynamo specializes sizes 0 and 1), one symbolic graph for
    # the rest; encoder-decoders add their first decoder step
    assert result.compiles <= 4, [r.get("symbolic") for r in reports]
    assert not any(r["fallback_ops"] for r in reports), [r["fallback_ops"] for r in reports]
    if cache == "static":
        # The decode steps write each full-attention layer's key and value cache where it lives
        # (index_copy in place), never through a copy of the whole cache. (The prefill creates
        # the cache; a sliding-window layer's cache is rolled and copied by transformers itself.)
        in_place = [r["ir_ops"].get("InplaceIndexCopy", 0) for r in reports]
        assert max(in_place) >= 2 * result.full_attention_layers, in_place
