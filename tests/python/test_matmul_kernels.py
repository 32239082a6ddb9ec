"""MatMulV2 on the CPU device: oneDNN's inner product (or, for up to 256 rows, oneDNN's product of
the transposes, transposed back), at::mm (MKL, whole or in column blocks over the threads) or, for
a few rows, weight-row streaming, whichever measured fastest for the shape
on this CPU (csrc/devices/cpu/kernels/kernel_choice.h). Each path, forced with TORCHAIR_GE_CPU_MATMUL, must
give eager's numbers for every weight layout, with and without bias, with the weight as a graph
input or a frozen constant; the measured choice is reported."""
import json
import os
import subprocess
import sys

import pytest
import torch

import torchair_ge
from conftest import check_against_eager

# (rows, in, out): tiny, mid-sized, bert- and llama-sized projections, odd sizes, a decode step
# (one row, a large weight); in=59 ends each weight row of the few-row kernels (gemv,
# gemv_interleaved) with one whole vector and a scalar tail on AVX-512 and on AVX2, and 1001 and 33
# outputs end in a partial group of gemv_interleaved's eight weight rows (its four for 5 and 6
# input rows, three for 7 and 8: (5, 300, 1001), (7, 59, 100), (8, 32, 16) a batched decode step);
# (512, 141, 4) and (33, 16, 1) are an MMoE gate and tower (few_columns: many rows, a few outputs,
# depths ending in a partial vector or not).
SHAPES = [(8, 32, 16), (128, 128, 256), (64, 512, 1408), (37, 300, 1001), (1, 512, 1536), (3, 300, 1001),
          (5, 300, 1001), (7, 59, 100), (4, 129, 7), (2, 59, 33), (512, 141, 4), (33, 16, 1)]


def frozen_config(frozen):
    config = torchair_ge.CompilerConfig()
    config.experimental_config.frozen_parameter = frozen
    return config


@pytest.fixture(params=["mkl", "mkl_columns", "onednn", "onednn_transposed", "gemv", "gemv_interleaved", "few_columns",
                        "measure"])
def product_kernel(request, monkeypatch):
    monkeypatch.setenv("TORCHAIR_GE_CPU_MATMUL", request.param)
    return request.param


@pytest.mark.parametrize("rows,cin,cout", SHAPES)
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("frozen", [False, True])
def test_linear_matches_eager(rows, cin, cout, bias, frozen, product_kernel):
    torch.manual_seed(0)
    model = torch.nn.Linear(cin, cout, bias=bias).eval()
    check_against_eager(model, torch.randn(rows, cin), config=frozen_config(frozen))


@pytest.mark.parametrize("frozen", [False, True])
def test_weight_in_k_by_n_layout_matches_eager(frozen, product_kernel):
    """x @ W with W stored [in, out]: the weight reaches the kernel untransposed."""
    torch.manual_seed(0)

    class KByN(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = torch.nn.Parameter(torch.randn(384, 640) / 20)

        def forward(self, x):
            return torch.relu(x @ self.weight) + 1

    check_against_eager(KByN().eval(), torch.randn(96, 384), config=frozen_config(frozen))


def test_three_d_activations_match_eager(product_kernel):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(256, 1024), torch.nn.GELU(), torch.nn.Linear(1024, 256)).eval()
    check_against_eager(model, torch.randn(2, 64, 256))


def test_weight_updated_between_runs_is_read_again(product_kernel):
    """A parameter that is a graph input (not frozen) may change between calls: the kernel must not
    keep a prepared copy of it."""
    torch.manual_seed(0)
    model = torch.nn.Linear(512, 512).eval()
    x = torch.randn(64, 512)
    compiled = torch.compile(model, backend=torchair_ge.get_npu_backend(), dynamic=False, fullgraph=True)
    with torch.no_grad():
        torch.testing.assert_close(compiled(x), model(x))
        model.weight.mul_(-2.0)
        torch.testing.assert_close(compiled(x), model(x))


