"""Runs the zoo through every system and collects the results."""
import datetime
import os
import platform
import tempfile

import torch
import torch._dynamo

from bench import limits, machine, measure, models as zoo
from bench.systems import Unsupported, all_systems

QUICK_MODELS = ["mlp", "tiny_chain"]


def _compare(output, reference):
    out = output[0] if isinstance(output, (tuple, list)) else output
    ref = reference[0] if isinstance(reference, (tuple, list)) else reference
    out = out.detach().float()
    ref = ref.detach().float()
    if out.shape != ref.shape:
        return float("inf"), False
    err = (out - ref).abs().max().item() if out.numel() else 0.0
    ok = torch.allclose(out, ref, rtol=1e-3, atol=1e-3)
    return err, ok


def run_model(entry, systems, quick, log):
    result = {"name": entry.name, "description": entry.description, "systems": []}
    reference_model, reference_inputs = entry.build()
    with torch.no_grad() if entry.no_grad else torch.enable_grad():
        reference = reference_model(*reference_inputs)
    runners = {}
    for system in systems:
        row = {"system": system.name}
        reason = system.unavailable()
        if reason:
            row.update(status="skipped", reason=reason)
            result["systems"].append(row)
            continue
        try:
            prepared = system.prepare(entry)
            err, ok = _compare(prepared.run(), reference)
            row.update(cold_compile_s=prepared.cold_compile_s, warm_compile_s=prepared.warm_compile_s,
                       info=prepared.info, max_abs_err=err)
            if ok:
                row["status"] = "ok"
                runners[system.name] = prepared.run
            else:
                row.update(status="wrong", reason=f"output differs from eager (max abs err {err:.3g})")
        except Unsupported as e:
            row.update(status="not supported", reason=e.reason, missing_ops=e.missing_ops)
        except Exception as e:  # noqa: BLE001 - one system's failure must not stop the run
            row.update(status="error", reason=f"{type(e).__name__}: {str(e).splitlines()[0][:200]}")
        log(f"  {entry.name:<12} {system.name:<12} {row['status']}" + (f" ({row.get('reason')})" if row.get("reason") else ""))
        result["systems"].append(row)

    rounds = 3 if quick else 25
    samples = measure.interleaved_latency(runners, rounds, batch_target_s=0.005 if quick else 0.05)
    for row in result["systems"]:
        if row["system"] in runners:
            row.update(measure.summarize(samples[row["system"]]))
            row["peak_mem_mb"] = measure.peak_rss_growth(runners[row["system"]], 3 if quick else 10) / 2**20
    torch._dynamo.reset()
    return result


def run(models=None, quick=False, threads=None, systems=None, overhead=True, log=print, dynamic_shapes=True,
        generation=True, training=True, streams=True, warm_start=True):
    """generation: the transformers generate() workload, the attention micro-benchmark and
    transformers' model classes (bench/transformers_zoo.py; their training steps too with
    `training`); training: training steps (forward, backward, optimizer step). streams: the engine's streams vs
    one stream, and the 2-rank tensor-parallel MLP (bench/streams.py). warm_start: first calls of
    fresh processes with empty and with filled caches (bench/warm_start.py)."""
    threads = threads or os.cpu_count()
    torch.set_num_threads(threads)
    # Cold compiles: Inductor starts from an empty on-disk cache.
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = tempfile.mkdtemp(prefix="bench_inductor_cache_")
    entries = zoo.get(models or (QUICK_MODELS if quick else None))
    chosen = all_systems(threads, systems)
    if quick and systems is None:  # ONNX export is slow, the off/off runs triple ours: full runs only
        chosen = [s for s in chosen if s.name not in ("onnxruntime", "openvino", "inductor_freezing", "torchair_ge_noopt",
                                                     "torchair_ge_nofuse", "torchair_ge_frozen")]
    results = {
        "quick": quick,
        "environment": {
            "date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"),
            "torch": torch.__version__,
            "threads": threads,
            "machine": machine.describe(threads),
            "cpu": machine.summary(machine.describe(threads)),
            "python": platform.python_version(),
        },
        "models": [],
    }
    for entry in entries:
        log(f"{entry.name}: {entry.description}")
        results["models"].append(run_model(entry, chosen, quick, log))
    if any(m["name"] in limits.BANDWIDTH_MODELS + limits.COMPUTE_MODELS for m in results["models"]):
        log("limits: bandwidth and GEMM peak ...")
        results["limits"] = limits.run(results["models"], entries, quick, log)
    if any(m["name"] == "tiny_chain" for m in results["models"]):
        from bench import codegen
        log("generated kernels: vector vs blocks ...")
        results["codegen"] = codegen.run(quick, log)
    if overhead:
        from bench.overhead import host_overhead
        log("host overhead per task ...")
        results["overhead"] = host_overhead(lengths=(16, 64) if quick else (16, 64, 256, 1024),
                                            repeats=20 if quick else 200)
    if dynamic_shapes:
        from bench import dynamic
        log("dynamic shapes ...")
        names = [s.name for s in chosen]
        results["dynamic"] = dynamic.run(entries, quick, log, [s for s in dynamic.SYSTEMS if s in names])
    if training:
        from bench import training as train_steps
        log("training steps ...")
        names = [s.name for s in chosen]
        results["training"] = train_steps.run(quick, log, [s for s in train_steps.SYSTEMS if s in names])
    if streams and "torchair_ge" in [s.name for s in chosen]:
        from bench import streams as stream_bench
        log("streams ...")
        results["streams"] = stream_bench.run(quick, log)
    if warm_start:
        from bench import warm_start as starts
        log("warm process starts ...")
        names = [s.name for s in chosen]
        results["warm_start"] = starts.run(quick, log, [s for s in starts.SYSTEMS if s in names])
    if generation:
        from bench import generate
        log("transformers generate() ...")
        names = [s.name for s in chosen]
        results["generate"] = generate.run(quick, log, [s for s in generate.SYSTEMS if s in names])
        from bench import attention
        log("attention ...")
        results["attention"] = attention.run(quick, log)
        from bench import transformers_zoo
        log("transformers models ...")
        results["transformers_zoo"] = transformers_zoo.run(quick, log, [s for s in transformers_zoo.SYSTEMS if s in names],
                                                           training=training)
    return results
