"""Walks an ATen-level FX graph (after AOT autograd) and builds the IR graph through the
engine's builder, one converter per node. Every IR value is checked against torch's meta."""
import operator
import os
import re
from dataclasses import dataclass, field

import torch
from torch._subclasses.fake_tensor import unset_fake_temporarily
from torch.multiprocessing.reductions import StorageWeakRef
from torch.fx.node import map_aggregate

from torchair_ge import _C
from torchair_ge.fx2ge import converters  # noqa: F401  (registers the built-in converters)
from torchair_ge.fx2ge.custom_ops import (FUNCTIONALIZED, custom_op_node, functionalized_call, inputs_updated_in_place,
                                          is_custom_op, updated_output_index)
from torchair_ge.fx2ge.errors import ConversionError, DynamicShapeError, NotProduced, UnsupportedOpError
from torchair_ge.fx2ge.fallback import CannotFallBack, fallback_blocker, fallback_node
from torchair_ge.fx2ge.inplace import plan_inplace_updates
from torchair_ge.fx2ge.registry import lookup_converter, unproduced_outputs, wants_input_metas
from torchair_ge.fx2ge.symbolic import SYM_TYPES, SizeEvaluator, is_symbolic
from torchair_ge.ge.dtypes import torch_to_ge
from torchair_ge import ge as ge_ops
from torchair_ge.ge.graph import graph_context
from torchair_ge.scope import _ops as scope_ops


@dataclass
class OutputSpec:
    """How one FX output is produced at run time."""
    # "graph" (engine output number `index`), "input" (FX input `index`), "value" (a Python constant),
    # "view" (FX input `index` seen through `value` = (size, stride, storage offset), as eager's view ops return),
    # "output_view" (FX output `index`, an engine output, seen through `value`: outputs sharing memory as in eager)
    kind: str
    index: int = 0
    value: object = None


@dataclass
class ConvertedGraph:
    graph: object  # torchair_ge._C.Graph
    num_inputs: int
    outputs: list = field(default_factory=list)  # OutputSpec per FX output
    fx_nodes: int = 0
    fallback_ops: dict = field(default_factory=dict)  # ATen op -> nodes run by the host-fallback engine
    mutated_inputs: list = field(default_factory=list)  # FX input numbers the graph writes in place
    # FX input number of each engine input; None when they are the same (nothing frozen).
    input_positions: list = None
    # Engine input number -> the permutation that makes that input contiguous (dense_layout): the
    # engine takes `input.permute(perm)`, read without a copy, and transposes it back in the graph.
    input_layouts: dict = field(default_factory=dict)
    # FX node name -> the IR value(s) holding its output(s): (IR node name, output index), or
    # None for an output that is not an IR value. Accuracy compare reads data dumps through it.
    fx_values: dict = field(default_factory=dict)
    # FX input numbers the graph calls c10d's wait_tensor on: a collective issued outside the graph
    # (eager, another graph) may still be running on them; the caller waits through c10d's work
    # registry before the engine reads them.
    waited_inputs: list = field(default_factory=list)
    # The graph has been through the engine's optimizer (an instance of an optimized size template,
    # fx2ge/size_template.py): added with Session.add_optimized_graph, its compile starts after it.
    optimized: bool = False


def _where(node):
    """The user's source line: the last 'File ...' entry of the stack trace and its code line."""
    trace = node.meta.get("stack_trace") or ""
    lines = [line.strip() for line in trace.strip().splitlines()]
    lines = [line for line in lines if line and set(line) - set("^~ ")]  # drop caret markers
    files = [i for i, line in enumerate(lines) if line.startswith("File ")]
    if not files:
        return "no source location"
    i = files[-1]
    return lines[i] + (f": {lines[i + 1]}" if i + 1 < len(lines) else "")


def source_line(node):
    """'file.py:12 | code' for the user's line that made `node`, or "" when Dynamo kept no trace.
    Kept in the node's meta: a graph with symbolic sizes is converted once per set of sizes."""
    cached = node.meta.get("_torchair_ge_source")
    if cached is None:
        cached = node.meta["_torchair_ge_source"] = _source_line(node)
    return cached


