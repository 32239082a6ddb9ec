"""The converter registry: an ATen op overload -> a function that builds IR ops for it.

A converter receives the node's arguments with IR values (ge.Tensor) in place of FX nodes,
plus `meta_outputs`: the FakeTensor(s) torch's meta kernels produced for the node, which fix
the output dtype (torch's type promotion) and shape. It returns an IR value, or a tuple for
multi-output ops. A converter registered with `input_metas=True` also receives `meta_inputs`:
the node's positional arguments with each FX node replaced by its FakeTensor (for ops whose
meaning depends on an input's layout, such as as_strided)."""
import torch

_CONVERTERS = {}   # op -> converter
_UNPRODUCED = {}   # op -> indices of outputs the converter leaves as NotProduced
_INPUT_METAS = {}  # op -> whether its converter takes meta_inputs


def register_fx_node_ge_converter(aten_op, *, unproduced_outputs=(), input_metas=False):
    """Decorator: `@register_fx_node_ge_converter(torch.ops.aten.add.Tensor)`.

    Registering an OpOverloadPacket (torch.ops.aten.add) covers all its overloads that have no
    converter of their own. A later registration replaces an earlier one, so users can override
    the built-in converters. `unproduced_outputs` lists outputs the converter does not compute
    (it returns NotProduced for them): a node whose graph reads one of them runs on the
    host-fallback engine instead. It may be a function of the node's argument metas (the
    tensors' FakeTensor values, other arguments as they are) returning that list."""
    if not isinstance(aten_op, (torch._ops.OpOverload, torch._ops.OpOverloadPacket)):
        raise TypeError(f"register_fx_node_ge_converter takes a torch op overload, got {aten_op!r}")

    def register(fn):
        _CONVERTERS[aten_op] = fn
        _UNPRODUCED[aten_op] = unproduced_outputs if callable(unproduced_outputs) else frozenset(unproduced_outputs)
        _INPUT_METAS[aten_op] = input_metas
        return fn

    return register


def _lookup(table, target):
    if target in table:
        return table[target]
    if isinstance(target, torch._ops.OpOverload):
        return table.get(target.overloadpacket)
    return None


def lookup_converter(target):
    return _lookup(_CONVERTERS, target)


def wants_input_metas(target):
    return bool(_lookup(_INPUT_METAS, target))


def unproduced_outputs(target, arg_metas=()):
    """The outputs `target`'s converter leaves uncomputed for a node with these argument metas."""
    entry = _lookup(_UNPRODUCED, target)
    return frozenset(entry(*arg_metas) if callable(entry) else entry or ())


def registered_ops():
    return sorted(str(op) for op in _CONVERTERS)
