"""FusedAttention on the CPU device: ATen's flash kernel (eager SDPA's), the blocked one or, for a
few query rows per key/value head (decode steps), the decode one
(csrc/devices/cpu/kernels/flash_attention.h), whichever measured faster for the shapes on this
CPU. Each kernel, forced with TORCHAIR_GE_CPU_ATTENTION, gives eager's numbers with causal masks,
padding and full masks, grouped-query heads and partial blocks; the measured choice is reported.
In training the forward's attention and the log-sum-exp it saves for the backward are one
FusedAttentionWithLse, the backward one FusedAttentionGrad (ATen's flash backward or the blocked
one), each kernel giving eager's output and gradients."""
import pytest
import torch
import torch.nn.functional as F

import torchair_ge
from bench.models.bert import SelfAttention
from conftest import check_against_eager

# (batch, q heads, kv heads, q len, kv len, head size, causal, mask)
CASES = [(1, 8, 2, 130, 130, 64, True, None), (2, 4, 4, 70, 70, 32, False, "padding"),
         (1, 4, 4, 40, 96, 128, False, "full"), (2, 2, 1, 1, 77, 64, False, "padding"), (1, 2, 2, 20, 20, 40, True, None),
         (1, 8, 2, 4, 300, 64, True, None), (1, 32, 8, 1, 600, 128, False, "padding")]
KERNELS = ["aten_flash", "blocked_flash", "decode_flash", "measure"]


def _inputs(batch, heads, kv_heads, q_len, kv_len, dim, mask):
    torch.manual_seed(0)
    q, k, v = (torch.randn(batch, h, n, dim) for h, n in ((heads, q_len), (kv_heads, kv_len), (kv_heads, kv_len)))
    if mask == "padding":  # [B, 1, 1, S]: the last third of the first sequence's keys masked out
        m = torch.zeros(batch, 1, 1, kv_len)
        m[0, ..., 2 * kv_len // 3:] = float("-inf")
        return q, k, v, m
    if mask == "full":
        return q, k, v, torch.randn(batch, heads, q_len, kv_len)
    return q, k, v, None


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("case", CASES)
def test_attention_matches_eager(case, kernel, monkeypatch):
    monkeypatch.setenv("TORCHAIR_GE_CPU_ATTENTION", kernel)
    *shape, causal, mask = case
    q, k, v, m = _inputs(*shape, mask)

    def attention(q, k, v, m):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=m, is_causal=causal, enable_gqa=True)

    check_against_eager(attention, q, k, v, m)


@pytest.mark.parametrize("kernel", KERNELS)
def test_hand_written_attention_runs_as_one_fused_node(kernel, monkeypatch):
    # bert.py's: projections viewed to [B, S, H, D] and transposed, q @ k.transpose(-1, -2) / sqrt(d)
    # + padding mask, softmax, @ v -- torch.matmul's 3-D products between Reshapes in the graph.
    monkeypatch.setenv("TORCHAIR_GE_CPU_ATTENTION", kernel)
    torch.manual_seed(0)
    attention = SelfAttention(hidden=64, heads=4).eval()
    x = torch.randn(2, 24, 64)
    mask_bias = torch.zeros(2, 1, 1, 24)
    mask_bias[1, ..., 16:] = -10000.0
    backend = torchair_ge.get_npu_backend()
    compiled = torch.compile(attention, backend=backend, dynamic=False)
    with torch.no_grad():
        torch.testing.assert_close(compiled(x, mask_bias), attention(x, mask_bias), rtol=1e-5, atol=1e-5)
    text = backend.compiler.graphs[0].graph_text()  # a node, or a generated kernel's producer (fused_ops)
    assert text.count('type: "FusedAttention"') + text.count('s: "FusedAttention:') == 1, text
    assert "SoftmaxV2" not in text and 'type: "BatchMatMulV2"' not in text and 's: "BatchMatMulV2:' not in text, text


