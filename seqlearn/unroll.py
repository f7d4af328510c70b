r"""The GRU update unrolled: every state is a weighted sum of candidates (chapter ``gru_to_attention``).

Convention (the GRU-to-Transformer notes, the NYU notes and ``torch.nn.GRU``): ``u_t`` is the **keep** gate,

.. math::

    h_t = u_t \odot h_{t-1} + (1 - u_t) \odot \tilde h_t                        \qquad (eq-g2a-update)

so ``u_t = 1`` copies the past and ``u_t = 0`` replaces it by the candidate ``\tilde h_t``.
Unrolling the recursion down to ``h_0`` gives (indices ``1..T`` in the text, ``0..T-1`` in code)

.. math::

    h_t = \sum_{i=1}^{t} \alpha_{t,i} \odot \tilde h_i + \beta_t \odot h_0,\qquad
    \alpha_{t,i} = (1 - u_i) \prod_{j=i+1}^{t} u_j,\qquad
    \beta_t = \prod_{j=1}^{t} u_j                                               \qquad (eq-g2a-unrolled)

For gates in ``[0, 1]`` the weights are non-negative and ``\sum_i \alpha_{t,i} + \beta_t = 1``:
the GRU state is an *attention-weighted average* of its candidates, with weights fixed by the
gates. All products are running products (``cumprod``), never ratios, so ``u = 0`` is exact.
"""

from __future__ import annotations

import torch

from seqlearn.gated import GRU
from seqlearn.masks import causal_mask
from seqlearn.scan import _linear_scan
from seqlearn.validate import check_tensor, check_same_dtype, check_shape


def _check_gates(u: torch.Tensor, name: str = "u") -> dict:
    if not isinstance(u, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(u).__name__}")
    check_tensor(u, name)
    return check_shape(u, name, "... T H")


