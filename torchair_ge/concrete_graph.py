"""A compiled graph as Dynamo/AOT autograd call it: run the engine, assemble the outputs."""
import functools
import logging

import torch

from torchair_ge import _C
from torchair_ge.debug import profiling

logger = logging.getLogger("torchair_ge")


class ConcreteGraph:
    """Callable with AOT autograd's boxed convention (one list of input tensors)."""

    def __init__(self, session, graph_id, converted, profiling_path=None, frozen=None):
        # An instance attribute: Dynamo wraps a backward graph in torch._dynamo.disable, whose
        # functools.wraps copies the instance's __dict__ (not its class's) onto the wrapper.
        self._boxed_call = True
        self._session = session
        self._graph_id = graph_id
        self._outputs = converted.outputs
        self._output_views = [(k, spec) for k, spec in enumerate(self._outputs) if spec.kind == "output_view"]
        self._mutated = converted.mutated_inputs
        self._positions = converted.input_positions  # FX input number per engine input, when some are frozen
        self._layouts = list(converted.input_layouts.items())  # engine inputs read permuted (dense_layout)
        self._frozen = list((frozen or {}).items())
        self._waited = converted.waited_inputs  # inputs whose outside collective must finish first
        self._span_name = f"torchair_ge::graph_{graph_id}"
        # Most inference graphs: Dynamo's inputs go to the engine as they are, and its results
        # are the outputs -- the run skips the steps below that would do nothing (~3 us a call).
        self._inputs_as_given = not (self._frozen or self._waited or self._mutated or self._layouts
                                     or self._positions is not None)
        self._results_are_outputs = all(spec.kind == "graph" and spec.index == k
                                        for k, spec in enumerate(self._outputs))
        self.summary = session.summary(graph_id)
        self.recorded_inputs = None  # set to [] to keep a copy of the next run's inputs (accuracy compare)
        self.model_bytes = None  # the graph as a model file, when the compiler was asked to keep it (cache_compile)
        self._profiling = profiling_path is not None
        if self._profiling:
            profiling.register(session, graph_id, profiling_path)

    @property
    def graph_id(self):
        return self._graph_id

    def plain_run(self):
        """The engine's run alone -- a C++ callable taking the inputs as one sequence and returning
        the outputs -- when a call of this graph needs nothing around it (its inputs go to the
        engine as they are, its results are its outputs, no profiling, no recording: decided when
        DirectCall is made, after the backend set `recorded_inputs`); else None. DirectCall calls
        it outside torch.profiler and grad mode: three Python frames fewer than `__call__`, ~1 us
        of tiny_chain's 53 us call (Intel Xeon, 2 cores)."""
        if self._inputs_as_given and self._results_are_outputs and not self._profiling and self.recorded_inputs is None:
            return functools.partial(self._session.run_graph, self._graph_id)
        return None

    @property
    def stream_mode(self):
        """How the graph runs its streams now: single, timing (first runs), streams or task_order."""
        return self._session.stream_mode(self._graph_id)

    def __call__(self, args):
        if self.recorded_inputs == []:
            self.recorded_inputs.extend(a.clone() if isinstance(a, torch.Tensor) else a for a in args)
        if torch.autograd._profiler_enabled():  # torch.profiler users see each run as one span
            with torch.profiler.record_function(self._span_name):
                return self._run(args)
        return self._run(args)

    def _run(self, args):
        if self._inputs_as_given:
            results = self._run_graph(args, args)
            return results if self._results_are_outputs else self._assemble(results, args)
        for i, tensor in self._frozen:
            if args[i] is not tensor:
                raise RuntimeError(
                    f"torchair_ge graph {self._graph_id}: input {i} was frozen into the graph "
                    "(experimental_config.frozen_parameter) but a different tensor was passed; recompile "
                    "(torch._dynamo.reset()) after replacing parameters or buffers")
        for i in self._waited:  # c10d's registry: waits for the work a collective registered on it
            torch.ops._c10d_functional.wait_tensor(args[i])
        # The engine reads inputs densely; a strided input the graph writes to is updated
        # through a dense copy that is written back afterwards.
        strided = [i for i in self._mutated if isinstance(args[i], torch.Tensor) and not args[i].is_contiguous()]
        dense = args
        if strided:
            dense = list(args)
            for i in strided:
                dense[i] = args[i].contiguous()
        run_args = dense if self._positions is None else [dense[p] for p in self._positions]
        if self._layouts:
            run_args = list(run_args)
            for i, perm in self._layouts:  # contiguous when laid out as at compile time
                if isinstance(run_args[i], torch.Tensor):
                    run_args[i] = run_args[i].permute(perm)
        results = self._run_graph(run_args, args)
        for i in strided:
            args[i].copy_(dense[i])
        return self._assemble(results, args)

    def _run_graph(self, run_args, args):
        try:
            return self._session.run_graph(self._graph_id, run_args)
        except TypeError:
            raise TypeError(self._describe_bad_inputs(args)) from None

    def _assemble(self, results, args):
        """The FX outputs from the engine's results, the inputs and the constants (OutputSpec)."""
        outputs = []
        for spec in self._outputs:
            if spec.kind == "graph":
                outputs.append(results[spec.index])
            elif spec.kind == "input":
                outputs.append(args[spec.index])
            elif spec.kind == "view":
                outputs.append(args[spec.index].as_strided(*spec.value))
            elif spec.kind == "output_view":
                outputs.append(None)  # once every output it may view is there
            else:
                outputs.append(spec.value)
        for position, spec in self._output_views:
            outputs[position] = outputs[spec.index].as_strided(*spec.value)
        return outputs

    def _describe_bad_inputs(self, args):
        for i, a in enumerate(args):
            if not isinstance(a, torch.Tensor):
                return f"torchair_ge graph {self._graph_id}: input {i} is {type(a).__name__}, expected a tensor"
        return f"torchair_ge graph {self._graph_id}: {len(args)} inputs do not match the compiled graph"

    def graph_text(self):
        """The compiled graph (engines and memory placement per node) as ge_ir text."""
        return self._session.graph_text(self._graph_id)

    def __del__(self):
        try:
            if self._profiling:
                profiling.unregister(self._graph_id)
            self._session.remove_graph(self._graph_id)
        except (_C.GeError, AttributeError, TypeError):
            pass  # interpreter shutdown or a graph that never made it in
