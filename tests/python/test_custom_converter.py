"""The converter API as docs/converters.md shows it: a new converter, an override, decompositions."""
import torch
import torch.nn.functional as F

from torchair_ge import ge, register_fx_node_ge_converter
from torchair_ge.fx2ge import registry
from conftest import check_against_eager


def test_user_converter_from_the_docs():
    previous = registry.lookup_converter(torch.ops.aten.clamp.default)

    @register_fx_node_ge_converter(torch.ops.aten.clamp.default)
    def convert_clamp(self, min=None, max=None, *, meta_outputs=None):
        x = ge.Cast(self, meta_outputs.dtype)
        if min is not None:
            x = ge.Maximum(x, ge.Const(min, meta_outputs.dtype))
        if max is not None:
            x = ge.Minimum(x, ge.Const(max, meta_outputs.dtype))
        return x

    try:
        check_against_eager(lambda x: torch.clamp(x, -0.5, 0.25) * 2, torch.randn(5, 7))
        check_against_eager(lambda x: torch.clamp(x, min=0.1), torch.randn(5, 7))
    finally:
        registry._CONVERTERS.pop(torch.ops.aten.clamp.default)
        assert registry.lookup_converter(torch.ops.aten.clamp.default) is previous


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
