"""seqlearn.bptt.clip: gradient-norm clipping against torch.nn.utils.clip_grad_norm_ and
its exact value."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

from seqlearn.bptt import clip_grad_norm, global_norm


SEEDS = st.integers(0, 2**32 - 1)


@settings(max_examples=20, deadline=None)
@given(SEEDS, st.floats(0.01, 10.0))
def test_clip_grad_norm_matches_torch(seed, max_norm):
    rng = np.random.default_rng(seed)
    grads = {"a": rng.standard_normal((3, 4)) * rng.uniform(0.1, 5), "b": rng.standard_normal(5)}
    clipped, norm = clip_grad_norm(grads, max_norm)
    tensors = [torch.zeros(g.shape, dtype=torch.float64, requires_grad=True) for g in grads.values()]
    for t, g in zip(tensors, grads.values()):
        t.grad = torch.from_numpy(g.copy())
    expected_norm = torch.nn.utils.clip_grad_norm_(tensors, max_norm)
    assert abs(norm - float(expected_norm)) <= 1e-12 * norm
    for t, g in zip(tensors, clipped.values()):
        np.testing.assert_allclose(g, t.grad.numpy(), rtol=1e-14, atol=0)
    assert global_norm(clipped) <= max_norm * (1 + 1e-12)


@pytest.mark.parametrize("scale", [0.5, 1.0, 4.0])
def test_clip_grad_norm_exact(scale):
    rng = np.random.default_rng(10)
    grads = {"a": scale * rng.standard_normal((2, 3)), "b": scale * rng.standard_normal(4)}
    flat = np.concatenate([g.ravel() for g in grads.values()])
    norm = float(np.linalg.norm(flat))
    assert global_norm(grads) == pytest.approx(norm, rel=1e-14)
    for max_norm in (norm / 2, norm, 2 * norm, float("inf")):
        clipped, n = clip_grad_norm(grads, max_norm)
        assert n == pytest.approx(norm, rel=1e-14)
        factor = min(1.0, max_norm / (norm + 1e-6))
        for k in grads:
            np.testing.assert_allclose(clipped[k], grads[k] * factor, rtol=1e-15)
        if max_norm > norm:
            assert all(np.array_equal(clipped[k], grads[k]) for k in grads)
    clipped, _ = clip_grad_norm(grads, norm / 2, eps=0.0)
    assert global_norm(clipped) == pytest.approx(norm / 2, rel=1e-14)
    clipped, _ = clip_grad_norm(grads, norm, eps=0.0)       # the boundary: factor exactly 1
    assert all(np.array_equal(clipped[k], grads[k]) for k in grads)


def test_clip_validation():
    with pytest.raises(TypeError, match="grads must be a non-empty dict of arrays, got list"):
        global_norm([np.ones(2)])
    with pytest.raises(TypeError, match="grads must be a non-empty dict of arrays, got dict"):
        global_norm({})
    with pytest.raises(TypeError, match=r"grads\['a'\] must be a numpy.ndarray, got list"):
        global_norm({"a": [1.0]})
    with pytest.raises(TypeError, match=r"grads\['a'\] must be a floating-point array"):
        global_norm({"a": np.ones(2, dtype=np.int64)})
    with pytest.raises(ValueError, match=r"grads\['b'\] contains NaN or infinity"):
        global_norm({"a": np.ones(2), "b": np.array([np.inf])})
    with pytest.raises(ValueError, match="max_norm must be positive"):
        clip_grad_norm({"a": np.ones(2)}, -1.0)
    with pytest.raises(ValueError, match="eps must be"):
        clip_grad_norm({"a": np.ones(2)}, 1.0, eps=-1e-3)


# ------------------------------------ edge cases: float16 sums, eps = 0 (issue 31)

def test_float16_norm_is_torchs_and_does_not_overflow():
    """300 ** 2 * 3 overflows float16 (65504): the norm must still be 519.6, as
    torch's."""
    grads = {"W": np.full(3, 300.0, np.float16)}
    ref = torch.nn.utils.get_total_norm([torch.from_numpy(grads["W"])])
    assert global_norm(grads) == pytest.approx(float(ref), rel=1e-3)
    assert global_norm(grads) == pytest.approx(300.0 * 3 ** 0.5, rel=1e-6)
    clipped, norm = clip_grad_norm(grads, 1000.0)  # below max_norm: left alone
    assert norm == pytest.approx(519.615, rel=1e-5)
    assert clipped["W"].dtype == np.float16
    np.testing.assert_array_equal(clipped["W"], grads["W"])
    t = torch.from_numpy(grads["W"].copy()).requires_grad_(True)
    t.grad = t.detach().clone()
    torch.nn.utils.clip_grad_norm_([t], 100.0)
    clipped, _ = clip_grad_norm(grads, 100.0)
    np.testing.assert_allclose(clipped["W"].astype(float), t.grad.double().numpy(),
                               rtol=2e-3)


def test_eps_zero_with_zero_gradients_returns_them_unchanged():
    clipped, norm = clip_grad_norm({"a": np.zeros(3)}, 1.0, eps=0.0)
    assert norm == 0.0
    np.testing.assert_array_equal(clipped["a"], np.zeros(3))


def test_huge_int_max_norm_is_no_clipping_and_huge_eps_refused():
    grads = {"a": np.array([3.0, 4.0])}
    clipped, norm = clip_grad_norm(grads, 10**400)
    assert norm == 5.0
    np.testing.assert_array_equal(clipped["a"], grads["a"])
    with pytest.raises(
            ValueError, match="eps must be a finite number, got an int too large"):
        clip_grad_norm(grads, 1.0, eps=10**400)
