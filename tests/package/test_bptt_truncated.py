"""seqlearn.bptt.truncated: k-step truncated BPTT against autograd with detached states;
properties at random sizes."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

from properties import covers, refuses, seeds, sizes
from seqlearn.bptt import (init_params, params as P, pre_activation_gradients,
                           recurrent_gradient_terms, rnn, rnn_backward, rnn_forward,
                           truncated_rnn_backward)


SEEDS = st.integers(0, 2**32 - 1)


def problem(seed, T=None):
    rng = np.random.default_rng(seed)
    B, D, H, O = (int(v) for v in rng.integers(1, [4, 4, 5, 3]))
    T = int(rng.integers(1, 10)) if T is None else T
    params = init_params(D, H, O, rng, scale=float(rng.uniform(0.3, 2.0)))
    x, h0 = rng.standard_normal((B, T, D)), rng.standard_normal((B, H))
    y, cache = rnn_forward(x, h0, params)
    return rng, params, x, h0, rng.standard_normal(y.shape), cache


def autograd(params, x, h0, dy, k=None, private=False):
    """Gradients by autograd, the state detached before steps k, 2k, ...; with ``private``
    every step uses its own copy of W11 (their gradients are returned as ``terms``)."""
    t = {n: torch.tensor(v, requires_grad=True) for n, v in {**params, "x": x, "h0": h0}.items()}
    T = x.shape[1]
    copies = [torch.tensor(params["W11"], requires_grad=True) for _ in range(T)]
    h, ys = t["h0"], []
    for s in range(T):
        if k is not None and s > 0 and s % k == 0:
            h = h.detach()
        U = copies[s] if private else t["W11"]
        h = torch.tanh(t["x"][:, s] @ t["W1"].T + h @ U.T + t["b1"])
        ys.append(h @ t["W2"].T + t["b2"])
    (torch.stack(ys, 1) * torch.from_numpy(dy)).sum().backward()
    out = {n: v.grad.numpy() for n, v in t.items() if v.grad is not None}
    if private:
        out["terms"] = torch.stack([c.grad for c in copies]).numpy()
    return out


@settings(max_examples=25, deadline=None)
@given(SEEDS, st.integers(1, 6))
def test_truncated_equals_autograd_with_detach(seed, k):
    _, params, x, h0, dy, cache = problem(seed)
    got, expected = truncated_rnn_backward(dy, cache, k), autograd(params, x, h0, dy, k)
    assert list(got) == ["W1", "W11", "b1", "W2", "b2", "x", "h0"]
    for name, g in expected.items():
        assert got[name].shape == g.shape, name
        np.testing.assert_allclose(got[name], g, rtol=1e-9, atol=1e-13, err_msg=name)


@settings(max_examples=15, deadline=None)
@given(SEEDS, st.integers(0, 4))
def test_long_window_is_full_bptt(seed, extra):
    _, params, x, h0, dy, cache = problem(seed)
    full = rnn_backward(dy, cache)
    got = truncated_rnn_backward(dy, cache, x.shape[1] + extra)
    for name, g in full.items():
        np.testing.assert_allclose(got[name], g, rtol=1e-12, atol=1e-15, err_msg=name)
    np.testing.assert_allclose(pre_activation_gradients(dy, cache),
                               pre_activation_gradients(dy, cache, x.shape[1] + extra))


def test_k1_is_elman_training():
    """k = 1: each step's pre-activation gradient comes from its own output only."""
    _, params, x, h0, dy, cache = problem(3, T=6)
    dz = pre_activation_gradients(dy, cache, 1)
    np.testing.assert_allclose(dz, (dy @ params["W2"]) * (1 - cache["h"] ** 2), rtol=1e-13)


@settings(max_examples=20, deadline=None)
@given(SEEDS)
def test_terms_are_gradients_of_private_copies(seed):
    _, params, x, h0, dy, cache = problem(seed)
    G = recurrent_gradient_terms(dy, cache)
    expected = autograd(params, x, h0, dy, private=True)["terms"]
    assert G.shape == expected.shape == (x.shape[1],) + params["W11"].shape
    np.testing.assert_allclose(G, expected, rtol=1e-9, atol=1e-13)
    np.testing.assert_allclose(G.sum(0), rnn_backward(dy, cache)["W11"], rtol=1e-10, atol=1e-13)


