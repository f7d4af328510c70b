"""Gradient-norm clipping (Pascanu et al. 2013, Algorithm 1) for dictionaries of NumPy gradients.

eq-bptt-clip: with ``g`` all gradients stacked into one vector and a threshold ``c``::

    g <- g * min(1, c / (||g|| + eps))

The direction of the step is kept; only its length is capped. ``eps = 1e-6`` as in
``torch.nn.utils.clip_grad_norm_``, so both give the same numbers; as there, float16
squares are summed in float32 (a float16 sum of squares overflows from ``||g|| = 256``).
"""

from __future__ import annotations

import numpy as np

from seqlearn.validate import check_finite, check_floating, check_real


def global_norm(grads: dict[str, np.ndarray]) -> float:
    """The Euclidean norm of all arrays in ``grads`` taken together,
    ``sqrt(sum_k ||g_k||^2)``.

    Each array's sum of squares is taken in its own dtype, float16 in float32 (as
    torch's ``vector_norm`` accumulates half precision), so float16 gradients whose
    squares leave float16's range (65504: a norm of 256) still get their finite norm.
    """
    if not isinstance(grads, dict) or not grads:
        raise TypeError(f"grads must be a non-empty dict of arrays, got {type(grads).__name__}")
    for name, g in grads.items():
        if not isinstance(g, np.ndarray):
            raise TypeError(f"grads[{name!r}] must be a numpy.ndarray, got {type(g).__name__}")
        check_floating(g, f"grads[{name!r}]")
        check_finite(g, f"grads[{name!r}]")
    wide = [g.astype(np.float32) if g.dtype == np.float16 else g
            for g in grads.values()]
    return float(np.sqrt(sum(float(np.sum(g * g)) for g in wide)))


def clip_grad_norm(grads: dict[str, np.ndarray], max_norm: float,
                   eps: float = 1e-6) -> tuple[dict[str, np.ndarray], float]:
    """Rescale ``grads`` to global norm at most ``max_norm``; return ``(clipped, norm)``.

    ``norm`` is the global norm *before* clipping. The input dictionary is not modified.
    With ``eps = 0``, all-zero gradients (norm 0) are returned unchanged.
    """
    # inf (or an int beyond float): no clipping
    max_norm = check_real(max_norm, "max_norm", positive=True, finite=False)
    eps = check_real(eps, "eps", minimum=0.0)
    norm = global_norm(grads)
    # norm + eps == 0 only for zero gradients with eps = 0: nothing to clip
    factor = 1.0 if norm + eps == 0 else min(1.0, max_norm / (norm + eps))
    return {k: g * factor for k, g in grads.items()}, norm
