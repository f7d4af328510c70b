"""Indexed recall of ``k`` symbols: how many items can a fixed-size state hold at once?

The capacity variant of the delayed recall task (:mod:`seqlearn.data.recall`, chapter
:doc:`lstm`). Each sequence shows ``k`` *symbols*, then ``delay`` *distractors*, then one *cue*
that names a position ``j``; the label is the symbol shown at position ``j``::

    t:      0 .. k-1          k .. k+delay-1        k + delay
    token:  s_0 .. s_{k-1}    d_1 .. d_delay        CUE_j          label = s_j,  T = k + delay + 1

The queried position is drawn uniformly, so a network that reads only the output at the cue must
keep all ``k`` symbols (``k log2 K`` bits) across the delay. With ``k = 1`` this is the recall
task (one cue, label = the symbol at step 0).

Token indices: symbols ``0 .. K-1``, distractors ``K .. K+M-1``, cues ``K+M .. K+M+k-1``
(``CUE_j = K + M + j``); the vocabulary has ``V = K + M + k`` tokens. Symbols, distractors and
the queried position are drawn uniformly and independently, so chance accuracy is ``1/K``.
"""

from __future__ import annotations

import numpy as np
import torch

from seqlearn.validate import check_bool, check_float_dtype, check_int, check_rng

__all__ = ["multi_recall_vocab_size", "multi_recall_dataset"]


def multi_recall_vocab_size(num_items: int, num_symbols: int = 4, num_distractors: int = 3) -> int:
    """``V = K + M + k``: ``K`` symbols, ``M`` distractors and one cue per position."""
    k = check_int(num_items, "num_items", 1)
    K = check_int(num_symbols, "num_symbols", 2)
    M = check_int(num_distractors, "num_distractors", 1)
    return K + M + k


def multi_recall_dataset(n: int, num_items: int, delay: int, rng: np.random.Generator, *,
                         num_symbols: int = 4, num_distractors: int = 3, onehot: bool = True,
                         dtype: torch.dtype = torch.float32) -> tuple[torch.Tensor, torch.Tensor]:
    """``n`` sequences of length ``k + delay + 1``: ``x`` one-hot ``(n, T, V)`` (or token
    indices ``(n, T)`` when ``onehot=False``) and ``labels (n,)``, the symbol at the cued position.
    ``dtype``: the floating dtype of the one-hot ``x`` (checked with ``onehot=False``
    too).
    """
    check_rng(rng)
    check_float_dtype(dtype, "dtype")
    n = check_int(n, "n", 1)
    delay = check_int(delay, "delay", 0)
    V = multi_recall_vocab_size(num_items, num_symbols, num_distractors)
    check_bool(onehot, "onehot")
    k, K, M = int(num_items), int(num_symbols), int(num_distractors)
    symbols = rng.integers(0, K, size=(n, k))                      # (n, k)
    query = rng.integers(0, k, size=n)                             # (n,) the cued position j
    tokens = np.empty((n, k + delay + 1), dtype=np.int64)          # (n, T)
    tokens[:, :k] = symbols
    tokens[:, k:k + delay] = rng.integers(K, K + M, size=(n, delay))
    tokens[:, -1] = K + M + query                                  # CUE_j
    labels = torch.from_numpy(symbols[np.arange(n), query].astype(np.int64))  # (n,)
    index = torch.from_numpy(tokens)
    if onehot:
        index = torch.nn.functional.one_hot(index, V).to(dtype)   # (n, T, V)
    return index, labels
