"""seqlearn.scores: every score function against its formula evaluated pair by pair;
defaults, inputs without a batch axis or with two, devices and the wording of each
error; properties at random sizes."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given
from torch import nn

from properties import (F64 as DOUBLE, covers, not_bools, numpy_of,
                        randn as seeded_randn, refuses, seeds, sizes)
from seqlearn import scores
from seqlearn.attention import attend
from seqlearn.scores import (AdditiveScore, BilinearScore, ConcatScore, LocationScore,
                             MLPScore, concat_pairs, dot_score, scaled_dot_score)


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


#  defaults, inputs without a batch axis or with two, devices and the exact wording of each validation error


# Py. A module's feature-size check must fail with a ``ValueError`` that names the
# expected size, not let a matrix product fail later with torch's ``RuntimeError``.


def randn(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), **F64)


# --- any number of leading dimensions ---------------------------------------------------------

@pytest.mark.parametrize("lead", [(), (2, 3)])
def test_concat_pairs_and_additive_score_without_or_with_two_batch_axes(lead):
    q, k = randn(*lead, 3, 2, seed=1), randn(*lead, 4, 5, seed=2)
    stacked = concat_pairs(q, k)
    assert stacked.shape == (*lead, 3, 4, 7)
    for t in range(3):
        for i in range(4):
            torch.testing.assert_close(stacked[..., t, i, :], torch.cat([q[..., t, :],
                                                                         k[..., i, :]], -1),
                                       rtol=0, atol=0)
    torch.manual_seed(0)
    concat = ConcatScore(2, 5, 6, bias=True).double()
    additive = AdditiveScore.from_concat(concat)
    want = concat.v(torch.tanh(concat.W(stacked))).squeeze(-1)
    torch.testing.assert_close(concat(q, k), want, **TIGHT)
    torch.testing.assert_close(additive(q, k), want, **TIGHT)


# --- defaults ---------------------------------------------------------------------------------

def test_default_biases():
    torch.manual_seed(0)
    assert ConcatScore(2, 3, 4).W.bias is None  # bias=False by default
    assert ConcatScore(2, 3, 4).v.bias is None
    additive = AdditiveScore(2, 3, 4)
    assert additive.query.bias is None and additive.key.bias is None and additive.w.bias is None
    assert LocationScore(2, 5).proj.bias is None
    mlp = MLPScore(2, 3, hidden=(4, 5))  # bias=True by default: every Linear has one
    linears = [m for m in mlp.mlp if isinstance(m, nn.Linear)]
    assert [lin.bias is not None for lin in linears] == [True, True, True]
    assert [m.__class__ for m in mlp.mlp] == [nn.Linear, nn.ReLU, nn.Linear, nn.ReLU, nn.Linear]
    without = MLPScore(2, 3, hidden=(4, 5), bias=False)
    assert all(m.bias is None for m in without.mlp if isinstance(m, nn.Linear))


def test_location_score_accepts_exactly_max_len_keys():
    torch.manual_seed(0)
    score = LocationScore(4, 5).double()
    q = randn(2, 3, 4)
    e = score(q, randn(2, 5, 4, seed=1))  # Tk == max_len is allowed
    torch.testing.assert_close(e, q @ score.proj.weight.T, **TIGHT)
    torch.testing.assert_close(score(q, randn(2, 2, 4, seed=1)), e[..., :2], **TIGHT)


# --- devices ----------------------------------------------------------------------------------

def test_additive_from_concat_copies_onto_the_device_of_the_concat_score():
    concat = ConcatScore(3, 2, 4, bias=True).to("meta")
    additive = AdditiveScore.from_concat(concat)  # copying meta weights into CPU ones would raise
    assert {p.device.type for p in additive.parameters()} == {"meta"}


# --- a module's own sizes are checked before any product -----------------------------------------

@pytest.mark.parametrize("make, dq, dk, match", [
    (lambda: BilinearScore(4, 3), 3, 3, r"^q must have shape \(\.\.\., Tq, dq=4\)"),
    (lambda: ConcatScore(4, 3, 2), 3, 3, r"^q must have shape \(\.\.\., Tq, dq=4\)"),
    (lambda: AdditiveScore(4, 3, 2), 4, 4, r"^k must have shape \(\.\.\., Tk, dk=3\)"),
    (lambda: AdditiveScore(4, 3, 2), 3, 3, r"^q must have shape \(\.\.\., Tq, dq=4\)"),
    (lambda: MLPScore(3, 4), 2, 4, r"^q must have shape \(\.\.\., Tq, dq=3\)"),
    (lambda: LocationScore(3, 5), 4, 4, r"^q must have shape \(\.\.\., Tq, dq=3\)"),
])
def test_modules_check_their_feature_sizes(make, dq, dk, match):
    torch.manual_seed(0)
    score = make().double()
    with pytest.raises(ValueError, match=match):
        score(randn(2, 3, dq), randn(2, 5, dk, seed=1))


# --- validation messages name the argument and what it got -------------------------------------

@pytest.mark.parametrize("call, error, match", [
    (lambda q, k: dot_score(q, k.float()), TypeError,
     r"^q and k must have the same dtype, got torch\.float64 and torch\.float32$"),
    (lambda q, k: dot_score(q, k.long()), TypeError, r"^k must be a floating-point tensor"),
    (lambda q, k: dot_score(q, k.tolist()), TypeError, r"^k must be a torch\.Tensor, got list$"),
    (lambda q, k: scaled_dot_score(q, k, scale="2"), TypeError,
     r"^scale must be a real number, got str$"),
    (lambda q, k: AdditiveScore.from_concat(MLPScore(2, 2)), TypeError,
     r"^concat must be a ConcatScore, got MLPScore$"),
    (lambda q, k: MLPScore(2, 2, hidden=5), TypeError,
     r"^hidden must be a sequence of ints, got int$"),
    (lambda q, k: MLPScore(2, 2, hidden="ab"), TypeError,
     r"^hidden must be a sequence of ints, got str$"),
    (lambda q, k: MLPScore(2, 2, activation=nn.ReLU()), TypeError,
     r"^activation must be a torch\.nn\.Module class, got ReLU\(\)$"),
    (lambda q, k: MLPScore(2, 2, activation=int), TypeError,
     r"^activation must be a torch\.nn\.Module class, got <class 'int'>$"),
])
def test_score_function_error_messages(call, error, match):
    q, k = randn(2, 3, 4), randn(2, 5, 4, seed=1)
    with pytest.raises(error, match=match):
        call(q, k)


CONSTRUCTORS = {  # each score class with valid arguments and the names it validates
    BilinearScore: (dict(d_q=2, d_k=3), ["d_q", "d_k"]),
    ConcatScore: (dict(d_q=2, d_k=3, d_hidden=4), ["d_q", "d_k", "d_hidden", "bias"]),
    AdditiveScore: (dict(d_q=2, d_k=3, d_hidden=4), ["d_q", "d_k", "d_hidden", "bias"]),
    MLPScore: (dict(d_q=2, d_k=3), ["d_q", "d_k", "bias"]),
    LocationScore: (dict(d_q=2, max_len=3), ["d_q", "max_len"]),
}


@pytest.mark.parametrize("cls, name", [(cls, name) for cls, (_, names) in CONSTRUCTORS.items()
                                       for name in names])
def test_constructors_name_the_bad_argument(cls, name):
    good = CONSTRUCTORS[cls][0]
    if name == "bias":
        with pytest.raises(TypeError, match=r"^bias must be a bool, got int 1$"):
            cls(**good, bias=1)
        return
    with pytest.raises(ValueError, match=rf"^{name} must be positive"):
        cls(**{**good, name: 0})
    with pytest.raises(TypeError, match=rf"^{name} must be an int"):
        cls(**{**good, name: 2.0})


# ---------------------------------------------- properties at random sizes (hypothesis)


@covers("seqlearn.scores.concat_pairs", "seqlearn.scores.ConcatScore")
@given(seed=seeds, B=sizes, Tq=sizes, Tk=sizes, dq=sizes, dk=sizes, h=sizes, flag=not_bools)
def test_concat_score_equals_the_pair_loop_and_the_additive_form(seed, B, Tq, Tk, dq, dk, h,
                                                                 flag):
    torch.manual_seed(seed)
    q, k = seeded_randn(seed, B, Tq, dq), seeded_randn(seed + 1, B, Tk, dk)
    stacked = scores.concat_pairs(q, k)  # (B, Tq, Tk, dq + dk)
    concat = scores.ConcatScore(dq, dk, h, bias=bool(seed % 2)).double()
    b = concat.W.bias if concat.W.bias is not None else torch.zeros(h, dtype=DOUBLE)
    want = torch.zeros(B, Tq, Tk, dtype=DOUBLE)
    for n in range(B):
        for t in range(Tq):
            for i in range(Tk):
                pair = torch.cat([q[n, t], k[n, i]])
                torch.testing.assert_close(stacked[n, t, i], pair, rtol=0, atol=0)
                want[n, t, i] = concat.v.weight[0] @ torch.tanh(concat.W.weight @ pair + b)
    torch.testing.assert_close(concat(q, k), want)
    torch.testing.assert_close(scores.AdditiveScore.from_concat(concat)(q, k), want)
    refuses(scores.ConcatScore, dq, dk, h, bias=flag)
    refuses(scores.ConcatScore, dq, dk, 0)
    refuses(concat, q, seeded_randn(seed, B, Tk, dk + 1))
    refuses(concat, q.float(), k)
    refuses(scores.concat_pairs, numpy_of(q), k)
    refuses(scores.concat_pairs, q, seeded_randn(seed, B + 1, Tk, dk))
    refuses(scores.AdditiveScore.from_concat, scores.MLPScore(dq, dk))
