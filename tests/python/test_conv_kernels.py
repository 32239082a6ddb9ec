"""Channels-last Conv2D on the CPU device: ATen's channels-last convolution ("nhwc"), a detour
through NCHW copies ("nchw"), or a oneDNN convolution primitive of the engine's own, writing
into the task's buffer, on a weight reordered into its blocked layout -- once at load for a
constant weight ("onednn_packed", frozen parameters), again whenever its bytes change for a
weight that is a graph input ("onednn_repack"), or for few output pixels an im2col product that
streams the weight once, packed ("few_pixels") or as the model stores it ("few_pixels_unpacked")
-- whichever measured fastest for the shape on this
CPU (csrc/devices/cpu/kernels/channels_last_conv.h). Each kernel, forced with
TORCHAIR_GE_CPU_CONV, must give eager's numbers, also after the weights change; the measured
choice is reported; a forced oneDNN kernel calls no ATen convolution."""
import pytest
import torch
import torch.nn.functional as F
from torch import nn

import torchair_ge
from conftest import check_against_eager


class Block(nn.Module):
    """Stride, padding, a 1x1 projection, groups, dilation, batch norm and a residual: the window
    attributes the kernels must agree on, in a net the ChannelsLast pass keeps NHWC."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 5, 2, 2), nn.BatchNorm2d(16), nn.ReLU())
        self.conv1 = nn.Conv2d(16, 32, 3, 2, 1, bias=False)
        self.conv2 = nn.Conv2d(32, 32, 3, 1, 2, dilation=2, groups=4)
        self.down = nn.Conv2d(16, 32, 1, 2)
        self.bn = nn.BatchNorm2d(32)

    def forward(self, x):
        y = self.stem(x)
        return torch.relu(self.bn(self.conv2(torch.relu(self.conv1(y)))) + self.down(y))


def block():
    torch.manual_seed(0)
    model = Block()
    for bn in (model.stem[1], model.bn):
        nn.init.uniform_(bn.running_mean, -0.5, 0.5)
        nn.init.uniform_(bn.running_var, 0.5, 1.5)
    return model.eval()


def config(frozen):
    config = torchair_ge.CompilerConfig()
    config.experimental_config.frozen_parameter = frozen
    return config


@pytest.mark.parametrize("kernel", ["nhwc", "nchw", "onednn_packed", "onednn_repack", "onednn_folded",
                                    "onednn_packed_late", "onednn_repack_late", "onednn_folded_late", "measure"])
@pytest.mark.parametrize("frozen", [False, True])
@pytest.mark.parametrize("batch", [1, 3])
def test_each_kernel_matches_eager(kernel, frozen, batch, monkeypatch, tmp_path):
    monkeypatch.setenv("TORCHAIR_GE_CPU_CONV", kernel)
    if kernel == "measure":  # every candidate timed on scratch tensors (no decision stored by an
        # earlier run here): weights and biases that are inputs are not bound yet at load.
        monkeypatch.setenv("TORCHAIR_GE_CACHE_DIR", str(tmp_path))
    check_against_eager(block(), torch.randn(batch, 3, 33, 29), config=config(frozen), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("frozen", [False, True])
def test_an_empty_batch_runs_like_eager(frozen, monkeypatch):
    """oneDNN is never asked to plan for an empty tensor (it divides by the sizes): ATen runs it."""
    monkeypatch.delenv("TORCHAIR_GE_CPU_CONV", raising=False)
    check_against_eager(block(), torch.randn(0, 3, 33, 29), config=config(frozen), rtol=1e-4, atol=1e-4)


def _conv_ops_run(model, x, frozen):
    """The ATen/oneDNN operators the compiled model's run calls (the engine calls them through
    the dispatcher, which the profiler records)."""
    compiled = torch.compile(model, backend=torchair_ge.get_npu_backend(compiler_config=config(frozen)),
                             dynamic=False)
    with torch.no_grad():
        torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-4)
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
            compiled(x)
    return {e.key for e in prof.key_averages()}


@pytest.mark.parametrize("kernel,frozen", [("onednn_packed", True), ("onednn_repack", False),
                                          ("onednn_packed_late", True), ("onednn_repack_late", False)])
def test_a_forced_onednn_kernel_calls_no_aten_convolution(kernel, frozen, monkeypatch):
    """The engine's primitive (devices/onednn, checked against the definition by
    onednn_conv2d_test) is the only other way a convolution runs; a late kernel adds the
    residual and applies ReLU in a loop of its own, no ATen add either (a convolution without a
    residual runs its twin with the post-ops)."""
    monkeypatch.setenv("TORCHAIR_GE_CPU_CONV", kernel)
    ops = _conv_ops_run(block(), torch.randn(2, 3, 33, 29), frozen)
    assert not any("convolution" in op or "aten::add" in op or "relu" in op for op in ops), ops


@pytest.mark.parametrize("kernel,frozen", [("onednn_packed", False), ("onednn_repack", True)])
def test_a_kernel_that_does_not_apply_leaves_the_convolution_to_aten(kernel, frozen, monkeypatch):
    """A weight that is an input is never packed once for good; a constant one is never compared."""
    monkeypatch.setenv("TORCHAIR_GE_CPU_CONV", kernel)
    ops = _conv_ops_run(block(), torch.randn(2, 3, 33, 29), frozen)
    assert "aten::convolution" in ops, ops


@pytest.mark.parametrize("kernel", ["onednn_repack", "onednn_folded", "measure"])
def test_a_weight_that_is_an_input_is_read_again_when_it_changes(kernel, monkeypatch):
    """Without frozen parameters a weight may change between calls, also through `.data`, which
    moves no version counter: the packed weight must follow the bytes."""
    monkeypatch.setenv("TORCHAIR_GE_CPU_CONV", kernel)
    model, x = block(), torch.randn(2, 3, 33, 29)
    compiled = torch.compile(model, backend=torchair_ge.get_npu_backend(), dynamic=False)
    with torch.no_grad():
        torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-4)
        model.conv1.weight.data.mul_(-2.0)  # no version bump
        torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-4)
        model.conv2.weight[0, 0, 0, 0] = 3.0  # one element
        torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-4)
        model.down.weight.copy_(torch.randn_like(model.down.weight))
        torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("kernel", ["few_pixels", "few_pixels_unpacked"])
@pytest.mark.parametrize("frozen", [False, True])
@pytest.mark.parametrize("batch,weights", [(1, torch.contiguous_format), (2, torch.contiguous_format),
                                           (1, torch.channels_last)])
def test_few_output_pixels_run_the_weight_streaming_kernels(kernel, frozen, batch, weights, monkeypatch):
    """At most 64 output pixels (a small input here; a batch-1 ResNet's last stage in practice):
    either few-pixel kernel runs every convolution but the grouped one, as eager computes it, with
    the weights stored either way (the unpacked kernel's im2col follows the weight's own order) --
    and, for weights that are inputs, again after they change."""
    monkeypatch.setenv("TORCHAIR_GE_CPU_CONV", kernel)
    model, x = block().to(memory_format=weights), torch.randn(batch, 3, 9, 9)  # 25, 9, 9 and 9 pixels per image
    compiled = torch.compile(model, backend=torchair_ge.get_npu_backend(compiler_config=config(frozen)),
                             dynamic=False)
    with torch.no_grad():
        torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-4)
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], record_shapes=True) as prof:
            compiled(x)
        weights = {tuple(e.input_shapes[1]) for e in prof.events() if e.name == "aten::convolution"}
        assert weights == {(32, 8, 3, 3)}, weights  # conv2 (groups=4) only
        if not frozen:
            model.conv1.weight.data.mul_(-2.0)  # no version bump
            model.stem[0].weight[0, 0, 0, 0] = 3.0
            torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-4)


def test_the_measured_choice_is_reported(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCHAIR_GE_CACHE_DIR", str(tmp_path))  # no decision stored by an earlier run
    monkeypatch.delenv("TORCHAIR_GE_CPU_CONV", raising=False)
    backend = torchair_ge.get_npu_backend(compiler_config=config(True))
    model, x = block(), torch.randn(1, 3, 45, 41)  # shapes no other test decides in this process
    compiled = torch.compile(model, backend=backend, dynamic=False)
    with torch.no_grad():
        torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-4)
    convs = [c for c in backend.compiler.reports[0]["kernel_choices"] if c["key"].startswith("Conv2D NHWC")]
    assert len(convs) == 4, convs
    for choice in convs:
        assert "const-weight" in choice["key"] and "onednn_packed" in choice["best_us"], choice
        assert choice["best_us"][choice["winner"]] == min(choice["best_us"].values())
        # the late twin where a residual is added (conv2's: its norm, the projection, ReLU)
        assert ("onednn_packed_late" in choice["best_us"]) == ("+residual" in choice["key"]), choice
    assert sum("+residual" in c["key"] for c in convs) == 1, convs
    unfrozen = torchair_ge.get_npu_backend()
    with torch.no_grad():
        torch.compile(model, backend=unfrozen, dynamic=False)(x)
    convs = [c for c in unfrozen.compiler.reports[0]["kernel_choices"] if c["key"].startswith("Conv2D NHWC")]
    assert len(convs) == 4 and all("onednn_repack" in c["best_us"] for c in convs), convs
    late = [c for c in convs if "onednn_folded_late" in c["best_us"] and "onednn_repack_late" in c["best_us"]]
    assert len(late) == 1 and "+batchnorm +residual relu" in late[0]["key"], convs


class ConvEpilogues(nn.Module):
    """A convolution for each epilogue a FusedConv2D takes: every activation of the library-epilogue
    table, a residual add, and a residual add then ReLU (a ResNet block's end)."""

    ACTIVATIONS = [F.relu, F.gelu, lambda y: F.gelu(y, approximate="tanh"), torch.sigmoid, torch.tanh, F.silu]

    def __init__(self):
        super().__init__()
        self.convs = nn.ModuleList(nn.Conv2d(8, 8, 3, 1, 1) for _ in range(len(self.ACTIVATIONS) + 2))

    def forward(self, x):
        outs = [act(conv(x)) for act, conv in zip(self.ACTIVATIONS, self.convs)]
        # residuals made inside the net, so that the ChannelsLast pass keeps every op NHWC
        outs.append(self.convs[-2](x) + outs[0])
        outs.append(torch.relu(self.convs[-1](x) + outs[1]))
        total = outs[0]
        for out in outs[1:]:
            total = total + out
        return total


@pytest.mark.parametrize("frozen", [False, True])
def test_convolution_epilogues_fold_into_the_convolution(frozen, tmp_path, monkeypatch):
    """Each convolution above becomes one FusedConv2D (its kernel-choice key names the epilogue)
    whose every kernel -- oneDNN's post-ops or ATen's in-place calls -- gives eager's numbers."""
    monkeypatch.setenv("TORCHAIR_GE_CACHE_DIR", str(tmp_path))  # timed here, not read from disk
    monkeypatch.delenv("TORCHAIR_GE_CPU_CONV", raising=False)
    torch.manual_seed(0)
    model, x = ConvEpilogues().eval(), torch.randn(2, 8, 13, 11)
    backend = torchair_ge.get_npu_backend(compiler_config=config(frozen))
    with torch.no_grad():
        torch.testing.assert_close(torch.compile(model, backend=backend, dynamic=False)(x), model(x),
                                   rtol=1e-4, atol=1e-4)
    keys = [c["key"] for c in backend.compiler.reports[0]["kernel_choices"] if c["key"].startswith("Conv2D NHWC")]
    epilogues = sorted(k.split("groups=1")[1].split(" threads")[0].replace(" const-weight", "") for k in keys)
    assert epilogues == sorted([" +bias gelu", " +bias gelu_tanh", " +bias relu", " +bias sigmoid", " +bias silu",
                                " +bias tanh", " +bias +residual", " +bias +residual relu"]), keys
    onednn = "onednn_packed" if frozen else "onednn_repack"
    for kernel in ["nhwc", onednn, onednn + "_late"]:
        monkeypatch.setenv("TORCHAIR_GE_CPU_CONV", kernel)
        torch._dynamo.reset()
        with torch.no_grad():
            compiled = torch.compile(model, backend=torchair_ge.get_npu_backend(compiler_config=config(frozen)),
                                     dynamic=False)
            torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-4, msg=kernel)


class ConvBatchNorms(nn.Module):
    """Convolutions followed by an inference BatchNorm: alone (after a biased convolution), then
    ReLU, and then a residual add and ReLU (a ResNet block's end). Statistics that are not 0 and
    1, so that every term of the norm shows."""

    def __init__(self):
        super().__init__()
        self.convs = nn.ModuleList([nn.Conv2d(8, 8, 3, 1, 1), nn.Conv2d(8, 8, 3, 1, 1, bias=False),
                                    nn.Conv2d(8, 8, 3, 1, 1, bias=False)])
        self.norms = nn.ModuleList(nn.BatchNorm2d(8) for _ in self.convs)
        g = torch.Generator().manual_seed(3)
        with torch.no_grad():
            for norm in self.norms:
                for t in (norm.weight, norm.bias, norm.running_mean):
                    t.copy_(torch.randn(8, generator=g))
                norm.running_var.copy_(torch.rand(8, generator=g) + 0.5)

    def forward(self, x):
        first = self.norms[0](self.convs[0](x))
        second = torch.relu(self.norms[1](self.convs[1](first)))
        return torch.relu(self.norms[2](self.convs[2](second)) + first)


def test_batch_norms_fold_into_the_convolution_and_follow_their_parameters(tmp_path, monkeypatch):
    """Parameters as graph inputs (the default): each BatchNorm becomes its convolution's per-channel
    scale and shift, computed from the norm's parameters on every run -- every kernel gives eager's
    numbers, and again after the statistics change in place."""
    monkeypatch.setenv("TORCHAIR_GE_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("TORCHAIR_GE_CPU_CONV", raising=False)
    torch.manual_seed(0)
    model, x = ConvBatchNorms().eval(), torch.randn(2, 8, 13, 11)
    backend = torchair_ge.get_npu_backend()
    with torch.no_grad():
        torch.testing.assert_close(torch.compile(model, backend=backend, dynamic=False)(x), model(x),
                                   rtol=1e-4, atol=1e-4)
    keys = [c["key"] for c in backend.compiler.reports[0]["kernel_choices"] if c["key"].startswith("Conv2D NHWC")]
    epilogues = sorted(k.split("groups=1")[1].split(" threads")[0] for k in keys)
    assert epilogues == [" +batchnorm +residual relu", " +batchnorm relu", " +bias +batchnorm"], keys
    for kernel in ["nhwc", "nchw", "onednn_repack", "onednn_folded", "onednn_repack_late", "onednn_folded_late"]:
        monkeypatch.setenv("TORCHAIR_GE_CPU_CONV", kernel)
        torch._dynamo.reset()
        with torch.no_grad():
            compiled = torch.compile(model, backend=torchair_ge.get_npu_backend(), dynamic=False)
            torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-4, msg=kernel)
            for norm in model.norms:  # as a calibration or fine-tuning step would
                norm.running_mean.mul_(0.5).add_(0.25)
                norm.running_var.mul_(2.0)
                norm.weight.neg_()
            torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-4, msg=f"{kernel}, changed")


