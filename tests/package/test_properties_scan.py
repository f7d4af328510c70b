"""Property tests of seqlearn.scan: every method equals an exact rational loop for any real a."""

from fractions import Fraction

import pytest
import torch
from hypothesis import given, strategies as st

from properties import F64, covers, non_finite, not_bools, numpy_of, randn, refuses, seeds
from seqlearn import scan

SCALES = [0.0, 1e-30, 0.5, -1.0, -3.0, 10.0, 1e30, 1e200]


def exact_loop(a: torch.Tensor, b: torch.Tensor, h0: torch.Tensor) -> torch.Tensor:
    """h_t = a_t h_{t-1} + b_t in exact rational arithmetic, rounded once to float64."""
    h = [Fraction(v) for v in h0.tolist()]
    out = []
    for a_t, b_t in zip(a.tolist(), b.tolist()):
        h = [Fraction(x) * y + Fraction(z) for x, y, z in zip(a_t, h, b_t)]
        out.append([float(v) if abs(v) < 2**1024 else float("inf") * (1 if v > 0 else -1)
                    for v in h])
    return torch.tensor(out, dtype=F64).reshape(len(out), len(h0))


@covers("seqlearn.scan.linear_scan", "seqlearn.scan.sequential_scan",
        "seqlearn.scan.blocked_scan", "seqlearn.scan.hillis_steele_scan",
        "seqlearn.scan.blelloch_scan", "seqlearn.scan.ExtendedScan")
@given(seed=seeds, T=st.integers(0, 40), H=st.integers(1, 2), scale=st.sampled_from(SCALES),
       zeros=st.booleans(), with_h0=st.booleans())
def test_every_method_is_exact_for_any_real_a(seed, T, H, scale, zeros, with_h0):
    a = scale * (1 + 0.1 * randn(seed, T, H))
    b = randn(seed + 1, T, H)
    if zeros:  # b = 0 until the last step: the parallel products would give inf * 0 = NaN
        b[:-1] = 0
    h0 = randn(seed + 2, H) if with_h0 else None
    want = exact_loop(a, b, torch.zeros(H, dtype=F64) if h0 is None else h0)
    for method in scan.METHODS:
        got = scan.linear_scan(a, b, h0, method=method)
        torch.testing.assert_close(got, want, rtol=1e-9, atol=0, equal_nan=False)
    start = torch.zeros(H, dtype=F64) if h0 is None else h0
    for got in (scan.sequential_scan(a, b, h0), scan.blocked_scan(a, b, h0, chunk=2)):
        torch.testing.assert_close(got, want, rtol=1e-9, atol=0)
    shifted = torch.cat([a[:1] * start + b[:1], b[1:]]) if T else b
    for fn in (scan.hillis_steele_scan, scan.blelloch_scan):
        torch.testing.assert_close(fn(a, shifted), want, rtol=1e-9, atol=0)


def loop_states(a: torch.Tensor, b: torch.Tensor, h0: torch.Tensor) -> torch.Tensor:
    h, states = h0, []
    for t in range(a.shape[-2]):
        h = a[..., t, :] * h + b[..., t, :]
        states.append(h)
    return torch.stack(states, -2) if states else b * a


@covers("seqlearn.scan.linear_scan", "seqlearn.scan.ExtendedScan")
@given(seed=seeds, T=st.integers(0, 12), method=st.sampled_from(scan.METHODS),
       stage2=st.booleans())
def test_gradients_flow_for_every_T_and_match_the_loop(seed, T, method, stage2):
    a = (0.9 * randn(seed, 2, T, 2)).requires_grad_()
    b = randn(seed + 1, 2, T, 2).requires_grad_()
    h0 = randn(seed + 3, 2, 2).requires_grad_()
    weights = randn(seed + 2, 2, T, 2)
    if stage2 and T:  # the extended-exponent stage with its reverse-scan backward
        run = scan.ExtendedScan.apply(a, b, h0, "sequential" if method == "sequential"
                                      else "parallel", 2)
    else:
        run = scan.linear_scan(a, b, h0, method=method)
    grads = torch.autograd.grad((run * weights).sum(), (a, b, h0), allow_unused=True)
    assert all(g is not None for g in grads)  # connected for every T, T = 0 and 1 included
    want = torch.autograd.grad((loop_states(a, b, h0) * weights).sum(), (a, b, h0),
                               allow_unused=True, materialize_grads=True)
    for got, ref in zip(grads, want):
        torch.testing.assert_close(got, ref)


