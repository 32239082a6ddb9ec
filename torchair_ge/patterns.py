"""User-declared FX rewrites ("this subgraph -> that subgraph"), applied to each ATen graph
before conversion -- the Python side of the pattern framework (the engine side is C++ rewrite
rules, csrc/ge/passes/rewrite_rules.h).

    def search(x):
        return torch.exp(x) - 1
    def replace(x):
        return torch.expm1(x)
    handle = torchair_ge.register_replacement(search, replace, [torch.randn(8)])

Both functions are traced to ATen graphs with make_fx and the backend's decompositions, so they
look like what the backend is given. Python numbers in them become literals that must match
exactly (`x * 0.5` matches only 0.5). `extra_check(match)` may veto a match (it receives the
torch.fx InternalMatch). The rewrite is the user's promise that both sides compute the same
thing; dtypes and shapes are re-inferred with torch's meta kernels afterwards."""
import itertools
import threading
from dataclasses import dataclass

import torch
from torch.fx.experimental.proxy_tensor import make_fx
from torch.fx.subgraph_rewriter import replace_pattern_with_filters

from torchair_ge.decompositions import default_decompositions

_lock = threading.Lock()
_patterns = {}  # name -> Replacement, in registration order
_ids = itertools.count(1)


@dataclass
class Replacement:
    name: str
    search: torch.fx.GraphModule
    replace: torch.fx.GraphModule
    extra_check: object = None
    matches: int = 0  # replacements made so far, over all graphs

    def remove(self):
        with _lock:
            _patterns.pop(self.name, None)


def _trace(fn, example_inputs):
    with torch.no_grad():
        gm = make_fx(fn, decomposition_table=default_decompositions())(*example_inputs)
    gm.graph.eliminate_dead_code()
    return gm


def register_replacement(search_fn, replace_fn, example_inputs, *, name=None, extra_check=None):
    """Registers a rewrite for every graph compiled afterwards; returns a handle (`.remove()`,
    `.matches`). `example_inputs` fix the ranks and dtypes the pattern is traced with."""
    search = _trace(search_fn, example_inputs)
    replace = _trace(replace_fn, example_inputs)
    if any(not n.users for n in search.graph.nodes if n.op == "placeholder"):
        raise ValueError("the search function must use every example input")
    if not any(n.op == "call_function" for n in search.graph.nodes):
        raise ValueError("the search function traces to no ops: nothing to match")
    name = name or f"{getattr(search_fn, '__name__', 'pattern')}_{next(_ids)}"
    replacement = Replacement(name, search, replace, extra_check)
    with _lock:
        if name in _patterns:
            raise ValueError(f"a replacement named {name!r} is already registered")
        _patterns[name] = replacement
    return replacement


def apply_replacements(gm, example_inputs):
    """Rewrites `gm` in place with every registered pattern; returns {name: matches}. Metadata
    of the new nodes comes from torch's meta kernels (FakeTensorProp over the example inputs)."""
    with _lock:
        patterns = list(_patterns.values())
    done = {}
    for p in patterns:
        filters = [lambda match, original, pattern, check=p.extra_check: check(match)] if p.extra_check else None
        replaced = replace_pattern_with_filters(gm, p.search, p.replace, match_filters=filters)
        if replaced:
            p.matches += len(replaced)
            done[p.name] = len(replaced)
    if done:
        gm.graph.lint()
        gm.recompile()
        _propagate_metas(gm, example_inputs)
    return done


def _propagate_metas(gm, example_inputs):
    from torch._guards import detect_fake_mode
    from torch.fx.passes.fake_tensor_prop import FakeTensorProp

    mode = detect_fake_mode(example_inputs)
    prop = FakeTensorProp(gm, mode)
    if mode is not None:
        prop.propagate_dont_convert_inputs(*example_inputs)
    else:
        prop.propagate(*example_inputs)
