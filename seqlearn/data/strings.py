"""Reverse (or copy) a random string: a length task that a fixed-size code must fail.

Each pair is ``(source, target)`` with ``source`` a string of ``L`` symbols drawn uniformly and
independently from ``alphabet`` and ``target`` its reverse (``task="reverse"``) or itself
(``task="copy"``). ``L`` is drawn uniformly from ``min_len .. max_len`` (inclusive). A string of
``L`` independent symbols over ``K`` letters carries ``L log2 K`` bits, so an encoder that must
squeeze it into one vector of fixed size runs out of room as ``L`` grows: the bottleneck of the
chapter :doc:`seq2seq`.
"""

from __future__ import annotations

import string

import numpy as np

from seqlearn.validate import check_int, check_rng

LETTERS = string.ascii_lowercase
TASKS = ("reverse", "copy")


def string_pairs(n: int, rng: np.random.Generator, *, task: str = "reverse", min_len: int = 5,
                 max_len: int = 20, alphabet: str = LETTERS) -> list[tuple[str, str]]:
    """``n`` pairs ``(s, reversed(s))`` (or ``(s, s)``), deterministic given ``rng``.

    Defaults: lengths 5-20 over the 26 lowercase letters (the book's measured setting).
    """
    n = check_int(n, "n")
    check_rng(rng)
    if task not in TASKS:
        raise ValueError(f"task must be one of {TASKS}, got {task!r}")
    min_len = check_int(min_len, "min_len")
    max_len = check_int(max_len, "max_len", minimum=min_len)
    if not isinstance(alphabet, str):
        raise TypeError(f"alphabet must be a string of symbols, got {type(alphabet).__name__}")
    if len(alphabet) < 2 or len(set(alphabet)) != len(alphabet):
        raise ValueError(f"alphabet must hold at least two distinct symbols, got {alphabet!r}")
    lengths = rng.integers(min_len, max_len + 1, size=n)  # (n,)
    pairs = []
    for length in lengths.tolist():
        s = "".join(alphabet[i] for i in rng.integers(0, len(alphabet), size=length).tolist())
        pairs.append((s, s[::-1] if task == "reverse" else s))
    return pairs
