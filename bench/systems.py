"""The systems compared: eager PyTorch, Inductor (default and with freezing), torchair_ge, ONNX
Runtime, OpenVINO. Each `prepare`
builds its own fresh model from the zoo entry (state such as KV caches is never shared),
compiles it, and returns a Prepared with a zero-argument `run`."""
import io
import logging
import os
import tempfile
import time
from dataclasses import dataclass, field

import torch
import torch._dynamo

import torchair_ge


class Unsupported(Exception):
    """The system cannot run this model; `missing_ops` names what is lacking when known."""

    def __init__(self, reason, missing_ops=()):
        super().__init__(reason)
        self.reason = reason
        self.missing_ops = list(missing_ops)


@dataclass
class Prepared:
    run: object                      # () -> output tensor(s)
    cold_compile_s: float = 0.0      # first call with fresh caches (compile + first run)
    warm_compile_s: float = 0.0      # first call of a second compile (caches warm)
    info: dict = field(default_factory=dict)


def _grad_context(entry):
    return torch.no_grad() if entry.no_grad else torch.enable_grad()


def _first_call_s(fn):
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def _callable(entry, compiled, inputs):
    def run():
        with _grad_context(entry):
            return compiled(*inputs)
    return run


class Eager:
    name = "eager"

    def unavailable(self):
        return None

    def prepare(self, entry):
        model, inputs = entry.build()
        return Prepared(_callable(entry, model, inputs))


class Inductor:
    name = "inductor"

    def unavailable(self):
        return None

    def prepare(self, entry):
        from torch._inductor import metrics
        model, inputs = entry.build()
        torch._dynamo.reset()
        metrics.reset()
        run = _callable(entry, torch.compile(model), inputs)
        cold = _first_call_s(run)
        kernels = metrics.generated_kernel_count
        torch._dynamo.reset()
        run = _callable(entry, torch.compile(model), inputs)
        warm = _first_call_s(run)
        return Prepared(run, cold, warm, {"kernels": kernels})


class InductorFreezing(Inductor):
    """Inductor with freezing (parameters folded as constants, weights prepacked): the setting
    Intel recommends for CPU inference."""
    name = "inductor_freezing"

    def prepare(self, entry):
        if not entry.no_grad:
            raise Unsupported("freezing is for inference (no_grad) graphs")
        from torch._inductor import config
        with config.patch(freezing=True):
            return super().prepare(entry)


class OpenVino:
    """OpenVINO's torch.compile backend in f32 (its default on AMX machines is bf16, not a fair
    fp32 comparison)."""
    name = "openvino"
    OPTIONS = {"config": {"INFERENCE_PRECISION_HINT": "f32"}}

    def unavailable(self):
        try:
            import openvino.torch  # noqa: F401 - registers the "openvino" backend
        except ImportError as e:
            return f"{e.name} is not installed (make bench installs it)"
        return None

    def _compile(self, entry, model, inputs):
        run = _callable(entry, torch.compile(model, backend="openvino", options=self.OPTIONS), inputs)
        try:
            with _quiet():
                return run, _first_call_s(run)
        except Exception as e:  # noqa: BLE001 - a model it cannot compile is reported, not fatal
            raise Unsupported(f"openvino: {str(e).splitlines()[0][:160]}") from None

    def prepare(self, entry):
        model, inputs = entry.build()
        torch._dynamo.reset()
        run, cold = self._compile(entry, model, inputs)
        torch._dynamo.reset()
        run, warm = self._compile(entry, model, inputs)
        return Prepared(run, cold, warm, {})