def test_gradient_through_an_overflowing_product_is_exact():
    a = torch.tensor([[1e200], [1e200], [0.0]], dtype=F64, requires_grad=True)
    b = torch.tensor([[1.0], [0.0], [2.0]], dtype=F64)
    for method in scan.METHODS:
        h = scan.linear_scan(a, b, method=method)
        torch.testing.assert_close(h, torch.tensor([[1.0], [1e200], [2.0]], dtype=F64))
        (grad,) = torch.autograd.grad(h.sum(), a)
        torch.testing.assert_close(grad, torch.tensor([[0.0], [1.0], [1e200]], dtype=F64))


@covers("seqlearn.scan.linear_scan", "seqlearn.scan.sequential_scan",
        "seqlearn.scan.blocked_scan", "seqlearn.scan.hillis_steele_scan",
        "seqlearn.scan.blelloch_scan")
@given(seed=seeds, bad=non_finite, flag=not_bools)
def test_scans_refuse_bad_input(seed, bad, flag):
    a = randn(seed, 3, 2)
    a_bad = a.clone()
    a_bad[1, 0] = bad
    for fn in (scan.sequential_scan, scan.blocked_scan):
        refuses(fn, a_bad, a)
        refuses(fn, numpy_of(a), a)
    for fn in (scan.hillis_steele_scan, scan.blelloch_scan):
        refuses(fn, a, a_bad)
        refuses(fn, a, a[:, :1])
    refuses(scan.linear_scan, a, a, method=flag)
    refuses(scan.linear_scan, a, a, method="parallel", chunk="x" if flag is None else flag)
    refuses(scan.linear_scan, a, a, numpy_of(a[0]))


@covers("seqlearn.scan.combine", "seqlearn.scan.Arithmetic", "seqlearn.scan.to_extended",
        "seqlearn.scan.from_extended")
@given(seed=seeds, exponent=st.integers(-1070, 1020))
def test_extended_numbers_round_trip_and_combine_like_floats(seed, exponent):
    x = randn(seed, 5) * 2.0**exponent
    ext = scan.to_extended(x)
    assert ext.shape == (2, 5)
    torch.testing.assert_close(scan.from_extended(ext, F64), x, rtol=0, atol=0)
    a, b = randn(seed + 1, 5), randn(seed + 2, 5)
    plain = scan.combine((a, b), (x, a))
    extended = scan.combine(*(tuple(scan.to_extended(v) for v in pair) for pair in
                              ((a, b), (x, a))), scan.EXTENDED)
    for p, e in zip(plain, extended):
        torch.testing.assert_close(scan.from_extended(e, F64), p, rtol=1e-15, atol=0)
    assert isinstance(scan.PLAIN, scan.Arithmetic) and isinstance(scan.EXTENDED, scan.Arithmetic)
    refuses(scan.combine, (a,), (a, b))
    refuses(scan.to_extended, numpy_of(x))
    refuses(scan.from_extended, x, F64)
    refuses(scan.from_extended, ext, torch.int64)


@covers("seqlearn.scan.default_chunk", "seqlearn.scan.work_depth")
@given(T=st.integers(1, 10**6), method=st.sampled_from(scan.METHODS), flag=not_bools)
def test_work_and_depth(T, method, flag):
    C = scan.default_chunk(T)
    assert C >= 2 and (C - 1) ** 2 < max(T, 2) <= C**2 or T <= 4
    work, depth = scan.work_depth(T, method)
    assert 1 <= depth <= work and work >= T - 1
    refuses(scan.default_chunk, 0)
    refuses(scan.work_depth, T, "x" if flag is None else flag)
    refuses(scan.work_depth, 0, method)
