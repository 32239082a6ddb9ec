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


@functools.lru_cache(maxsize=None)
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
