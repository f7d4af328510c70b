"""seqlearn.scores: every score function against its formula evaluated pair by pair."""

from __future__ import annotations

import math

import pytest
import torch

from seqlearn.attention import attend
from seqlearn.scores import (AdditiveScore, BilinearScore, ConcatScore, LocationScore, MLPScore,
                             concat_pairs, dot_score, scaled_dot_score)

F64 = dict(dtype=torch.float64)
TIGHT = dict(rtol=1e-10, atol=1e-12)


def pairs(q, k):
    """Every (b, t, i) with its query and key vectors: the loop all references run over."""
    for b in range(q.shape[0]):
        for t in range(q.shape[1]):
            for i in range(k.shape[1]):
                yield b, t, i, q[b, t], k[b, i]


def by_pairs(q, k, score):
    e = torch.zeros(q.shape[0], q.shape[1], k.shape[1], **F64)
    for b, t, i, q_t, k_i in pairs(q, k):
        e[b, t, i] = score(q_t, k_i)
    return e


@pytest.fixture
def qk():
    gen = torch.Generator().manual_seed(0)
    return torch.randn(2, 3, 4, generator=gen, **F64), torch.randn(2, 5, 4, generator=gen, **F64)


def test_dot_and_scaled_dot(qk):
    q, k = qk
    dot = by_pairs(q, k, lambda a, b: sum(a[j] * b[j] for j in range(4)))
    torch.testing.assert_close(dot_score(q, k), dot, **TIGHT)
    torch.testing.assert_close(scaled_dot_score(q, k), dot / 2.0, **TIGHT)  # 1 / sqrt(d=4)
    torch.testing.assert_close(scaled_dot_score(q, k, 0.1), 0.1 * dot, **TIGHT)


def test_bilinear_is_q_w_k_and_dot_when_w_is_identity(qk):
    q, k = qk
    score = BilinearScore(4, 4).double()
    torch.testing.assert_close(score(q, k), by_pairs(q, k, lambda a, b: a @ score.weight @ b), **TIGHT)
    with torch.no_grad():
        score.weight.copy_(torch.eye(4))
    torch.testing.assert_close(score(q, k), dot_score(q, k), **TIGHT)
    rect = BilinearScore(4, 3).double()  # queries and keys of different widths
    k3 = k[..., :3]
    torch.testing.assert_close(rect(q, k3), by_pairs(q, k3, lambda a, b: a @ rect.weight @ b), **TIGHT)


@pytest.mark.parametrize("bias", [False, True])
def test_additive_equals_concatenated_form(qk, bias):
    q, k = qk
    k3 = k[..., :3].contiguous()
    score = AdditiveScore(4, 3, 6, bias=bias).double()
    W = torch.cat([score.query.weight, score.key.weight], dim=1)  # (h, dq + dk): W = [W_q W_k]
    b = score.query.bias if bias else torch.zeros(6, **F64)
    w = score.w.weight[0]
    ref = by_pairs(q, k3, lambda a, c: w @ torch.tanh(W @ torch.cat([a, c]) + b))
    torch.testing.assert_close(score(q, k3), ref, **TIGHT)


def test_concat_pairs_stacks_every_query_with_every_key(qk):
    q, k = qk
    k3 = k[..., :3]
    stacked = concat_pairs(q, k3)  # (2, 3, 5, 7)
    assert stacked.shape == (2, 3, 5, 7)
    for b, t, i, q_t, k_i in pairs(q, k3):
        torch.testing.assert_close(stacked[b, t, i], torch.cat([q_t, k_i]), rtol=0, atol=0)


@pytest.mark.parametrize("bias", [False, True])
def test_concat_score_is_v_tanh_w_of_each_stacked_pair(qk, bias):
    q, k = qk
    k3 = k[..., :3]
    score = ConcatScore(4, 3, 6, bias=bias).double()
    b = score.W.bias if bias else torch.zeros(6, **F64)
    ref = by_pairs(q, k3, lambda a, c: score.v.weight[0] @ torch.tanh(
        score.W.weight @ torch.cat([a, c]) + b))
    torch.testing.assert_close(score(q, k3), ref, **TIGHT)


