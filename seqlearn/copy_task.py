r"""The copy task of Graves et al. (2014): data, an LSTM baseline, loss and errors.

A sequence of ``L`` random binary vectors of ``width`` bits is shown one vector per
step, followed by a delimiter on an extra input channel; then the network must output
the ``L`` vectors again, with no input. The input ``x`` has ``2L + 1`` steps of
``width + 1`` channels::

    step      0 .. L-1          L              L+1 .. 2L
    x[:, t]   [bits_t; 0]       [0 ... 0; 1]   0
    target                                     bits_{t - L - 1}

The loss is the binary cross-entropy of the ``L`` output steps; a sequence is copied
when every bit of its output, thresholded at 0.5, is right. A network with a fixed-size
state must hold all ``L width`` bits in it; a Neural Turing Machine can write them to
memory and read them back.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor, nn

from seqlearn.validate import (check_dtypes_agree, check_finite, check_float_dtype,
                               check_int, check_nonempty, check_rng, check_same_dtype,
                               check_shape, check_tensor, first_weight)


class CopyBatch(NamedTuple):
    """Inputs ``x (B, 2L + 1, width + 1)`` and targets ``y (B, L, width)`` (0 or 1)."""

    x: Tensor
    y: Tensor


def copy_batch(n: int, length: int, width: int, rng: np.random.Generator, *,
               dtype: torch.dtype = torch.float32) -> CopyBatch:
    """``n`` copy sequences of ``length`` random ``width``-bit vectors (deterministic
    given ``rng``). A vector of zeros is drawn with probability ``2^-width``: its input
    step looks like a step of the output phase."""
    n, length = check_int(n, "n"), check_int(length, "length")
    width = check_int(width, "width")
    check_rng(rng)
    check_float_dtype(dtype, "dtype")
    bits = torch.from_numpy(rng.integers(0, 2, size=(n, length, width))).to(dtype)
    x = torch.zeros(n, 2 * length + 1, width + 1, dtype=dtype)  # (B, 2L + 1, width + 1)
    x[:, :length, :width] = bits
    x[:, length, width] = 1.0  # the delimiter
    return CopyBatch(x, bits)


class LSTMCopier(nn.Module):
    """The baseline: ``torch.nn.LSTM`` (``layers`` layers of ``hidden`` units) and a
    linear output layer. ``forward(x (B, T, width + 1)) -> (logits (B, T, width),
    None)``, the second item standing where :class:`seqlearn.ntm.NTM` returns its
    weightings."""

    def __init__(self, width: int, hidden: int, layers: int = 1) -> None:
        super().__init__()
        self.width = check_int(width, "width")
        self.lstm = nn.LSTM(self.width + 1, check_int(hidden, "hidden"),
                            check_int(layers, "layers"), batch_first=True)
        self.output = nn.Linear(hidden, self.width)

    def forward(self, x: Tensor) -> tuple[Tensor, None]:
        check_tensor(x, "x")
        check_shape(x, "x", "B T D", sizes={"D": self.width + 1})
        check_nonempty(x, "x", "B T D", "B T")
        check_dtypes_agree(("x", x), ("the module's parameters", first_weight(self)))
        y, _ = self.lstm(x)  # (B, T, hidden)
        return self.output(y), None  # (B, T, width)


def _check_model(model: Any) -> None:
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be a torch.nn.Module, got {type(model).__name__}")


def _output_logits(model: nn.Module, batch: Any) -> Tensor:
    """The logits of the ``L`` output steps, (B, L, width)."""
    _check_model(model)
    if not isinstance(batch, CopyBatch):
        raise TypeError(f"batch must be a CopyBatch, got {type(batch).__name__}")
    check_tensor(batch.x, "batch.x")
    check_tensor(batch.y, "batch.y")
    check_same_dtype("batch.x", batch.x, "batch.y", batch.y)
    dims = check_shape(batch.y, "batch.y", "B L width")
    check_shape(batch.x, "batch.x", "B T D", sizes={
        "B": dims["B"], "T": 2 * dims["L"] + 1, "D": dims["width"] + 1})
    check_finite(batch.x, "batch.x")
    if not bool(((batch.y >= 0) & (batch.y <= 1)).all()):  # NaN fails too
        raise ValueError("batch.y must hold target bits in [0, 1], got values outside")
    logits, _ = model(batch.x)  # (B, 2L + 1, width)
    check_shape(logits, "model(x)[0]", "B T width", sizes={
        "B": dims["B"], "T": 2 * dims["L"] + 1, "width": dims["width"]})
    return logits[:, dims["L"] + 1:]  # (B, L, width)


def copy_loss(model: nn.Module, batch: CopyBatch) -> Tensor:
    """Mean binary cross-entropy (nats per bit) of the output steps: the training loss
    (``seqlearn.train.fit(..., loss=copy_loss)``)."""
    return F.binary_cross_entropy_with_logits(_output_logits(model, batch), batch.y)


@torch.no_grad()
def copy_errors(model: nn.Module, batch: CopyBatch) -> Tensor:
    """Wrong output bits of every sequence, (B,) int64 (in eval mode; 0: copied)."""
    _check_model(model)
    was_training = model.training
    model.eval()
    wrong = (_output_logits(model, batch) > 0) != (batch.y > 0.5)  # (B, L, width)
    model.train(was_training)
    return wrong.sum(dim=(1, 2))
