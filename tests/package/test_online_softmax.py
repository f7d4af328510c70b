"""seqlearn.online_softmax: the running max and sum against logsumexp, blocked attention
against ``attention`` (outputs and autograd gradients, float64 and float32), and its
memory; buffer sizes and the wording of each error; properties at random sizes;
gradients of the normaliser and in float16."""

from __future__ import annotations

import math
import warnings

import pytest
import torch
from hypothesis import given, settings, strategies as st

from properties import covers, not_bools, numpy_of, randn, refuses, seeds, sizes
from seqlearn import attention as att, online_softmax
from seqlearn.attention import attention
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


# ------ buffer sizes, leading dimensions and the exact wording of each validation error


# Py. The blocked attention writes each block's scores into a reused buffer
# (``torch.matmul(..., out=buffer)``); a buffer of the wrong shape still gives the right
# numbers, because torch resizes it, but with a ``UserWarning``. So the forward and
# backward passes must run without any warning, for a last block shorter than the others
# and for several leading dimensions.


def lead_qkv(lead=(2,), Tq=3, Tk=5, d=4, dv=2, seed=0, grad=False):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(*lead, T, w, generator=g, dtype=F64).requires_grad_(grad)
            for T, w in ((Tq, d), (Tk, d), (Tk, dv))]


@pytest.mark.parametrize("lead", [(), (2,), (2, 3)])
@pytest.mark.parametrize("Tk, block", [(5, 2), (5, 5), (3, 8), (7, 3)])
def test_blocked_attention_reuses_buffers_of_the_right_shape(lead, Tk, block):
    q, k, v = lead_qkv(lead, 4, Tk, grad=True)
    mask = torch.rand(4, Tk, generator=torch.Generator().manual_seed(1)) < 0.7
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a resized out= buffer warns
        out = memory_efficient_attention(q, k, v, mask=mask, causal=True, block_size=block)
        grads = torch.autograd.grad(out.sum(), (q, k, v))
    ref, _ = attention(q, k, v, mask=mask, causal=True)
    torch.testing.assert_close(out, ref, rtol=1e-10, atol=1e-12)
    for a, b in zip(grads, torch.autograd.grad(ref.sum(), (q, k, v))):
        torch.testing.assert_close(a, b, rtol=1e-10, atol=1e-12)


def test_block_size_defaults_to_128():
    q, k, v = lead_qkv((1,), 2, 300)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = memory_efficient_attention(q, k, v)
    torch.testing.assert_close(out, memory_efficient_attention(q, k, v, block_size=128),
                               rtol=0, atol=0)
    torch.testing.assert_close(out, attention(q, k, v)[0], rtol=1e-10, atol=1e-12)


def test_online_normalizer_of_one_block_and_of_single_entries():
    scores = torch.tensor([[0.5, -1.0, 2.0, float("-inf")], [float("-inf")] * 4], dtype=F64)
    for block in (1, 3, 4, 10):
        m, l = online_normalizer(scores, block)
        assert m.tolist() == [2.0, float("-inf")]
        torch.testing.assert_close(l, torch.tensor([math.exp(-1.5) + math.exp(-3.0) + 1.0, 0.0],
                                                   dtype=F64), rtol=1e-12, atol=0)


