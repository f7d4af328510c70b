"""Delayed recall (a copy task with one symbol): how long does a network keep a piece of information?

Each sequence shows a *symbol* at step 0, then ``delay`` *distractors*, then a *cue*; the label
is the symbol. A classifier that reads only the output at the cue must carry the symbol across
``delay`` steps of noise. The task isolates memory (the NYU notes' claim that an LSTM keeps
information for "about 20 words" is tested on it in the chapter :doc:`lstm`)::

    t:      0     1 .. delay          delay + 1
    token:  s     d_1 .. d_delay      CUE             label = s,  T = delay + 2

Token indices: symbols ``0 .. K-1``, distractors ``K .. K+M-1`` (drawn uniformly and
independently), the cue ``K+M``; the vocabulary has ``V = K + M + 1`` tokens. Symbols are drawn
uniformly, so chance accuracy is ``1/K``.
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np
import torch

from seqlearn.validate import check_bool, check_float_dtype, check_rng


Batch = tuple[torch.Tensor, torch.Tensor]


def _check_int(value: object, name: str, low: int) -> int:
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < low:
        raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    if value >= 2**63:  # beyond int64, NumPy's sizes and ids
        raise ValueError(f"{name} must be less than 2**63, got {value!r}")
    return int(value)


def recall_vocab_size(num_symbols: int = 4, num_distractors: int = 3) -> int:
    """``V = K + M + 1``: symbols, distractors and the cue."""
    return _check_int(num_symbols, "num_symbols", 2) + _check_int(num_distractors, "num_distractors", 1) + 1


def recall_tokens(n: int, delay: int, rng: np.random.Generator, *, num_symbols: int = 4,
                  num_distractors: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """Token indices ``(n, delay + 2)`` (int64) and labels ``(n,)``: the symbol shown at step 0."""
    check_rng(rng)
    n, delay = _check_int(n, "n", 1), _check_int(delay, "delay", 0)
    K = _check_int(num_symbols, "num_symbols", 2)
    M = _check_int(num_distractors, "num_distractors", 1)
    labels = rng.integers(0, K, size=n)  # (n,)
    tokens = np.empty((n, delay + 2), dtype=np.int64)  # (n, T)
    tokens[:, 0] = labels
    tokens[:, 1:-1] = rng.integers(K, K + M, size=(n, delay))
    tokens[:, -1] = K + M  # the cue
    return tokens, labels.astype(np.int64)


def recall_dataset(n: int, delay: int, rng: np.random.Generator, *, num_symbols: int = 4,
                   num_distractors: int = 3, onehot: bool = True,
                   dtype: torch.dtype = torch.float32) -> Batch:
    """Tensors for training: ``x (n, delay + 2, V)`` one-hot (or ``(n, delay + 2)``
    indices), ``labels (n,)``.

    ``dtype``: the floating dtype of the one-hot ``x`` (checked with ``onehot=False``
    too).
    """
    check_float_dtype(dtype, "dtype")
    check_bool(onehot, "onehot")
    tokens, labels = recall_tokens(n, delay, rng, num_symbols=num_symbols,
                                   num_distractors=num_distractors)
    index = torch.from_numpy(tokens)  # (n, T)
    if onehot:
        V = recall_vocab_size(num_symbols, num_distractors)
        index = torch.nn.functional.one_hot(index, V).to(dtype)  # (n, T, V)
    return index, torch.from_numpy(labels)


def recall_batches(batch_size: int, delays: Sequence[int], rng: np.random.Generator, *,
                   num_symbols: int = 4, num_distractors: int = 3,
                   dtype: torch.dtype = torch.float32) -> Callable[[int], Batch]:
    """A stream of fresh batches for :func:`seqlearn.train.fit`:
    ``batches(step) -> (x, labels)``.

    Each call draws a new batch of ``batch_size`` sequences whose delay is drawn
    uniformly from ``delays`` (one delay per batch, so a batch is one tensor). All
    randomness comes from ``rng``, so the stream is reproducible; ``step`` is accepted
    for ``fit``'s contract and not used.
    """
    check_rng(rng)
    batch_size = _check_int(batch_size, "batch_size", 1)
    if (isinstance(delays, (str, bytes))
            or not isinstance(delays, (Sequence, np.ndarray)) or len(delays) == 0):
        raise ValueError(f"delays must be a non-empty sequence of integers, got "
                         f"{delays!r}")
    for k, d in enumerate(delays):
        try:
            _check_int(d, "every delay", 0)
        except ValueError as error:
            raise ValueError(f"{error} (delays[{k}])") from None
    delays = [int(d) for d in delays]
    # validates K, M and dtype now, not at the first step
    recall_vocab_size(num_symbols, num_distractors)
    check_float_dtype(dtype, "dtype")

    def batches(step: int) -> Batch:
        delay = delays[int(rng.integers(len(delays)))]
        return recall_dataset(batch_size, delay, rng, num_symbols=num_symbols,
                              num_distractors=num_distractors, dtype=dtype)

    return batches
