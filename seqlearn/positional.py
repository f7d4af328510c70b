r"""Where a token is: the sinusoidal positional encoding (Vaswani et al. 2017).

Attention treats its keys as a set: permuting the keys together with their values
leaves every output unchanged. A model that must know the order adds a position signal
to each input. The GRU-to-attention steps of Part III (:mod:`seqlearn.causal`) and the
Transformers of Part IV (:mod:`seqlearn.transformer`, :mod:`seqlearn.language_model`)
add the same one, so it lives below all of them; ``seqlearn.transformer`` re-exports
it.
"""

from __future__ import annotations

import torch
from torch import Tensor

from seqlearn.validate import check_int, check_real

__all__ = ["sinusoidal_positional_encoding"]


def sinusoidal_positional_encoding(T: int, d: int, *, base: float = 10000.0,
                                   dtype: torch.dtype | None = None,
                                   device: torch.device | str | None = None) -> Tensor:
    r"""Sinusoidal positional encoding ``PE`` of shape ``(T, d)`` (Vaswani et al. 2017).

    .. math::

        PE_{t, 2k} = \sin(\omega_k t), \qquad PE_{t, 2k+1} = \cos(\omega_k t), \qquad
        \omega_k = \mathrm{base}^{-2k/d}, \qquad t = 0, \dots, T-1.

    Each pair of columns ``(2k, 2k+1)`` is a point on the unit circle turning at
    angular frequency ``omega_k``, so ``PE[t + s]`` is ``PE[t]`` rotated by the angle
    ``omega_k s`` in every pair: a shift in position is a linear map that does not
    depend on ``t``.
    An odd ``d`` is allowed: the last column is then the sine of an unpaired frequency
    ``omega_{(d-1)/2}``, exactly as the formula says. Computed in float64, returned in
    ``dtype`` (default: torch's default dtype).
    """
    check_int(T, "T")
    check_int(d, "d")
    if not check_real(base, "base") > 1:
        raise ValueError(f"base must be a number > 1, got {base}")
    if dtype is not None and not (isinstance(dtype, torch.dtype)
                                  and dtype.is_floating_point):
        raise TypeError(f"dtype must be a floating torch.dtype or None, got {dtype!r}")
    t = torch.arange(T, dtype=torch.float64, device=device)[:, None]  # (T, 1)
    # (ceil(d/2),): 2k
    two_k = torch.arange(0, d, 2, dtype=torch.float64, device=device)
    angle = t * base ** (-two_k / d)  # (T, ceil(d/2)): omega_k t
    pe = torch.empty(T, d, dtype=torch.float64, device=device)
    pe[:, 0::2] = torch.sin(angle)
    pe[:, 1::2] = torch.cos(angle[:, : d // 2])
    return pe.to(torch.get_default_dtype() if dtype is None else dtype)
