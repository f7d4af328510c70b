r"""The loss and the score of the encoder--decoder models (Parts III and IV).

:class:`seqlearn.seq2seq.Seq2Seq` and :class:`seqlearn.transformer.Transformer` are
trained on the same objective and judged by the same score, so both live here, below
either model: the cross-entropy over the real target tokens
(:func:`masked_cross_entropy`, book equation eq-s2s-loss) and whole-sequence exact
match up to ``<eos>`` (:func:`exact_match`). Both read the fields of a
:class:`seqlearn.data.Seq2SeqBatch`, which :func:`_check_batch` checks against each
other and the vocabularies.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor

from seqlearn.data.vocab import Seq2SeqBatch
from seqlearn.validate import check_int, check_real, check_shape, check_tensor, check_tokens

__all__ = ["masked_cross_entropy", "exact_match"]


def masked_cross_entropy(logits: Tensor, target: Tensor, mask: Tensor, *,
                         label_smoothing: float = 0.0) -> Tensor:
    r"""Mean cross-entropy over the real tokens only (padding contributes nothing).

    .. math::

        \mathcal{L} = -\frac{1}{\sum_{b,t} m_{b,t}} \sum_{b,t} m_{b,t}
                      \log \operatorname{softmax}(z_{b,t})_{y_{b,t}}
        \qquad \text{(book equation eq-s2s-loss)}

    logits (B, T, V), target (B, T) long, mask (B, T) bool (True = token) -> scalar.

    With ``label_smoothing`` :math:`\varepsilon \in [0, 1]` (Szegedy et al. 2016; the
    Transformer uses 0.1) each token's term is the cross-entropy against the target
    :math:`(1 - \varepsilon)\, \text{one-hot}(y) + \varepsilon / V`, that is
    :math:`(1 - \varepsilon) (-\log p_y) + \varepsilon \frac{1}{V} \sum_v (-\log p_v)`
    (book equation eq-tf-label-smoothing), as ``torch.nn.functional.cross_entropy(...,
    label_smoothing=eps)``.
    """
    check_tensor(logits, "logits")
    dims = check_shape(logits, "logits", "B T V")
    check_tokens(target, "target", "B T", dims["V"])
    check_shape(target, "target", "B T", sizes={"B": dims["B"], "T": dims["T"]})
    check_tensor(mask, "mask", floating=False)
    if mask.dtype != torch.bool:
        raise TypeError(f"mask must be a bool tensor (True = token), got dtype "
                        f"{mask.dtype}")
    check_shape(mask, "mask", "B T", sizes={"B": dims["B"], "T": dims["T"]})
    if not bool(mask.any()):
        raise ValueError("mask must mark at least one token, got none")
    eps = check_real(label_smoothing, "label_smoothing", minimum=0.0)
    if eps > 1:
        raise ValueError(f"label_smoothing must be at most 1, got {eps}")
    # only the real tokens
    if eps == 0:
        nll = F.cross_entropy(logits[mask], target[mask], reduction="sum")
        return nll / mask.sum()
    return _label_smoothed(logits, target, mask, eps)


def _label_smoothed(logits: Tensor, target: Tensor, mask: Tensor, eps: float) -> Tensor:
    r"""The mean over the real tokens of each token's cross-entropy against the smoothed
    target (eq-tf-label-smoothing),
    :math:`(1 - \varepsilon) (-\log p_y) + \varepsilon \frac{1}{V} \sum_v (-\log p_v)`:
    logits (B, T, V), target (B, T) long, mask (B, T) bool -> scalar."""
    log_p = torch.log_softmax(logits[mask], dim=-1)  # (N, V): the real tokens
    nll = -log_p.gather(-1, target[mask][:, None])[:, 0]  # (N,)
    spread = -log_p.mean(dim=-1)  # (N,): cross-entropy against the uniform target
    return ((1 - eps) * nll + eps * spread).sum() / mask.sum()


def _check_batch(batch: Any, src_vocab_size: int, tgt_vocab_size: int,
                 name: str = "batch") -> None:
    """``batch``: a :class:`Seq2SeqBatch` whose fields fit each other and the
    vocabularies (errors name the field, e.g. ``batch.tgt_out``), before a model reads
    any of it."""
    if not isinstance(batch, Seq2SeqBatch):
        raise TypeError(f"{name} must be a Seq2SeqBatch, got {type(batch).__name__}")
    dims = check_tokens(batch.src, f"{name}.src", "B S", src_vocab_size)
    dims |= check_tokens(batch.tgt_in, f"{name}.tgt_in", "B T", tgt_vocab_size)
    check_tokens(batch.tgt_out, f"{name}.tgt_out", "B T", tgt_vocab_size)
    for field, spec in (("src", "B S"), ("src_lengths", "B"), ("src_mask", "B S"),
                        ("tgt_in", "B T"), ("tgt_out", "B T"), ("tgt_mask", "B T")):
        check_shape(getattr(batch, field), f"{name}.{field}", spec, sizes=dims)
    for field in ("src_mask", "tgt_mask"):
        mask = getattr(batch, field)
        check_tensor(mask, f"{name}.{field}", floating=False)
        if mask.dtype != torch.bool:
            raise TypeError(f"{name}.{field} must be a bool tensor (True = token), got "
                            f"dtype {mask.dtype}")
    lengths = batch.src_lengths
    check_tensor(lengths, f"{name}.src_lengths", floating=False)
    if lengths.dtype == torch.bool or lengths.is_complex():
        raise TypeError(f"{name}.src_lengths must hold integer lengths, got dtype "
                        f"{lengths.dtype}")


def exact_match(tokens: Tensor, target: Tensor, eos: int) -> Tensor:
    """``(B,)`` bool: row ``b`` of ``tokens`` equals row ``b`` of ``target`` up to its
    first ``eos``.

    Both are ``(B, T)`` long (widths may differ); everything after a row's first ``eos``
    (padding, or tokens a decoder produced after finishing) is ignored. A row of
    ``tokens`` without ``eos`` never matches a target that has one.
    """
    check_int(eos, "eos", minimum=0)
    rows = []
    for x, name in ((tokens, "tokens"), (target, "target")):
        check_tensor(x, name, floating=False)
        if x.dtype != torch.long:
            raise TypeError(f"{name} must be a LongTensor, got dtype {x.dtype}")
        check_shape(x, name, "B T",
                    sizes={"B": tokens.shape[0]} if name == "target" else None)
        if x.numel() and int(x.min()) < 0:
            raise ValueError(f"{name} must hold ids >= 0, got {int(x.min())}")
        # (B, T): past the first eos
        after = (x == eos).long().cumsum(1) - (x == eos).long() > 0
        rows.append(x.masked_fill(after, -1))
    width = max(r.shape[1] for r in rows)
    a, b = (F.pad(r, (0, width - r.shape[1]), value=-1) for r in rows)  # (B, width)
    return (a == b).all(1)
