"""The Dynamo entry: get_npu_backend() -> a torch.compile backend built on AOT autograd."""
import atexit
import collections
import functools
import csv
import json
import logging
import operator
import os
import time

from functorch.compile import make_boxed_func
import torch
from torch._dynamo.backends.common import aot_autograd

from torchair_ge import _C
from torchair_ge.concrete_graph import ConcreteGraph
from torchair_ge.direct_call import DirectCall, aot_wrapper_reasons
from torchair_ge.dynamic_graph import DynamicGraph
from torchair_ge.configs.compiler_config import CompilerConfig
from torchair_ge.decompositions import default_decompositions
from torchair_ge.engine import default_session, next_graph_id
from torchair_ge.fx2ge.interpreter import convert_fx_graph
from torchair_ge.fx2ge.size_template import derive_template, optimize_template
from torchair_ge.fx2ge.symbolic import SymbolicSignature, graph_is_symbolic
from torchair_ge.inference import gear_combinations, gear_symbols
from torchair_ge.input_overlap import refuse_partial_overlaps
from torchair_ge.patterns import apply_replacements

logger = logging.getLogger("torchair_ge")


class GeCompiler:
    """Compiles one ATen-level FX graph into an engine graph and returns it as a callable.
    `reports` holds one dict per compiled graph (sizes, memory, compile time)."""

    def __init__(self, config):
        self.config = config
        self.reports = []
        self.graphs = []  # what each report's graph became (ConcreteGraph, or DynamicGraph for symbolic ones)
        self.captured = None  # a list to collect (gm, converted, compiled graph) per graph: accuracy compare
        self.real_inputs = None  # Dynamo's real example inputs of the graph being compiled (set by the backend)
        self.gears = {}  # symbol -> gears (inference.set_dim_gears) of the graph being compiled (set by the backend)
        self.keep_model = False  # also keep each graph as a model file (ConcreteGraph.model_bytes): cache_compile
        # (compiled graph, its AOT metadata, its number of inputs) of the last inference graph: what
        # the backend needs to call it without AOT autograd's runtime wrapper (direct_call.py)
        self.last_inference = None

    def _frozen_inputs(self, gm, inference):
        """FX input number -> real tensor for the parameters and buffers that become constants
        (experimental_config.frozen_parameter): AOT autograd's static inputs that the graph does
        not write to, in inference graphs only."""
        if not (self.config.experimental_config.frozen_parameter and inference and self.real_inputs):
            return {}
        context = torch._guards.TracingContext.try_get()
        static = getattr(getattr(context, "fw_metadata", None), "static_input_indices", None) or []
        placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
        if len(placeholders) != len(self.real_inputs):
            logger.warning("frozen_parameter: the graph's inputs do not line up with Dynamo's; nothing is frozen")
            return {}
        written = {n.args[0] for n in gm.graph.nodes
                   if n.op == "call_function" and n.args and isinstance(n.args[0], torch.fx.Node)
                   and n.args[0].op == "placeholder" and getattr(n.target, "_schema", None) is not None
                   and n.target._schema.is_mutable}
        return {i: self.real_inputs[i] for i in static
                if isinstance(self.real_inputs[i], torch.Tensor) and placeholders[i] not in written}

    def __call__(self, gm, example_inputs, inference=False):
        if self.config.debug.run_eagerly:
            logger.warning("debug.run_eagerly: the FX graph runs in eager PyTorch, not in the engine")
            return make_boxed_func(gm.forward)
        start = time.perf_counter()
        fx_patterns = apply_replacements(gm, example_inputs)
        frozen = self._frozen_inputs(gm, inference)
        if not graph_is_symbolic(gm):
            compiled, report = self._compile_instance(gm, frozen, None, start)
        else:
            signature = SymbolicSignature(gm)
            gears = None
            if any(s in self.gears for s in signature.symbols):
                gears = gear_combinations(signature.symbols, self.gears,
                                          self.config.inference_config.dynamic_gears_merge_policy)
            inference_config = self.config.inference_config
            # a data dump is of engine runs: with one on, every set of sizes compiles
            amortize = inference_config.new_shape_policy == "amortize" and self.config.debug.data_dump.type is None
            run_eagerly = make_boxed_func(gm.forward) if amortize else None
            compiled = DynamicGraph(signature, functools.partial(self._compile_instance, gm, frozen),
                                    inference_config.max_shape_instances, gears,
                                    functools.partial(self._size_template, gm, frozen, signature), run_eagerly)
            report = compiled.first_instance(signature.hints, start)
        report["fx_patterns"] = fx_patterns
        if inference:
            context = torch._guards.TracingContext.try_get()
            placeholders = sum(1 for n in gm.graph.nodes if n.op == "placeholder")
            self.last_inference = (compiled, getattr(context, "fw_metadata", None), placeholders)
        self.reports.append(report)
        self.graphs.append(compiled)
        if "deferred" not in report:
            self._write_statistics(gm, compiled, report)
        return compiled

    def _size_template(self, gm, frozen, signature):
        """The graph's size template (fx2ge/size_template.py): one conversion for every set of sizes."""
        def convert(bindings):
            return convert_fx_graph(gm, name="size_template", frozen=frozen, bindings=bindings)
        default_session()  # the engine optimizes the template: initialized before the first instance
        return optimize_template(derive_template(gm, signature, convert), self._instance_options())

    def _instance_options(self, template=None):
        """The engine options of a symbolic graph's instances: they share one generated-kernel
        library, and those from a size template schedule in the order the template's first
        instance chose when the strategy is MemoryAware (the instances differ only in sizes, so
        the order that planned the smallest arena there is kept instead of planning all four
        again: ~60% of the memory stage of each instance). The rule is the engine's
        (OptionsForLaterInstance, compiler/schedule.h), which model files' instances follow too."""
        options = self.config.ge_options()
        options["ge.kernelRunTimeSizes"] = "1"
        if template is not None and template.schedule:
            options = _C.options_for_later_instance(options, template.schedule)
        return options

    def _compile_instance(self, gm, frozen, bindings, start=None, template=None):
        """One engine graph of `gm` (for the sizes in `bindings` when it is symbolic, instantiated
        from `template` when there is one): the callable and its report."""
        start = start or time.perf_counter()
        graph_id = next_graph_id()
        if template is not None:
            converted = template.instantiate(bindings, name=f"graph_{graph_id}")
        else:
            converted = convert_fx_graph(gm, name=f"graph_{graph_id}", frozen=frozen, bindings=bindings)
        convert_ms = (time.perf_counter() - start) * 1e3
        ir_ops = collections.Counter(converted.graph.node_types())  # before the session takes the graph
        session = default_session()
        options = self.config.ge_options() if bindings is None else self._instance_options(template)
        if converted.optimized:
            session.add_optimized_graph(graph_id, converted.graph, options)
        else:
            session.add_graph(graph_id, converted.graph, options)
        decided = len(_C.cpu_kernel_choices())
        model_bytes = None
        if self.keep_model and bindings is None:
            model_bytes = session.compile_graph_to_model(graph_id)
        else:
            session.compile_graph(graph_id)
        kernel_choices = _C.cpu_kernel_choices()[decided:]  # products timed for this graph (MKL or oneDNN)
        profiling_path = self.config.profiling.path if self.config.profiling.enable else None
        compiled = ConcreteGraph(session, graph_id, converted, profiling_path, frozen)
        compiled.model_bytes = model_bytes
        if template is not None and template.schedule is None:
            template.schedule = compiled.summary["schedule"]
        if self.captured is not None:
            compiled.recorded_inputs = []
            self.captured.append((gm, converted, compiled))
        report = _report(graph_id, converted, ir_ops, compiled.summary, frozen, convert_ms, start)
        report["kernel_choices"] = kernel_choices
        return compiled, report

    def _write_statistics(self, gm, compiled, report):
        graph_id, summary = report["graph_id"], compiled.summary
        stat_mode = self.config.ge_config.export_compile_stat
        if stat_mode == "2":
            path = write_compile_stat(report, summary, self.config.ge_config.compile_stat_path)
            logger.info("graph %d: compile statistics in %s", graph_id, path)
        elif stat_mode == "1":
            _write_at_exit(report, summary, self.config.ge_config.compile_stat_path)
        if self.config.debug.fx_summary.type == "csv":
            write_fx_summary(gm, report, os.path.join(self.config.debug.fx_summary.path,
                                                      f"fx_summary_graph_{graph_id}.csv"))
        logger.info("compiled graph %d: %d FX nodes -> %d tasks, arena %d bytes, %.1f ms%s", graph_id,
                    report["fx_nodes"], report["tasks"], report["arena_bytes"], report["compile_ms"],
                    f"; symbolic: {report['symbolic']}" if report.get("symbolic") else "")
        if report["fallback_ops"]:
            logger.info("graph %d: %d of %d kernel nodes run on the host-fallback engine: %s", graph_id,
                        report["fallback_nodes"], report["tasks"],
                        ", ".join(f"{op} x{n}" for op, n in sorted(report["fallback_ops"].items())))


