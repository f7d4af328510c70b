"""The LSTM and its backpropagation through time, by hand (NumPy, no autograd).

Notation of the CMU 11-785 notes and of the chapter :doc:`lstm`. Vectors are columns,
matrices act on them from the left; a batch stores one vector per row, so ``W v`` becomes
``v @ W.T``. Gradients ``∇_v = ∂L/∂v`` are *row* vectors, so they flow backwards as ``∇ @ W``.

Forward pass (book equations ``eq-lstm-gates`` … ``eq-lstm-hidden``); the peephole terms
``W_c* c`` are present only when the parameters hold ``W_ci, W_cf, W_co`` (Gers et al., 2002)::

    a^i_t = W_xi x_t + W_hi h_{t-1} + W_ci c_{t-1} + b_i        i_t = σ(a^i_t)
    a^f_t = W_xf x_t + W_hf h_{t-1} + W_cf c_{t-1} + b_f        f_t = σ(a^f_t)
    a^c_t = W_xc x_t + W_hc h_{t-1}                + b_c        c~_t = tanh(a^c_t)
    c_t   = f_t ⊙ c_{t-1} + i_t ⊙ c~_t
    a^o_t = W_xo x_t + W_ho h_{t-1} + W_co c_t     + b_o        o_t = σ(a^o_t)
    m_t   = tanh(c_t)
    h_t   = o_t ⊙ m_t

Backward pass (book equations ``eq-lstm-b1`` … ``eq-lstm-b10``), for t = T, …, 1 (array index
``t - 1``), starting from ``∇^fut_{h_T} = ∇^fut_{c_T} = 0``; ``dh_t`` is the gradient ``∂L/∂h_t``
that reaches ``h_t`` directly (from the loss at step t, not through later steps)::

    ∇_{h_t}  = dh_t + ∇^fut_{h_t}                                   (B1)
    ∇_{o_t}  = ∇_{h_t} ⊙ m_t,        ∇_{m_t} = ∇_{h_t} ⊙ o_t         (B2)
    δ^o_t    = ∇_{o_t} ⊙ o_t ⊙ (1 - o_t)                            (B3)
    ∇_{c_t}  = ∇_{m_t} ⊙ (1 - m_t²) + δ^o_t W_co + ∇^fut_{c_t}      (B4)
    ∇_{i_t}  = ∇_{c_t} ⊙ c~_t,  ∇_{f_t} = ∇_{c_t} ⊙ c_{t-1},  ∇_{c~_t} = ∇_{c_t} ⊙ i_t   (B5)
    δ^i_t = ∇_{i_t} ⊙ i_t ⊙ (1 - i_t),  δ^f_t = ∇_{f_t} ⊙ f_t ⊙ (1 - f_t),
    δ^c_t = ∇_{c~_t} ⊙ (1 - c~_t²)                                  (B6)
    ∇^fut_{h_{t-1}} = δ^i_t W_hi + δ^f_t W_hf + δ^o_t W_ho + δ^c_t W_hc          (B7)
    ∇^fut_{c_{t-1}} = ∇_{c_t} ⊙ f_t + δ^i_t W_ci + δ^f_t W_cf                    (B8)
    ∇_{x_t}  = δ^i_t W_xi + δ^f_t W_xf + δ^o_t W_xo + δ^c_t W_xc                 (B9)
    ∇_{W_xg} += (δ^g_t)ᵀ x_tᵀ,  ∇_{W_hg} += (δ^g_t)ᵀ h_{t-1}ᵀ,  ∇_{b_g} += δ^g_t   (g = i, f, o, c)
    ∇_{W_ci} += (δ^i_t)ᵀ c_{t-1}ᵀ,  ∇_{W_cf} += (δ^f_t)ᵀ c_{t-1}ᵀ,  ∇_{W_co} += (δ^o_t)ᵀ c_tᵀ   (B10)

and finally ``∇_{h_0} = ∇^fut_{h_0}``, ``∇_{c_0} = ∇^fut_{c_0}``. Without peepholes the terms
with ``W_ci, W_cf, W_co`` vanish. The peephole-free cell is ``torch.nn.LSTM`` with
``b_g = b_ih + b_hh``; ``seqlearn.gated.LSTMCell.to_bptt_params`` copies any cell into these names.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from seqlearn.bptt.params import check_array, check_keys
from seqlearn.validate import check_floating

GATES = ("i", "f", "o", "c")  # input, forget, output gate; candidate c~ (CMU 11-785 names)
PEEPHOLES = ("W_ci", "W_cf", "W_co")  # i and f see c_{t-1}, o sees c_t
BASE_KEYS = tuple(k for g in GATES for k in (f"W_x{g}", f"W_h{g}", f"b_{g}"))


def sigmoid(a: np.ndarray) -> np.ndarray:
    """σ(a) = 1 / (1 + e^{-a}) = e^{a} / (1 + e^{a}); each form used where its exponent is <= 0,
    so that nothing overflows and σ keeps full relative precision in both tails."""
    if not isinstance(a, np.ndarray):
        raise TypeError(f"a must be a numpy.ndarray, got {type(a).__name__}")
    check_floating(a, "a")
    z = np.exp(-np.abs(a))
    return np.where(a >= 0, 1.0 / (1.0 + z), z / (1.0 + z))


@dataclass(frozen=True)
class LSTMCache:
    """What :func:`lstm_backward` needs from the forward pass; arrays are ``(B, T, H)``."""

    x: np.ndarray  # (B, T, D)
    h0: np.ndarray  # (B, H)
    c0: np.ndarray  # (B, H)
    params: dict[str, np.ndarray]
    i: np.ndarray  # input gate
    f: np.ndarray  # forget gate
    o: np.ndarray  # output gate
    g: np.ndarray  # candidate c~
    c: np.ndarray  # cell state
    m: np.ndarray  # tanh(c)
    h: np.ndarray  # hidden state

    @property
    def peephole(self) -> bool:
        return "W_ci" in self.params


def _check_params(params: dict[str, np.ndarray], dims: dict[str, int], x: np.ndarray) -> bool:
    """Validate the parameter dict against ``D`` and ``H`` in ``dims``; return ``peephole``."""
    peephole = isinstance(params, dict) and bool(set(params) & set(PEEPHOLES))
    if peephole and not set(PEEPHOLES) <= set(params):
        raise ValueError(f"peepholes need all of W_ci, W_cf, W_co, got only "
                         f"{sorted(set(params) & set(PEEPHOLES))}")
    check_keys(params, list(BASE_KEYS + (PEEPHOLES if peephole else ())))
    sizes = {"D": dims["D"], "H": dims["H"], "H2": dims["H"]}
    for key, value in params.items():  # W_x* (H, D), b_* (H,), W_h* and peepholes W_c* (H, H)
        spec = "H D" if key.startswith("W_x") else "H" if key.startswith("b_") else "H H2"
        check_array(value, f"params[{key!r}]", spec, dict(sizes), like=x)
    return peephole


def lstm_forward(x: np.ndarray, h0: np.ndarray, c0: np.ndarray,
                 params: dict[str, np.ndarray]) -> tuple[np.ndarray, LSTMCache]:
    """Run the LSTM cell (``eq-lstm-gates`` … ``eq-lstm-hidden``) over ``x``; return ``(h, cache)``.

    ``x (B, T, D)``, ``h0 (B, H)``, ``c0 (B, H)``; ``params`` holds ``W_xg (H, D)``,
    ``W_hg (H, H)``, ``b_g (H,)`` for ``g`` in ``i, f, o, c`` and, for peepholes, ``W_ci, W_cf,
    W_co (H, H)``. All arrays share one floating dtype (use float64 for gradient checks).
    Returns ``h (B, T, H)`` and the cache for :func:`lstm_backward` (``cache.c`` holds the cells).
    """
    dims: dict[str, int] = {}
    check_array(x, "x", "B T D", dims)
    if dims["T"] == 0:
        raise ValueError(f"x must have at least one time step, got shape {x.shape}")
    check_array(h0, "h0", "B H", dims, like=x)
    check_array(c0, "c0", "B H", dims, like=x)
    peephole = _check_params(params, dims, x)
    p = params
    B, T, _ = x.shape
    H = dims["H"]
    out = {k: np.empty((B, T, H), dtype=x.dtype) for k in ("i", "f", "o", "g", "c", "m", "h")}
    h_prev, c_prev = h0, c0  # (B, H)
    for t in range(T):
        x_t = x[:, t]  # (B, D)
        a = {g: x_t @ p[f"W_x{g}"].T + h_prev @ p[f"W_h{g}"].T + p[f"b_{g}"] for g in GATES}  # (B, H)
        if peephole:
            a["i"] = a["i"] + c_prev @ p["W_ci"].T
            a["f"] = a["f"] + c_prev @ p["W_cf"].T
        i, f, g = sigmoid(a["i"]), sigmoid(a["f"]), np.tanh(a["c"])
        c = f * c_prev + i * g  # the additive cell path
        o = sigmoid(a["o"] + c @ p["W_co"].T) if peephole else sigmoid(a["o"])  # o sees c_t
        m = np.tanh(c)
        h = o * m
        for name, value in zip(("i", "f", "o", "g", "c", "m", "h"), (i, f, o, g, c, m, h)):
            out[name][:, t] = value
        h_prev, c_prev = h, c
    cache = LSTMCache(x=x.copy(), h0=h0.copy(), c0=c0.copy(),  # copies: later in-place
                      params={k: v.copy() for k, v in params.items()}, **out)  # edits are harmless
    return out["h"], cache


def lstm_backward(dh: np.ndarray, cache: LSTMCache) -> dict[str, np.ndarray]:
    """Backpropagate ``dh[:, t] = ∂L/∂h_t (B, T, H)`` through time, equations (B1)–(B10).

    Returns the gradients of ``L`` for every key of the parameters and for ``"x" (B, T, D)``,
    ``"h0" (B, H)`` and ``"c0" (B, H)``, each with the shape of what it differentiates.
    """
    if not isinstance(cache, LSTMCache):
        raise TypeError(f"cache must be the LSTMCache returned by lstm_forward, got {type(cache).__name__}")
    B, T, H = cache.h.shape
    check_array(dh, "dh", "B T H", {"B": B, "T": T, "H": H}, like=cache.x)
    p, x = cache.params, cache.x
    grads = {key: np.zeros_like(value) for key, value in p.items()}
    dx = np.zeros_like(x)
    dh_future = np.zeros_like(cache.h0)  # ∇^fut_{h_T} = 0, (B, H)
    dc_future = np.zeros_like(cache.c0)  # ∇^fut_{c_T} = 0, (B, H)
    for t in reversed(range(T)):
        i, f, o, g = cache.i[:, t], cache.f[:, t], cache.o[:, t], cache.g[:, t]
        c, m = cache.c[:, t], cache.m[:, t]
        h_prev = cache.h[:, t - 1] if t > 0 else cache.h0
        c_prev = cache.c[:, t - 1] if t > 0 else cache.c0
        dh_t = dh[:, t] + dh_future  # (B1)
        d_o, d_m = dh_t * m, dh_t * o  # (B2)
        delta = {"o": d_o * o * (1 - o)}  # (B3)
        dc = d_m * (1 - m**2) + dc_future  # (B4)
        if cache.peephole:
            dc = dc + delta["o"] @ p["W_co"]
        d_i, d_f, d_g = dc * g, dc * c_prev, dc * i  # (B5): gates and candidate c~
        delta["i"] = d_i * i * (1 - i)  # (B6)
        delta["f"] = d_f * f * (1 - f)
        delta["c"] = d_g * (1 - g**2)
        dh_future = sum(delta[k] @ p[f"W_h{k}"] for k in GATES)  # (B7)
        dc_future = dc * f  # (B8)
        if cache.peephole:
            dc_future = dc_future + delta["i"] @ p["W_ci"] + delta["f"] @ p["W_cf"]
        dx[:, t] = sum(delta[k] @ p[f"W_x{k}"] for k in GATES)  # (B9)
        for k in GATES:  # (B10): outer products summed over the batch
            grads[f"W_x{k}"] += delta[k].T @ x[:, t]
            grads[f"W_h{k}"] += delta[k].T @ h_prev
            grads[f"b_{k}"] += delta[k].sum(axis=0)
        if cache.peephole:
            grads["W_ci"] += delta["i"].T @ c_prev
            grads["W_cf"] += delta["f"].T @ c_prev
            grads["W_co"] += delta["o"].T @ c
    grads.update(x=dx, h0=dh_future, c0=dc_future)
    return grads
