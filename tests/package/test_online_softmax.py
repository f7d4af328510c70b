"""seqlearn.online_softmax: the running max and sum against logsumexp, blocked attention against
``attention`` (outputs and autograd gradients, float64 and float32), and its memory."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from seqlearn import attention as att
from seqlearn.complexity import saved_tensor_bytes
from seqlearn.online_softmax import memory_efficient_attention, online_normalizer

F64 = torch.float64


def qkv(seed, lead, Tq, Tk, d, dv, dtype=F64, grad=False):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(*lead, T, w, generator=g, dtype=dtype).requires_grad_(grad)
            for T, w in ((Tq, d), (Tk, d), (Tk, dv))]


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(1, 40), block=st.integers(1, 9),
       masked=st.floats(0.0, 1.0))
def test_online_normalizer_is_logsumexp(seed, n, block, masked):
    g = torch.Generator().manual_seed(seed)
    x = 5 * torch.randn(3, n, generator=g, dtype=F64)
    x = x.masked_fill(torch.rand(3, n, generator=g) < masked, -math.inf)
    m, l = online_normalizer(x, block)
    lse = torch.logsumexp(x, dim=-1)
    finite = torch.isfinite(lse)
    torch.testing.assert_close(m + l.log(), lse, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(m[finite], x.amax(-1)[finite], rtol=0, atol=0)  # the true max
    assert bool((l[~finite] == 0).all()) and bool((m[~finite] == -math.inf).all())
    torch.testing.assert_close(((x - m[:, None]).exp() / l[:, None])[finite],
                               torch.softmax(x, -1)[finite], rtol=1e-12, atol=1e-12)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), lead=st.lists(st.integers(1, 3), max_size=2),
       Tq=st.integers(1, 9), Tk=st.integers(1, 9), d=st.integers(1, 5), dv=st.integers(1, 4),
       block=st.integers(1, 5), use_mask=st.booleans(), causal=st.booleans(),
       scale=st.sampled_from([None, 0.0, 0.3, -2.0]))
def test_equals_attention_with_gradients_in_float64(seed, lead, Tq, Tk, d, dv, block, use_mask,
                                                    causal, scale):
    q, k, v = qkv(seed, lead, Tq, Tk, d, dv, grad=True)
    g = torch.Generator().manual_seed(seed + 1)
    mask = torch.rand(*lead, Tq, Tk, generator=g) < 0.6 if use_mask else None
    ref, _ = att.attention(q, k, v, mask=mask, causal=causal, scale=scale)
    out = memory_efficient_attention(q, k, v, mask=mask, causal=causal, scale=scale,
                                     block_size=block)
    torch.testing.assert_close(out, ref, rtol=0, atol=1e-12)
    dout = torch.randn(ref.shape, generator=g, dtype=F64)
    want = torch.autograd.grad(ref, (q, k, v), dout, allow_unused=True, materialize_grads=True)
    got = torch.autograd.grad(out, (q, k, v), dout, allow_unused=True, materialize_grads=True)
    for a, b in zip(got, want):
        torch.testing.assert_close(a, b, rtol=0, atol=1e-12)


@pytest.mark.parametrize("causal", [False, True])
def test_float32_within_1e_5_and_gradcheck(causal):
    q, k, v = qkv(0, (2, 3), 70, 90, 16, 8, dtype=torch.float32)
    mask = att.padding_mask(torch.tensor([90, 0]), 90)[:, None, None, :]  # row 1: all masked
    ref, _ = att.attention(q, k, v, mask=mask, causal=causal)
    out = memory_efficient_attention(q, k, v, mask=mask, causal=causal, block_size=32)
    torch.testing.assert_close(out, ref, rtol=0, atol=1e-5)
    q, k, v = qkv(1, (2,), 5, 7, 3, 2, grad=True)
    assert torch.autograd.gradcheck(
        lambda q, k, v: memory_efficient_attention(q, k, v, causal=causal, block_size=3), (q, k, v))


def test_fully_masked_rows_give_zero_output_and_zero_gradient():
    q, k, v = qkv(2, (2,), 4, 6, 3, 2, grad=True)
    mask = att.padding_mask(torch.tensor([0, 4]), 6)[:, None, :]  # sequence 0: no key at all
    out = memory_efficient_attention(q, k, v, mask=mask, block_size=4)
    assert torch.equal(out[0], torch.zeros(4, 2, dtype=F64))
    out.sum().backward()
    assert torch.isfinite(q.grad).all() and torch.equal(q.grad[0], torch.zeros(4, 3, dtype=F64))
    assert torch.equal(k.grad[0], torch.zeros(6, 3, dtype=F64))


def test_no_key_or_no_query():
    q, k, v = qkv(7, (2,), 3, 0, 4, 2, grad=True)
    out = memory_efficient_attention(q, k, v)  # no key at all: output 0, as attention gives
    torch.testing.assert_close(out, att.attention(q, k, v)[0], rtol=0, atol=0)
    out.sum().backward()
    assert torch.equal(q.grad, torch.zeros_like(q))
    q, k, v = qkv(8, (2,), 0, 3, 4, 2)
    assert memory_efficient_attention(q, k, v).shape == (2, 0, 2)


def test_a_2d_mask_causal_with_more_queries_than_keys():
    q, k, v = qkv(3, (), 7, 4, 3, 2)  # Tq > Tk: the first 3 queries see no key under causal
    mask = torch.rand(7, 4, generator=torch.Generator().manual_seed(0)) < 0.7
    ref, _ = att.attention(q, k, v, mask=mask, causal=True)
    out = memory_efficient_attention(q, k, v, mask=mask, causal=True, block_size=3)
    torch.testing.assert_close(out, ref, rtol=0, atol=1e-12)
    assert torch.equal(out[:3], torch.zeros(3, 2, dtype=F64))


def test_saves_no_quadratic_tensor_for_backward():
    n, d = 256, 8
    q, k, v = qkv(4, (1,), n, n, d, d, dtype=torch.float32, grad=True)
    plain = saved_tensor_bytes(lambda: att.attention(q, k, v))
    blocked = saved_tensor_bytes(lambda: memory_efficient_attention(q, k, v, block_size=32))
    assert plain >= n * n * 4  # at least the (n, n) weights
    assert blocked <= 6 * n * d * 4 + 4 * n  # q (scaled), k, v, out and the log-sum-exp


def test_reexported_under_the_contract_name():
    assert att.memory_efficient_attention is memory_efficient_attention


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(block_size=0), ValueError, "block_size"),
    (dict(block_size=2.0), TypeError, "block_size"),
    (dict(causal="yes"), TypeError, "causal"),
    (dict(scale=math.inf), ValueError, "scale"),
    (dict(scale="0.5"), TypeError, "scale"),
    (dict(mask=torch.ones(3, 5)), TypeError, "mask"),
    (dict(mask=torch.ones(4, 3, dtype=torch.bool)), ValueError, "mask"),
])
def test_refuses_bad_arguments(kwargs, error, match):
    q, k, v = qkv(5, (2,), 3, 5, 4, 2)
    with pytest.raises(error, match=match):
        memory_efficient_attention(q, k, v, **kwargs)


def test_refuses_bad_tensors():
    q, k, v = qkv(6, (2,), 3, 5, 4, 2)
    with pytest.raises(ValueError, match="v must have shape"):
        memory_efficient_attention(q, k, v[:, :4])
    with pytest.raises(TypeError, match="same dtype"):
        memory_efficient_attention(q, k, v.float())
    with pytest.raises(TypeError, match="torch.Tensor"):
        memory_efficient_attention(q.numpy(), k, v)
    with pytest.raises(ValueError, match="NaN"):
        online_normalizer(torch.tensor([0.0, math.nan]), 1)
    with pytest.raises(ValueError, match="block_size"):
        online_normalizer(torch.zeros(3), 0)
