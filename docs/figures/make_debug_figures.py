"""Regenerates the pictures of docs/debugging.md: the final graph of a small model rendered from
its `dot` dump (needs Graphviz's `dot`: apt-get install graphviz), and a profile trace drawn as a
timeline (matplotlib).  Run: python docs/figures/make_debug_figures.py"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))

import torchair_ge  # noqa: E402
from torchair_ge.debug import profile_report  # noqa: E402


class Block(torch.nn.Module):
    """A transformer-style MLP block: the example of docs/debugging.md."""

    def __init__(self, dim=64):
        super().__init__()
        self.norm = torch.nn.LayerNorm(dim)
        self.up = torch.nn.Linear(dim, 4 * dim)
        self.down = torch.nn.Linear(4 * dim, dim)

    def forward(self, x):
        h = self.up(self.norm(x))
        return x + self.down(torch.nn.functional.gelu(h))


def render_graph(out_png):
    dump_dir = tempfile.mkdtemp()
    config = torchair_ge.CompilerConfig()
    config.debug.graph_dump.type = "dot"
    config.debug.graph_dump.level = "final"
    config.debug.graph_dump.path = dump_dir
    model = torch.compile(Block().eval(), backend=torchair_ge.get_npu_backend(compiler_config=config), dynamic=False)
    with torch.no_grad():
        model(torch.randn(8, 64))
    (dot_file,) = [os.path.join(dump_dir, f) for f in os.listdir(dump_dir)]
    if not shutil.which("dot"):
        raise SystemExit("Graphviz `dot` is not installed (apt-get install graphviz)")
    subprocess.run(["dot", "-Tpng", "-Gdpi=80", dot_file, "-o", out_png], check=True)
    shutil.rmtree(dump_dir)


def render_trace(out_png):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    config = torchair_ge.CompilerConfig()
    config.profiling.enable = True
    torch._dynamo.reset()
    model = torch.compile(Block(256).eval(), backend=torchair_ge.get_npu_backend(compiler_config=config),
                          dynamic=False)
    x = torch.randn(64, 256)
    with torch.no_grad():
        model(x)
        profile_report()  # drop the first run
        for _ in range(3):
            model(x)
    report = profile_report()
    trace_dir = tempfile.mkdtemp()
    trace_path, _ = report.write(trace_dir)
    events = [e for e in json.load(open(trace_path))["traceEvents"] if e["ph"] == "X"]
    shutil.rmtree(trace_dir)
    kinds = sorted({e["name"] for e in events if e["cat"] != "graph"})
    colours = {k: plt.cm.tab20(i % 20) for i, k in enumerate(kinds)}
    fig, ax = plt.subplots(figsize=(11, 2.6))
    for e in events:
        if e["cat"] == "graph":
            ax.barh(1, e["dur"], left=e["ts"], height=0.5, color="#cccccc", edgecolor="#666666")
        else:
            ax.barh(0, e["dur"], left=e["ts"], height=0.8, color=colours[e["name"]], edgecolor="white", linewidth=0.3)
    ax.set_yticks([0, 1], ["tasks (stream 0)", "graph runs"])
    ax.set_xlabel("time (us)")
    ax.legend(handles=[plt.Rectangle((0, 0), 1, 1, color=colours[k]) for k in kinds], labels=kinds,
              ncol=min(len(kinds), 6), fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.35))
    ax.set_title("torchair_ge profile: 3 runs of an MLP block (trace JSON drawn as a timeline)", fontsize=9)
    fig.tight_layout()
    fig.savefig(out_png, dpi=90)
    print(report.table())


if __name__ == "__main__":
    render_graph(os.path.join(HERE, "debug_graph.png"))
    render_trace(os.path.join(HERE, "debug_trace.png"))
    print(f"wrote {HERE}/debug_graph.png and {HERE}/debug_trace.png")
