r"""The online softmax, and attention computed over blocks of keys with it.

The softmax of scores ``x_1, ..., x_n`` needs their maximum (for stability) and the sum
``sum_i exp(x_i - max)``. Both can be accumulated block by block, in one pass (Milakov and
Gimelshein 2018). After the blocks ``B_1, ..., B_j`` the running maximum ``m_j`` and the
running sum ``l_j`` are (the self-attention chapter's eq-sa-online-max and eq-sa-online-sum)

.. math::

    m_j = \max\big(m_{j-1}, \max_{i \in B_j} x_i\big), \qquad
    l_j = l_{j-1}\, e^{m_{j-1} - m_j} + \sum_{i \in B_j} e^{x_i - m_j},
    \qquad m_0 = -\infty,\ l_0 = 0,

and by induction ``l_j = sum_{i in B_1..B_j} exp(x_i - m_j)``: after the last block,
``softmax(x)_i = exp(x_i - m) / l`` and ``logsumexp(x) = m + log l``. Attention needs one more
running quantity, the unnormalised output ``a_j = a_{j-1} e^{m_{j-1} - m_j} + sum_{i in B_j}
e^{x_i - m_j} v_i`` (eq-sa-online-acc), and returns ``o = a / l``: the ``(Tq, Tk)`` matrix of
weights never exists, only one ``(Tq, block)`` slice of it at a time (Rabe and Staats 2021;
Dao et al. 2022).

The backward pass recomputes each block of weights from the saved ``logsumexp`` instead of
storing them: with ``alpha = exp(s - lse)``, ``D_t = sum_c dout_{t,c} out_{t,c}`` and
``ds = alpha * (dout v^T - D)``, the gradients are ``dv = alpha^T dout``, ``dq = s ds k`` and
``dk = s ds^T q`` (``s`` the scale), block by block.

Functions: :func:`online_normalizer` (the running max and sum over blocks of a score
vector) and :func:`memory_efficient_attention` (equal to ``seqlearn.attention.attention(...)[0]``,
re-exported there).
"""

from __future__ import annotations

import torch
from torch import Tensor

from seqlearn.masks import _check_mask
from seqlearn.scores import _compute_dtype, _scale_for, check_query_key
from seqlearn.validate import (check_bool, check_int, check_real, check_same_dtype,
                               check_shape, check_tensor)

NEG_INF = float("-inf")


def _online_step(m: Tensor, l: Tensor, s: Tensor
                 ) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """One block of the online softmax: eq-sa-online-max and eq-sa-online-sum.

    m, l (..., Tq) running max and sum; s (..., Tq, Bk) this block's scores (``-inf``
    where masked). Returns ``(m_new, l_new, p, correction)`` with ``p = exp(s - m_new)``
    and ``correction = exp(m - m_new)``, the factor that rescales what was summed
    before. A row that has seen only ``-inf`` so far keeps ``m = -inf`` and ``l = 0``;
    its reference point is taken as 0 so that no ``-inf - (-inf)`` appears.
    """
    m_new = torch.maximum(m, s.amax(dim=-1))  # (..., Tq)
    shift = m_new.masked_fill(m_new == NEG_INF, 0.0)  # finite reference point per row
    p = (s - shift.unsqueeze(-1)).exp()  # (..., Tq, Bk): exp(s - m_new), 0 where masked
    correction = (m - shift).exp()  # (..., Tq): exp(m_old - m_new), 0 on empty rows
    return m_new, l * correction + p.sum(dim=-1), p, correction


def online_normalizer(scores: Tensor, block_size: int) -> tuple[Tensor, Tensor]:
    r"""Running maximum and running sum of the softmax over blocks of the last axis.

    scores (..., n) -> ``(m (...,), l (...,))`` after eq-sa-online-max and
    eq-sa-online-sum have read the blocks ``scores[..., j:j + block_size]`` in order, so
    that ``softmax(scores) = exp(scores - m) / l`` and
    ``logsumexp(scores) = m + log(l)``. ``-inf`` entries (masked scores) are allowed; a
    row of only ``-inf`` (or ``n = 0``) gives ``m = -inf`` and ``l = 0``.
    Differentiable; float16 and bfloat16 scores are summed in float32 (``m`` and ``l``
    are returned in the scores' dtype).
    """
    check_tensor(scores, "scores")
    dims = check_shape(scores, "scores", "... n")
    check_int(block_size, "block_size")
    if bool(torch.isnan(scores).any() or (scores == float("inf")).any()):
        raise ValueError("scores must not hold NaN or +inf (-inf marks a masked score)")
    work = scores.to(_compute_dtype(scores.dtype))  # (..., n)
    m = work.new_full(work.shape[:-1], NEG_INF)  # (...,)
    l = work.new_zeros(work.shape[:-1])  # (...,)
    for j in range(0, dims["n"], block_size):
        m, l, _, _ = _online_step(m, l, work[..., j:j + block_size])
    return m.to(scores.dtype), l.to(scores.dtype)


