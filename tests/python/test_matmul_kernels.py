"""MatMulV2 on the CPU device: oneDNN's inner product above a size threshold, at::mm below it
(csrc/devices/cpu/kernels/onednn_linear.cc). Both must give eager's numbers for every weight
layout, with and without bias, with the weight as a graph input or a frozen constant."""
import pytest
import torch

import torchair_ge
from conftest import check_against_eager

# (rows, in, out): below the thresholds, just above, bert- and llama-sized projections, odd sizes, a
# decode step (one row, a large weight).
SHAPES = [(8, 32, 16), (128, 128, 256), (64, 512, 1408), (37, 300, 1001), (1, 512, 1536)]


def frozen_config(frozen):
    config = torchair_ge.CompilerConfig()
    config.experimental_config.frozen_parameter = frozen
    return config


@pytest.mark.parametrize("rows,cin,cout", SHAPES)
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("frozen", [False, True])
def test_linear_matches_eager(rows, cin, cout, bias, frozen):
    torch.manual_seed(0)
    model = torch.nn.Linear(cin, cout, bias=bias).eval()
    check_against_eager(model, torch.randn(rows, cin), config=frozen_config(frozen))


@pytest.mark.parametrize("frozen", [False, True])
def test_weight_in_k_by_n_layout_matches_eager(frozen):
    """x @ W with W stored [in, out]: the weight reaches the kernel untransposed."""
    torch.manual_seed(0)

    class KByN(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = torch.nn.Parameter(torch.randn(384, 640) / 20)

        def forward(self, x):
            return torch.relu(x @ self.weight) + 1

    check_against_eager(KByN().eval(), torch.randn(96, 384), config=frozen_config(frozen))


def test_three_d_activations_match_eager():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(256, 1024), torch.nn.GELU(), torch.nn.Linear(1024, 256)).eval()
    check_against_eager(model, torch.randn(2, 64, 256))


def test_weight_updated_between_runs_is_read_again():
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
