"""Symbolic sizes of an FX graph (Dynamo's dynamic shapes) and their values in one call.

Dynamo hands the backend graphs whose sizes are sympy expressions over symbols (`s0`, `s1`):
SymInt graph inputs, FakeTensors with symbolic dims, `sym_size` and SymInt arithmetic nodes.
`SymbolicSignature` says where each symbol's value is read from the call's arguments, binds
them, checks every input against the graph's expressions (a clear error for a genuinely wrong
input), and evaluates any meta value (SymInt, FakeTensor shape/stride) under a binding, so one
symbolic graph can be instantiated for the sizes of a call."""
import operator
from dataclasses import dataclass

import sympy
import torch
from torch.utils import _pytree as pytree

from torchair_ge.fx2ge.errors import DynamicShapeError

SYM_TYPES = (torch.SymInt, torch.SymFloat, torch.SymBool)
_SHAPE = operator.attrgetter("shape")


def is_symbolic(value):
    """True for a SymInt/SymFloat/SymBool, or a tensor with a symbolic size or stride."""
    if isinstance(value, SYM_TYPES):
        return True
    if isinstance(value, torch.Tensor):
        return any(isinstance(d, torch.SymInt) for d in (*value.shape, *value.stride(), value.storage_offset()))
    return False


def graph_is_symbolic(gm):
    """True when an input or any node has a symbolic size (data-dependent sizes appear only inside)."""
    for node in gm.graph.nodes:
        val = node.meta.get("val")
        if any(is_symbolic(v) for v in (val if isinstance(val, (tuple, list)) else (val,))):
            return True
    return False


def _expr(value):
    return value.node.expr if isinstance(value, SYM_TYPES) else sympy.Integer(value)


@dataclass(frozen=True)
class SymbolSource:
    """Where one symbol's value comes from in a call: `args[input]` itself (dim None: a SymInt
    input) or `args[input].size(dim)`."""
    symbol: sympy.Symbol
    input: int
    dim: int = None

    def describe(self, names):
        return names[self.input] if self.dim is None else f"{names[self.input]}.size({self.dim})"


