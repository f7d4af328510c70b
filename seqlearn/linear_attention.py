r"""Causal linear attention with a decay mask: the bridge from the minGRU to attention.

Book chapter ``gru_to_attention``, section *The minGRU is linear attention with a decay*.
Linear attention {Katharopoulos et al. 2020} replaces the softmax's ``exp(q_t . k_i)`` by
``phi(q_t) . phi(k_i)`` (``phi = elu + 1``) and keeps the normaliser; both sums are then running
sums, a recurrent network with a fixed-size state (``eq-g2a-linear-attention``; the normaliser is
the same recurrence with values 1). The functions here drop ``phi`` and the normaliser, weigh
value ``v_i`` in output ``t`` by ``q_t . k_i`` and multiply it by a scalar **decay**
``a_j in [0, 1]`` for every step ``j`` the value has to survive, the form of Mamba-2 / SSD {Dao
and Gu 2024} (gated linear attention {Yang et al. 2024} has one decay per key dimension):

.. math::

    o_t = \sum_{i \le t} M_{t,i}\, (q_t^\top k_i)\, v_i, \qquad
    M_{t,i} = \prod_{j=i+1}^{t} a_j ,\qquad
    O = (M \odot Q K^\top) V                                        \qquad (eq-g2a-masked-linear)

with ``M_{t,i} = 0`` for ``i > t``. The same outputs come from a recurrence with a fixed-size
matrix state (no cache of past keys and values):

.. math::

    S_t = a_t S_{t-1} + k_t v_t^\top, \qquad o_t = S_t^\top q_t     \qquad (eq-g2a-linear-state)

A minGRU channel is the case ``d_k = d_v = 1``: ``q_t = 1``, ``k_i = 1 - u_i``,
``v_i = h~_i`` and ``a_j = u_j`` (:func:`mingru_as_attention`).
"""

from __future__ import annotations

import torch
from torch import Tensor

from seqlearn.scan import _linear_scan
from seqlearn.validate import check_same_dtype, check_shape, check_tensor


def _check_qkv(q: Tensor, k: Tensor, v: Tensor, log_decay: Tensor | None) -> dict:
    for x, name in ((q, "q"), (k, "k"), (v, "v")):
        if not isinstance(x, Tensor):
            raise TypeError(f"{name} must be a torch.Tensor, got {type(x).__name__}")
        check_tensor(x, name)
    dims: dict = {}
    check_shape(q, "q", "... T dk", bound=dims)
    check_shape(k, "k", "... T dk", bound=dims)
    check_shape(v, "v", "... T dv", bound=dims)
    check_same_dtype("q", q, "k", k)
    check_same_dtype("q", q, "v", v)
    if log_decay is not None:
        if not isinstance(log_decay, Tensor):
            raise TypeError(f"log_decay must be a torch.Tensor or None, "
                            f"got {type(log_decay).__name__}")
        check_tensor(log_decay, "log_decay")
        check_shape(log_decay, "log_decay", "... T", sizes={"...": dims["..."], "T": dims["T"]})
        check_same_dtype("q", q, "log_decay", log_decay)
        if bool((log_decay > 0).any()) or bool(log_decay.isnan().any()):
            raise ValueError("log_decay must be <= 0 (a decay a_t = exp(log_decay) in [0, 1])")
    return dims


def decay_mask(log_decay: Tensor) -> Tensor:
    r"""The decay mask ``M_{t,i} = prod_{j=i+1}^{t} a_j`` (``i <= t``, else 0) of ``eq-g2a-masked-linear``.

    Computed in log space as ``exp(sum_{j=i+1}^{t} log a_j)``: each entry sums only its own
    logarithms (a masked cumulative sum, the "segment sum" of Mamba-2), never a difference of
    two running sums, so ``a_j = 0`` (``log a_j = -inf``) gives exact zeros and no NaN.
    log_decay ``(..., T)`` with entries ``<= 0`` -> ``M (..., T, T)``.
    """
    if not isinstance(log_decay, Tensor):
        raise TypeError(f"log_decay must be a torch.Tensor, got {type(log_decay).__name__}")
    check_tensor(log_decay, "log_decay")
    T = check_shape(log_decay, "log_decay", "... T")["T"]
    if bool((log_decay > 0).any()) or bool(log_decay.isnan().any()):
        raise ValueError("log_decay must be <= 0 (a decay a_t = exp(log_decay) in [0, 1])")
    later = torch.ones(T, T, dtype=torch.bool, device=log_decay.device).tril(-1)  # [j, i]: j > i
    # terms[..., j, i] = log a_j where j > i, else 0; the running sum over j up to t gives
    # sum_{j=i+1}^{t} log a_j in row t (the empty sum 0 at t = i)
    terms = torch.where(later, log_decay.unsqueeze(-1), torch.zeros_like(log_decay).unsqueeze(-1))
    segsum = torch.cumsum(terms, dim=-2)  # (..., T_t, T_i)
    causal = torch.ones(T, T, dtype=torch.bool, device=log_decay.device).tril()  # i <= t
    return torch.where(causal, segsum.exp(), torch.zeros_like(segsum))  # (..., T, T)


