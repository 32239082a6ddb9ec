"""Convert a graph with symbolic sizes once, then only instantiate it per set of sizes.

Converters work on concrete sizes (docs/converters.md), so the graph for the sizes of a call
is found by building it at two other sizes and comparing (`_C.diff_sizes`): the two builds must
be the same graph except for integers (input dims, int attributes, elements of shape constants).
Each such integer is named with an expression of Dynamo's that gives both values (a size of some
FX value: `s0`, `4*s0`, `s0*s1`, or one scaled/offset: `s0-1`). A third build, compared with the
template instantiated for its sizes (`_C.check_same_graph`), decides whether the template is
trusted. A graph that a converter builds differently at other sizes (a constant whose shape
follows a size, a branch on a size) gets no template and keeps one conversion per set of sizes.

`_C.SizeTemplate.instantiate(values)` then gives the IR graph for a call's sizes without running
any converter: the engine substitutes the sizes and infers every node's output descs again.

The same comparison once more after the engine's optimizer (`optimize_template`) gives the
optimized template: an instance is then the optimized graph with its sizes written in, and its
compile starts after the optimizer (`Session.add_optimized_graph`), so the optimizer runs once
per graph instead of once per set of sizes."""
import logging
import time
from dataclasses import dataclass, replace

import sympy
import torch
from torch.utils._sympy import functions as sym_fns
from torch.utils._sympy.numbers import int_oo

from torchair_ge import _C
from torchair_ge.fx2ge.errors import ConversionError, DynamicShapeError
from torchair_ge.fx2ge.interpreter import OutputSpec, strided_view
from torchair_ge.fx2ge.symbolic import SYM_TYPES, SizeEvaluator, spell_bindings

logger = logging.getLogger("torchair_ge")

INT64_MAX = 2**63 - 1
# Offsets tried for the sizes of the extra builds, per symbol (distinct primes: a coincidence
# between two expressions at both sizes is then unlikely, and the third build checks it).
_PRIMES = (7, 11, 13, 3, 5, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71, 73, 79, 83, 89, 97)


class NoTemplate(Exception):
    """Why a graph gets no size template (the reason is reported, the graph still runs)."""


@dataclass
class SizeTemplate:
    """A trusted template: instantiate(bindings) gives the ConvertedGraph for those sizes."""
    engine: object  # _C.SizeTemplate
    converted: object  # the ConvertedGraph of one build (everything but the graph is size-free)
    gm: object
    symbols: list  # sympy symbols in key order
    equal: list  # (a, b): symbols the template needs equal
    derive_ms: float
    builds: tuple = ()  # keys of the extra builds B and C, a fourth key D, the engine's symbol tuples and guards
    optimized: object = None  # _C.SizeTemplate of the optimized graph (optimize_template), or None
    optimized_report: dict = None
    # The execution order the memory stage chose for the first instance (of the candidates
    # MemoryAware plans); later instances schedule with it instead of planning every order again.
    schedule: str = None

    def covers(self, bindings):
        """Whether the template holds for these sizes (its symbols that must be equal are)."""
        return all(bindings[a] == bindings[b] for a, b in self.equal)

    def instantiate(self, bindings, name=""):
        """The ConvertedGraph for these sizes; its graph is the optimized one when the template
        has been optimized (`converted.optimized`: compile it with Session.add_optimized_graph)."""
        values = [int(bindings[s]) for s in self.symbols]
        engine = self.optimized or self.engine
        graph = engine.instantiate(values, name)
        return replace(self.converted, graph=graph, outputs=_outputs_for(self.gm, self.converted.outputs, bindings),
                       optimized=self.optimized is not None)

    def describe(self):
        out = {"sites": self.engine.num_sites, "derive_ms": round(self.derive_ms, 1)}
        if self.equal:
            out["only_where"] = [f"{a} == {b}" for a, b in self.equal]
        if self.optimized_report is not None:
            out["optimized"] = self.optimized_report
        return out