def test_batch_norms_folded_into_packed_weights_follow_every_change(monkeypatch):
    """"onednn_folded": each norm folded into its convolution's packed weight and bias, as frozen
    parameters get it, no ATen convolution -- and eager's numbers again after the weights change
    through `.data` (no version bump), after the norms' scales change, and after only their shifts
    (running means, offsets) do."""
    monkeypatch.setenv("TORCHAIR_GE_CPU_CONV", "onednn_folded")
    torch.manual_seed(0)
    model, x = ConvBatchNorms().eval(), torch.randn(2, 8, 13, 11)
    compiled = torch.compile(model, backend=torchair_ge.get_npu_backend(), dynamic=False)
    with torch.no_grad():
        torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-4)
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
            compiled(x)
        assert not any("convolution" in e.key for e in prof.key_averages()), [e.key for e in prof.key_averages()]
        model.convs[1].weight.data.mul_(-0.5)
        torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-4, msg="weights")
        model.norms[2].running_var.mul_(3.0)
        model.norms[0].weight.neg_()
        torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-4, msg="scales")
        for norm in model.norms:
            norm.running_mean.add_(0.5)
            norm.bias.mul_(2.0)
        torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-4, msg="shifts")


def test_a_malformed_setting_is_an_error_naming_it(monkeypatch):
    monkeypatch.setenv("TORCHAIR_GE_CPU_CONV", "winograd")
    compiled = torch.compile(block(), backend=torchair_ge.get_npu_backend(), dynamic=False)
    expected = ("TORCHAIR_GE_CPU_CONV='winograd': expected one of measure, nhwc, nchw, onednn_packed, onednn_repack, "
                "onednn_folded, onednn_packed_late, onednn_repack_late, onednn_folded_late, few_pixels, "
                "few_pixels_unpacked")
    with pytest.raises(Exception, match=expected), torch.no_grad():
        compiled(torch.randn(1, 3, 33, 29))


