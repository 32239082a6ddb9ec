"""Calling a compiled inference graph straight from Dynamo, without AOT autograd's runtime wrapper.

AOT autograd returns every compiled graph inside a runtime wrapper (prepends lifted parameters,
drops deduplicated inputs, rebuilds synthetic bases, applies input mutations the graph could not
keep, regenerates outputs that alias inputs or intermediates, threads effect tokens, turns grad
mode off, disables autocast, bumps version counters). For most inference graphs every one of
those steps is the identity, and the wrapper is ~40-55 us of Python per call on a 2-core EPYC --
more than a small model's whole engine run saves (docs/performance.md, "The call path").

`aot_wrapper_reasons` reads what AOT autograd decided about the graph (its ViewAndMutationMeta)
and names each step that is not the identity; when there is none, `DirectCall` calls the engine
graph with Dynamo's own inputs and does the steps that remain: grad mode off during the run, the
version-counter bumps of the inputs the graph writes, and Dynamo's dynamic-dim marks on the
outputs. Its first call goes through AOT's wrapper, which runs its one-time checks then."""
import torch
from torch._functorch._aot_autograd.runtime_wrappers import mark_dynamo_propagated_dynamic_indices
from torch.autograd import _profiler_enabled


def _plain(value):
    if isinstance(value, torch.Tensor):
        return type(value) is torch.Tensor or type(value) is torch.nn.Parameter
    return isinstance(value, (int, float, bool, torch.SymInt, torch.SymFloat, torch.SymBool))


def aot_wrapper_reasons(meta, graph_inputs, example_inputs, autocast_at_compile):
    """Why the graph whose AOT metadata is `meta` (taking `graph_inputs` inputs) cannot be called
    with Dynamo's `example_inputs` directly: an empty list when it can."""
    if meta is None:
        return ["no AOT autograd metadata for the graph"]
    reasons = []
    if getattr(meta, "is_train", False):
        reasons.append("a training graph (autograd.Function)")
    if graph_inputs != len(example_inputs):
        reasons.append(f"AOT autograd changed the inputs ({len(example_inputs)} from Dynamo, {graph_inputs} in the "
                       "graph: lifted parameters, duplicate or aliased inputs, effect tokens)")
    if not all(_plain(v) for v in example_inputs):
        reasons.append("tensor subclass inputs")
    if meta.num_mutated_inp_runtime_indices:
        reasons.append(f"{meta.num_mutated_inp_runtime_indices} input mutation(s) applied after the graph "
                       "(metadata mutations)")
    if meta.num_outputs_aliased or meta.num_intermediate_bases:
        reasons.append(f"{meta.num_outputs_aliased} output(s) aliasing an input or an intermediate")
    if meta.tokens:
        reasons.append("effect tokens")
    if meta.is_rng_op_functionalized:
        reasons.append("functionalized RNG")
    if meta.grad_enabled_mutation is not None:
        reasons.append("the graph changes grad mode")
    if autocast_at_compile:
        reasons.append("autocast was on when the graph was traced")
    return reasons


class DirectCall:
    """What the backend hands Dynamo for a graph without reasons: Dynamo's arguments (the tuple)
    go to the engine graph (ConcreteGraph or DynamicGraph, boxed) as they are. `bumped_inputs`: the inputs
    the graph writes (their version counters move as eager's in-place ops would move them);
    `dynamic_outputs`: (output, dims) marked for Dynamo; `first_call`: a callable that serves
    the first call instead (AOT autograd's, with its one-time checks)."""

    def __init__(self, graph, bumped_inputs, dynamic_outputs=(), first_call=None):
        self.graph = graph
        self._bumped = tuple(bumped_inputs)
        self._dynamic = list(dynamic_outputs)
        self._first = first_call
        # Nothing to do around the engine's run (ConcreteGraph.plain_run): called straight.
        plain_run = getattr(graph, "plain_run", None)
        self._plain = plain_run() if plain_run is not None and not self._bumped and not self._dynamic else None

    @classmethod
    def from_aot(cls, graph, meta, aot_compiled):
        return cls(graph, meta.mutated_graph_handled_indices_seen_by_autograd,
                   [(i, o.dynamic_dims) for i, o in enumerate(meta.output_info) if o.dynamic_dims], aot_compiled)

    def __call__(self, *args):
        if self._first is not None:
            first, self._first = self._first, None
            return first(*args)
        if self._plain is not None and not torch.is_grad_enabled() and not _profiler_enabled():
            try:
                return self._plain(args)
            except TypeError:
                pass  # inputs the engine cannot take: the graph's own call names them
        if self._bumped:  # as eager's in-place ops would: autograd sees the inputs changed
            torch.autograd.graph.increment_version(tuple(args[i] for i in self._bumped))
        if torch.is_grad_enabled():
            outputs = self._run_without_grad(args)
        else:
            outputs = self.graph(args)
        for i, dims in self._dynamic:  # Dynamo's hint for graphs these outputs flow into
            mark_dynamo_propagated_dynamic_indices(outputs[i], dims)
        return outputs

    def _run_without_grad(self, args):
        # An inference graph may be called with grad enabled (no input requires grad); ops the
        # engine hands back to ATen must not record autograd history.
        torch._C._set_grad_enabled(False)
        try:
            return self.graph(args)
        finally:
            torch._C._set_grad_enabled(True)
