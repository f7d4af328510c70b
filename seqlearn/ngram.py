r"""The character n-gram language model with add-k smoothing: a counting baseline.

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
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import torch
from torch import Tensor

from seqlearn.validate import check_int, check_real, check_tensor

__all__ = ["NGramModel"]


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
        padded = np.concatenate([np.full(self.n - 1, self.start, dtype=np.int64), ids])
        offset = self.n - order  # the window of `order` characters ending at ids[t]
        code = np.zeros(len(ids), dtype=np.int64)
        for i in range(order):
            code = code * self.vocab_size + padded[offset + i: offset + i + len(ids)]
        return code  # (N,)

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

    @staticmethod
    def _lookup(keys: np.ndarray, counts: np.ndarray, codes: np.ndarray) -> np.ndarray:
        """The count of each code (0 for a code never seen)."""
        pos = np.minimum(np.searchsorted(keys, codes), len(keys) - 1)
        return np.where(keys[pos] == codes, counts[pos], 0)

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
