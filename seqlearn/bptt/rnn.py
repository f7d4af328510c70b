"""Backpropagation through time for Elman RNNs, by hand, in NumPy (no autograd).

Notation of the chapter :doc:`bptt` (the CMU 11-785 notes). For a batch of row vectors, a matrix ``W``
acting on column vectors acts as ``x @ W.T``; gradients are row vectors.

Forward pass (eq-bptt-z1, eq-bptt-h, eq-bptt-y), for ``t = 0 .. T-1`` from the state ``h(-1)``::

    z1(t) = W1 x(t) + W11 h(t-1) + b1        h(t) = tanh(z1(t))
    z2(t) = W2 h(t) + b2                      y(t) = z2(t)            (identity output)

Backward pass from ``dy(t) = dLoss/dy(t)`` and ``dz1(T) = 0`` (eq-bptt-dz2 ... eq-bptt-dh0)::

    dz2(t) = dy(t)
    dh(t)  = dz2(t) W2 + dz1(t+1) W11         (from the output and from the future)
    dz1(t) = dh(t) * (1 - h(t)**2)
    dW2 <-+ dz2(t)^T h(t)^T     db2 <-+ dz2(t)
    dW11 <-+ dz1(t)^T h(t-1)^T  dW1 <-+ dz1(t)^T x(t)^T   db1 <-+ dz1(t)
    dx(t) = dz1(t) W1           dh(-1) = dz1(0) W11

The recurrence alone (inputs -> hidden states) is :func:`rnn_layer_forward` /
:func:`rnn_layer_backward`. The single-layer network, the stacked network (``h^(0) = x``) and
the bidirectional network are all built from those two functions; parameter names follow
:mod:`seqlearn.bptt.params`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from seqlearn.validate import check_bool
from seqlearn.bptt.params import (MAX_LAYERS, Array, Params, check_array, check_keys,
                                  check_params, param_names, suffixes)


def _check_steps(x: Array, dims: dict[str, int]) -> None:
    if dims["T"] < 1:
        raise ValueError(f"x must have at least one time step, got shape {x.shape}")


def _check_cache(cache: Any, made_by: str) -> None:
    if not isinstance(cache, dict) or cache.get("made_by") != made_by:
        raise TypeError(f"cache must be the cache returned by {made_by}")


# --------------------------------------------------------------------------- one recurrent layer

def rnn_step(x_t: Array, h_prev: Array, W: Array, U: Array, b: Array) -> Array:
    """One step, eq-bptt-z1 and eq-bptt-h: ``h(t) = tanh(W x(t) + U h(t-1) + b)``,
    ``(B, H)``.

    ``x_t (B, D)``, ``h_prev (B, H)``, ``W (H, D)``, ``U (H, H)``, ``b (H,)``: float64
    arrays.
    """
    dims: dict[str, int] = {}
    check_array(x_t, "x_t", "B D", dims)
    for a, name, spec in ((h_prev, "h_prev", "B H"), (W, "W", "H D"), (U, "U", "H H"),
                          (b, "b", "H")):
        check_array(a, name, spec, dims, like=x_t)
    return _step(x_t, h_prev, W, U, b)


def _step(x_t: Array, h_prev: Array, W: Array, U: Array, b: Array) -> Array:
    return np.tanh(x_t @ W.T + h_prev @ U.T + b)  # (B, H)


def rnn_layer_forward(x: Array, h0: Array, W: Array, U: Array,
                      b: Array) -> tuple[Array, dict]:
    """The recurrence over ``x (B, T, D)`` from ``h0 (B, H)``: ``h (B, T, H)`` and a
    cache.

    ``W (H, D)``, ``U (H, H)``, ``b (H,)``: input, recurrent and bias parameters
    (``W1, W11, b1`` of the single-layer network). ``T = 0`` is refused
    (``ValueError``). The cache holds copies, so changing the arrays in place later
    cannot change the gradients.
    """
    dims: dict[str, int] = {}
    check_array(x, "x", "B T D", dims)
    _check_steps(x, dims)
    for a, name, spec in ((h0, "h0", "B H"), (W, "W", "H D"), (U, "U", "H H"),
                          (b, "b", "H")):
        check_array(a, name, spec, dims, like=x)
    h = np.empty((dims["B"], dims["T"], dims["H"]), dtype=x.dtype)   # (B, T, H)
    h_t = h0
    for t in range(dims["T"]):
        h_t = _step(x[:, t], h_t, W, U, b)  # rnn_step, already validated
        h[:, t] = h_t
    saved = {k: v.copy() for k, v in (("x", x), ("h0", h0), ("W", W), ("U", U),
                                      ("b", b))}
    return h, {**saved, "h": h, "made_by": "rnn_layer_forward"}


def rnn_layer_backward(dh: Array, cache: dict) -> dict[str, Array]:
    """BPTT through one recurrent layer: gradients of ``x, h0, W, U, b``.

    ``dh (B, T, H)`` is the gradient reaching each ``h(t)`` from *outside* the recurrence (the
    output layer, or the layer above). The sweep ``t = T-1 .. 0`` adds the gradient from the
    future, ``dz(t+1) U`` (eq-bptt-dh); parameter gradients accumulate over time (``<-+``).
    """
    _check_cache(cache, "rnn_layer_forward")
    x, h, W, U = cache["x"], cache["h"], cache["W"], cache["U"]
    B, T, H = h.shape
    check_array(dh, "dh", "B T H", {"B": B, "T": T, "H": H}, like=x)
    h_prev = np.concatenate([cache["h0"][:, None], h[:, :-1]], axis=1)  # h(t-1): (B, T, H)
    dW, dU, db = np.zeros_like(W), np.zeros_like(U), np.zeros_like(cache["b"])
    dx = np.empty_like(x)                          # (B, T, D)
    from_future = np.zeros_like(h[:, 0])           # dz(T) U = 0: (B, H)
    for t in reversed(range(T)):
        dh_t = dh[:, t] + from_future              # eq-bptt-dh
        dz_t = dh_t * (1.0 - h[:, t] ** 2)         # eq-bptt-dz1: tanh' = 1 - tanh^2
        dW += dz_t.T @ x[:, t]                     # eq-bptt-dW1: (H, D)
        dU += dz_t.T @ h_prev[:, t]                # eq-bptt-dW11: (H, H)
        db += dz_t.sum(axis=0)                     # eq-bptt-dW1, bias: (H,)
        dx[:, t] = dz_t @ W                        # eq-bptt-dx: (B, D)
        from_future = dz_t @ U                     # dz(t) U, used at step t-1
    return {"x": dx, "h0": from_future, "W": dW, "U": dU, "b": db}   # h0: eq-bptt-dh0


def _direction_forward(x: Array, h0: Array, W: Array, U: Array, b: Array,
                       reverse: bool) -> tuple[Array, dict]:
    """A layer reading time forwards, or backwards (the same layer on the reversed input)."""
    if not reverse:
        return rnn_layer_forward(x, h0, W, U, b)
    h, cache = rnn_layer_forward(x[:, ::-1], h0, W, U, b)
    return h[:, ::-1], cache                       # back in the original time order


def _direction_backward(dh: Array, cache: dict, reverse: bool) -> dict[str, Array]:
    """Backward of :func:`_direction_forward`: a reversed layer sweeps ``t = 0 .. T-1``."""
    if not reverse:
        return rnn_layer_backward(dh, cache)
    g = rnn_layer_backward(dh[:, ::-1], cache)
    return {**g, "x": g["x"][:, ::-1]}


# --------------------------------------------------------------------------- output layer

def _output_forward(h: Array, W: Array, b: Array) -> Array:
    """eq-bptt-y: ``y(t) = z2(t) = W2 h(t) + b2``; ``h (B, T, K) -> y (B, T, O)``."""
    return h @ W.T + b


def _output_backward(dy: Array, h: Array, W: Array) -> tuple[Array, Array, Array]:
    """eq-bptt-dz2 and eq-bptt-dW2 for all ``t`` at once: ``dh (B, T, K), dW (O, K), db (O,)``."""
    dz2 = dy                                       # identity output: dz2 = dy
    return dz2 @ W, np.einsum("bto,btk->ok", dz2, h), dz2.sum(axis=(0, 1))


def _check_dy(dy: Any, cache: dict) -> None:
    B, T, O = cache["y_shape"]
    check_array(dy, "dy", "B T O", {"B": B, "T": T, "O": O}, like=cache["x"])


# --------------------------------------------------------------------------- single layer

def rnn_forward(x: Array, h0: Array, params: Params) -> tuple[Array, dict]:
    """The single-hidden-layer RNN: ``x (B, T, D)`` and ``h0 = h(-1) (B, H)`` -> ``y (B, T, O)``.

    ``params``: ``W1 (H, D)``, ``W11 (H, H)``, ``b1 (H,)``, ``W2 (O, H)``, ``b2 (O,)``.
    """
    dims: dict[str, int] = {}
    check_array(x, "x", "B T D", dims)
    _check_steps(x, dims)
    check_array(h0, "h0", "B H", dims, like=x)
    check_params(params, 1, False, dims, x)
    params = {k: v.copy() for k, v in params.items()}  # the cache must not see later edits
    h, layer = rnn_layer_forward(x, h0, params["W1"], params["W11"], params["b1"])  # (B, T, H)
    y = _output_forward(h, params["W2"], params["b2"])                               # (B, T, O)
    return y, {"x": layer["x"], "layer": layer, "h": h, "params": params, "y_shape": y.shape,
               "made_by": "rnn_forward"}


def rnn_backward(dy: Array, cache: dict) -> dict[str, Array]:
    """BPTT for :func:`rnn_forward`: gradients of ``W1, W11, b1, W2, b2, x, h0``.

    First the output layer for every ``t`` (it does not depend on the recurrence), then one
    sweep ``t = T-1 .. 0`` through the recurrence (:func:`rnn_layer_backward`).
    """
    _check_cache(cache, "rnn_forward")
    _check_dy(dy, cache)
    dh, dW2, db2 = _output_backward(dy, cache["h"], cache["params"]["W2"])  # dh: (B, T, H)
    g = rnn_layer_backward(dh, cache["layer"])
    return {"W1": g["W"], "W11": g["U"], "b1": g["b"], "W2": dW2, "b2": db2,
            "x": g["x"], "h0": g["h0"]}


# --------------------------------------------------------------------------- stacked, bidirectional

def _layers_in(params: Any, bidirectional: bool) -> int:
    """The number of layers of ``params`` when it holds exactly the names of some depth
    (:func:`param_names`), else 0: then :func:`check_params` names what is missing."""
    if not isinstance(params, dict):
        return 0
    s = suffixes(bidirectional)[0]
    n = 0
    while n < MAX_LAYERS and f"W{n + 1}{n + 1}{s}" in params:
        n += 1
    return n if n and set(params) == set(param_names(n, bidirectional)) else 0


def deep_rnn_forward(x: Array, h0: Array, params: Params,
                     bidirectional: bool = False) -> tuple[Array, dict]:
    """The stacked RNN (``h^(0) = x``), optionally bidirectional in every layer.

    ``h0 (L*dirs, B, H)``: initial states in the order of ``torch.nn.RNN`` (layer-major, then
    direction). Layer ``i`` reads ``h^(i-1)(t)`` (both directions concatenated,
    ``(B, T, dirs*H)``); the output layer ``W{n+1}`` reads the top layer. ``y (B, T, O)``.
    """
    dirs = 2 if check_bool(bidirectional, "bidirectional") else 1
    dims: dict[str, int] = {}
    check_array(x, "x", "B T D", dims)
    _check_steps(x, dims)
    check_array(h0, "h0", "S B H", dims, like=x)
    n = _layers_in(params, bidirectional)
    if n and dims["S"] != n * dirs:  # the layers are those of params: h0 must match
        raise ValueError(f"h0 must have shape (L*{dirs}, B, H), got {tuple(h0.shape)}: "
                         f"params has L={n} layer(s), so h0 needs {n * dirs} states "
                         f"(one per layer and direction)")
    if dims["S"] % dirs:
        raise ValueError(f"h0 must have shape (L*{dirs}, B, H), got {h0.shape}")
    n = dims["S"] // dirs
    names = check_params(params, n, bidirectional, dims, x)
    params = {k: v.copy() for k, v in params.items()}  # the cache must not see later edits
    layers, h = [], x                                        # h^(0) = x: (B, T, D)
    for i in range(1, n + 1):
        outs, caches = [], []
        for d, s in enumerate(suffixes(bidirectional)):
            out, c = _direction_forward(h, h0[(i - 1) * dirs + d], params[f"W{i}{s}"],
                                        params[f"W{i}{i}{s}"], params[f"b{i}{s}"], d == 1)
            outs.append(out)
            caches.append(c)
        layers.append(caches)
        h = np.concatenate(outs, axis=-1)                    # h^(i): (B, T, dirs*H)
    y = _output_forward(h, params[names[-2]], params[names[-1]])   # (B, T, O)
    return y, {"x": x, "layers": layers, "h": h, "params": params,
               "bidirectional": bidirectional, "y_shape": y.shape, "made_by": "deep_rnn_forward"}


def deep_rnn_backward(dy: Array, cache: dict) -> dict[str, Array]:
    """BPTT for :func:`deep_rnn_forward`, one layer at a time from the top.

    The output layer gives the gradient of every ``h^(n)(t)``. Then, for ``i = n .. 1``, layer
    ``i`` is swept completely: the forward-in-time direction from ``t = T-1`` down to ``0``,
    then (if bidirectional) the backward-in-time direction from ``t = 0`` up to ``T-1``. The
    input gradients of both directions add up to the gradient of ``h^(i-1)(t)`` for every
    ``t``, which layer ``i-1`` needs before its own sweep can start.
    """
    _check_cache(cache, "deep_rnn_forward")
    _check_dy(dy, cache)
    params, bi, n = cache["params"], cache["bidirectional"], len(cache["layers"])
    names, dirs = param_names(n, bi), suffixes(bi)
    grads: dict[str, Array] = {}
    dh, grads[names[-2]], grads[names[-1]] = _output_backward(dy, cache["h"], params[names[-2]])
    dh0: list[Array] = [np.empty(0)] * (n * len(dirs))      # torch's order: layer, direction
    for i in range(n, 0, -1):
        H = cache["layers"][i - 1][0]["h"].shape[2]
        d_below = 0.0
        for d, s in enumerate(dirs):
            g = _direction_backward(dh[..., d * H:(d + 1) * H], cache["layers"][i - 1][d], d == 1)
            grads[f"W{i}{s}"], grads[f"W{i}{i}{s}"], grads[f"b{i}{s}"] = g["W"], g["U"], g["b"]
            dh0[(i - 1) * len(dirs) + d] = g["h0"]
            d_below = d_below + g["x"]                       # both directions read h^(i-1)(t)
        dh = d_below                                         # of h^(i-1): (B, T, dirs*H)
    grads["x"], grads["h0"] = dh, np.stack(dh0)
    return {k: grads[k] for k in names + ["x", "h0"]}


def birnn_forward(x: Array, h0: Array, params: Params) -> tuple[Array, dict]:
    """A single-layer bidirectional RNN, ``h0 (2, B, H)`` (forward, then backward direction).

    ``params``: ``W1_f, W11_f, b1_f, W1_b, W11_b, b1_b``, ``W2 (O, 2H)``, ``b2``;
    ``y(t) = W2 [h_f(t); h_b(t)] + b2``. Same as ``deep_rnn_forward(..., bidirectional=True)``.
    """
    return deep_rnn_forward(x, h0, params, bidirectional=True)


def birnn_backward(dy: Array, cache: dict) -> dict[str, Array]:
    """BPTT for :func:`birnn_forward`: ``h_f`` swept from ``T-1`` to 0, then ``h_b`` from 0."""
    return deep_rnn_backward(dy, cache)


# --------------------------------------------------------------------------- Jacobians through time

def hidden_jacobians(cache: dict) -> Array:
    """``J (B, T, H, H)`` with ``J[:, t] = d h(t) / d h(-1)``, from :func:`rnn_forward`'s cache.

    eq-bptt-jacobian: ``diag(1 - h(t)^2) W11 ... diag(1 - h(0)^2) W11``. A cache of
    :func:`rnn_layer_forward` works too.
    """
    if isinstance(cache, dict) and cache.get("made_by") == "rnn_forward":
        cache = cache["layer"]
    _check_cache(cache, "rnn_layer_forward")
    h, U = cache["h"], cache["U"]
    B, T, H = h.shape
    J = np.empty((B, T, H, H), dtype=h.dtype)
    P = np.broadcast_to(np.eye(H, dtype=h.dtype), (B, H, H))
    for t in range(T):
        P = (1.0 - h[:, t, :, None] ** 2) * (U @ P)        # diag(1 - h(t)^2) W11 P: (B, H, H)
        J[:, t] = P
    return J
