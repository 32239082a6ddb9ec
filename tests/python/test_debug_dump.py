"""Graph dumps in every format, for every bench zoo model: onnx passes onnx.checker with one
node per IR node, py replays into a graph with the same node count and outputs, txt parses
back to the same text; the final dump carries engine, stream, memory and FX origin."""
import os
import re
import runpy

import onnx
import pytest
import torch

import torchair_ge
from bench import models as zoo
from torchair_ge import _C
from torchair_ge.concrete_graph import ConcreteGraph
from torchair_ge.engine import default_session, next_graph_id
from conftest import check_against_eager

DUMP_NAME = re.compile(r"graph_(\d+)_pid(\d+)_(\d\d(?:\.\d+)?)_(\w+?)(?:_\d+)?\.(txt|onnx|pbtxt|py|dot)$")
# resnet_b8 is resnet_b1's graph with another batch size.
MODELS = [e for e in zoo.get() if e.name != "resnet_b8"]


def compile_and_capture(entry, config, monkeypatch):
    """Compiles and runs a zoo model; returns (ConcreteGraph, the engine inputs of its run)."""
    captured = {}
    original_call = ConcreteGraph.__call__

    def recording_call(self, args):
        captured.setdefault("graph", self)
        captured.setdefault("args", [a.clone() if isinstance(a, torch.Tensor) else a for a in args])
        return original_call(self, args)

    monkeypatch.setattr(ConcreteGraph, "__call__", recording_call)
    model, inputs = entry.build()
    with torch.no_grad():
        expected = model(*inputs)
        model2, inputs2 = entry.build()
        got = torch.compile(model2, backend=torchair_ge.get_npu_backend(compiler_config=config), dynamic=False,
                            fullgraph=True)(*inputs2)
    torch.testing.assert_close(got, expected, rtol=1e-3, atol=1e-3)
    return captured["graph"], captured["args"]


def dumps_by_stage(path):
    out = {}
    for name in os.listdir(path):
        m = DUMP_NAME.match(name)
        if m:
            assert int(m.group(2)) == os.getpid()
            out.setdefault(m.group(4), {})[m.group(5)] = os.path.join(path, name)
    return out


@pytest.mark.parametrize("entry", MODELS, ids=lambda e: e.name)
def test_every_format_for_zoo_models(entry, tmp_path, monkeypatch):
    config = torchair_ge.CompilerConfig()
    config.debug.graph_dump.type = ["txt", "onnx", "pbtxt", "py", "dot"]
    config.debug.graph_dump.level = "key"
    config.debug.graph_dump.path = str(tmp_path)
    graph, args = compile_and_capture(entry, config, monkeypatch)
    stages = dumps_by_stage(tmp_path)
    assert set(stages) == {"original", "optimize_stage2", "final"}, stages
    nodes = {st["name"]: st["nodes_after"] for st in graph.summary["stages"]}
    nodes["original"] = graph.summary["stages"][0]["nodes_before"]

    for stage, files in stages.items():
        assert set(files) == {"txt", "onnx", "pbtxt", "py", "dot"}
        model = onnx.load(files["onnx"])
        onnx.checker.check_model(model)
        assert len(model.graph.node) == nodes[stage]
        # pbtxt is the same model in text form.
        from google.protobuf import text_format
        assert text_format.Parse(open(files["pbtxt"]).read(), onnx.ModelProto()) == model
        text = open(files["txt"]).read()
        assert _C.graph_from_text(text, zero_elided_constants=True).to_text() == text
        assert open(files["dot"]).read().startswith("digraph")

    # The final graph says where every kernel node runs, its memory and where it came from.
    final = open(stages["final"]["txt"]).read()
    for annotation in ("_engine", "_stream", "_mem_offsets", "_mem_sizes", "_placement", "_fx_node", "_source"):
        assert f'key: "{annotation}"' in final, annotation

    # The py dump of the original graph replays into a graph that computes the same outputs.
    replayed = runpy.run_path(stages["original"]["py"])["build"]()
    assert replayed.num_nodes == nodes["original"]
    session, gid = default_session(), next_graph_id()
    session.add_graph(gid, replayed)
    session.compile_graph(gid)
    ours = session.run_graph(gid, [a.clone() for a in args])
    theirs = session.run_graph(graph._graph_id, [a.clone() for a in args])
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        torch.testing.assert_close(a, b, rtol=0, atol=0)
    session.remove_graph(gid)


def test_source_lines_reach_the_dumps(tmp_path):
    def f(x):
        y = torch.sigmoid(x) * 3  # the line the dump must show
        return y.sum(dim=0)

    config = torchair_ge.CompilerConfig()
    config.debug.graph_dump.type = "onnx"
    config.debug.graph_dump.level = "final"
    config.debug.graph_dump.path = str(tmp_path)
    config.experimental_config.enable_autofuse = False  # one ONNX node per op (fused: see the FusedKernel node)
    check_against_eager(f, torch.randn(4, 5), config=config)
    (path,) = tmp_path.iterdir()
    model = onnx.load(str(path))
    docs = {n.op_type: n.doc_string for n in model.graph.node}
    assert re.match(r"test_debug_dump.py:\d+ \| y = torch.sigmoid\(x\) \* 3", docs["Sigmoid"]), docs
    meta = {n.op_type: {p.key: p.value for p in n.metadata_props} for n in model.graph.node}
    assert meta["Sigmoid"]["_engine"] == "native" and meta["Sigmoid"]["_stream"] == "0"
    assert meta["Sigmoid"]["_fx_node"] == "sigmoid"


def test_dumps_of_two_graphs_never_overwrite(tmp_path):
    config = torchair_ge.CompilerConfig()
    config.debug.graph_dump.type = "txt"
    config.debug.graph_dump.level = "final"
    config.debug.graph_dump.path = str(tmp_path)
    check_against_eager(lambda x: x + 1, torch.randn(3), config=config)
    torch._dynamo.reset()
    check_against_eager(lambda x: x * 2, torch.randn(3), config=config)
    names = sorted(p.name for p in tmp_path.iterdir())
    assert len(names) == 2 and len({DUMP_NAME.match(n).group(1) for n in names}) == 2, names


def test_graph_from_text_rejects_garbage():
    with pytest.raises(_C.GeError, match="does not parse"):
        _C.graph_from_text("op { name: ")
    with pytest.raises(_C.GeError, match="names no earlier node"):
        _C.graph_from_text('op { name: "r" type: "Relu" input: "ghost:0" output_desc { dtype: "DT_FLOAT" } }')