def _block_scores(qs: Tensor, k: Tensor, mask: Tensor | None, causal: bool,
                  j0: int, j1: int, out: Tensor) -> Tensor:
    """Scores of all queries against the keys ``j0:j1``, ``-inf`` where not allowed.

    qs (..., Tq, d) queries already multiplied by the scale, k (..., Tk, d); written into
    ``out`` (..., Tq, j1 - j0), a buffer reused from block to block.
    """
    s = torch.matmul(qs, k[..., j0:j1, :].transpose(-2, -1), out=out)  # (..., Tq, Bk)
    if mask is not None:
        s.masked_fill_(~mask[..., j0:j1], NEG_INF)  # mask broadcasts to (..., Tq, Bk)
    if causal:  # key i is hidden from query t when i > t + (Tk - Tq), as causal_mask says
        Tq, Tk = qs.shape[-2], k.shape[-2]
        last = torch.arange(Tq, device=qs.device) + (Tk - Tq)  # (Tq,)
        s.masked_fill_(torch.arange(j0, j1, device=qs.device) > last[:, None], NEG_INF)
    return s


def _blocks(Tk: int, block_size: int, buffers: dict[str, Tensor]):
    """``(j0, j1, buffers)`` for each block of keys; the buffers are narrowed for the last one.

    ``buffers`` maps names to tensors whose last axis has ``block_size`` entries; reusing them
    keeps the allocator from holding many freed ``(Tq, block)`` slices at once.
    """
    for j0 in range(0, Tk, block_size):
        j1 = min(j0 + block_size, Tk)
        if j1 - j0 < block_size:  # the last, shorter block gets buffers of its own size
            buffers = {name: b.new_empty(*b.shape[:-1], j1 - j0) for name, b in buffers.items()}
        yield j0, j1, buffers


def _attention_forward(qs: Tensor, k: Tensor, v: Tensor, mask: Tensor | None, causal: bool,
                       block_size: int) -> tuple[Tensor, Tensor]:
    """Blocked forward pass: (out (..., Tq, dv), lse (..., Tq)), ``lse = +inf`` on empty rows."""
    lead = qs.shape[:-1]  # (..., Tq)
    m = qs.new_full(lead, NEG_INF)  # (..., Tq) running max
    l = qs.new_zeros(lead)  # (..., Tq) running sum
    acc = qs.new_zeros(*lead, v.shape[-1])  # (..., Tq, dv) eq-sa-online-acc
    pv = torch.empty_like(acc)  # (..., Tq, dv) one block's contribution
    buffers = {"s": qs.new_empty(*lead, min(block_size, k.shape[-2]))}  # (..., Tq, Bk)
    for j0, j1, buf in _blocks(k.shape[-2], block_size, buffers):
        s = _block_scores(qs, k, mask, causal, j0, j1, buf["s"])  # (..., Tq, Bk)
        m, l, p, correction = _online_step(m, l, s)
        torch.matmul(p, v[..., j0:j1, :], out=pv)  # (..., Tq, dv)
        acc.mul_(correction.unsqueeze(-1)).add_(pv)
    empty = l == 0  # rows with no allowed key: output 0, as attention() gives
    out = acc.div_(l.masked_fill(empty, 1.0).unsqueeze(-1))  # (..., Tq, dv)
    lse = (m + l.log()).masked_fill(empty, float("inf"))  # exp(s - lse) = 0 on empty rows
    return out, lse


