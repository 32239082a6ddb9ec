"""The RotaryMul rewrite rule and kernel: the rotary embedding LLaMA-style models write out
(x * cos + rotate_half(x) * sin) becomes one RotaryMul node, whose CPU kernel gives eager's float32
numbers to the bit (each product rounded, then the sum), with the query read through a transpose,
cos/sin broadcast over heads (or batch and heads), either operand order, dynamic sizes and a
training step; other dtypes run ATen's ops. What is not rotate_half (other halves, another
rotation) is left alone, and "RotaryMul:off" turns the rule off."""
import pytest
import torch

import torchair_ge
from conftest import check_against_eager


def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def rope(q, k, cos, sin):  # HF's apply_rotary_pos_emb
    cos, sin = cos.unsqueeze(1), sin.unsqueeze(1)
    return (q * cos) + (rotate_half(q) * sin), (k * cos) + (rotate_half(k) * sin)


def rope_reordered(q, k, cos, sin):  # the factors and the summands the other way round
    cos, sin = cos.unsqueeze(1), sin.unsqueeze(1)
    return (sin * rotate_half(q)) + (cos * q), (rotate_half(k) * sin) + (k * cos)


def _inputs(batch=2, heads=8, kv_heads=4, seq=37, dim=32, cos_batch=None, dtype=torch.float32):
    g = torch.Generator().manual_seed(0)
    q = torch.randn(batch, seq, heads, dim, generator=g, dtype=dtype).transpose(1, 2)  # as attention splits heads
    k = torch.randn(batch, kv_heads, seq, dim, generator=g, dtype=dtype)
    cos = torch.randn(batch if cos_batch is None else cos_batch, seq, dim, generator=g, dtype=dtype)
    sin = torch.randn(cos.shape, generator=g, dtype=dtype)
    return q, k, cos, sin


def _compiled(fn, config=None, dynamic=False):
    backend = torchair_ge.get_npu_backend(compiler_config=config)
    return torch.compile(fn, backend=backend, dynamic=dynamic), backend


def _graph_ops(backend):
    text = backend.compiler.graphs[-1].graph_text()
    return {op: text.count(f'type: "{op}"') for op in ("RotaryMul", "ConcatV2", "Neg", "StridedSliceV2")}


@pytest.mark.parametrize("fn", [rope, rope_reordered])
@pytest.mark.parametrize("cos_batch", [None, 1])
def test_rotate_half_becomes_one_rotary_mul_with_eagers_bits(fn, cos_batch):
    q, k, cos, sin = _inputs(cos_batch=cos_batch)
    compiled, backend = _compiled(fn)
    with torch.no_grad():
        got, expected = compiled(q, k, cos, sin), fn(q, k, cos, sin)
    for g, e in zip(got, expected):
        assert torch.equal(g, e), (g - e).abs().max()
    assert _graph_ops(backend) == {"RotaryMul": 2, "ConcatV2": 0, "Neg": 0, "StridedSliceV2": 0}, _graph_ops(backend)


def test_the_rule_can_be_switched_off_and_an_unknown_rule_is_an_error():
    q, k, cos, sin = _inputs()
    config = torchair_ge.CompilerConfig()
    config.ge_config.optimization_switch = "RotaryMul:off"
    compiled, backend = _compiled(rope, config)
    with torch.no_grad():
        for g, e in zip(compiled(q, k, cos, sin), rope(q, k, cos, sin)):
            torch.testing.assert_close(g, e)
    # The halves are taken by slices again (auto-fusion reads the ones its kernels use in place).
    ops = _graph_ops(backend)
    assert ops["RotaryMul"] == 0 and ops["StridedSliceV2"] + ops["Neg"] > 0, ops
    assert "RotaryMul" in torchair_ge._C.rewrite_rules() and "FusedAttention" in torchair_ge._C.rewrite_rules()
    with pytest.raises(ValueError, match="unknown pass 'RotaryMull'"):
        config.ge_config.optimization_switch = "RotaryMull:off"


def _swapped_halves(x):
    h = x.shape[-1] // 2
    return torch.cat((x[..., h:], -x[..., :h]), dim=-1)  # the opposite rotation


def _uneven_halves(x):
    return torch.cat((-x[..., 10:], x[..., :10]), dim=-1)  # not halves


def _halves_in_place(x):
    h = x.shape[-1] // 2
    return torch.cat((-x[..., :h], x[..., h:]), dim=-1)  # the first half negated, nothing rotated


def _one_half_twice(x):
    h = x.shape[-1] // 2
    return torch.cat((-x[..., h:], x[..., h:]), dim=-1)


@pytest.mark.parametrize("rotation", [_swapped_halves, _uneven_halves, _halves_in_place, _one_half_twice])
def test_what_is_not_rotate_half_is_left_alone(rotation):
    q, _, cos, sin = _inputs()

    def fn(q, cos, sin):
        return q * cos.unsqueeze(1) + rotation(q) * sin.unsqueeze(1)
    compiled, backend = _compiled(fn)
    with torch.no_grad():
        torch.testing.assert_close(compiled(q, cos, sin), fn(q, cos, sin))
    assert _graph_ops(backend)["RotaryMul"] == 0, _graph_ops(backend)


def test_partial_rotary_rotates_the_slice():
    # Phi/NeoX: only the first half of each head's dims rotate; rotate_half of that slice matches.
    q, _, cos, sin = _inputs(dim=64)
    cos, sin = cos[..., :32], sin[..., :32]

    def fn(q, cos, sin):
        rot, keep = q[..., :32], q[..., 32:]
        rot = rot * cos.unsqueeze(1) + rotate_half(rot) * sin.unsqueeze(1)
        return torch.cat((rot, keep), dim=-1)
    compiled, backend = _compiled(fn)
    with torch.no_grad():
        assert torch.equal(compiled(q, cos, sin), fn(q, cos, sin))
    assert _graph_ops(backend)["RotaryMul"] == 1, _graph_ops(backend)


def test_dynamic_sequence_lengths():
    # Default torch.compile: the second length makes the sequence symbolic (the head size stays
    # fixed, so the halves' bounds are constants).
    compiled, backend = _compiled(rope, dynamic=None)
    with torch.no_grad():
        for seq in (5, 19, 64):
            q, k, cos, sin = _inputs(seq=seq)
            for g, e in zip(compiled(q, k, cos, sin), rope(q, k, cos, sin)):
                assert torch.equal(g, e), seq
    assert _graph_ops(backend)["RotaryMul"] == 2, _graph_ops(backend)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float64])
def test_other_dtypes_run_atens_ops(dtype):
    check_against_eager(rope, *_inputs(dtype=dtype))


def test_a_training_step_through_the_rotary_embedding():
    q, k, cos, sin = _inputs()
    ours, theirs = [[t.detach().clone().requires_grad_() for t in (q, k)] for _ in range(2)]
    compiled, backend = _compiled(rope)
    out = compiled(*ours, cos, sin)
    expected = rope(*theirs, cos, sin)
    grads = [torch.randn_like(o) for o in expected]
    torch.autograd.backward(out, grads)
    torch.autograd.backward(expected, grads)
    for g, e in zip(out, expected):
        torch.testing.assert_close(g, e)
    for a, b in zip(ours, theirs):
        torch.testing.assert_close(a.grad, b.grad)
    assert backend.compiler.graphs[0].graph_text().count('type: "RotaryMul"') == 2
