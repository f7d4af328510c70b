"""seqlearn.mingru: the log-space scan against the loop, minGRU and minLSTM against
their equations; the wording of each error; properties at random sizes; closed gates."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings, strategies as st

from properties import covers, randn, refuses, seeds
from seqlearn import mingru, scan
from seqlearn.mingru import MinGRU, MinLSTM, log_positive_candidate, log_space_scan
from seqlearn.scan import linear_scan


F64 = torch.float64
SETTINGS = settings(max_examples=20, deadline=None)


def test_positive_candidate_values():
    y = torch.tensor([-30.0, -1.0, 0.0, 0.5, 2.0], dtype=F64)
    want = torch.tensor([1 / (1 + torch.e**30), 1 / (1 + torch.e), 0.5, 1.0, 2.5], dtype=F64)
    torch.testing.assert_close(mingru.positive_candidate(y), want, rtol=1e-14, atol=0)
    torch.testing.assert_close(mingru.log_positive_candidate(y), want.log(), rtol=1e-14, atol=0)
    torch.testing.assert_close(mingru.log_positive_candidate(torch.tensor([-800.0], dtype=F64)),
                               torch.tensor([-800.0], dtype=F64))  # no log(0)


@SETTINGS
@given(seed=st.integers(0, 2**16), T=st.integers(1, 20), H=st.integers(1, 3),
       with_h0=st.booleans())
def test_log_space_scan_equals_the_loop(seed, T, H, with_h0):
    g = torch.Generator().manual_seed(seed)
    a = torch.rand(2, T, H, generator=g, dtype=F64) * 1.5 + 0.01  # some a > 1
    b = torch.rand(2, T, H, generator=g, dtype=F64) + 0.01
    h0 = torch.rand(2, H, generator=g, dtype=F64) + 0.1 if with_h0 else None
    got = mingru.log_space_scan(a.log(), b.log(), None if h0 is None else h0.log()).exp()
    h, want = torch.zeros(2, H, dtype=F64) if h0 is None else h0, []
    for t in range(T):
        h = a[:, t] * h + b[:, t]
        want.append(h)
    torch.testing.assert_close(got, torch.stack(want, 1), rtol=1e-11, atol=0)


def test_log_space_scan_survives_where_products_underflow():
    T = 2000
    log_a = torch.full((T, 1), -1.0, dtype=F64)  # prod a = e^-2000 underflows
    log_b = torch.zeros(T, 1, dtype=F64)
    log_h = mingru.log_space_scan(log_a, log_b)
    fixed_point = -torch.log1p(-torch.exp(torch.tensor(-1.0, dtype=F64)))  # h = 1 / (1 - e^-1)
    torch.testing.assert_close(log_h[-1, 0], fixed_point, rtol=1e-12, atol=0)


@pytest.mark.parametrize("cls", [mingru.MinGRU, mingru.MinLSTM])
def test_every_method_gives_the_same_states(cls):
    torch.manual_seed(0)
    layer = cls(3, 4).double()
    x = torch.randn(2, 40, 3, dtype=F64) * 3
    want = layer(x, method="sequential")
    for method in mingru.MINGRU_METHODS:
        torch.testing.assert_close(layer(x, method=method), want, rtol=1e-10, atol=1e-12)
    assert want.shape == (2, 40, 4)
    assert layer(x).shape == (2, 40, 4)


def test_mingru_equations_by_a_loop():
    torch.manual_seed(1)
    layer = mingru.MinGRU(2, 3).double()
    x = torch.randn(1, 7, 2, dtype=F64)
    W_u, b_u = layer.linear_u.weight, layer.linear_u.bias
    W_h, b_h = layer.linear_h.weight, layer.linear_h.bias
    h, states = torch.zeros(3, dtype=F64), []
    for x_t in x[0]:
        u = torch.sigmoid(W_u @ x_t + b_u)
        y = W_h @ x_t + b_h
        cand = torch.where(y >= 0, y + 0.5, torch.sigmoid(y))
        h = u * h + (1 - u) * cand
        states.append(h)
    torch.testing.assert_close(layer(x)[0], torch.stack(states), rtol=1e-12, atol=1e-12)
    u, cand = layer.gates(x)
    torch.testing.assert_close(linear_scan(u, (1 - u) * cand)[0], torch.stack(states))


def test_minlstm_equations_by_a_loop():
    torch.manual_seed(2)
    layer = mingru.MinLSTM(2, 3).double()
    x = torch.randn(1, 7, 2, dtype=F64) * 4
    p = {name: getattr(layer, f"linear_{name}") for name in "fih"}
    h, states = torch.zeros(3, dtype=F64), []
    for x_t in x[0]:
        f, i = torch.sigmoid(p["f"](x_t)), torch.sigmoid(p["i"](x_t))
        y = p["h"](x_t)
        cand = torch.where(y >= 0, y + 0.5, torch.sigmoid(y))
        h = f / (f + i) * h + i / (f + i) * cand
        states.append(h)
    torch.testing.assert_close(layer(x)[0], torch.stack(states), rtol=1e-12, atol=1e-12)
    f, i, cand = layer.gates(x)
    torch.testing.assert_close(f + i, torch.ones_like(f))
    assert bool((f > 0).all()) and bool((i > 0).all())


def test_errors_name_what_is_wrong():
    layer = mingru.MinGRU(3, 2).double()
    x = torch.randn(1, 4, 3, dtype=F64)
    with pytest.raises(ValueError, match="method must be one of"):
        layer(x, method="fast")
    with pytest.raises(ValueError, match="method must be one of"):
        mingru.MinLSTM(3, 2).double()(x, method=None)
    with pytest.raises(ValueError, match=r"x must have shape \(B, T, D=3\)"):
        layer(x[..., :2])
    with pytest.raises(ValueError, match=r"x must have shape \(B, T, D=3\)"):
        layer(x[..., :2], method="sequential")
    with pytest.raises(TypeError, match="same dtype"):
        layer(x.float())
    with pytest.raises(TypeError, match="x must be a torch.Tensor"):
        mingru.MinLSTM(3, 2)(x.numpy())
    with pytest.raises(TypeError, match="x must be a torch.Tensor"):
        mingru.MinLSTM(3, 2)(x.numpy(), method="parallel")
    with pytest.raises(ValueError, match="hidden_size"):
        mingru.MinGRU(3, 0)
    with pytest.raises(ValueError, match="input_size"):
        mingru.MinLSTM(0, 2)
    with pytest.raises(ValueError, match="hidden_size"):
        mingru.MinLSTM(2, 0)
    with pytest.raises(ValueError, match="input_size"):
        mingru.MinGRU(0, 2)
    a = torch.zeros(4, 2, dtype=F64)
    with pytest.raises(ValueError, match="log_b must have the shape of log_a"):
        mingru.log_space_scan(a, a[:, :1])
    with pytest.raises(TypeError, match="log_a must be a torch.Tensor"):
        mingru.log_space_scan(a.numpy(), a)
    with pytest.raises(TypeError, match="same dtype"):
        mingru.log_space_scan(a, a.float())
    with pytest.raises(ValueError, match="log_h0 must have shape"):
        mingru.log_space_scan(a, a, torch.zeros(3, dtype=F64))
    with pytest.raises(TypeError, match="same dtype"):
        mingru.log_space_scan(a, a, torch.zeros(2))
    with pytest.raises(TypeError, match="floating"):
        mingru.positive_candidate(torch.ones(2, dtype=torch.long))
    with pytest.raises(TypeError, match="floating"):
        mingru.log_positive_candidate(torch.ones(2, dtype=torch.long))


# ---------------- the wording of each validation error and the scan method MinLSTM runs


# Py: every error names the argument at fault, and ``MinLSTM.forward`` hands its
# ``method`` to the scan (all methods agree to rounding, so only a spy can tell them
# apart).


Z = torch.zeros(1, 2, 3, dtype=F64)


@pytest.mark.parametrize("call, error, match", [
    (lambda: log_positive_candidate(torch.zeros(2, dtype=torch.long)), TypeError,
     r"^y must be a floating-point tensor, got dtype torch\.int64$"),
    (lambda: log_space_scan(Z, Z.long()), TypeError,
     r"^log_b must be a floating-point tensor, got dtype torch\.int64$"),
    (lambda: log_space_scan(Z, Z.float()), TypeError,
     r"^log_a and log_b must have the same dtype, got torch\.float64 and torch\.float32$"),
    (lambda: log_space_scan(Z, Z, torch.zeros(1, 3)), TypeError,
     r"^log_a and log_h0 must have the same dtype, got torch\.float64 and torch\.float32$"),
    (lambda: MinGRU(3, 2)(Z.long()), TypeError,
     r"^x must be a floating-point tensor, got dtype torch\.int64$"),
    (lambda: MinGRU(3, 2)(Z), TypeError,
     r"^x and the module's parameters must have the same dtype, got torch\.float64 and "
     r"torch\.float32$"),
    (lambda: MinGRU(3.0, 2), TypeError, r"^input_size must be an int, got float$"),
])
def test_errors_name_the_argument(call, error, match):
    with pytest.raises(error, match=match):
        call()


@pytest.mark.parametrize("method", ["parallel", "blelloch"])
def test_minlstm_hands_its_method_to_the_scan(monkeypatch, method):
    seen = []
    real = mingru.linear_scan

    def spy(*args, **kwargs):
        seen.append(kwargs.get("method", "sequential"))
        return real(*args, **kwargs)

    monkeypatch.setattr(mingru, "linear_scan", spy)
    torch.manual_seed(0)
    m = MinLSTM(3, 2).double()
    x = torch.randn(1, 4, 3, dtype=F64)
    h = m(x, method=method)
    assert seen == [method]
    torch.testing.assert_close(h, m(x, method="log"), rtol=1e-12, atol=1e-14)


# ---------------------------------------------- properties at random sizes (hypothesis)


@covers("seqlearn.mingru.MinGRU", "seqlearn.mingru.MinLSTM", "seqlearn.mingru.log_space_scan",
        "seqlearn.mingru.positive_candidate", "seqlearn.mingru.log_positive_candidate")
@given(seed=seeds, T=st.integers(1, 12), scale=st.sampled_from([0.1, 1.0, 5.0]),
       cls=st.sampled_from([mingru.MinGRU, mingru.MinLSTM]))
def test_log_space_layers_equal_their_loops(seed, T, scale, cls):
    torch.manual_seed(seed)
    layer = cls(2, 3).double()
    x = scale * randn(seed, 2, T, 2)
    want = layer(x, method="sequential")
    torch.testing.assert_close(layer(x), want, rtol=1e-10, atol=1e-12)
    assert bool((want > 0).all())  # positive candidates and gates: positive states
    y = scale * randn(seed + 1, 5)
    torch.testing.assert_close(mingru.log_positive_candidate(y),
                               mingru.positive_candidate(y).log())
    refuses(layer, x.float())
    refuses(mingru.log_space_scan, x, x[..., :1])


# ---------------------------- edge cases: sizes 0, reduced precision, non-finite values


def test_log_space_scan_with_closed_gates_equals_the_loop():
    gen = torch.Generator().manual_seed(3)
    a = torch.rand(2, 6, 3, generator=gen, dtype=F64)
    a[0, 2, 1] = a[1, 0, :] = a[1, 5, 0] = 0.0  # closed gates: log a = -inf
    b = torch.rand(2, 6, 3, generator=gen, dtype=F64) + 0.1
    h0 = torch.rand(2, 3, generator=gen, dtype=F64) + 0.1
    log_a, log_b = a.log().requires_grad_(), b.log().requires_grad_()
    out = mingru.log_space_scan(log_a, log_b, h0.log()).exp()
    torch.testing.assert_close(out, scan.linear_scan(a, b, h0), rtol=1e-12, atol=0)
    out.sum().backward()
    assert bool(log_a.grad.isfinite().all()) and bool(log_b.grad.isfinite().all())
    with pytest.raises(ValueError, match="log_a must be below"):
        mingru.log_space_scan(torch.full((1, 2, 1), math.inf), torch.zeros(1, 2, 1))
