"""Property tests of attention, scores, causal, transformer and unroll: references and bad input."""

import math

import torch
from hypothesis import given, strategies as st
from torch import nn

from properties import F64, covers, not_bools, numpy_of, randn, refuses, seeds, sizes
from seqlearn import attention as att, causal, scores, transformer, unroll


@covers("seqlearn.attention.attention", "seqlearn.attention.attend",
        "seqlearn.attention.masked_softmax", "seqlearn.attention.causal_mask",
        "seqlearn.attention.padding_mask", "seqlearn.scores.dot_score",
        "seqlearn.scores.scaled_dot_score", "seqlearn.scores.check_query_key",
        "seqlearn.scores.default_scale", "seqlearn.causal.causal_attention_loop")
@given(seed=seeds, B=sizes, Tq=sizes, Tk=sizes, d=sizes, flag=not_bools)
def test_attention_equals_softmax_reference(seed, B, Tq, Tk, d, flag):
    q, k, v = randn(seed, B, Tq, d), randn(seed + 1, B, Tk, d), randn(seed + 2, B, Tk, 2)
    lengths = torch.randint(0, Tk + 1, (B,), generator=torch.Generator().manual_seed(seed))
    mask = att.padding_mask(lengths, Tk)[:, None, :] & att.causal_mask(Tq, Tk)
    out, w = att.attention(q, k, v, mask=mask)
    s = q @ k.transpose(-2, -1) / math.sqrt(d)
    assert scores.default_scale(d) == 1 / math.sqrt(d)
    torch.testing.assert_close(scores.scaled_dot_score(q, k), s)
    torch.testing.assert_close(scores.dot_score(q, k), s * math.sqrt(d))
    ref = torch.softmax(s.masked_fill(~mask, -math.inf), -1).nan_to_num(0.0)
    torch.testing.assert_close(w, ref)
    torch.testing.assert_close(out, ref @ v)
    torch.testing.assert_close(att.masked_softmax(s, mask), ref)
    torch.testing.assert_close(att.attend(s, v, mask=mask)[0], out)
    assert scores.check_query_key(q, k)["Tk"] == Tk
    if Tq == Tk:
        torch.testing.assert_close(causal.causal_attention_loop(q, k, v)[0],
                                   att.attention(q, k, v, causal=True)[0])
    refuses(scores.dot_score, numpy_of(q[0]), numpy_of(k[0]))  # NumPy's transpose differs
    refuses(att.attention, q, k, v, causal=flag)
    refuses(att.attention, q, k, v, mask=mask.double())
    refuses(att.attention, q, k[..., :0, :], v)
    refuses(att.causal_mask, 0)
    refuses(att.padding_mask, lengths + Tk + 1, Tk)


@covers("seqlearn.attention.MultiHeadAttention", "seqlearn.scores.BilinearScore",
        "seqlearn.scores.AdditiveScore", "seqlearn.scores.MLPScore",
        "seqlearn.scores.LocationScore")
@given(seed=seeds, B=sizes, Tq=sizes, Tk=sizes, heads=st.integers(1, 2), flag=not_bools)
def test_score_modules_and_multi_head_attention(seed, B, Tq, Tk, heads, flag):
    torch.manual_seed(seed)
    d = 2 * heads
    ref = nn.MultiheadAttention(d, heads, batch_first=True, dtype=F64).eval()
    mha = att.MultiHeadAttention.from_torch(ref)
    q, k = randn(seed, B, Tq, d), randn(seed + 1, B, Tk, d)
    out, w = mha(q, k, k)
    out_ref, w_ref = ref(q, k, k, average_attn_weights=False)
    torch.testing.assert_close(out, out_ref)
    torch.testing.assert_close(w, w_ref)
    bil = scores.BilinearScore(d, d).double()
    torch.testing.assert_close(bil(q, k), q @ bil.weight @ k.transpose(-2, -1))
    add = scores.AdditiveScore(d, d, 3).double()
    want = torch.stack([torch.stack([add.w(torch.tanh(add.query(q[:, t]) + add.key(k[:, i])))
                                     .squeeze(-1) for i in range(Tk)], -1) for t in range(Tq)], 1)
    torch.testing.assert_close(add(q, k), want)
    assert scores.MLPScore(d, d).double()(q, k).shape == (B, Tq, Tk)
    assert scores.LocationScore(d, 8).double()(q, k).shape == (B, Tq, Tk)
    refuses(att.MultiHeadAttention, d, heads, bias=flag)
    refuses(scores.AdditiveScore, d, d, 3, bias=flag)
    refuses(scores.MLPScore, d, d, bias=flag)
    refuses(mha, numpy_of(q), k, k)
    refuses(bil, q, randn(seed, B, Tk, d + 1))
    refuses(scores.LocationScore(d, 1).double(), q, randn(seed, B, 2, d))