@pytest.mark.parametrize("bias", [False, True])
def test_additive_from_concat_gives_equal_scores_and_gradients(qk, bias):
    """W [q; k] = W_q q + W_k k: equal scores, and dL/dW = [dL/dW_q  dL/dW_k]."""
    q, k = qk
    k3 = k[..., :3].contiguous()
    concat = ConcatScore(4, 3, 6, bias=bias).double()
    additive = AdditiveScore.from_concat(concat)
    assert additive.query.weight.dtype == torch.float64
    e_concat, e_additive = concat(q, k3), additive(q, k3)
    torch.testing.assert_close(e_additive, e_concat, **TIGHT)
    upstream = torch.randn(e_concat.shape, generator=torch.Generator().manual_seed(1), **F64)
    (e_concat * upstream).sum().backward()
    (e_additive * upstream).sum().backward()
    torch.testing.assert_close(torch.cat([additive.query.weight.grad, additive.key.weight.grad],
                                         dim=1), concat.W.weight.grad, **TIGHT)
    torch.testing.assert_close(additive.w.weight.grad, concat.v.weight.grad, **TIGHT)
    if bias:
        torch.testing.assert_close(additive.query.bias.grad, concat.W.bias.grad, **TIGHT)


def test_mlp_with_one_tanh_layer_and_no_bias_is_additive(qk):
    q, k = qk
    additive = AdditiveScore(4, 4, 5).double()
    mlp = MLPScore(4, 4, hidden=(5,), activation=torch.nn.Tanh, bias=False).double()
    with torch.no_grad():
        mlp.mlp[0].weight.copy_(torch.cat([additive.query.weight, additive.key.weight], dim=1))
        mlp.mlp[2].weight.copy_(additive.w.weight)
    torch.testing.assert_close(mlp(q, k), additive(q, k), **TIGHT)


def test_mlp_score_is_the_mlp_of_each_pair(qk):
    q, k = qk
    score = MLPScore(4, 4, hidden=(7, 3)).double()
    ref = by_pairs(q, k, lambda a, b: score.mlp(torch.cat([a, b]))[0])
    torch.testing.assert_close(score(q, k), ref, **TIGHT)


def test_location_score_ignores_key_content(qk):
    q, k = qk
    score = LocationScore(4, max_len=8).double()
    e = score(q, k)
    torch.testing.assert_close(e, (q @ score.proj.weight.T)[..., :5], **TIGHT)
    torch.testing.assert_close(score(q, torch.randn_like(k)), e, **TIGHT)


def test_attend_backpropagates_into_score_parameters(qk):
    q, k = qk
    score = AdditiveScore(4, 4, 3).double()
    out, weights = attend(score(q, k), k, causal=True)
    out.sum().backward()
    assert all(p.grad is not None and bool(torch.isfinite(p.grad).all()) for p in score.parameters())
    torch.testing.assert_close(weights.sum(-1), torch.ones(2, 3, **F64), **TIGHT)


@pytest.mark.parametrize("call, error, match", [
    (lambda q, k: dot_score(q, k[..., :3]), ValueError, r"k must have shape \(\.\.\., Tk, dq=4\)"),
    (lambda q, k: dot_score(q[:1], k), ValueError, "leading"),
    (lambda q, k: dot_score(q, k.float()), TypeError, "same dtype"),
    (lambda q, k: dot_score(q.int(), k), TypeError, "q must be a floating-point"),
    (lambda q, k: scaled_dot_score(q, k, scale=True), TypeError, "scale must be a real number"),
    (lambda q, k: scaled_dot_score(q, k, scale=math.nan), ValueError, "finite"),
    (lambda q, k: BilinearScore(4, 3).double()(q, k), ValueError, r"dk=3"),
    (lambda q, k: AdditiveScore(3, 4, 2).double()(q, k), ValueError, r"dq=3"),
    (lambda q, k: MLPScore(4, 2).double()(q, k), ValueError, r"dk=2"),
    (lambda q, k: LocationScore(4, 4).double()(q, k), ValueError, "Tk=5 positions, more than max_len=4"),
    (lambda q, k: BilinearScore(0, 3), ValueError, "d_q must be positive"),
    (lambda q, k: AdditiveScore(2, 2, 1.5), TypeError, "d_hidden must be an int"),
    (lambda q, k: MLPScore(2, 2, hidden=(3, 0)), ValueError, "hidden width must be positive"),
    (lambda q, k: LocationScore(2, max_len=-1), ValueError, "max_len must be positive"),
    (lambda q, k: ConcatScore(4, 3, 2).double()(q, k), ValueError, r"dk=3"),
    (lambda q, k: ConcatScore(4, 4, 0), ValueError, "d_hidden must be positive"),
    (lambda q, k: ConcatScore(4, 4, 2, bias=1), TypeError, "bias must be a bool"),
    (lambda q, k: AdditiveScore.from_concat(AdditiveScore(4, 4, 2)), TypeError,
     "concat must be a ConcatScore"),
    (lambda q, k: concat_pairs(q, k[:1]), ValueError, "leading"),
])
def test_score_validation(qk, call, error, match):
    with pytest.raises(error, match=match):
        call(*qk)