class ConvPool(nn.Module):
    """A max pool between two convolutions (a ResNet stem's), which the ChannelsLast pass keeps
    NHWC."""

    def __init__(self, kernel, stride, padding, ceil_mode, return_indices=False):
        super().__init__()
        self.stem, self.block = nn.Conv2d(3, 16, 3, 1, 1), nn.Conv2d(16, 16, 3, 1, 1)
        self.pool = dict(kernel_size=kernel, stride=stride, padding=padding, ceil_mode=ceil_mode,
                         return_indices=return_indices)

    def forward(self, x):
        pooled = F.max_pool2d(torch.relu(self.stem(x)), **self.pool)
        if self.pool["return_indices"]:
            return self.block(pooled[0]), pooled[1]
        return self.block(pooled)


@pytest.mark.parametrize("kernel,stride,padding,ceil_mode", [(3, 2, 1, False), (2, 2, 0, True), (3, 1, 1, False),
                                                             (3, 2, 0, True)])
def test_channels_last_max_pools_run_without_indices(kernel, stride, padding, ceil_mode):
    """An NHWC float max pool whose indices nobody reads (a ResNet stem's, in inference) runs the
    engine's own loop, not ATen's kernel that writes an int64 index per output: eager's numbers,
    a NaN in a window included."""
    torch.manual_seed(0)
    model = ConvPool(kernel, stride, padding, ceil_mode).eval()
    x = torch.randn(2, 3, 13, 10)
    x[0, 1, 6, 4] = float("nan")  # a NaN in the convolution's 3x3 neighbourhood, then in pools' windows
    compiled = torch.compile(model, backend=torchair_ge.get_npu_backend(), dynamic=False)
    with torch.no_grad():
        torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-4, equal_nan=True)
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
            compiled(x)
    assert not any("max_pool" in e.key for e in prof.key_averages()), [e.key for e in prof.key_averages()]


