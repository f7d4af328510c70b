r"""Character n-gram language models: add-k smoothing and interpolated Kneser-Ney.

Chapter: *Language models on real text* (``chapters/language_model.ipynb``).

An n-gram model predicts a character from the ``n - 1`` characters before it, by
counting (book equation eq-lm-addk):

.. math::

    p(x_t = v \mid x_{t-n+1}, \dots, x_{t-1}) =
    \frac{C(x_{t-n+1} \dots x_{t-1}\, v) + k}{C(x_{t-n+1} \dots x_{t-1}) + k V},

where ``C(s)`` counts the occurrences of the string ``s`` as an n-gram (or, for a
context, as the first ``n - 1`` characters of one) in the training text, ``V`` is the
vocabulary size and ``k > 0`` the pseudo-count that every continuation receives
(``k = 1`` is Laplace's rule). An unseen context gets the uniform distribution
``1 / V``. The text is read as if preceded by ``n - 1`` copies of the character
``start`` (a newline in the book), so that the first characters have a context too.

Counts are stored as sorted integer codes, an n-gram ``s_1 .. s_n`` being the number
``sum_i s_i V^(n - i)`` written in base ``V``, with their counts beside them; a look-up
is a binary search (``numpy.searchsorted``).

:class:`KneserNeyModel` is the stronger classical baseline, interpolated Kneser-Ney
smoothing (Kneser and Ney 1995; the interpolated form of Chen and Goodman 1998/1999,
book equations eq-lm-kn and eq-lm-kn-continuation) with one absolute discount
``0 < D <= 1`` for every order. With ``h`` the ``m - 1`` characters before ``v`` and
``h'`` the last ``m - 2`` of them,

.. math::

    p_m(v \mid h) = \frac{\max(a_m(h v) - D, 0) + D\, N_{1+}(h\, \bullet)\,
    p_{m-1}(v \mid h')}{\sum_u a_m(h u)},

and ``p_m(v | h) = p_{m-1}(v | h')`` for a context never seen. ``a_n`` is the count
``C`` of the highest order; for a lower order ``a_m(g)`` is the *continuation count*
``N_{1+}(\bullet g)``, the number of different characters seen before the string ``g``.
``N_{1+}(h \bullet)`` is the number of different characters seen after ``h`` (with
``a_m > 0``), and the recursion ends in the uniform ``p_0(v) = 1 / V``. Each level sums
to 1 over the alphabet because every seen ``a_m`` is at least 1 and ``D <= 1``: the
discount takes exactly ``D`` from each of the ``N_{1+}(h \bullet)`` seen continuations
and gives it to the lower order.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import torch
from torch import Tensor

from seqlearn.validate import check_int, check_real, check_tensor

__all__ = ["NGramModel", "KneserNeyModel"]


def _as_ids(ids: object, name: str, vocab_size: int) -> np.ndarray:
    """A one-dimensional LongTensor of ids in ``[0, vocab_size)``, as an int64 array."""
    check_tensor(ids, name, floating=False)
    if ids.dtype != torch.long:
        raise TypeError(f"{name} must be a LongTensor of character ids, got dtype "
                        f"{ids.dtype}")
    if ids.dim() != 1:
        raise ValueError(f"{name} must have shape (N), got {tuple(ids.shape)}")
    if ids.numel() and (int(ids.min()) < 0 or int(ids.max()) >= vocab_size):
        raise ValueError(f"{name} must hold ids in [0, {vocab_size}), got min "
                         f"{int(ids.min())} and max {int(ids.max())}")
    return ids.numpy().astype(np.int64)


def _window_codes(ids: np.ndarray, n: int, order: int, V: int, start: int
                  ) -> np.ndarray:
    """The base-``V`` codes of the ``order`` characters ending at each ``ids[t]`` (N,),
    read from ``n - 1`` copies of ``start`` followed by ``ids``."""
    padded = np.concatenate([np.full(n - 1, start, dtype=np.int64), ids])
    offset = n - order  # the window of `order` characters ending at ids[t]
    code = np.zeros(len(ids), dtype=np.int64)
    for i in range(order):
        code = code * V + padded[offset + i: offset + i + len(ids)]
    return code  # (N,)


def _lookup(keys: np.ndarray, counts: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """The count of each code (0 for a code never seen); ``keys`` sorted."""
    if len(keys) == 0:
        return np.zeros(codes.shape, dtype=counts.dtype)
    pos = np.minimum(np.searchsorted(keys, codes), len(keys) - 1)
    return np.where(keys[pos] == codes, counts[pos], 0)


class NGramModel:
    """Counts of the n-grams of a training text and the add-k probabilities they give.

    ``NGramModel(n, vocab_size, k=1.0, start=0).fit(ids)`` counts; then
    ``count(context, v)`` is ``C(context v)`` (``count(context)`` is ``C(context)``),
    ``next_probabilities(ids)`` the distribution of the character after each position
    and ``log_likelihood(ids)`` the natural log-probability of each character after the
    first.
    """

    def __init__(self, n: int, vocab_size: int, *, k: float = 1.0,
                 start: int = 0) -> None:
        self.n = check_int(n, "n")
        self.vocab_size = check_int(vocab_size, "vocab_size")
        self.k = check_real(k, "k", positive=True)
        self.start = check_int(start, "start", minimum=0, maximum=vocab_size - 1)
        if n * math.log2(max(vocab_size, 2)) >= 62:
            raise ValueError(f"n={n} is too large for vocab_size={vocab_size}: the "
                             f"codes V^n must fit in 62 bits")
        self._grams: np.ndarray | None = None  # sorted codes of the n-grams seen
        self._gram_counts = np.zeros(0, dtype=np.int64)
        self._contexts = np.zeros(0, dtype=np.int64)  # sorted codes of the contexts
        self._context_counts = np.zeros(0, dtype=np.int64)

    def __repr__(self) -> str:
        return f"NGramModel(n={self.n}, vocab_size={self.vocab_size}, k={self.k})"

    def _codes(self, ids: np.ndarray, order: int) -> np.ndarray:
        """The codes of the ``order`` characters that end at each ``ids[t]`` (N,).

        They are read from the padded text, ``n - 1`` copies of ``start`` then ``ids``;
        ``order = 0`` gives zeros, the code of the empty context.
        """
        return _window_codes(ids, self.n, order, self.vocab_size, self.start)

    def fit(self, ids: Tensor) -> NGramModel:
        """Count every n-gram of the training text ``ids (N,)``; returns ``self``.

        One n-gram ends at each of the ``N`` characters (the first ones reach into the
        ``start`` padding).
        """
        data = _as_ids(ids, "ids", self.vocab_size)
        if data.size == 0:
            raise ValueError("ids must hold at least one character, got none")
        grams = self._codes(data, self.n)  # (N,): the n-gram ending at each character
        self._grams, self._gram_counts = np.unique(grams, return_counts=True)
        contexts = grams // self.vocab_size  # drop the last character: its context
        self._contexts, self._context_counts = np.unique(contexts, return_counts=True)
        return self

    def _check_fitted(self) -> None:
        if self._grams is None:
            raise ValueError("the model has no counts yet: call fit(ids) first")

    _lookup = staticmethod(_lookup)

    def count(self, context: Sequence[int], next_id: int | None = None) -> int:
        """``C(context next_id)``, or ``C(context)`` (n-grams that start with it) when
        ``next_id`` is None. ``context`` holds exactly ``n - 1`` ids."""
        self._check_fitted()
        if (isinstance(context, (str, bytes))
                or not isinstance(context, (Sequence, Tensor))):
            raise TypeError(f"context must be a sequence of {self.n - 1} ids, got "
                            f"{type(context).__name__}")
        values = context.tolist() if isinstance(context, Tensor) else context
        context = [check_int(c, "context[i]", 0, self.vocab_size - 1) for c in values]
        if len(context) != self.n - 1:
            raise ValueError(f"context must hold n - 1 = {self.n - 1} ids, got "
                             f"{len(context)}")
        code = 0
        for c in context:
            code = code * self.vocab_size + c
        if next_id is None:
            found = self._lookup(self._contexts, self._context_counts, np.array([code]))
            return int(found[0])
        check_int(next_id, "next_id", 0, self.vocab_size - 1)
        code = code * self.vocab_size + int(next_id)
        return int(self._lookup(self._grams, self._gram_counts, np.array([code]))[0])

    def next_probabilities(self, ids: Tensor) -> Tensor:
        """``P (N, V)`` float64: row ``t`` is eq-lm-addk's distribution of the character
        after ``ids[t]``, given the ``n - 1`` characters ending at ``ids[t]``. Each row
        sums to 1; ``P[t, ids[t + 1]]`` is the probability of the next character."""
        self._check_fitted()
        data = _as_ids(ids, "ids", self.vocab_size)
        V = self.vocab_size
        # context of the character after ids[t]: the n - 1 characters ending at ids[t]
        contexts = (self._codes(data, self.n - 1) if self.n > 1
                    else np.zeros(len(data), dtype=np.int64))  # (N,)
        joint = self._lookup(self._grams, self._gram_counts,
                             contexts[:, None] * V + np.arange(V))  # (N, V): C(c v)
        total = self._lookup(self._contexts, self._context_counts, contexts)  # C(c)
        return torch.from_numpy((joint + self.k) / (total[:, None] + self.k * V))

    def log_likelihood(self, ids: Tensor) -> Tensor:
        """``log p(ids[t] | the n - 1 characters before it)`` for ``t = 1 .. N - 1``:
        a float64 tensor ``(N - 1,)`` in nats (the first character has no target role,
        as in the neural models' ``y = x`` shifted by one)."""
        self._check_fitted()
        data = _as_ids(ids, "ids", self.vocab_size)
        if data.size < 2:
            raise ValueError(f"ids must hold at least 2 characters, got {data.size}")
        V = self.vocab_size
        grams = self._codes(data, self.n)[1:]  # (N - 1,): the n-gram ending at ids[t]
        joint = self._lookup(self._grams, self._gram_counts, grams)
        total = self._lookup(self._contexts, self._context_counts, grams // V)
        return torch.from_numpy(np.log((joint + self.k) / (total + self.k * V)))


class KneserNeyModel:
    """Interpolated Kneser-Ney smoothing of order ``n`` with one discount ``D``.

    ``KneserNeyModel(n, vocab_size, discount=0.75, start=0).fit(ids)`` counts; then
    ``next_probabilities(ids)`` is the distribution of the character after each position
    (each row sums to 1) and ``log_likelihood(ids)`` the natural log-probability of each
    character after the first, as for :class:`NGramModel`. ``discount`` lies in
    ``(0, 1]`` and may be changed after ``fit`` (the counts do not depend on it).
    """

    def __init__(self, n: int, vocab_size: int, *, discount: float = 0.75,
                 start: int = 0) -> None:
        self.n = check_int(n, "n")
        self.vocab_size = check_int(vocab_size, "vocab_size")
        self.discount = discount
        self.start = check_int(start, "start", minimum=0, maximum=vocab_size - 1)
        if n * math.log2(max(vocab_size, 2)) >= 62:
            raise ValueError(f"n={n} is too large for vocab_size={vocab_size}: the "
                             f"codes V^n must fit in 62 bits")
        # per order m = 1 .. n: sorted m-gram codes with a_m, and sorted context codes
        # with sum_u a_m(h u) and N1+(h .)
        self._levels: list[tuple[np.ndarray, ...]] | None = None

    @property
    def discount(self) -> float:
        return self._discount

    @discount.setter
    def discount(self, value: float) -> None:
        value = check_real(value, "discount", positive=True)
        if value > 1:
            raise ValueError(f"discount must be at most 1 (else the distribution no "
                             f"longer sums to 1), got {value}")
        self._discount = value

    def __repr__(self) -> str:
        return (f"KneserNeyModel(n={self.n}, vocab_size={self.vocab_size}, "
                f"discount={self.discount})")

    def fit(self, ids: Tensor) -> KneserNeyModel:
        """Count the training text ``ids (N,)``: the n-grams, and for every lower order
        the number of different characters before each string; returns ``self``."""
        data = _as_ids(ids, "ids", self.vocab_size)
        if data.size == 0:
            raise ValueError("ids must hold at least one character, got none")
        V = self.vocab_size
        levels = []
        for m in range(1, self.n + 1):
            if m == self.n:  # the highest order: plain counts C(g)
                grams, counts = np.unique(
                    _window_codes(data, self.n, m, V, self.start), return_counts=True)
            else:  # N1+(. g): distinct (m + 1)-grams, grouped by their last m characters
                longer = np.unique(_window_codes(data, self.n, m + 1, V, self.start))
                grams, counts = np.unique(longer % V ** m, return_counts=True)
            contexts, first = np.unique(grams // V, return_index=True)
            totals = np.add.reduceat(counts, first)  # sum_u a_m(h u)
            types = np.diff(np.append(first, len(grams)))  # N1+(h .)
            levels.append((grams, counts, contexts, totals, types))
        self._levels = levels
        return self

    def _check_fitted(self) -> None:
        if self._levels is None:
            raise ValueError("the model has no counts yet: call fit(ids) first")

    def _probabilities(self, data: np.ndarray, targets: np.ndarray) -> np.ndarray:
        """``p_n(targets[t, j] | the n - 1 characters ending at data[t])``, shape of
        ``targets`` (N, J), by the recursion over the orders."""
        V, D = self.vocab_size, self.discount
        p = np.full(targets.shape, 1.0 / V)  # p_0, the uniform distribution
        for m, (grams, counts, contexts, totals, types) in enumerate(self._levels, 1):
            h = (_window_codes(data, self.n, m - 1, V, self.start) if m > 1
                 else np.zeros(len(data), dtype=np.int64))  # (N,) the m - 1 characters
            a = _lookup(grams, counts, h[:, None] * V + targets)  # (N, J)
            total = _lookup(contexts, totals, h)[:, None]  # (N, 1)
            kinds = _lookup(contexts, types, h)[:, None]
            seen = total > 0
            p = np.where(seen, (np.maximum(a - D, 0) + D * kinds * p)
                         / np.where(seen, total, 1), p)
        return p

    def next_probabilities(self, ids: Tensor) -> Tensor:
        """``P (N, V)`` float64: row ``t`` is the distribution of the character after
        ``ids[t]`` given the ``n - 1`` characters ending at ``ids[t]``."""
        self._check_fitted()
        data = _as_ids(ids, "ids", self.vocab_size)
        targets = np.broadcast_to(np.arange(self.vocab_size), (len(data),
                                                                self.vocab_size))
        return torch.from_numpy(self._probabilities(data, targets))

    def log_likelihood(self, ids: Tensor) -> Tensor:
        """``log p(ids[t] | the n - 1 characters before it)`` for ``t = 1 .. N - 1``, a
        float64 tensor ``(N - 1,)`` in nats."""
        self._check_fitted()
        data = _as_ids(ids, "ids", self.vocab_size)
        if data.size < 2:
            raise ValueError(f"ids must hold at least 2 characters, got {data.size}")
        p = self._probabilities(data[:-1], data[1:, None])[:, 0]
        return torch.from_numpy(np.log(p))
