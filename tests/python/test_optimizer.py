"""The graph optimizer end to end: zoo models give eager's numbers at every optimizer level and
with passes switched off; what the passes did is reported; matrix transposes feeding products
are gone from the transformer models."""
import codecs
import re

import numpy as np

import pytest
import torch

import torchair_ge
from bench import models as zoo
from torchair_ge import _C
from conftest import check_against_eager

ALL_OFF = ";".join(f"{name}:off" for name in _C.optimizer_passes())
MODELS = ["mlp", "resnet_b1", "bert", "gpt_decode", "llama_block", "mmoe", "tiny_chain"]


def compile_zoo(name, config):
    model, inputs = zoo.ZOO[name].build()
    with torch.no_grad():
        expected = model(*inputs)
    fresh_model, fresh_inputs = zoo.ZOO[name].build()
    backend = torchair_ge.get_npu_backend(compiler_config=config)
    with torch.no_grad():
        got = torch.compile(fresh_model, backend=backend, dynamic=False, fullgraph=True)(*fresh_inputs)
    torch.testing.assert_close(got, expected, rtol=1e-3, atol=1e-3)
    (report,) = backend.compiler.reports
    return report, backend


@pytest.mark.parametrize("setting", ["O3", "O1", "all_off"])
@pytest.mark.parametrize("name", MODELS)
def test_zoo_models_match_eager_at_every_level(name, setting):
    config = torchair_ge.CompilerConfig()
    if setting == "all_off":
        config.ge_config.optimization_switch = ALL_OFF
        config.experimental_config.enable_autofuse = False  # the graph stays exactly as converted
    else:
        config.ge_config.oo_level = setting
    report, _ = compile_zoo(name, config)
    if setting == "all_off":
        assert report["passes_fired"] == {} and report["ir_nodes_after"] == report["ir_nodes_before"]
    else:
        assert report["ir_nodes_after"] < report["ir_nodes_before"], report["passes_fired"]


def test_single_switches_and_options_reach_the_engine():
    config = torchair_ge.CompilerConfig()
    config.experimental_config.enable_autofuse = False  # kernels counted as the optimizer leaves them
    config.ge_config.optimization_switch = "TransposeMatMulFold:off"
    report, _ = compile_zoo("mlp", config)
    assert "TransposeMatMulFold" not in report["passes_fired"] and report["ir_ops"]["Transpose"] == 4
    assert report["tasks"] == 12  # as converted: 4 x (Transpose, MatMulV2, Relu)
    config = torchair_ge.CompilerConfig()
    config.experimental_config.enable_autofuse = False
    report, _ = compile_zoo("mlp", config)
    assert report["passes_fired"]["TransposeMatMulFold"] > 0 and report["tasks"] == 8
    with pytest.raises(ValueError, match="PassName:on"):
        config.ge_config.optimization_switch = "TransposeMatMulFold"
    with pytest.raises(ValueError,
                       match="unknown pass 'NoSuchPass' \\(passes and rewrite rules: .*TransposeMatMulFold.*RotaryMul"):
        config.ge_config.optimization_switch = "NoSuchPass:off"  # refused when set, not at compile


def _parse_ops(graph_text):
    """{name: (type, [input node names], int64 constant values or None)} from a txt dump."""
    ops = {}
    for block in re.split(r"\nop \{\n", "\n" + graph_text)[1:]:
        name = re.search(r'^  name: "([^"]+)"', block, re.M).group(1)
        op_type = re.search(r'^  type: "([^"]+)"', block, re.M).group(1)
        inputs = re.findall(r'^  input: "([^":]+):\d+"', block, re.M)
        data = re.search(r'dtype: "DT_INT64"[^}]*}\s*data: "((?:[^"\\]|\\.)*)"', block)
        values = None
        if op_type == "Const" and data:
            values = np.frombuffer(codecs.escape_decode(data.group(1))[0], dtype=np.int64).tolist()
        ops[name] = (op_type, inputs, values)
    return ops


