"""A compiled graph with symbolic sizes: one engine instance per set of symbol values.

Dynamo compiles a graph with symbolic sizes once (`dynamic=True`, or automatic dynamic after
a second size). Each call binds the symbols from its arguments (SymbolicSignature.bind, which
also checks the inputs against the graph's size expressions) and runs the engine graph built
for those sizes: instantiated from the graph's size template when it has one
(fx2ge/size_template.py), else converted again. The most recently used `max_instances` stay
compiled; generated kernels of an evicted or repeated instance come back from the kernel cache.

When a set of sizes gets its instance is the new-shape policy: at its first call ("compile"),
or ("amortize", the default) once running the FX graph in eager PyTorch for those sizes has
cost as much as compiling an instance (RentOrBuy): a serving loop that sends a batch size
once pays eager's time for it, not a compile."""
import collections
import logging
import threading
import time

from torchair_ge import _C
from torchair_ge.fx2ge.errors import ConversionError, DynamicShapeError
from torchair_ge.fx2ge.size_template import NoTemplate
from torchair_ge.fx2ge.symbolic import spell_bindings

logger = logging.getLogger("torchair_ge")


class DynamicGraph:
    """Callable with AOT autograd's boxed convention, like ConcreteGraph."""

    _boxed_call = True

    def __init__(self, signature, compile_instance, max_instances, gears=None, template_source=None,
                 run_eagerly=None):
        self.signature = signature
        # inference.set_dim_gears: the allowed keys (None for a symbol without gears), each
        # fully geared one compiled up front and kept (they do not count against max_instances).
        self.gears = gears
        self._compile_instance = compile_instance  # (bindings, start, template) -> (ConcreteGraph, report)
        self._template_source = template_source  # () -> SizeTemplate, or raises NoTemplate
        self.template = None
        self._max_instances = max_instances
        self._instances = collections.OrderedDict()  # key -> ConcreteGraph, least recently used first
        self._lock = threading.Lock()
        # the FX graph in eager PyTorch (boxed call), for sizes not worth an instance yet; None:
        # every new set of sizes compiles at its first call
        self._run_eagerly = run_eagerly
        self._rent = RentOrBuy(8 * max_instances) if run_eagerly is not None else None
        self.report = None
        self.summary = None

    def first_instance(self, bindings, start):
        """Compiles the instance for Dynamo's example sizes (so errors surface at compile time);
        returns the graph's report, which later instances keep up to date. The size template is
        derived first, so this instance comes from it like every later one (one kernel library
        for all: generated kernels keep the dims no size changes as literals). With
        data-dependent sizes there are no example sizes: the report is filled by the first
        call's instance."""
        if any(s not in bindings for s in self.signature.symbols):
            self.report = {"symbolic": self.signature.describe(), "shape_instances": [], "fallback_ops": {},
                           "deferred": "data-dependent sizes: the first call compiles the first instance"}
            return self.report
        template_report = self._derive_template()
        template = self.template if self.template is not None and self.template.covers(bindings) else None
        compiled, report = self._compile_instance(bindings, start, template)
        self._instances[tuple(bindings[s] for s in self.signature.symbols)] = compiled
        self.summary = compiled.summary
        report["symbolic"] = self.signature.describe()
        report["shape_instances"] = [self._instance_entry(bindings, report, template)]
        if template_report is not None:
            report["size_template"] = template_report
        self.report = report
        if self.gears:
            report["gears"] = [spell_bindings({s: v for s, v in zip(self.signature.symbols, g) if v is not None})
                               for g in self.gears]
            self._max_instances += len(self.gears)
            for key in self.gears:
                if None not in key:
                    self._instance(key)
        return report

    @staticmethod
    def _instance_entry(bindings, report, template):
        # built_kernels: this instance compiled C++ (its kernel library was not in the cache). After
        # the first instance that should not happen: instances share one library (a kernel that
        # took a varying size as fixed would build one per instance).
        autofuse = report.get("autofuse") or {}
        return {"sizes": spell_bindings(bindings), "graph_id": report["graph_id"], "compile_ms": report["compile_ms"],
                "from_template": template is not None,
                "optimized_once": template is not None and template.optimized is not None,
                "built_kernels": bool(autofuse.get("kernels")) and not autofuse.get("cache_hit")}

    def rent_on(self, dynamo_forward):
        """Rented sizes run `dynamo_forward` (Dynamo's graph: the model's own torch calls, as eager
        runs them) instead of the AOT graph, whose decomposed layer norms, attention and GELU ran a
        GPT's growing-cache decode 1.2x slower than eager. Only for a graph DirectCall calls with
        Dynamo's inputs, whose outputs are Dynamo's as they are."""
        if self._run_eagerly is not None:
            self._run_eagerly = lambda args: dynamo_forward(*args)

    def __call__(self, args):
        key = self.signature.key(args)
        if self.gears and not any(_fits(key, g) for g in self.gears):
            raise DynamicShapeError(f"sizes {spell_bindings(dict(zip(self.signature.symbols, key)))} are not one of the "
                                    f"gears set with set_dim_gears: {self.report['gears']}")
        compiled = self._instance(key, may_rent=self._rent is not None)
        if compiled is not None:
            return compiled(args)
        start = time.perf_counter()
        outputs = self._run_eagerly(args)
        with self._lock:
            self._rent.spent(key, time.perf_counter() - start)
            self.report["eager_runs"] = self.report.get("eager_runs", 0) + 1
        return outputs

    def _instance(self, key, may_rent=False):
        """The instance for `key`, compiled now if need be; None when the policy says to run
        these sizes eagerly this time (`may_rent`: amortize)."""
        with self._lock:
            compiled = self._instances.get(key)
            if compiled is not None:
                self._instances.move_to_end(key)
                return compiled
            if may_rent and self._instances and not self._rent.buy(key, self._compile_ms()):
                return None
            start = time.perf_counter()
            bindings = self.signature.bindings(key)
            template = self.template if self.template is not None and self.template.covers(bindings) else None
            compiled, report = self._compile_instance(bindings, start, template)
            self._instances[key] = compiled
            while len(self._instances) > self._max_instances:
                self._instances.popitem(last=False)
            if self.report.pop("deferred", None):  # the graph's report is this first instance's
                self.report.update({k: v for k, v in report.items() if k not in ("symbolic", "shape_instances")})
                self.summary = compiled.summary
            self.report["shape_instances"].append(self._instance_entry(bindings, report, template))
            return compiled

    def _compile_ms(self):
        """What compiling one more instance costs: the latest instance's compile time; for the
        graph's first instance, when later instances come from the template, without what a
        template instance does not do again: the conversion (and the template's derivation), the
        C++ build of its generated kernels (the next sizes find them in the kernel cache) and the
        timing of its kernels' candidates (the next sizes reuse the decisions, keyed by size
        class). A LLaMA decode graph's first instance took 957 ms, 817 of them timing candidates,
        and each next length 5.7-7.0 ms; taken as 833 ms, eager's 4 ms steps never paid for one
        and generate() ran every step eagerly. An instance that does cost more makes itself the
        next estimate."""
        latest = self.report["shape_instances"][-1]
        if len(self.report["shape_instances"]) == 1 and self.template is not None:
            once_ms = self.report["convert_ms"] + (self.report.get("autofuse") or {}).get("build_ms", 0.0)
            once_ms += sum(c.get("measure_us", 0.0) for c in self.report.get("kernel_choices", [])) / 1e3
            return max(latest["compile_ms"] - once_ms, 0.0)
        return latest["compile_ms"]

    def _derive_template(self):
        """The size template (None when there is none: the report's entry says why). A graph that
        cannot be converted gets no template and fails in its first instance's conversion."""
        if self._template_source is None:
            return None
        try:
            self.template = self._template_source()
            return self.template.describe()
        except (NoTemplate, ConversionError, DynamicShapeError, _C.GeError) as e:
            logger.info("graph: no size template, each new set of sizes is converted again: %s", e)
            return {"none": str(e)}

    def graph_text(self):
        """The most recently used instance's compiled graph as ge_ir text."""
        with self._lock:
            return next(reversed(self._instances.values())).graph_text()

    @property
    def graph_id(self):
        return self.report["graph_id"]