class _BlockedAttention(torch.autograd.Function):
    """Forward with the online softmax; backward recomputes each block of weights."""

    @staticmethod
    def forward(ctx, qs: Tensor, k: Tensor, v: Tensor, mask: Tensor | None, causal: bool,
                block_size: int) -> Tensor:
        out, lse = _attention_forward(qs, k, v, mask, causal, block_size)
        ctx.save_for_backward(qs, k, v, out, lse)  # O((Tq + Tk) d): no (Tq, Tk) tensor
        ctx.mask, ctx.causal, ctx.block_size = mask, causal, block_size
        return out

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, dout: Tensor):
        qs, k, v, out, lse = ctx.saved_tensors
        D = (dout * out).sum(dim=-1, keepdim=True)  # (..., Tq, 1) = sum_j alpha_j dp_j
        dqs, dk, dv = torch.zeros_like(qs), torch.empty_like(k), torch.empty_like(v)
        dq_block = torch.empty_like(qs)  # (..., Tq, d) one block's contribution to dq
        width = min(ctx.block_size, k.shape[-2])
        buffers = {"s": qs.new_empty(*qs.shape[:-1], width), "dp": qs.new_empty(*qs.shape[:-1], width)}
        for j0, j1, buf in _blocks(k.shape[-2], ctx.block_size, buffers):
            s = _block_scores(qs, k, ctx.mask, ctx.causal, j0, j1, buf["s"])  # (..., Tq, Bk)
            alpha = s.sub_(lse.unsqueeze(-1)).exp_()  # (..., Tq, Bk) the weights, recomputed
            dv[..., j0:j1, :] = alpha.transpose(-2, -1) @ dout  # (..., Bk, dv)
            dp = torch.matmul(dout, v[..., j0:j1, :].transpose(-2, -1), out=buf["dp"])
            ds = dp.sub_(D).mul_(alpha)  # (..., Tq, Bk) softmax backward: alpha * (dp - D)
            dqs.add_(torch.matmul(ds, k[..., j0:j1, :], out=dq_block))  # (..., Tq, d)
            dk[..., j0:j1, :] = ds.transpose(-2, -1) @ qs  # (..., Bk, d)
        return dqs, dk, dv, None, None, None


def memory_efficient_attention(q: Tensor, k: Tensor, v: Tensor, *,
                               mask: Tensor | None = None, causal: bool = False,
                               scale: float | None = None,
                               block_size: int = 128) -> Tensor:
    r"""Scaled dot-product attention over blocks of keys, never storing a ``(Tq, Tk)``
    matrix.

    Equal to
    ``seqlearn.attention.attention(q, k, v, mask=mask, causal=causal, scale=scale)[0]``
    (same arguments, same conventions: ``mask`` bool with True = may attend,
    broadcastable to ``(..., Tq, Tk)``; a query with no allowed key gets output 0). q
    (..., Tq, d), k (..., Tk, d), v (..., Tk, dv) -> out (..., Tq, dv).

    The forward pass reads ``block_size`` keys at a time and keeps the running max, sum
    and output of eq-sa-online-max, eq-sa-online-sum and eq-sa-online-acc; the backward
    pass (a custom ``torch.autograd.Function``) recomputes each block of weights from
    the saved log-sum-exp. Memory beyond the inputs and outputs is
    ``O(Tq * block_size)`` plus, with ``causal=True``, nothing more (the causal pattern
    is made per block); a full boolean ``mask`` of course occupies ``Tq * Tk`` bytes
    itself. float16 and bfloat16 inputs are computed in float32 (running max, sum and
    output alike), as FlashAttention and
    ``torch.nn.functional.scaled_dot_product_attention`` accumulate, and the output is
    rounded once to the input's dtype.
    """
    dims = check_query_key(q, k, same_dim=True)
    check_tensor(v, "v")
    check_same_dtype("q", q, "v", v)
    check_shape(v, "v", "... Tk dv",
                sizes={"...": tuple(q.shape[:-2]), "Tk": dims["Tk"]})
    check_bool(causal, "causal")
    check_int(block_size, "block_size")
    scale = _scale_for(scale, dims["dq"])
    if mask is not None:
        _check_mask(mask, torch.Size([*q.shape[:-2], dims["Tq"], dims["Tk"]]))
    work = _compute_dtype(q.dtype)  # float32 for float16 and bfloat16
    qs = q.to(work) * scale  # (..., Tq, d); autograd multiplies dq by the scale
    out = _BlockedAttention.apply(qs, k.to(work), v.to(work), mask, causal, block_size)
    return out.to(v.dtype)  # (..., Tq, dv)
