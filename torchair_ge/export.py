"""dynamo_export (TorchAir's `torchair.dynamo_export`): trace a model with Dynamo, compile its
graph and write a model file that `ge_run` and `ge::LoadModel` run without Python.

    torchair_ge.dynamo_export(x, model=model, export_path="export_file", export_name="export")

writes into `export_path`:
    <export_name>.tgm          the model file (optimized graph, kernel IR, memory plan, tasks)
    <export_name>.tgm.weights  constants above 64 KiB, memory-mapped at load (when there are any)
    dynamo.pbtxt               the graph as converted from Dynamo's FX graph, readable text
    inputs/input_<k>.npy       the example inputs in the model's input order (for ge_run)

Parameters and buffers the graph does not write are frozen into the model as constants; buffers
it writes (a KV cache) stay inputs and are updated in place. With dynamic=True the model keeps
its symbolic sizes: the file holds the graph's size template and the runner compiles an
instance per set of input sizes. docs/export.md has the details."""
import copy
import dataclasses
import functools
import logging
import os

import numpy as np
import torch
from functorch.compile import make_boxed_func
from torch._dynamo.backends.common import aot_autograd

from torchair_ge import _C
from torchair_ge.backend import GeCompiler
from torchair_ge.configs.compiler_config import CompilerConfig
from torchair_ge.decompositions import default_decompositions
from torchair_ge.engine import default_session
from torchair_ge.fx2ge.interpreter import convert_fx_graph
from torchair_ge.fx2ge.size_template import NoTemplate, derive_template, dynamo_guards
from torchair_ge.fx2ge.symbolic import SymbolicSignature, graph_is_symbolic

logger = logging.getLogger("torchair_ge")


@dataclasses.dataclass
class ExportResult:
    """What dynamo_export wrote (TorchAir's function returns nothing; this is extra)."""
    model_path: str
    pbtxt_path: str
    input_names: list  # per model input: Dynamo's name of the argument or buffer
    input_paths: list  # the example inputs, .npy, in the model's input order
    report: dict  # tasks, kernels, arena_bytes, const_bytes, compile_ms


class _ExportCompiler(GeCompiler):
    """AOT autograd's inference compiler that writes the model file instead of running the graph."""

    def __init__(self, config, export_path, export_name):
        super().__init__(config)
        self.export_path, self.export_name = export_path, export_name
        self.dynamo_names = []  # placeholder names of Dynamo's graph (set by the backend)
        self.result = None

    def __call__(self, gm, example_inputs, inference=False):
        if not inference:
            raise RuntimeError("dynamo_export exports inference graphs: call it under torch.no_grad() or with a "
                               "model whose parameters do not require grad")
        if self.result is not None:
            raise RuntimeError("dynamo_export: the model traced into more than one graph")
        frozen = self._frozen_inputs(gm, inference)
        signature = SymbolicSignature(gm) if graph_is_symbolic(gm) else None
        bindings = signature.hints if signature is not None else None
        converted = convert_fx_graph(gm, name=self.export_name, frozen=frozen, bindings=bindings, output_views=False)
        _check_exportable(converted)
        positions = converted.input_positions or list(range(converted.num_inputs))
        names = [self.dynamo_names[p] if p < len(self.dynamo_names) else f"input{p}" for p in positions]
        os.makedirs(self.export_path, exist_ok=True)
        pbtxt_path = os.path.join(self.export_path, "dynamo.pbtxt")
        with open(pbtxt_path, "w") as f:
            f.write(converted.graph.to_text())
        input_paths = _write_inputs([self.real_inputs[p] for p in positions], os.path.join(self.export_path, "inputs"))
        model_path = os.path.join(self.export_path, f"{self.export_name}.tgm")
        outputs = [f"output{k}" for k in range(len(converted.outputs))]
        default_session()  # GEInitialize, once per process
        options = self.config.ge_options()
        if signature is None:
            report = _C.export_model(converted.graph, options, model_path, names, outputs)
        else:
            template = _size_template(gm, signature, frozen, self.export_name)
            options["ge.kernelRunTimeSizes"] = "1"  # one kernel library for every set of sizes
            report = template.engine.export([signature.hints[s] for s in signature.symbols], options, model_path,
                                            names, outputs)
            report["symbolic"] = signature.describe()
            report["size_sites"] = template.engine.num_sites
        self.result = ExportResult(model_path, pbtxt_path, names, input_paths, report)
        return make_boxed_func(gm.forward)  # the traced call completes in eager


