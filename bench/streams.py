"""Streams: branchy models (mmoe's 4 experts, widedeep, the ResNet's shortcut branches) with the
engine's streams vs one stream (intra-op threads split evenly between the streams; one stream
has them all), ONNX Runtime's sequential and parallel execution modes as the anchor; and a
2-rank tensor-parallel MLP on gloo: step time compiled vs eager, and how much of the
communication the engine hides behind compute (from its own trace: the share of the
collectives' time during which a compute stream was running a task).

python -m bench.streams [--quick]"""
import argparse
import socket
import sys
import time

import torch
import torch._dynamo

import torchair_ge
from bench import machine, measure
from bench import models as zoo
from bench.systems import OnnxRuntime, Unsupported
from torchair_ge.configs.compiler_config import CompilerConfig

MODELS = ("mmoe", "widedeep", "resnet_b8")
QUICK_MODELS = ("mmoe",)


def _engine(entry, single):
    config = CompilerConfig()
    config.ge_config.enable_single_stream = single
    config.ge_config.stream_replay = "always"
    model, inputs = entry.build()
    torch._dynamo.reset()
    backend = torchair_ge.get_npu_backend(compiler_config=config)
    compiled = torch.compile(model, backend=backend, dynamic=False)

    def run():
        with torch.no_grad():
            return compiled(*inputs)
    run()
    return run, sum(r["streams"] for r in backend.compiler.reports)


def run_model(name, quick, log):
    entry = zoo.ZOO[name]
    runners, row = {}, {"name": name, "description": entry.description}
    runners["one stream"], _ = _engine(entry, single=True)
    runners["streams"], row["streams"] = _engine(entry, single=False)
    threads = torch.get_num_threads()
    for system in (OnnxRuntime(threads), OnnxRuntime(threads, parallel=True)):
        if system.unavailable():
            continue
        try:
            runners[system.name] = system.prepare(entry).run
        except Unsupported as e:
            row[system.name] = f"unsupported: {e}"
    samples = measure.interleaved_latency(runners, 5 if quick else 25, batch_target_s=0.01 if quick else 0.05)
    row["systems"] = {k: measure.summarize(v) for k, v in samples.items()}
    one, streams = row["systems"]["one stream"]["median_ms"], row["systems"]["streams"]["median_ms"]
    row["streams_vs_one"] = streams / one
    log(f"  streams {name:<10} one stream {one:8.3f} ms  {row['streams']} streams {streams:8.3f} ms  "
        f"({row['streams_vs_one']:.2f}x)")
    return row


# The tensor-parallel MLP: two micro-batches, each through column-parallel fc1 (GELU) and
# row-parallel fc2 followed by an all-reduce; the second micro-batch's compute can run while the
# first one's all-reduce waits for the other rank.
TP_DIM, TP_HIDDEN, TP_TOKENS = 512, 2048, 128


def _tp_step(x, w1, w2):
    import torch.distributed as dist
    import torch.distributed._functional_collectives as funcol
    outs = []
    for micro in x.unbind(0):
        partial = torch.nn.functional.gelu(micro @ w1.t()) @ w2.t()
        outs.append(funcol.all_reduce(partial, "sum", dist.group.WORLD))
    return torch.stack(outs)


def _hidden_share(profile):
    """Of the collectives' time in the last runs, the share during which a compute stream ran a task."""
    times, streams, types = profile["task_times"][-10:].tolist(), profile["task_streams"], profile["task_types"]
    comm = {s for s, t in zip(streams, types) if t.startswith("Hcom")}
    total = hidden = 0
    for run in times:
        compute = [span for span, s in zip(run, streams) if s not in comm]
        for (start, end), t in zip(run, types):
            if not t.startswith("Hcom"):
                continue
            total += end - start
            cuts = sorted((max(start, a), min(end, b)) for a, b in compute if min(end, b) > max(start, a))
            covered, reach = 0, start
            for a, b in cuts:
                covered += max(0, b - max(a, reach))
                reach = max(reach, b)
            hidden += covered
    return hidden / total if total else 0.0