def matrix_transposes_feeding_products(graph_text):
    """Transposes that swap only the last two dims and reach a MatMulV2/BatchMatMulV2 directly or
    through per-matrix Identity/Reshape/BroadcastTo links: work a transpose flag could do."""
    ops = _parse_ops(graph_text)
    users = {}
    for name, (_, inputs, _) in ops.items():
        for src in inputs:
            users.setdefault(src, []).append(name)
    found = 0
    for name, (op_type, inputs, _) in ops.items():
        perm = ops[inputs[1]][2] if op_type == "Transpose" else None
        if not perm or perm[:-2] != list(range(len(perm) - 2)) or perm[-2:] != [len(perm) - 1, len(perm) - 2]:
            continue
        frontier = [name]
        while frontier:
            for user in users.get(frontier.pop(), []):
                if ops[user][0] in ("MatMulV2", "BatchMatMulV2"):
                    found += 1
                elif ops[user][0] in ("Identity", "Reshape", "BroadcastTo"):
                    frontier.append(user)
    return found


@pytest.mark.parametrize("name", ["bert", "llama_block"])
def test_no_matrix_transpose_feeds_a_product(name, tmp_path):
    counts = {}
    for folded in (False, True):
        config = torchair_ge.CompilerConfig()
        config.debug.graph_dump.type = "txt"
        config.debug.graph_dump.level = "final"
        config.debug.graph_dump.path = str(tmp_path / str(folded))
        config.experimental_config.enable_autofuse = False  # transposes stay nodes of their own
        if not folded:
            config.ge_config.optimization_switch = "TransposeMatMulFold:off"
        torch._dynamo.reset()
        compile_zoo(name, config)
        (dump,) = (tmp_path / str(folded)).iterdir()
        counts[folded] = matrix_transposes_feeding_products(dump.read_text())
    assert counts[False] > 0, "the model should need the fold"
    assert counts[True] == 0, counts


def test_frozen_parameters_fold_batchnorm_away(tmp_path):
    config = torchair_ge.CompilerConfig()
    config.experimental_config.frozen_parameter = True
    config.debug.graph_dump.type = "txt"
    config.debug.graph_dump.level = "final"
    config.debug.graph_dump.path = str(tmp_path)
    report, _ = compile_zoo("resnet_b1", config)
    assert report["frozen_inputs"] > 100 and report["ir_ops"]["BatchNorm"] == 20
    assert report["passes_fired"]["BatchNormFold"] > 0
    (dump,) = tmp_path.iterdir()
    text = dump.read_text()
    assert 'type: "BatchNorm"' not in text
    # Every folded convolution runs channels-last, with its ReLU and residual add as its own
    # epilogue (FusedConv2D: all but the three downsampling convolutions, whose outputs are the
    # residuals; the last one as the producer of the pooling's fused kernel), and the numbers
    # still match eager (compile_zoo).
    fused = text.count('type: "FusedConv2D"') + text.count('s: "FusedConv2D:')
    plain = text.count('type: "Conv2D"') + text.count('s: "Conv2D:')
    assert fused + plain == report["ir_ops"]["Conv2D"] and plain == 3, (fused, plain, report["ir_ops"])
    assert text.count('s: "NHWC"') >= report["ir_ops"]["Conv2D"]
    # Parameters as graph inputs: no weight to fold into, so each norm becomes its convolution's
    # per-channel scale and shift (FusedConv2D's batch-norm inputs, read on every run) -- the same
    # number of tasks.
    unfrozen, _ = compile_zoo("resnet_b1", torchair_ge.CompilerConfig())
    assert report["tasks"] == unfrozen["tasks"] and unfrozen["frozen_inputs"] == 0


def test_frozen_parameters_leave_buffers_the_graph_writes_alone():
    config = torchair_ge.CompilerConfig()
    config.experimental_config.frozen_parameter = True
    model, inputs = zoo.ZOO["gpt_decode"].build()
    reference, ref_inputs = zoo.ZOO["gpt_decode"].build()
    backend = torchair_ge.get_npu_backend(compiler_config=config)
    compiled = torch.compile(model, backend=backend, dynamic=False)
    with torch.no_grad():
        for _ in range(2):  # the KV cache (a buffer written in place) must stay an input
            torch.testing.assert_close(compiled(*inputs), reference(*ref_inputs), rtol=1e-3, atol=1e-3)
    assert 0 < backend.compiler.reports[0]["frozen_inputs"]
    assert backend.compiler.reports[0]["mutated_inputs"]


