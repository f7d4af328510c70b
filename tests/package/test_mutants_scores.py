"""seqlearn.scores: defaults, inputs without a batch axis or with two, devices and the exact
wording of each validation error.

These tests close the gaps that mutation testing (``tools/mutation.py package``) found in
test_scores.py. A module's feature-size check must fail with a ``ValueError`` that names the
expected size, not let a matrix product fail later with torch's ``RuntimeError``.
"""

from __future__ import annotations

import pytest
import torch
from torch import nn

from seqlearn.scores import (AdditiveScore, BilinearScore, ConcatScore, LocationScore, MLPScore,
                             concat_pairs, dot_score, scaled_dot_score)

F64 = dict(dtype=torch.float64)
TIGHT = dict(rtol=1e-10, atol=1e-12)


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