def gru_implied_weights(u: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    r"""Implied attention weights of the gated update, equation ``eq-g2a-unrolled``.

    Args:
        u: ``(..., T, H)`` keep gates ``u_t`` (any real values; in a GRU they lie in ``(0, 1)``).

    Returns:
        ``alpha``: ``(..., T, T, H)``, ``alpha[..., t, i, :] = (1 - u_i) * prod_{j=i+1}^{t} u_j``
        for ``i <= t`` and 0 above the diagonal (lower-triangular);
        ``beta``: ``(..., T, H)``, ``beta[..., t, :] = prod_{j<=t} u_j``, the weight of ``h_0``.
    """
    T = _check_gates(u)["T"]
    mask = causal_mask(T, device=u.device)[..., None]  # (T, T, 1): [t, i] = i <= t
    # keep[..., i, t, :] = u_t where t > i, else 1; its running product over t is
    # prod_{j=i+1}^{t} u_j for every t >= i (the empty product is 1 at t = i).
    later = ~mask  # read as [i, t]: t > i
    keep = torch.where(later, u.unsqueeze(-3), torch.ones_like(u).unsqueeze(-3))  # (..., T_i, T_t, H)
    survive = torch.cumprod(keep, dim=-2).transpose(-3, -2)  # (..., T_t, T_i, H)
    alpha = torch.where(mask, (1 - u).unsqueeze(-3) * survive, torch.zeros_like(survive))  # (..., T, T, H)
    beta = torch.cumprod(u, dim=-2)  # (..., T, H)
    return alpha, beta


def apply_implied_weights(alpha: torch.Tensor, beta: torch.Tensor,
                          h_tilde: torch.Tensor,
                          h0: torch.Tensor | None = None) -> torch.Tensor:
    r"""The weighted sum ``h_t = sum_i alpha[t, i] * h~_i + beta[t] * h_0`` (``h_0 = 0``
    if None).

    Shapes: ``alpha (..., T, T, H)``, ``beta (..., T, H)``, ``h_tilde (..., T, H)``,
    ``h0 (..., H)``; returns ``h (..., T, H)``.
    """
    dims = _check_gates(h_tilde, "h_tilde")
    T, H = dims["T"], dims["H"]
    batch = tuple(h_tilde.shape[:-2])
    given = f"(h_tilde has shape {tuple(h_tilde.shape)})"
    for x, name, want in ((alpha, "alpha", batch + (T, T, H)),
                          (beta, "beta", batch + (T, H)), (h0, "h0", batch + (H,))):
        if x is None and name == "h0":
            continue
        check_tensor(x, name)
        if tuple(x.shape) != want:
            raise ValueError(f"{name} must have shape {want}, got {tuple(x.shape)} "
                             f"{given}")
        check_same_dtype(name, x, "h_tilde", h_tilde)
    h = torch.einsum("...tih,...ih->...th", alpha, h_tilde)  # (..., T, H)
    if h0 is not None:
        h = h + beta * h0.unsqueeze(-2)  # (..., T, H)
    return h


def gru_update_loop(u: torch.Tensor, h_tilde: torch.Tensor,
                    h0: torch.Tensor | None = None,
                    method: str = "sequential") -> torch.Tensor:
    r"""All states of the gated update ``eq-g2a-update`` for given gates and candidates.

    It is the linear recurrence ``h_t = a_t h_{t-1} + b_t`` with ``a_t = u_t`` and
    ``b_t = (1 - u_t) * h~_t``, so it is :func:`seqlearn.scan.linear_scan` (``method``
    as there). Shapes: ``u, h_tilde (..., T, H)``, ``h0 (..., H)`` or None; returns
    ``(..., T, H)``.
    """
    _check_gates(u)
    if not isinstance(h_tilde, torch.Tensor) or h_tilde.shape != u.shape:
        raise ValueError(f"h_tilde must have the shape of u {tuple(u.shape)}, "
                         f"got {tuple(getattr(h_tilde, 'shape', ()))}")
    check_tensor(h_tilde, "h_tilde")
    check_same_dtype("u", u, "h_tilde", h_tilde)
    return _linear_scan(u, (1 - u) * h_tilde, h0, method, None,
                        ("u", "(1 - u) * h_tilde", "h0"))


def notes_printed_weights(u: torch.Tensor) -> torch.Tensor:
    r"""The weights as printed in the GRU-to-Transformer notes, kept to show that they are wrong.

    The notes print ``h_t = sum_{i=1}^{t} (prod_{j=1}^{t-i+1} u_j) (prod_{k=1}^{i-1} (1 - u_k)) h~_i``
    (with ``h_0 = 0``). Returns those weights, ``(..., T, T, H)``, lower-triangular like
    :func:`gru_implied_weights`, whose ``alpha`` is the correct version.
    """
    T = _check_gates(u)["T"]
    idx = torch.arange(T, device=u.device)
    lag = (idx[:, None] - idx[None, :]).clamp(min=0)  # (T, T): t - i (1-based: t - i + 1 terms)
    first = torch.cumprod(u, dim=-2)[..., lag, :]  # (..., T, T, H): u_1 ... u_{t-i+1}
    one_minus = torch.cumprod(1 - u, dim=-2)  # (..., T, H)
    before = torch.cat([torch.ones_like(u[..., :1, :]), one_minus[..., :-1, :]], dim=-2)  # prod_{k<i}
    weights = first * before.unsqueeze(-3)  # (..., T, T, H)
    return torch.where(causal_mask(T, device=u.device)[..., None], weights, torch.zeros_like(weights))



def gru_gates(gru: torch.nn.Module, x: torch.Tensor, h0: torch.Tensor | None = None
              ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    r"""Keep gates, candidates and states of a one-layer GRU along its trajectory.

    ``gru`` is a ``torch.nn.GRU`` (``batch_first=True``) or a
    :class:`seqlearn.gated.GRU`, with one layer and one direction. In torch's notation

    .. math::

        z_t = \sigma(W_{iz} x_t + b_{iz} + W_{hz} h_{t-1} + b_{hz}),\quad
        n_t = \tanh(W_{in} x_t + b_{in} + r_t \odot (W_{hn} h_{t-1} + b_{hn})),\quad
        h_t = (1 - z_t) \odot n_t + z_t \odot h_{t-1},

    so torch's ``z`` is the keep gate ``u`` of ``eq-g2a-update`` and ``n`` is the
    candidate ``h~``. The steps are those of :class:`seqlearn.gated.GRUCell` (weights
    copied by ``from_torch``).

    Args:
        gru: the network. x: ``(B, T, D)`` inputs. h0: ``(B, H)`` initial state or None
        (zeros).

    Returns:
        ``(u, h_tilde, h)``, each ``(B, T, H)``; ``h`` equals ``gru(x)[0]``.
    """
    if isinstance(gru, torch.nn.GRU):
        if not gru.batch_first:
            raise ValueError("gru must be built with batch_first=True (x is (B, T, D))")
        gru = GRU.from_torch(gru)
    if not isinstance(gru, GRU):
        raise TypeError(f"gru must be a torch.nn.GRU or seqlearn.gated.GRU, got "
                        f"{type(gru).__name__}")
    if gru.num_layers != 1 or gru.bidirectional:
        raise ValueError("gru must have one layer and one direction, got "
                         f"num_layers={gru.num_layers}, "
                         f"bidirectional={gru.bidirectional}")
    cell = gru.cells[0]
    check_tensor(x, "x")
    dims = check_shape(x, "x", "B T D", sizes={"D": gru.input_size})
    check_same_dtype("x", x, "the GRU's weights", cell.weight_ih)
    h = x.new_zeros(dims["B"], gru.hidden_size) if h0 is None else h0  # (B, H)
    check_shape(h, "h0", "B H", sizes={"B": dims["B"], "H": gru.hidden_size})
    check_same_dtype("h0", h, "the GRU's weights", cell.weight_ih)
    gx = cell.project_input(x)  # (B, T, 3H): the input terms of every step at once
    keep, cand, states = [], [], []
    for gx_t in gx.unbind(1):  # (B, 3H)
        step = cell.gates(gx_t, h)  # r, u, n, h: each (B, H)
        h = step.h
        keep.append(step.u), cand.append(step.n), states.append(h)
    if not states:  # T = 0: no step
        empty = x.new_zeros(dims["B"], 0, gru.hidden_size)  # (B, 0, H)
        return empty, empty.clone(), empty.clone()
    # (B, T, H) each
    return torch.stack(keep, 1), torch.stack(cand, 1), torch.stack(states, 1)
