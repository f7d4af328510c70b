"""seqlearn.scan: every scan against a plain Python loop over numbers, at random sizes, in float64."""

from __future__ import annotations

import numpy as np
import pytest
import sympy
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from seqlearn.scan import METHODS, combine, linear_scan, work_depth

F64 = torch.float64
FAST = [m for m in METHODS if m != "sequential"]
SETTINGS = settings(max_examples=30, deadline=None)


def python_loop(a: torch.Tensor, b: torch.Tensor, h0: torch.Tensor | None) -> np.ndarray:
    """An independent reference: scalar Python arithmetic, one batch row and unit at a time."""
    A, Bv = a.numpy(), b.numpy()
    H0 = np.zeros(A.shape[:-2] + A.shape[-1:]) if h0 is None else h0.numpy()
    out = np.empty_like(A)
    for idx in np.ndindex(*A.shape[:-2]):
        for k in range(A.shape[-1]):
            h = float(H0[idx + (k,)])
            for t in range(A.shape[-2]):
                h = float(A[idx + (t, k)]) * h + float(Bv[idx + (t, k)])
                out[idx + (t, k)] = h
    return out


def random_coefficients(g: torch.Generator, shape: tuple[int, ...], zero_frac: float) -> torch.Tensor:
    """Real coefficients of both signs in (-1.2, 1.2), with a fraction set exactly to 0."""
    a = (torch.rand(shape, generator=g, dtype=F64) * 2.4 - 1.2)
    a[torch.rand(shape, generator=g, dtype=F64) < zero_frac] = 0.0
    return a


cases = st.fixed_dictionaries({
    "batch": st.lists(st.integers(1, 3), min_size=0, max_size=3),
    "T": st.integers(1, 70), "H": st.integers(1, 4),
    "chunk": st.one_of(st.none(), st.integers(2, 9)),
    "with_h0": st.booleans(), "zero_frac": st.sampled_from([0.0, 0.2, 1.0]),
    "seed": st.integers(0, 2**16)})


@SETTINGS
@given(c=cases)
def test_all_methods_match_the_python_loop(c):
    g = torch.Generator().manual_seed(c["seed"])
    shape = tuple(c["batch"]) + (c["T"], c["H"])
    a = random_coefficients(g, shape, c["zero_frac"])
    b = torch.randn(shape, generator=g, dtype=F64)
    h0 = torch.randn(shape[:-2] + shape[-1:], generator=g, dtype=F64) if c["with_h0"] else None
    expected = torch.from_numpy(python_loop(a, b, h0))
    for method in METHODS:
        got = linear_scan(a, b, h0, method=method, chunk=c["chunk"])
        assert got.shape == shape and got.dtype == F64
        torch.testing.assert_close(got, expected, rtol=1e-10, atol=1e-12, msg=lambda m: f"{method}: {m}")