def _report(graph_id, converted, ir_ops, summary, frozen, convert_ms, start):
    """What one compiled engine graph became (backend.compiler.reports, compile statistics)."""
    return {
        "graph_id": graph_id,
        "fx_nodes": converted.fx_nodes,
        "ir_nodes_before": summary["stages"][0]["nodes_before"],
        "ir_nodes_after": summary["stages"][-1]["nodes_after"],
        "passes_fired": {p["name"]: p["nodes_before"] - p["nodes_after"] for p in summary["passes"] if p["changed"]},
        "tasks": summary["task_num"],
        "streams": summary["stream_num"],
        "autofuse": summary["autofuse"],
        "arena_bytes": summary["feature_memory_size"],
        "arena_lower_bound": summary["arena_lower_bound"],
        "arena_no_reuse": summary["arena_no_reuse"],
        "view_values": summary["view_values"],
        "inplace_values": summary["inplace_values"],
        "updates_in_input": summary["updates_in_input"],
        "workspace_bytes": summary["workspace_bytes"],
        "const_bytes": summary["const_memory_size"],
        "native_nodes": summary["engines"].get("native", 0),
        "fallback_nodes": summary["engines"].get("host_fallback", 0),
        "fallback_ops": dict(converted.fallback_ops),
        "ir_ops": dict(ir_ops),
        "mutated_inputs": list(converted.mutated_inputs),
        "frozen_inputs": len(frozen),
        "convert_ms": convert_ms,
        "compile_ms": (time.perf_counter() - start) * 1e3,
    }


