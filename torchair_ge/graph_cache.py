"""The compiled-graph cache below Dynamo (`experimental_config.graph_cache`, like Inductor's FX
graph cache): a static inference graph is kept, compiled, on disk under a key of everything
that decides what it compiles to -- Dynamo's graph code, its inputs' metas, the tensors the graph
holds, the options, the decompositions, the converters, and the versions of torch, the engine and
this package's source. A later process that gets the same graph from Dynamo loads it (the model
file is checked as every model file is) and skips AOT autograd and the engine's optimizer.

Graphs that are not cached (the backend compiles them as usual): training graphs, symbolic sizes,
frozen parameters (their values are not in Dynamo's graph), graphs that AOT autograd must wrap at
run time, and any compile while dumps, data dumps, profiling, run_eagerly, user FX replacements
or an accuracy compare are active (a cache hit would skip what they record)."""
import hashlib
import inspect
import json
import logging
import os
import pathlib

import torch

import torchair_ge
from torchair_ge import _C
from torchair_ge.cache_compile import CachedGraph, lower_to_cached_graph, trusted_file
from torchair_ge.fx2ge import registry

logger = logging.getLogger("torchair_ge")
_PACKAGE_HASH = None
_UNTRUSTED = set()  # cache roots already warned about


def _root():
    """The cache root the kernel cache uses too (the engine's rule)."""
    return _C.kernel_cache_dir()


def cache_root():
    return os.path.join(_root(), "graphs")


def _trusted_cache(shard):
    """Whether entries in graphs/<shard> may be loaded: the cache root and the directories below it
    obey the kernel cache's rule (created 0700 where new). Otherwise one warning per root and the
    graph is compiled without the cache."""
    root = _root()
    try:
        _C.make_trusted_dir(root, ["graphs", os.path.join("graphs", shard)])
        return True
    except _C.GeError as error:
        if root not in _UNTRUSTED:
            _UNTRUSTED.add(root)
            logger.warning("graph cache: %s is not safe to load code from (%s); compiling without the cache",
                           root, error)
        return False


def _package_hash():
    """This package's Python source and extension: a converter change must not hit old entries."""
    global _PACKAGE_HASH
    if _PACKAGE_HASH is None:
        h = hashlib.sha256()
        root = pathlib.Path(torchair_ge.__file__).parent
        for path in sorted(root.rglob("*.py")):
            h.update(str(path.relative_to(root)).encode())
            h.update(path.read_bytes())
        extension = pathlib.Path(_C.__file__).stat()
        h.update(f"{extension.st_size}:{extension.st_mtime_ns}".encode())
        _PACKAGE_HASH = h.hexdigest()
    return _PACKAGE_HASH


def _converters_signature():
    """Converters registered outside this package change conversion: their source is in the key."""
    out = []
    for op, fn in sorted(registry._CONVERTERS.items(), key=lambda item: str(item[0])):
        module = getattr(fn, "__module__", "") or ""
        if not module.startswith("torchair_ge"):
            try:
                out.append(f"{op}:{module}.{fn.__qualname__}:{hashlib.sha256(inspect.getsource(fn).encode()).hexdigest()}")
            except (OSError, TypeError):
                return None  # a converter whose source cannot be read: not cacheable
    return out


def _input_meta(value):
    if isinstance(value, torch.Tensor):
        if type(value) is not torch.Tensor and not isinstance(value, torch.nn.Parameter):
            return None  # subclasses: not cacheable
        return ["tensor", str(value.dtype), list(value.shape), list(value.stride()), value.storage_offset(),
                value.requires_grad, str(value.device)]
    if isinstance(value, (int, float, bool)) and not isinstance(value, torch.SymInt):
        return [type(value).__name__, value]
    return None


def graph_key(gm, example_inputs, config, decompositions):
    """The cache key of Dynamo's graph `gm`, or None when the graph is not cacheable."""
    ge = config.ge_options()
    if (torch.is_grad_enabled() or config.experimental_config.frozen_parameter or config.debug.run_eagerly
            or config.debug.graph_dump.type or config.debug.data_dump.type or config.profiling.enable):
        return None
    from torchair_ge import patterns
    if patterns._patterns:
        return None
    metas = [_input_meta(v) for v in example_inputs]
    converters = _converters_signature()
    if any(m is None for m in metas) or converters is None:
        return None
    h = hashlib.sha256()
    text = json.dumps({"code": gm.code, "inputs": metas, "options": ge, "config": {k: str(v) for k, v in
                       config.as_dict().items()}, "decompositions": sorted(map(str, decompositions)),
                       "converters": converters, "torch": torch.__version__, "engine": _C.engine_version(),
                       "package": _package_hash()}, sort_keys=True)
    h.update(text.encode())
    for name, tensor in sorted(gm.state_dict(keep_vars=True).items()):  # the graph's own constants
        h.update(name.encode())
        h.update(str(tensor.dtype).encode() + str(list(tensor.shape)).encode())
        h.update(tensor.detach().contiguous().cpu().view(torch.uint8).numpy().tobytes())
    return h.hexdigest()


def cached_backend(compiler, decompositions, fallback):
    """Wraps a Dynamo backend (`fallback`) with the cache; `compiler` is its GeCompiler."""

    def backend(gm, example_inputs):
        key = graph_key(gm, example_inputs, compiler.config, decompositions)
        if key is None:
            return fallback(gm, example_inputs)
        path = os.path.join(cache_root(), key[:2], key)
        if not _trusted_cache(key[:2]):
            return fallback(gm, example_inputs)
        if os.path.exists(path):
            try:
                trusted_file(path, "graph cache")
                with open(path, "rb") as f:
                    graph = CachedGraph.deserialize_compile_artifacts(f.read())
                compiler.reports.append({"graph_cache": "hit", "graph_id": graph._graph.graph_id,
                                         "tasks": graph._graph.summary["task_num"]})
                compiler.graphs.append(graph._graph)
                return graph
            except Exception as error:  # never trusted: a broken entry is rebuilt
                logger.warning("graph cache: cannot load %s (%s); compiling again", path, error)
        reports, graphs = len(compiler.reports), len(compiler.graphs)
        try:
            graph = lower_to_cached_graph(compiler, gm, example_inputs, decompositions)
        except NotImplementedError:  # needs AOT autograd's wrapper: compiled as usual, not cached
            del compiler.reports[reports:], compiler.graphs[graphs:]
            return fallback(gm, example_inputs)
        finally:
            compiler.real_inputs = None
        compiler.reports[-1]["graph_cache"] = "miss"
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "wb") as f:
            f.write(CachedGraph.serialize_compile_artifacts(graph))
        os.replace(tmp, path)
        return graph

    return backend
