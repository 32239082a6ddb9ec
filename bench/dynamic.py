"""Dynamic-shape workloads: each compiled once (default torch.compile for torchair_ge, as a user
would; Inductor with dynamic=True) and called with a new shape on nearly every call.

For each workload and system: the first pass over a seeded sequence of shapes (compiles
included), the same sequence again (every shape seen: steady state), the number of graphs the
backend compiled, and the largest difference from eager. torchair_ge also reports its engine
instances (one per set of sizes, docs/dynamic_shapes.md) and the calls it ran in eager PyTorch
under its default new-shape policy (amortize); torchair_ge_compile is the same backend compiling
an instance for every new set of sizes at its first call."""
import random
import statistics
import time

import torch
import torch._dynamo

import torchair_ge
from bench import measure
from bench.models import bert, gpt_dynamic, mlp

SYSTEMS = ("eager", "inductor", "torchair_ge", "torchair_ge_compile")


def _mlp_varbatch(quick):
    model = mlp.build(batch=2, width=256)[0]
    rng = random.Random(0)
    sizes = [rng.randint(2, 512) for _ in range(8 if quick else 24)]
    calls = [(torch.randn(b, 256, generator=torch.Generator().manual_seed(b)),) for b in sizes]
    return model, calls, lambda fn, args: fn(*args)


def _bert_varlen(quick):
    model = bert.build(batch=2, seq=8)[0]
    rng = random.Random(1)
    calls = [bert.build(batch=2, seq=rng.randint(8, 128))[1] for _ in range(6 if quick else 16)]
    return model, calls, lambda fn, args: fn(*args)


def _gpt_prefill_decode(quick):
    model = gpt_dynamic.build()
    rng = random.Random(2)
    steps = 8 if quick else 32
    prompts = [torch.randint(0, 4096, (1, rng.randint(8, 64)), generator=torch.Generator().manual_seed(k))
               for k in range(2)]
    return model, [(p,) for p in prompts], lambda fn, args: gpt_dynamic.generate(fn, args[0], steps, model.empty_cache())


WORKLOADS = {
    "mlp_varbatch": ("4 x (Linear 256 + ReLU), batch 2..512 random per call", _mlp_varbatch),
    "bert_varlen": ("4-layer BERT encoder, batch 2, seq 8..128 random per call, padding mask", _bert_varlen),
    "gpt_prefill_decode": ("4-layer GPT, prompt 8..64 tokens, then 32 decode steps with a KV cache grown by cat; "
                           "2 prompts", _gpt_prefill_decode),
}



def _compiled(system, model):
    if system == "eager":
        return model, None, None
    if system == "inductor":
        from torch._inductor.compile_fx import compile_fx
        counting = measure.CountingBackend(compile_fx)
        return torch.compile(model, backend=counting, dynamic=True), counting, None
    config = torchair_ge.CompilerConfig()
    config.inference_config.new_shape_policy = "compile" if system == "torchair_ge_compile" else "amortize"
    backend = torchair_ge.get_npu_backend(compiler_config=config)
    counting = measure.CountingBackend(backend)
    return torch.compile(model, backend=counting), counting, backend.compiler.reports


def _flat(output):
    if isinstance(output, torch.Tensor):
        return [output]
    if isinstance(output, (tuple, list)):
        return [t for item in output for t in _flat(item)]
    return []


def _pass(fn, calls, call):
    outputs, start = [], time.perf_counter()
    times = []
    for args in calls:
        t = time.perf_counter()
        outputs.append(call(fn, args))
        times.append(time.perf_counter() - t)
    return time.perf_counter() - start, times, outputs


def run_workload(name, quick, log=print, systems=SYSTEMS):
    description, make = WORKLOADS[name]
    model, calls, call = make(quick)
    rows = []
    reference = None
    with torch.no_grad():
        for system in systems:
            torch._dynamo.reset()
            fn, counting, reports = _compiled(system, model)
            first_s, _, outputs = _pass(fn, calls, call)
            steady_s, times, _ = _pass(fn, calls, call)
            flat = [t for out in outputs for t in _flat(out)]
            if reference is None:
                reference = flat
            err = max(((a.float() - b.float()).abs().max().item() for a, b in zip(flat, reference)), default=0.0)
            row = {"system": system, "first_pass_s": first_s, "steady_pass_s": steady_s,
                   "median_call_ms": statistics.median(times) * 1e3, "max_abs_err": err,
                   "graphs": counting.graphs if counting else 0}
            if reports:
                row["engine_instances"] = sum(len(r.get("shape_instances", [])) or 1 for r in reports)
                row["eager_runs"] = sum(r.get("eager_runs", 0) for r in reports)
                later = [i for r in reports for i in r.get("shape_instances", [])[1:]]  # after each first
                row["from_template"] = sum(1 for i in later if i.get("from_template"))
                if later:
                    row["instance_compile_ms"] = statistics.median(i["compile_ms"] for i in later)
            rows.append(row)
            log(f"  {name:<20} {system:<12} first {first_s:7.2f} s  steady {steady_s * 1e3:8.1f} ms  "
                f"graphs {row['graphs']}  eager runs {row.get('eager_runs', '-')}  err {err:.2e}")
    torch._dynamo.reset()
    return {"name": name, "description": description, "calls": len(calls), "systems": rows}