def test_folded_frozen_values_are_compile_time_values_and_swapped_inputs_are_refused():
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.BatchNorm2d(4)).eval()
    torch.nn.init.uniform_(model[1].running_mean)
    config = torchair_ge.CompilerConfig()
    config.experimental_config.frozen_parameter = True
    backend = torchair_ge.get_npu_backend(compiler_config=config)
    backend.compiler.captured = []
    compiled = torch.compile(model, backend=backend, dynamic=False)
    x = torch.randn(1, 3, 8, 8)
    with torch.no_grad():
        before = compiled(x)
        torch.testing.assert_close(before, model(x))
        assert backend.compiler.reports[0]["passes_fired"]["BatchNormFold"] > 0
        model[1].running_mean.add_(1.0)  # folded into the conv weights at compile time: not seen
        torch.testing.assert_close(compiled(x), before)
    (_, _, graph) = backend.compiler.captured[0]
    swapped = [a.clone() for a in graph.recorded_inputs]  # same values, other tensors
    with pytest.raises(RuntimeError, match="frozen into the graph"):
        graph(swapped)


def test_grad_mode_graphs_are_not_frozen():
    config = torchair_ge.CompilerConfig()
    config.experimental_config.frozen_parameter = True
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU())
    backend = torchair_ge.get_npu_backend(compiler_config=config)
    x = torch.randn(3, 4)
    out = torch.compile(model, backend=backend, dynamic=False)(x)
    torch.testing.assert_close(out, model(x))
    assert all(r["frozen_inputs"] == 0 for r in backend.compiler.reports)


def test_user_fx_replacement_rewrites_the_graph_before_conversion():
    def search(x):
        return torch.exp(x) - 1

    def replace(x):
        return torch.expm1(x)

    handle = torchair_ge.register_replacement(search, replace, [torch.randn(8)])
    try:
        backend = torchair_ge.get_npu_backend()
        f = torch.compile(lambda a, b: (torch.exp(a * 2) - 1) * b + (torch.exp(b) - 1), backend=backend, dynamic=False)
        a, b = torch.randn(4, 5), torch.randn(4, 5)
        torch.testing.assert_close(f(a, b), torch.expm1(a * 2) * b + torch.expm1(b))
        report = backend.compiler.reports[0]
        assert report["fx_patterns"] == {handle.name: 2} and handle.matches == 2
        assert report["ir_ops"].get("Expm1") == 2 and "Exp" not in report["ir_ops"]
    finally:
        handle.remove()
    torch._dynamo.reset()
    backend = torchair_ge.get_npu_backend()
    torch.compile(lambda a: torch.exp(a) - 1, backend=backend, dynamic=False)(torch.randn(3))
    assert backend.compiler.reports[0]["fx_patterns"] == {}  # removed: no longer applied


def test_fx_replacement_extra_check_can_veto():
    def search(x, y):
        return x * y

    def replace(x, y):
        return y * x

    seen = []
    handle = torchair_ge.register_replacement(search, replace, [torch.randn(3), torch.randn(3)],
                                              name="commute", extra_check=lambda m: seen.append(m) or False)
    try:
        check_against_eager(lambda a, b: a * b + 1, torch.randn(3), torch.randn(3))
        assert seen and handle.matches == 0
        with pytest.raises(ValueError, match="already registered"):
            torchair_ge.register_replacement(search, replace, [torch.randn(3), torch.randn(3)], name="commute")
    finally:
        handle.remove()
    with pytest.raises(ValueError, match="every example input"):
        torchair_ge.register_replacement(lambda x, y: x + 1, lambda x, y: x + 1, [torch.randn(2), torch.randn(2)])