class TorchairGe:
    """The backend with its default configuration; with optimizer=False every graph optimizer
    pass is switched off, with autofuse=False no generated kernels are made: the pairs show what
    the optimizer and auto-fusion buy per model. With frozen=True parameters become constants
    (`frozen_parameter`, the inference setting to compare with Inductor's freezing and ONNX
    Runtime, which both see constant weights). Each model compiles cold into a fresh kernel
    cache, then warm from it."""

    def __init__(self, optimizer=True, autofuse=True, frozen=False):
        self.optimizer, self.autofuse, self.frozen = optimizer, autofuse, frozen
        self.name = ("torchair_ge" + ("" if optimizer else "_noopt") + ("" if autofuse else "_nofuse")
                     + ("_frozen" if frozen else ""))

    def unavailable(self):
        return None

    def _config(self):
        config = torchair_ge.CompilerConfig()
        if not self.optimizer:
            config.ge_config.optimization_switch = ";".join(f"{name}:off" for name in torchair_ge._C.optimizer_passes())
        config.experimental_config.enable_autofuse = self.autofuse
        config.experimental_config.frozen_parameter = self.frozen
        return config

    def _compile(self, entry, model, inputs):
        backend = torchair_ge.get_npu_backend(compiler_config=self._config())
        run = _callable(entry, torch.compile(model, backend=backend, dynamic=False), inputs)
        try:
            seconds = _first_call_s(run)
        except Exception as e:  # noqa: BLE001 - reported, not raised
            inner = getattr(e, "inner_exception", e)
            missing = getattr(inner, "missing_ops", [])
            reason = f"missing converters: {', '.join(missing)}" if missing else str(inner).splitlines()[0][:200]
            raise Unsupported(reason, missing) from None
        return run, seconds, backend.compiler.reports

    def prepare(self, entry):
        if self.frozen and not entry.no_grad:
            raise Unsupported("frozen parameters are for inference (no_grad) graphs")
        model, inputs = entry.build()
        saved = os.environ.get("TORCHAIR_GE_CACHE_DIR")
        with tempfile.TemporaryDirectory(prefix="torchair_ge_bench_cache_") as cache:
            os.environ["TORCHAIR_GE_CACHE_DIR"] = cache
            try:
                torch._dynamo.reset()
                run, cold, cold_reports = self._compile(entry, model, inputs)
                torch._dynamo.reset()
                run, warm, reports = self._compile(entry, model, inputs)
            finally:
                if saved is None:
                    os.environ.pop("TORCHAIR_GE_CACHE_DIR", None)
                else:
                    os.environ["TORCHAIR_GE_CACHE_DIR"] = saved
        info = {
            "graphs": len(reports),
            "fx_nodes": sum(r["fx_nodes"] for r in reports),
            "ir_nodes_before": sum(r["ir_nodes_before"] for r in reports),
            "ir_nodes_after": sum(r["ir_nodes_after"] for r in reports),
            "kernels": sum(r["tasks"] for r in reports),
            "native_nodes": sum(r["native_nodes"] for r in reports),
            "fallback_nodes": sum(r["fallback_nodes"] for r in reports),
            "fallback_ops": {op: n for r in reports for op, n in r["fallback_ops"].items()},
            "arena_bytes": sum(r["arena_bytes"] for r in reports),
            "arena_lower_bound": sum(r["arena_lower_bound"] for r in reports),
            "arena_no_reuse": sum(r["arena_no_reuse"] for r in reports),
            "passes_fired": {name: sum(r["passes_fired"].get(name, 0) for r in reports)
                             for name in sorted({n for r in reports for n in r["passes_fired"]})},
            # The backend's own compile (conversion, optimizer, kernels, memory): the part the
            # kernel cache speeds up; the first-call times above also hold Dynamo and AOT autograd.
            "backend_compile_cold_ms": sum(r["compile_ms"] for r in cold_reports),
            "backend_compile_warm_ms": sum(r["compile_ms"] for r in reports),
            "kernel_build_ms": sum(r["autofuse"]["build_ms"] for r in cold_reports),
            "fused_kernels": sum(r["autofuse"]["kernels"] for r in reports),
            "fused_nodes": sum(r["autofuse"]["fused_nodes"] for r in reports),
            "kernel_cache_hit": all(r["autofuse"]["cache_hit"] for r in reports if r["autofuse"]["kernels"]),
            "autofuse_fallback": "; ".join(r["autofuse"]["fallback"] for r in reports if r["autofuse"]["fallback"]),
        }
        return Prepared(run, cold, warm, info)


class OnnxRuntime:
    name = "onnxruntime"

    def __init__(self, threads, parallel=False):
        # parallel: ORT's parallel execution mode (independent nodes at once on inter-op threads),
        # the intra-op threads split between them (bench/streams.py's anchor).
        self.threads = threads
        self.parallel = parallel
        if parallel:
            self.name = "onnxruntime_parallel"

    def unavailable(self):
        try:
            import onnxruntime  # noqa: F401
            import onnxscript  # noqa: F401
        except ImportError as e:
            return f"{e.name} is not installed (make bench installs it)"
        return None

    def _session(self, path):
        import onnxruntime as ort
        options = ort.SessionOptions()
        options.intra_op_num_threads = self.threads
        if self.parallel:
            options.execution_mode = ort.ExecutionMode.ORT_PARALLEL
            options.inter_op_num_threads = 2
            options.intra_op_num_threads = max(1, self.threads // 2)
            options.add_session_config_entry("session.inter_op.allow_spinning", "0")
        options.log_severity_level = 3
        # ORT's worker threads otherwise spin after each call and steal the (2) cores from
        # whichever system the interleaved measurement runs next.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        return ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])

    def prepare(self, entry):
        model, inputs = entry.build()
        path = os.path.join(tempfile.mkdtemp(prefix="bench_onnx_"), f"{entry.name}.onnx")
        start = time.perf_counter()
        try:
            for name in ("torch.onnx", "onnxscript"):
                logging.getLogger(name).setLevel(logging.ERROR)
            with torch.no_grad(), _quiet():
                torch.onnx.export(model, inputs, path, dynamo=True, verbose=False)
            session = self._session(path)
        except Exception as e:  # noqa: BLE001 - a model that does not export is reported, not fatal
            raise Unsupported(f"torch.onnx.export failed: {str(e).splitlines()[0][:160]}") from None
        feeds = {i.name: t.numpy() for i, t in zip(session.get_inputs(), inputs)}
        if len(feeds) != len(inputs):
            raise Unsupported("the exported graph's inputs do not match the model's")
        outputs = [o.name for o in session.get_outputs()]

        def run():
            results = session.run(outputs, feeds)
            return torch.from_numpy(results[0]) if len(results) == 1 else tuple(torch.from_numpy(r) for r in results)

        cold = time.perf_counter() - start + _first_call_s(run)
        start = time.perf_counter()
        session = self._session(path)
        warm = time.perf_counter() - start + _first_call_s(run)
        return Prepared(run, cold, warm, {})


class _quiet:
    """Silences stdout/stderr chatter of exporters."""

    def __enter__(self):
        import contextlib
        self._stack = contextlib.ExitStack()
        self._stack.enter_context(contextlib.redirect_stdout(io.StringIO()))
        self._stack.enter_context(contextlib.redirect_stderr(io.StringIO()))
        return self

    def __exit__(self, *exc):
        self._stack.close()
        return False


def all_systems(threads, names=None):
    systems = [Eager(), Inductor(), InductorFreezing(), TorchairGe(), TorchairGe(frozen=True),
               TorchairGe(optimizer=False), TorchairGe(autofuse=False), OnnxRuntime(threads), OpenVino()]
    return [s for s in systems if names is None or s.name in names]
