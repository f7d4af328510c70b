r"""Boolean masks for attention: who may attend to whom.

A mask ``m`` has **True = may attend** (query ``t`` may read key ``i``, or position
``i`` is a real token), the convention of the book's equations; ``torch.nn``'s boolean
masks use True for *not allowed*, so pass ``~mask`` to torch. Every model that masks
reads these helpers (the GRU unrolled into attention weights, scaled dot-product and
multi-head attention, the online softmax), so they live below all of them;
``seqlearn.attention`` re-exports :func:`causal_mask` and :func:`padding_mask`.
"""

from __future__ import annotations

import torch
from torch import Tensor

from seqlearn.validate import check_int, check_shape

__all__ = ["causal_mask", "padding_mask"]


def causal_mask(Tq: int, Tk: int | None = None, *,
                device: torch.device | str | None = None) -> Tensor:
    r"""Boolean ``(Tq, Tk)`` mask, True where key ``i`` may be seen by query ``t``.

    .. math::  m_{t,i} = [\, i \le t + (T_k - T_q) \,]

    With ``Tq == Tk`` (self-attention) this is the lower triangle, ``i <= t``. With
    ``Tq != Tk`` the queries are aligned with the **last** ``Tq`` keys (the convention
    of incremental decoding, where ``Tk - Tq`` earlier keys are cached): the last query
    sees every key. When ``Tq > Tk`` the first ``Tq - Tk`` queries see no key at all and
    :func:`seqlearn.attention.attention` returns zeros for them.
    """
    Tk = Tq if Tk is None else Tk
    check_int(Tq, "Tq")
    check_int(Tk, "Tk")
    return torch.ones(Tq, Tk, dtype=torch.bool, device=device).tril(diagonal=Tk - Tq)


def padding_mask(lengths: Tensor, T: int) -> Tensor:
    """Boolean ``(B, T)`` mask, True at the ``lengths[b]`` real (non-padding) positions
    of row b.

    For attention over padded keys use ``padding_mask(lengths, Tk)[:, None, :]`` with
    :func:`seqlearn.attention.attention` on ``(B, Tq, Tk)`` scores, or
    ``[:, None, None, :]`` for :class:`seqlearn.attention.MultiHeadAttention`'s
    ``(B, heads, Tq, Tk)``.
    """
    check_int(T, "T")
    if (not isinstance(lengths, Tensor) or lengths.is_floating_point()
            or lengths.dtype == torch.bool):
        got = lengths.dtype if isinstance(lengths, Tensor) else type(lengths).__name__
        raise TypeError(f"lengths must be an integer tensor, got {got}")
    check_shape(lengths, "lengths", "B")
    if bool(((lengths < 0) | (lengths > T)).any()):
        raise ValueError(f"lengths must lie in [0, T={T}], got {lengths.tolist()}")
    return torch.arange(T, device=lengths.device) < lengths[:, None]  # (B, T)


def _check_mask(mask: Tensor, shape: torch.Size) -> None:
    """A mask must be a bool tensor that broadcasts to ``shape`` without enlarging
    it."""
    if not isinstance(mask, Tensor) or mask.dtype != torch.bool:
        raise TypeError("mask must be a bool tensor (True = may attend), got "
                        f"{getattr(mask, 'dtype', type(mask).__name__)}")
    try:
        broadcast = torch.broadcast_shapes(mask.shape, shape)
    except RuntimeError:
        broadcast = None
    if broadcast != shape:
        raise ValueError(f"mask of shape {tuple(mask.shape)} does not broadcast to the "
                         f"scores' shape (..., Tq, Tk) = {tuple(shape)}")