def test_the_measured_choice_is_reported(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCHAIR_GE_CACHE_DIR", str(tmp_path))  # no decision stored by an earlier run
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(256, 768), torch.nn.ReLU(), torch.nn.Linear(768, 256)).eval()
    backend = torchair_ge.get_npu_backend(compiler_config=frozen_config(True))
    compiled = torch.compile(model, backend=backend, dynamic=False)
    x = torch.randn(48, 256)
    with torch.no_grad():
        torch.testing.assert_close(compiled(x), model(x))
    choices = backend.compiler.reports[0]["kernel_choices"]
    keys = [c["key"] for c in choices]
    assert any("48x256x768" in k and "const-weight" in k for k in keys), keys
    for choice in choices:
        assert set(choice["best_us"]) == {"mkl", "mkl_columns", "onednn", "onednn_transposed"}
        assert choice["winner"] in choice["best_us"]
        # every candidate ran at compile time, mkl_columns' ATen calls on the pool's threads too
        # (the compiling frontend's Python dispatcher is kept out of the timing)
        assert all(0 < us < float("inf") for us in choice["best_us"].values()), choice
        assert choice["best_us"][choice["winner"]] == min(choice["best_us"].values())
        assert choice["measure_us"] > 0


def test_instances_of_a_symbolic_graph_share_the_decision_of_a_size_class(tmp_path, monkeypatch):
    """Each instance of a graph with symbolic sizes would otherwise time every product of a new
    row count again (~20 ms each): there, a dim above a few rows is keyed by its power-of-two
    class. A static graph keeps the exact size."""
    monkeypatch.setenv("TORCHAIR_GE_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("TORCHAIR_GE_NEW_SHAPE_POLICY", "compile")
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(200, 300), torch.nn.ReLU()).eval()
    backend = torchair_ge.get_npu_backend()
    compiled = torch.compile(model, backend=backend, dynamic=True)
    with torch.no_grad():
        for rows in (70, 100, 128, 129):
            x = torch.randn(rows, 200)
            torch.testing.assert_close(compiled(x), model(x))
    (report,) = backend.compiler.reports
    assert len(report["shape_instances"]) == 4
    keys = [c["key"] for c in report["kernel_choices"]]  # the first instance's (rows 70)
    assert any("(64..128]x(128..256]x(256..512]" in k for k in keys), keys
    # rows 100 and 128 reused the decision for rows 70; rows 129 is the next class
    dims = [c["key"].split()[2] for c in torchair_ge._C.cpu_kernel_choices() if "x(128..256]x(256..512]" in c["key"]]
    assert sorted(dims) == ["(128..256]x(128..256]x(256..512]", "(64..128]x(128..256]x(256..512]"], dims
    static = torchair_ge.get_npu_backend()
    with torch.no_grad():
        x = torch.randn(100, 200)
        torch.testing.assert_close(torch.compile(model, backend=static, dynamic=False)(x), model(x))
    assert any("100x200x300" in c["key"] for c in static.compiler.reports[0]["kernel_choices"])


@pytest.mark.parametrize("rows", [1, 4, 8])
def test_decode_products_race_weight_row_streaming(rows, tmp_path, monkeypatch):
    """A few rows (a decode step, of up to eight sequences) against an nn.Linear weight:
    weight-row streaming, one row at a time (gemv) and several side by side (gemv_interleaved),
    are timed candidates, with the bias and the activation of a FusedMatMul."""
    monkeypatch.setenv("TORCHAIR_GE_CACHE_DIR", str(tmp_path))
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(333, 1029), torch.nn.GELU(approximate="tanh")).eval()
    backend = torchair_ge.get_npu_backend()
    x = torch.randn(rows, 333)
    with torch.no_grad():
        torch.testing.assert_close(torch.compile(model, backend=backend, dynamic=False)(x), model(x))
    (choice,) = [c for c in backend.compiler.reports[0]["kernel_choices"] if f"{rows}x333x1029" in c["key"]]
    assert set(choice["best_us"]) == {"mkl", "mkl_columns", "onednn", "onednn_transposed", "gemv",
                                      "gemv_interleaved"}, choice


def test_few_output_columns_race_the_few_columns_kernel(tmp_path, monkeypatch):
    """Many rows and a few outputs (an MMoE gate over 4 experts with its softmax, a tower's logit
    with its sigmoid): dotting each row with every weight row at once (few_columns) is one of the
    timed candidates, with the bias and the activation of a FusedMatMul."""
    monkeypatch.setenv("TORCHAIR_GE_CACHE_DIR", str(tmp_path))
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(141, 4), torch.nn.Sigmoid()).eval()
    backend = torchair_ge.get_npu_backend()
    x = torch.randn(512, 141)
    with torch.no_grad():
        torch.testing.assert_close(torch.compile(model, backend=backend, dynamic=False)(x), model(x))
    (choice,) = [c for c in backend.compiler.reports[0]["kernel_choices"] if "512x141x4" in c["key"]]
    assert "few_columns" in choice["best_us"] and not any(k.startswith("gemv") for k in choice["best_us"]), choice


