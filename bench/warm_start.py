"""Warm process starts: the first call of a fresh process, with empty caches (cold) and with the
caches a first process left (warm), for torchair_ge's cache_compile and for Inductor (its FX
graph and AOT autograd caches). Every measurement is its own interpreter.

    python -m bench.warm_start            # bert
    python -m bench.warm_start --child torchair_ge bert CACHE   (one measurement, JSON on stdout)"""
import json
import os
import subprocess
import sys
import tempfile
import time

MODELS = ("bert", "resnet_b1", "gpt_decode")
SYSTEMS = ("torchair_ge", "inductor")


def _child(system, name, cache):
    start = time.perf_counter()
    import torch

    from bench.models import ZOO
    model, inputs = ZOO[name].build()
    if system == "torchair_ge":
        import torchair_ge
        fn = torchair_ge.inference.cache_compile(model.forward, cache_dir=os.path.join(cache, "cache_compile"))
    else:
        fn = torch.compile(model)
    imported = time.perf_counter()
    with torch.no_grad():
        fn(*inputs)
    first = time.perf_counter()
    print(json.dumps({"first_call_s": first - imported, "process_s": first - start,
                      "event": getattr(fn, "last_event", None)}))


def _measure(system, name, cache):
    env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": os.path.join(cache, "inductor"),
           "TORCHAIR_GE_CACHE_DIR": os.path.join(cache, "kernels")}
    out = subprocess.run([sys.executable, "-m", "bench.warm_start", "--child", system, name, cache], env=env,
                         capture_output=True, text=True, timeout=900,
                         cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    if out.returncode != 0:
        return {"error": out.stderr.strip().splitlines()[-1] if out.stderr.strip() else "failed"}
    return json.loads(out.stdout.strip().splitlines()[-1])


def run(quick=False, log=print, systems=SYSTEMS):
    rows = []
    for name in ("bert",) if quick else MODELS:
        for system in systems:
            with tempfile.TemporaryDirectory(prefix="bench_warm_start_") as cache:
                cold = _measure(system, name, cache)
                warm = _measure(system, name, cache)
            row = {"model": name, "system": system, "cold": cold, "warm": warm}
            if "first_call_s" in cold and "first_call_s" in warm:
                row["warm_over_cold"] = warm["first_call_s"] / cold["first_call_s"]
            log(f"  {name} {system}: first call cold {cold.get('first_call_s', cold.get('error'))} s, "
                f"warm {warm.get('first_call_s', warm.get('error'))} s")
            rows.append(row)
    return rows


def markdown(rows):
    lines = ["", "## Warm process starts", "",
             "The first call of a fresh process (imports excluded): with empty caches (cold), and again in a new "
             "process with the caches the first one left (warm). torchair_ge: `inference.cache_compile` (Dynamo's "
             "bytecode and guards plus the engine graph as a model file, generated kernels from their cache); "
             "Inductor: `torch.compile` with its default on-disk caches (FX graph, AOT autograd).", "",
             "| model | system | first call cold s | warm s | warm/cold |", "|---|---|---|---|---|"]
    for r in rows:
        fmt = lambda m: f"{m['first_call_s']:.3f}" if "first_call_s" in m else m.get("error", "—")  # noqa: E731
        ratio = f"{r['warm_over_cold']:.2f}" if "warm_over_cold" in r else "—"
        lines.append(f"| {r['model']} | {r['system']} | {fmt(r['cold'])} | {fmt(r['warm'])} | {ratio} |")
    return lines


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "--child":
        _child(*sys.argv[2:])
    else:
        print("\n".join(markdown(run(quick="--quick" in sys.argv))))
