"""Parameter names of the CMU 11-785 notes for the Elman networks of :mod:`seqlearn.bptt`, and their checks.

Layer ``i = 1 .. n`` has ``W{i}`` (input), ``W{i}{i}`` (recurrent) and ``b{i}``; the output layer
is ``W{n+1}``, ``b{n+1}``. A bidirectional layer has one set per direction, suffixed ``_f``
(forward in time) and ``_b`` (backward in time). The single-hidden-layer RNN is
``W1, W11, b1, W2, b2``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from seqlearn.validate import (check_bool, check_finite, check_floating, check_int, check_real,
                               check_rng, check_same_dtype, check_shape)

Array = np.ndarray
Params = dict[str, Array]
MAX_LAYERS = 9  # beyond nine layers the names W{i}{i} and W{i} collide ("W11")


def suffixes(bidirectional: bool) -> list[str]:
    """``["_f", "_b"]`` for a bidirectional network, ``[""]`` otherwise."""
    check_bool(bidirectional, "bidirectional")
    return ["_f", "_b"] if bidirectional else [""]


def param_names(num_layers: int = 1, bidirectional: bool = False) -> list[str]:
    """All parameter names, layer by layer and direction by direction, the output layer last.

    ``param_names(1) == ["W1", "W11", "b1", "W2", "b2"]``.
    """
    if (not isinstance(num_layers, (int, np.integer)) or isinstance(num_layers, bool)
            or not 1 <= num_layers <= MAX_LAYERS):
        raise ValueError(f"num_layers must be an int in 1..{MAX_LAYERS}, got {num_layers!r}")
    num_layers = int(num_layers)
    names = [f"{w}{s}" for i in range(1, num_layers + 1) for s in suffixes(bidirectional)
             for w in (f"W{i}", f"W{i}{i}", f"b{i}")]
    return names + [f"W{num_layers + 1}", f"b{num_layers + 1}"]


def init_params(input_size: int, hidden_size: int, output_size: int, rng: np.random.Generator,
                *, num_layers: int = 1, bidirectional: bool = False, scale: float = 1.0,
                orthogonal: bool = False) -> Params:
    """Random float64 parameters named by :func:`param_names`.

    Every matrix is drawn from ``N(0, 1/fan_in)``; the recurrent matrices ``W{i}{i}`` are then
    multiplied by ``scale``, or, with ``orthogonal=True``, are ``scale`` times a random
    orthogonal matrix (all singular values equal to ``scale``; Saxe et al. 2014).
    Biases are ``0.1 * N(0, 1)``.
    """
    check_rng(rng)
    param_names(num_layers, bidirectional)                  # validates num_layers
    for value, name in ((input_size, "input_size"), (hidden_size, "hidden_size"),
                        (output_size, "output_size")):
        check_int(value, name)
    check_real(scale, "scale")
    check_bool(orthogonal, "orthogonal")
    dirs, H = (2 if bidirectional else 1), hidden_size
    params: Params = {}
    for i in range(1, num_layers + 1):
        fan_in = input_size if i == 1 else dirs * H
        for s in suffixes(bidirectional):
            params[f"W{i}{s}"] = rng.standard_normal((H, fan_in)) / np.sqrt(fan_in)
            params[f"W{i}{i}{s}"] = scale * (orthogonal_matrix(H, rng) if orthogonal
                                             else rng.standard_normal((H, H)) / np.sqrt(H))
            params[f"b{i}{s}"] = 0.1 * rng.standard_normal(H)
    n = num_layers + 1
    params[f"W{n}"] = rng.standard_normal((output_size, dirs * H)) / np.sqrt(dirs * H)
    params[f"b{n}"] = 0.1 * rng.standard_normal(output_size)
    return params


def orthogonal_matrix(n: int, rng: np.random.Generator) -> Array:
    """A Haar-random orthogonal ``(n, n)`` matrix: QR of a Gaussian matrix, signs of R fixed."""
    check_int(n, "n")
    check_rng(rng)
    q, r = np.linalg.qr(rng.standard_normal((n, n)))
    return q * np.sign(np.diag(r))


# --------------------------------------------------------------------------- validation

def check_array(a: Any, name: str, spec: str, bound: dict[str, int],
                like: Array | None = None) -> None:
    """A finite floating NumPy array of shape ``spec``, sizes shared through ``bound``.

    Without ``like`` (the input ``x`` itself) the dtype must be float64; with ``like``, the
    dtype must equal that of ``like``.
    """
    if not isinstance(a, np.ndarray):
        raise TypeError(f"{name} must be a numpy.ndarray, got {type(a).__name__}")
    check_floating(a, name)
    if like is not None:
        check_same_dtype(name, a, "x", like)
    elif a.dtype != np.float64:
        raise TypeError(f"{name} must be a float64 array (the hand-derived gradients are checked "
                        f"to 1e-10 in float64), got dtype {a.dtype}")
    check_shape(a, name, spec, bound=bound)
    check_finite(a, name)


def check_keys(params: Any, expected: list[str]) -> None:
    """``params`` must be a dict with exactly the keys ``expected``."""
    if not isinstance(params, dict):
        raise TypeError(f"params must be a dict of arrays, got {type(params).__name__}")
    missing = [k for k in expected if k not in params]
    extra = sorted(set(params) - set(expected))
    if missing or extra:
        raise ValueError(f"params must have keys {expected}, missing {missing}, unexpected {extra}")


def check_params(params: Any, num_layers: int, bidirectional: bool, dims: dict[str, int],
                 x: Array) -> list[str]:
    """Check the names, shapes and dtypes of a network's parameters; return the names.

    ``dims`` holds the input size ``D`` and the hidden size ``H`` (ints).
    """
    if not isinstance(dims, dict):
        raise TypeError(f"dims must be a dict with the sizes D and H, got "
                        f"{type(dims).__name__}")
    for key in ("D", "H"):
        if key not in dims:
            raise ValueError(f"dims must hold the sizes D (input) and H (hidden), got "
                             f"keys {sorted(map(str, dims))}")
        check_int(dims[key], f"dims[{key!r}]", minimum=0)
    names = param_names(num_layers, bidirectional)
    check_keys(params, names)
    H, K = dims["H"], (2 if bidirectional else 1) * dims["H"]
    for i in range(1, num_layers + 1):
        fan_in = dims["D"] if i == 1 else K
        for s in suffixes(bidirectional):
            check_array(params[f"W{i}{s}"], f"W{i}{s}", "H K", {"H": H, "K": fan_in}, like=x)
            check_array(params[f"W{i}{i}{s}"], f"W{i}{i}{s}", "H H", {"H": H}, like=x)
            check_array(params[f"b{i}{s}"], f"b{i}{s}", "H", {"H": H}, like=x)
    out: dict[str, int] = {"K": K}
    check_array(params[names[-2]], names[-2], "O K", out, like=x)
    check_array(params[names[-1]], names[-1], "O", out, like=x)
    return names
