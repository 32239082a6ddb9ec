"""cache_compile (TorchAir's `torchair.inference.cache_compile`): a compiled function that
outlives the process. The first call traces with Dynamo, compiles and saves Dynamo's bytecode,
its guards and the engine graph (as a model file) in the cache; a later process loads them and
skips Dynamo's trace, AOT autograd and the engine's optimizer. Unlike TorchAir, the guards are
checked on every call: when they fail (a changed input shape, dtype, grad mode or global state),
the function is compiled again, with a warning, and the cache entry replaced.

    forward = torchair_ge.inference.cache_compile(model.forward, cache_dir="./cache")
    with torch.no_grad():
        y = forward(x)

Limits (docs/export.md): inference only (call under torch.no_grad()), one graph (fullgraph),
static sizes; the saved artifact is a pickle, so the cache directory is created private (0700)
and must not be writable by anyone else."""
import dataclasses
import functools
import hashlib
import json
import logging
import os
import stat
import struct
import sys
import types

import torch
from torch._dynamo.aot_compile_types import SerializableCallable
from torch._functorch.aot_autograd import aot_module_simplified

from torchair_ge import _C
from torchair_ge.backend import GeCompiler
from torchair_ge.concrete_graph import ConcreteGraph
from torchair_ge.configs.compiler_config import CompilerConfig
from torchair_ge.decompositions import default_decompositions
from torchair_ge.direct_call import DirectCall, aot_wrapper_reasons
from torchair_ge.engine import default_session, next_graph_id
from torchair_ge.fx2ge.interpreter import OutputSpec

logger = logging.getLogger("torchair_ge")
_ARTIFACT = "compiled_fn.bin"


class CachedGraph(SerializableCallable):
    """What the backend gives Dynamo: the engine graph of one Dynamo graph, serializable as a
    model file (bytes) plus how its outputs are assembled."""

    def __init__(self, model_bytes, meta, graph=None, options=None):
        self._model_bytes, self._meta = model_bytes, meta
        self._graph = graph or _load_graph(model_bytes, meta, options or {})
        self._call = DirectCall(self._graph, meta["mutated_inputs"])

    @classmethod
    def serialize_compile_artifacts(cls, fn):
        header = json.dumps(fn._meta).encode()
        return struct.pack("<Q", len(header)) + header + fn._model_bytes

    @classmethod
    def deserialize_compile_artifacts(cls, data):
        (length,) = struct.unpack_from("<Q", data)
        meta = json.loads(data[8:8 + length].decode())
        return cls(data[8 + length:], meta)

    def __call__(self, *args):
        return self._call(*args)


def _load_graph(model_bytes, meta, options):
    session, graph_id = default_session(), next_graph_id()
    session.load_graph(graph_id, model_bytes, options)
    converted = types.SimpleNamespace(
        outputs=[OutputSpec(kind, index, tuple(value) if isinstance(value, list) else value)
                 for kind, index, value in meta["outputs"]],
        mutated_inputs=meta["mutated_inputs"], input_positions=None, input_layouts={}, waited_inputs=[])
    return ConcreteGraph(session, graph_id, converted)


def _meta_of(compiled, num_inputs):
    if compiled._positions is not None or compiled._layouts or compiled._waited or compiled._frozen:
        raise NotImplementedError("this graph reads its inputs permuted, frozen or after a collective; it cannot be "
                                  "cached")
    outputs = [[spec.kind, spec.index, list(spec.value) if isinstance(spec.value, tuple) else spec.value]
               for spec in compiled._outputs]
    json.dumps(outputs)  # raises for an output value a cache cannot hold
    return {"outputs": outputs, "mutated_inputs": list(compiled._mutated), "num_inputs": num_inputs}


