"""torchair_ge quick start (what `make demo` runs).

Compiles an MLP and a small ResNet-style CNN with the torchair_ge backend, checks the outputs
against eager PyTorch, times both, runs a BERT-style encoder over several sequence lengths under
default torch.compile (dynamic shapes), and shows the graph dump of the compiled CNN."""
import logging
import os
import re
import statistics
import sys
import tempfile
import time

import torch

import torchair_ge

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from bench.models import bert  # noqa: E402  (the benchmark zoo's models)
from bench import machine  # noqa: E402
from bench.models.mlp import MLP  # noqa: E402
from bench.models.resnet import small_resnet  # noqa: E402


def median_ms(eager, compiled, x, repeats=30):
    """Median milliseconds of each, the calls alternating: a machine that speeds up or slows
    down while the example runs (a shared VM does) weighs on both alike."""
    for _ in range(3):
        eager(x)
        compiled(x)
    times = {eager: [], compiled: []}
    for _ in range(repeats):
        for fn in (eager, compiled):
            start = time.perf_counter()
            fn(x)
            times[fn].append((time.perf_counter() - start) * 1e3)
    return statistics.median(times[eager]), statistics.median(times[compiled])


def run(name, model, x, config):
    backend = torchair_ge.get_npu_backend(compiler_config=config)
    compiled = torch.compile(model, backend=backend, dynamic=False)
    with torch.no_grad():
        expected, got = model(x), compiled(x)
        torch.testing.assert_close(got, expected)  # default fp32 tolerances
        eager_ms, compiled_ms = median_ms(model, compiled, x)
    max_diff = (got - expected).abs().max().item()
    print(f"{name:<28} max |compiled - eager| = {max_diff:.2e}   eager {eager_ms:7.3f} ms   "
          f"torchair_ge {compiled_ms:7.3f} ms   ({eager_ms / compiled_ms:.2f}x)")
    for report in backend.compiler.reports:  # docs/autofuse.md
        fused = report["autofuse"]
        print(f"{'':<28} {report['tasks']} kernels per run; auto-fusion made {fused['kernels']} generated kernels "
              f"from {fused['fused_nodes']} nodes ({'kernel cache hit' if fused['cache_hit'] else 'compiled'}"
              f"{'; ' + fused['fallback'] if fused['fallback'] else ''})")


def until_compiled(compiled, inputs, report, seq):
    """Calls `compiled` until length `seq` has its engine instance (a static graph has it)."""
    for _ in range(1000):
        instances = report.get("shape_instances")
        if instances is None or any(i["sizes"].endswith(f"={seq}") for i in instances):
            return
        compiled(*inputs)


def run_dynamic(lengths=(16, 24, 40, 64)):
    """Default torch.compile: the second sequence length makes Dynamo recompile once with a
    symbolic length; every further length runs that graph: in eager PyTorch until the time spent
    on the length pays for compiling its engine instance (docs/dynamic_shapes.md)."""
    model = bert.build(batch=2, seq=lengths[0])[0]
    backend = torchair_ge.get_npu_backend()
    compiled = torch.compile(model, backend=backend)
    with torch.no_grad():
        for seq in lengths:
            _, inputs = bert.build(batch=2, seq=seq)
            expected = model(*inputs)
            torch.testing.assert_close(compiled(*inputs), expected, rtol=1e-4, atol=1e-4)
            until_compiled(compiled, inputs, backend.compiler.reports[-1], seq)  # checked and timed: the engine's runs
            got = compiled(*inputs)
            torch.testing.assert_close(got, expected, rtol=1e-4, atol=1e-4)
            eager_ms, compiled_ms = median_ms(lambda x: model(*x), lambda x: compiled(*x), inputs, 10)
            print(f"{'BERT encoder, seq ' + str(seq):<28} max |compiled - eager| = {(got - expected).abs().max().item():.2e}"
                  f"   eager {eager_ms:7.3f} ms   torchair_ge {compiled_ms:7.3f} ms   ({eager_ms / compiled_ms:.2f}x)")
    symbolic = backend.compiler.reports[-1]
    print(f"{'':<28} {len(backend.compiler.reports)} graphs compiled; symbolic: {symbolic['symbolic']}; engine "
          f"instances: " + ", ".join(f"{i['sizes']} ({i['compile_ms']:.0f} ms)" for i in symbolic["shape_instances"])
          + f"; {symbolic.get('eager_runs', 0)} calls ran in eager PyTorch before their length's instance paid")


def main():
    logging.basicConfig(format="  [%(name)s] %(message)s")
    logging.getLogger("torchair_ge").setLevel(logging.INFO)
    torch.manual_seed(0)
    dump_dir = os.environ.get("TORCHAIR_GE_DEMO_DUMP", os.path.join(tempfile.gettempdir(), "torchair_ge_demo"))
    os.makedirs(dump_dir, exist_ok=True)
    for f in os.listdir(dump_dir):
        os.remove(os.path.join(dump_dir, f))

    # The CPU beside every figure: a speed-up on one CPU can be a slow-down on another.
    print(f"torchair_ge {torchair_ge.__version__} on torch {torch.__version__}, {torch.get_num_threads()} threads")
    print(f"CPU: {machine.summary(machine.describe(torch.get_num_threads()))}\n")
    run("MLP (4x256, batch 64)", MLP(width=256, in_features=64).eval(), torch.randn(64, 64), torchair_ge.CompilerConfig())

    config = torchair_ge.CompilerConfig()
    config.debug.graph_dump.type = ["txt", "onnx", "dot"]  # docs/debugging.md
    config.debug.graph_dump.level = "key"                  # original, optimized, final
    config.debug.graph_dump.path = dump_dir
    run("ResNet-style CNN (2x3x64x64)", small_resnet(), torch.randn(2, 3, 64, 64), config)
    run_dynamic()

    dumps = sorted(os.listdir(dump_dir))
    print(f"\nGraph dumps of the CNN in {dump_dir} (open the .onnx in Netron, render the .dot with Graphviz):")
    print("  " + "\n  ".join(dumps))
    final_txt = next(d for d in dumps if d.endswith("_final.txt"))
    final = open(os.path.join(dump_dir, final_txt)).read()
    # (a convolution with its batch norm, residual add and ReLU folded in is a FusedConv2D)
    conv = re.search(r'type: "(Fused)?Conv2D"', final)
    first_op = final.index("op {", conv.start() - 200)
    print(f"The first {conv.group(0)[7:-1]} of the final graph (engine, stream, arena offset and source line per "
          "node):")
    print("  " + "\n  ".join(final[first_op:].splitlines()[:62]))
    print("\nOK: compiled outputs match eager.")


if __name__ == "__main__":
    main()
