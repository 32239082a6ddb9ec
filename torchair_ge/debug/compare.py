"""Accuracy compare: run a model eagerly and through the engine, and name the first FX node (in
topological order) whose graph output differs from eager beyond tolerance.

The graph side is the engine's data dump of one run (every task's outputs as .npy); the eager
side is the same ATen FX graph run by torch.fx.Interpreter on the same inputs. A wrong
converter, a wrong kernel or a wrong memory plan all show up as the first node that differs."""
import copy
import os
import re
import tempfile
from dataclasses import dataclass, field

import numpy as np
import torch
import torch.fx

from torchair_ge import _C


@dataclass
class NodeComparison:
    graph_id: int
    fx_node: str
    target: str
    ir_node: str      # "" when the value was not dumped
    ir_type: str
    shape: tuple
    dtype: str
    max_abs: float = 0.0
    max_rel: float = 0.0
    status: str = "ok"  # ok / mismatch / not dumped
    source: str = ""


@dataclass
class CompareReport:
    nodes: list = field(default_factory=list)  # NodeComparison per compared FX node output, in order
    outputs_match: bool = True  # the model's final outputs
    output_max_abs: float = 0.0
    dump_dir: str = ""

    @property
    def mismatches(self):
        return [n for n in self.nodes if n.status == "mismatch"]

    @property
    def first_mismatch(self):
        found = self.mismatches
        return found[0] if found else None

    def __str__(self):
        compared = [n for n in self.nodes if n.status != "not dumped"]
        head = (f"compared {len(compared)} FX node outputs ({len(self.nodes) - len(compared)} not dumped); "
                f"final outputs {'match' if self.outputs_match else 'DIFFER'} (max abs {self.output_max_abs:.3g})")
        first = self.first_mismatch
        if first is None:
            return head + "\nno node differs beyond tolerance"
        return (f"{head}\nfirst mismatch: graph {first.graph_id} FX node '{first.fx_node}' ({first.target}) -> "
                f"IR {first.ir_type} '{first.ir_node}', {first.dtype}{list(first.shape)}: max abs err "
                f"{first.max_abs:.4g}, max rel err {first.max_rel:.4g}\n  at {first.source or 'no source location'}\n"
                f"{len(self.mismatches)} node outputs differ in all")


def load_data_dump(step_dir):
    """{node name: [output 0, output 1, ...]} (numpy arrays) of one step directory of a data dump."""
    found = {}
    for name in os.listdir(step_dir):
        m = re.match(r"(.+)\.out(\d+)\.npy$", name)
        if m:
            found.setdefault(m.group(1), {})[int(m.group(2))] = np.load(os.path.join(step_dir, name))
    return {node: [outs[k] for k in sorted(outs)] for node, outs in found.items()}


def _errors(got, want, rtol, atol):
    """(max abs error, max rel error, whether any element is out of tolerance) of a dumped array
    against eager's tensor; integer and bool values must match exactly, NaN matches NaN."""
    exact = not want.is_floating_point()
    want = want.detach().to(torch.float64)
    got = torch.from_numpy(np.ascontiguousarray(got)).to(torch.float64)
    if not want.numel():
        return 0.0, 0.0, False
    close = torch.isclose(got, want, rtol=0 if exact else rtol, atol=0 if exact else atol, equal_nan=True)
    diff = (got - want).abs().nan_to_num(nan=float("inf"))
    diff[close & diff.isinf()] = 0  # NaN == NaN, inf == inf
    rel = diff / want.abs().clamp_min(1e-12)
    return float(diff.max()), float(rel.max()), not bool(close.all())


