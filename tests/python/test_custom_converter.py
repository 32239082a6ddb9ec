"""The converter API as docs/converters.md shows it: a new converter, an override, decompositions."""
import torch
import torch.nn.functional as F

import torchair_ge
from torchair_ge import ge, register_fx_node_ge_converter
from torchair_ge.fx2ge import registry
from conftest import check_against_eager


def test_user_converter_from_the_docs():
    op = torch.ops.aten.hypot.default
    assert registry.lookup_converter(op) is None

    @register_fx_node_ge_converter(op)
    def convert_hypot(self, other, *, meta_outputs=None):
        x, y = ge.Cast(self, meta_outputs.dtype), ge.Cast(other, meta_outputs.dtype)
        return ge.Sqrt(ge.Add(ge.Mul(x, x), ge.Mul(y, y)))

    try:
        backend = torchair_ge.get_npu_backend()
        compiled = torch.compile(lambda a, b: torch.hypot(a, b) * 2, backend=backend, dynamic=False)
        a, b = torch.randn(5, 7), torch.randn(7)
        with torch.no_grad():
            torch.testing.assert_close(compiled(a, b), torch.hypot(a, b) * 2)
        assert backend.compiler.reports[0]["fallback_nodes"] == 0  # ours, not the fallback
    finally:
        registry._CONVERTERS.pop(op)
        registry._UNPRODUCED.pop(op)


def test_override_of_a_builtin_converter_is_used():
    original = registry.lookup_converter(torch.ops.aten.relu.default)
    calls = []

    @register_fx_node_ge_converter(torch.ops.aten.relu.default)
    def relu_via_maximum(self, *, meta_outputs=None):
        calls.append(1)
        return ge.Maximum(self, ge.Const(0.0, meta_outputs.dtype))

    try:
        check_against_eager(torch.relu, torch.randn(4, 4))
        assert calls == [1]
    finally:
        register_fx_node_ge_converter(torch.ops.aten.relu.default)(original)


def test_a_converter_returning_the_wrong_dtype_is_caught():
    original = registry.lookup_converter(torch.ops.aten.neg.default)

    @register_fx_node_ge_converter(torch.ops.aten.neg.default)
    def wrong(self, *, meta_outputs=None):
        return ge.Cast(ge.Neg(self), torch.float16)

    try:
        try:
            check_against_eager(torch.neg, torch.randn(3))
        except Exception as e:  # Dynamo wraps it in BackendCompilerFailed
            assert "produced DT_FLOAT16[3] but torch says torch.float32[3]" in str(e)
        else:
            raise AssertionError("a wrong converter went unnoticed")
    finally:
        register_fx_node_ge_converter(torch.ops.aten.neg.default)(original)


def test_default_decompositions_run():
    check_against_eager(F.silu, torch.randn(6, 5))
    check_against_eager(torch.square, torch.randn(6, 5))
