"""Truncated backpropagation through time for the single-layer Elman RNN (chapter :doc:`bptt`).

``k``-step truncation (Williams and Peng 1990, BPTT(k, k)): the sequence is cut into chunks
``[0, k), [k, 2k), ...`` and the gradient "from the future" of eq-bptt-dh is set to zero where
a chunk starts, so every loss sends gradient back only to the steps of its own chunk::

    dh(t)  = dz2(t) W2 + [t+1 is not a chunk start] dz1(t+1) W11      (eq-bptt-trunc)
    dz1(t) = dh(t) * (1 - h(t)**2)

and the parameter gradients accumulate from these ``dz1(t)`` as in eq-bptt-dW11 and
eq-bptt-dW1. This is the gradient autograd computes when the state is detached
(``h = h.detach()``) before every step ``t = k, 2k, ...``. ``k = 1`` treats ``h(t-1)`` as a
constant input, as Elman (1990) trained his context units; ``k >= T`` is the full gradient of
:func:`seqlearn.bptt.rnn_backward`. The initial state ``h(-1)`` belongs to the first chunk, so
its gradient is ``dz1(0) W11`` for every ``k``.
"""

from __future__ import annotations

import numpy as np

from seqlearn.validate import check_int
from seqlearn.bptt.params import Array
from seqlearn.bptt.rnn import _check_cache, _check_dy


def pre_activation_gradients(dy: Array, cache: dict, k: int | None = None) -> Array:
    """``dz1 (B, T, H)``: the gradients of the pre-activations ``z1(t)``, cut every ``k`` steps.

    ``cache`` comes from :func:`seqlearn.bptt.rnn_forward`; ``dy (B, T, O)`` is
    ``dLoss/dy(t)``. ``k=None`` (or ``k >= T``) gives the untruncated sweep (eq-bptt-dh,
    eq-bptt-dz1); an integer ``k >= 1`` drops the term from the future at every chunk start
    ``t + 1 = k, 2k, ...`` (eq-bptt-trunc).
    """
    _check_cache(cache, "rnn_forward")
    _check_dy(dy, cache)
    if k is not None:
        check_int(k, "k")
    h, p = cache["h"], cache["params"]
    B, T, H = h.shape
    dz = np.empty_like(h)                            # (B, T, H)
    from_future = np.zeros((B, H), dtype=h.dtype)    # dz1(T) W11 = 0
    for t in reversed(range(T)):
        if k is not None and (t + 1) % k == 0:       # t+1 starts a chunk: cut
            from_future = np.zeros_like(from_future)
        dh_t = dy[:, t] @ p["W2"] + from_future      # eq-bptt-dh / eq-bptt-trunc: (B, H)
        dz[:, t] = dh_t * (1.0 - h[:, t] ** 2)       # eq-bptt-dz1
        from_future = dz[:, t] @ p["W11"]            # read at step t-1
    return dz


def truncated_rnn_backward(dy: Array, cache: dict, k: int) -> dict[str, Array]:
    """``k``-step truncated BPTT for :func:`seqlearn.bptt.rnn_forward`.

    Returns the gradients of ``W1, W11, b1, W2, b2, x, h0`` (the keys of
    :func:`seqlearn.bptt.rnn_backward`) of the truncated sweep eq-bptt-trunc; ``k >= 1``.
    The output layer is not recurrent and keeps its exact gradient.
    """
    check_int(k, "k")
    dz = pre_activation_gradients(dy, cache, k)                     # (B, T, H)
    x, h, p = cache["x"], cache["h"], cache["params"]
    h_prev = np.concatenate([cache["layer"]["h0"][:, None], h[:, :-1]], axis=1)  # (B, T, H)
    return {"W1": np.einsum("bti,btj->ij", dz, x),                 # eq-bptt-dW1: (H, D)
            "W11": np.einsum("bti,btj->ij", dz, h_prev),           # eq-bptt-dW11: (H, H)
            "b1": dz.sum(axis=(0, 1)),                              # (H,)
            "W2": np.einsum("bto,btj->oj", dy, h),                  # eq-bptt-dW2: (O, H)
            "b2": dy.sum(axis=(0, 1)),                              # (O,)
            "x": dz @ p["W1"],                                      # eq-bptt-dx: (B, T, D)
            "h0": dz[:, 0] @ p["W11"]}                              # eq-bptt-dh0: (B, H)


def recurrent_gradient_terms(dy: Array, cache: dict) -> Array:
    """``G (T, H, H)``: the term that step ``t`` adds to ``dLoss/dW11`` (eq-bptt-dW11).

    ``G[t] = sum_b dz1(t)^T h(t-1)^T``, summed over the batch; ``G.sum(0)`` is the
    ``W11`` gradient of :func:`seqlearn.bptt.rnn_backward`. ``G[t]`` is the gradient of a
    private copy of ``W11`` used at step ``t`` only. When the loss reads the last output
    only, ``G[t]`` is what the loss ``T - 1 - t`` steps later teaches ``W11``.
    """
    dz = pre_activation_gradients(dy, cache)                        # (B, T, H)
    h = cache["h"]
    h_prev = np.concatenate([cache["layer"]["h0"][:, None], h[:, :-1]], axis=1)  # (B, T, H)
    return np.einsum("bti,btj->tij", dz, h_prev)