def _compare_graph(gm, converted, graph_id, inputs, step_dir, rtol, atol):
    from torchair_ge.fx2ge.interpreter import source_line

    dumped = load_data_dump(step_dir) if os.path.isdir(step_dir) else {}
    eager = {}

    class Recorder(torch.fx.Interpreter):
        def run_node(self, n):
            out = super().run_node(n)
            eager[n] = out
            return out

    with torch.no_grad():
        Recorder(gm).run(*[a.clone() if isinstance(a, torch.Tensor) else a for a in inputs])
    rows = []
    for node in gm.graph.nodes:
        if node.op != "call_function" or node.name not in converted.fx_values:
            continue
        values = eager[node] if isinstance(eager[node], (tuple, list)) else (eager[node],)
        for k, (value, ir) in enumerate(zip(values, converted.fx_values[node.name])):
            if not isinstance(value, torch.Tensor) or ir is None:
                continue
            ir_node, index = ir
            row = NodeComparison(graph_id, node.name + (f"[{k}]" if len(values) > 1 else ""), str(node.target), "",
                                 "", tuple(value.shape), str(value.dtype).replace("torch.", ""),
                                 source=source_line(node))
            outs = dumped.get(_C.safe_file_name(ir_node))  # the engine's own file naming
            if outs is None or index >= len(outs):
                row.status = "not dumped"  # a graph input/constant, or a value computed in place
            else:
                row.ir_node = ir_node
                row.max_abs, row.max_rel, bad = _errors(outs[index], value, rtol, atol)
                row.status = "mismatch" if bad else "ok"
            rows.append(row)
    return rows


def _ir_types(session, graph_id):
    """IR node name -> op type, from the compiled graph's text."""
    text = session.graph_text(graph_id)
    return dict(re.findall(r'op \{\n  name: "([^"]+)"\n  type: "([^"]+)"', text))


def compare_with_eager(model, *inputs, config=None, rtol=1e-3, atol=1e-3, dump_dir=None):
    """Runs `model(*inputs)` eagerly and compiled with torchair_ge (one run each, on copies of the
    model and inputs) and returns a CompareReport: `report.first_mismatch` names the first FX node
    whose graph output differs, with its IR op, shape, errors and source line; print(report) says
    it in words. `config` is copied and given a data dump into `dump_dir` (a temporary directory
    by default) and auto-fusion off (every op's output is compared)."""
    import torchair_ge
    from torchair_ge.configs import CompilerConfig

    config = copy.deepcopy(config) if config is not None else CompilerConfig()
    dump_dir = dump_dir or tempfile.mkdtemp(prefix="torchair_ge_compare_")
    config.debug.data_dump.type = "npy"
    config.debug.data_dump.path = dump_dir
    config.debug.data_dump.filter = None
    config.debug.run_eagerly = False
    # A fused kernel keeps its intermediates in registers: off, so that every op's output exists.
    config.experimental_config.enable_autofuse = False

    eager_model = copy.deepcopy(model)
    clone = lambda xs: [x.clone() if isinstance(x, torch.Tensor) else x for x in xs]  # noqa: E731
    with torch.no_grad():
        expected = eager_model(*clone(inputs))
    backend = torchair_ge.get_npu_backend(compiler_config=config)
    backend.compiler.captured = []  # each graph also keeps a copy of its first run's inputs

    torch._dynamo.reset()  # compile afresh, so every graph goes through this backend
    compiled = torch.compile(copy.deepcopy(model), backend=backend, dynamic=False)
    with torch.no_grad():
        got = compiled(*clone(inputs))
    report = CompareReport(dump_dir=dump_dir)
    flat_want = [t for t in torch.utils._pytree.tree_leaves(expected) if isinstance(t, torch.Tensor)]
    flat_got = [t for t in torch.utils._pytree.tree_leaves(got) if isinstance(t, torch.Tensor)]
    report.outputs_match = len(flat_want) == len(flat_got) and all(
        a.shape == b.shape and torch.allclose(a.float(), b.float(), rtol=rtol, atol=atol, equal_nan=True)
        for a, b in zip(flat_got, flat_want))
    report.output_max_abs = max([float((a.float() - b.float()).abs().max()) for a, b in zip(flat_got, flat_want)
                                 if a.shape == b.shape and a.numel()] or [0.0])
    session = torchair_ge.engine.default_session()
    for gm, converted, graph in backend.compiler.captured:
        step_dir = os.path.join(dump_dir, f"graph_{graph.graph_id}_pid{os.getpid()}", "step_000000")
        rows = _compare_graph(gm, converted, graph.graph_id, graph.recorded_inputs or [], step_dir, rtol, atol)
        types = _ir_types(session, graph.graph_id)
        for row in rows:
            row.ir_type = types.get(row.ir_node, "")
        report.nodes.extend(rows)
    return report