def _tp_rank(rank, port, quick, queue):
    import torch.distributed as dist
    try:
        dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=2)
        torch.set_num_threads(1)  # two ranks on the machine's cores
        gen = torch.Generator().manual_seed(rank)
        x = torch.randn(2, TP_TOKENS, TP_DIM, generator=torch.Generator().manual_seed(9))
        w1 = torch.randn(TP_HIDDEN // 2, TP_DIM, generator=gen) / TP_DIM ** 0.5
        w2 = torch.randn(TP_DIM, TP_HIDDEN // 2, generator=gen) / TP_HIDDEN ** 0.5
        config = CompilerConfig()
        config.ge_config.stream_replay = "always"
        config.profiling.enable = True
        compiled = torch.compile(_tp_step, backend=torchair_ge.get_npu_backend(compiler_config=config), dynamic=False)
        with torch.no_grad():
            torch.testing.assert_close(compiled(x, w1, w2), _tp_step(x, w1, w2), rtol=1e-4, atol=1e-4)
            rounds = 5 if quick else 30
            samples = {"eager": [], "torchair_ge": []}
            for _ in range(rounds):
                for name, fn in (("eager", _tp_step), ("torchair_ge", compiled)):
                    dist.barrier()
                    t0 = time.perf_counter()
                    for _ in range(5):
                        fn(x, w1, w2)
                    samples[name].append((time.perf_counter() - t0) / 5)
        report = torchair_ge.debug.profile_report()
        (profile,) = [ps[-1] for ps in report.graphs.values()]
        if rank == 0:
            queue.put({"systems": {k: measure.summarize(v) for k, v in samples.items()},
                       "hidden_share": _hidden_share(profile)})
        dist.destroy_process_group()
    except Exception as e:  # noqa: BLE001 - reported by the parent
        queue.put({"error": f"rank {rank}: {type(e).__name__}: {str(e).splitlines()[0][:200]}"})


def run_tensor_parallel(quick, log):
    import torch.multiprocessing as mp
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    procs = [ctx.Process(target=_tp_rank, args=(r, port, quick, queue)) for r in range(2)]
    for p in procs:
        p.start()
    result = queue.get(timeout=600)
    for p in procs:
        p.join(60)
    if "error" not in result:
        e, g = result["systems"]["eager"]["median_ms"], result["systems"]["torchair_ge"]["median_ms"]
        log(f"  tensor-parallel MLP (2 ranks): eager {e:.3f} ms, torchair_ge {g:.3f} ms ({g / e:.2f}x), "
            f"communication hidden {100 * result['hidden_share']:.0f}%")
    result["description"] = (f"2 ranks (gloo, one thread each), 2 micro-batches of {TP_TOKENS} tokens, dim {TP_DIM}, "
                             f"hidden {TP_HIDDEN} split column/row-parallel, one all-reduce per micro-batch")
    return result


def run(quick=False, log=print, models=None):
    names = models or (QUICK_MODELS if quick else MODELS)
    return {"models": [run_model(n, quick, log) for n in names], "tensor_parallel": run_tensor_parallel(quick, log)}


def markdown(results):
    lines = ["", "## Streams", "",
             "The engine's streams (`stream_replay=\"always\"`) vs one stream (`enable_single_stream`): medians of "
             "interleaved rounds; streams split the intra-op threads evenly, one stream has them all. ONNX Runtime "
             "sequential and parallel execution mode (2 inter-op threads, the intra-op threads split) as the anchor.",
             "", "| model | streams | one stream ms | streams ms | streams / one | ORT ms | ORT parallel ms |",
             "|---|---|---|---|---|---|---|"]
    for row in results["models"]:
        s = row["systems"]
        ort = s.get("onnxruntime", {}).get("median_ms")
        par = s.get("onnxruntime_parallel", {}).get("median_ms")
        lines.append(f"| {row['name']} | {row['streams']} | {s['one stream']['median_ms']:.3f} | "
                     f"{s['streams']['median_ms']:.3f} | {row['streams_vs_one']:.2f} | "
                     f"{f'{ort:.3f}' if ort else '—'} | {f'{par:.3f}' if par else '—'} |")
    tp = results["tensor_parallel"]
    lines += ["", f"Tensor-parallel MLP: {tp['description']}.", ""]
    if "error" in tp:
        lines.append(f"failed: {tp['error']}")
    else:
        e, g = tp["systems"]["eager"]["median_ms"], tp["systems"]["torchair_ge"]["median_ms"]
        lines.append("| step | eager ms | torchair_ge ms | ratio | communication hidden behind compute |")
        lines.append("|---|---|---|---|---|")
        lines.append(f"| forward | {e:.3f} | {g:.3f} | {g / e:.2f} | {100 * tp['hidden_share']:.0f}% |")
    return lines


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m bench.streams", description=__doc__)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    results = run(args.quick)
    print(f"CPU: {machine.describe()['model']}")
    for line in markdown(results):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