def test_a_max_pool_whose_indices_are_read_keeps_atens_kernel():
    torch.manual_seed(0)
    model, x = ConvPool(3, 2, 1, False, return_indices=True).eval(), torch.randn(2, 3, 13, 10)
    compiled = torch.compile(model, backend=torchair_ge.get_npu_backend(), dynamic=False)
    with torch.no_grad():
        (values, indices), (expected_values, expected_indices) = compiled(x), model(x)
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
            compiled(x)
    assert any("max_pool2d_with_indices" in e.key for e in prof.key_averages())
    torch.testing.assert_close(values, expected_values, rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(indices, expected_indices)


@pytest.mark.parametrize("kernel,frozen", [("nhwc", False), ("onednn_repack", False), ("few_pixels", False),
                                           ("few_pixels_unpacked", False), ("onednn_packed", True),
                                           ("few_pixels", True), ("few_pixels_unpacked", True)])
def test_a_nan_goes_through_every_epilogue_as_in_eager(kernel, frozen, monkeypatch):
    """torch's activations propagate NaN; oneDNN's ReLU post-op turns it into 0 (ReLU is applied
    after the primitive instead): every kernel, every epilogue, a NaN in the input (35 output
    pixels: few_pixels takes them)."""
    monkeypatch.setenv("TORCHAIR_GE_CPU_CONV", kernel)
    torch.manual_seed(0)
    model, x = ConvEpilogues().eval(), torch.randn(1, 8, 5, 7)
    x[0, 3, 2, 2] = float("nan")
    compiled = torch.compile(model, backend=torchair_ge.get_npu_backend(compiler_config=config(frozen)),
                             dynamic=False)
    with torch.no_grad():
        expected = model(x)
        assert expected.isnan().any()
        torch.testing.assert_close(compiled(x), expected, rtol=1e-4, atol=1e-4, equal_nan=True)


class ScaledConvs(nn.Module):
    """Convolutions joined by ReLU and a multiply by a Python scalar (a residual scale)."""

    def __init__(self):
        super().__init__()
        self.first, self.second = nn.Conv2d(3, 8, 3, 1, 1), nn.Conv2d(8, 8, 3, 1, 1)

    def forward(self, x):
        return self.second(torch.relu(self.first(x)) * 0.5) + 1.0


def test_a_scalar_operand_keeps_the_convolutions_channels_last(monkeypatch):
    """The ChannelsLast pass carries `x * 0.5` (one element: it broadcasts alike in either layout):
    both convolutions run NHWC -- the engine's oneDNN kernel, no ATen convolution -- with eager's
    numbers."""
    monkeypatch.setenv("TORCHAIR_GE_CPU_CONV", "onednn_repack")
    torch.manual_seed(0)
    model, x = ScaledConvs().eval(), torch.randn(2, 3, 10, 9)
    backend = torchair_ge.get_npu_backend()
    compiled = torch.compile(model, backend=backend, dynamic=False)
    with torch.no_grad():
        torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-4)
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
            compiled(x)
    assert not any("convolution" in e.key for e in prof.key_averages()), [e.key for e in prof.key_averages()]
    assert backend.compiler.reports[-1]["passes_fired"].get("ChannelsLast"), backend.compiler.reports[-1]["passes_fired"]