class SymbolicSignature:
    """The symbols of a graph's inputs: where each is read, its range, and the expected shape of
    every tensor input as expressions."""

    def __init__(self, gm):
        placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
        self.names = [n.name for n in placeholders]
        self.vals = [n.meta.get("val") for n in placeholders]
        self.data_dependent = DataDependentSizes(gm)
        sources = {}  # a tensor's size first (what the report names), else the SymInt input itself
        for i, val in enumerate(self.vals):
            if isinstance(val, torch.Tensor):
                for d, size in enumerate(val.shape):
                    if isinstance(size, torch.SymInt) and isinstance(size.node.expr, sympy.Symbol):
                        sources.setdefault(size.node.expr, SymbolSource(size.node.expr, i, d))
        for i, val in enumerate(self.vals):
            if isinstance(val, torch.SymInt) and isinstance(val.node.expr, sympy.Symbol):
                sources.setdefault(val.node.expr, SymbolSource(val.node.expr, i))
        needed = set()
        for val in self.vals:
            if is_symbolic(val):
                needed |= _free_symbols(val)
        unread = needed - set(sources)
        if unread:
            raise DynamicShapeError(
                f"symbols {sorted(map(str, unread))} of the graph's inputs are not a size of any input, so their "
                "values cannot be read at call time; compile with torch.compile(..., dynamic=False)")
        self.sources = sorted(sources.values(), key=lambda s: str(s.symbol))
        shape_env = _shape_env(self.vals)
        self.ranges = {s.symbol: shape_env.var_to_range.get(s.symbol) for s in self.sources} if shape_env else {}
        hints = shape_env.backed_var_to_val if shape_env else {}
        self.hints = {s.symbol: int(hints[s.symbol]) for s in self.sources if s.symbol in hints}
        self._templates = self._shape_templates()
        literal = [(i, template) for i, template, is_literal in self._templates if is_literal]
        positions = [i for i, _ in literal]
        self._literal_inputs = _getter(positions)
        self._literal_shapes = tuple(template for _, template in literal)
        self._symbolic_templates = [t for t in self._templates if not t[2]]

    @property
    def symbols(self):
        """Every symbol a call binds: the inputs' sizes, then the data-dependent ones."""
        return [s.symbol for s in self.sources] + self.data_dependent.symbols

    def describe(self):
        """{"s0": "x.size(0) in [2, inf]"}: what the compile report says is symbolic."""
        out = {}
        for s in self.sources:
            r = self.ranges.get(s.symbol)
            out[str(s.symbol)] = s.describe(self.names) + (f" in [{r.lower}, {r.upper}]" if r is not None else "")
        out.update(self.data_dependent.describe())
        return out

    def key(self, args):
        """This call's symbol values, in `symbols` order, after checking every input against the
        graph's size expressions (DynamicShapeError names the input and what differs). The fast
        path of every call: reads sizes and compares them, no sympy."""
        if len(args) != len(self.vals):
            raise DynamicShapeError(f"{len(args)} inputs given, the graph takes {len(self.vals)}")
        key = tuple(self._read(s, args) for s in self.sources)
        if self.data_dependent.symbols:
            key += self.data_dependent(args)
        # inputs of static shape (most are parameters) in one compare; any difference is spelled below
        try:
            literal_fits = tuple(map(_SHAPE, self._literal_inputs(args))) == self._literal_shapes
        except AttributeError:  # not a tensor
            literal_fits = False
        for i, template, literal in self._templates if not literal_fits else self._symbolic_templates:
            self._check(args, i, template if literal else tuple(
                key[d] if isinstance(d, SymbolAt) else d if isinstance(d, int) else d(key) for d in template), key)
        return key

    def _check(self, args, i, expected, key):
        arg = args[i]
        if not isinstance(arg, torch.Tensor):
            raise DynamicShapeError(f"input {self.names[i]} is {type(arg).__name__}, expected a tensor")
        if arg.shape != expected:
            raise DynamicShapeError(f"input {self.names[i]} has shape {list(arg.shape)}, the graph expects "
                                    f"{list(self.vals[i].shape)} = {list(expected)} for "
                                    f"{spell_bindings(dict(zip(self.symbols, key)))}")

    def bindings(self, key):
        """Symbol -> value for a key from `key()`; raises DynamicShapeError when a value is
        outside the range Dynamo compiled the graph for."""
        bindings = dict(zip(self.symbols, key))
        for s, value in zip(self.sources, key):
            r = self.ranges.get(s.symbol)
            if r is not None and not (r.lower <= value <= r.upper):
                raise DynamicShapeError(f"{s.describe(self.names)} = {value} is outside the range "
                                        f"[{r.lower}, {r.upper}] the graph was compiled for ({s.symbol})")
        return self.data_dependent.complete(bindings)

    def _read(self, source, args):
        arg = args[source.input]
        if source.dim is None:
            if not isinstance(arg, int):
                raise DynamicShapeError(f"input {self.names[source.input]} is {type(arg).__name__}, expected an int")
            return arg
        if not isinstance(arg, torch.Tensor):
            raise DynamicShapeError(f"input {self.names[source.input]} is {type(arg).__name__}, expected a tensor")
        if arg.dim() <= source.dim:
            raise DynamicShapeError(f"input {self.names[source.input]} has {arg.dim()} dims, the graph reads "
                                    f"size({source.dim}) for {source.symbol}")
        return arg.shape[source.dim]

    def _shape_templates(self):
        """Per tensor input: its expected shape (ints, SymbolAt(position in the key) for a plain
        symbol, or a function of the key for an expression) and whether it is all literals."""
        position = {s.symbol: k for k, s in enumerate(self.sources)}
        templates = []
        for i, val in enumerate(self.vals):
            if not isinstance(val, torch.Tensor):
                continue
            template = []
            for d in val.shape:
                expr = _expr(d)
                if expr.is_number:
                    template.append(int(expr))
                elif expr in position:
                    template.append(SymbolAt(position[expr]))
                else:
                    template.append(_key_function(expr, self.symbols))
            literal = all(type(d) is int for d in template)  # noqa: E721 - SymbolAt is an int too
            templates.append((i, tuple(template), literal))
        return templates


def _getter(positions):
    """args -> the tuple of args at `positions` (operator.itemgetter, which returns a lone item bare)."""
    if len(positions) > 1:
        return operator.itemgetter(*positions)
    return lambda args: tuple(args[i] for i in positions)


class SymbolAt(int):
    """A dim equal to the symbol at this position of the key."""


def _key_function(expr, symbols):
    def evaluate(key):
        return int(sympy.sympify(expr.xreplace(dict(zip(symbols, key)))))
    return evaluate