def lower_to_cached_graph(compiler, gm, example_inputs, decompositions):
    """Lowers Dynamo's graph with AOT autograd and the engine into a CachedGraph that takes
    Dynamo's inputs directly. Raises NotImplementedError for graphs that need AOT autograd's
    wrapper at run time (symbolic sizes, inputs AOT lifts itself) or a training graph."""
    if torch.is_grad_enabled():
        raise RuntimeError("cache_compile caches inference graphs: call the function under torch.no_grad()")
    captured = []  # every graph AOT autograd compiled: a cacheable function has one, static

    def inference(graph, inputs):
        captured.append(compiler(graph, inputs, inference=True))
        return captured[-1]

    compiler.real_inputs = example_inputs
    compiler.keep_model = True
    compiler.last_inference = None
    autocast = torch._C._is_any_autocast_enabled()
    try:
        # aot_compile asks AOT autograd to bundle Inductor's cache entries; this backend keeps its
        # own artifact (the model file), so AOT runs uncached here.
        with torch._functorch.config.patch(enable_autograd_cache=False, bundled_autograd_cache=False,
                                           force_autograd_cache=False, strict_autograd_cache=False):
            aot_module_simplified(gm, example_inputs, fw_compiler=inference, inference_compiler=inference,
                                  decompositions=decompositions, keep_inference_input_mutations=True)
        last = compiler.last_inference
    finally:
        compiler.keep_model = False
        compiler.last_inference = None
    if len(captured) != 1 or not isinstance(captured[0], ConcreteGraph):
        raise NotImplementedError("models with symbolic sizes cannot be cached yet; use dynamic=False")
    compiled, meta, graph_inputs = last
    # The cached graph is called with Dynamo's inputs as they are: only where AOT autograd's
    # runtime wrapper would do nothing (direct_call.py's rule, which the backend follows too).
    reasons = aot_wrapper_reasons(meta, graph_inputs, example_inputs, autocast)
    if reasons:
        raise NotImplementedError(f"the graph needs AOT autograd's runtime wrapper ({'; '.join(reasons)}); "
                                  "it cannot be cached")
    return CachedGraph(compiled.model_bytes, _meta_of(compiled, graph_inputs), graph=compiled)


def _serializable_backend(config, decompositions):
    compiler = GeCompiler(config)

    def backend(gm, example_inputs):
        try:
            return lower_to_cached_graph(compiler, gm, example_inputs, decompositions)
        except NotImplementedError as error:
            raise NotImplementedError(f"cache_compile: {error}") from None

    return backend


class CacheCompiledFunction:
    """The callable cache_compile returns."""

    def __init__(self, func, config, dynamic, path, decompositions):
        self._func, self._config, self._dynamic, self._path = func, config, dynamic, path
        self._decompositions = decompositions
        method = isinstance(func, types.MethodType)
        self._external = {"module": func.__self__} if method else {}
        # A compiled method is called with its object first (Dynamo compiles the function).
        self._bound = (func.__self__,) if method else ()
        self._compiled = None
        self.last_event = None  # "loaded", "compiled" or "recompiled": how the last call got its function

    @property
    def cache_path(self):
        return self._path

    def __call__(self, *args, **kwargs):
        args = self._bound + args
        if self._compiled is None:
            self._compiled = self._load()
            self.last_event = "loaded" if self._compiled is not None else None
        if self._compiled is not None and not self._compiled.guard_check(*args, **kwargs):
            reason = self._compiled._artifacts.guard_manager.check_verbose(
                self._compiled.prepare_f_locals(*args, **kwargs)).verbose_code_parts
            logger.warning("cache_compile: %s: the cached compilation does not fit this call (%s); compiling again",
                           self._path, "; ".join(reason))
            self._compiled = None
            self.last_event = "recompiled"
        if self._compiled is None:
            self._compiled = self._compile(args[len(self._bound):], kwargs)
            self.last_event = self.last_event or "compiled"
        return self._compiled(*args, **kwargs)

    def _load(self):
        if not os.path.exists(self._path):
            return None
        private_dir(os.path.dirname(self._path), "cache_compile")
        trusted_file(self._path, "cache_compile")
        try:
            with open(self._path, "rb") as f:
                compiled = torch.compiler.load_compiled_function(f, external_data=self._external)
        except Exception as error:  # a stale or broken entry is rebuilt, never trusted
            logger.warning("cache_compile: cannot load %s (%s); compiling again", self._path, error)
            return None
        changed = _changed_sources(compiled)
        if changed:  # Dynamo's guards do not look at code: an edited script must not run stale bytecode
            logger.warning("cache_compile: %s: the source of %s changed since it was cached; compiling again",
                           self._path, ", ".join(changed))
            return None
        return compiled

    def _compile(self, args, kwargs):
        backend = _serializable_backend(self._config, self._decompositions)
        compiled = torch.compile(self._func, backend=backend, dynamic=self._dynamic, fullgraph=True).aot_compile(
            (args, kwargs))
        private_dir(os.path.dirname(self._path), "cache_compile")
        compiled.save_compiled_function(self._path, external_data=self._external)
        return compiled


