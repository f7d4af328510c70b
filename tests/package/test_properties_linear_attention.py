"""Property tests of seqlearn.linear_attention and seqlearn.mingru (chapter gru_to_attention)."""

import torch
from hypothesis import given, strategies as st

from properties import F64, covers, numpy_of, randn, refuses, seeds
from seqlearn import linear_attention as la, mingru, unroll


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


@covers("seqlearn.mingru.MinGRU", "seqlearn.mingru.MinLSTM", "seqlearn.mingru.log_space_scan",
        "seqlearn.mingru.positive_candidate", "seqlearn.mingru.log_positive_candidate")
@given(seed=seeds, T=st.integers(1, 12), scale=st.sampled_from([0.1, 1.0, 5.0]),
       cls=st.sampled_from([mingru.MinGRU, mingru.MinLSTM]))
def test_log_space_layers_equal_their_loops(seed, T, scale, cls):
    torch.manual_seed(seed)
    layer = cls(2, 3).double()
    x = scale * randn(seed, 2, T, 2)
    want = layer(x, method="sequential")
    torch.testing.assert_close(layer(x), want, rtol=1e-10, atol=1e-12)
    assert bool((want > 0).all())  # positive candidates and gates: positive states
    y = scale * randn(seed + 1, 5)
    torch.testing.assert_close(mingru.log_positive_candidate(y),
                               mingru.positive_candidate(y).log())
    refuses(layer, x.float())
    refuses(mingru.log_space_scan, x, x[..., :1])