def _size_template(gm, signature, frozen, name):
    """The graph's size template with Dynamo's guards, or a clear error: a model file with
    symbolic sizes is a size template (fx2ge/size_template.py)."""
    def convert(bindings):
        converted = convert_fx_graph(gm, name=name, frozen=frozen, bindings=bindings, output_views=False)
        _check_exportable(converted)
        return converted
    try:
        template = derive_template(gm, signature, convert, dynamo_guards(signature))
    except NoTemplate as e:
        raise ValueError(f"dynamo_export(dynamic=True): the graph cannot be exported with symbolic sizes: {e}; "
                         "export with dynamic=False") from None
    return template



def _check_exportable(converted):
    if converted.input_layouts:
        raise ValueError("dynamo_export: some inputs are not contiguous (the graph would read them permuted); "
                         "pass contiguous example inputs")
    if converted.fallback_ops:
        ops = ", ".join(sorted(converted.fallback_ops))
        logger.warning(
            "dynamo_export: %s run on the host-fallback engine (through libtorch's dispatcher); a C++ runner "
            "needs these ATen operators, custom operators need their library loaded", ops)
    for k, spec in enumerate(converted.outputs):
        if spec.kind != "graph" or spec.index != k:
            raise ValueError(f"dynamo_export: output {k} is not computed by the graph ({spec.kind}); a model file "
                             "returns computed outputs only")


def _write_inputs(tensors, directory):
    """Before the traced call runs (it may update buffers in place): the inputs the model saw."""
    os.makedirs(directory, exist_ok=True)
    paths = []
    with torch._subclasses.fake_tensor.unset_fake_temporarily():  # AOT compiles under a fake mode
        for k, t in enumerate(tensors):
            path = os.path.join(directory, f"input_{k}.npy")
            np.save(path, t.detach().contiguous().numpy())
            paths.append(path)
    return paths


def dynamo_export(*args, model, export_path="export_file", export_name="export", dynamic=False, config=None,
                  **kwargs):
    """Traces `model(*args, **kwargs)` with Dynamo (one graph, fullgraph) and writes the model file
    and dynamo.pbtxt into `export_path`. Returns an ExportResult."""
    if not callable(model):
        raise TypeError(f"dynamo_export: model must be callable, got {type(model).__name__}")
    if config is not None and not isinstance(config, CompilerConfig):
        raise TypeError(f"config must be a torchair_ge.CompilerConfig, got {type(config).__name__}")
    config = copy.deepcopy(config) if config is not None else CompilerConfig()
    config.experimental_config.frozen_parameter = True  # weights live in the model file
    compiler = _ExportCompiler(config, export_path, export_name)
    aot = aot_autograd(fw_compiler=compiler, inference_compiler=functools.partial(compiler, inference=True),
                       decompositions=default_decompositions(),
                       keep_inference_input_mutations=config.experimental_config.keep_inference_input_mutations)

    def backend(gm, example_inputs):
        compiler.real_inputs = example_inputs
        compiler.dynamo_names = [n.name for n in gm.graph.nodes if n.op == "placeholder"]
        return aot(gm, example_inputs)

    torch._dynamo.reset()  # a fresh trace: an earlier compile of this model must not be reused
    with torch.no_grad():
        torch.compile(model, backend=backend, dynamic=dynamic, fullgraph=True)(*args, **kwargs)
    if compiler.result is None:
        raise RuntimeError("dynamo_export: Dynamo traced no graph (the model did no tensor work)")
    return compiler.result


def load_model(path, options=None):
    """A model file loaded for running from Python: `.run([tensors])` -> list of tensors."""
    default_session()
    return _C.OfflineModel.load(path, options or {})
