"""Host cost per sunk task: chains of N tiny elementwise ops (8x8) run through the engine
alone (the compiled graph called directly, no Dynamo/AOT wrappers) and through torch.compile,
static and with dynamic=True (symbolic sizes: the per-call key and check, an engine instance for
the size, kernels reading their sizes at run time); the slope of time over N is the cost per
task. Auto-fusion is off here: it would make every chain one task, and this measures what one
task costs."""
import statistics
import time

import torch
import torch._dynamo
from torch.fx.experimental.proxy_tensor import make_fx

import torchair_ge
from bench.models.tiny_chain import TinyChain


def _median_us(fn, repeats):
    for _ in range(5):
        fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e6


def _slope(xs, ys):
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)


def host_overhead(lengths=(16, 64, 256, 1024), size=8, repeats=200):
    x = torch.randn(size, size)
    config = torchair_ge.CompilerConfig()
    config.experimental_config.enable_autofuse = False
    rows = []
    with torch.no_grad():
        for n in lengths:
            model = TinyChain(n).eval()
            engine = torchair_ge.get_compiler(config)(make_fx(model, tracing_mode="fake")(x), [x])
            args = [x]
            torch._dynamo.reset()
            compiled = torch.compile(model, backend=torchair_ge.get_npu_backend(compiler_config=config), dynamic=False)
            symbolic = torch.compile(model, backend=torchair_ge.get_npu_backend(compiler_config=config), dynamic=True)
            rows.append({
                "ops": n,
                "tasks": engine.summary["task_num"],
                "eager_us": _median_us(lambda: model(x), repeats),
                "engine_us": _median_us(lambda: engine(args), repeats),
                "torch_compile_us": _median_us(lambda: compiled(x), repeats),
                "dynamic_us": _median_us(lambda: symbolic(x), repeats),
            })
    tasks = [r["tasks"] for r in rows]
    return {
        "size": [size, size],
        "rows": rows,
        "us_per_task_engine": _slope(tasks, [r["engine_us"] for r in rows]),
        "us_per_task_torch_compile": _slope(tasks, [r["torch_compile_us"] for r in rows]),
        "us_per_task_dynamic": _slope(tasks, [r["dynamic_us"] for r in rows]),
        "us_per_op_eager": _slope([r["ops"] for r in rows], [r["eager_us"] for r in rows]),
    }