def test_last_chunk_only_for_a_last_step_loss():
    rng, params, x, h0, _, cache = problem(5, T=12)
    dy = np.zeros(cache["y_shape"])
    dy[:, -1] = rng.standard_normal(dy[:, -1].shape)
    G = recurrent_gradient_terms(dy, cache)
    for k in (1, 2, 3, 4, 5, 12):
        g = truncated_rnn_backward(dy, cache, k)
        start = (11 // k) * k
        assert not g["x"][:, :start].any() and np.abs(g["x"][:, start:]).sum(axis=(0, 2)).all()
        np.testing.assert_allclose(g["W11"], G[start:].sum(0), rtol=1e-12, atol=1e-15)
        if start > 0:
            assert not g["h0"].any()
        np.testing.assert_allclose(g["W2"], rnn_backward(dy, cache)["W2"], rtol=1e-13)


def test_validation():
    _, params, x, h0, dy, cache = problem(0, T=4)
    with pytest.raises(ValueError, match="k must be positive, got 0"):
        truncated_rnn_backward(dy, cache, 0)
    with pytest.raises(TypeError, match="k must be an int, got float"):
        truncated_rnn_backward(dy, cache, 2.0)
    with pytest.raises(TypeError, match="k must be an int, got bool"):
        pre_activation_gradients(dy, cache, True)
    with pytest.raises(TypeError, match="cache must be the cache returned by rnn_forward"):
        truncated_rnn_backward(dy, cache["layer"], 2)
    with pytest.raises(TypeError, match="cache must be the cache returned by rnn_forward"):
        recurrent_gradient_terms(dy, {})
    with pytest.raises(ValueError, match=r"dy must have shape"):
        recurrent_gradient_terms(dy[:, :-1], cache)


# ---------------------------------------------- properties at random sizes (hypothesis)


@covers("seqlearn.bptt.truncated.truncated_rnn_backward",
        "seqlearn.bptt.truncated.pre_activation_gradients",
        "seqlearn.bptt.truncated.recurrent_gradient_terms",
        "seqlearn.bptt.counter.counter_params")
@given(seed=seeds, B=sizes, T=st.integers(1, 7), D=sizes, H=sizes, k=st.integers(1, 8),
       bad_k=st.sampled_from([0, -1, 1.5, True, "2", None]))
def test_truncated_bptt_equals_detached_autograd(seed, B, T, D, H, k, bad_k):
    rng = np.random.default_rng(seed)
    params = P.init_params(D, H, 2, rng)
    x, h0 = rng.standard_normal((B, T, D)), rng.standard_normal((B, H))
    y, cache = rnn.rnn_forward(x, h0, params)
    dy = rng.standard_normal(y.shape)
    t = {n: torch.tensor(v, requires_grad=True) for n, v in {**params, "x": x, "h0": h0}.items()}
    copies = [torch.tensor(params["W11"], requires_grad=True) for _ in range(T)]
    h, ys = t["h0"], []
    for s in range(T):  # detach before steps k, 2k, ...; W11 used through private copies
        if s > 0 and s % k == 0:
            h = h.detach()
        h = torch.tanh(t["x"][:, s] @ t["W1"].T + h @ copies[s].T + t["b1"])
        ys.append(h @ t["W2"].T + t["b2"])
    (torch.stack(ys, 1) * torch.tensor(dy)).sum().backward()
    from seqlearn.bptt import truncated as TR
    g = TR.truncated_rnn_backward(dy, cache, k)
    np.testing.assert_allclose(g["W11"], sum(c.grad for c in copies).numpy(), rtol=1e-9,
                               atol=1e-12)
    for n in ("W1", "b1", "W2", "b2", "x", "h0"):
        np.testing.assert_allclose(g[n], t[n].grad.numpy(), rtol=1e-9, atol=1e-12)
    if k >= T:  # no cut: the terms are the gradients of the private copies
        np.testing.assert_allclose(TR.recurrent_gradient_terms(dy, cache),
                                   torch.stack([c.grad for c in copies]).numpy(),
                                   rtol=1e-9, atol=1e-12)
    assert TR.pre_activation_gradients(dy, cache, k).shape == (B, T, H)
    refuses(TR.truncated_rnn_backward, dy, cache, bad_k)
    refuses(TR.recurrent_gradient_terms, dy[:, :, :1], cache)
    from seqlearn.bptt import counter as CT
    from seqlearn.data import encode_brackets, is_balanced, nesting_depth
    depth = 1 + seed % 3
    strings = ["".join("()x"[int(i)] for i in rng.integers(3, size=T)) for _ in range(8)]
    xs = encode_brackets(strings, dtype=torch.float64).numpy()
    yc, _ = rnn.rnn_forward(xs, -np.ones((8, depth + 2)), CT.counter_params(depth))
    truth = [is_balanced(s) and nesting_depth(s) <= depth for s in strings]
    assert (yc[:, -1].argmax(-1) == 1).tolist() == truth
    refuses(CT.counter_params, bad_k if bad_k != 1.5 else 0)
