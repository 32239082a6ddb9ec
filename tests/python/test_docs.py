"""docs/ops.md must list every IR op and every ATen converter."""
import pathlib

import torchair_ge.fx2ge.interpreter  # noqa: F401  (registers the converters)
from torchair_ge import _C
from torchair_ge.fx2ge.registry import registered_ops

OPS_DOC = (pathlib.Path(__file__).parents[2] / "docs" / "ops.md").read_text()


def test_every_ir_op_is_documented():
    missing = [op for op in _C.op_types() if f"`{op}`" not in OPS_DOC]
    assert not missing, f"add these IR ops to docs/ops.md: {missing}"


def test_every_converter_is_documented():
    missing = [op for op in registered_ops() if f"`{op}`" not in OPS_DOC]
    assert not missing, f"add these converters to docs/ops.md: {missing}"