def static_vs_dynamic(entries, quick, log=print):
    """Each zoo model at its own shape through torchair_ge compiled with dynamic=False and with
    dynamic=True (kernels with run-time sizes, the per-call size check): median ms of each,
    interleaved."""
    rows = []
    for entry in entries:
        model, inputs = entry.build()
        runners = {}
        try:
            for dynamic in (False, True):
                torch._dynamo.reset()
                compiled = torch.compile(model, backend=torchair_ge.get_npu_backend(), dynamic=dynamic)
                run = _no_grad_call(compiled, inputs)
                run()
                runners["dynamic" if dynamic else "static"] = run
        except Exception as e:  # noqa: BLE001 - reported per model
            rows.append({"model": entry.name, "error": f"{type(e).__name__}: {str(e).splitlines()[0][:160]}"})
            log(f"  {entry.name:<12} static vs dynamic: {rows[-1]['error']}")
            continue
        samples = measure.interleaved_latency(runners, 3 if quick else 15, batch_target_s=0.005 if quick else 0.02)
        medians = {k: statistics.median(v) * 1e3 for k, v in samples.items()}
        rows.append({"model": entry.name, "static_ms": medians["static"], "dynamic_ms": medians["dynamic"],
                     "ratio": medians["dynamic"] / medians["static"]})
        log(f"  {entry.name:<12} static {medians['static']:.3f} ms  dynamic {medians['dynamic']:.3f} ms")
    torch._dynamo.reset()
    return rows


def _no_grad_call(fn, inputs):
    def run():
        with torch.no_grad():
            return fn(*inputs)
    return run


def run(entries, quick=False, log=print, systems=SYSTEMS):
    # torchair_ge_compile is no system of the zoo bench: it comes with torchair_ge
    systems = [s for s in SYSTEMS if s in systems or (s == "torchair_ge_compile" and "torchair_ge" in systems)]
    return {"workloads": [run_workload(name, quick, log, systems) for name in WORKLOADS],
            "static_vs_dynamic": static_vs_dynamic(entries, quick, log) if "torchair_ge" in systems else []}


def markdown(results):
    lines = ["", "## Dynamic shapes", "",
             "Each workload compiled once and called with a new shape nearly every call (torchair_ge: default "
             "torch.compile; Inductor: dynamic=True). First pass: the seeded sequence of shapes, compiles included; "
             "steady pass: the same sequence again. Graphs: compiled by the backend; engine instances: "
             "torchair_ge's per-size instances (docs/dynamic_shapes.md), how many of the later ones were "
             "instantiated from the size template, and their median compile ms; eager runs: calls torchair_ge's "
             "default new-shape policy (amortize) ran in eager PyTorch over both passes (torchair_ge_compile: "
             "policy compile, an instance at every new size's first call).", "",
             "| workload | system | first pass (s) | steady pass (ms) | / eager | / inductor | graphs | engine instances "
             "(from template, median compile ms) | eager runs | max abs err |", "|---|---|---|---|---|---|---|---|---|---|"]
    for w in results["workloads"]:
        by = {r["system"]: r for r in w["systems"]}
        for r in w["systems"]:
            ratio = lambda base: f"{r['steady_pass_s'] / by[base]['steady_pass_s']:.2f}" if base in by else ""  # noqa: E731
            instances = str(r.get("engine_instances", ""))
            if "instance_compile_ms" in r:
                instances += f" ({r['from_template']}, {r['instance_compile_ms']:.1f} ms)"
            lines.append(f"| {w['name']} | {r['system']} | {r['first_pass_s']:.2f} | {r['steady_pass_s'] * 1e3:.1f} | "
                         f"{ratio('eager')} | {ratio('inductor')} | {r['graphs']} | {instances} | "
                         f"{r.get('eager_runs', '')} | {r['max_abs_err']:.1e} |")
    lines += ["", "torchair_ge compiled with dynamic=True vs dynamic=False, each zoo model at its own shape:", "",
              "| model | static ms | dynamic ms | dynamic / static |", "|---|---|---|---|"]
    for r in results["static_vs_dynamic"]:
        if "error" in r:
            lines.append(f"| {r['model']} | — | — | {r['error']} |")
        else:
            lines.append(f"| {r['model']} | {r['static_ms']:.3f} | {r['dynamic_ms']:.3f} | {r['ratio']:.2f} |")
    return lines
