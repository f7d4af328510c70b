"""seqlearn.bptt.params: Haar-random orthogonal matrices and the scale of ``init_params``.

These are the properties of the initialisation that the BPTT chapter relies on (its section
"Orthogonal initialisation" measures what they do to the powers of the recurrent matrix).
"""

from __future__ import annotations

import numpy as np

from seqlearn.bptt import init_params
from seqlearn.bptt.params import orthogonal_matrix


def test_orthogonal_matrix_is_orthogonal():
    for n in (1, 3, 16):
        q = orthogonal_matrix(n, np.random.default_rng(n))
        np.testing.assert_allclose(q.T @ q, np.eye(n), atol=1e-12)
        np.testing.assert_allclose(q @ q.T, np.eye(n), atol=1e-12)
        np.testing.assert_allclose(np.linalg.svd(q, compute_uv=False), 1.0, rtol=1e-12)
        assert abs(abs(np.linalg.det(q)) - 1) < 1e-12


def test_orthogonal_draws_differ_and_have_no_preferred_direction():
    assert not np.allclose(orthogonal_matrix(4, np.random.default_rng(0)),
                           orthogonal_matrix(4, np.random.default_rng(1)))
    rng = np.random.default_rng(5)
    draws = np.stack([orthogonal_matrix(3, rng) for _ in range(400)])  # (400, 3, 3)
    dets = np.round(np.linalg.det(draws))
    assert set(dets) == {-1.0, 1.0}                  # both determinants occur
    assert np.all(np.abs(draws.mean(axis=0)) < 0.1)  # no preferred sign (signs of R moved into Q)


def test_init_params_scales_the_recurrent_matrix():
    for rho in (0.5, 1.7):
        W = init_params(2, 6, 1, np.random.default_rng(0), scale=rho, orthogonal=True)["W11"]
        np.testing.assert_allclose(np.linalg.svd(W, compute_uv=False), rho, rtol=1e-12)
    plain = init_params(2, 6, 1, np.random.default_rng(0))["W11"]
    scaled = init_params(2, 6, 1, np.random.default_rng(0), scale=3.0)["W11"]
    np.testing.assert_allclose(scaled, 3.0 * plain, rtol=1e-15)
