"""Custom operators with zero extra artifacts.

An operator a user registered with torch (torch.library.custom_op, define + impl, or
TORCH_LIBRARY in C++) and gave a fake/meta kernel enters the graph as an IR op derived from its
schema: tensor arguments become inputs, the other arguments attrs of the same names, the returns
outputs. Output shapes and dtypes are what the fake kernel produced during tracing; at run time
the device calls the operator through the torch dispatcher (csrc/ge/ops/framework_ops.h,
csrc/devices/cpu/kernels/framework_op_kernel.cc).

Operators that mutate arguments (`Tensor(a!)`) reach the backend functionalized, as
auto_functionalized(_v2) nodes; they become the same IR op with one more output per mutated
argument. When every mutated argument is a graph input, those outputs are the inputs' own memory
(the caller's tensors are updated in place, no copy); otherwise each is an updated copy."""
import torch
from torch._higher_order_ops.auto_functionalize import auto_functionalized, auto_functionalized_v2

from torchair_ge import _C
from torchair_ge.fx2ge.fallback import COLLECTIVE_NAMESPACES, CannotFallBack, argument_values, output_metas
from torchair_ge.ge.dtypes import torch_to_ge
from torchair_ge.ge.graph import current_builder

# Namespaces of torch's own operators: those go through converters or the host-fallback engine.
_TORCH_NAMESPACES = COLLECTIVE_NAMESPACES | {"aten", "prims", "debugprims", "higher_order", "quantized", "mkldnn", "mkl",
                                             "onednn", "_quantized", "rngprims", "inductor", "_inductor_test"}

FUNCTIONALIZED = (auto_functionalized, auto_functionalized_v2)

# Schema types (Argument.real_type, Optional[...] removed) -> attr types of the derived IR op.
_ATTR_TYPES = {"int": "int", "SymInt": "int", "float": "float", "bool": "bool", "str": "string",
               "ScalarType": "dtype", "Scalar": "float", "number": "float", "List[int]": "list_int",
               "List[SymInt]": "list_int", "int[]": "list_int", "SymInt[]": "list_int", "List[float]": "list_float",
               "float[]": "list_float", "List[bool]": "list_bool", "bool[]": "list_bool", "List[str]": "list_string",
               "str[]": "list_string"}


def is_custom_op(target):
    """Whether `target` is a user's operator (not one of torch's own namespaces)."""
    return isinstance(target, torch._ops.OpOverload) and target.namespace not in _TORCH_NAMESPACES


def _strip_optional(text):
    optional = False
    while text.startswith("Optional[") and text.endswith("]"):
        text, optional = text[len("Optional["):-1], True
    if text.endswith("?"):
        text, optional = text[:-1], True
    return text, optional


def _classify(arg):
    """('input', kind) or ('attr', attr type) for one schema argument."""
    text, optional = _strip_optional(str(arg.real_type))
    if text == "Tensor":
        return "input", "optional" if optional else "required"
    if text in ("List[Tensor]", "Tensor[]"):
        return "input", "dynamic"
    if text in _ATTR_TYPES:
        return "attr", _ATTR_TYPES[text]
    raise CannotFallBack(f"argument '{arg.name}' has type {arg.real_type}, which derived IR ops do not take")


def _attr_value(value, attr_type):
    if attr_type == "dtype":
        return torch_to_ge(value)
    if attr_type == "float":
        return float(value)
    if attr_type.startswith("list_"):
        return list(value)
    return value


def _op_type(op, in_place, mutates):
    # One IR type per (operator, how mutated arguments are handed back).
    if not mutates or in_place:
        return op.name()
    return op.name() + ".functional"


def custom_op_node(op, args, kwargs, metas, name, mutated=(), in_place=False):
    """Adds the IR op derived from `op`'s schema; returns its outputs (the returns, then the
    updated value of each argument in `mutated`).

    `metas`: the fake tensors of the returns; `mutated`: names of the arguments the op writes."""
    schema = op._schema
    values = argument_values(op, args, kwargs)
    input_specs, attr_specs, inputs, attrs, none_args = [], [], [], {}, []
    for arg, value in zip(schema.arguments, values):
        what, kind = _classify(arg)
        if kind == "dynamic" and any(k == "dynamic" for _, k in input_specs):
            raise CannotFallBack("it takes more than one Tensor[] argument")
        if what == "input":
            input_specs.append((arg.name, kind))
            inputs.append(list(value) if kind == "dynamic" else value)
        else:
            attr_specs.append((arg.name, kind))
            if value is None:
                none_args.append(arg.name)
            else:
                attrs[arg.name] = _attr_value(value, kind)
    input_names = [n for n, _ in input_specs]
    outputs = list(output_metas(metas)) if metas is not None else []
    pairs = []
    for arg_name in mutated:
        pairs.append((len(outputs), input_names.index(arg_name)))
        outputs.append(values[[a.name for a in schema.arguments].index(arg_name)])
    op_type = _op_type(op, in_place, bool(mutated))
    _C.register_framework_op(op_type, op.name(), input_specs, attr_specs, pairs, in_place,
                             f"derived from {schema}")
    attrs.update(output_dtypes=[int(torch_to_ge(o.dtype)) for o in outputs],
                 output_shapes=[int(d) for o in outputs for d in o.shape], output_ranks=[len(o.shape) for o in outputs],
                 **({"none_args": none_args} if none_args else {}))
    return tuple(current_builder().op(op_type, inputs, attrs, name, len(outputs)))


def functionalized_call(node):
    """What an auto_functionalized(_v2) node calls: (op, kwargs, mutated argument names, the base
    tensor (FX node) of each, and the position of each among the node's updated outputs)."""
    op = node.args[0]
    kwargs = dict(node.kwargs)
    mutated = [a.name for a in op._schema.arguments if a.alias_info is not None and a.alias_info.is_write]
    bases, slots = {}, {}
    if node.target is auto_functionalized_v2:
        all_bases = kwargs.pop("_all_bases")
        for name in mutated:
            index = kwargs.pop(f"_{name}_base_index", None)
            views = [k for k in (f"_{name}_size", f"_{name}_stride", f"_{name}_storage_offset", f"_{name}_alias",
                                 f"_{name}_slice_dim", f"_{name}_slice_start", f"_{name}_slice_end") if k in kwargs]
            if views:
                raise CannotFallBack(f"mutated argument '{name}' is a view of a larger tensor, which is not supported yet")
            if index is not None and index in slots.values():
                raise CannotFallBack(f"mutated argument '{name}' shares its tensor with another mutated argument")
            bases[name] = None if index is None else all_bases[index]
            slots[name] = index
            kwargs[name] = bases[name]
    else:  # v1: the updated values follow the returns in schema order
        for k, name in enumerate(mutated):
            bases[name], slots[name] = kwargs.get(name), k
    mutated = [n for n in mutated if bases[n] is not None]
    return op, kwargs, mutated, bases, slots


def updated_output_index(op, slot):
    """The FX output index of a functionalized node's updated base `slot`: after the op's returns
    (one None placeholder when it returns nothing)."""
    return max(len(op._schema.returns), 1) + slot


def inputs_updated_in_place(node):
    """{FX output index: graph input} of an auto_functionalized(_v2) node whose mutated arguments
    are all graph inputs -- those are updated in their own memory -- else {} (updated copies)."""
    try:
        op, _, mutated, bases, slots = functionalized_call(node)
    except CannotFallBack:
        return {}
    if not mutated or any(bases[n].op != "placeholder" for n in mutated):
        return {}
    return {updated_output_index(op, slots[n]): bases[n] for n in mutated}
