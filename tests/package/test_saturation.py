"""seqlearn.saturation against the softmax Jacobian from autograd and closed forms;
properties at random sizes; float64 precision when saturated."""

from __future__ import annotations

import math

import mpmath
import pytest
import torch
from hypothesis import given, strategies as st

from properties import covers, numpy_of, randn, refuses, seeds, sizes
from seqlearn import saturation
from seqlearn.saturation import softmax_saturation


F64 = torch.float64


def test_against_autograd_jacobian_and_definitions():
    scores = 3 * torch.randn(5, 9, generator=torch.Generator().manual_seed(0), dtype=F64)
    top, entropy, norm = softmax_saturation(scores)
    for row in range(5):
        alpha = torch.softmax(scores[row], 0)
        J = torch.autograd.functional.jacobian(lambda e: torch.softmax(e, 0), scores[row])
        torch.testing.assert_close(norm[row], J.norm())
        torch.testing.assert_close(entropy[row], -(alpha * alpha.log()).sum())
        torch.testing.assert_close(top[row], alpha.max())


def test_uniform_and_one_hot_rows():
    n = 64
    top, entropy, norm = softmax_saturation(torch.zeros(n, dtype=F64))
    torch.testing.assert_close(norm, torch.tensor(math.sqrt(n - 1) / n, dtype=F64))
    torch.testing.assert_close(entropy, torch.tensor(math.log(n), dtype=F64))
    top, entropy, norm = softmax_saturation(torch.tensor([0.0, -1e4, -1e4], dtype=F64))
    assert float(top) == 1.0 and float(norm) == 0.0 and float(entropy) == 0.0


def test_refuses_bad_scores():
    with pytest.raises(ValueError, match="NaN"):
        softmax_saturation(torch.tensor([0.0, math.inf]))
    with pytest.raises(ValueError, match="n >= 1"):
        softmax_saturation(torch.zeros(3, 0))
    with pytest.raises(TypeError, match="floating"):
        softmax_saturation(torch.zeros(3, dtype=torch.long))


# ---------------------------------------------- properties at random sizes (hypothesis)


@covers("seqlearn.saturation.softmax_saturation")
@given(seed=seeds, B=sizes, n=st.integers(1, 6), scale=st.floats(0.0, 30.0))
def test_softmax_saturation_equals_its_definitions(seed, B, n, scale):
    scores = scale * randn(seed, B, n)
    top, entropy, norm = saturation.softmax_saturation(scores)
    for b in range(B):
        alpha = torch.softmax(scores[b], 0)
        J = torch.diag(alpha) - torch.outer(alpha, alpha)  # reference: the Jacobian itself
        torch.testing.assert_close(norm[b], J.norm())
        torch.testing.assert_close(top[b], alpha.max())
        torch.testing.assert_close(entropy[b], -(alpha * alpha.clamp_min(1e-300).log()).sum())
    refuses(saturation.softmax_saturation, numpy_of(scores))
    refuses(saturation.softmax_saturation, scores + math.nan)
    refuses(saturation.softmax_saturation, scores[:, :0])


# ---------------------------- edge cases: sizes 0, reduced precision, non-finite values


@pytest.mark.parametrize("gap", [1.0, 10.0, 30.0, 200.0, 700.0])
def test_softmax_saturation_keeps_float64_precision_when_saturated(gap):
    scores = torch.tensor([0.0, -gap, -gap, -2 * gap], dtype=F64)
    top, entropy, norm = saturation.softmax_saturation(scores)
    with mpmath.workdps(700):  # enough digits to hold 1 - 2 e^{-700} exactly
        e = [mpmath.exp(mpmath.mpf(-x)) for x in (0.0, gap, gap, 2 * gap)]
        a = [x / sum(e) for x in e]  # the weights
        n = len(a)
        J2 = sum((a[i] * ((i == j) - a[j])) ** 2 for i in range(n) for j in range(n))
        wanted = (max(a), -sum(x * mpmath.log(x) for x in a), mpmath.sqrt(J2))
    for got, want in zip((top, entropy, norm), wanted):
        if want > 1e-150:  # beyond, the square of the norm underflows (docstring)
            assert abs(float(got) - float(want)) <= 1e-12 * float(want)
    if gap == 30.0:  # the old formula, eq-sa-jac-norm as written, returned exactly 0
        assert float(norm) == pytest.approx(2.959e-13, rel=1e-3)
