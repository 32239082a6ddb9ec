"""The converter registry: an ATen op overload -> a function that builds IR ops for it.

A converter receives the node's arguments with IR values (ge.Tensor) in place of FX nodes,
plus `meta_outputs`: the FakeTensor(s) torch's meta kernels produced for the node, which fix
the output dtype (torch's type promotion) and shape. It returns an IR value, or a tuple for
multi-output ops."""
import torch

_CONVERTERS = {}


def register_fx_node_ge_converter(aten_op):
    """Decorator: `@register_fx_node_ge_converter(torch.ops.aten.add.Tensor)`.

    Registering an OpOverloadPacket (torch.ops.aten.add) covers all its overloads that have no
    converter of their own. A later registration replaces an earlier one, so users can override
    the built-in converters."""
    if not isinstance(aten_op, (torch._ops.OpOverload, torch._ops.OpOverloadPacket)):
        raise TypeError(f"register_fx_node_ge_converter takes a torch op overload, got {aten_op!r}")

    def register(fn):
        _CONVERTERS[aten_op] = fn
        return fn

    return register


def lookup_converter(target):
    fn = _CONVERTERS.get(target)
    if fn is None and isinstance(target, torch._ops.OpOverload):
        fn = _CONVERTERS.get(target.overloadpacket)
    return fn


def registered_ops():
    return sorted(str(op) for op in _CONVERTERS)
