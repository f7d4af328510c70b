"""seqlearn.unroll: the unrolled GRU update against the loop, sympy, and torch.nn.GRU
(float64); devices and the wording of each error; properties at random sizes."""

from __future__ import annotations

import pytest
import sympy
import torch
from hypothesis import given, settings, strategies as st
from torch import nn

from properties import covers, numpy_of, randn, refuses, seeds, sizes
from seqlearn import unroll
from seqlearn.gated import GRU
from seqlearn.unroll import (apply_implied_weights, gru_gates, gru_implied_weights,
                             gru_update_loop, notes_printed_weights)


F64 = torch.float64
SETTINGS = settings(max_examples=25, deadline=None)
cases = st.fixed_dictionaries({
    "batch": st.lists(st.integers(1, 3), min_size=0, max_size=2),
    "T": st.integers(1, 30), "H": st.integers(1, 4), "with_h0": st.booleans(),
    "zero_frac": st.sampled_from([0.0, 0.3]), "seed": st.integers(0, 2**16)})


def draw_gates(c: dict) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
    g = torch.Generator().manual_seed(c["seed"])
    shape = tuple(c["batch"]) + (c["T"], c["H"])
    u = torch.rand(shape, generator=g, dtype=F64)
    u[torch.rand(shape, generator=g, dtype=F64) < c["zero_frac"]] = 0.0  # exact resets
    h_tilde = torch.randn(shape, generator=g, dtype=F64)
    h0 = torch.randn(shape[:-2] + shape[-1:], generator=g, dtype=F64) if c["with_h0"] else None
    return u, h_tilde, h0