def optimize_template(template, options):
    """Derives `template.optimized`: the graph optimized once by the engine, with sites. The
    engine optimizes the template's graph at the two extra builds' sizes (nothing computed from
    a size folded: SizeTemplate.optimize), the two optimized graphs must differ only in integers,
    each named by a size expression as for the conversion, and the result instantiated at a
    fourth set of sizes must equal the graph optimized there. Each instance then names every
    value's shape from the sites (the engine's symbolic shape inference, TensorDesc::symbolic:
    generated kernels keep the dims that never vary as literals). (Not at Dynamo's example sizes:
    symbols that are equal there, as a KV cache's lengths, let the optimizer merge values that
    are equal only then.) Otherwise the reason is reported and every instance is optimized on
    its own, as before."""
    start = time.perf_counter()
    key_b, key_c, key_d, symbols, guards = template.builds
    if key_d is None:
        template.optimized_report = {"none": "no fourth set of sizes satisfies Dynamo's guards to check it at"}
        return template
    values = [[int(key[s]) for s in template.symbols] for key in (key_b, key_c, key_d)]
    try:
        graph_b, graph_c, graph_d = (template.engine.optimize(v, options) for v in values)
        differences = _C.diff_sizes(graph_b, graph_c)
        fit = _Fitter(_candidate_sizes(template.gm), key_b, key_c)
        sites = [_site(d, fit) for d in differences]
        optimized = _C.SizeTemplate(graph_b, symbols, sites, guards)
        at_d = optimized.instantiate(values[2])
        _C.check_same_graph(at_d, graph_d)
    except (NoTemplate, _C.GeError) as e:
        template.optimized_report = {"none": f"the graph optimizes differently at other sizes: {e}"}
        return template
    template.optimized = optimized
    template.optimized_report = {"sites": optimized.num_sites, "symbolic_shapes": _C.symbolic_values(at_d),
                                 "derive_ms": round((time.perf_counter() - start) * 1e3, 1)}
    return template


def derive_template(gm, signature, convert, guards=()):
    """A trusted SizeTemplate for `gm`, or raises NoTemplate. `convert(bindings)` builds the
    ConvertedGraph for some sizes; `guards` (engine spelling) are conditions the engine checks
    before instantiating (dynamo_guards).

    The extra builds move every symbol by its own offset. When the graph cannot be built so
    (two symbols that Dynamo kept apart but the model needs equal, as a KV cache's key and value
    lengths), symbols equal in Dynamo's example move together, and the template then covers only
    sizes where they are equal (its guards; other sizes are converted as before)."""
    start = time.perf_counter()
    if signature.data_dependent.symbols:
        raise NoTemplate("data-dependent sizes are known only when a call runs")
    if set(signature.hints) != set(signature.symbols):
        raise NoTemplate("Dynamo gave no example value for every symbol")
    groups = _equal_groups(signature)
    try:
        engine, build, equal, builds = _derive(gm, signature, convert, None, guards)
    except _BuildFailed as e:
        if not groups:
            raise NoTemplate(str(e)) from None
        engine, build, equal, builds = _derive(gm, signature, convert, groups, guards)
    return SizeTemplate(engine, build, gm, list(signature.symbols), equal, (time.perf_counter() - start) * 1e3, builds)


class _BuildFailed(NoTemplate):
    """The frontend could not build the graph at the extra sizes."""


def _derive(gm, signature, convert, groups, extra_guards):
    hints = signature.hints
    key_b = _other_sizes(signature, hints, groups)
    key_c = _other_sizes(signature, hints, groups, avoid=[key_b])
    build_a, build_b, build_c = convert(hints), _build(convert, key_b), _build(convert, key_c)
    try:
        differences = _C.diff_sizes(build_a.graph, build_b.graph)
    except _C.GeError as e:
        raise NoTemplate(f"the graph is built differently at other sizes: {e}") from None
    fit = _Fitter(_candidate_sizes(gm), hints, key_b)
    sites = [_site(d, fit) for d in differences]
    positions = build_a.input_positions or list(range(build_a.num_inputs))  # FX input of each engine input
    symbols = [_symbol_def(signature, s, positions) for s in signature.symbols]
    equal = [(group[0], other) for group in groups or [] for other in group[1:]]
    guards = [f"{a.name}=={b.name}" for a, b in equal] + list(extra_guards)
    engine = _C.SizeTemplate(build_b.graph, symbols, sites, guards)
    try:
        _C.check_same_graph(engine.instantiate([key_c[s] for s in signature.symbols]), build_c.graph)
    except _C.GeError as e:
        raise NoTemplate(f"the template does not reproduce the build at {spell_bindings(key_c)}: {e}") from None
    try:  # sizes for checking the optimized template (optimize_template)
        key_d = _other_sizes(signature, hints, groups, avoid=[key_b, key_c])
    except NoTemplate:
        key_d = None
    return engine, build_b, equal, (key_b, key_c, key_d, symbols, guards)


def _build(convert, key):
    try:
        return convert(key)
    except (ConversionError, DynamicShapeError, _C.GeError) as e:
        raise _BuildFailed(f"the graph cannot be built at {spell_bindings(key)}: {e}") from None


def _equal_groups(signature):
    """Symbols with equal example values, in groups of two or more (None when there are none)."""
    by_value = {}
    for s in signature.symbols:
        by_value.setdefault(signature.hints[s], []).append(s)
    groups = [g for g in by_value.values() if len(g) > 1]
    return groups or None