@covers("seqlearn.causal.free_candidates", "seqlearn.causal.KeyValueAttention",
        "seqlearn.causal.MultiHeadCausalAttention", "seqlearn.causal.add_positions",
        "seqlearn.transformer.sinusoidal_positional_encoding")
@given(seed=seeds, B=sizes, T=sizes, D=sizes, flag=not_bools)
def test_causal_steps_equal_the_loop(seed, B, T, D, flag):
    fx = randn(seed, B, T, D)
    torch.testing.assert_close(causal.free_candidates(fx)[0],
                               causal.causal_attention_loop(fx, fx, fx)[0])
    kv = causal.KeyValueAttention(D, 2).double()
    q, k, v = kv.Q(fx), kv.K(fx), kv.V(fx)
    torch.testing.assert_close(kv(fx)[0], causal.causal_attention_loop(q, k, v)[0])
    h, alpha = causal.MultiHeadCausalAttention(D, 2, 2).double()(fx)
    assert h.shape == (B, T, 2 * D) and alpha.shape == (B, 2, T, T)
    pe = transformer.sinusoidal_positional_encoding(T, D, dtype=F64)
    t = torch.arange(T, dtype=F64)[:, None]
    k2 = torch.arange(0, D, 2, dtype=F64)
    torch.testing.assert_close(pe[:, 0::2], torch.sin(t * 10000.0 ** (-k2 / D)))
    torch.testing.assert_close(causal.add_positions(fx), fx + pe)
    refuses(causal.KeyValueAttention, D, 2, bias=flag)
    refuses(causal.free_candidates, numpy_of(fx))
    refuses(causal.causal_attention_loop, fx, fx, fx, scale="1")
    refuses(transformer.sinusoidal_positional_encoding, T, D, base=math.inf)
    refuses(transformer.sinusoidal_positional_encoding, T, D, dtype=torch.int64)


@covers("seqlearn.unroll.gru_implied_weights", "seqlearn.unroll.apply_implied_weights",
        "seqlearn.unroll.gru_update_loop", "seqlearn.unroll.gru_gates")
@given(seed=seeds, B=sizes, T=sizes, H=sizes)
def test_unrolled_gru_equals_the_update_loop(seed, B, T, H):
    u, cand, h0 = torch.sigmoid(randn(seed, B, T, H)), randn(seed + 1, B, T, H), randn(seed, B, H)
    alpha, beta = unroll.gru_implied_weights(u)
    h = unroll.gru_update_loop(u, cand, h0)
    torch.testing.assert_close(unroll.apply_implied_weights(alpha, beta, cand, h0), h)
    assert unroll.notes_printed_weights(u).shape == alpha.shape
    torch.manual_seed(seed)
    gru = nn.GRU(H, H, batch_first=True, dtype=F64)
    gates, cands, states = unroll.gru_gates(gru, cand)
    torch.testing.assert_close(states, gru(cand)[0])
    torch.testing.assert_close(unroll.gru_update_loop(gates, cands), states)
    refuses(unroll.gru_implied_weights, numpy_of(u))
    refuses(unroll.gru_update_loop, u, cand[..., None])
    refuses(unroll.gru_gates, gru, numpy_of(cand))
