r"""Linear recurrences ``h_t = a_t * h_{t-1} + b_t``, computed sequentially and by parallel scans.

This is the recurrence of a GRU whose gates do not look at ``h_{t-1}`` (minGRU, Feng et al.
2024; book chapter ``gru_to_attention``, equation ``eq-g2a-linear``): with the keep gate
``u_t`` and the candidate ``h~_t`` it is ``a_t = u_t`` and ``b_t = (1 - u_t) * h~_t``.

Why a scan works
----------------
Write one step as the pair ``e_t = (a_t, b_t)``, the affine map ``h -> a_t * h + b_t``. Doing
``e_1`` first and ``e_2`` second is again an affine map,

.. math::

    (a_1, b_1) \circ (a_2, b_2) = (a_1 a_2,\; a_2 b_1 + b_2)                 \qquad (eq-g2a-combine)

and this operator is **associative** (it is composition of functions; identity ``(1, 0)``),
though not commutative. Hence ``h_t`` is the ``b`` part of the prefix ``e_0 \circ e_1 \circ
\dots \circ e_t`` (with ``h_{-1}`` folded into ``b_0``), and any bracketing of the prefixes gives
the same answer: that freedom is what a parallel scan exploits.

Methods (all element-wise over the hidden units ``H`` and any leading batch dimensions):

=================  ============  ==========  =================================================
method             work          depth       idea
=================  ============  ==========  =================================================
``sequential``     T             T           the loop itself (the reference)
``hillis-steele``  T log T       log T       every position combines with the one 2^k back
``blelloch``       ~3T           2 log T     up-sweep of partial sums, then down-sweep
``parallel``       ~2T           ~3 sqrt(T)  blocked scan: reduce all blocks of C ~ sqrt(T)
                                             steps at once, scan the block ends, re-scan
=================  ============  ==========  =================================================

``parallel`` is the fast one on a CPU (few, large vectorised operations); ``hillis-steele`` and
``blelloch`` are the textbook versions with logarithmic depth, kept readable for teaching.

Exact for any real ``a``
------------------------
No method divides by ``a`` or takes logarithms, so zeros and negative ``a`` are exact. What a
reordering can break is the *range*: a scan multiplies ``a`` over windows the loop never forms
on its own (``a = 10``, ``T = 400``: ``10^400`` overflows although ``h`` may stay 0; then
``inf * 0 = NaN``). Every method therefore runs in two stages:

1. in the input's floating type; if every state is finite, that is the answer (rounding
   aside, the same value as the loop: every operation is a product or a sum of finite
   numbers that did not overflow);
2. otherwise the same scan again in **extended-exponent arithmetic**: each number is a pair
   ``(m, e)`` standing for ``m 2^e`` with ``1/2 <= |m| < 1`` (or ``m = 0``) and an integer
   exponent ``e`` kept exactly in a float64 (integers up to ``2^53``). A product is
   ``(m_1 m_2, e_1 + e_2)``, a sum aligns both mantissas to the larger exponent first; after
   each operation ``frexp`` renormalises ``m``. Mantissas stay in ``[1/4, 2)`` and exponents
   are added, never exponentiated, so no product or sum can overflow or produce NaN, and each
   operation rounds the mantissa once, exactly like the float operation it replaces. Only the
   final conversion ``m 2^e`` rounds to the float range: ``+-inf`` appears exactly where the
   true state exceeds it (the loop itself gives ``inf`` there, or NaN a step later).

Gradients flow for every ``T`` (``T = 0`` and ``T = 1`` included): stage 1 through autograd,
stage 2 through its own backward pass (:class:`ExtendedScan`), a reverse scan, exact alike.
Inputs must be finite (``ValueError`` otherwise). Underflow is graceful as in the loop:
a partial product below the smallest float is 0 in stage 1, and stage 2 never underflows.
"""

from __future__ import annotations

import math
import operator
from typing import Any, Callable, NamedTuple

import numpy as np
import torch