def _source_line(node):
    where = _where(node)
    if where == "no source location":
        return ""
    match = re.match(r'File "([^"]+)", line (\d+)(?:, in \S+)?:?\s*(.*)', where)
    if not match:
        return where
    path, line, code = match.groups()
    return f"{os.path.basename(path)}:{line}" + (f" | {code}" if code else "")


def _describe(node):
    return f"node '{node.name}' ({node.target}) from {_where(node)}"


def _static_shape(node, val, sizes=None):
    shape = []
    for d in val.shape:
        if not isinstance(d, int) and sizes is not None:
            d = sizes(d)
        if not isinstance(d, int):
            raise DynamicShapeError(
                f"{_describe(node)} has symbolic shape {tuple(val.shape)} where sizes must be known")
        shape.append(d)
    return shape


def dense_layout(val):
    """The permutation under which a non-contiguous example tensor is contiguous (a transposed
    weight saved for the backward, a channels-last image), or None: the tensor is contiguous, has
    symbolic sizes, or is not dense."""
    if val.dim() < 2 or val.is_contiguous() or any(isinstance(x, SYM_TYPES) for x in (*val.shape, *val.stride())):
        return None
    perm = sorted(range(val.dim()), key=lambda d: (-val.stride(d), d))
    expected = 1
    for d in reversed(perm):
        if val.shape[d] != 1 and val.stride(d) != expected:
            return None
        expected *= val.shape[d]
    return perm


def _check_against_meta(node, value, meta):
    if isinstance(value, NotProduced) or not isinstance(meta, torch.Tensor):
        return
    if not isinstance(value, _C.EsTensor):
        raise ConversionError(f"converter for {_describe(node)} returned {type(value).__name__}, not an IR value")
    expected_shape = _static_shape(node, meta)
    if value.dtype != torch_to_ge(meta.dtype) or list(value.shape) != expected_shape:
        raise ConversionError(
            f"converter for {_describe(node)} produced {value.dtype.name}{list(value.shape)} but torch says "
            f"{meta.dtype}{expected_shape}")


# Ops that only state facts about sizes: checked on the host for the sizes of the instance.
_SIZE_ASSERTIONS = {torch.ops.aten._assert_scalar.default, torch.ops.aten.sym_constrain_range_for_size.default,
                    torch.ops.aten.sym_constrain_range.default}


