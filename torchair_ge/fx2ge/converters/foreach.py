"""The `_foreach_*` ops of optimizers (`foreach=True`): one op over lists of tensors becomes the
per-tensor op's converter applied to each element, so each parameter's update is ordinary IR
that auto-fusion fuses with the rest of its chain (and the memory plan computes in place)."""
import torch

from torchair_ge import ge
from torchair_ge.fx2ge.registry import lookup_converter, register_fx_node_ge_converter

aten = torch.ops.aten

_SCALAR_TYPES = ("Scalar", "float", "int", "number", "bool")


def _is_list(arg):
    text = str(arg.type)
    return text.endswith("[]") or text.startswith("List[")


def _fits(arg, value):
    """Whether one per-element value can be passed as schema argument `arg`."""
    text = str(arg.type).replace("Optional[", "").rstrip("]?")
    if isinstance(value, ge.Tensor):
        return text == "Tensor"
    if isinstance(value, (bool, int, float)):
        return text in _SCALAR_TYPES
    return value is None and arg.type.kind() == "OptionalType"


def _per_element_op(packet, values):
    """The overload of `packet` whose schema takes `values` in order, and its converter."""
    for name in packet.overloads():
        op = getattr(packet, name)
        args = op._schema.arguments
        if "out" in name or len(values) > len(args) or op._schema.is_mutable:
            continue
        if not all(_fits(a, v) for a, v in zip(args, values)):
            continue
        if any(not a.has_default_value() for a in args[len(values):]):
            continue
        converter = lookup_converter(op)
        if converter is not None:
            return op, converter
    return None, None


def _foreach(op, *args, meta_outputs=None, **kwargs):
    schema = op._schema.arguments
    values = list(args) + [kwargs[a.name] for a in schema[len(args):] if a.name in kwargs]
    count = len(meta_outputs)
    lists = [i for i, a in enumerate(schema[:len(values)]) if _is_list(a)]
    if any(len(values[i]) != count for i in lists):
        return NotImplemented
    per_element = getattr(aten, op.__name__.split(".")[0].removeprefix("_foreach_"), None)
    if per_element is None:
        return NotImplemented
    results = []
    for k in range(count):
        element = [values[i][k] if i in lists else v for i, v in enumerate(values)]
        target, converter = _per_element_op(per_element, element)
        if converter is None:
            return NotImplemented  # no per-tensor converter takes these arguments: host fallback
        positional = [v for a, v in zip(target._schema.arguments, element) if not a.kwarg_only]
        keywords = {a.name: v for a, v in zip(target._schema.arguments, element) if a.kwarg_only}
        result = converter(*positional, **keywords, meta_outputs=meta_outputs[k])
        if result is NotImplemented:
            return NotImplemented
        results.append(result)
    return results


def _register(op):
    @register_fx_node_ge_converter(op)
    def convert(*args, meta_outputs=None, **kwargs):
        return _foreach(op, *args, meta_outputs=meta_outputs, **kwargs)

    convert.__name__ = f"convert{op.__name__.removeprefix('_foreach').replace('.', '_')}"


# The functional (not in-place) variants: AOT autograd functionalizes `_foreach_add_` and friends.
for _name in ["add", "sub", "mul", "div", "addcmul", "addcdiv", "lerp", "pow", "maximum", "minimum", "clamp_min",
              "clamp_max", "sqrt", "neg", "reciprocal", "exp", "abs", "sign", "copy"]:
    _packet = getattr(aten, f"_foreach_{_name}", None)
    for _overload in (_packet.overloads() if _packet is not None else []):
        if "out" not in _overload and not getattr(_packet, _overload)._schema.is_mutable:
            _register(getattr(_packet, _overload))