from seqlearn.validate import (check_finite, check_float_dtype, check_int,
                               check_same_dtype, check_shape, check_tensor)

METHODS = ("sequential", "parallel", "hillis-steele", "blelloch")


class Arithmetic(NamedTuple):
    """The number system a scan runs in: products, sums and the constants 1 and 0."""

    mul: Callable[[Any, Any], Any]
    add: Callable[[Any, Any], Any]
    one_like: Callable[[torch.Tensor], torch.Tensor]
    zero_like: Callable[[torch.Tensor], torch.Tensor]


PLAIN = Arithmetic(operator.mul, operator.add, torch.ones_like, torch.zeros_like)

def _ldexp(m: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
    """``m * 2^k`` for integer-valued ``k``, in two halves so that no factor overflows."""
    k = k.detach().clamp(-2000.0, 2000.0)  # |m| < 2: beyond +-2000: 0 or inf anyway
    half = torch.floor(k / 2)  # both factors 2^half, 2^(k - half) lie within float64's range
    return m * torch.exp2(half) * torch.exp2(k - half)


def _normalise(m: torch.Tensor, e: torch.Tensor) -> torch.Tensor:
    """Pack ``m 2^e`` as ``(2, ...)``: mantissa in ``[1/2, 1)`` (or 0), exponent (constant).

    A zero keeps the exponent it was computed with, so that ``d value / d m = 2^e`` holds for
    zeros too and gradients through exact zeros (``a_t = 0``) are right.
    """
    _, shift = torch.frexp(m.detach())  # piecewise constant: no gradient through exponents
    shift = shift.to(m.dtype)
    return torch.stack([_ldexp(m, -shift), e.detach() + shift])


def to_extended(x: torch.Tensor) -> torch.Tensor:
    """Finite ``x (...)`` -> extended-exponent pairs ``(2, ...)`` in float64 (exact)."""
    check_tensor(x, "x")
    check_finite(x, "x")
    return _normalise(x.double(), torch.zeros_like(x, dtype=torch.float64))


def from_extended(x: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """Pairs ``(2, ...)`` -> ``m 2^e`` in ``dtype``; +-inf where the value exceeds its
    range."""
    check_tensor(x, "x")
    if x.dim() < 1 or x.shape[0] != 2:
        raise ValueError(f"x must have shape (2, ...) (mantissas, exponents), got "
                         f"{tuple(x.shape)}")
    check_float_dtype(dtype, "dtype")
    return _ldexp(x[0], x[1]).to(dtype)


def _ext_mul(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return _normalise(x[0] * y[0], x[1] + y[1])  # (m1 m2) 2^(e1 + e2)


def _ext_add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Align both mantissas to the larger exponent of the non-zero operands, then add."""
    none = torch.full_like(x[1], -math.inf)
    top = torch.maximum(torch.where(x[0] == 0, none, x[1]), torch.where(y[0] == 0, none, y[1]))
    top = torch.where(torch.isinf(top), torch.maximum(x[1], y[1]), top)  # both zero
    # a zero may carry a larger exponent than ``top``: its factor is capped at 2^1000 (the
    # value is 0 either way; only a gradient beyond 2^1000 through an exact zero is capped)
    shift_x, shift_y = (x[1] - top).clamp(max=1000.0), (y[1] - top).clamp(max=1000.0)
    return _normalise(_ldexp(x[0], shift_x) + _ldexp(y[0], shift_y), top)


def _ext_one_like(x: torch.Tensor) -> torch.Tensor:
    return torch.stack([torch.full_like(x[0], 0.5), torch.ones_like(x[1])])  # 1 = 0.5 * 2^1


def _ext_zero_like(x: torch.Tensor) -> torch.Tensor:
    return torch.zeros_like(x)  # 0 = 0 * 2^0


EXTENDED = Arithmetic(_ext_mul, _ext_add, _ext_one_like, _ext_zero_like)


def combine(first: tuple[Any, Any], second: tuple[Any, Any],
            arithmetic: Arithmetic = PLAIN) -> tuple[Any, Any]:
    r"""The associative operator of equation ``eq-g2a-combine``: apply ``first``, then
    ``second``.

    ``(a_1, b_1) \circ (a_2, b_2) = (a_1 a_2, a_2 b_1 + b_2)``, because
    ``a_2 (a_1 h + b_1) + b_2 = (a_1 a_2) h + (a_2 b_1 + b_2)``. Works on tensors, NumPy
    arrays, Python numbers and sympy symbols alike. The identity element is ``(1, 0)``.
    ``arithmetic`` selects the number system (:data:`PLAIN` or :data:`EXTENDED` pairs).
    """
    for pair, name in ((first, "first"), (second, "second")):
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise TypeError(f"{name} must be a pair (a, b), got {type(pair).__name__}")
    if not isinstance(arithmetic, Arithmetic):
        raise TypeError(f"arithmetic must be seqlearn.scan.PLAIN or EXTENDED (an "
                        f"Arithmetic), got {type(arithmetic).__name__} {arithmetic!r}")
    (a1, b1), (a2, b2) = first, second
    _check_operands({"first[0]": a1, "first[1]": b1, "second[0]": a2, "second[1]": b2})
    mul, add = arithmetic.mul, arithmetic.add
    return mul(a1, a2), add(mul(a2, b1), b2)


def _check_operands(operands: dict[str, Any]) -> None:
    """Array operands of :func:`combine` are of one kind (torch or NumPy) and one shape:
    broadcasting ``(H, 1)`` against ``(H,)`` would silently compose ``H * H`` maps."""
    for name, x in operands.items():
        if x is None or isinstance(x, (str, bytes)):
            raise TypeError(f"{name} must be a number, tensor or array, got "
                            f"{type(x).__name__}")
    arrays = {name: x for name, x in operands.items()
              if isinstance(x, (torch.Tensor, np.ndarray))}
    kinds = {type(x).__name__ for x in arrays.values()}
    if len(kinds) > 1:
        got = ", ".join(type(x).__name__ for x in arrays.values())
        raise TypeError(f"{', '.join(arrays)} must be all torch tensors or all NumPy "
                        f"arrays, got {got}")
    shapes = {tuple(x.shape) for x in arrays.values()}
    if len(shapes) > 1:
        got = ", ".join(str(tuple(x.shape)) for x in arrays.values())
        raise ValueError(f"{', '.join(arrays)} must have one shape (no broadcasting), "
                         f"got {got}")


def default_chunk(T: int) -> int:
    """Block length of the blocked scan: ``ceil(sqrt(T))`` (at least 2), balancing the two levels."""
    check_int(T, "T", 1)
    return max(2, math.isqrt(T - 1) + 1)


def _check_scan(a: Any, b: Any, h0: Any) -> dict:
    """Validate ``a, b (..., T, H)`` and ``h0 (..., H)`` or None: tensors of one float dtype."""
    if not isinstance(a, torch.Tensor) or not isinstance(b, torch.Tensor):
        raise TypeError(f"a and b must be torch.Tensor, got {type(a).__name__} and {type(b).__name__}")
    check_tensor(a, "a")
    check_tensor(b, "b")
    check_same_dtype("a", a, "b", b)
    dims = check_shape(a, "a", "... T H")
    if b.shape != a.shape:
        raise ValueError(f"b must have the same shape as a {tuple(a.shape)}, got {tuple(b.shape)}")
    if h0 is not None:
        if not isinstance(h0, torch.Tensor):
            raise TypeError(f"h0 must be a torch.Tensor or None, got {type(h0).__name__}")
        check_tensor(h0, "h0")
        check_same_dtype("a", a, "h0", h0)
        if h0.shape != a.shape[:-2] + a.shape[-1:]:
            want = tuple(dims["..."]) + (dims["H"],)
            raise ValueError(f"h0 must have shape (..., H) = {want}, got {tuple(h0.shape)}")
    return dims


def linear_scan(a: torch.Tensor, b: torch.Tensor, h0: torch.Tensor | None = None,
                method: str = "sequential", chunk: int | None = None) -> torch.Tensor:
    r"""All states of ``h_t = a_t * h_{t-1} + b_t`` for ``t = 0..T-1`` (``h_{-1} = h0``
    or 0).

    Args:
        a: ``(..., T, H)`` multiplicative coefficients (e.g. keep gates ``u_t``),
        finite. b: ``(..., T, H)`` additive inputs (e.g. ``(1 - u_t) * h~_t``), finite.
        h0: ``(..., H)`` initial state, or ``None`` for zeros. method: ``"sequential"``
        (the loop), ``"parallel"`` (blocked scan, fast),
            ``"hillis-steele"`` or ``"blelloch"`` (textbook scans, see the module
            docstring).
        chunk: block length of the ``"parallel"`` method (at least 2); by default
            ``ceil(sqrt(T))``: two levels, depth about ``3 sqrt(T)``.

    Returns:
        ``h``: ``(..., T, H)`` with ``h[..., t, :]`` the state after step ``t``. Every
        method gives the exact states for any finite real ``a`` and ``b`` (module
        docstring); ``T = 0`` gives an empty ``(..., 0, H)`` result.
    """
    return _linear_scan(a, b, h0, method, chunk, ("a", "b", "h0"))


def _linear_scan(a: torch.Tensor, b: torch.Tensor, h0: torch.Tensor | None, method: str,
                 chunk: int | None, names: tuple[str, str, str]) -> torch.Tensor:
    """:func:`linear_scan`, whose errors about NaN or infinity call ``a, b, h0`` by the
    caller's ``names`` (e.g. ``"(1 - u) * h_tilde"``): a wrapper's user passed those."""
    dims = _check_scan(a, b, h0)
    _check_method(method)
    _check_chunk(chunk)
    if dims["T"] == 0:
        # (..., 1, H) broadcasts to (..., 0, H)
        start = 0 if h0 is None else h0.unsqueeze(-2)
        # (..., 0, H), still connected to a, b and h0 for autograd
        return a * (b + start)
    # h_{-1} = 0 folded in as a state, so that h depends on a for every T
    if h0 is None:
        h0 = torch.zeros_like(b[..., 0, :])
    h = _run(a, b, h0, method, chunk or default_chunk(dims["T"]), PLAIN)
    # One reduction instead of a mask: a NaN or inf anywhere makes the sum non-finite.
    # (A sum of huge finite states can overflow too; that only sends them to the exact
    # stage below.)
    if bool(torch.isfinite(h.sum())):
        return h
    for x, name in zip((a, b, h0), names):  # inputs are checked only now: speed
        check_finite(x, name)
    method = "sequential" if method == "sequential" else "parallel"
    return ExtendedScan.apply(a, b, h0, method, chunk or default_chunk(dims["T"]))


def _check_method(method: Any) -> None:
    if not isinstance(method, str) or method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")


def _check_chunk(chunk: Any) -> None:
    if chunk is not None and (not isinstance(chunk, int) or isinstance(chunk, bool)
                              or chunk < 2):
        raise ValueError(f"chunk must be None or an int >= 2, got {chunk!r}")


class ExtendedScan(torch.autograd.Function):
    r"""Stage 2 of :func:`linear_scan`: the scan in extended-exponent arithmetic, exact
    backward.

    Backpropagating through the mantissas would multiply ``d h / d m = 2^e`` (huge) by
    ``d m / d a = 2^{-e}`` (tiny) only at the end, overflowing on the way. The adjoint
    of a linear recurrence is a linear recurrence backwards in time, so the backward
    pass is a scan too, exact by the same argument. With ``g_t = dL/dh_t`` and
    ``lambda_T = 0``:

    .. math::

        \lambda_t = g_t + a_{t+1} \lambda_{t+1}, \qquad
        \frac{\partial L}{\partial b_t} = \lambda_t, \qquad
        \frac{\partial L}{\partial a_t} = \lambda_t h_{t-1}, \qquad
        \frac{\partial L}{\partial h_{-1}} = a_0 \lambda_0.
    """

    @staticmethod
    def forward(ctx: Any, a: torch.Tensor, b: torch.Tensor, h0: torch.Tensor,
                method: str, chunk: int) -> torch.Tensor:
        if not isinstance(h0, torch.Tensor):
            raise TypeError("h0 must be a torch.Tensor (zeros for no initial state), "
                            f"got {type(h0).__name__}")
        _check_scan(a, b, h0)
        if method not in ("sequential", "parallel"):  # the two that take an arithmetic
            raise ValueError(f"method must be 'sequential' or 'parallel', got "
                             f"{method!r}")
        if chunk is None:
            raise ValueError("chunk must be an int >= 2, got None")
        _check_chunk(chunk)
        for x, name in ((a, "a"), (b, "b"), (h0, "h0")):
            check_finite(x, name)
        ctx.method, ctx.chunk = method, chunk
        if a.shape[-2] == 0:  # T = 0: no state
            ctx.save_for_backward(a, h0, a)
            return a.new_zeros(a.shape)
        # each (2, ...): no overflow, no inf * 0
        ext = [to_extended(x) for x in (a, b, h0)]
        h = from_extended(_run(*ext, method, chunk, EXTENDED), a.dtype)  # (..., T, H)
        ctx.save_for_backward(a, h0, h)
        return h

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[torch.Tensor | None, ...]:
        a, h0, h = ctx.saved_tensors
        if a.shape[-2] == 0:
            zero = torch.zeros_like(a)  # (..., 0, H)
            return zero, zero.clone(), torch.zeros_like(h0), None, None
        # a_{t+1}
        a_next = torch.cat([a[..., 1:, :], torch.ones_like(a[..., :1, :])], dim=-2)
        lam = linear_scan(a_next.flip(-2), grad.flip(-2), method=ctx.method,
                          # (..., T, H): lambda_t, backwards in time
                          chunk=ctx.chunk).flip(-2)
        # (..., T, H): h_{t-1}
        h_prev = torch.cat([h0.unsqueeze(-2), h[..., :-1, :]], dim=-2)
        # 0, not inf * 0, where h = 0
        grad_a = torch.where(h_prev == 0, 0.0, lam * h_prev)
        return grad_a, lam, a[..., 0, :] * lam[..., 0, :], None, None


def _run(a: torch.Tensor, b: torch.Tensor, h0: torch.Tensor, method: str, chunk: int,
         arithmetic: Arithmetic) -> torch.Tensor:
    if method == "sequential":
        return _sequential(a, b, h0, arithmetic)
    if method == "parallel":
        return _blocked(a, b, h0, chunk, arithmetic)
    # fold h_{-1} into the first step: b_0 <- a_0 h_{-1} + b_0
    b = torch.cat([a[..., :1, :] * h0.unsqueeze(-2) + b[..., :1, :], b[..., 1:, :]], dim=-2)
    return _hillis_steele(a, b) if method == "hillis-steele" else _blelloch(a, b)


def sequential_scan(a: torch.Tensor, b: torch.Tensor, h0: torch.Tensor | None = None
                    ) -> torch.Tensor:
    """The reference loop: ``h_t = a_t * h_{t-1} + b_t``, one step after the other (depth T).

    Same contract as ``linear_scan(a, b, h0, method="sequential")``.
    """
    return linear_scan(a, b, h0, method="sequential")


def _sequential(a: torch.Tensor, b: torch.Tensor, h0: torch.Tensor,
                arithmetic: Arithmetic = PLAIN) -> torch.Tensor:
    h = h0  # (..., H)
    states = []
    for a_t, b_t in zip(a.unbind(-2), b.unbind(-2)):  # each (..., H)
        h = arithmetic.add(arithmetic.mul(a_t, h), b_t)  # a_t h_{t-1} + b_t
        states.append(h)
    return torch.stack(states, dim=-2)  # (..., T, H)


def blocked_scan(a: torch.Tensor, b: torch.Tensor, h0: torch.Tensor | None = None,
                 chunk: int = 16) -> torch.Tensor:
    r"""Fast scan in three phases over blocks of ``chunk`` steps (reduce, scan the ends, re-scan).

    Cut the time axis into ``N`` blocks of ``C`` steps (padding with the identity ``(1, 0)``).

    1. **Reduce**: compose the ``C`` steps of every block into one affine map,
       ``(P_n, g_n) = e_{n,0} \circ \dots \circ e_{n,C-1}``: ``C`` vectorised rounds of
       :func:`combine`, all ``N`` blocks at once.
    2. **Scan the block ends**: the state after block ``n`` obeys ``c_n = P_n c_{n-1} + g_n``,
       ``c_{-1} = h_0``, a linear recurrence of length ``N``: solved by calling this function.
    3. **Re-scan**: run the loop inside all blocks at once, block ``n`` starting from ``c_{n-1}``.

    Work about ``2T``, depth ``2C`` plus that of the ``N`` block ends. Same contract as
    ``linear_scan(a, b, h0, method="parallel", chunk=chunk)``.
    """
    return linear_scan(a, b, h0, method="parallel", chunk=chunk)


def _blocked(a: torch.Tensor, b: torch.Tensor, h0: torch.Tensor, chunk: int,
             arithmetic: Arithmetic = PLAIN) -> torch.Tensor:
    T = a.shape[-2]
    if T <= chunk:
        return _sequential(a, b, h0, arithmetic)
    n_blocks = -(-T // chunk)
    pad = n_blocks * chunk - T
    if pad:  # identity steps (a=1, b=0) leave the state unchanged
        a = torch.cat([a, arithmetic.one_like(a[..., :pad, :])], dim=-2)
        b = torch.cat([b, arithmetic.zero_like(b[..., :pad, :])], dim=-2)
    blocks = a.shape[:-2] + (n_blocks, chunk, a.shape[-1])
    a, b = a.reshape(blocks), b.reshape(blocks)  # (..., N, C, H)
    block = (arithmetic.one_like(a[..., 0, :]), arithmetic.zero_like(b[..., 0, :]))  # (..., N, H)
    for step in zip(a.unbind(-2), b.unbind(-2)):  # 1. reduce: C rounds, all blocks at once
        block = combine(block, step, arithmetic)
    ends = _blocked(block[0], block[1], h0, chunk, arithmetic)  # 2. (..., N, H): after each block
    starts = torch.cat([h0.unsqueeze(-2), ends[..., :-1, :]], dim=-2)  # (..., N, H): before each
    h = _sequential(a, b, starts, arithmetic)  # 3. re-scan: (..., N, C, H)
    return h.reshape(h.shape[:-3] + (n_blocks * chunk, h.shape[-1]))[..., :T, :]  # (..., T, H)


def hillis_steele_scan(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    r"""Hillis–Steele (1986) inclusive scan with ``h_{-1} = 0``: depth ``ceil(log2 T)``, work ``T log T``.

    In round ``k`` (``d = 2^k``) every position ``t >= d`` replaces its pair by
    ``e_{t-d} \circ e_t``; after the round it holds the composition of the last ``2d`` steps.
    Same contract as ``linear_scan(a, b, method="hillis-steele")``.
    """
    return linear_scan(a, b, method="hillis-steele")


def _hillis_steele(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    T, d = a.shape[-2], 1
    while d < T:
        a_new, b_new = combine((a[..., :-d, :], b[..., :-d, :]), (a[..., d:, :], b[..., d:, :]))
        a = torch.cat([a[..., :d, :], a_new], dim=-2)  # (..., T, H)
        b = torch.cat([b[..., :d, :], b_new], dim=-2)  # (..., T, H)
        d *= 2
    return b


def blelloch_scan(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    r"""Blelloch (1990) work-efficient scan with ``h_{-1} = 0``: depth ``2 log2 T``, work ``O(T)``.

    Pad to a power of two with the identity ``(1, 0)``. The **up-sweep** builds a balanced tree:
    at level ``d`` the right node of every pair of neighbouring subtrees becomes
    ``left \circ right``. The **down-sweep** puts the identity at the root and walks back down:
    each left child receives its parent's prefix, each right child ``parent \circ left``. This
    leaves the *exclusive* prefix ``e_0 \circ \dots \circ e_{t-1}`` at ``t``; composing it with
    ``e_t`` gives ``h_t``. The operator is not commutative, so the order of operands matters.
    Same contract as ``linear_scan(a, b, method="blelloch")``.
    """
    return linear_scan(a, b, method="blelloch")


def _blelloch(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    T, H = a.shape[-2], a.shape[-1]
    n = 1 << (T - 1).bit_length()
    batch = a.shape[:-2]
    ea = torch.cat([a, a.new_ones(batch + (n - T, H))], dim=-2)  # (..., n, H)
    eb = torch.cat([b, b.new_zeros(batch + (n - T, H))], dim=-2)  # (..., n, H)
    levels = n.bit_length() - 1

    def node(span: int, k: int) -> tuple[torch.Tensor, torch.Tensor]:
        """Copies of element ``k`` of every group of ``span`` (copies keep autograd happy)."""
        va, vb = ea.view(batch + (n // span, span, H)), eb.view(batch + (n // span, span, H))
        return va[..., k, :].clone(), vb[..., k, :].clone()  # each (..., n / span, H)

    def store(span: int, k: int, pair: tuple[torch.Tensor, torch.Tensor]) -> None:
        ea.view(batch + (n // span, span, H))[..., k, :] = pair[0]
        eb.view(batch + (n // span, span, H))[..., k, :] = pair[1]

    for level in range(levels):  # up-sweep: right node <- left subtree o right subtree
        span = 2 << level
        store(span, span - 1, combine(node(span, span // 2 - 1), node(span, span - 1)))
    ea[..., -1, :], eb[..., -1, :] = 1, 0  # identity at the root
    for level in reversed(range(levels)):  # down-sweep: left <- parent, right <- parent o left
        span = 2 << level
        left, parent = node(span, span // 2 - 1), node(span, span - 1)
        store(span, span // 2 - 1, parent)
        store(span, span - 1, combine(parent, left))
    _, h = combine((ea[..., :T, :], eb[..., :T, :]), (a, b))  # exclusive prefix, then step t
    return h


def work_depth(T: int, method: str, chunk: int | None = None) -> tuple[int, int]:
    """Number of ``combine`` applications (work) and of dependent rounds (depth) of a
    scan of length ``T``.

    Counts follow the implementations above (a multiply-add step of the loop counts as
    one ``combine``): ``sequential`` (T, T); ``hillis-steele`` (sum over rounds of
    ``T - d``, ``ceil(log2 T)``); ``blelloch`` on the padded length ``n``
    (``2(n - 1) + n``, ``2 log2 n + 1``); ``parallel``: per level ``2 N C`` (reduce and
    re-scan) plus the work of the ``N`` block ends, depth ``2 C`` plus theirs (``chunk``
    defaults to ``ceil(sqrt(T))`` as in :func:`linear_scan`).
    """
    check_int(T, "T")
    _check_method(method)
    _check_chunk(chunk)
    if method == "sequential":
        return T, T
    if method == "hillis-steele":
        work, depth, d = 0, 0, 1
        while d < T:
            work, depth, d = work + T - d, depth + 1, 2 * d
        return work, depth
    if method == "blelloch":
        n = 1 << (T - 1).bit_length()
        return 2 * (n - 1) + n, 2 * (n.bit_length() - 1) + 1
    chunk = chunk or default_chunk(T)  # "parallel"
    if T <= chunk:
        return T, T
    n_blocks = -(-T // chunk)
    work, depth = work_depth(n_blocks, "parallel", chunk)
    return work + 2 * n_blocks * chunk, depth + 2 * chunk