def _fits(key, gear):
    return all(g is None or k == g for k, g in zip(key, gear))


class RentOrBuy:
    """The ski-rental rule for one graph's sets of sizes: a key not yet compiled runs in eager
    PyTorch (rent) and its eager seconds add up; it is compiled (bought) at the call where one
    more eager run would bring them to the cost of compiling an instance. So a key whose eager run
    costs as much as a compile (a decode step of a large model) is compiled at its first call, and
    one that is cheap to run (a small MLP) only once it has come back often. Whatever the sequence
    of calls, no key costs more than about twice the cheaper of "compile at once" and "never
    compile" chosen in hindsight, with no threshold tuned to a machine: both sides are measured
    where it runs. A key's next eager run is expected to cost its mean so far, a new key's what the
    latest eager run (of any key) cost -- but not the graph's first eager run, which pays one-time
    costs (a GPT decode step's first took 8.4 ms, the next ones 2.1-2.4: taken as the price of
    every new length, it had each one compiled at its first call). The tally keeps the `capacity`
    most recently rented keys (a stream of new sizes does not grow it)."""

    def __init__(self, capacity):
        self._capacity = capacity
        self._spent = collections.OrderedDict()  # key -> (eager seconds, eager runs), least recently used first
        self._latest = None  # seconds of the latest eager run, any key, after the first
        self._first_done = False

    def buy(self, key, compile_ms):
        """Whether `key` should be compiled now (it then leaves the tally)."""
        seconds, runs = self._spent.get(key, (0.0, 0))
        next_run = seconds / runs if runs else self._latest
        if next_run is None or (seconds + next_run) * 1e3 < compile_ms:
            return False
        self._spent.pop(key, None)
        return True

    def spent(self, key, seconds):
        total, runs = self._spent.get(key, (0.0, 0))
        self._spent[key] = (total + seconds, runs + 1)
        self._spent.move_to_end(key)
        if self._first_done:
            self._latest = seconds
        self._first_done = True
        while len(self._spent) > self._capacity:
            self._spent.popitem(last=False)
