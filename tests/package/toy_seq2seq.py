"""The toy encoder-decoder setting that the tests of seqlearn.seq2seq, seqlearn.losses
and seqlearn.train share: sources over "abcde", targets over "xyz", small float64
models."""

import numpy as np
import torch

from seqlearn.data import Seq2SeqBatch, Vocab, seq2seq_batch
from seqlearn.seq2seq import Seq2Seq

SRC, TGT = Vocab("abcde"), Vocab("xyz")


def toy_model(*args, hidden: int = 4, **kwargs) -> Seq2Seq:
    """A seeded float64 ``Seq2Seq(SRC, TGT, hidden, embedding=3, ...)``.

    The positional arguments are ``score, bidirectional, init, seed`` (seed 0 by
    default); only the arguments given reach the model, so its own defaults hold.
    """
    kwargs |= dict(zip(("score", "bidirectional", "init", "seed"), args))
    torch.manual_seed(kwargs.pop("seed", 0))
    return Seq2Seq(SRC, TGT, hidden, embedding=3, **kwargs).double()


def toy_batch(seed: int = 0, B: int = 3, **widths) -> Seq2SeqBatch:
    """``B`` random pairs of 1 to 5 source letters and 0 to 4 target letters."""
    rng = np.random.default_rng(seed)
    pairs = [("".join(rng.choice(list("abcde"), rng.integers(1, 6))),
              "".join(rng.choice(list("xyz"), rng.integers(0, 5)))) for _ in range(B)]
    return seq2seq_batch(pairs, SRC, TGT, **widths)
