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
``blelloch`` are the textbook versions with logarithmic depth, kept readable for teaching. No
method divides by ``a`` or takes logarithms, so all of them are exact for any real ``a`` and
``b``: negative, zero, larger than one.
"""

from __future__ import annotations

import math
from typing import Any

import torch

from seqlearn.validate import check_floating, check_same_dtype, check_shape

METHODS = ("sequential", "parallel", "hillis-steele", "blelloch")


def combine(first: tuple[Any, Any], second: tuple[Any, Any]) -> tuple[Any, Any]:
    r"""The associative operator of equation ``eq-g2a-combine``: apply ``first``, then ``second``.

    ``(a_1, b_1) \circ (a_2, b_2) = (a_1 a_2, a_2 b_1 + b_2)``, because
    ``a_2 (a_1 h + b_1) + b_2 = (a_1 a_2) h + (a_2 b_1 + b_2)``. Works on tensors, NumPy arrays,
    Python numbers and sympy symbols alike. The identity element is ``(1, 0)``.
    """
    a1, b1 = first
    a2, b2 = second
    return a1 * a2, a2 * b1 + b2


def default_chunk(T: int) -> int:
    """Block length of the blocked scan: ``ceil(sqrt(T))`` (at least 2), balancing the two levels."""
    return max(2, math.isqrt(T - 1) + 1)


def linear_scan(a: torch.Tensor, b: torch.Tensor, h0: torch.Tensor | None = None,
                method: str = "sequential", chunk: int | None = None) -> torch.Tensor:
    r"""All states of ``h_t = a_t * h_{t-1} + b_t`` for ``t = 0..T-1`` (``h_{-1} = h0`` or 0).

    Args:
        a: ``(..., T, H)`` multiplicative coefficients (e.g. keep gates ``u_t``).
        b: ``(..., T, H)`` additive inputs (e.g. ``(1 - u_t) * h~_t``).
        h0: ``(..., H)`` initial state, or ``None`` for zeros.
        method: ``"sequential"`` (the loop), ``"parallel"`` (blocked scan, fast),
            ``"hillis-steele"`` or ``"blelloch"`` (textbook scans, see the module docstring).
        chunk: block length of the ``"parallel"`` method (at least 2); by default
            ``ceil(sqrt(T))``: two levels, depth about ``3 sqrt(T)``.

    Returns:
        ``h``: ``(..., T, H)`` with ``h[..., t, :]`` the state after step ``t``.
    """
    if not isinstance(a, torch.Tensor) or not isinstance(b, torch.Tensor):
        raise TypeError(f"a and b must be torch.Tensor, got {type(a).__name__} and {type(b).__name__}")
    check_floating(a, "a")
    check_floating(b, "b")
    check_same_dtype("a", a, "b", b)
    dims = check_shape(a, "a", "... T H")
    if b.shape != a.shape:
        raise ValueError(f"b must have the same shape as a {tuple(a.shape)}, got {tuple(b.shape)}")
    if h0 is not None:
        if not isinstance(h0, torch.Tensor):
            raise TypeError(f"h0 must be a torch.Tensor or None, got {type(h0).__name__}")
        check_floating(h0, "h0")
        check_same_dtype("a", a, "h0", h0)
        if h0.shape != a.shape[:-2] + a.shape[-1:]:
            want = tuple(dims["..."]) + (dims["H"],)
            raise ValueError(f"h0 must have shape (..., H) = {want}, got {tuple(h0.shape)}")
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    if chunk is not None and (not isinstance(chunk, int) or isinstance(chunk, bool) or chunk < 2):
        raise ValueError(f"chunk must be None or an int >= 2, got {chunk!r}")
    if dims["T"] == 0:
        return b.clone()
    if method == "sequential":
        return sequential_scan(a, b, h0)
    if method == "parallel":
        return blocked_scan(a, b, h0, chunk or default_chunk(dims["T"]))
    if h0 is not None:  # fold h_{-1} into the first step: b_0 <- a_0 h_{-1} + b_0
        b = torch.cat([(a[..., :1, :] * h0.unsqueeze(-2)) + b[..., :1, :], b[..., 1:, :]], dim=-2)
    if method == "hillis-steele":
        return hillis_steele_scan(a, b)
    return blelloch_scan(a, b)


def sequential_scan(a: torch.Tensor, b: torch.Tensor, h0: torch.Tensor | None = None) -> torch.Tensor:
    """The reference loop: ``h_t = a_t * h_{t-1} + b_t``, one step after the other (depth T)."""
    h = torch.zeros_like(b[..., 0, :]) if h0 is None else h0  # (..., H)
    states = []
    for a_t, b_t in zip(a.unbind(-2), b.unbind(-2)):  # each (..., H)
        h = a_t * h + b_t
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

    Work about ``2T``, depth ``2C`` plus that of the ``N`` block ends. Only products and sums,
    no division, so zeros and negative ``a`` are exact.
    """
    T = a.shape[-2]
    if T <= chunk:
        return sequential_scan(a, b, h0)
    n_blocks = -(-T // chunk)
    pad = n_blocks * chunk - T
    if pad:  # identity steps (a=1, b=0) leave the state unchanged
        a = torch.cat([a, a.new_ones(a.shape[:-2] + (pad, a.shape[-1]))], dim=-2)
        b = torch.cat([b, b.new_zeros(b.shape[:-2] + (pad, b.shape[-1]))], dim=-2)
    blocks = a.shape[:-2] + (n_blocks, chunk, a.shape[-1])
    a, b = a.reshape(blocks), b.reshape(blocks)  # (..., N, C, H)
    block = (torch.ones_like(a[..., 0, :]), torch.zeros_like(b[..., 0, :]))  # identity, (..., N, H)
    for step in zip(a.unbind(-2), b.unbind(-2)):  # 1. reduce: C rounds, all blocks at once
        block = combine(block, step)
    ends = blocked_scan(block[0], block[1], h0, chunk)  # 2. (..., N, H): state after each block
    first = torch.zeros_like(ends[..., :1, :]) if h0 is None else h0.unsqueeze(-2)  # (..., 1, H)
    starts = torch.cat([first, ends[..., :-1, :]], dim=-2)  # (..., N, H): state before each block
    h = sequential_scan(a, b, starts)  # 3. re-scan: (..., N, C, H)
    return h.reshape(h.shape[:-3] + (n_blocks * chunk, h.shape[-1]))[..., :T, :]  # (..., T, H)


def hillis_steele_scan(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    r"""Hillis–Steele (1986) inclusive scan with ``h_{-1} = 0``: depth ``ceil(log2 T)``, work ``T log T``.

    In round ``k`` (``d = 2^k``) every position ``t >= d`` replaces its pair by
    ``e_{t-d} \circ e_t``; after the round it holds the composition of the last ``2d`` steps.
    """
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
    """
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
    """Number of ``combine`` applications (work) and of dependent rounds (depth) of a scan of length ``T``.

    Counts follow the implementations above (a multiply-add step of the loop counts as one
    ``combine``): ``sequential`` (T, T); ``hillis-steele`` (sum over rounds of ``T - d``,
    ``ceil(log2 T)``); ``blelloch`` on the padded length ``n`` (``2(n - 1) + n``,
    ``2 log2 n + 1``); ``parallel``: per level ``2 N C`` (reduce and re-scan) plus the work of
    the ``N`` block ends, depth ``2 C`` plus theirs (``chunk`` defaults to ``ceil(sqrt(T))`` as
    in :func:`linear_scan`).
    """
    if not isinstance(T, int) or T < 1:
        raise ValueError(f"T must be a positive int, got {T!r}")
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
    if method == "parallel":
        chunk = chunk or default_chunk(T)
        if T <= chunk:
            return T, T
        n_blocks = -(-T // chunk)
        work, depth = work_depth(n_blocks, "parallel", chunk)
        return work + 2 * n_blocks * chunk, depth + 2 * chunk
    raise ValueError(f"method must be one of {METHODS}, got {method!r}")