def test_transformers_eager_attention_with_grouped_heads_runs_fused():
    # LlamaForCausalLM with attn_implementation="eager": torch.matmul attention over keys and values
    # repeat_kv spread to the query heads, a float causal mask; one fused node per layer.
    transformers = pytest.importorskip("transformers")
    config = transformers.LlamaConfig(vocab_size=100, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                                      num_attention_heads=4, num_key_value_heads=2)
    config._attn_implementation = "eager"
    torch.manual_seed(0)
    model = transformers.LlamaForCausalLM(config).eval()
    ids = torch.randint(0, 100, (2, 12))
    backend = torchair_ge.get_npu_backend()
    compiled = torch.compile(model, backend=backend)
    with torch.no_grad():
        torch.testing.assert_close(compiled(ids).logits, model(ids).logits, rtol=1e-4, atol=1e-5)
    text = "".join(graph.graph_text() for graph in backend.compiler.graphs)
    assert text.count('type: "FusedAttention"') + text.count('s: "FusedAttention:') == 2, text
    assert "SoftmaxV2" not in text and 'type: "BroadcastTo"' not in text, text


def test_the_measured_choice_is_reported(monkeypatch):
    if torch.backends.cpu.get_cpu_capability() not in ("AVX2", "AVX512"):
        pytest.skip("one attention kernel on this CPU: nothing to measure")
    monkeypatch.delenv("TORCHAIR_GE_CPU_ATTENTION", raising=False)
    backend = torchair_ge.get_npu_backend()
    q, k, v, _ = _inputs(1, 4, 4, 96, 96, 64, None)
    compiled = torch.compile(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True), backend=backend,
                             dynamic=False)
    with torch.no_grad():
        torch.testing.assert_close(compiled(q, k, v), F.scaled_dot_product_attention(q, k, v, is_causal=True))
    choices = [c for c in backend.compiler.reports[0]["kernel_choices"] if c["key"].startswith("FusedAttention")]
    assert len(choices) == 1 and "q=96 kv=96 e=64 causal" in choices[0]["key"], choices
    assert set(choices[0]["best_us"]) == {"aten_flash", "blocked_flash"}, choices
    assert choices[0]["winner"] in choices[0]["best_us"], choices


@pytest.mark.parametrize("q_len", [1, 4])
def test_a_decode_steps_choice_times_the_decode_kernel(q_len, monkeypatch):
    # A few query rows per key/value head (8 query heads over 2: 4 x q_len rows) make the decode
    # kernel a candidate beside ATen's and the blocked one; a prefill (64 rows per head) does not.
    if torch.backends.cpu.get_cpu_capability() not in ("AVX2", "AVX512"):
        pytest.skip("ATen's attention kernel only on this CPU")
    monkeypatch.delenv("TORCHAIR_GE_CPU_ATTENTION", raising=False)
    backend = torchair_ge.get_npu_backend()
    q, k, v, _ = _inputs(2, 8, 2, q_len, 333, 64, None)
    compiled = torch.compile(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, enable_gqa=True), backend=backend,
                             dynamic=False)
    with torch.no_grad():
        torch.testing.assert_close(compiled(q, k, v), F.scaled_dot_product_attention(q, k, v, enable_gqa=True))
    choices = [c for c in backend.compiler.reports[0]["kernel_choices"] if c["key"].startswith("FusedAttention")]
    assert len(choices) == 1 and set(choices[0]["best_us"]) == {"aten_flash", "blocked_flash", "decode_flash"}, choices


