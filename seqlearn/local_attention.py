r"""Local (restricted) self-attention: each position attends to a window of neighbours.

Vaswani et al. (2017, Table 1) list *self-attention (restricted)*: query ``t`` sees only the
keys ``i`` with ``|t - i| <= r`` (or ``t - r <= i <= t`` when causal),

.. math::

    \alpha_{t,i} = \frac{\exp(s\, q_t^\top k_i)}{\sum_{|t - j| \le r} \exp(s\, q_t^\top k_j)}
    \quad (|t - i| \le r), \qquad o_t = \sum_{|t - i| \le r} \alpha_{t,i} v_i,

which is :func:`seqlearn.attention.attention` with the mask :func:`band_mask`. Computed
through windows of ``W = 2r + 1`` (causal: ``r + 1``) keys per query, it costs
``O(T W d)`` time and memory instead of ``O(T^2 d)``: linear in the length for a fixed
radius, at the price of a path of ``O(T / r)`` layers between distant positions.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from seqlearn.scores import _compute_dtype, _scale_for, check_query_key
from seqlearn.validate import (check_bool, check_int, check_same_dtype, check_shape,
                               check_tensor)


def band_mask(T: int, radius: int, *, causal: bool = False,
              device: torch.device | str | None = None) -> Tensor:
    """Boolean ``(T, T)`` mask, True where ``|t - i| <= radius`` (causal: ``0 <= t - i <= radius``)."""
    check_int(T, "T")
    check_int(radius, "radius", minimum=0)
    check_bool(causal, "causal")
    lag = torch.arange(T, device=device)[:, None] - torch.arange(T, device=device)  # (T, T): t - i
    return (lag >= 0) & (lag <= radius) if causal else lag.abs() <= radius


def restricted_attention(q: Tensor, k: Tensor, v: Tensor, radius: int, *,
                         causal: bool = False, scale: float | None = None) -> Tensor:
    """Self-attention restricted to ``radius`` neighbours per side, in
    ``O(T * radius * d)``.

    q (..., T, d), k (..., T, d), v (..., T, dv) -> out (..., T, dv), equal to
    ``attention(q, k, v, mask=band_mask(T, radius, causal=causal), scale=scale)[0]``.
    Every query sees at least itself, so no row is empty; ``T = 0`` gives an empty
    output. float16 and bfloat16 are computed in float32 and rounded once, as in
    ``attention``.
    """
    dims = check_query_key(q, k, same_dim=True)
    if dims["Tq"] != dims["Tk"]:
        raise ValueError(f"restricted self-attention needs q and k of one length, got "
                         f"Tq={dims['Tq']} and Tk={dims['Tk']}")
    check_tensor(v, "v")
    check_same_dtype("q", q, "v", v)
    check_shape(v, "v", "... T dv", sizes={"...": tuple(q.shape[:-2]), "T": dims["Tk"]})
    check_int(radius, "radius", minimum=0)
    check_bool(causal, "causal")
    scale = _scale_for(scale, dims["dq"])
    T, left = dims["Tq"], radius
    if T == 0:
        return v.new_zeros(v.shape)  # (..., 0, dv): no query, no output
    right = 0 if causal else radius
    W = left + right + 1  # keys per window
    dtype, work = v.dtype, _compute_dtype(q.dtype)
    q, k, v = q.to(work), k.to(work), v.to(work)
    # (..., T, d, W): t-left..t+right
    k_win = F.pad(k, (0, 0, left, right)).unfold(-2, W, 1)
    v_win = F.pad(v, (0, 0, left, right)).unfold(-2, W, 1)  # (..., T, dv, W)
    s = scale * (q.unsqueeze(-2) @ k_win).squeeze(-2)  # (..., T, W)
    key = (torch.arange(T, device=q.device)[:, None] - left  # (T, W): key of each slot
           + torch.arange(W, device=q.device))
    # (T, W): window past the ends
    s = s.masked_fill((key < 0) | (key >= T), float("-inf"))
    alpha = torch.softmax(s, dim=-1)  # (..., T, W)
    return (v_win @ alpha.unsqueeze(-1)).squeeze(-1).to(dtype)  # (..., T, dv)