class Permute(nn.Module):
    def __init__(self, perm):
        super().__init__()
        self.perm = perm

    def forward(self, x):
        return x.permute(*self.perm).contiguous()


@pytest.mark.parametrize("shape,perm", [((1, 3, 112, 112), (0, 2, 3, 1)), ((2, 5, 7, 9), (0, 2, 3, 1)),
                                        ((2, 7, 9, 40), (0, 3, 1, 2)), ((3, 17, 33), (0, 2, 1)),
                                        ((2, 16, 4, 4), (0, 2, 3, 1))])
def test_layout_transposes_swap_blocks_natively(shape, perm):
    """The channels-last region's edges (NCHW -> NHWC into the first convolution, NHWC -> NCHW
    out) and any transpose that swaps two blocks of dims run the engine's tiled loop, not ATen's
    copy of a permuted view: the same numbers, bit for bit."""
    x = torch.randn(*shape)
    compiled = torch.compile(Permute(perm), backend=torchair_ge.get_npu_backend(), dynamic=False)
    with torch.no_grad():
        torch.testing.assert_close(compiled(x), x.permute(*perm).contiguous(), rtol=0, atol=0)
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
            compiled(x)
    assert not any("copy" in e.key for e in prof.key_averages()), [e.key for e in prof.key_averages()]
