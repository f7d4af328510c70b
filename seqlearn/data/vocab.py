"""Tokens to integer ids and back, and padded batches for sequence-to-sequence models.

A :class:`Vocab` numbers its special tokens first (``<pad> = 0``, ``<bos> = 1``, ``<eos> = 2``
by default) and the ordinary tokens after them. :func:`pad_batch` turns sequences of ids of
different lengths into one rectangular ``LongTensor`` with their lengths and a boolean mask
(**True = a real token**, the convention of :func:`seqlearn.attention.padding_mask`), and
:func:`seq2seq_batch` builds the four tensors a teacher-forced decoder needs from
``(source, target)`` string pairs::

    target "abc" -> tgt_in  = <bos> a b c          (what the decoder reads)
                    tgt_out =       a b c <eos>    (what it must predict, one step ahead)
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

import numpy as np
import torch

from seqlearn.validate import check_int


class Vocab:
    """A bijection between tokens (usually characters) and ids ``0 .. len(v) - 1``.

    ``specials`` are the padding, begin- and end-of-sequence tokens, in that order, and
    take the ids ``0, 1, 2``; ``tokens`` follow in the order given. ``encode`` adds no
    special token; ``decode`` drops every special token and joins the rest without a
    separator (the book's tasks are character level).
    """

    def __init__(self, tokens: Iterable[str], *,
                 specials: Sequence[str] = ("<pad>", "<bos>", "<eos>")) -> None:
        if isinstance(tokens, (str, bytes)):
            tokens = list(tokens)  # a string is read as its characters
        if not isinstance(tokens, Iterable):
            raise TypeError(f"tokens must be an iterable of strings, got "
                            f"{type(tokens).__name__}")
        tokens = list(tokens)
        if isinstance(specials, (str, bytes)) or not isinstance(specials, Sequence):
            raise TypeError("specials must be a sequence of three strings (pad, bos, "
                            f"eos), got {type(specials).__name__}")
        if len(specials) != 3:
            raise ValueError(f"specials must name three tokens (pad, bos, eos), got "
                             f"{len(specials)}")
        itos = [*specials, *tokens]
        for token in itos:
            if not isinstance(token, str) or not token:
                raise TypeError(f"tokens and specials must be non-empty strings, got "
                                f"{token!r}")
        if len(set(itos)) != len(itos):
            repeated = sorted({t for t in itos if itos.count(t) > 1})
            raise ValueError(f"tokens and specials must be distinct, repeated: "
                             f"{repeated}")
        self.itos: tuple[str, ...] = tuple(itos)
        self.stoi: dict[str, int] = {t: i for i, t in enumerate(itos)}
        self.specials: tuple[str, ...] = tuple(specials)
        self.pad, self.bos, self.eos = 0, 1, 2

    def __len__(self) -> int:
        return len(self.itos)

    def __repr__(self) -> str:
        return f"Vocab({len(self.itos) - 3} tokens + specials {self.specials})"

    def __contains__(self, token: object) -> bool:
        return token in self.stoi

    def encode(self, tokens: str | Sequence[str]) -> list[int]:
        """Ids of ``tokens`` (a string is split into characters); no special token is added."""
        if not isinstance(tokens, (str, Sequence)):
            raise TypeError(f"tokens must be a string or a list of strings, got {type(tokens).__name__}")
        ids = []
        for token in tokens:
            if token not in self.stoi:
                raise ValueError(f"token {token!r} is not in the vocabulary")
            ids.append(self.stoi[token])
        return ids

    def decode(self, ids: Iterable[int] | torch.Tensor | np.ndarray) -> str:
        """The string of the ordinary tokens among ``ids`` (special tokens dropped)."""
        if isinstance(ids, (torch.Tensor, np.ndarray)):
            if ids.ndim != 1:
                raise ValueError(f"ids must be one-dimensional, got shape "
                                 f"{tuple(ids.shape)}")
            if isinstance(ids, torch.Tensor) and (ids.is_floating_point()
                                                  or ids.dtype == torch.bool):
                raise TypeError(f"ids must hold integers, got dtype {ids.dtype}")
            if isinstance(ids, np.ndarray) and not np.issubdtype(ids.dtype, np.integer):
                raise TypeError(f"ids must hold integers, got dtype {ids.dtype}")
            ids = ids.tolist()
        elif isinstance(ids, (str, bytes)) or not isinstance(ids, Iterable):
            raise TypeError(f"ids must be a list, tensor or array of int ids, got "
                            f"{type(ids).__name__}")
        out = []
        for k, i in enumerate(ids):
            check_int(i, f"ids[{k}]", minimum=0, maximum=len(self.itos) - 1)
            if i >= len(self.specials):
                out.append(self.itos[i])
        return "".join(out)


def vocab_size(vocab: Vocab | int, name: str = "vocab", minimum: int = 1) -> int:
    """The number of ids of ``vocab``: ``len(vocab)`` of a :class:`Vocab`, or an int
    itself.

    Every model that embeds tokens takes either (``Transformer``, ``Seq2Seq``,
    ``MemN2N``, ``LastStepReader``); ``name`` and ``minimum`` (the smallest size the
    model can use) go into the errors.
    """
    check_int(minimum, "minimum", minimum=0)
    if isinstance(vocab, Vocab):
        if len(vocab) < minimum:
            raise ValueError(f"{name} must have at least {minimum} tokens, got "
                             f"{len(vocab)}")
        return len(vocab)
    if not isinstance(vocab, (int, np.integer)) or isinstance(vocab, (bool, np.bool_)):
        raise TypeError(f"{name} must be an int (the vocabulary's size) or a "
                        f"seqlearn.data.Vocab, got {type(vocab).__name__}")
    return check_int(vocab, name, minimum=minimum)


INT64_MAX = 2**63 - 1


def _check_wide_ids(ids: list, k: int) -> None:
    """Python ids that NumPy stored as uint64, float or object (2**63 and up, or such a
    number next to a negative one): ``ValueError`` outside int64, which would wrap."""
    if not all(isinstance(i, (int, np.integer)) and not isinstance(i, bool)
               for i in ids):
        return  # not all ints: the type check below names sequences[k]
    for i in ids:
        if not 0 <= int(i) <= INT64_MAX:
            raise ValueError(f"ids must be in [0, 2**63 - 1] (int64), got {int(i)} in "
                             f"sequences[{k}]")


class PaddedBatch(NamedTuple):
    """``tokens (B, T)`` long, ``lengths (B,)`` long, ``mask (B, T)`` bool (True = token)."""

    tokens: torch.Tensor
    lengths: torch.Tensor
    mask: torch.Tensor


def pad_batch(sequences: Sequence[Sequence[int]], pad: int, *, width: int | None = None
              ) -> PaddedBatch:
    """Stack id sequences of different lengths into one tensor, filling with ``pad``.

    ``T = max(lengths)`` unless ``width`` asks for more columns (extra padding, which a
    model must ignore). ``mask[b, t] = t < lengths[b]``.
    """
    if isinstance(sequences, (str, bytes)) or not isinstance(sequences, Sequence):
        raise TypeError(f"sequences must be a list of id lists, got "
                        f"{type(sequences).__name__}")
    if len(sequences) == 0:
        raise ValueError("sequences must hold at least one sequence, got none")
    check_int(pad, "pad", minimum=0, maximum=INT64_MAX)
    rows = []
    for k, seq in enumerate(sequences):
        if (isinstance(seq, (str, bytes))
                or not isinstance(seq, (Sequence, np.ndarray, torch.Tensor))):
            raise TypeError(f"sequences[{k}] must be a list of int ids, got "
                            f"{type(seq).__name__}")
        row = np.asarray(seq.tolist() if isinstance(seq, torch.Tensor) else seq)
        if row.ndim == 1 and row.dtype.kind in "uO" or (
                row.dtype.kind == "f" and not isinstance(seq, np.ndarray)):
            # ids 2**63 and up would wrap to negative
            _check_wide_ids(row.tolist() if isinstance(seq, np.ndarray) else list(seq),
                            k)
        if row.size and (row.ndim != 1 or not np.issubdtype(row.dtype, np.integer)
                         or row.dtype == np.bool_):
            raise TypeError(f"sequences[{k}] must be a flat list of int ids, got "
                            f"{seq!r}")
        if row.size and row.min() < 0:
            raise ValueError(f"ids must be at least 0, got {int(row.min())} in "
                             f"sequences[{k}]")
        rows.append(row.astype(np.int64).reshape(-1))
    lengths = torch.tensor([len(r) for r in rows], dtype=torch.long)  # (B,)
    T = int(lengths.max())
    if width is not None:
        T = check_int(width, "width", minimum=T)
    mask = torch.arange(T) < lengths[:, None]  # (B, T)
    tokens = torch.full((len(rows), T), pad, dtype=torch.long)  # (B, T)
    if int(lengths.sum()):
        tokens[mask] = torch.from_numpy(np.concatenate(rows))
    return PaddedBatch(tokens, lengths, mask)


class Seq2SeqBatch(NamedTuple):
    """A teacher-forcing batch: source ids, lengths and mask; decoder input, target and mask.

    ``src (B, S)``, ``src_lengths (B,)``, ``src_mask (B, S)``; ``tgt_in (B, T)`` starts with
    ``<bos>``, ``tgt_out (B, T)`` ends with ``<eos>``, ``tgt_mask (B, T)`` marks both's tokens.
    """

    src: torch.Tensor
    src_lengths: torch.Tensor
    src_mask: torch.Tensor
    tgt_in: torch.Tensor
    tgt_out: torch.Tensor
    tgt_mask: torch.Tensor


def seq2seq_batch(pairs: Sequence[tuple[Any, Any]], src_vocab: Vocab, tgt_vocab: Vocab,
                  *, src_width: int | None = None,
                  tgt_width: int | None = None) -> Seq2SeqBatch:
    """Encode and pad ``(source, target)`` pairs; ``tgt_in = <bos> y``,
    ``tgt_out = y <eos>``.

    ``src_width``/``tgt_width`` add padding columns (see :func:`pad_batch`); the target
    width counts the added ``<bos>``/``<eos>``.
    """
    for vocab, name in ((src_vocab, "src_vocab"), (tgt_vocab, "tgt_vocab")):
        if not isinstance(vocab, Vocab):
            raise TypeError(f"{name} must be a seqlearn.data.Vocab, got "
                            f"{type(vocab).__name__}")
    if isinstance(pairs, (str, bytes)) or not isinstance(pairs, Sequence) or not pairs:
        raise ValueError("pairs must be a non-empty list of (source, target) pairs")
    for k, pair in enumerate(pairs):
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise ValueError(f"pairs[{k}] must be (source, target), got {pair!r}")
    try:
        x = [src_vocab.encode(s) for s, _ in pairs]
        y = [tgt_vocab.encode(t) for _, t in pairs]
    except (TypeError, ValueError) as error:
        raise type(error)(f"pairs: {error}") from error
    for width, name, longest in ((src_width, "src_width", max(map(len, x))),
                                 (tgt_width, "tgt_width", 1 + max(map(len, y)))):
        if width is not None:  # +1: the target's <bos> or <eos>
            check_int(width, name, minimum=max(longest, 1))
    src = pad_batch(x, src_vocab.pad, width=src_width)
    tgt_in = pad_batch([[tgt_vocab.bos, *ids] for ids in y], tgt_vocab.pad,
                       width=tgt_width)
    tgt_out = pad_batch([[*ids, tgt_vocab.eos] for ids in y], tgt_vocab.pad,
                        width=tgt_width)
    return Seq2SeqBatch(src.tokens, src.lengths, src.mask, tgt_in.tokens,
                        tgt_out.tokens, tgt_out.mask)