def _other_sizes(signature, hints, groups, avoid=()):
    """Sizes for an extra build: each symbol (or group of symbols) moved by its own prime, inside
    its range and Dynamo's guards (which may leave only a narrow band of sizes), never equal to
    a size of the keys in `avoid` (the other extra builds). When a guard cannot be decided here, the third
    build still checks."""
    guards = _guards(signature)
    slot = {}
    for group in groups or []:
        for s in group:
            slot[s] = group[0]
    movers = list(dict.fromkeys(slot.get(s, s) for s in signature.symbols))
    candidates = ((scale, start, sign) for scale in (1, 2, 4, 8)  # even steps: divisibility guards
                  for start in range(len(_PRIMES) - len(movers)) for sign in (1, -1))
    for scale, start, sign in candidates:
        key = {}
        for s in signature.symbols:
            step = sign * scale * _PRIMES[start + movers.index(slot.get(s, s))]
            key[s] = _in_range(signature.ranges.get(s), hints[s], step)
        if any(key[s] == other[s] for other in avoid for s in key):
            continue
        if all(_holds(g, key) for g in guards):
            return key
    raise NoTemplate("no other sizes satisfy the guards Dynamo put on the graph's symbols")


def _in_range(r, value, step):
    if r is None:
        return value + step
    lower, upper = _bound(r.lower, -INT64_MAX), _bound(r.upper, INT64_MAX)
    for candidate in (value + step, value - step, value * 2, value + 1, value - 1):
        if lower <= candidate <= upper and candidate != value:
            return candidate
    raise NoTemplate(f"the range [{r.lower}, {r.upper}] leaves no other size")


_RELATIONS = {sympy.Eq: "==", sympy.Ne: "!=", sympy.StrictLessThan: "<", sympy.LessThan: "<=",
              sympy.StrictGreaterThan: ">", sympy.GreaterThan: ">="}


def dynamo_guards(signature):
    """Dynamo's guards on the graph's symbols in the engine's spelling, for a model file (in a
    process, Dynamo checks them itself). NoTemplate for a guard the engine cannot check."""
    known = set(signature.symbols)
    out = []
    for expr in _guards(signature):
        parts = expr.args if isinstance(expr, sympy.And) else (expr,)
        for part in parts:
            if not part.free_symbols & known:
                continue  # about other values Dynamo traced (a float it specialized): fixed in the export
            relation = _RELATIONS.get(type(part))
            if relation is None or not part.free_symbols <= known:
                raise NoTemplate(f"Dynamo's guard {part} cannot be checked by the engine")
            out.append(f"{_spell(part.lhs)}{relation}{_spell(part.rhs)}")
    return list(dict.fromkeys(out))


def _guards(signature):
    env = None
    for val in signature.vals:
        if isinstance(val, SYM_TYPES):
            env = val.node.shape_env
        elif isinstance(val, torch.Tensor):
            env = next((d.node.shape_env for d in val.shape if isinstance(d, torch.SymInt)), env)
        if env is not None:
            break
    return [g.expr for g in env.guards] if env is not None else []


def _holds(expr, key):
    try:
        value = expr.xreplace(key)
        return bool(value) if value.is_Boolean or value.is_number else True
    except (TypeError, AttributeError):
        return True


def _candidate_sizes(gm):
    """Every distinct size expression of the FX graph (sizes, strides, element counts, SymInt
    values), simplest first."""
    exprs = set()
    for node in gm.graph.nodes:
        val = node.meta.get("val")
        for v in val if isinstance(val, (tuple, list)) else (val,):
            if isinstance(v, torch.SymInt):
                exprs.add(v.node.expr)
            elif isinstance(v, torch.Tensor):
                sizes = [d.node.expr if isinstance(d, torch.SymInt) else sympy.Integer(d) for d in v.shape]
                exprs.update(d.node.expr for d in (*v.shape, *v.stride()) if isinstance(d, torch.SymInt))
                exprs.add(sympy.Mul(*sizes))
                for k in range(1, len(sizes)):  # leading and trailing dims flattened together
                    exprs.update((sympy.Mul(*sizes[:k]), sympy.Mul(*sizes[k:])))
    exprs = [e for e in exprs if e.free_symbols]
    return sorted(exprs, key=lambda e: (len(e.free_symbols), sympy.count_ops(e), str(e)))


def _site(difference, fit):
    """(node, kind, attr, index, expression text) for one integer that differs between the builds."""
    node, kind, attr, index, a, b = difference
    return node, kind, attr, index, _spell(fit(a, b, f"{node} {kind} {attr}[{index}]"))


