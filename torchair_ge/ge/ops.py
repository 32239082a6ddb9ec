"""Building IR ops from Python. Any registered op type is a function: ge.Add(x, y),
ge.MatMulV2(a, b, None, transpose_x2=True). Inputs follow the prototype's order (None for an
absent optional input, a list for a dynamic one); attributes are keyword arguments."""
import functools

import torch

from torchair_ge import _C
from torchair_ge.ge.dtypes import ge_to_torch, torch_to_ge
from torchair_ge.ge.graph import current_builder


def op(op_type, *inputs, node_name="", **attrs):
    """Adds one `op_type` node; returns its output, or a tuple when it has several."""
    outputs = current_builder().op(op_type, list(inputs), attrs, node_name)
    return outputs[0] if len(outputs) == 1 else tuple(outputs)


def Const(value, dtype=None, name=""):
    """A constant from a tensor, a number or a (nested) list; `dtype` is a torch dtype or DataType."""
    torch_dtype = ge_to_torch(dtype) if isinstance(dtype, _C.DataType) else dtype
    if isinstance(value, torch.Tensor):
        tensor = value.detach()
        if torch_dtype is not None and tensor.dtype != torch_dtype:
            tensor = tensor.to(torch_dtype)
    else:
        tensor = torch.tensor(value, dtype=torch_dtype)
    return current_builder().create_const(tensor.cpu().contiguous(), name)


def Cast(x, dst_type):
    dst = torch_to_ge(dst_type)
    return x if x.dtype == dst else op("Cast", x, dst_type=dst)


@functools.cache
def _op_function(op_type):
    try:
        proto = _C.op_proto(op_type)
    except _C.GeError:
        raise AttributeError(f"no IR op named {op_type!r}") from None

    def build(*inputs, node_name="", **attrs):
        return op(op_type, *inputs, node_name=node_name, **attrs)

    inputs = ", ".join(f"{i['name']} ({i['kind']})" for i in proto["inputs"])
    attrs = ", ".join(f"{a['name']}: {a['type']}" + ("" if a["default"] is None else f" = {a['default']!r}")
                      for a in proto["attrs"])
    build.__name__ = op_type
    build.__doc__ = f"{proto['doc']}\n\nInputs: {inputs or 'none'}\nAttrs: {attrs or 'none'}"
    return build


def op_function(op_type):
    """The builder function of a registered op (cached: converters call these for every node)."""
    return _op_function(op_type)


class TensorSpec:
    """What an op output must be: a dtype (torch dtype or DataType) and a shape. A converter builds
    one from its `meta_outputs` (TensorSpec.of(meta)) to have ge.custom_op check what it built."""

    def __init__(self, dtype, shape):
        self.dtype = torch_to_ge(dtype) if isinstance(dtype, torch.dtype) else dtype
        self.shape = [int(d) for d in shape]

    @classmethod
    def of(cls, meta):
        return cls(meta.dtype, meta.shape)

    def __repr__(self):
        return f"TensorSpec({self.dtype.name}, {self.shape})"


def custom_op(op_type, inputs=None, outputs=None, attrs=None, node_name=""):
    """Adds one node of any op type registered in the engine, with inputs and attrs by name:

        y = ge.custom_op("MatMulV2", inputs={"x1": a, "x2": b}, outputs=["y"], attrs={"transpose_x2": True})

    `inputs` maps prototype input names to values (None or absent for an optional input, a list
    for a dynamic one); `outputs` lists one name per output, or a TensorSpec per output that the
    result must match. Returns one tensor, or a tuple for several outputs."""
    try:
        proto = _C.op_proto(op_type)
    except _C.GeError:
        raise ValueError(f"ge.custom_op: no op type {op_type!r} is registered in the engine "
                         "(torchair_ge.ge.op_types() lists them)") from None
    inputs, attrs = dict(inputs or {}), dict(attrs or {})
    names = [i["name"] for i in proto["inputs"]]
    unknown = sorted(set(inputs) - set(names))
    if unknown:
        raise ValueError(f"ge.custom_op: {op_type} has no input(s) {unknown}; its inputs are {names}")
    ordered = []
    for spec in proto["inputs"]:
        value = inputs.get(spec["name"])
        if value is None and spec["kind"] == "required":
            raise ValueError(f"ge.custom_op: {op_type} needs input {spec['name']!r}")
        ordered.append(list(value) if spec["kind"] == "dynamic" else value)
    while ordered and ordered[-1] is None:  # trailing absent optional inputs
        ordered.pop()
    expected = list(outputs) if outputs is not None else None
    count = len(expected) if expected is not None and proto["dynamic_output"] else -1
    results = current_builder().op(op_type, ordered, attrs, node_name, count)
    if expected is not None and len(results) != len(expected):
        raise ValueError(f"ge.custom_op: {op_type} has {len(results)} output(s), {len(expected)} were named")
    for value, want in zip(results, expected or []):
        if isinstance(want, TensorSpec) and (value.dtype != want.dtype or list(value.shape) != want.shape):
            raise ValueError(f"ge.custom_op: {op_type} output is {value.dtype.name}{list(value.shape)}, "
                             f"expected {want}")
    return results[0] if len(results) == 1 else tuple(results)
