"""The host-fallback path: an ATen op with no converter becomes one TorchOp node, which the
engine runs through the torch dispatcher inside the same graph (no graph break). Its output
descs come from the FX metas; its arguments are encoded, in schema order, as strings the
device kernel parses once at load."""
import torch

from torchair_ge import _C
from torchair_ge.ge.dtypes import torch_to_ge
from torchair_ge.ge.graph import current_builder

_MEMORY_FORMATS = {torch.contiguous_format: 0, torch.preserve_format: 1, torch.channels_last: 2,
                   torch.channels_last_3d: 3}


class CannotFallBack(Exception):
    """Why an op cannot run on the host-fallback engine."""


# torch.distributed's operator namespaces (the engine's list, which its fallback kernels check
# too). A collective returns before its work is done: its output is valid only after the
# matching wait_tensor, which resolves the work by the output tensor's identity. The
# host-fallback engine copies each op's results into planned memory as soon as the op returns,
# so the copy would hold unreduced data and the wait would find nothing to wait for: wrong
# numbers without an error. The collectives with converters are Hcom IR ops whose kernels wait
# (converters/collectives.py); any other collective is refused here.
COLLECTIVE_NAMESPACES = frozenset(_C.collective_namespaces())

COLLECTIVE_HINT = ("this torch.distributed collective has no engine op (docs/distributed.md lists the ones that "
                   "do), and the host-fallback engine cannot wait for its asynchronous work (it would return "
                   "wrong numbers); call it from a function decorated with @torch.compiler.disable so that "
                   "Dynamo breaks the graph around it")


def is_collective(op):
    """Whether `op` is one of torch.distributed's operators."""
    return isinstance(op, torch._ops.OpOverload) and op.namespace in COLLECTIVE_NAMESPACES


def _base_type(arg):
    """The schema type without Optional[...]: 'Tensor', 'List[int]', 'number' (Scalar), 'float', ...
    (dtype, layout and memory format arguments read 'int'; their values say what they are)."""
    text = str(arg.type)
    while text.startswith("Optional[") and text.endswith("]"):
        text = text[len("Optional["):-1]
    return text


class _Encoder:
    def __init__(self):
        self.tensors = []  # distinct IR values, in first-use order

    def tensor_index(self, value):
        for i, t in enumerate(self.tensors):
            if t.node_name == value.node_name and t.index == value.index:
                return i
        self.tensors.append(value)
        return len(self.tensors) - 1

    def encode(self, arg, value):
        kind = _base_type(arg)
        if value is None:
            return "none"
        if isinstance(value, _C.EsTensor):
            return f"t:{self.tensor_index(value)}"
        if isinstance(value, (list, tuple)):
            if kind == "List[Optional[Tensor]]":
                return "otl:" + ",".join("-1" if v is None else str(self.tensor_index(v)) for v in value)
            if kind == "List[Tensor]":
                return "tl:" + ",".join(str(self.tensor_index(v)) for v in value)
            if kind == "List[float]":
                return "fs:" + ",".join(repr(float(v)) for v in value)
            if kind == "List[bool]":
                return "bs:" + ",".join("1" if v else "0" for v in value)
            if kind == "List[int]":
                return "is:" + ",".join(str(int(v)) for v in value)
            raise CannotFallBack(f"argument '{arg.name}' has list type {arg.type}")
        if isinstance(value, torch.dtype):
            return f"dt:{int(torch_to_ge(value))}"
        if isinstance(value, torch.device):
            return f"dev:{value}"
        if isinstance(value, torch.layout):
            if value != torch.strided:
                raise CannotFallBack(f"layout {value} is not supported")
            return "layout:0"
        if isinstance(value, torch.memory_format):
            return f"mf:{_MEMORY_FORMATS[value]}"
        if isinstance(value, str):
            return f"s:{value}"
        if isinstance(value, bool) or kind == "bool":
            return "b:1" if value else "b:0"
        if kind == "float" or (kind == "number" and isinstance(value, float)):
            return f"f:{float(value)!r}"
        if isinstance(value, int):
            return f"i:{value}"
        raise CannotFallBack(f"argument '{arg.name}' of type {arg.type} holds {type(value).__name__}")


def argument_values(op, args, kwargs):
    """Every schema argument's value, in schema order (defaults filled in). Shared with the
    derived custom ops (custom_ops.py)."""
    schema = op._schema
    values = []
    for i, arg in enumerate(schema.arguments):
        if not arg.kwarg_only and i < len(args):
            values.append(args[i])
        elif arg.name in kwargs:
            values.append(kwargs[arg.name])
        elif arg.has_default_value():
            values.append(arg.default_value)
        else:
            raise CannotFallBack(f"argument '{arg.name}' is missing")
    return values


def output_metas(meta):
    """The node's output fake tensors as a list; static tensors only. Outputs the op returns as
    None (convolution_backward's unrequested gradients) are left out: the kernel skips them too."""
    metas = [m for m in meta if m is not None] if isinstance(meta, (tuple, list)) else [meta]
    for m in metas:
        if not isinstance(m, torch.Tensor):
            raise CannotFallBack(f"it returns {type(m).__name__}, not only tensors")
        if any(not isinstance(d, int) for d in m.shape):
            raise CannotFallBack("its output shape is symbolic")
    return metas


def fallback_blocker(op, meta):
    """Why `op` cannot run on the host-fallback engine, or None when it can."""
    if not isinstance(op, torch._ops.OpOverload):
        return f"{op} is not an operator overload"
    if is_collective(op):
        return COLLECTIVE_HINT
    if op._schema.is_mutable:
        return "it mutates its inputs"
    if any("Generator" in str(a.type) for a in op._schema.arguments):
        return "it draws random numbers"
    try:
        for m in output_metas(meta):
            torch_to_ge(m.dtype)
    except (CannotFallBack, TypeError) as e:
        return str(e)
    return None


def fallback_node(op, args, kwargs, meta, name):
    """Adds a TorchOp running `op`; returns its output(s) shaped like `meta`."""
    reason = fallback_blocker(op, meta)
    if reason:
        raise CannotFallBack(reason)
    encoder = _Encoder()
    specs = [encoder.encode(a, v) for a, v in zip(op._schema.arguments, argument_values(op, args, kwargs))]
    metas = output_metas(meta)
    dtypes = [int(torch_to_ge(m.dtype)) for m in metas]
    outputs = current_builder().op(
        "TorchOp", [encoder.tensors],
        {"op": op.name(), "args": specs, "output_dtypes": dtypes,
         "output_shapes": [int(d) for m in metas for d in m.shape], "output_ranks": [m.dim() for m in metas]},
        name, len(metas))
    if isinstance(meta, (tuple, list)):
        produced = iter(outputs)
        values = [None if m is None else next(produced) for m in meta]
        return tuple(values) if isinstance(meta, tuple) else values
    return outputs[0]
