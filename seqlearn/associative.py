r"""Associative memory: read a value by comparing an address with keys (soft and hard).

A memory holds ``N`` pairs of a key ``k_i`` and a value ``v_i``. An address ``x`` reads it in
three steps, the memory-network equations of the book (``eq-mem-score``, ``eq-mem-weights``,
``eq-mem-read``):

.. math::

    \alpha_i = k_i^\top x / \tau, \qquad c = \operatorname{softmax}(\alpha), \qquad
    s = \sum_i c_i v_i .

The temperature ``tau > 0`` sets how sharp the read is. As ``tau -> 0`` the weights ``c``
concentrate on the keys with the largest score ``k_i^T x`` (shared equally among ties):
:func:`hard_lookup` is that limit, the lookup of a dictionary or a content-addressed memory,
which has no useful gradient. The soft read is differentiable in ``x``, in every key and in
every value, which lets gradient descent learn what to store and how to address it.
"""

from __future__ import annotations

import torch
from torch import Tensor

from seqlearn.attention import masked_softmax
from seqlearn.scores import _compute_dtype
from seqlearn.validate import check_real, check_same_dtype, check_shape, check_tensor


def _check_memory(x: Tensor, keys: Tensor, values: Tensor, mask: Tensor | None) -> None:
    for t, name in ((x, "x"), (keys, "keys"), (values, "values")):
        check_tensor(t, name)
    check_same_dtype("x", x, "keys", keys)
    check_same_dtype("keys", keys, "values", values)
    dims: dict = {}
    check_shape(x, "x", "... d", bound=dims)
    check_shape(keys, "keys", "... N d", bound=dims)
    check_shape(values, "values", "... N dv", bound=dims)
    if mask is not None:
        if not isinstance(mask, Tensor) or mask.dtype != torch.bool:
            raise TypeError("mask must be a bool tensor (True = a slot that may be read), got "
                            f"{getattr(mask, 'dtype', type(mask).__name__)}")
        check_shape(mask, "mask", "... N", sizes={"N": dims["N"], "...": dims["..."]})


def soft_lookup(x: Tensor, keys: Tensor, values: Tensor, *, temperature: float = 1.0,
                mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
    r"""Soft key-value read: ``s = sum_i softmax(k_i^T x / temperature)_i v_i``.

    x (..., d), keys (..., N, d), values (..., N, dv), mask (..., N) bool (True = a slot
    that may be read) -> (s (..., dv), c (..., N)). A memory with no readable slot gives
    ``c = 0`` and ``s = 0``. float16 and bfloat16 are computed in float32 and rounded
    once.
    """
    _check_memory(x, keys, values, mask)
    temperature = check_real(temperature, "temperature", positive=True)
    dtype, work = x.dtype, _compute_dtype(x.dtype)
    x, keys, values = x.to(work), keys.to(work), values.to(work)
    alpha = (keys @ x[..., None])[..., 0] / temperature  # (..., N)   eq-mem-score
    c = masked_softmax(alpha[..., None, :],  # (..., N)   eq-mem-weights
                       None if mask is None else mask[..., None, :])[..., 0, :]
    s = (c[..., None, :] @ values)[..., 0, :]  # (..., dv)   eq-mem-read
    return s.to(dtype), c.to(dtype)


def hard_lookup(x: Tensor, keys: Tensor, values: Tensor, *,
                mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
    r"""The limit of :func:`soft_lookup` as the temperature goes to 0.

    ``c_i = 1 / |M|`` for ``i`` in ``M = argmax_i k_i^T x`` (the readable slots with the
    largest score) and 0 elsewhere; ``s = sum_i c_i v_i`` (the value of the best key
    when it is unique). Same shapes as :func:`soft_lookup`; no slot readable gives
    ``c = 0``, ``s = 0``. A score of ``+inf`` is a largest score; a NaN score (a NaN in
    ``x`` or a key) makes the row's ``c`` and ``s`` NaN. float16 and bfloat16 scores are
    computed in float32, so a product beyond their range cannot overflow.
    """
    _check_memory(x, keys, values, mask)
    dtype, work = x.dtype, _compute_dtype(x.dtype)
    x, keys, values = x.to(work), keys.to(work), values.to(work)
    alpha = (keys @ x[..., None])[..., 0]  # (..., N)
    if mask is not None:
        alpha = alpha.masked_fill(~mask, float("-inf"))
    # (..., 1): the largest score; with N = 0 slots an empty sum, 0, as no slot is read
    top = (alpha.amax(-1, keepdim=True) if alpha.shape[-1]
           else alpha.sum(-1, keepdim=True))
    # (..., N): the readable argmax slots
    best = (alpha == top) & (alpha > float("-inf"))
    c = best.to(work) / best.sum(-1, keepdim=True).clamp(min=1).to(work)  # (..., N)
    c = c.masked_fill(top.isnan(), float("nan"))  # a NaN score has no argmax
    s = (c[..., None, :] @ values)[..., 0, :]  # (..., dv)
    return s.to(dtype), c.to(dtype)
