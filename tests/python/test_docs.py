"""docs/ops.md must list every IR op and every ATen converter; docs/configuration.md every option
and its environment variable."""
import pathlib

import torchair_ge
import torchair_ge.fx2ge.interpreter  # noqa: F401  (registers the converters)
from torchair_ge import _C
from torchair_ge.fx2ge.registry import registered_ops

DOCS = pathlib.Path(__file__).parents[2] / "docs"
OPS_DOC = (DOCS / "ops.md").read_text()


def test_every_ir_op_is_documented():
    # Ops derived from users' custom operators or loaded from their op plugins (docs/custom_ops.md)
    # are not ours to list.
    users = {op for op in _C.op_types() if _C.op_proto(op)["framework_op"] or _C.op_proto(op)["plugin"]}
    missing = [op for op in _C.op_types() if f"`{op}`" not in OPS_DOC and op not in users]
    assert not missing, f"add these IR ops to docs/ops.md: {missing}"


def test_every_converter_is_documented():
    missing = [op for op in registered_ops() if f"`{op}`" not in OPS_DOC]
    assert not missing, f"add these converters to docs/ops.md: {missing}"


def test_every_option_and_environment_variable_is_documented():
    from torchair_ge.configs.option import Option, OptionGroup

    text = (DOCS / "configuration.md").read_text()
    missing = [path for path in torchair_ge.CompilerConfig().as_dict() if f"`{path}`" not in text]
    assert not missing, f"add these options to docs/configuration.md: {missing}"

    def env_names(group):
        for value in vars(type(group)).values():
            if isinstance(value, Option) and value.env:
                yield value.env
        for child in vars(group).values():
            if isinstance(child, OptionGroup):
                yield from env_names(child)

    envs = list(env_names(torchair_ge.CompilerConfig()))
    assert len(envs) >= 10
    undocumented = [e for e in envs if f"`{e}`" not in text]
    assert not undocumented, f"add these environment variables to docs/configuration.md: {undocumented}"