def brute_force_weights(u: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """alpha[t, i] = (1 - u_i) prod_{j=i+1}^{t} u_j and beta[t] = prod_{j<=t} u_j, by explicit loops."""
    T = u.shape[-2]
    alpha = torch.zeros(u.shape[:-2] + (T, T, u.shape[-1]), dtype=u.dtype)
    beta = torch.ones_like(u)
    for t in range(T):
        for j in range(t + 1):
            beta[..., t, :] *= u[..., j, :]
        for i in range(t + 1):
            w = 1 - u[..., i, :]
            for j in range(i + 1, t + 1):
                w = w * u[..., j, :]
            alpha[..., t, i, :] = w
    return alpha, beta


@SETTINGS
@given(c=cases)
def test_implied_weights_reproduce_the_recurrence(c):
    u, h_tilde, h0 = draw_gates(c)
    alpha, beta = gru_implied_weights(u)
    T = c["T"]
    assert alpha.shape == u.shape[:-2] + (T, T, c["H"]) and beta.shape == u.shape
    expected_alpha, expected_beta = brute_force_weights(u)
    torch.testing.assert_close(alpha, expected_alpha, rtol=1e-12, atol=0)
    torch.testing.assert_close(beta, expected_beta, rtol=1e-12, atol=0)
    h = gru_update_loop(u, h_tilde, h0)
    torch.testing.assert_close(apply_implied_weights(alpha, beta, h_tilde, h0), h, rtol=1e-10, atol=1e-12)
    # rows are convex combinations: non-negative, lower-triangular, sum with beta to one
    assert bool((alpha >= 0).all())
    upper = torch.ones(T, T, dtype=torch.bool).triu(1)
    assert bool((alpha[..., upper, :] == 0).all())
    torch.testing.assert_close(alpha.sum(-2) + beta, torch.ones_like(beta), rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(gru_update_loop(u, h_tilde, h0, method="parallel"), h, rtol=1e-10, atol=1e-12)


def test_closed_form_symbolically_for_every_T_up_to_6():
    for T in range(1, 7):
        u = sympy.symbols(f"u1:{T + 1}")
        c = sympy.symbols(f"c1:{T + 1}")  # candidates h~_1 .. h~_T
        h0 = sympy.Symbol("h0")
        h = h0
        for t in range(T):
            h = u[t] * h + (1 - u[t]) * c[t]
        closed = sum((1 - u[i]) * sympy.prod(u[i + 1:]) * c[i] for i in range(T)) + sympy.prod(u) * h0
        assert sympy.expand(h - closed) == 0


def test_weights_at_exact_zero_and_one():
    u = torch.tensor([[1.0], [0.0], [1.0], [0.0], [1.0]], dtype=F64)  # (T=5, H=1)
    alpha, beta = gru_implied_weights(u)
    # u=0 at steps 1 and 3 (0-based): every later state equals the candidate of the last reset
    expected = torch.tensor([[0, 0, 0, 0, 0], [0, 1, 0, 0, 0], [0, 1, 0, 0, 0], [0, 0, 0, 1, 0],
                             [0, 0, 0, 1, 0]], dtype=F64)
    torch.testing.assert_close(alpha[..., 0], expected)
    torch.testing.assert_close(beta[:, 0], torch.tensor([1.0, 0, 0, 0, 0], dtype=F64))
    assert not torch.isnan(alpha).any()


def test_notes_printed_formula_differs_from_the_loop():
    g = torch.Generator().manual_seed(3)
    u = torch.rand(4, 6, 2, generator=g, dtype=F64)
    h_tilde = torch.randn(4, 6, 2, generator=g, dtype=F64)
    printed = notes_printed_weights(u)
    alpha, beta = gru_implied_weights(u)
    h = gru_update_loop(u, h_tilde)
    assert not torch.allclose(apply_implied_weights(printed, beta, h_tilde), h)
    # its definition, checked entry by entry (1-based t, i in the notes)
    for t in range(6):
        for i in range(t + 1):
            w = torch.prod(u[:, : t - i + 1], dim=1) * torch.prod(1 - u[:, :i], dim=1)
            torch.testing.assert_close(printed[:, t, i], w)
    assert bool((printed[:, 0, 1:] == 0).all())


def test_gru_gates_from_torch_and_seqlearn():
    torch.manual_seed(0)
    m = torch.nn.GRU(3, 5, batch_first=True).double()
    x = torch.randn(4, 9, 3, dtype=F64)
    h0 = torch.randn(4, 5, dtype=F64)
    for net in (m, GRU.from_torch(m)):
        u, h_tilde, h = gru_gates(net, x, h0)
        y, _ = m(x, h0[None])
        torch.testing.assert_close(h, y, rtol=1e-12, atol=1e-12)
        # torch's z is the keep gate: z_t = sigmoid(W_iz x_t + b_iz + W_hz h_{t-1} + b_hz)
        h_prev = torch.cat([h0[:, None], y[:, :-1]], dim=1)
        W_iz, W_hz = m.weight_ih_l0[5:10], m.weight_hh_l0[5:10]
        z = torch.sigmoid(x @ W_iz.T + m.bias_ih_l0[5:10] + h_prev @ W_hz.T + m.bias_hh_l0[5:10])
        torch.testing.assert_close(u, z, rtol=1e-12, atol=1e-12)
        alpha, beta = gru_implied_weights(u)
        torch.testing.assert_close(apply_implied_weights(alpha, beta, h_tilde, h0), y, rtol=1e-10, atol=1e-12)


def test_errors_name_what_is_wrong():
    u = torch.rand(2, 5, 3, dtype=F64)
    with pytest.raises(ValueError, match=r"u must have shape \(\.\.\., T, H\), got \(5,\)"):
        gru_implied_weights(torch.rand(5, dtype=F64))
    with pytest.raises(TypeError, match="floating-point"):
        gru_implied_weights(torch.ones(2, 5, 3, dtype=torch.int64))
    with pytest.raises(TypeError, match="torch.Tensor"):
        gru_implied_weights(u.numpy())
    alpha, beta = gru_implied_weights(u)
    with pytest.raises(ValueError, match=r"alpha must have shape \(2, 5, 5, 3\), got \(5, 5, 3\)"):
        apply_implied_weights(alpha[0], beta, u)
    with pytest.raises(ValueError, match=r"beta must have shape \(2, 5, 3\)"):
        apply_implied_weights(alpha, beta[0], u)
    with pytest.raises(ValueError, match=r"h0 must have shape \(2, 3\), got \(3,\)"):
        apply_implied_weights(alpha, beta, u, torch.zeros(3, dtype=F64))
    with pytest.raises(TypeError, match="same dtype"):
        apply_implied_weights(alpha, beta.float(), u)
    with pytest.raises(TypeError, match="same dtype"):
        apply_implied_weights(alpha, beta, u, torch.zeros(2, 3))
    with pytest.raises(ValueError, match=r"h_tilde must have the shape of u \(2, 5, 3\), got \(2, 5, 4\)"):
        gru_update_loop(u, torch.zeros(2, 5, 4, dtype=F64))
    with pytest.raises(TypeError, match="torch.nn.GRU or seqlearn.gated.GRU"):
        gru_gates(torch.nn.LSTM(3, 5, batch_first=True), u)
    with pytest.raises(ValueError, match="num_layers=2"):
        gru_gates(torch.nn.GRU(3, 5, num_layers=2, batch_first=True).double(), u)
    with pytest.raises(ValueError, match="batch_first"):
        gru_gates(torch.nn.GRU(3, 5), u)
    with pytest.raises(ValueError, match=r"x must have shape \(B, T, D=4\)"):
        gru_gates(torch.nn.GRU(4, 5, batch_first=True).double(), u)
    with pytest.raises(ValueError, match=r"h0 must have shape \(B=2, H=5\)"):
        gru_gates(torch.nn.GRU(3, 5, batch_first=True).double(), u, torch.zeros(3, 5, dtype=F64))


def test_gru_update_loop_checks_candidates():
    u = torch.rand(2, 5, 3, dtype=torch.float64)
    with pytest.raises(TypeError, match="u and h_tilde must have the same dtype"):
        gru_update_loop(u, torch.randn(2, 5, 3))
    with pytest.raises(TypeError, match="h_tilde must be a floating-point tensor"):
        gru_update_loop(u, torch.ones(2, 5, 3, dtype=torch.long))


def test_gru_gates_checks_h0_dtype():
    gru = GRU(2, 3)
    with pytest.raises(TypeError, match="h0 and the GRU's weights must have the same dtype"):
        gru_gates(gru, torch.randn(1, 4, 2), torch.zeros(1, 3, dtype=torch.float64))


# ------------------------------- devices and the exact wording of each validation error


# Py. Devices are checked with PyTorch's data-less ``meta`` device, so no GPU is needed:
# a mask built on the CPU cannot be combined with meta gates.


def test_gru_implied_weights_stay_on_the_device_of_u():
    alpha, beta = gru_implied_weights(torch.zeros(2, 3, 4, device="meta"))
    assert (alpha.device.type, tuple(alpha.shape)) == ("meta", (2, 3, 3, 4))
    assert (beta.device.type, tuple(beta.shape)) == ("meta", (2, 3, 4))


def _weights(T=3, H=2):
    u = torch.full((1, T, H), 0.5, dtype=F64)
    alpha, beta = gru_implied_weights(u)
    return alpha, beta, torch.zeros(1, T, H, dtype=F64)


@pytest.mark.parametrize("call, error, match", [
    (lambda a, b, h: apply_implied_weights(a, b, h.long()), TypeError,
     r"^h_tilde must be a floating-point tensor, got dtype torch\.int64$"),
    (lambda a, b, h: apply_implied_weights(a, b, h[0, 0]), ValueError,
     r"^h_tilde must have shape \(\.\.\., T, H\), got \(2,\)$"),
    (lambda a, b, h: apply_implied_weights(a, b[..., :1], h), ValueError,
     r"^beta must have shape \(1, 3, 2\), got \(1, 3, 1\) \(h_tilde has shape \(1, 3, 2\)\)$"),
    (lambda a, b, h: apply_implied_weights(a, b.float(), h), TypeError,
     r"^beta and h_tilde must have the same dtype, got torch\.float32 and torch\.float64$"),
    (lambda a, b, h: apply_implied_weights(a, b, h, torch.zeros(1, 2)), TypeError,
     r"^h0 and h_tilde must have the same dtype, got torch\.float32 and torch\.float64$"),
    (lambda a, b, h: gru_gates(GRU(2, 3), torch.zeros(1, 4, 2, dtype=torch.long)), TypeError,
     r"^x must be a floating-point tensor, got dtype torch\.int64$"),
    (lambda a, b, h: gru_gates(GRU(2, 3), torch.zeros(1, 4, 2, dtype=F64)), TypeError,
     r"^x and the GRU's weights must have the same dtype, got torch\.float64 and "
     r"torch\.float32$"),
])
def test_errors_name_the_argument(call, error, match):
    with pytest.raises(error, match=match):
        call(*_weights())


# ---------------------------------------------- properties at random sizes (hypothesis)


@covers("seqlearn.unroll.gru_implied_weights", "seqlearn.unroll.apply_implied_weights",
        "seqlearn.unroll.gru_update_loop", "seqlearn.unroll.gru_gates")
@given(seed=seeds, B=sizes, T=sizes, H=sizes)
def test_unrolled_gru_equals_the_update_loop(seed, B, T, H):
    u, cand, h0 = torch.sigmoid(randn(seed, B, T, H)), randn(seed + 1, B, T, H), randn(seed, B, H)
    alpha, beta = unroll.gru_implied_weights(u)
    h = unroll.gru_update_loop(u, cand, h0)
    torch.testing.assert_close(unroll.apply_implied_weights(alpha, beta, cand, h0), h)
    assert unroll.notes_printed_weights(u).shape == alpha.shape
    torch.manual_seed(seed)
    gru = nn.GRU(H, H, batch_first=True, dtype=F64)
    gates, cands, states = unroll.gru_gates(gru, cand)
    torch.testing.assert_close(states, gru(cand)[0])
    torch.testing.assert_close(unroll.gru_update_loop(gates, cands), states)
    refuses(unroll.gru_implied_weights, numpy_of(u))
    refuses(unroll.gru_update_loop, u, cand[..., None])
    refuses(unroll.gru_gates, gru, numpy_of(cand))


# ---------------------------------------------- properties at random sizes (hypothesis)


@covers("seqlearn.unroll.notes_printed_weights")
@given(seed=seeds, T=st.integers(1, 6), H=st.integers(1, 3))
def test_notes_printed_weights_follow_the_printed_formula(seed, T, H):
    u = torch.sigmoid(randn(seed, T, H))
    printed = unroll.notes_printed_weights(u)
    for t in range(T):  # 0-based: prod_{j<=t-i} u_j * prod_{k<i} (1 - u_k)
        for i in range(T):
            want = (torch.prod(u[: t - i + 1], 0) * torch.prod(1 - u[:i], 0) if i <= t
                    else torch.zeros(H, dtype=F64))
            torch.testing.assert_close(printed[t, i], want)
    # wrong already at t = 1 (index 0) unless u_1 = 1/2: u_1 instead of 1 - u_1
    alpha = unroll.gru_implied_weights(u)[0]
    torch.testing.assert_close(printed[0, 0] - alpha[0, 0], 2 * u[0] - 1)
    refuses(unroll.notes_printed_weights, numpy_of(u))