def write_fx_summary(gm, report, path):
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
            fallback = report["fallback_ops"].get(op, 0)
            engine = "host_fallback" if fallback == count else "native" if not fallback else "mixed"
            writer.writerow([op, engine, count, fallback])


_AT_EXIT = []  # (report, summary, directory) of graphs whose statistics are written when the process exits


def _write_pending_compile_stats():
    while _AT_EXIT:
        write_compile_stat(*_AT_EXIT.pop(0))


def _write_at_exit(report, summary, directory):
    if not _AT_EXIT:
        atexit.register(_write_pending_compile_stats)
    _AT_EXIT.append((report, summary, directory))


def write_compile_stat(report, summary, directory):
    """compile_stat_graph_<id>_pid<pid>.json: per-stage time and node counts, engines, memory."""
    arena, bound = report["arena_bytes"], report["arena_lower_bound"]
    stat = {
        "graph_id": report["graph_id"],
        "pid": os.getpid(),
        "fx_nodes": report["fx_nodes"],
        "stages": [{"name": "convert", "ms": report["convert_ms"], "nodes_before": report["fx_nodes"],
                    "nodes_after": report["ir_nodes_before"]}]
                  + [{"name": st["name"], "ms": st["ms"], "nodes_before": st["nodes_before"], "nodes_after": st["nodes_after"],
                      "nodes_removed": st["nodes_before"] - st["nodes_after"]} for st in summary["stages"]],
        "passes": [{"stage": p["stage"], "name": p["name"], "ms": p["ms"], "nodes_before": p["nodes_before"],
                    "nodes_after": p["nodes_after"], "nodes_removed": p["nodes_before"] - p["nodes_after"], "runs": p["runs"],
                    "changed": p["changed"]} for p in summary["passes"]],
        "compile_ms": report["compile_ms"],
        "tasks": report["tasks"],
        "engines": summary["engines"],
        "fused_groups": summary["fused_groups"],
        "autofuse": summary["autofuse"],
        "fallback_ops": report["fallback_ops"],
        "ir_ops": report["ir_ops"],
        "symbolic": report.get("symbolic"),
        "gears": report.get("gears"),
        "shape_instances": report.get("shape_instances"),
        "memory": {"arena_bytes": arena, "arena_lower_bound": bound, "arena_no_reuse": report["arena_no_reuse"],
                   "view_values": report["view_values"], "inplace_values": report["inplace_values"],
                   "updates_in_input": report["updates_in_input"],
                   "workspace_bytes": report["workspace_bytes"],
                   "arena_over_lower_bound": arena / bound if bound else None, "const_bytes": report["const_bytes"]},
    }
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, f"compile_stat_graph_{report['graph_id']}_pid{os.getpid()}.json")
    with open(path, "w") as f:
        json.dump(stat, f, indent=1)
    return path


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
    # keep_inference_input_mutations (default): mutations of inputs (KV caches, buffers) stay in the
    # graph as copy_ nodes, so the engine writes the caller's tensors itself (see fx2ge/inplace.py).
    keep_mutations = compiler.config.experimental_config.keep_inference_input_mutations
    aot_backend = aot_autograd(fw_compiler=compiler, bw_compiler=compiler,
                               inference_compiler=functools.partial(compiler, inference=True),
                               decompositions=decompositions, keep_inference_input_mutations=keep_mutations)

    def backend(gm, example_inputs):
        compiler.real_inputs = example_inputs  # Dynamo's real tensors: what frozen_parameter freezes
        compiler.gears = gear_symbols(gm, example_inputs)
        compiler.last_inference = None
        autocast = torch._C._is_any_autocast_enabled()
        try:
            compiled = aot_backend(gm, example_inputs)
            if compiler.last_inference is not None:  # an inference graph the engine runs (not run_eagerly)
                compiled = _direct_if_exact(compiler, compiled, gm, example_inputs, autocast)
            return refuse_partial_overlaps(compiled, gm)
        finally:
            compiler.real_inputs = None
            compiler.gears = {}
            compiler.last_inference = None

    if compiler.config.experimental_config.graph_cache:
        from torchair_ge.graph_cache import cached_backend
        backend = cached_backend(compiler, decompositions, backend)
    backend.compiler = compiler  # backend.compiler.reports: what each compiled graph became
    return backend


def _direct_if_exact(compiler, aot_compiled, dynamo_gm, example_inputs, autocast):
    """The inference graph just compiled, called without AOT autograd's runtime wrapper when that
    wrapper would do nothing for it (direct_call.py); AOT's callable otherwise. Sizes a dynamic
    graph rents (new_shape_policy "amortize") then run Dynamo's graph `dynamo_gm`."""
    graph, meta, graph_inputs = compiler.last_inference
    reasons = aot_wrapper_reasons(meta, graph_inputs, example_inputs, autocast)
    compiler.reports[-1]["aot_wrapper"] = reasons  # the inference graph's report, appended last
    if reasons:
        logger.debug("graph %s keeps AOT autograd's runtime wrapper: %s", compiler.reports[-1]["graph_id"],
                     "; ".join(reasons))
        return aot_compiled
    if isinstance(graph, DynamicGraph):
        graph.rent_on(dynamo_gm.forward)
    return DirectCall.from_aot(graph, meta, aot_compiled)


def default_backend(gm, example_inputs):
    """The backend registered under the name "torchair_ge" (torch.compile(m, backend="torchair_ge"))."""
    return get_npu_backend()(gm, example_inputs)
