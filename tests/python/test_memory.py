"""Memory planning end to end: zoo models give eager's numbers with reuse on and off, and the
arena stays within 1.10x of the live-bytes lower bound."""
import pytest
import torch

import torchair_ge
from bench import models as zoo


@pytest.mark.parametrize("entry", zoo.get(), ids=lambda e: e.name)
def test_arena_near_the_bound_and_reuse_off_matches(entry):
    reports = {}
    for reuse in (True, False):
        model, inputs = entry.build()
        reference, ref_inputs = entry.build()
        config = torchair_ge.CompilerConfig()
        config.ge_config.memory_reuse = reuse
        backend = torchair_ge.get_npu_backend(compiler_config=config)
        torch._dynamo.reset()
        with torch.no_grad():
            got = torch.compile(model, backend=backend, dynamic=False)(*inputs)
            torch.testing.assert_close(got, reference(*ref_inputs), rtol=1e-3, atol=1e-3)
        (reports[reuse],) = backend.compiler.reports
    on, off = reports[True], reports[False]
    assert off["arena_bytes"] == off["arena_no_reuse"] >= on["arena_bytes"]
    if on["ir_ops"].get("Reshape"):
        assert on["view_values"] > 0  # reshapes read their input's bytes
    assert off["view_values"] == off["inplace_values"] == 0
    assert on["arena_bytes"] <= 1.10 * on["arena_lower_bound"], on
    # With reuse on, reshapes are views: fewer values need bytes of their own at all.
    assert on["arena_no_reuse"] <= off["arena_no_reuse"]
