"""Balanced and unbalanced bracket strings: the counting task of the NYU notes (chapter :doc:`bptt`).

A stand-in for "is this C program's bracketing correct?". The alphabet is ``(``, ``)`` and a
filler ``x`` (any other character of the program). With ``c_k`` the running count of open
brackets after character ``k`` (``+1`` for ``(``, ``-1`` for ``)``, ``0`` for ``x``), a string is
**balanced** when ``c_k >= 0`` for every ``k`` and ``c_{T-1} = 0``; its **nesting depth** is
``max_k c_k``.

Balanced strings are drawn uniformly among all balanced strings with the requested number of
brackets and depth at most ``max_depth`` (a dynamic programme counts the completions). Unbalanced
strings are *hard negatives*: a balanced string with a minimal edit, so that only counting
tells them apart:

* ``"flip"`` turns one bracket into the other: the final count becomes ``+-2``;
* ``"swap"`` exchanges a ``(`` and a later ``)``: the numbers of ``(`` and ``)`` stay equal, but the
  running count drops below zero in between.

Both edits keep the length, the filler positions and the depth bound, and leave the first and the
last bracket alone (a string that starts with ``)`` or ends with ``(`` would give itself away
without any counting); only ``"()"`` itself has no other choice. When no swap exists (e.g. in
``"(())"``) a flip is made instead.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import torch

from seqlearn.validate import (check_bool, check_float_dtype, check_int, check_real,
                               check_rng)

VOCAB: tuple[str, ...] = ("(", ")", "x")
_STEP = {"(": 1, ")": -1, "x": 0}
KINDS = ("flip", "swap")


def running_count(s: str) -> np.ndarray:
    """``c (len(s),)``: open brackets minus closed brackets after each character."""
    _check_string(s)
    return np.cumsum([_STEP[ch] for ch in s], dtype=np.int64)


def nesting_depth(s: str) -> int:
    """The largest running count (0 for an empty or bracket-free string)."""
    return int(max(0, running_count(s).max(initial=0)))


def is_balanced(s: str) -> bool:
    """True when the running count never drops below zero and ends at zero."""
    c = running_count(s)
    return bool(len(c) == 0 or (c.min() >= 0 and c[-1] == 0))


# --------------------------------------------------------------------------- sampling

@lru_cache(maxsize=8)
def _open_probabilities(m: int, max_depth: int) -> np.ndarray:
    """``p[i, d]``: probability of ``(`` at step ``i`` and depth ``d`` (bounded depth).

    With ``N[i][d]`` the number of ways to finish a balanced word of ``m`` brackets from depth
    ``d`` at step ``i`` (``N[m][0] = 1``; ``N[i][d] = N[i+1][d+1] (if d < max_depth) +
    N[i+1][d-1] (if d > 0)``), ``p[i, d] = N[i+1][d+1] / N[i][d]``. The counts are exact
    Python integers, but only two rows live at a time: time ``O(m^2 max_depth / 64)`` word
    operations, memory ``8 m (max_depth + 1)`` bytes for the float table (cached, 8 tables).
    """
    p = np.zeros((m, max_depth + 1))
    below = [1] + [0] * (max_depth + 1)  # row N[i+1], starting with N[m]
    for i in range(m - 1, -1, -1):
        row = [0] * (max_depth + 2)
        for d in range(max_depth + 1):
            up = below[d + 1] if d < max_depth else 0
            row[d] = up + (below[d - 1] if d > 0 else 0)
            if up:
                p[i, d] = up / row[d]  # a correctly rounded ratio of exact integers
        below = row
    return p


def _p_open(i: int, d: int, m: int, max_depth: int) -> float:
    """Probability of ``(`` at step ``i`` and depth ``d`` for a uniform balanced word.

    Without an effective depth bound (``max_depth >= m / 2``) the count of completions is the
    ballot number ``N(n, d) = (d + 1) / (n - k + 1) * C(n, k)`` with ``n = m - i`` steps left
    and ``k = (n - d) / 2`` of them ``(``, so ``N(n - 1, d + 1) / N(n, d) = k (d + 2) /
    (n (d + 1))``: O(1) per step, no table (the same float as the table's exact ratio).
    """
    if max_depth >= m // 2:
        n = m - i
        return (n - d) // 2 * (d + 2) / (n * (d + 1))
    return float(_open_probabilities(m, max_depth)[i, d])


def _dyck_word(m: int, max_depth: int, rng: np.random.Generator) -> list[str]:
    """A uniformly random balanced word of ``m`` brackets with depth at most ``max_depth``."""
    word, d = [], 0
    for i in range(m):
        p_open = _p_open(i, d, m, max_depth) if d < max_depth else 0.0
        if rng.random() < p_open:
            word.append("(")
            d += 1
        else:
            word.append(")")
            d -= 1
    return word


def _layout(length: int, fill: float, max_depth: int | None) -> tuple[int, int]:
    """Number of brackets (even, >= 2) and the effective depth bound for a string of ``length``."""
    if not isinstance(length, (int, np.integer)) or isinstance(length, bool) or length < 2:
        raise ValueError(f"length must be an integer >= 2, got {length!r}")
    if not 0.0 <= check_real(fill, "fill") < 1.0:
        raise ValueError(f"fill must be in [0, 1), got {fill!r}")
    n_fill = int(round(fill * length))
    n_fill += (length - n_fill) % 2                      # an even number of brackets
    m = length - n_fill
    if m < 2:
        raise ValueError(f"length={length} with fill={fill} leaves fewer than 2 brackets")
    if fill == 0.0 and length % 2:
        raise ValueError(f"without filler the length must be even, got {length}")
    if max_depth is None:
        return m, m // 2
    if not isinstance(max_depth, (int, np.integer)) or isinstance(max_depth, bool) or max_depth < 1:
        raise ValueError(f"max_depth must be an integer >= 1 or None, got {max_depth!r}")
    return m, min(int(max_depth), m // 2)


def _with_filler(brackets: list[str], length: int, rng: np.random.Generator) -> str:
    chars = ["x"] * length
    slots = np.sort(rng.choice(length, size=len(brackets), replace=False))
    for k, ch in zip(slots, brackets):
        chars[k] = ch
    return "".join(chars)


def balanced_string(length: int, rng: np.random.Generator, *, max_depth: int | None = None,
                    fill: float = 0.0) -> str:
    """A balanced string of exactly ``length`` characters with nesting depth at most ``max_depth``.

    About a fraction ``fill`` of the characters are the filler ``x`` (rounded so that the number
    of brackets is even); the brackets form a uniformly random balanced word. Cost: O(length)
    without a depth bound below ``length / 2``, otherwise as stated in ``_open_probabilities``.
    """
    check_rng(rng)
    m, depth = _layout(length, fill, max_depth)
    word = _dyck_word(m, depth, rng)
    return _with_filler(word, length, rng) if m < length else "".join(word)


def hard_negative(s: str, rng: np.random.Generator, *, kind: str | None = None,
                  max_depth: int | None = None) -> str:
    """Make the balanced string ``s`` unbalanced with one minimal edit (``"flip"`` or
    ``"swap"``).

    ``kind=None`` picks one of the two at random. The result has the same length and
    filler positions, and its depth stays at most ``max_depth`` (default: the depth of
    ``s``).
    """
    check_rng(rng)
    if not is_balanced(s) or nesting_depth(s) == 0:
        raise ValueError(f"hard_negative needs a balanced string with brackets, got "
                         f"{s!r}")
    kind = KINDS[int(rng.integers(2))] if kind is None else kind
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS} or None, got {kind!r}")
    limit = nesting_depth(s) if max_depth is None else check_int(max_depth, "max_depth")
    if nesting_depth(s) > limit:
        raise ValueError(f"s has depth {nesting_depth(s)}, more than "
                         f"max_depth={max_depth}")
    pos = np.array([k for k, ch in enumerate(s) if ch != "x"])  # bracket positions
    b = np.array([_STEP[s[k]] for k in pos])                    # +1 / -1, m brackets
    # running count over brackets
    c = np.cumsum(b)
    # neither the first nor the last
    inner = np.arange(len(b)) % (len(b) - 1) != 0
    # "()": no inner bracket exists
    if len(b) == 2:
        inner[:] = True
    chars = list(s)
    swap = _swap_positions(b, c, inner, rng) if kind == "swap" else None
    if swap is not None:
        i, j = swap
        chars[pos[i]], chars[pos[j]] = ")", "("
    # a flip (or no swap exists)
    else:
        k = _flip_position(b, c, inner, limit, rng)
        chars[pos[k]] = ")" if b[k] == 1 else "("
    return "".join(chars)


def _swap_positions(b: np.ndarray, c: np.ndarray, inner: np.ndarray,
                    rng: np.random.Generator) -> tuple[int, int] | None:
    """Brackets ``i < j`` (``(`` and ``)``) whose exchange drives the count below zero, or None.

    Exchanging lowers ``c_i .. c_{j-1}`` by 2: pick a ``k`` with ``c_k <= 1`` (it turns
    negative), then an inner ``(`` at ``i <= k`` and an inner ``)`` at ``j > k``.
    """
    opens_upto = np.cumsum((b == 1) & inner) > 0                # an inner "(" at or before k
    closes_after = np.cumsum(((b == -1) & inner)[::-1])[::-1]
    closes_after = np.append(closes_after[1:], 0) > 0           # an inner ")" after k
    ks = np.flatnonzero((c <= 1) & opens_upto & closes_after)
    if len(ks) == 0:
        return None
    k = int(rng.choice(ks))
    i = int(rng.choice(np.flatnonzero((b[: k + 1] == 1) & inner[: k + 1])))
    j = k + 1 + int(rng.choice(np.flatnonzero((b[k + 1:] == -1) & inner[k + 1:])))
    return i, j


def _flip_position(b: np.ndarray, c: np.ndarray, inner: np.ndarray, limit: int,
                   rng: np.random.Generator) -> int:
    """An inner bracket to flip: ``(`` -> ``)`` lowers later counts by 2, ``)`` -> ``(`` raises
    them by 2 (allowed only while the count stays at most ``limit``)."""
    later_max = np.maximum.accumulate(c[::-1])[::-1]
    return int(rng.choice(np.flatnonzero(inner & ((b == 1) | (later_max + 2 <= limit)))))


def bracket_strings(n: int, length: int, rng: np.random.Generator, *, max_depth: int | None = None,
                    fill: float = 0.0, kind: str | None = None) -> tuple[list[str], np.ndarray]:
    """``n`` strings of ``length`` characters, half balanced (label 1) and half hard negatives (0).

    The order is shuffled; returns ``(strings, labels (n,))``.
    """
    check_rng(rng)
    if not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    if kind is not None and kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS} or None, got {kind!r}")
    labels = np.zeros(n, dtype=np.int64)
    labels[: n // 2 + n % 2 * int(rng.integers(2))] = 1         # half of n (an odd n: a coin)
    labels = rng.permutation(labels)
    strings = []
    for label in labels:
        s = balanced_string(length, rng, max_depth=max_depth, fill=fill)
        strings.append(s if label else hard_negative(s, rng, kind=kind, max_depth=max_depth))
    return strings, labels


# --------------------------------------------------------------------------- tensors

def _check_string(s: object) -> None:
    if not isinstance(s, str):
        raise TypeError(f"expected a string over {VOCAB}, got {type(s).__name__}")
    bad = set(s) - set(VOCAB)
    if bad:
        raise ValueError(f"string may only hold characters {VOCAB}, got {sorted(bad)}")


def encode_brackets(strings: list[str], *, onehot: bool = True,
                    dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """Equal-length strings -> one-hot ``(B, T, 3)`` of ``dtype``, or int64 indices
    ``(B, T)``.

    Index ``v`` stands for ``VOCAB[v]``: 0 = ``(``, 1 = ``)``, 2 = ``x``. Empty strings
    give ``T = 0``.
    """
    check_bool(onehot, "onehot")
    if not isinstance(dtype, torch.dtype):
        raise TypeError(f"dtype must be a torch.dtype, got {type(dtype).__name__}")
    check_float_dtype(dtype, "dtype")
    if (isinstance(strings, str) or not isinstance(strings, (list, tuple))
            or len(strings) == 0):
        raise ValueError("strings must be a non-empty list of strings")
    for s in strings:
        _check_string(s)
    lengths = {len(s) for s in strings}
    if len(lengths) != 1:
        raise ValueError(f"all strings must have the same length, got lengths "
                         f"{sorted(lengths)}")
    # (B, T), int64 (also for empty strings, T = 0, where torch would guess float32)
    index = torch.tensor([[VOCAB.index(ch) for ch in s] for s in strings],
                         dtype=torch.long).reshape(len(strings), lengths.pop())
    if not onehot:
        return index
    return torch.nn.functional.one_hot(index, len(VOCAB)).to(dtype)  # (B, T, 3)


def bracket_dataset(n: int, length: int, rng: np.random.Generator, *, max_depth: int | None = None,
                    fill: float = 0.0, kind: str | None = None, onehot: bool = True,
                    dtype: torch.dtype = torch.float32) -> tuple[torch.Tensor, torch.Tensor]:
    """Training tensors: ``x (n, length, 3)`` one-hot (or indices ``(n, length)``), ``labels (n,)``.

    Label 1 = balanced, 0 = unbalanced; see :func:`bracket_strings`.
    """
    strings, labels = bracket_strings(n, length, rng, max_depth=max_depth, fill=fill, kind=kind)
    return encode_brackets(strings, onehot=onehot, dtype=dtype), torch.from_numpy(labels)
