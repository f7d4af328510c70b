r"""Layer normalisation (Ba et al. 2016), written out; equal to ``torch.nn.LayerNorm``.

Each vector ``x`` of ``d`` features is normalised with its **own** mean and variance,

.. math::

    \mu = \frac{1}{d}\sum_{j=1}^{d} x_j, \qquad
    \sigma^2 = \frac{1}{d}\sum_{j=1}^{d} (x_j - \mu)^2, \qquad
    \mathrm{LN}(x)_j = \gamma_j \frac{x_j - \mu}{\sqrt{\sigma^2 + \epsilon}} + \beta_j
    \qquad \text{(book equation eq-tf-layernorm)},

so, unlike batch normalisation, the statistics of one token never involve another token or
another sequence of the batch (or the padding next to it). ``sigma^2`` is the biased variance
(divide by ``d``), as in torch.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from seqlearn.validate import check_real, check_same_dtype, check_shape, check_tensor, check_int


class LayerNorm(nn.Module):
    """``LayerNorm(d, eps=1e-5)``: eq-tf-layernorm over the last axis, with learned gain and bias.

    ``forward(x (..., d)) -> (..., d)``. ``weight`` is ``gamma`` (ones at first), ``bias`` is
    ``beta`` (zeros), as in ``torch.nn.LayerNorm(d, eps)``.
    """

    def __init__(self, d: int, eps: float = 1e-5) -> None:
        super().__init__()
        self.d = check_int(d, "d")
        self.eps = check_real(eps, "eps", positive=True)
        self.weight = nn.Parameter(torch.ones(d))  # gamma: (d,)
        self.bias = nn.Parameter(torch.zeros(d))  # beta: (d,)

    def forward(self, x: Tensor) -> Tensor:
        check_tensor(x, "x")
        check_same_dtype("x", x, "the module's parameters", self.weight)
        check_shape(x, "x", "... d", sizes={"d": self.d})
        var, mu = torch.var_mean(x, dim=-1, correction=0, keepdim=True)  # (..., 1) each
        return (x - mu) * torch.rsqrt(var + self.eps) * self.weight + self.bias  # (..., d)

    def extra_repr(self) -> str:
        return f"{self.d}, eps={self.eps:g}"

    @classmethod
    def from_torch(cls, m: nn.LayerNorm) -> LayerNorm:
        """A copy of ``torch.nn.LayerNorm(d, eps)`` (a missing gain or bias becomes 1 or 0)."""
        if not isinstance(m, nn.LayerNorm):
            raise TypeError(f"m must be a torch.nn.LayerNorm, got {type(m).__name__}")
        if len(m.normalized_shape) != 1:
            raise ValueError("m must normalise over one (the last) axis, got normalized_shape "
                             f"{tuple(m.normalized_shape)}")
        new = cls(m.normalized_shape[0], m.eps)
        like = m.weight if m.weight is not None else torch.empty(0)
        new = new.to(device=like.device, dtype=like.dtype)
        with torch.no_grad():
            if m.weight is not None:
                new.weight.copy_(m.weight)
            if m.bias is not None:
                new.bias.copy_(m.bias)
        return new