def test_a_forced_kernel_name_that_does_not_exist_is_an_error(monkeypatch):
    monkeypatch.setenv("TORCHAIR_GE_CPU_ATTENTION", "flashy")
    q, k, v, _ = _inputs(1, 2, 2, 8, 8, 16, None)
    compiled = torch.compile(lambda q, k, v: F.scaled_dot_product_attention(q, k, v), backend=torchair_ge.get_npu_backend(),
                             dynamic=False)
    with pytest.raises(Exception, match="TORCHAIR_GE_CPU_ATTENTION"):
        compiled(q, k, v)


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("case", [CASES[0], CASES[1], CASES[4], CASES[5]])
def test_training_attention_saves_the_kernels_log_sum_exp(case, kernel, monkeypatch):
    monkeypatch.setenv("TORCHAIR_GE_CPU_ATTENTION", kernel)
    *shape, causal, mask = case
    q, k, v, m = _inputs(*shape, mask)
    grad_out = torch.randn_like(q[..., :v.shape[-1]])

    def attention(q, k, v):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=m, is_causal=causal, enable_gqa=True)
    backend = torchair_ge.get_npu_backend()
    compiled = torch.compile(attention, backend=backend, dynamic=False)
    ours, theirs = [[t.detach().clone().requires_grad_() for t in (q, k, v)] for _ in range(2)]
    out = compiled(*ours)
    out.backward(grad_out)
    expected = attention(*theirs)
    expected.backward(grad_out)
    torch.testing.assert_close(out, expected, rtol=1e-4, atol=1e-5)
    for name, a, b in zip("qkv", ours, theirs):
        torch.testing.assert_close(a.grad, b.grad, rtol=1e-4, atol=1e-4, msg=lambda e: f"grad {name}: {e}")
    forward = backend.compiler.graphs[0].graph_text()
    assert forward.count('type: "FusedAttentionWithLse"') == 1, forward
    assert "ReduceLogSumExp" not in forward and "SoftmaxV2" not in forward, forward
    backward = backend.compiler.graphs[1].graph_text()  # the scores never materialized
    assert backward.count('type: "FusedAttentionGrad"') == 1 and "BatchMatMulV2" not in backward, backward
    if kernel == "measure" and torch.backends.cpu.get_cpu_capability() in ("AVX2", "AVX512") and shape[-1] % 16 == 0:
        choices = [c for r in backend.compiler.reports for c in r["kernel_choices"]
                   if c["key"].startswith("FusedAttentionGrad")]
        assert len(choices) == 1 and set(choices[0]["best_us"]) == {"aten_flash", "blocked_flash"}, choices


@pytest.mark.parametrize("kernel", ["aten_flash", "blocked_flash", "unfused", "library"])
@pytest.mark.parametrize("mask_type", [torch.float32, torch.bool])
def test_a_query_that_sees_no_key_trains_with_eagers_zero_gradients(kernel, mask_type, monkeypatch):
    # Eager's flash kernel saves 0 as such a row's log-sum-exp; -inf (the blocked kernel's at
    # first) made the backward's exp(score - lse) NaN. Unfused (the rewrite rules off) the row is
    # the converter's SafeSoftmax (a generated kernel; "library": ATen's, auto-fusion off) and
    # its -inf log-sum-exp, which the backward takes as 0.
    config = torchair_ge.CompilerConfig()
    if kernel in ("unfused", "library"):
        config.ge_config.optimization_switch = "PatternRewrite:off"
        config.experimental_config.enable_autofuse = kernel == "unfused"
    else:
        monkeypatch.setenv("TORCHAIR_GE_CPU_ATTENTION", kernel)
    q, k, v, _ = _inputs(1, 2, 2, 6, 6, 16, None)
    mask = torch.zeros(1, 1, 6, 6) if mask_type == torch.float32 else torch.ones(1, 1, 6, 6, dtype=torch.bool)
    mask[..., 2, :] = float("-inf") if mask_type == torch.float32 else False  # query 2 sees no key
    grad_out = torch.randn(1, 2, 6, 16)

    def attention(q, k, v):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    backend = torchair_ge.get_npu_backend(compiler_config=config)
    compiled = torch.compile(attention, backend=backend, dynamic=False)
    ours, theirs = [[t.detach().clone().requires_grad_() for t in (q, k, v)] for _ in range(2)]
    out, expected = compiled(*ours), attention(*theirs)
    torch.testing.assert_close(out, expected, rtol=1e-4, atol=1e-5)  # query 2's row: 0, not NaN
    out.backward(grad_out)
    expected.backward(grad_out)
    fused = backend.compiler.graphs[0].graph_text().count('type: "FusedAttentionWithLse"')
    assert fused == (kernel not in ("unfused", "library")), backend.compiler.graphs[0].graph_text()
    for name, a, b in zip("qkv", ours, theirs):
        assert not a.grad.isnan().any(), f"grad {name} has NaN"
        torch.testing.assert_close(a.grad, b.grad, rtol=1e-4, atol=1e-5, msg=lambda e: f"grad {name}: {e}")
    assert ours[0].grad[0, :, 2].abs().max() == 0