class _Fitter:
    """Names integers that differ between the builds at sizes `key_a` and `key_b`: the simplest
    expression e with e(A) = a and e(B) = b -- a candidate, else the first candidate that a scale
    and offset (k*e + c) or a floor division (e // k) fits. Candidates are evaluated once and
    every (a, b) pair fitted once (a graph repeats a few sizes many times)."""

    def __init__(self, candidates, key_a, key_b):
        known = set(key_a)
        self.key_a, self.key_b = key_a, key_b
        self.values = [(e, int(e.xreplace(key_a)), int(e.xreplace(key_b))) for e in candidates if e.free_symbols <= known]
        self._fitted = {}

    def __call__(self, a, b, where):
        if (a, b) not in self._fitted:
            self._fitted[(a, b)] = self._fit(a, b)
        expr = self._fitted[(a, b)]
        if expr is None:
            raise NoTemplate(f"{where} is {a} at {spell_bindings(self.key_a)} and {b} at "
                             f"{spell_bindings(self.key_b)}, which no size of the FX graph explains")
        return expr

    def _fit(self, a, b):
        for e, x, y in self.values:
            if (x, y) == (a, b):
                return e
        for e, x, y in self.values:
            if x == y:
                continue
            if (b - a) % (y - x) == 0:
                k = (b - a) // (y - x)
                return k * e + (a - k * x)
            if a > 0 and x % a == 0 and x // a > 1 and y // (x // a) == b:
                return sym_fns.FloorDiv(e, x // a)
        return None


def _spell(expr):
    """The engine's spelling of a sympy size expression (ge/symbolic/sym_expr.h), fully
    parenthesized; NoTemplate for a function the engine does not have."""
    if expr.is_Integer:
        return str(int(expr)) if expr >= 0 else f"(-{-int(expr)})"
    if expr.is_Symbol:
        return expr.name
    args = [_spell(a) for a in expr.args]
    if isinstance(expr, sympy.Add):
        return "(" + "+".join(args) + ")"
    if isinstance(expr, sympy.Mul) and all(a.is_Integer or not a.is_Rational for a in expr.args):
        return "(" + "*".join(args) + ")"
    if isinstance(expr, sympy.Pow) and expr.exp.is_Integer and 0 < int(expr.exp) <= 8:
        return "(" + "*".join([_spell(expr.base)] * int(expr.exp)) + ")"
    if isinstance(expr, sym_fns.FloorDiv):
        return f"({args[0]}//{args[1]})"
    if isinstance(expr, (sym_fns.Mod, sym_fns.PythonMod, sympy.Mod)):
        return f"({args[0]}%{args[1]})"
    if isinstance(expr, (sympy.Max, sym_fns.Max, sympy.Min, sym_fns.Min)):
        name = "max" if isinstance(expr, (sympy.Max, sym_fns.Max)) else "min"
        out = args[0]
        for a in args[1:]:
            out = f"{name}({out}, {a})"
        return out
    raise NoTemplate(f"size expression {expr} uses {type(expr).__name__}, which the engine does not evaluate")


def _symbol_def(signature, symbol, positions):
    """(name, engine input, dim, min, max) of one symbol."""
    source = next(s for s in signature.sources if s.symbol == symbol)
    engine_input, dim = -1, -1
    if source.dim is not None and source.input in positions:
        engine_input, dim = positions.index(source.input), source.dim
    r = signature.ranges.get(symbol)
    lower = _bound(r.lower, 0) if r is not None else 0
    upper = _bound(r.upper, INT64_MAX) if r is not None else INT64_MAX
    return symbol.name, engine_input, dim, lower, upper


def _bound(value, infinite):
    """A range bound as an int64 (`infinite` for Dynamo's int_oo / sympy's oo)."""
    if value in (sympy.oo, -sympy.oo, int_oo, -int_oo):
        return infinite
    return max(-INT64_MAX, min(int(value), INT64_MAX))


def _outputs_for(gm, specs, bindings):
    """The OutputSpecs of one build with the sizes they carry ("value": a size the graph returns;
    "view": a view of an input) evaluated for `bindings`."""
    output = next(n for n in reversed(gm.graph.nodes) if n.op == "output")
    (results,) = output.args
    items = results if isinstance(results, (tuple, list)) else (results,)
    sizes = SizeEvaluator(bindings)
    out = []
    for spec, item in zip(specs, items):
        if spec.kind == "value" and isinstance(item, torch.fx.Node):
            spec = OutputSpec("value", value=sizes(item.meta["val"]))
        elif spec.kind == "view":
            spec = OutputSpec("view", spec.index, strided_view(item.meta["val"], sizes))
        out.append(spec)
    return out

