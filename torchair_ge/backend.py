"""The Dynamo entry: get_npu_backend() -> a torch.compile backend built on AOT autograd."""
import collections
import csv
import logging
import operator
import os
import time

from torch._dynamo.backends.common import aot_autograd

from torchair_ge.concrete_graph import ConcreteGraph
from torchair_ge.configs.compiler_config import CompilerConfig
from torchair_ge.decompositions import default_decompositions
from torchair_ge.engine import default_session, next_graph_id
from torchair_ge.fx2ge.interpreter import convert_fx_graph

logger = logging.getLogger("torchair_ge")


class GeCompiler:
    """Compiles one ATen-level FX graph into an engine graph and returns it as a callable.
    `reports` holds one dict per compiled graph (sizes, memory, compile time)."""

    def __init__(self, config):
        self.config = config
        self.reports = []

    def __call__(self, gm, example_inputs):
        start = time.perf_counter()
        graph_id = next_graph_id()
        converted = convert_fx_graph(gm, name=f"graph_{graph_id}")
        ir_ops = collections.Counter(converted.graph.node_types())
        session = default_session()
        session.add_graph(graph_id, converted.graph, self.config.ge_options())
        session.compile_graph(graph_id)
        compiled = ConcreteGraph(session, graph_id, converted)
        summary = compiled.summary
        report = {
            "graph_id": graph_id,
            "fx_nodes": converted.fx_nodes,
            "ir_nodes_before": summary["stages"][0]["nodes_before"],
            "ir_nodes_after": summary["stages"][-1]["nodes"],
            "tasks": summary["task_num"],
            "arena_bytes": summary["feature_memory_size"],
            "arena_lower_bound": summary["arena_lower_bound"],
            "const_bytes": summary["const_memory_size"],
            "native_nodes": summary["engines"].get("native", 0),
            "fallback_nodes": summary["engines"].get("host_fallback", 0),
            "fallback_ops": dict(converted.fallback_ops),
            "ir_ops": dict(ir_ops),
            "mutated_inputs": list(converted.mutated_inputs),
            "compile_ms": (time.perf_counter() - start) * 1e3,
        }
        self.reports.append(report)
        if self.config.debug.fx_summary.type == "csv":
            write_fx_summary(gm, converted, os.path.join(self.config.debug.fx_summary.path,
                                                          f"fx_summary_graph_{graph_id}.csv"))
        logger.info("compiled graph %d: %d FX nodes -> %d tasks, arena %d bytes, %.1f ms", graph_id,
                    report["fx_nodes"], report["tasks"], report["arena_bytes"], report["compile_ms"])
        if converted.fallback_ops:
            logger.info("graph %d: %d of %d kernel nodes run on the host-fallback engine: %s", graph_id,
                        report["fallback_nodes"], report["tasks"],
                        ", ".join(f"{op} x{n}" for op, n in sorted(converted.fallback_ops.items())))
        return compiled


def write_fx_summary(gm, converted, path):
    """One row per ATen op of the FX graph: how it runs (native / host_fallback) and how often."""
    counts = collections.Counter()
    for node in gm.graph.nodes:
        if node.op == "call_function" and node.target is not operator.getitem:
            counts[str(node.target)] += 1
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["op", "engine", "count", "fallback_count"])
        for op, count in sorted(counts.items()):
            fallback = converted.fallback_ops.get(op, 0)
            engine = "host_fallback" if fallback == count else "native" if not fallback else "mixed"
            writer.writerow([op, engine, count, fallback])


def get_compiler(compiler_config=None):
    """The FX -> engine compiler alone (for use as AOT autograd's fw/bw/inference compiler)."""
    return GeCompiler(compiler_config or CompilerConfig())


def get_npu_backend(*, compiler_config=None, custom_decompositions=None):
    """A torch.compile backend: `torch.compile(model, backend=get_npu_backend())`.

    AOT autograd functionalizes the graph and applies the decomposition table (ours, updated
    with `custom_decompositions`) before the engine compiler sees it."""
    if compiler_config is not None and not isinstance(compiler_config, CompilerConfig):
        raise TypeError(f"compiler_config must be a torchair_ge.CompilerConfig, got {type(compiler_config).__name__}")
    compiler = get_compiler(compiler_config)
    decompositions = default_decompositions()
    decompositions.update(custom_decompositions or {})
    # keep_inference_input_mutations: mutations of inputs (KV caches, buffers) stay in the graph
    # as copy_ nodes, so the engine writes the caller's tensors itself (see fx2ge/inplace.py).
    backend = aot_autograd(fw_compiler=compiler, bw_compiler=compiler, inference_compiler=compiler,
                           decompositions=decompositions, keep_inference_input_mutations=True)
    backend.compiler = compiler  # backend.compiler.reports: what each compiled graph became
    return backend


def default_backend(gm, example_inputs):
    """The backend registered under the name "torchair_ge" (torch.compile(m, backend="torchair_ge"))."""
    return get_npu_backend()(gm, example_inputs)
