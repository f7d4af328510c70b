"""seqlearn.bptt.rnn: hand-written BPTT against torch autograd (float64) at random
sizes; the dtype and shape of each parameter; properties at random sizes."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import assume, given, settings, strategies as st

from properties import covers, not_bools, refuses, seeds, sizes as small_sizes
from seqlearn import bptt
from seqlearn.bptt import (birnn_backward, birnn_forward, clip_grad_norm,
                           deep_rnn_backward, deep_rnn_forward, hidden_jacobians,
                           init_params, param_names, params as P, reference as R, rnn,
                           rnn_backward, rnn_forward, rnn_layer_backward,
                           rnn_layer_forward, rnn_step, to_torch, torch_reference)


SEEDS = st.integers(0, 2**32 - 1)


def rel_err(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-300))


def sizes(rng: np.random.Generator) -> tuple[int, ...]:
    return tuple(int(v) for v in rng.integers(1, [5, 8, 6, 7, 5]))  # B, T, D, H, O


def assume_unsaturated(*states):
    """Skip draws where some tanh' = 1 - h^2 < 1e-6: there 1 - h^2 has lost most of its digits
    in NumPy and in torch alike (h is rounded to 1e-16), so no two implementations can agree to
    1e-10, whatever the derivation."""
    assume(min(float((1 - h ** 2).min()) for h in states) > 1e-6)


def random_single_layer(seed):
    """A random single-layer problem: rng, sizes, params, x, h0 and the forward pass y, cache."""
    rng = np.random.default_rng(seed)
    B, T, D, H, O = sizes(rng)
    params = init_params(D, H, O, rng, scale=rng.uniform(0.2, 3.0))  # from contracting to expanding
    x, h0 = rng.standard_normal((B, T, D)), rng.standard_normal((B, H))
    y, cache = rnn_forward(x, h0, params)
    assume_unsaturated(cache["h"])
    return rng, (B, T, D, H, O), params, x, h0, y, cache


def check_against_torch(rng, num_layers, bidirectional):
    B, T, D, H, O = sizes(rng)
    dirs = 2 if bidirectional else 1
    params = init_params(D, H, O, rng, num_layers=num_layers, bidirectional=bidirectional, scale=1.5)
    x = rng.standard_normal((B, T, D))
    h0 = rng.standard_normal((num_layers * dirs, B, H))
    y, cache = deep_rnn_forward(x, h0, params, bidirectional)
    assume_unsaturated(*(c["h"] for layer in cache["layers"] for c in layer))
    dy = rng.standard_normal(y.shape)
    grads = deep_rnn_backward(dy, cache)
    y_ref, expected = torch_reference(x, h0, params, dy, bidirectional)  # torch.nn.RNN + autograd
    assert rel_err(y, y_ref) <= 1e-12
    assert list(grads) == param_names(num_layers, bidirectional) + ["x", "h0"]
    assert set(expected) == set(grads)
    for k, g in expected.items():
        assert grads[k].shape == g.shape, k
        assert rel_err(grads[k], g) <= 1e-10, k


@settings(max_examples=25, deadline=None)
@given(SEEDS)
def test_single_layer_matches_autograd(seed):
    rng, (B, T, D, H, O), params, x, h0, y, cache = random_single_layer(seed)
    dy = rng.standard_normal(y.shape)
    grads = rnn_backward(dy, cache)
    assert set(grads) == set(params) | {"x", "h0"}

    t = {k: torch.tensor(v, requires_grad=True) for k, v in {**params, "x": x, "h0": h0}.items()}
    h, ys = t["h0"], []
    for step in range(T):  # the equations of the chapter, written with torch ops
        h = torch.tanh(t["x"][:, step] @ t["W1"].T + h @ t["W11"].T + t["b1"])
        ys.append(h @ t["W2"].T + t["b2"])
    yt = torch.stack(ys, dim=1)
    (yt * torch.from_numpy(dy)).sum().backward()
    assert rel_err(y, yt.detach().numpy()) <= 1e-12
    for k, v in t.items():
        assert grads[k].shape == v.shape, k
        assert rel_err(grads[k], v.grad.numpy()) <= 1e-10, k


@pytest.mark.parametrize("num_layers,bidirectional", [(1, False), (2, False), (3, False), (1, True), (2, True)])
@settings(max_examples=10, deadline=None)
@given(seed=SEEDS)
def test_deep_and_bidirectional_match_torch_rnn(num_layers, bidirectional, seed):
    check_against_torch(np.random.default_rng(seed), num_layers, bidirectional)


def test_single_layer_equals_deep_with_one_layer():
    rng = np.random.default_rng(1)
    params = init_params(3, 4, 2, rng)
    x, h0 = rng.standard_normal((2, 5, 3)), rng.standard_normal((2, 4))
    y, cache = rnn_forward(x, h0, params)
    y_deep, cache_deep = deep_rnn_forward(x, h0[None], params)
    np.testing.assert_array_equal(y, y_deep)
    dy = rng.standard_normal(y.shape)
    g, g_deep = rnn_backward(dy, cache), deep_rnn_backward(dy, cache_deep)
    for k in g:
        np.testing.assert_allclose(g[k], g_deep[k][0] if k == "h0" else g_deep[k], rtol=1e-13, atol=0)


def test_birnn_is_one_bidirectional_layer():
    rng = np.random.default_rng(2)
    params = init_params(3, 4, 2, rng, bidirectional=True)
    assert sorted(params) == sorted(["W1_f", "W11_f", "b1_f", "W1_b", "W11_b", "b1_b", "W2", "b2"])
    x, h0 = rng.standard_normal((2, 6, 3)), rng.standard_normal((2, 2, 4))
    y, cache = birnn_forward(x, h0, params)
    y2, cache2 = deep_rnn_forward(x, h0, params, bidirectional=True)
    np.testing.assert_array_equal(y, y2)
    dy = rng.standard_normal(y.shape)
    for k, g in birnn_backward(dy, cache).items():
        np.testing.assert_array_equal(g, deep_rnn_backward(dy, cache2)[k])


def test_backward_direction_reads_time_reversed():
    """The backward direction on x equals the forward direction on x reversed in time."""
    rng = np.random.default_rng(3)
    W, U, b = rng.standard_normal((4, 3)), rng.standard_normal((4, 4)) / 2, rng.standard_normal(4)
    x, h0 = rng.standard_normal((2, 5, 3)), rng.standard_normal((2, 4))
    params = {"W1_f": W, "W11_f": U, "b1_f": b, "W1_b": W, "W11_b": U, "b1_b": b,
              "W2": np.eye(8), "b2": np.zeros(8)}
    y, _ = birnn_forward(x, np.stack([h0, h0]), params)
    h_rev, _ = rnn_layer_forward(x[:, ::-1], h0, W, U, b)
    np.testing.assert_allclose(y[..., 4:], h_rev[:, ::-1], rtol=0, atol=1e-15)


@settings(max_examples=15, deadline=None)
@given(SEEDS)
def test_hidden_jacobians_match_autograd(seed):
    _, (B, T, D, H, O), params, x, h0, _, cache = random_single_layer(seed)
    J = hidden_jacobians(cache)  # (B, T, H, H)
    assert J.shape == (B, T, H, H)
    np.testing.assert_array_equal(hidden_jacobians(cache["layer"]), J)  # a layer cache works too
    W1, W11, b1 = (torch.from_numpy(params[k]) for k in ("W1", "W11", "b1"))
    for n in range(B):
        def states(h):  # h(-1) -> all h(t), for sequence n
            out = []
            for t in range(T):
                h = torch.tanh(W1 @ torch.from_numpy(x[n, t]) + W11 @ h + b1)
                out.append(h)
            return torch.stack(out)
        expected = torch.autograd.functional.jacobian(states, torch.from_numpy(h0[n]))  # (T, H, H)
        assert rel_err(J[n], expected.numpy()) <= 1e-10


def test_layer_backward_with_zero_gradient_is_zero():
    rng = np.random.default_rng(4)
    h, cache = rnn_layer_forward(rng.standard_normal((2, 3, 2)), np.zeros((2, 4)),
                                 rng.standard_normal((4, 2)), rng.standard_normal((4, 4)), np.zeros(4))
    for g in rnn_layer_backward(np.zeros_like(h), cache).values():
        assert not g.any()


# --------------------------------------------------------------------------- validation

@pytest.fixture
def setup():
    rng = np.random.default_rng(0)
    return init_params(3, 4, 2, rng), rng.standard_normal((2, 5, 3)), rng.standard_normal((2, 4))


def test_wrong_shapes_raise(setup):
    params, x, h0 = setup
    with pytest.raises(ValueError, match=r"x must have shape \(B, T, D\), got \(5, 3\)"):
        rnn_forward(x[0], h0, params)
    with pytest.raises(ValueError, match=r"h0 must have shape \(B=2, H\), got \(3, 4\)"):
        rnn_forward(x, np.zeros((3, 4)), params)
    with pytest.raises(ValueError, match=r"W1 must have shape \(H=4, K=3\), got \(4, 2\)"):
        rnn_forward(x, h0, {**params, "W1": np.zeros((4, 2))})
    with pytest.raises(ValueError, match=r"W2 must have shape \(O, K=4\), got \(2, 5\)"):
        rnn_forward(x, h0, {**params, "W2": np.zeros((2, 5))})
    y, cache = rnn_forward(x, h0, params)
    with pytest.raises(ValueError, match=r"dy must have shape \(B=2, T=5, O=2\), got \(2, 5, 3\)"):
        rnn_backward(np.zeros((2, 5, 3)), cache)


def test_wrong_types_raise(setup):
    params, x, h0 = setup
    with pytest.raises(TypeError, match="x must be a numpy.ndarray, got Tensor"):
        rnn_forward(torch.from_numpy(x), h0, params)
    with pytest.raises(TypeError, match="x must be a floating-point array, got dtype int64"):
        rnn_forward(x.astype(np.int64), h0, params)
    with pytest.raises(TypeError, match="x must be a float64 array"):
        rnn_forward(x.astype(np.float32), h0, params)
    with pytest.raises(TypeError, match="W11 and x must have the same dtype, got float32 and float64"):
        rnn_forward(x, h0, {**params, "W11": params["W11"].astype(np.float32)})
    with pytest.raises(TypeError, match="params must be a dict"):
        rnn_forward(x, h0, list(params.values()))
    with pytest.raises(TypeError, match="rng must be a numpy.random.Generator"):
        init_params(3, 4, 2, 0)


def test_bad_keys_and_values_raise(setup):
    params, x, h0 = setup
    with pytest.raises(ValueError, match=r"missing \['W11'\]"):
        rnn_forward(x, h0, {k: v for k, v in params.items() if k != "W11"})
    with pytest.raises(ValueError, match=r"unexpected \['W22'\]"):
        rnn_forward(x, h0, {**params, "W22": np.eye(4)})
    with pytest.raises(ValueError, match="x contains NaN or infinity"):
        rnn_forward(np.full_like(x, np.nan), h0, params)
    with pytest.raises(ValueError, match=r"num_layers must be an int in 1..9, got 10"):
        param_names(10)
    with pytest.raises(ValueError, match=r"h0 must have shape \(L\*2, B, H\), got \(3, 2, 4\)"):
        deep_rnn_forward(x, np.zeros((3, 2, 4)), init_params(3, 4, 2, np.random.default_rng(0),
                                                               bidirectional=True), bidirectional=True)
    with pytest.raises(ValueError, match=r"missing \['W2', 'W22', 'b2', 'W3', 'b3'\]"):
        deep_rnn_forward(x, np.zeros((2, 2, 4)), {k: v for k, v in params.items() if k[1] == "1"})
    with pytest.raises(ValueError, match=r"unexpected \['W22'\]"):
        to_torch({**params, "W22": np.eye(4)})
    y, cache = rnn_forward(x, h0, params)
    with pytest.raises(TypeError, match="cache must be the cache returned by deep_rnn_forward"):
        deep_rnn_backward(y, cache)
    with pytest.raises(TypeError, match="cache must be the cache returned by rnn_layer_forward"):
        hidden_jacobians({"h": np.zeros((1, 2, 3))})
    with pytest.raises(ValueError, match="max_norm must be positive"):
        clip_grad_norm({"a": np.ones(2)}, 0.0)


# --------------------------------------------------------------------------- second edition: exact values

def test_caches_hold_copies():
    """Editing the inputs or parameters after the forward pass changes no gradient."""
    rng = np.random.default_rng(6)
    params = init_params(3, 4, 2, rng)
    x, h0 = rng.standard_normal((2, 5, 3)), rng.standard_normal((2, 4))
    y, cache = rnn_forward(x, h0, params)
    dy = rng.standard_normal(y.shape)
    before = rnn_backward(dy, cache)
    x[...], h0[...] = 0.0, 0.0
    for v in params.values():
        v[...] = 7.0
    after = rnn_backward(dy, cache)
    for k in before:
        np.testing.assert_array_equal(before[k], after[k])
    W, U = rng.standard_normal((2, 2)), rng.standard_normal((2, 2))
    h, layer = rnn_layer_forward(rng.standard_normal((1, 3, 2)), np.zeros((1, 2)), W, U,
                                 np.zeros(2))
    dh = rng.standard_normal(h.shape)
    before = rnn_layer_backward(dh, layer)
    W[...], U[...] = 0.0, 0.0
    for k, g in rnn_layer_backward(dh, layer).items():
        np.testing.assert_array_equal(g, before[k])


def test_rnn_step_is_the_equation():
    rng = np.random.default_rng(7)
    x_t, h, W, U, b = (rng.standard_normal(s) for s in ((2, 3), (2, 4), (4, 3), (4, 4), (4,)))
    expected = np.stack([np.tanh(W @ x_t[n] + U @ h[n] + b) for n in range(2)])
    np.testing.assert_allclose(rnn_step(x_t, h, W, U, b), expected, rtol=1e-14)


def test_layer_backward_one_step_by_hand():
    """T = 1: dz = dh * (1 - h^2); dW = dz^T x, dU = dz^T h0, db = sum dz, dx = dz W, dh0 = dz U."""
    rng = np.random.default_rng(8)
    x, h0 = rng.standard_normal((3, 1, 2)), rng.standard_normal((3, 4))
    W, U, b = rng.standard_normal((4, 2)), rng.standard_normal((4, 4)), rng.standard_normal(4)
    h, cache = rnn_layer_forward(x, h0, W, U, b)
    dh = rng.standard_normal(h.shape)
    g = rnn_layer_backward(dh, cache)
    dz = dh[:, 0] * (1 - h[:, 0] ** 2)
    np.testing.assert_allclose(g["W"], dz.T @ x[:, 0], rtol=1e-14)
    np.testing.assert_allclose(g["U"], dz.T @ h0, rtol=1e-14)
    np.testing.assert_allclose(g["b"], dz.sum(0), rtol=1e-14)
    np.testing.assert_allclose(g["x"][:, 0], dz @ W, rtol=1e-14)
    np.testing.assert_allclose(g["h0"], dz @ U, rtol=1e-14)


def test_hidden_jacobian_of_a_linear_regime_is_a_matrix_power():
    """Tiny states: D(t) = I up to 1e-8, so dh(t)/dh(-1) = W11^(t+1)."""
    rng = np.random.default_rng(9)
    params = init_params(2, 3, 1, rng, scale=0.9)
    params["W1"][:], params["b1"][:] = 0.0, 0.0
    _, cache = rnn_forward(np.zeros((1, 6, 2)), np.full((1, 3), 1e-7), params)
    J = hidden_jacobians(cache)[0]
    for t in range(6):
        np.testing.assert_allclose(J[t], np.linalg.matrix_power(params["W11"], t + 1),
                                   rtol=1e-9, atol=1e-14)


def test_layer_and_step_validation():
    rng = np.random.default_rng(13)
    with pytest.raises(ValueError, match=r"x must have at least one time step, got shape \(2, 0, 3\)"):
        rnn_forward(np.zeros((2, 0, 3)), np.zeros((2, 4)), init_params(3, 4, 2, rng))
    with pytest.raises(ValueError, match=r"U must have shape"):
        rnn_layer_forward(np.zeros((1, 2, 3)), np.zeros((1, 4)), np.zeros((4, 3)),
                          np.zeros((4, 5)), np.zeros(4))
    h, cache = rnn_layer_forward(np.zeros((1, 2, 3)), np.zeros((1, 4)), np.zeros((4, 3)),
                                 np.zeros((4, 4)), np.zeros(4))
    with pytest.raises(ValueError, match=r"dh must have shape \(B=1, T=2, H=4\)"):
        rnn_layer_backward(np.zeros((1, 3, 4)), cache)
    with pytest.raises(TypeError, match="cache must be the cache returned by rnn_forward"):
        rnn_backward(np.zeros((1, 2, 4)), cache)
    with pytest.raises(TypeError, match="cache must be the cache returned by rnn_layer_forward"):
        rnn_layer_backward(np.zeros((1, 2, 4)), {"made_by": "rnn_forward"})
    with pytest.raises(TypeError, match="bidirectional must be"):
        deep_rnn_forward(np.zeros((1, 2, 3)), np.zeros((1, 1, 4)), init_params(3, 4, 2, rng),
                         bidirectional=1)


@settings(max_examples=25, deadline=None)
@given(SEEDS)
def test_bias_gradient_is_the_weight_of_a_constant_input(seed):
    """eq-bptt-dW1: b1 acts like one more column of W1 on an input that is always 1, so its
    gradient is that column's gradient; b2's gradient is sum_t dLoss/dz2(t) (eq-bptt-dW2)."""
    rng, (B, T, D, H, O), params, x, h0, y, cache = random_single_layer(seed)
    dy = rng.standard_normal(y.shape)
    grads = rnn_backward(dy, cache)
    x_aug = np.concatenate([x, np.ones((B, T, 1))], axis=-1)               # (B, T, D+1)
    p_aug = {**params, "W1": np.column_stack([params["W1"], params["b1"]]), "b1": np.zeros(H)}
    y_aug, cache_aug = rnn_forward(x_aug, h0, p_aug)
    np.testing.assert_allclose(y_aug, y, rtol=1e-12, atol=1e-14)           # the same network
    g_aug = rnn_backward(dy, cache_aug)
    np.testing.assert_allclose(g_aug["W1"][:, -1], grads["b1"], rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(g_aug["W1"][:, :-1], grads["W1"], rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(grads["b2"], dy.sum(axis=(0, 1)), rtol=1e-12, atol=1e-14)


# ------------------------------- exact parameters, bounds and the wording of each error


# The hand-built counter's exact weights, the largest allowed number of layers, and
# which argument each dtype or shape error names.


RNG = np.random.default_rng(0)


def _rnn_args(dtype_of=None, shape_of=None, shape=None):
    x, h0 = RNG.standard_normal((2, 3, 4)), np.zeros((2, 5))
    p = init_params(4, 5, 3, np.random.default_rng(1))
    if dtype_of is not None:
        p[dtype_of] = p[dtype_of].astype(np.float32)
    if shape_of is not None:
        p[shape_of] = np.zeros(shape)
    return x, h0, p


@pytest.mark.parametrize("key", ["W1", "W11", "b1", "W2", "b2"])
def test_rnn_params_must_have_the_dtype_of_x(key):
    with pytest.raises(TypeError, match=rf"^{key} and x must have the same dtype, got float32 "
                                        r"and float64$"):
        rnn_forward(*_rnn_args(dtype_of=key))


@pytest.mark.parametrize("key, shape, match", [
    ("W11", (6, 6), r"^W11 must have shape \(H=5, H=5\), got \(6, 6\)$"),
    ("b1", (6,), r"^b1 must have shape \(H=5\), got \(6,\)$"),
    ("W2", (3, 6), r"^W2 must have shape \(O, K=5\), got \(3, 6\)$"),
    ("b2", (4,), r"^b2 must have shape \(O=3\), got \(4,\) \(O as in W2\)$"),
])
def test_rnn_params_shapes_name_the_parameter(key, shape, match):
    with pytest.raises(ValueError, match=match):
        rnn_forward(*_rnn_args(shape_of=key, shape=shape))


# ---------------------------------------------- properties at random sizes (hypothesis)


@covers("seqlearn.bptt.rnn.rnn_forward", "seqlearn.bptt.rnn.rnn_backward",
        "seqlearn.bptt.rnn.deep_rnn_forward", "seqlearn.bptt.rnn.deep_rnn_backward",
        "seqlearn.bptt.rnn.birnn_forward", "seqlearn.bptt.rnn.birnn_backward",
        "seqlearn.bptt.rnn.rnn_layer_forward", "seqlearn.bptt.rnn.rnn_layer_backward",
        "seqlearn.bptt.rnn.rnn_step", "seqlearn.bptt.rnn.hidden_jacobians",
        "seqlearn.bptt.reference.torch_reference", "seqlearn.bptt.reference.to_torch",
        "seqlearn.bptt.reference.torch_names", "seqlearn.bptt.params.init_params",
        "seqlearn.bptt.params.param_names", "seqlearn.bptt.params.suffixes",
        "seqlearn.bptt.params.orthogonal_matrix", "seqlearn.bptt.params.check_array",
        "seqlearn.bptt.params.check_keys", "seqlearn.bptt.params.check_params")
@given(seed=seeds, B=small_sizes, T=small_sizes, D=small_sizes, H=small_sizes, L=st.integers(1, 2), bi=st.booleans(),
       flag=not_bools)
def test_rnn_gradients_equal_autograd(seed, B, T, D, H, L, bi, flag):
    rng = np.random.default_rng(seed)
    params = P.init_params(D, H, 2, rng, num_layers=L, bidirectional=bi, orthogonal=True)
    assert list(params) == P.param_names(L, bi)
    assert set(R.torch_names(L, bi)) == set(params) and R.to_torch(params, bi) is not None
    x, dy = rng.standard_normal((B, T, D)), rng.standard_normal((B, T, 2))
    h0 = rng.standard_normal((L * (2 if bi else 1), B, H))
    y, cache = bptt.deep_rnn_forward(x, h0, params, bidirectional=bi)
    x[...] = 0  # the cache holds copies: editing the input afterwards changes nothing
    grads = bptt.deep_rnn_backward(dy, cache)
    y_ref, g_ref = R.torch_reference(cache["layers"][0][0]["x"], h0, params, dy, bi)
    np.testing.assert_allclose(y, y_ref, rtol=1e-10, atol=1e-12)
    for k in g_ref:
        np.testing.assert_allclose(grads[k], g_ref[k], rtol=1e-9, atol=1e-12)
    q = P.orthogonal_matrix(H, rng)
    np.testing.assert_allclose(q @ q.T, np.eye(H), atol=1e-12)
    assert P.suffixes(bi) == (["_f", "_b"] if bi else [""])
    refuses(P.suffixes, flag)
    refuses(P.init_params, D, H, 2, rng, orthogonal=flag)
    refuses(bptt.deep_rnn_forward, x[:, :0], h0, params, bidirectional=bi)
    refuses(bptt.deep_rnn_forward, x, h0, params, bidirectional=flag)
    refuses(P.check_array, torch.zeros(2), "x", "T", {})
    refuses(P.check_keys, {}, ["W1"])
    refuses(P.check_params, params, L, not bi, {"D": D, "H": H}, x)
    if L == 1 and not bi:
        single = P.init_params(D, H, 2, rng)
        y1, c1 = rnn.rnn_forward(x, h0[0], single)
        g1 = rnn.rnn_backward(dy, c1)
        _, g1_ref = R.torch_reference(x, h0[0], single, dy)
        np.testing.assert_allclose(g1["W11"], g1_ref["W11"], rtol=1e-9, atol=1e-12)
        assert rnn.hidden_jacobians(c1).shape == (B, T, H, H)
        h, layer = rnn.rnn_layer_forward(x, h0[0], single["W1"], single["W11"], single["b1"])
        np.testing.assert_allclose(h[:, 0], rnn.rnn_step(x[:, 0], h0[0], single["W1"],
                                                         single["W11"], single["b1"]))
        assert rnn.rnn_layer_backward(np.ones_like(h), layer)["x"].shape == x.shape
        yb, cb = rnn.birnn_forward(x, np.stack([h0[0], h0[0]]), P.init_params(
            D, H, 2, rng, bidirectional=True))
        assert rnn.birnn_backward(np.ones_like(yb), cb)["x"].shape == x.shape
        refuses(rnn.rnn_forward, x[:, :0], h0[0], single)


@pytest.mark.parametrize("states", [1, 3, 0])
def test_deep_h0_of_the_wrong_depth_is_blamed_on_h0(states):
    """The error talked about num_layers (derived from h0), not h0's shape
    (issue 31)."""
    params = bptt.init_params(2, 3, 2, np.random.default_rng(0), num_layers=2)
    x = np.zeros((1, 2, 2))
    with pytest.raises(ValueError, match=rf"^h0 must have shape \(L\*1, B, H\), got "
                                         rf"\({states}, 1, 3\): params has L=2 "
                                         rf"layer\(s\), "
                                         rf"so h0 needs 2 states"):
        deep_rnn_forward(x, np.zeros((states, 1, 3)), params)