@pytest.mark.parametrize("T", [1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 31, 32, 33, 100, 257])
@pytest.mark.parametrize("method", FAST)
def test_lengths_around_powers_of_two(T, method):
    g = torch.Generator().manual_seed(T)
    a = random_coefficients(g, (2, T, 3), 0.1)
    b = torch.randn(2, T, 3, generator=g, dtype=F64)
    h0 = torch.randn(2, 3, generator=g, dtype=F64)
    for h in (None, h0):
        torch.testing.assert_close(linear_scan(a, b, h, method=method),
                                   linear_scan(a, b, h, method="sequential"), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("method", METHODS)
def test_special_coefficients(method):
    g = torch.Generator().manual_seed(0)
    b = torch.randn(3, 13, 2, generator=g, dtype=F64)
    h0 = torch.randn(3, 2, generator=g, dtype=F64)
    ones, zeros = torch.ones_like(b), torch.zeros_like(b)
    # a = 1: running sums; a = 0: no memory at all; a = -1: alternating signs
    torch.testing.assert_close(linear_scan(ones, b, h0, method), h0[:, None] + b.cumsum(1))
    torch.testing.assert_close(linear_scan(zeros, b, h0, method), b)
    sign = (-1.0) ** torch.arange(1, 14, dtype=F64)[None, :, None]  # (-1)^(t+1), t = 0..12
    torch.testing.assert_close(linear_scan(-ones, zeros, h0, method), sign * h0[:, None])


@pytest.mark.parametrize("method", FAST)
def test_gradients_match_the_loop(method):
    g = torch.Generator().manual_seed(1)
    a, b = (torch.randn(2, 21, 3, generator=g, dtype=F64, requires_grad=True) for _ in range(2))
    h0 = torch.randn(2, 3, generator=g, dtype=F64, requires_grad=True)
    w = torch.randn(2, 21, 3, generator=g, dtype=F64)
    expected = torch.autograd.grad((linear_scan(a, b, h0) * w).sum(), (a, b, h0))
    got = torch.autograd.grad((linear_scan(a, b, h0, method) * w).sum(), (a, b, h0))
    for x, y in zip(got, expected):
        torch.testing.assert_close(x, y, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("method", METHODS)
def test_exact_where_a_product_of_the_scan_overflows(method):
    # a_t cycles through 0, +-1e200, +-1e200 and b_t through 0, 1, 3: the states 0, 1,
    # +-1e200 are finite, but the tree scans multiply 1e200 * 1e200 over windows the loop
    # never forms; every method must still return the loop's states
    a = torch.tensor([0.0, 1e200, 1e200] * 100, dtype=F64)[None, :, None].repeat(1, 1, 2)
    a[..., 1] *= -1                                                    # both signs
    b = torch.tensor([0.0, 1.0, 3.0] * 100, dtype=F64)[None, :, None].repeat(1, 1, 2)
    want = torch.from_numpy(python_loop(a, b, None))                  # (1, 300, 2)
    assert bool(torch.isfinite(want).all()) and float(want.abs().max()) == 1e200
    torch.testing.assert_close(linear_scan(a, b, method=method), want, rtol=1e-15, atol=0)


def test_float32_parallel_close_to_loop():
    g = torch.Generator().manual_seed(2)
    a = torch.rand(4, 1000, 8, generator=g) * 2 - 1
    b = torch.randn(4, 1000, 8, generator=g)
    torch.testing.assert_close(linear_scan(a, b, method="parallel"), linear_scan(a, b), rtol=1e-5, atol=1e-5)


def test_empty_sequence():
    a = torch.zeros(2, 0, 3, dtype=F64)
    for method in METHODS:
        assert linear_scan(a, a, method=method).shape == (2, 0, 3)


def test_combine_is_associative_not_commutative_and_has_identity():
    a1, b1, a2, b2, a3, b3, h = sympy.symbols("a1 b1 a2 b2 a3 b3 h")
    left = combine(combine((a1, b1), (a2, b2)), (a3, b3))
    right = combine((a1, b1), combine((a2, b2), (a3, b3)))
    assert all(sympy.expand(x - y) == 0 for x, y in zip(left, right))
    # combine = "apply the first step, then the second"
    a12, b12 = combine((a1, b1), (a2, b2))
    assert sympy.expand(a12 * h + b12 - (a2 * (a1 * h + b1) + b2)) == 0
    assert sympy.expand(combine((a2, b2), (a1, b1))[1] - b12) != 0
    assert combine((1, 0), (a1, b1)) == (a1, b1) and combine((a1, b1), (1, 0)) == (a1, b1)


def test_work_depth():
    assert work_depth(8, "sequential") == (8, 8)
    assert work_depth(8, "hillis-steele") == (7 + 6 + 4, 3)
    assert work_depth(5, "hillis-steele") == (4 + 3 + 1, 3)
    assert work_depth(8, "blelloch") == (2 * 7 + 8, 7)
    assert work_depth(4096, "parallel") == (64 + 2 * 4096, 64 + 2 * 64)
    assert work_depth(10, "parallel") == (3 + 2 * 12, 3 + 2 * 4)  # C = 4: 3 blocks, padded to 12
    assert work_depth(4096, "parallel", chunk=16)[1] == 16 + 2 * 16 + 2 * 16
    with pytest.raises(ValueError, match="method"):
        work_depth(8, "magic")
    with pytest.raises(ValueError, match="positive"):
        work_depth(0, "sequential")


def test_errors_name_what_is_wrong():
    a = torch.zeros(2, 5, 3, dtype=F64)
    with pytest.raises(ValueError, match=r"a must have shape \(\.\.\., T, H\), got \(5,\)"):
        linear_scan(torch.zeros(5, dtype=F64), torch.zeros(5, dtype=F64))
    with pytest.raises(ValueError, match=r"b must have the same shape as a \(2, 5, 3\), got \(2, 5, 4\)"):
        linear_scan(a, torch.zeros(2, 5, 4, dtype=F64))
    with pytest.raises(ValueError, match=r"h0 must have shape \(\.\.\., H\) = \(2, 3\), got \(3,\)"):
        linear_scan(a, a, torch.zeros(3, dtype=F64))
    with pytest.raises(TypeError, match="floating-point"):
        linear_scan(torch.zeros(2, 5, 3, dtype=torch.int64), torch.zeros(2, 5, 3, dtype=torch.int64))
    with pytest.raises(TypeError, match="same dtype"):
        linear_scan(a, a.float())
    with pytest.raises(TypeError, match="same dtype"):
        linear_scan(a, a, torch.zeros(2, 3))
    with pytest.raises(TypeError, match="torch.Tensor"):
        linear_scan(a.numpy(), a.numpy())
    with pytest.raises(ValueError, match="method must be one of"):
        linear_scan(a, a, method="fast")
    with pytest.raises(ValueError, match="chunk"):
        linear_scan(a, a, method="parallel", chunk=1)