def _changed_sources(compiled):
    """The traced code (every function Dynamo inlined) whose source differs from when it was cached."""
    from torch._dynamo.package import _get_sourcelines, _hash_source

    changed = []
    for source in compiled.source_info().inlined_sources:
        module = sys.modules.get(source.module)
        try:
            now = "".join(_get_sourcelines(module, source.firstlineno, source.lastlineno)) if module else None
        except (OSError, TypeError):
            now = None
        if now is None or _hash_source(now) != source.checksum:
            changed.append(f"{source.module}:{source.firstlineno}")
    return changed


def private_dir(path, what):
    """Creates `path` (0700 where new) and refuses it unless only this user could have put files
    there -- the kernel cache's rule (docs/reliability.md): its entries are loaded and run (the
    cache_compile pickle, model files)."""
    try:
        return _C.make_trusted_dir(path)
    except _C.GeError as error:
        raise PermissionError(f"{what}: {path} is not safe to load code from: {error}") from None


def trusted_file(path, what):
    """Refuses a cache entry that is not safe to unpickle: a link, or a file someone else owns or
    could write (its directory is the caller's to check: private_dir)."""
    info = os.lstat(path)
    if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o022:
        raise PermissionError(f"{what}: {path} is not safe to load code from: it must be a regular file owned "
                              f"by this user and writable by no one else (mode {info.st_mode & 0o7777:o}, "
                              f"owner {info.st_uid})")


def _options_hash(config, dynamic, decompositions):
    text = json.dumps({"options": config.ge_options(), "dynamic": dynamic, "torch": torch.__version__,
                       "engine": _C.engine_version(), "decompositions": sorted(map(str, decompositions))},
                      sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _rank(global_rank, tp_rank, pp_rank):
    if global_rank is None:
        dist = torch.distributed
        global_rank = dist.get_rank() if dist.is_available() and dist.is_initialized() else 0
    parts = [f"rank_{global_rank}"]
    parts += [f"tp_{tp_rank}"] if tp_rank is not None else []
    parts += [f"pp_{pp_rank}"] if pp_rank is not None else []
    return "_".join(parts)


def cache_compile(func, *, config=None, dynamic=False, cache_dir=None, global_rank=None, tp_rank=None, pp_rank=None,
                  custom_decompositions=None, **kwargs):
    """Wraps `func` (a function or a bound method such as `model.forward`) so that its compilation
    is cached in `cache_dir` (default ./.torchair_ge_cache) per function, options and rank."""
    if not callable(func):
        raise TypeError(f"cache_compile: func must be callable, got {type(func).__name__}")
    if kwargs:
        raise TypeError(f"cache_compile: unexpected arguments {sorted(kwargs)}")
    if config is not None and not isinstance(config, CompilerConfig):
        raise TypeError(f"config must be a torchair_ge.CompilerConfig, got {type(config).__name__}")
    config = dataclasses.replace(config) if dataclasses.is_dataclass(config) else (config or CompilerConfig())
    decompositions = default_decompositions()
    decompositions.update(custom_decompositions or {})
    owner = getattr(func, "__self__", None)
    name = f"{type(owner).__name__}.{func.__name__}" if owner is not None else getattr(func, "__qualname__", "func")
    entry = f"{name.replace('<', '_').replace('>', '_')}_{_options_hash(config, dynamic, decompositions)}"
    path = os.path.join(os.path.abspath(cache_dir or ".torchair_ge_cache"), entry, _rank(global_rank, tp_rank, pp_rank),
                        _ARTIFACT)
    wrapper = CacheCompiledFunction(func, config, dynamic, path, decompositions)
    functools.update_wrapper(wrapper, func)
    return wrapper
