r"""Scaled dot-product attention and multi-head attention.

For queries ``q_t``, keys ``k_i`` and values ``v_i`` (Vaswani et al. 2017),

.. math::

    e_{t,i} = s\, q_t^\top k_i, \qquad
    \alpha_{t,i} = \frac{m_{t,i} \exp(e_{t,i})}{\sum_j m_{t,j} \exp(e_{t,j})}, \qquad
    o_t = \sum_i \alpha_{t,i} v_i,

with scale ``s = 1/sqrt(d)`` and a boolean mask ``m_{t,i}`` (**True = query t may attend to key
i**). A row with no allowed key (an empty denominator) gets ``alpha = 0`` and ``o = 0``: no NaN,
in the forward pass or in the gradients.

Mask convention: ``True`` means *allowed* here (as in the book's equations), whereas
``torch.nn.MultiheadAttention``'s boolean ``attn_mask`` and ``key_padding_mask`` use ``True``
for *not allowed*; pass ``~mask`` to torch.

Functions: :func:`attention` (scaled dot product), :func:`attend` (any score matrix, e.g.
from :mod:`seqlearn.scores`), :func:`masked_softmax`; module: :class:`MultiHeadAttention`.
The masks :func:`~seqlearn.masks.causal_mask` and :func:`~seqlearn.masks.padding_mask`
live in :mod:`seqlearn.masks` and are importable from here too.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

# the masks are importable from here too, where the chapters look for them
from seqlearn.masks import _check_mask, causal_mask, padding_mask  # noqa: F401
# the contract's name for the blocked attention of seqlearn.online_softmax
from seqlearn.online_softmax import memory_efficient_attention  # noqa: F401
from seqlearn.scores import _compute_dtype, check_query_key, scaled_dot_score
from seqlearn.validate import check_bool, check_tensor, check_int, check_same_dtype, check_shape


def masked_softmax(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    r"""Softmax over the last axis restricted to allowed entries; empty rows give zeros.

    .. math::  \alpha_{t,i} = \frac{m_{t,i} e^{e_{t,i}}}{\sum_j m_{t,j} e^{e_{t,j}}}
               \quad (\alpha_{t,\cdot} = 0 \text{ if no } m_{t,j} \text{ is True})

    scores (..., Tq, Tk), mask bool broadcastable to it (True = allowed) -> weights
    (..., Tq, Tk). Masked entries get ``-inf`` before the softmax, so they weigh exactly
    0 and receive zero gradient; an empty row is first set to a constant (so softmax
    sees no ``-inf - (-inf)``) and then zeroed, which keeps both the output and its
    gradient finite. float16 and bfloat16 scores are exponentiated and summed in
    float32, then rounded once.
    """
    check_tensor(scores, "scores")
    check_shape(scores, "scores", "... Tq Tk")
    work = _compute_dtype(scores.dtype)
    if mask is None:
        return torch.softmax(scores.to(work), dim=-1).to(scores.dtype)
    _check_mask(mask, scores.shape)
    empty = ~mask.any(dim=-1, keepdim=True)  # (..., Tq, 1): rows with no allowed key
    scores = scores.to(work).masked_fill(~mask, float("-inf")).masked_fill(empty, 0.0)
    return torch.softmax(scores, dim=-1).masked_fill(empty, 0.0).to(scores.dtype)


def attend(scores: Tensor, v: Tensor, *, mask: Tensor | None = None,
           causal: bool = False) -> tuple[Tensor, Tensor]:
    """Turn any score matrix into attention weights and average the values with them.

    ``o_t = sum_i alpha_{t,i} v_i`` with
    ``alpha = masked_softmax(scores, mask & causal_mask)``. scores (..., Tq, Tk), v
    (..., Tk, dv) -> (out (..., Tq, dv), weights (..., Tq, Tk)). ``causal=True``
    intersects ``mask`` with :func:`causal_mask` ``(Tq, Tk)``. float16 and bfloat16 are
    computed in float32 and rounded once, as in :func:`attention`.
    """
    check_tensor(scores, "scores")
    check_tensor(v, "v")
    check_same_dtype("scores", scores, "v", v)
    dims: dict = {}
    check_shape(scores, "scores", "... Tq Tk", bound=dims)
    check_shape(v, "v", "... Tk dv", bound=dims)
    check_bool(causal, "causal")
    if mask is not None:
        _check_mask(mask, scores.shape)
    if causal:
        tri = causal_mask(dims["Tq"], dims["Tk"], device=scores.device)  # (Tq, Tk)
        mask = tri if mask is None else mask & tri
    work = _compute_dtype(scores.dtype)
    weights = masked_softmax(scores.to(work), mask)  # (..., Tq, Tk)
    out = weights @ v.to(work)  # (..., Tq, dv)
    return out.to(v.dtype), weights.to(scores.dtype)


def attention(q: Tensor, k: Tensor, v: Tensor, *, mask: Tensor | None = None,
              causal: bool = False,
              scale: float | None = None) -> tuple[Tensor, Tensor]:
    r"""Scaled dot-product attention, ``softmax(s Q K^T + log M) V`` row by row.

    .. math::

        \alpha_{t,i} = \frac{m_{t,i} \exp(s\, q_t^\top k_i)}{\sum_j m_{t,j}
        \exp(s\, q_t^\top k_j)}, \qquad o_t = \sum_i \alpha_{t,i} v_i, \qquad
        s = 1/\sqrt{d}.

    q (..., Tq, d), k (..., Tk, d), v (..., Tk, dv) with equal leading dimensions
    -> (out (..., Tq, dv), weights (..., Tq, Tk)).

    ``mask``: bool, True = may attend, broadcastable to ``(..., Tq, Tk)`` (a
    ``(Tq, Tk)`` pattern, or ``(B, 1, Tk)`` key padding for 3-D inputs). ``causal=True``
    also requires ``i <= t + (Tk - Tq)`` (see :func:`causal_mask`). ``scale`` replaces
    ``s``. A query with no allowed key gets weights 0 and output 0. float16 and bfloat16
    inputs are computed in float32 (scores, softmax and weighted sum) and rounded once,
    as ``torch.nn.functional.scaled_dot_product_attention`` does.
    """
    check_query_key(q, k, same_dim=True)
    check_tensor(v, "v")
    check_same_dtype("q", q, "v", v)
    work = _compute_dtype(q.dtype)  # float32 for float16 and bfloat16
    scores = scaled_dot_score(q.to(work), k.to(work), scale)  # (..., Tq, Tk)
    out, weights = attend(scores, v.to(work), mask=mask, causal=causal)
    return out.to(v.dtype), weights.to(q.dtype)


class MultiHeadAttention(nn.Module):
    r"""Multi-head attention with ``torch.nn.MultiheadAttention``'s parameters (batch first).

    .. math::

        \mathrm{head}_n = \mathrm{attention}(Q W_n^{Q\top}, K W_n^{K\top}, V W_n^{V\top}),
        \qquad \mathrm{out} = [\mathrm{head}_1; \dots; \mathrm{head}_N]\, W^{O\top} + b^O,

    where ``W_n^Q`` are the rows ``n*d_h:(n+1)*d_h`` of ``q_proj.weight`` (``d_h = d_model /
    num_heads``) and each head uses the scale ``1/sqrt(d_h)``. ``kdim``/``vdim`` let keys and
    values have other widths (cross-attention), as in torch.

    ``forward(query (B, Tq, d_model), key (B, Tk, kdim), value (B, Tk, vdim), *, mask=None,
    causal=False) -> (out (B, Tq, d_model), weights (B, num_heads, Tq, Tk))``.

    ``mask`` is bool with **True = may attend** (torch's ``attn_mask`` uses True = blocked):
    ``(Tq, Tk)``, ``(B, Tq, Tk)`` (one mask per sequence, shared by all heads; torch's 3-D
    ``attn_mask`` is instead ``(B * num_heads, Tq, Tk)``) or 4-D broadcastable to
    ``(B, num_heads, Tq, Tk)``, e.g. key padding ``(B, 1, 1, Tk)``.
    Unlike torch, a query with no allowed key gets output ``out_proj.bias`` (zero heads), not NaN.
    """

    def __init__(self, d_model: int, num_heads: int, bias: bool = True, *,
                 kdim: int | None = None, vdim: int | None = None) -> None:
        super().__init__()
        check_bool(bias, "bias")
        kdim = d_model if kdim is None else kdim
        vdim = d_model if vdim is None else vdim
        for value, name in ((d_model, "d_model"), (num_heads, "num_heads"), (kdim, "kdim"),
                            (vdim, "vdim")):
            check_int(value, name)
        if d_model % num_heads != 0:
            raise ValueError(f"d_model={d_model} must be divisible by num_heads={num_heads}")
        self.d_model, self.num_heads, self.d_head = d_model, num_heads, d_model // num_heads
        self.q_proj = nn.Linear(d_model, d_model, bias=bias)  # W^Q, all heads stacked
        self.k_proj = nn.Linear(kdim, d_model, bias=bias)  # W^K
        self.v_proj = nn.Linear(vdim, d_model, bias=bias)  # W^V
        self.out_proj = nn.Linear(d_model, d_model, bias=bias)  # W^O

    def _split_heads(self, x: Tensor) -> Tensor:
        B, T, _ = x.shape
        return x.view(B, T, self.num_heads, self.d_head).transpose(1, 2)  # (B, heads, T, d_h)

    def forward(self, query: Tensor, key: Tensor, value: Tensor, *, mask: Tensor | None = None,
                causal: bool = False) -> tuple[Tensor, Tensor]:
        weight = self.q_proj.weight
        for x, name in ((query, "query"), (key, "key"), (value, "value")):
            check_tensor(x, name)
            check_same_dtype(name, x, "the module's parameters", weight)
        dims = check_shape(query, "query", "B Tq d_model", sizes={"d_model": self.d_model})
        dims |= check_shape(key, "key", "B Tk kdim",
                            sizes={"B": dims["B"], "kdim": self.k_proj.in_features})
        check_shape(value, "value", "B Tk vdim",
                    sizes={"B": dims["B"], "Tk": dims["Tk"], "vdim": self.v_proj.in_features})
        if mask is not None:
            if isinstance(mask, torch.Tensor) and mask.dim() == 3:
                check_shape(mask, "a 3-D mask", "B Tq Tk", sizes={k: dims[k] for k in ("B", "Tq", "Tk")})
                mask = mask[:, None]  # (B, 1, Tq, Tk): one mask per sequence, shared by the heads
            _check_mask(mask, torch.Size([dims["B"], self.num_heads, dims["Tq"], dims["Tk"]]))
            if mask.dim() not in (2, 4):
                raise ValueError("mask must be (Tq, Tk), (B, Tq, Tk) or 4-D broadcastable to "
                                 f"(B, num_heads, Tq, Tk), e.g. (B, 1, 1, Tk); got {tuple(mask.shape)}")
        q = self._split_heads(self.q_proj(query))  # (B, heads, Tq, d_h)
        k = self._split_heads(self.k_proj(key))  # (B, heads, Tk, d_h)
        v = self._split_heads(self.v_proj(value))  # (B, heads, Tk, d_h)
        heads, weights = attention(q, k, v, mask=mask, causal=causal)  # (B, heads, Tq, d_h)
        concat = heads.transpose(1, 2).reshape(dims["B"], dims["Tq"], self.d_model)  # (B, Tq, D)
        return self.out_proj(concat), weights

    @classmethod
    def from_torch(cls, m: nn.MultiheadAttention) -> MultiHeadAttention:
        """Copy a ``torch.nn.MultiheadAttention(..., batch_first=True)`` so outputs are equal.

        ``m(q, k, v, attn_mask=~mask, need_weights=True, average_attn_weights=False)`` then
        equals ``self(q, k, v, mask=mask)`` (outputs and per-head weights). torch's packed
        ``in_proj_weight`` (3 d_model, d_model) is split into the q, k, v blocks in that order.
        We have no dropout: torch's (``m.dropout``) acts only in training mode, so compare with
        ``m.eval()``. ``add_bias_kv`` and ``add_zero_attn`` are refused.
        """
        if not isinstance(m, nn.MultiheadAttention):
            raise TypeError(f"m must be a torch.nn.MultiheadAttention, got {type(m).__name__}")
        if not m.batch_first:
            raise ValueError("m must be built with batch_first=True (seqlearn is batch first)")
        if m.bias_k is not None or m.add_zero_attn:
            raise ValueError("add_bias_kv and add_zero_attn are not supported")
        bias = m.in_proj_bias is not None
        new = cls(m.embed_dim, m.num_heads, bias=bias, kdim=m.kdim, vdim=m.vdim)
        new = new.to(device=m.out_proj.weight.device, dtype=m.out_proj.weight.dtype)
        if m._qkv_same_embed_dim:
            w_q, w_k, w_v = m.in_proj_weight.chunk(3, dim=0)  # each (d_model, d_model)
        else:
            w_q, w_k, w_v = m.q_proj_weight, m.k_proj_weight, m.v_proj_weight
        with torch.no_grad():
            for lin, w in ((new.q_proj, w_q), (new.k_proj, w_k), (new.v_proj, w_v)):
                lin.weight.copy_(w)
            new.out_proj.weight.copy_(m.out_proj.weight)
            if bias:
                for lin, b in zip((new.q_proj, new.k_proj, new.v_proj), m.in_proj_bias.chunk(3)):
                    lin.bias.copy_(b)
                new.out_proj.bias.copy_(m.out_proj.bias)
        return new