def masked_linear_attention(q: Tensor, k: Tensor, v: Tensor,
                            log_decay: Tensor | None = None) -> tuple[Tensor, Tensor]:
    r"""Quadratic form of ``eq-g2a-masked-linear``: ``O = (M ⊙ Q K^T) V``.

    q, k ``(..., T, dk)``, v ``(..., T, dv)``, log_decay ``(..., T)`` (``log a_t <= 0``) or
    ``None`` for no decay (``a_t = 1``: plain causal linear attention). Returns
    ``(o (..., T, dv), A (..., T, T))`` with the weights ``A = M ⊙ Q K^T``. Time ``O(T^2)``.
    """
    dims = _check_qkv(q, k, v, log_decay)
    T = dims["T"]
    if log_decay is None:
        mask = torch.ones(T, T, dtype=q.dtype, device=q.device).tril()  # (T, T)
    else:
        mask = decay_mask(log_decay)  # (..., T, T)
    weights = mask * (q @ k.transpose(-1, -2))  # (..., T, T): M_{t,i} q_t . k_i
    return weights @ v, weights  # (..., T, dv), (..., T, T)


def recurrent_linear_attention(q: Tensor, k: Tensor, v: Tensor,
                               log_decay: Tensor | None = None,
                               method: str = "sequential") -> Tensor:
    r"""Recurrent form ``eq-g2a-linear-state``: ``S_t = a_t S_{t-1} + k_t v_t^T``,
    ``o_t = S_t^T q_t``.

    The state ``S_t (dk, dv)`` has a fixed size: no cache grows with ``t``. The
    recurrence is the linear scan of :func:`seqlearn.scan.linear_scan` over the
    ``dk * dv`` entries of ``S`` (``method`` as there). Same arguments as
    :func:`masked_linear_attention`; returns ``o (..., T, dv)``. Time ``O(T)``.
    """
    dims = _check_qkv(q, k, v, log_decay)
    dk, dv = dims["dk"], dims["dv"]
    kv = (k.unsqueeze(-1) * v.unsqueeze(-2)).flatten(-2)  # (..., T, dk * dv): k_t v_t^T
    if log_decay is None:
        a = torch.ones_like(kv)
    else:
        # (..., T, dk * dv)
        a = log_decay.exp().unsqueeze(-1).expand_as(kv).contiguous()
    names = ("exp(log_decay)", "k_t v_t^T (from k and v)", "h0")
    S = _linear_scan(a, kv, None, method, None, names)  # (..., T, dk * dv)
    S = S.unflatten(-1, (dk, dv))  # (..., T, dk, dv)
    return torch.einsum("...td,...tde->...te", q, S)  # (..., T, dv): S_t^T q_t


def mingru_as_attention(u: Tensor, h_tilde: Tensor) -> tuple[Tensor, Tensor]:
    r"""A minGRU (``h_t = u_t h_{t-1} + (1 - u_t) h~_t``, ``h_0 = 0``) as masked linear attention.

    Every channel ``c`` is one head with ``d_k = d_v = 1``: query ``q_t = 1``, key
    ``k_i = 1 - u_i``, value ``v_i = h~_i`` and decay ``a_j = u_j``, so its weights are
    ``A_{t,i} = (prod_{j=i+1}^{t} u_j) (1 - u_i)``, the implied weights of ``eq-g2a-unrolled``.
    u, h_tilde ``(..., T, H)``, u in ``[0, 1]`` -> ``(h (..., T, H), A (..., H, T, T))``.
    """
    for x, name in ((u, "u"), (h_tilde, "h_tilde")):
        if not isinstance(x, Tensor):
            raise TypeError(f"{name} must be a torch.Tensor, got {type(x).__name__}")
        check_tensor(x, name)
    check_shape(u, "u", "... T H")
    if h_tilde.shape != u.shape:
        raise ValueError(f"h_tilde must have the shape of u {tuple(u.shape)}, "
                         f"got {tuple(h_tilde.shape)}")
    check_same_dtype("u", u, "h_tilde", h_tilde)
    if bool(((u < 0) | (u > 1)).any()) or bool(u.isnan().any()):
        raise ValueError("u must lie in [0, 1] (keep gates)")
    heads = lambda x: x.transpose(-1, -2).unsqueeze(-1)  # (..., T, H) -> (..., H, T, 1)
    q = torch.ones_like(heads(u))  # (..., H, T, 1)
    out, weights = masked_linear_attention(q, heads(1 - u), heads(h_tilde),
                                           torch.log(u).transpose(-1, -2))
    return out.squeeze(-1).transpose(-1, -2), weights  # (..., T, H), (..., H, T, T)
