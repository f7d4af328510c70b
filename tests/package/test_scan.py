"""seqlearn.scan: every scan against a plain Python loop over numbers, at random sizes,
in float64; the extended-exponent stage, defaults and the wording of each error;
properties for any real a; methods and operands it refuses."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
import sympy
import torch
from hypothesis import given, settings, strategies as st
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves

from properties import covers, non_finite, not_bools, numpy_of, randn, refuses, seeds
from seqlearn import scan
from seqlearn.scan import (METHODS, blocked_scan, combine, default_chunk, linear_scan,
                           to_extended, work_depth)


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


class AdditionChain(TorchDispatchMode):
    """Measures depth from outside the scan: for each tensor computed inside the mode, the
    number of additions on the longest chain of operations that produced it (a loop step
    and a ``combine`` each end in one addition)."""

    def __init__(self):
        super().__init__()
        self.chain: dict[int, int] = {}  # storage address -> additions

    def of(self, x: torch.Tensor) -> int:
        return self.chain.get(x.untyped_storage().data_ptr(), 0)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        inputs = [x for x in tree_leaves((args, kwargs)) if isinstance(x, torch.Tensor)]
        n = max(map(self.of, inputs), default=0) + (func.overloadpacket is torch.ops.aten.add)
        for y in tree_leaves(out):
            if isinstance(y, torch.Tensor):
                self.chain[y.untyped_storage().data_ptr()] = n
        return out


@pytest.mark.parametrize("T, chunk", [(1, None), (2, None), (10, None), (100, None),
                                      (1000, None), (4096, None), (300, 8), (50, 2)])
def test_each_method_executes_the_rounds_work_depth_claims(T, chunk):
    """Rounds counted while the scan runs: a ``parallel`` that fell back to the loop (or
    a tree scan that did) would take T rounds and fail here, though its values are right."""
    g = torch.Generator().manual_seed(T)
    a, b = torch.rand(2, T, 3, generator=g, dtype=F64), torch.randn(2, T, 3, generator=g, dtype=F64)
    counted = {}
    for method in METHODS:
        with AdditionChain() as mode:
            h = linear_scan(a, b, method=method, chunk=chunk)
        counted[method] = mode.of(h)
    fold = 1  # the tree scans fold h_{-1} into b_0: one more addition
    assert counted == {"sequential": T,
                       "parallel": work_depth(T, "parallel", chunk)[1],
                       "hillis-steele": work_depth(T, "hillis-steele")[1] + fold,
                       "blelloch": work_depth(T, "blelloch")[1] + fold}
    if T >= 100 and chunk is None:  # about 3 sqrt(T), far below T
        assert abs(counted["parallel"] / (3 * T ** 0.5) - 1) < 0.06


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


# ---------- the extended-exponent stage of the blocked scan, defaults and error wording


# Py: the blocked ("parallel") scan in extended-exponent arithmetic, where the identity
# step ``(1, 0)`` pads the last block and starts every block's reduction;
# ``blocked_scan``'s default block length; and the argument each error names.


@pytest.mark.parametrize("T, chunk", [(7, 3), (8, 4), (10, 4)])
def test_blocked_scan_in_extended_arithmetic_equals_the_loop(T, chunk):
    # a_t = 2^{+-600}: the states reach 2^1200 (overflow in float64) and come back down, so
    # linear_scan falls back to extended exponents; both methods must then agree exactly
    up, down = 2.0 ** 600, 2.0 ** -600
    a = torch.tensor([0.5, up, up, down, down, 0.5, 3.0, 0.25, up, down][:T], dtype=F64)
    b = torch.linspace(1.0, 2.0, T, dtype=F64)
    a, b = a[:, None], b[:, None]  # (T, 1)
    want = linear_scan(a, b, method="sequential")
    h = linear_scan(a, b, method="parallel", chunk=chunk)
    assert not bool(torch.isfinite(want).all()) and bool(torch.isfinite(want[-1]).all())
    torch.testing.assert_close(h, want, rtol=1e-15, atol=0)
    ref = b.new_zeros(1)  # the loop in float64, with exact powers of two where it stays finite
    for t in range(T):
        ref = a[t] * ref + b[t]
        if bool(torch.isfinite(ref).all()):
            torch.testing.assert_close(h[t], ref, rtol=1e-15, atol=0)


def test_blocked_scan_default_chunk_is_16(monkeypatch):
    seen = []
    real = scan.linear_scan

    def spy(*args, **kwargs):
        seen.append(kwargs.get("chunk"))
        return real(*args, **kwargs)

    monkeypatch.setattr(scan, "linear_scan", spy)
    a, b = torch.full((40, 2), 0.9, dtype=F64), torch.ones(40, 2, dtype=F64)
    torch.testing.assert_close(blocked_scan(a, b), real(a, b, method="parallel", chunk=16),
                               rtol=0, atol=0)
    assert seen == [16]


@pytest.mark.parametrize("call, error, match", [
    (lambda: to_extended(torch.tensor([1.0, float("inf")])), ValueError,
     r"^x contains NaN or infinity$"),
    (lambda: default_chunk(0), ValueError, r"^T must be positive, got 0$"),
    (lambda: linear_scan(torch.zeros(2, 1), [[1.0], [2.0]]), TypeError,
     r"^a and b must be torch\.Tensor, got Tensor and list$"),
    (lambda: linear_scan(torch.zeros(2, 1, dtype=torch.long), torch.zeros(2, 1, dtype=torch.long)),
     TypeError, r"^a must be a floating-point tensor, got dtype torch\.int64$"),
    (lambda: linear_scan(torch.zeros(2, 1, dtype=F64), torch.zeros(2, 1, dtype=F64),
                         torch.zeros(1)),
     TypeError, r"^a and h0 must have the same dtype, got torch\.float64 and torch\.float32$"),
])
def test_errors_name_the_argument(call, error, match):
    with pytest.raises(error, match=match):
        call()


# ---------------------------------------------- properties at random sizes (hypothesis)


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


# ---------------------------- edge cases: sizes 0, reduced precision, non-finite values


def test_extended_scan_refuses_the_methods_it_cannot_run():
    a, b, h0 = torch.full((1, 5, 1), 10.0), torch.ones(1, 5, 1), torch.zeros(1, 1)
    reference = scan.ExtendedScan.apply(a, b, h0, "sequential", 2)
    torch.testing.assert_close(
        scan.ExtendedScan.apply(a, b, h0, "parallel", 2), reference
    )
    for method in ("blelloch", "hillis-steele", "fast"):
        with pytest.raises(
            ValueError, match="method must be 'sequential' or 'parallel'"
        ):
            scan.ExtendedScan.apply(a, b, h0, method, 2)


def test_combine_refuses_operands_that_would_broadcast():
    a, b = torch.ones(3), torch.zeros(3)
    with pytest.raises(ValueError, match="must have one shape"):
        scan.combine((a[:, None], b), (a, b))  # (3, 1) with (3,): 9 maps, silently
    assert scan.combine((2, 1), (3, 4)) == (6, 7)  # numbers as before


@pytest.mark.parametrize("bad", ["plain", None,
                                 (lambda a, b: a * b, lambda a, b: a + b)])
def test_combine_refuses_an_arithmetic_that_is_not_one(bad):
    """``arithmetic='plain'`` failed inside with AttributeError (issue 31)."""
    with pytest.raises(
            TypeError, match="arithmetic must be seqlearn.scan.PLAIN or EXTENDED"):
        combine((2.0, 1.0), (3.0, 0.5), bad)
    assert combine((2.0, 1.0), (3.0, 0.5), scan.PLAIN) == (6.0, 3.5)
