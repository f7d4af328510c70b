"""seqlearn.linear_attention against brute-force loops, the minGRU loop and the scans
(float64); the wording of each error; properties at random sizes."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings, strategies as st

from properties import covers, numpy_of, randn, refuses, seeds
from seqlearn import linear_attention as la, unroll
from seqlearn.linear_attention import (decay_mask, masked_linear_attention,
                                       mingru_as_attention)
from seqlearn.scan import linear_scan
from seqlearn.unroll import gru_implied_weights, gru_update_loop


F64 = torch.float64
SETTINGS = settings(max_examples=20, deadline=None)


def loop_attention(q, k, v, a):
    """o_t = sum_{i<=t} (prod_{j=i+1}^{t} a_j) (q_t . k_i) v_i, by explicit loops (q (T, dk))."""
    T = q.shape[0]
    out = torch.zeros(T, v.shape[-1], dtype=q.dtype)
    weights = torch.zeros(T, T, dtype=q.dtype)
    for t in range(T):
        for i in range(t + 1):
            m = 1.0
            for j in range(i + 1, t + 1):
                m = m * a[j]
            weights[t, i] = m * torch.dot(q[t], k[i])
            out[t] += weights[t, i] * v[i]
    return out, weights


@SETTINGS
@given(seed=st.integers(0, 2**16), T=st.integers(1, 9), dk=st.integers(1, 3),
       dv=st.integers(1, 3), zeros=st.booleans(), decay=st.booleans())
def test_quadratic_and_recurrent_forms_equal_the_loop(seed, T, dk, dv, zeros, decay):
    g = torch.Generator().manual_seed(seed)
    q, k = torch.randn(T, dk, generator=g, dtype=F64), torch.randn(T, dk, generator=g, dtype=F64)
    v = torch.randn(T, dv, generator=g, dtype=F64)
    a = torch.rand(T, generator=g, dtype=F64) if decay else torch.ones(T, dtype=F64)
    if zeros:
        a[T // 2] = 0.0  # a hard reset
    log_a = torch.log(a) if decay or zeros else None
    want, weights = loop_attention(q, k, v, a)
    got, got_weights = la.masked_linear_attention(q, k, v, log_a)
    torch.testing.assert_close(got, want, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(got_weights, weights, rtol=1e-12, atol=1e-12)
    for method in ("sequential", "parallel", "blelloch"):
        torch.testing.assert_close(la.recurrent_linear_attention(q, k, v, log_a, method=method),
                                   want, rtol=1e-10, atol=1e-12)


def test_decay_mask_entries_and_exact_zeros():
    a = torch.tensor([0.5, 0.0, 0.25, 0.8], dtype=F64)
    M = la.decay_mask(torch.log(a))
    want = torch.tensor([[1, 0, 0, 0], [0.0, 1, 0, 0], [0.0, 0.25, 1, 0],
                         [0.0, 0.2, 0.8, 1]], dtype=F64)
    torch.testing.assert_close(M, want, rtol=1e-15, atol=0)
    assert not M.isnan().any()
    batched = la.decay_mask(torch.log(torch.stack([a, a.flip(0)])))
    torch.testing.assert_close(batched[0], want, rtol=1e-15, atol=0)
    assert batched.shape == (2, 4, 4)


def test_no_decay_is_plain_causal_linear_attention():
    g = torch.Generator().manual_seed(1)
    q, k, v = (torch.randn(2, 6, 3, generator=g, dtype=F64) for _ in range(3))
    out, w = la.masked_linear_attention(q, k, v)
    scores = (q @ k.transpose(-1, -2)).tril()
    torch.testing.assert_close(w, scores, rtol=1e-14, atol=0)
    torch.testing.assert_close(out, scores @ v)
    torch.testing.assert_close(la.recurrent_linear_attention(q, k, v), out)


@SETTINGS
@given(seed=st.integers(0, 2**16), T=st.integers(1, 12), H=st.integers(1, 3),
       zeros=st.booleans())
def test_mingru_as_attention_is_the_mingru(seed, T, H, zeros):
    g = torch.Generator().manual_seed(seed)
    u = torch.rand(2, T, H, generator=g, dtype=F64)
    if zeros:
        u[:, ::3, 0] = 0.0
    c = torch.randn(2, T, H, generator=g, dtype=F64)
    h, A = la.mingru_as_attention(u, c)
    torch.testing.assert_close(h, gru_update_loop(u, c), rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(h, linear_scan(u, (1 - u) * c, method="parallel"),
                               rtol=1e-10, atol=1e-12)
    torch.testing.assert_close(A, gru_implied_weights(u)[0].permute(0, 3, 1, 2),
                               rtol=1e-12, atol=1e-14)
    assert A.shape == (2, H, T, T)


def test_errors_name_what_is_wrong():
    q = torch.randn(5, 3, dtype=F64)
    with pytest.raises(TypeError, match="q must be a torch.Tensor"):
        la.masked_linear_attention(q.numpy(), q, q)
    with pytest.raises(ValueError, match="k must have shape"):
        la.masked_linear_attention(q, q[:, :2], q)
    with pytest.raises(ValueError, match="v must have shape"):
        la.masked_linear_attention(q, q, q[:4])
    with pytest.raises(TypeError, match="same dtype"):
        la.masked_linear_attention(q, q.float(), q)
    with pytest.raises(TypeError, match="same dtype"):
        la.masked_linear_attention(q, q, q.float())
    with pytest.raises(ValueError, match="log_decay must have shape"):
        la.masked_linear_attention(q, q, q, torch.zeros(4, dtype=F64))
    with pytest.raises(ValueError, match="log_decay must be <= 0"):
        la.masked_linear_attention(q, q, q, torch.full((5,), 0.1, dtype=F64))
    with pytest.raises(ValueError, match="log_decay must be <= 0"):
        la.recurrent_linear_attention(q, q, q, torch.full((5,), float("nan"), dtype=F64))
    with pytest.raises(TypeError, match="log_decay must be a torch.Tensor or None"):
        la.masked_linear_attention(q, q, q, [0.0] * 5)
    with pytest.raises(TypeError, match="same dtype"):
        la.masked_linear_attention(q, q, q, torch.zeros(5))
    with pytest.raises(TypeError, match="log_decay must be a torch.Tensor"):
        la.decay_mask([0.0])
    with pytest.raises(ValueError, match="log_decay must be <= 0"):
        la.decay_mask(torch.tensor([0.0, 1e-3], dtype=F64))
    with pytest.raises(ValueError, match="log_decay must be <= 0"):
        la.decay_mask(torch.tensor([0.0, float("nan")], dtype=F64))
    with pytest.raises(ValueError, match="log_decay must have shape"):
        la.decay_mask(torch.tensor(0.0, dtype=F64))
    u = torch.rand(5, 2, dtype=F64)
    with pytest.raises(ValueError, match=r"h_tilde must have the shape of u \(5, 2\)"):
        la.mingru_as_attention(u, u[:, :1])
    with pytest.raises(ValueError, match=r"u must lie in \[0, 1\]"):
        la.mingru_as_attention(u + 1, u)
    with pytest.raises(ValueError, match=r"u must lie in \[0, 1\]"):
        la.mingru_as_attention(u - 1, u)
    with pytest.raises(TypeError, match="h_tilde must be a torch.Tensor"):
        la.mingru_as_attention(u, u.numpy())
    with pytest.raises(TypeError, match="same dtype"):
        la.mingru_as_attention(u, u.float())
    with pytest.raises(ValueError, match="u must have shape"):
        la.mingru_as_attention(u[:, 0], u[:, 0])


def test_gates_exactly_zero_and_one_are_accepted_and_exact():
    u = torch.tensor([[0.0, 1.0, 0.5, 1.0, 0.0, 1.0]], dtype=F64).T  # (6, 1)
    c = torch.arange(1.0, 7.0, dtype=F64)[:, None]
    h, A = la.mingru_as_attention(u, c)
    torch.testing.assert_close(h[:, 0], torch.tensor([1.0, 1, 2, 2, 5, 5], dtype=F64),
                               rtol=0, atol=0)
    assert not A.isnan().any()
    q = torch.ones(6, 1, dtype=F64)
    out, _ = la.masked_linear_attention(q, 1 - u, c, torch.log(u[:, 0]))
    torch.testing.assert_close(out, h, rtol=0, atol=0)


# ------------------------------------------- the exact wording of each validation error


# Py: every error names the argument at fault, and the time axis of ``q`` binds that of
# ``k`` and ``v``.


def _qkv(T=3):
    return (torch.zeros(2, T, 4, dtype=F64), torch.zeros(2, T, 4, dtype=F64),
            torch.zeros(2, T, 5, dtype=F64))


@pytest.mark.parametrize("call, error, match", [
    (lambda q, k, v: masked_linear_attention(q, k.long(), v), TypeError,
     r"^k must be a floating-point tensor, got dtype torch\.int64$"),
    (lambda q, k, v: masked_linear_attention(q, k, v.long()), TypeError,
     r"^v must be a floating-point tensor, got dtype torch\.int64$"),
    (lambda q, k, v: masked_linear_attention(q, k[:, :2], v[:, :2]), ValueError,
     r"^k must have shape \(\.\.\., T=3, dk=4\), got \(2, 2, 4\) \(T as in q\)$"),
    (lambda q, k, v: masked_linear_attention(q, k.float(), v), TypeError,
     r"^q and k must have the same dtype, got torch\.float64 and torch\.float32$"),
    (lambda q, k, v: masked_linear_attention(q, k, v.float()), TypeError,
     r"^q and v must have the same dtype, got torch\.float64 and torch\.float32$"),
    (lambda q, k, v: masked_linear_attention(q, k, v, torch.zeros(2, 3)), TypeError,
     r"^q and log_decay must have the same dtype, got torch\.float64 and torch\.float32$"),
    (lambda q, k, v: decay_mask(torch.zeros(3, dtype=torch.long)), TypeError,
     r"^log_decay must be a floating-point tensor, got dtype torch\.int64$"),
    (lambda q, k, v: decay_mask(torch.tensor([0.0, 0.5])), ValueError,
     r"^log_decay must be <= 0 \(a decay a_t = exp\(log_decay\) in \[0, 1\]\)$"),
    (lambda q, k, v: mingru_as_attention(torch.full((1, 2, 3), 1.5), torch.zeros(1, 2, 3)),
     ValueError, r"^u must lie in \[0, 1\] \(keep gates\)$"),
])
def test_errors_name_the_argument(call, error, match):
    with pytest.raises(error, match=match):
        call(*_qkv())


# ---------------------------------------------- properties at random sizes (hypothesis)


@covers("seqlearn.linear_attention.decay_mask",
        "seqlearn.linear_attention.masked_linear_attention",
        "seqlearn.linear_attention.recurrent_linear_attention")
@given(seed=seeds, T=st.integers(1, 8), dk=st.integers(1, 3), dv=st.integers(1, 3),
       method=st.sampled_from(["sequential", "parallel", "hillis-steele", "blelloch"]))
def test_masked_form_equals_the_fixed_state_recurrence(seed, T, dk, dv, method):
    q, k, v = randn(seed, 2, T, dk), randn(seed + 1, 2, T, dk), randn(seed + 2, 2, T, dv)
    a = torch.sigmoid(randn(seed + 3, 2, T))
    a[:, 0] = 0.0  # exact zeros are allowed
    M = la.decay_mask(a.log())
    for t in range(T):  # M_{t,i} = prod_{j=i+1}^{t} a_j, by products of the gates themselves
        for i in range(T):
            want = torch.prod(a[:, i + 1: t + 1], dim=1) if i <= t else torch.zeros(2, dtype=F64)
            torch.testing.assert_close(M[:, t, i], want, rtol=1e-12, atol=0)
    out, weights = la.masked_linear_attention(q, k, v, a.log())
    torch.testing.assert_close(weights, M * (q @ k.transpose(1, 2)))
    torch.testing.assert_close(la.recurrent_linear_attention(q, k, v, a.log(), method=method),
                               out, rtol=1e-10, atol=1e-12)
    refuses(la.masked_linear_attention, numpy_of(q), k, v)
    refuses(la.decay_mask, -a.log())  # positive log decays: a > 1


@covers("seqlearn.linear_attention.mingru_as_attention")
@given(seed=seeds, T=st.integers(1, 8), H=st.integers(1, 3))
def test_mingru_is_masked_linear_attention(seed, T, H):
    u, cand = torch.sigmoid(randn(seed, T, H)), randn(seed + 1, T, H)
    h, A = la.mingru_as_attention(u, cand)
    torch.testing.assert_close(h, unroll.gru_update_loop(u, cand))
    torch.testing.assert_close(A, unroll.gru_implied_weights(u)[0].permute(2, 0, 1))
    refuses(la.mingru_as_attention, u + 2, cand)