class FxToGe:
    def __init__(self, gm, name, frozen=None, bindings=None, output_views=True):
        self.gm = gm
        # When `gm` has symbolic sizes, the graph is built for the sizes of `bindings` (symbol -> value).
        self.sizes = SizeEvaluator(bindings) if bindings is not None else None
        self.builder = _C.GraphBuilder(name)
        self.user_streams = []  # npu_stream_switch labels, innermost last
        self.env = {}
        self.frozen = frozen or {}  # FX input number -> real tensor that becomes a Const
        self.output_views = output_views  # outputs viewing another output are views of it (False: copies)
        self.fx_inputs = {n: i for i, n in enumerate(n for n in gm.graph.nodes if n.op == "placeholder")}
        self.placeholders = []  # the ones that stay engine inputs
        self.fallback_ops = {}
        self.inplace, self.absorbed_copies = plan_inplace_updates(gm)
        self.mutated = {n.args[0] for n in gm.graph.nodes
                        if n.target is torch.ops.aten.copy_.default and n.args[0].op == "placeholder"}
        self.input_layouts = {}
        self.waited_inputs = set()

    def check_supported(self):
        """Raises one UnsupportedOpError naming every op that has no converter and cannot fall
        back to the host, with the reason and a source line each."""
        missing = {}
        for node in self.gm.graph.nodes:
            if node.op != "call_function" or node.target is operator.getitem or lookup_converter(node.target):
                continue
            if self._host_scalar(node) or node.target in _SIZE_ASSERTIONS:
                continue  # size arithmetic: evaluated on the host
            if is_custom_op(node.target) or node.target in FUNCTIONALIZED:
                continue  # derived IR ops; what they cannot take is reported at conversion
            meta = node.meta.get("val")
            reason = fallback_blocker(node.target, self.sizes.meta(meta) if self.sizes is not None else meta)
            if reason:
                missing.setdefault(str(node.target), (node, reason))
        if missing:
            lines = "\n".join(f"  {op}: {reason}  (first at {_describe(node)})" for op, (node, reason) in missing.items())
            raise UnsupportedOpError(
                f"{len(missing)} ATen op(s) have no converter and cannot run on the host-fallback engine:\n"
                f"{lines}\nsee docs/converters.md to add a converter with @register_fx_node_ge_converter",
                missing_ops=missing)

    def run(self):
        self.check_supported()
        outputs = None
        # Compilers run under the tracer's FakeTensorMode; constants must be real tensors.
        with unset_fake_temporarily(), graph_context(self.builder):
            for node in self.gm.graph.nodes:
                if node.op == "output":
                    outputs = self._outputs(node)
                    continue
                first_new_node = self.builder.num_nodes
                try:
                    self.env[node] = getattr(self, f"_{node.op}")(node)
                    if node.op == "call_function":
                        user_stream = self.user_streams[-1] if self.user_streams else ""
                        self.builder.annotate_nodes_since(first_new_node, node.name, source_line(node), user_stream)
                    if self.sizes is not None:
                        self._annotate_symbolic_shapes(node)
                except ConversionError:
                    raise
                except _C.GeError as e:
                    raise ConversionError(f"{_describe(node)}: {e}") from e
        engine_outputs, specs = outputs
        self.builder.set_outputs(engine_outputs)
        mutated = sorted(self.fx_inputs[n] for n in self.mutated)
        fx_values = {node.name: _ir_values(value) for node, value in self.env.items() if node.op == "call_function"}
        positions = [self.fx_inputs[p] for p in self.placeholders]
        positions = None if positions == list(range(len(self.fx_inputs))) else positions
        return ConvertedGraph(self.builder.build(), len(self.placeholders), specs, len(self.gm.graph.nodes),
                              self.fallback_ops, mutated, input_positions=positions, fx_values=fx_values,
                              input_layouts=self.input_layouts, waited_inputs=sorted(self.waited_inputs))

    def _placeholder(self, node):
        frozen = self.frozen.get(self.fx_inputs[node])
        if frozen is not None:  # zero-copy: the graph holds the parameter's own memory
            return self.builder.create_const(frozen.detach(), node.name)
        val = node.meta.get("val")
        if isinstance(val, SYM_TYPES) and self.sizes is not None:
            return self.sizes(val)  # a size: the instance is built for its value
        if not isinstance(val, torch.Tensor):
            raise DynamicShapeError(f"graph input {_describe(node)} is {type(val).__name__}, not a tensor")
        index = len(self.placeholders)
        self.placeholders.append(node)
        shape = _static_shape(node, val, self.sizes)
        layout = dense_layout(val) if self.sizes is None and node not in self.mutated else None
        if layout is None:
            return self.builder.create_input(index, torch_to_ge(val.dtype), shape, node.name)
        # Read in its own layout: the transpose back folds into the readers (MatMul flags) or is
        # one copy in the graph instead of one before it.
        self.input_layouts[index] = layout
        data = self.builder.create_input(index, torch_to_ge(val.dtype), [shape[d] for d in layout], node.name)
        inverse = [layout.index(d) for d in range(len(layout))]
        return ge_ops.Transpose(data, ge_ops.Const(inverse, torch.int64))

    def _get_attr(self, node):
        value = self.gm
        for part in node.target.split("."):
            value = getattr(value, part)
        if not isinstance(value, torch.Tensor):
            raise ConversionError(f"{_describe(node)}: attribute is {type(value).__name__}, not a tensor")
        return self.builder.create_const(value.detach().contiguous(), node.name)

    def _call_function(self, node):
        if node.target is operator.getitem:
            source, index = node.args
            value = self.env[source][index]
            if isinstance(value, NotProduced):
                raise ConversionError(f"{_describe(node)} reads output {index} ({value.what}), which torchair_ge "
                                      "does not compute for this op")
            return value
        if node.target in (scope_ops.SCOPE_ENTER, scope_ops.SCOPE_EXIT, scope_ops.WAIT_TENSOR):
            return self._scope_op(node)
        if node.target is torch.ops._c10d_functional.wait_tensor.default and node.args[0].op == "placeholder":
            self.waited_inputs.add(self.fx_inputs[node.args[0]])
        if self._host_scalar(node):
            return self.sizes(node.meta["val"])
        if node.target in _SIZE_ASSERTIONS:
            return self._check_size_assertion(node)
        if node in self.absorbed_copies:  # the in-place update already wrote the input
            return self.env[node.args[1]]
        if node.target in FUNCTIONALIZED:
            return self._functionalized_custom_op(node)
        if node in self.inplace:
            _, dim, index, source = (self._lookup(a) for a in node.args)
            return ge_ops.InplaceIndexCopy(self.env[self.inplace[node]], index, source, dim=dim, node_name=node.name)
        converter = lookup_converter(node.target)
        read = {user.args[1] for user in node.users if user.target is operator.getitem}
        if read and read & unproduced_outputs(
                node.target, map_aggregate(node.args, lambda a: a.meta.get("val") if isinstance(a, torch.fx.Node) else a)):
            converter = None  # the graph needs an output the converter does not compute
        args = map_aggregate(node.args, self._lookup)
        kwargs = dict(map_aggregate(node.kwargs, self._lookup))
        meta = self._concrete_meta(node)
        if wants_input_metas(node.target):
            kwargs["meta_inputs"] = map_aggregate(
                node.args, lambda a: self._concrete_meta(a) if isinstance(a, torch.fx.Node) else a)
        try:
            # A converter returns NotImplemented for cases it leaves to the host-fallback engine.
            result = NotImplemented if converter is None else converter(*args, **kwargs, meta_outputs=meta)
            if result is NotImplemented and is_custom_op(node.target):
                result = self._custom_op(node, args, kwargs, meta)
            if result is NotImplemented:
                result = fallback_node(node.target, args, kwargs, meta, node.name)
                self.fallback_ops[str(node.target)] = self.fallback_ops.get(str(node.target), 0) + 1
        except CannotFallBack as e:
            raise UnsupportedOpError(f"{_describe(node)} has no converter and cannot fall back: {e}",
                                     missing_ops=[str(node.target)]) from e
        except (ConversionError, _C.GeError, TypeError, ValueError, NotImplementedError) as e:
            raise ConversionError(f"{_describe(node)}: {e}") from e
        if isinstance(result, (tuple, list)):
            for value, m in zip(result, meta):
                _check_against_meta(node, value, m)
            result = tuple(result)
        else:
            _check_against_meta(node, result, meta)
        return result

    def _scope_op(self, node):
        """torchair_ge.scope: a stream label for the nodes made until the scope ends, or a wait."""
        if node.target is scope_ops.SCOPE_ENTER:
            keys, values = node.args[0], node.args[1]
            attrs = dict(zip(keys, values))
            self.user_streams.append(attrs.get(scope_ops.USER_STREAM_KEY, self.user_streams[-1] if self.user_streams
                                               else ""))
            return None
        if node.target is scope_ops.SCOPE_EXIT:
            if not self.user_streams:
                raise ConversionError(f"{_describe(node)}: scope_exit without a scope_enter")
            self.user_streams.pop()
            return None
        value, dependency = (self._lookup(a) for a in node.args)
        waited = ge_ops.Identity(value)  # a node of its own: its readers wait through it
        if isinstance(dependency, _C.EsTensor):
            self.builder.add_control_edge(dependency, waited)
        return waited

    def _concrete_meta(self, node):
        meta = node.meta.get("val")
        return meta if self.sizes is None else self.sizes.meta(meta)

    def _annotate_symbolic_shapes(self, node):
        """Dumps of an instance show which dims are symbolic: "[s0, 16]" on each IR value whose
        FX meta has a symbolic size."""
        texts = node.meta.get("_torchair_ge_symbolic_shapes")
        if texts is None:  # spelled once per FX node, not once per instance
            metas = node.meta.get("val")
            metas = metas if isinstance(metas, (tuple, list)) else (metas,)
            texts = node.meta["_torchair_ge_symbolic_shapes"] = [
                "[" + ", ".join(str(d) for d in m.shape) + "]" if isinstance(m, torch.Tensor) and is_symbolic(m) else None
                for m in metas]
        values = self.env[node] if isinstance(self.env[node], tuple) else (self.env[node],)
        for value, text in zip(values, texts):
            if text is not None and isinstance(value, _C.EsTensor):
                self.builder.annotate_symbolic_shape(value, text)

    def _view_of_input(self, node):
        """An OutputSpec("view") when `node`'s output is a view of a graph input (a split, slice or
        reshape of it): AOT autograd regenerates such outputs from the input using the returned
        tensor's strides and offset, so they must be the input's own memory, as in eager."""
        if "_torchair_ge_view_of" not in node.meta:  # found once per FX node, not once per instance
            node.meta["_torchair_ge_view_of"] = self._input_viewed_by(node)
        placeholder = node.meta["_torchair_ge_view_of"]
        if placeholder is None or placeholder not in self.placeholders:
            return None
        return OutputSpec("view", self.fx_inputs[placeholder], strided_view(node.meta["val"], self.sizes))

    def _input_viewed_by(self, node):
        """The placeholder whose memory `node`'s output views, or None."""
        meta = node.meta.get("val")
        if not isinstance(meta, torch.Tensor) or meta.layout != torch.strided:
            return None
        storage = StorageWeakRef(meta.untyped_storage())
        for placeholder in self.fx_inputs:
            base = placeholder.meta.get("val")
            if (isinstance(base, torch.Tensor) and base is not meta
                    and StorageWeakRef(base.untyped_storage()) == storage):
                return placeholder
        return None

    def _host_scalar(self, node):
        """True for a node computing a size (sym_size, SymInt arithmetic, comparisons): its value
        for this instance's sizes is a Python number, not an IR value."""
        return self.sizes is not None and isinstance(node.meta.get("val"), SYM_TYPES)

    def _check_size_assertion(self, node):
        if node.target is torch.ops.aten._assert_scalar.default:
            condition = self._lookup(node.args[0])
            if not condition:
                message = node.args[1] if len(node.args) > 1 else "size assertion"
                raise DynamicShapeError(f"{_describe(node)}: {message} does not hold for these sizes")
        return None

    def _custom_op(self, node, args, kwargs, meta):
        """The IR op derived from a custom operator's schema, or NotImplemented when the schema has
        arguments a derived op cannot take (the host-fallback engine runs it then)."""
        try:
            outputs = custom_op_node(node.target, args, kwargs, meta, node.name)
        except CannotFallBack:
            return NotImplemented
        return outputs if isinstance(meta, (tuple, list)) else outputs[0]

    def _functionalized_custom_op(self, node):
        """auto_functionalized(_v2)(op, ...): the op's derived IR op with one more output per mutated
        argument. Graph inputs are updated in their own memory (plan_inplace_updates drops the
        trailing copy_ into them); other values get an updated copy."""
        try:
            op, kwargs, mutated, bases, slots = functionalized_call(node)
            returns = len(op._schema.returns)
            metas = node.meta["val"][:returns] if returns else None
            outputs = custom_op_node(op, (), map_aggregate(kwargs, self._lookup), metas, node.name, mutated,
                                     in_place=bool(inputs_updated_in_place(node)))
        except CannotFallBack as e:
            raise UnsupportedOpError(f"{_describe(node)}: custom op {node.args[0]} cannot run: {e}",
                                     missing_ops=[str(node.args[0])]) from e
        except (_C.GeError, TypeError, ValueError) as e:
            raise ConversionError(f"{_describe(node)}: {e}") from e
        # FX outputs: the op's returns (a None slot when it returns nothing), then the updated bases.
        fx_outputs = list(outputs[:returns]) or [None]
        for k, name in enumerate(mutated):
            index = updated_output_index(op, slots[name])
            fx_outputs += [None] * (index + 1 - len(fx_outputs))
            fx_outputs[index] = outputs[returns + k]
        return tuple(fx_outputs)

    def _lookup(self, arg):
        if isinstance(arg, SYM_TYPES) and self.sizes is not None:
            return self.sizes(arg)
        return self.env[arg] if isinstance(arg, torch.fx.Node) else arg

    def _outputs(self, node):
        engine_outputs, specs = [], []
        (results,) = node.args
        items = results if isinstance(results, (tuple, list)) else (results,)
        bases = self._output_bases(items) if self.output_views else {}
        for position, item in enumerate(items):
            if isinstance(item, torch.fx.Node) and item.op == "placeholder":
                specs.append(OutputSpec("input", self.fx_inputs[item]))
            elif isinstance(item, torch.fx.Node) and (view := self._view_of_input(item)) is not None:
                specs.append(view)
            elif isinstance(item, torch.fx.Node) and (view := _view_of_output(item, position, bases)) is not None:
                specs.append(view)
            elif isinstance(item, torch.fx.Node) and isinstance(self.env[item], (int, float, bool)):
                specs.append(OutputSpec("value", value=self.env[item]))  # a size of this instance
            elif isinstance(item, torch.fx.Node):
                value = self.env[item]
                if isinstance(value, NotProduced):
                    raise ConversionError(f"graph output {item.name} is {value.what}, which is not computed")
                specs.append(OutputSpec("graph", len(engine_outputs)))
                engine_outputs.append(value)
            else:
                specs.append(OutputSpec("value", value=item))
        return engine_outputs, specs

    def _output_bases(self, items):
        """Storage -> FX output position of the first output that is the whole of its storage
        (contiguous, from offset 0, static sizes): outputs viewing the same storage are returned as
        views of it, as eager returns them (not copies). A base viewing an input never serves: its
        viewers are views of that input (_view_of_input comes first)."""
        bases = {}
        for position, item in enumerate(items):
            meta = item.meta.get("val") if isinstance(item, torch.fx.Node) and item.op != "placeholder" else None
            if (_static_strided(meta) and meta.is_contiguous() and meta.storage_offset() == 0
                    and meta.numel() * meta.element_size() == meta.untyped_storage().nbytes()):
                bases.setdefault(StorageWeakRef(meta.untyped_storage()), position)
        return bases