@pytest.mark.parametrize("call, error, match", [
    (lambda q, k, v: memory_efficient_attention(q, k, v.float()), TypeError,
     r"^q and v must have the same dtype, got torch\.float64 and torch\.float32$"),
    (lambda q, k, v: memory_efficient_attention(q, k, v.long()), TypeError,
     r"^v must be a floating-point tensor"),
    (lambda q, k, v: memory_efficient_attention(q, k, v[:1].expand(1, 5, 2)), ValueError,
     r"^v must have the leading \(batch\) dimensions \(2,\) of the arguments before it"),
    (lambda q, k, v: memory_efficient_attention(q, k, v[:, :4]), ValueError,
     r"^v must have shape \(\.\.\., Tk=5, dv\), got \(2, 4, 2\)$"),
    (lambda q, k, v: memory_efficient_attention(q, k[..., :3], v), ValueError,
     r"^k must have shape \(\.\.\., Tk, dq=4\)"),
    (lambda q, k, v: memory_efficient_attention(q, k, v, causal=1), TypeError,
     r"^causal must be a bool"),
    (lambda q, k, v: memory_efficient_attention(q, k, v, block_size=0), ValueError,
     r"^block_size must be positive"),
    (lambda q, k, v: memory_efficient_attention(q, k, v, block_size=2.0), TypeError,
     r"^block_size must be an int"),
    (lambda q, k, v: memory_efficient_attention(q, k, v, scale="0.5"), TypeError,
     r"^scale must be a real number, got str$"),
    (lambda q, k, v: memory_efficient_attention(q, k, v, scale=math.nan), ValueError,
     r"^scale must be a finite number, got nan$"),
    (lambda q, k, v: memory_efficient_attention(q, k, v, mask=torch.ones(3, 5)), TypeError,
     r"^mask must be a bool tensor"),
    (lambda q, k, v: online_normalizer(q, 0), ValueError, r"^block_size must be positive"),
    (lambda q, k, v: online_normalizer(q, 1.5), TypeError, r"^block_size must be an int"),
    (lambda q, k, v: online_normalizer(q.long(), 2), TypeError,
     r"^scores must be a floating-point tensor"),
    (lambda q, k, v: online_normalizer(q.tolist(), 2), TypeError,
     r"^scores must be a torch\.Tensor, got list$"),
    (lambda q, k, v: online_normalizer(q[0, 0, 0], 2), ValueError,
     r"^scores must have shape \(\.\.\., n\), got \(\)$"),
    (lambda q, k, v: online_normalizer(torch.tensor([0.0, math.inf]), 2), ValueError,
     r"^scores must not hold NaN or \+inf \(-inf marks a masked score\)$"),
])
def test_online_softmax_error_messages(call, error, match):
    with pytest.raises(error, match=match):
        call(*lead_qkv())


# ---------------------------------------------- properties at random sizes (hypothesis)


@covers("seqlearn.online_softmax.memory_efficient_attention",
        "seqlearn.online_softmax.online_normalizer")
@given(seed=seeds, B=sizes, Tq=sizes, Tk=sizes, d=sizes, block=sizes, flag=not_bools)
def test_blocked_attention_equals_attention(seed, B, Tq, Tk, d, block, flag):
    q, k, v = randn(seed, B, Tq, d), randn(seed + 1, B, Tk, d), randn(seed + 2, B, Tk, 2)
    lengths = torch.randint(0, Tk + 1, (B,), generator=torch.Generator().manual_seed(seed))
    mask = att.padding_mask(lengths, Tk)[:, None, :]
    for causal in (False, True):
        want = att.attention(q, k, v, mask=mask, causal=causal)[0]
        got = online_softmax.memory_efficient_attention(q, k, v, mask=mask, causal=causal,
                                                        block_size=block)
        torch.testing.assert_close(got, want, rtol=0, atol=1e-12)
    s = q @ k.transpose(-2, -1)
    m, l = online_softmax.online_normalizer(s, block)
    torch.testing.assert_close(m + l.log(), torch.logsumexp(s, -1))
    refuses(online_softmax.memory_efficient_attention, q, k, v, causal=flag)
    refuses(online_softmax.memory_efficient_attention, q, k, v, block_size=0)
    refuses(online_softmax.memory_efficient_attention, q, k, v, mask=mask.double())
    refuses(online_softmax.memory_efficient_attention, numpy_of(q), k, v)
    refuses(online_softmax.online_normalizer, s, -block)
    refuses(online_softmax.online_normalizer, s + math.nan, block)


# ---------------------------- edge cases: sizes 0, reduced precision, non-finite values


def test_online_normalizer_is_differentiable():
    scores = torch.randn(3, 7, dtype=F64, requires_grad=True)
    m, l = online_softmax.online_normalizer(scores, 3)
    (m + l.log()).sum().backward()
    torch.testing.assert_close(scores.grad, torch.softmax(scores.detach(), -1))


def test_reduced_precision_attention_gradients_are_finite():
    gen = torch.Generator().manual_seed(0)
    q, k, v = (
        torch.randn(1, 16, 8, generator=gen).to(torch.float16).requires_grad_()
        for _ in range(3)
    )
    out = online_softmax.memory_efficient_attention(q * 40, k, v, block_size=4)
    out.float().sum().backward()
    assert out.dtype == torch.float16
    assert all(bool(t.grad.isfinite().all()) for t in (q, k, v))
