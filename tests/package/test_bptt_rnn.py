"""seqlearn.bptt.rnn: hand-written BPTT against torch autograd (float64) at random sizes."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from seqlearn.bptt import (birnn_backward, birnn_forward, clip_grad_norm, deep_rnn_backward,
                           deep_rnn_forward, global_norm, hidden_jacobians, init_params, param_names,
                           rnn_backward, rnn_forward, rnn_layer_backward, rnn_layer_forward,
                           to_torch, torch_reference)

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


def test_torch_reference_for_the_single_layer_network():
    rng = np.random.default_rng(5)
    params = init_params(3, 4, 2, rng)
    x, h0 = rng.standard_normal((2, 5, 3)), rng.standard_normal((2, 4))
    y, cache = rnn_forward(x, h0, params)
    dy = rng.standard_normal(y.shape)
    y_ref, expected = torch_reference(x, h0, params, dy)
    np.testing.assert_allclose(y, y_ref, rtol=1e-12)
    for k, g in rnn_backward(dy, cache).items():
        assert rel_err(g, expected[k]) <= 1e-10, k


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