_CHOOSE_IN_A_NEW_PROCESS = """
import json, torch, torchair_ge
model = torch.nn.Linear(320, 640).eval()
backend = torchair_ge.get_npu_backend()
with torch.no_grad():
    x = torch.randn(24, 320)
    torch.testing.assert_close(torch.compile(model, backend=backend, dynamic=False)(x), model(x))
print(json.dumps(backend.compiler.reports[0]["kernel_choices"]))
"""


def test_a_later_process_starts_with_the_stored_choice(tmp_path):
    env = {**os.environ, "TORCHAIR_GE_CACHE_DIR": str(tmp_path)}
    runs = [json.loads(subprocess.run([sys.executable, "-c", _CHOOSE_IN_A_NEW_PROCESS], env=env, check=True,
                                      capture_output=True, text=True).stdout.splitlines()[-1]) for _ in range(2)]
    (first,), (second,) = runs
    assert "24x320x640" in first["key"] and not first["from_disk"] and first["measure_us"] > 0
    assert second["key"] == first["key"]
    times = sorted(first["best_us"].values())
    if times[0] * 1.1 <= times[1]:  # a clear win is stored and taken as it is
        assert second["from_disk"] and second["measure_us"] == 0
        assert second["winner"] == first["winner"]  # the decision, not a new race
        assert list(tmp_path.glob("kernel_choices/*.tsv"))
    else:  # a close race (within 10%) is timed again
        assert not second["from_disk"] and second["measure_us"] > 0


def test_a_bad_setting_is_a_clear_error(monkeypatch):
    monkeypatch.setenv("TORCHAIR_GE_CPU_MATMUL", "fastest")
    compiled = torch.compile(torch.nn.Linear(64, 64).eval(), backend=torchair_ge.get_npu_backend(), dynamic=False)
    expected = ("TORCHAIR_GE_CPU_MATMUL='fastest': expected one of measure, mkl, mkl_columns, onednn, onednn_transposed, "
                "gemv, gemv_interleaved, few_columns")
    with pytest.raises(Exception, match=expected):
        with torch.no_grad():
            compiled(torch.randn(4, 64))


def test_timing_products_leaves_the_users_random_stream_alone():
    """Choosing a product kernel times candidates when an engine instance loads; that must not
    draw from torch's global generator (a seeded script would get other numbers once compiled).
    A new batch size of a symbolic graph loads its instance during the call, outside Dynamo's
    compile (which restores the generator itself)."""
    model = torch.nn.Linear(320, 96).eval()
    compiled = torch.compile(model, backend=torchair_ge.get_npu_backend(), dynamic=True)
    with torch.no_grad():
        compiled(torch.ones(24, 320))
        state = torch.get_rng_state()
        out = compiled(torch.ones(41, 320))  # a new instance, a product shape not timed before
    assert torch.equal(torch.get_rng_state(), state)
    torch.testing.assert_close(out, model(torch.ones(41, 320)))


@pytest.mark.parametrize("activation", [torch.nn.ReLU(), torch.nn.GELU(), torch.nn.GELU(approximate="tanh"),
                                        torch.nn.Sigmoid(), torch.nn.Tanh(), torch.nn.SiLU()])
@pytest.mark.parametrize("frozen", [False, True])
@pytest.mark.parametrize("bias", [True, False])
def test_a_nan_goes_through_every_epilogue_as_in_eager(activation, frozen, bias, product_kernel):
    """torch's activations propagate NaN; oneDNN's ReLU post-op would turn it into 0 (the product
    applies ReLU after oneDNN's primitive instead). Without a bias, onednn_transposed applies the
    activation as its primitive's post-op; with one, after the bias."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(40, 24, bias=bias), activation).eval()
    x = torch.randn(3, 40)
    x[1, 7] = float("nan")
    compiled = torch.compile(model, backend=torchair_ge.get_npu_backend(compiler_config=frozen_config(frozen)),
                             dynamic=False)
    with torch.no_grad():
        expected = model(x)
        assert expected.isnan().any()
        torch.testing.assert_close(compiled(x), expected, equal_nan=True)