def _static_strided(meta):
    return isinstance(meta, torch.Tensor) and meta.layout == torch.strided and not is_symbolic(meta)


def _view_of_output(item, position, bases):
    """An OutputSpec("output_view") when `item` views the storage of another FX output in `bases`."""
    meta = item.meta.get("val")
    if not _static_strided(meta):
        return None
    base = bases.get(StorageWeakRef(meta.untyped_storage()))
    if base is None or base == position:
        return None
    return OutputSpec("output_view", base, strided_view(meta))


def strided_view(meta, sizes=None):
    """(size, stride, storage offset) of the tensor meta `meta`, symbolic sizes evaluated by
    `sizes` (a SizeEvaluator): what as_strided takes to rebuild the view at run time."""
    sizes = sizes or (lambda d: d)
    return [sizes(d) for d in meta.shape], [sizes(d) for d in meta.stride()], sizes(meta.storage_offset())


def _ir_values(value):
    items = value if isinstance(value, tuple) else (value,)
    return [(v.node_name, v.index) if isinstance(v, _C.EsTensor) else None for v in items]


def convert_fx_graph(gm, name="graph", frozen=None, bindings=None, output_views=True):
    """Builds the IR graph of `gm`; returns a ConvertedGraph. `frozen` maps FX input numbers to
    real tensors that become constants of the graph instead of inputs. `bindings` (symbol ->
    value) builds a graph with symbolic sizes for those sizes. `output_views=False`: every
    computed output is an engine output of its own (a model file returns computed outputs only)."""
    return FxToGe(gm, name, frozen, bindings, output_views).run()