class DataDependentSizes:
    """The sizes a graph only knows from tensor values (unbacked symbols: nonzero's row count,
    the value of .item()): which nodes define them (FX's unbacked_bindings) and the part of the
    graph those nodes need, which each call runs eagerly on the host to learn the values before
    the engine instance for them is chosen. The instance then runs the whole graph (the
    defining ops again: nonzero on the host-fallback engine, .item() as a constant of the
    instance)."""

    def __init__(self, gm):
        self.defining = []  # (node, symbol, key path into the node's value)
        for node in gm.graph.nodes:
            for symbol, path in (node.meta.get("unbacked_bindings") or {}).items():
                self.defining.append((node, symbol, path))
        self.symbols = [symbol for _, symbol, _ in self.defining]
        needed = set()
        stack = [node for node, _, _ in self.defining]
        while stack:
            node = stack.pop()
            if node not in needed:
                needed.add(node)
                stack.extend(node.all_input_nodes)
        self.nodes = [n for n in gm.graph.nodes if n in needed]
        self.placeholders = {n: i for i, n in enumerate(n for n in gm.graph.nodes if n.op == "placeholder")}
        env = _shape_env([n.meta.get("val") for n in gm.graph.nodes]) if self.symbols else None
        # Symbols the shape environment renamed (u8 -> u0): the metas speak of the new names.
        self.renames = {old: new for old, new in (env.replacements if env else {}).items() if isinstance(new, sympy.Symbol)}

    def __call__(self, args):
        """The data-dependent sizes of this call, in `symbols` order."""
        values = {}
        with torch.no_grad():
            for node in self.nodes:
                if node.op == "placeholder":
                    values[node] = args[self.placeholders[node]]
                    continue
                call_args, call_kwargs = torch.fx.node.map_arg((node.args, node.kwargs), lambda n: values[n])
                values[node] = node.target(*call_args, **call_kwargs)
        return tuple(int(pytree.key_get(values[node], path)) for node, _, path in self.defining)

    def complete(self, bindings):
        """`bindings` plus the renamed symbols' values."""
        for old, new in self.renames.items():
            if old in bindings and new not in bindings:
                bindings[new] = bindings[old]
        return bindings

    def describe(self):
        return {str(symbol): f"data-dependent: {path_text(path)} of node '{node.name}' ({node.target})"
                for node, symbol, path in self.defining}


def path_text(path):
    return "value" if not path else "".join(str(k) for k in path)


def _shape_env(vals):
    for val in vals:
        if isinstance(val, SYM_TYPES):
            return val.node.shape_env
        if isinstance(val, torch.Tensor):
            for d in (*val.shape, *val.stride()):
                if isinstance(d, torch.SymInt):
                    return d.node.shape_env
    return None


def _free_symbols(val):
    if isinstance(val, SYM_TYPES):
        return set(val.node.expr.free_symbols)
    out = set()
    for d in (*val.shape, *val.stride(), val.storage_offset()):
        if isinstance(d, torch.SymInt):
            out |= d.node.expr.free_symbols
    return out


def spell_bindings(bindings):
    return ", ".join(f"{k}={v}" for k, v in sorted(bindings.items(), key=lambda kv: str(kv[0])))


class SizeEvaluator:
    """Values of symbolic sizes under one binding (symbol -> int), each expression evaluated once."""

    def __init__(self, bindings):
        self.bindings = bindings
        self._memo = {}

    def __call__(self, value):
        """A SymInt/SymFloat/SymBool's value (plain numbers pass through)."""
        if not isinstance(value, SYM_TYPES):
            return value
        expr = value.node.expr
        result = self._memo.get(expr)
        if result is None:
            result = self._memo[expr] = _evaluate(value, expr, self.bindings)
        return result

    def meta(self, value):
        """A meta value with every symbolic size replaced by its value: FakeTensors become
        meta-device tensors with the concrete shape, strides and dtype (a tenth of a FakeTensor's
        cost; converters read sizes and dtypes from metas, devices from their arguments); tuples
        and lists are mapped element-wise."""
        if isinstance(value, (tuple, list)):
            return type(value)(self.meta(v) for v in value)
        if isinstance(value, SYM_TYPES):
            return self(value)
        if isinstance(value, torch.Tensor) and is_symbolic(value):
            shape = [self(d) for d in value.shape]
            stride = [self(d) for d in value.stride()]
            return torch.empty_strided(shape, stride, dtype=value.dtype, device="meta")
        return value


def _evaluate(value, expr, bindings):
    result = sympy.sympify(expr.xreplace(bindings))
    if isinstance(value, torch.SymBool):
        return bool(result)
    if not result.is_number:
        raise DynamicShapeError(f"size {expr} still has free symbols {sorted(map(str, result.free_symbols))} "
                                f"for {spell_bindings(bindings)}")
    return float(result) if isinstance(value, torch.SymFloat) else int(result)
