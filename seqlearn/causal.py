"""From the GRU to causal self-attention, one step at a time (the GRU-to-Transformer notes).

Unrolled, the GRU update ``h_t = u_t * h_{t-1} + (1 - u_t) * h~_t`` writes ``h_t`` as a weighted
sum of the candidates ``h~_i, i <= t`` (:mod:`seqlearn.unroll`). Its weights depend on the gates,
and the gates and candidates on ``h_{t-1}``, so the computation is sequential. Each step below
removes one dependence or adds one ingredient; every step is the causal attention of
:func:`seqlearn.attention.attention` with different queries, keys and values.

1. :func:`free_candidates` -- candidates ``f(x_i)`` and weights from a softmax of a score:
   ``h_t = sum_{i<=t} alpha_{t,i} f(x_i)``, ``alpha_{t,.} = softmax_{i<=t} ATT(f(x_i), f(x_t))``.
2. :class:`KeyValueAttention` -- separate roles: ``q_t = Q f(x_t)``, ``k_i = K f(x_i)``,
   ``v_i = V f(x_i)``.
3. :class:`MultiHeadCausalAttention` -- ``N`` heads side by side, ``h_t = [h_t^1; ...; h_t^N]``.
4. :func:`add_positions` -- ``f(x_t) + PE_t``: without it attention is blind to order.
5. :class:`MultiHeadCausalAttention` with ``g`` -- a non-linearity after attention,
   ``h_t = [g(h_t^1); ...; g(h_t^N)]``.

:func:`causal_attention_loop` is the readable double loop over ``t`` and ``i`` that every step
can be checked against. Inputs are batch first: ``fx = f(x)`` has shape ``(B, T, D)``.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor, nn

from seqlearn.attention import attention
from seqlearn.positional import sinusoidal_positional_encoding
from seqlearn.scores import default_scale
from seqlearn.validate import (check_bool, check_dtypes_agree, check_int,
                               check_nonempty, check_real, check_same_dtype,
                               check_shape, check_tensor)


def causal_attention_loop(q: Tensor, k: Tensor, v: Tensor, *,
                          scale: float | None = None) -> tuple[Tensor, Tensor]:
    """Causal dot-product attention written as loops: the reference for every step.

    For every batch row ``b`` and query ``t``: ``e_i = s q_t . k_i`` for ``i = 0..t``,
    ``alpha_{t,i} = exp(e_i - max e) / sum_{j<=t} exp(e_j - max e)``,
    ``h_t = sum_{i<=t} alpha_{t,i} v_i``; ``alpha_{t,i} = 0`` for ``i > t``.
    q, k (B, T, d), v (B, T, dv), all of one dtype -> (h (B, T, dv), alpha (B, T, T)).
    Slow on purpose.
    """
    for x, name in ((q, "q"), (k, "k"), (v, "v")):
        check_tensor(x, name)
    check_dtypes_agree(("q", q), ("k", k), ("v", v))
    dims = check_shape(q, "q", "B T d")
    check_shape(k, "k", "B T d", bound=dims)
    check_shape(v, "v", "B T dv", sizes={"B": dims["B"], "T": dims["T"]})
    s = default_scale(dims["d"]) if scale is None else check_real(scale, "scale")
    B, T = dims["B"], dims["T"]
    h = v.new_zeros(B, T, v.shape[-1])
    alpha = q.new_zeros(B, T, T)
    for b in range(B):
        for t in range(T):
            e = [s * torch.dot(q[b, t], k[b, i]) for i in range(t + 1)]  # e_{t,i} for i <= t
            top = max(float(e_i.detach()) for e_i in e)  # subtract the max: exp cannot overflow
            z = sum(torch.exp(e_i - top) for e_i in e)
            h_t = torch.zeros_like(v[b, 0])
            for i in range(t + 1):
                a = torch.exp(e[i] - top) / z  # alpha_{t,i}
                alpha[b, t, i] = a
                h_t = h_t + a * v[b, i]
            h[b, t] = h_t
    return h, alpha


def _check_features(fx: Tensor, d_in: int | None = None) -> None:
    check_tensor(fx, "fx")
    check_shape(fx, "fx", "B T D", sizes=None if d_in is None else {"D": d_in})


def free_candidates(fx: Tensor, *, scale: float | None = None) -> tuple[Tensor, Tensor]:
    r"""Step 1: the candidates no longer depend on ``h_{t-1}``: ``h~_i = f(x_i)``.

    .. math::

        h_t = \sum_{i \le t} \alpha_{t,i} f(x_i), \qquad
        \alpha_{t,i} = \frac{\exp \mathrm{ATT}(f(x_i), f(x_t))}
                             {\sum_{j \le t} \exp \mathrm{ATT}(f(x_j), f(x_t))},
        \qquad \mathrm{ATT}(a, b) = a^\top b / \sqrt{D}.

    ``f(x)`` plays query, key and value at once. fx (B, T, D) -> (h (B, T, D), alpha (B, T, T)).
    """
    _check_features(fx)
    return attention(fx, fx, fx, causal=True, scale=scale)


class KeyValueAttention(nn.Module):
    r"""Step 2: separate queries, keys and values with three linear maps of ``f(x)``.

    .. math::

        q_t = Q f(x_t), \quad k_i = K f(x_i), \quad v_i = V f(x_i), \qquad
        h_t = \sum_{i \le t} \alpha_{t,i} v_i, \quad
        \alpha_{t,\cdot} = \mathrm{softmax}_{i \le t}\, \frac{q_t^\top k_i}{\sqrt{d_k}}.

    ``forward(fx (B, T, d_in)) -> (h (B, T, d_v), alpha (B, T, T))``.
    """

    def __init__(self, d_in: int, d_k: int, d_v: int | None = None, bias: bool = False) -> None:
        super().__init__()
        d_v = d_in if d_v is None else d_v
        for value, name in ((d_in, "d_in"), (d_k, "d_k"), (d_v, "d_v")):
            check_int(value, name)
        check_bool(bias, "bias")
        self.Q = nn.Linear(d_in, d_k, bias=bias)
        self.K = nn.Linear(d_in, d_k, bias=bias)
        self.V = nn.Linear(d_in, d_v, bias=bias)

    def forward(self, fx: Tensor) -> tuple[Tensor, Tensor]:
        _check_features(fx, self.Q.in_features)
        check_same_dtype("fx", fx, "the module's parameters", self.Q.weight)
        q, k, v = self.Q(fx), self.K(fx), self.V(fx)  # (B, T, d_k), (B, T, d_k), (B, T, d_v)
        return attention(q, k, v, causal=True)


class MultiHeadCausalAttention(nn.Module):
    r"""Steps 3 and 5: ``N`` independent heads, concatenated, with an optional ``g`` on each.

    .. math::

        h_t = \big[g(h_t^1); \dots; g(h_t^N)\big], \qquad
        h_t^n = \sum_{i \le t} \alpha^n_{t,i} V^n f(x_i), \qquad
        \alpha^n_{t,\cdot} = \mathrm{softmax}_{i \le t}
        \frac{(Q^n f(x_t))^\top K^n f(x_i)}{\sqrt{d_k}}.

    Each head is a :class:`KeyValueAttention` with its own ``Q^n, K^n, V^n``. ``g`` is shared by
    the heads and maps ``(..., d_v)`` to ``(..., d_g)``; ``None`` is the identity (step 3). With
    ``g`` the output is no longer a convex combination of value vectors (step 5).
    ``forward(fx (B, T, d_in)) -> (h (B, T, N * d_g), alpha (B, N, T, T))``.
    """

    def __init__(self, d_in: int, num_heads: int, d_k: int, d_v: int | None = None, *,
                 g: Callable[[Tensor], Tensor] | None = None, bias: bool = False) -> None:
        super().__init__()
        check_int(num_heads, "num_heads")
        if g is not None and not callable(g):
            raise TypeError(f"g must be callable or None, got {type(g).__name__}")
        self.heads = nn.ModuleList(KeyValueAttention(d_in, d_k, d_v, bias=bias)
                                   for _ in range(num_heads))
        self.g = nn.Identity() if g is None else g

    def forward(self, fx: Tensor) -> tuple[Tensor, Tensor]:
        outputs = [head(fx) for head in self.heads]  # N x ((B, T, d_v), (B, T, T))
        h = torch.cat([self.g(h_n) for h_n, _ in outputs], dim=-1)  # (B, T, N * d_g)
        alpha = torch.stack([a_n for _, a_n in outputs], dim=1)  # (B, N, T, T)
        return h, alpha


def add_positions(fx: Tensor) -> Tensor:
    """Step 4: give attention a sense of order, ``f(x_t) + PE_t``.

    Attention treats its keys as a set: permuting the inputs permutes the outputs (apart
    from the causal mask, which only says who came first, not how far back). Adding the
    sinusoidal encoding :func:`seqlearn.positional.sinusoidal_positional_encoding`
    makes the scores depend on positions. fx (B, T, D) -> (B, T, D).
    """
    _check_features(fx)
    check_nonempty(fx, "fx", "B T D", "D")  # a position needs at least one feature
    T, D = fx.shape[-2:]
    # (B, T, D)
    return fx + sinusoidal_positional_encoding(T, D, dtype=fx.dtype, device=fx.device)
