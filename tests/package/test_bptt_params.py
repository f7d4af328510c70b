"""seqlearn.bptt.params: Haar-random orthogonal matrices and the scale of
``init_params``; parameter names and the wording of each error.

These are the properties of the initialisation that the BPTT chapter relies on (its
section "Orthogonal initialisation" measures what they do to the powers of the recurrent
matrix)."""

from __future__ import annotations

import numpy as np
import pytest

from seqlearn.bptt import init_params, param_names
from seqlearn.bptt.params import MAX_LAYERS, orthogonal_matrix


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


def test_orthogonal_matrix_is_haar():
    from seqlearn.bptt.params import orthogonal_matrix
    rng = np.random.default_rng(11)
    for n in (1, 2, 5):
        q = orthogonal_matrix(n, rng)
        assert q.shape == (n, n)
        np.testing.assert_allclose(q.T @ q, np.eye(n), atol=1e-13)
    draws = np.stack([orthogonal_matrix(3, rng) for _ in range(2000)])
    assert np.all(np.abs(draws.mean(0)) < 0.06)                     # no preferred sign
    np.testing.assert_allclose((draws ** 2).mean(0), 1 / 3, atol=0.03)  # E q_ij^2 = 1/n
    dets = np.linalg.det(draws)
    assert 0.4 < np.mean(dets > 0) < 0.6
    with pytest.raises(ValueError, match="n must be positive"):
        orthogonal_matrix(0, rng)
    with pytest.raises(TypeError, match="rng must be a numpy.random.Generator"):
        orthogonal_matrix(2, 0)


def test_init_params_distribution_and_branches():
    rng = np.random.default_rng(12)
    p = init_params(50, 60, 40, rng, num_layers=2)
    assert list(p) == param_names(2)
    assert p["W1"].shape == (60, 50) and p["W2"].shape == (60, 60) and p["W3"].shape == (40, 60)
    for name, fan_in in (("W1", 50), ("W11", 60), ("W2", 60), ("W22", 60), ("W3", 60)):
        assert abs(p[name].var() * fan_in - 1) < 0.1, name
    for name in ("b1", "b2", "b3"):
        assert 0.05 < p[name].std() < 0.15, name
    a = init_params(3, 5, 2, np.random.default_rng(1))
    b = init_params(3, 5, 2, np.random.default_rng(1), scale=2.5)
    np.testing.assert_allclose(b["W11"], 2.5 * a["W11"], rtol=1e-15)
    np.testing.assert_array_equal(b["W1"], a["W1"])
    o = init_params(3, 5, 2, np.random.default_rng(1), scale=0.7, orthogonal=True)
    np.testing.assert_allclose(o["W11"] @ o["W11"].T, 0.49 * np.eye(5), atol=1e-13)
    bi = init_params(3, 5, 2, np.random.default_rng(1), num_layers=2, bidirectional=True)
    assert bi["W2_f"].shape == (5, 10) and bi["W3"].shape == (2, 10)
    with pytest.raises(ValueError, match="hidden_size must be positive"):
        init_params(3, 0, 2, rng)
    with pytest.raises(TypeError, match="scale must be"):
        init_params(3, 4, 2, rng, scale="1")
    with pytest.raises(ValueError, match=r"num_layers must be an int in 1..9, got True"):
        param_names(True)
    assert param_names(np.int64(1)) == ["W1", "W11", "b1", "W2", "b2"]


# ------------------------------- exact parameters, bounds and the wording of each error


# The hand-built counter's exact weights, the largest allowed number of layers, and
# which argument each dtype or shape error names.


def test_param_names_accepts_max_layers_and_refuses_one_more():
    names = param_names(MAX_LAYERS)
    assert len(names) == 3 * MAX_LAYERS + 2 and names[-2:] == ["W10", "b10"]
    with pytest.raises(ValueError, match=r"^num_layers must be an int in 1\.\.9, got 10$"):
        param_names(MAX_LAYERS + 1)


def test_init_params_names_orthogonal():
    with pytest.raises(TypeError, match=r"^orthogonal must be a bool, got int 1$"):
        init_params(2, 3, 1, np.random.default_rng(0), orthogonal=1)


def test_check_params_refuses_dims_without_d_and_h():
    """``check_params`` with sizes missing from ``dims`` raised KeyError (issue 31)."""
    from seqlearn.bptt.params import check_params

    params = init_params(2, 3, 2, np.random.default_rng(0))
    x = np.zeros((1, 2, 2))
    with pytest.raises(ValueError, match=r"dims must hold the sizes D \(input\) and H "
                                         r"\(hidden\), got keys \['D'\]"):
        check_params(params, 1, False, {"D": 2}, x)
    with pytest.raises(TypeError, match="dims must be a dict"):
        check_params(params, 1, False, None, x)
    with pytest.raises(TypeError, match=r"dims\['H'\] must be an int, got float"):
        check_params(params, 1, False, {"D": 2, "H": 3.0}, x)
    assert check_params(params, 1, False, {"D": 2, "H": 3}, x)[0] == "W1"
