"""seqlearn.saturation against the softmax Jacobian from autograd and closed forms."""

from __future__ import annotations

import math

import pytest
import torch

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
