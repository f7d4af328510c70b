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

from seqlearn.scores import _compute_dtype
from seqlearn.validate import (check_bool, check_int, check_real, check_same_dtype,
                               check_shape, check_tensor)


class LayerNorm(nn.Module):
    """``LayerNorm(d, eps=1e-5)``: eq-tf-layernorm over the last axis, with learned gain
    and bias.

    ``forward(x (..., d)) -> (..., d)``. ``weight`` is ``gamma`` (ones at first),
    ``bias`` is ``beta`` (zeros), as in ``torch.nn.LayerNorm(d, eps)``. As there,
    ``elementwise_affine=False`` drops both (``weight`` and ``bias`` are None, and any
    floating dtype is normalised) and ``bias=False`` drops ``beta``.
    """

    def __init__(self, d: int, eps: float = 1e-5, *, elementwise_affine: bool = True,
                 bias: bool = True) -> None:
        super().__init__()
        self.d = check_int(d, "d")
        self.eps = check_real(eps, "eps", positive=True)
        affine = check_bool(elementwise_affine, "elementwise_affine")
        with_bias = check_bool(bias, "bias") and affine
        self.weight = nn.Parameter(torch.ones(d)) if affine else None  # gamma: (d,)
        self.bias = nn.Parameter(torch.zeros(d)) if with_bias else None  # beta: (d,)

    def forward(self, x: Tensor) -> Tensor:
        check_tensor(x, "x")
        if self.weight is not None:  # gamma fixes the dtype; without it any float goes
            check_same_dtype("x", x, "the module's parameters", self.weight)
        check_shape(x, "x", "... d", sizes={"d": self.d})
        z = x.to(_compute_dtype(x.dtype))  # float32 for float16/bfloat16, as torch
        mu = z.mean(dim=-1, keepdim=True)  # (..., 1)
        # (..., 1): divided by d, as torch
        var = (z - mu).pow(2).mean(dim=-1, keepdim=True)
        y = ((z - mu) * torch.rsqrt(var + self.eps)).to(x.dtype)  # (..., d)
        if self.weight is not None:
            y = y * self.weight
        return y if self.bias is None else y + self.bias  # (..., d)

    def extra_repr(self) -> str:
        dropped = (", elementwise_affine=False" if self.weight is None
                   else ", bias=False" if self.bias is None else "")
        return f"{self.d}, eps={self.eps:g}{dropped}"

    @classmethod
    def from_torch(cls, m: nn.LayerNorm) -> LayerNorm:
        """A copy of ``torch.nn.LayerNorm(d, eps, elementwise_affine, bias)``: equal
        outputs, the same parameters (or none), their dtype and device."""
        if not isinstance(m, nn.LayerNorm):
            raise TypeError(f"m must be a torch.nn.LayerNorm, got {type(m).__name__}")
        if len(m.normalized_shape) != 1:
            raise ValueError("m must normalise over one (the last) axis, got "
                             f"normalized_shape {tuple(m.normalized_shape)}")
        new = cls(m.normalized_shape[0], m.eps, elementwise_affine=m.weight is not None,
                  bias=m.bias is not None)
        if m.weight is not None:
            new = new.to(device=m.weight.device, dtype=m.weight.dtype)
            with torch.no_grad():
                new.weight.copy_(m.weight)
                if m.bias is not None:
                    new.bias.copy_(m.bias)
        return new
