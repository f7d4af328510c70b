"""Multiplicative modules: layers whose weights are computed from another input.

Chapter: *Multiplicative modules and the GRU* (``chapters/gru.ipynb``). An ordinary linear layer
computes ``s = W x`` with a fixed ``W``. A multiplicative module lets a second input ``z``
(a context) set the weights (the NYU notes; equations ``eq-gru-mult-weight``, ``eq-gru-mult-out``)::

    w_ij(z) = u_ij^T z = sum_k U_ijk z_k          U: (m, n, d), a 3-tensor
    s_i     = sum_j w_ij(z) x_j = sum_jk U_ijk x_j z_k

so ``s`` is linear in ``x`` for a fixed ``z`` and linear in ``z`` for a fixed ``x``: a bilinear
map, the same as ``torch.nn.Bilinear``. A *hypernetwork* (Ha et al. 2017) computes the weights
with a whole network instead of one tensor product; a *soft switch* computes mixing weights
``softmax(scores(z))`` and returns the weighted sum of several inputs, the first step towards
attention (eq-gru-switch).
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from seqlearn.validate import (check_bool, check_float_dtype, check_int,
                               check_same_dtype, check_shape, check_tensor,
                               first_weight)

__all__ = ["multiplicative_weights", "MultiplicativeLinear", "HyperLinear", "soft_switch",
           "switch_tensor", "SoftSwitch"]


def _check_pair(x: Tensor, z: Tensor, n: int, d: int) -> None:
    """``x`` (..., n) and ``z`` (..., d): floating, same dtype, same leading dimensions."""
    check_tensor(x, "x")
    check_tensor(z, "z")
    lead: dict = {}
    check_shape(x, "x", "... n", sizes={"n": n}, bound=lead)
    check_shape(z, "z", "... d", sizes={"d": d}, bound=lead)
    check_same_dtype("x", x, "z", z)


def _init_linear_(module: nn.Module, generator: torch.Generator | None) -> None:
    """torch's default for every nn.Linear inside (weight and bias ~ U(+-1/sqrt(fan_in))), seeded."""
    with torch.no_grad():
        for layer in module.modules():
            if isinstance(layer, nn.Linear):
                bound = 1.0 / math.sqrt(layer.in_features)
                for p in layer.parameters():
                    nn.init.uniform_(p, -bound, bound, generator=generator)


def multiplicative_weights(U: Tensor, z: Tensor) -> Tensor:
    """The weight matrix set by the context: ``w_ij = sum_k U_ijk z_k`` (eq-gru-mult-weight).

    ``U`` (m, n, d), ``z`` (..., d) -> ``W`` (..., m, n).
    """
    check_tensor(U, "U")
    dims = check_shape(U, "U", "m n d")
    check_tensor(z, "z")
    check_shape(z, "z", "... d", sizes={"d": dims["d"]})
    check_same_dtype("U", U, "z", z)
    return torch.einsum("ijk,...k->...ij", U, z)                    # (..., m, n)


class MultiplicativeLinear(nn.Module):
    """``s = W(z) x + b`` with ``W(z)_ij = sum_k U_ijk z_k`` (eq-gru-mult-out).

    ``forward(x (..., n), z (..., d)) -> s (..., m)``. The weight ``U`` has shape (m, n, d),
    the layout of ``torch.nn.Bilinear(n, d, m).weight``, so :meth:`from_bilinear` is a copy.
    """

    def __init__(self, in_features: int, out_features: int, context_features: int, bias: bool = True,
                 *, generator: torch.Generator | None = None) -> None:
        super().__init__()
        self.in_features = check_int(in_features, "in_features", 1)
        self.out_features = check_int(out_features, "out_features", 1)
        self.context_features = check_int(context_features, "context_features", 1)
        check_bool(bias, "bias")
        self.weight = nn.Parameter(torch.empty(out_features, in_features, context_features))  # U
        self.bias = nn.Parameter(torch.empty(out_features)) if bias else None
        bound = 1.0 / math.sqrt(in_features)                         # torch.nn.Bilinear's scale
        with torch.no_grad():
            for p in self.parameters():
                nn.init.uniform_(p, -bound, bound, generator=generator)

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"context_features={self.context_features}, bias={self.bias is not None}")

    def weights(self, z: Tensor) -> Tensor:
        """The weight matrix this context selects: ``z`` (..., d) -> ``W(z)`` (..., m, n)."""
        return multiplicative_weights(self.weight, z)

    def forward(self, x: Tensor, z: Tensor) -> Tensor:
        _check_pair(x, z, self.in_features, self.context_features)
        check_same_dtype("x", x, "weight", self.weight)
        s = torch.einsum("...ij,...j->...i", self.weights(z), x)   # (..., m)
        return s if self.bias is None else s + self.bias

    @classmethod
    def from_bilinear(cls, m: nn.Bilinear) -> "MultiplicativeLinear":
        """The same map as ``m(x, z)``: ``nn.Bilinear`` computes ``x^T A_i z + b_i``, A = U."""
        if not isinstance(m, nn.Bilinear):
            raise TypeError(f"expected a torch.nn.Bilinear, got {type(m).__name__}")
        new = cls(m.in1_features, m.out_features, m.in2_features, bias=m.bias is not None)
        new.to(dtype=m.weight.dtype)
        new.load_state_dict(m.state_dict())
        return new


class HyperLinear(nn.Module):
    """A linear layer whose weight and bias are produced by a small network of the context.

    ``W(z), b(z) = reshape(g(z))`` with ``g`` an MLP ``d -> hidden -> m*n + m`` (tanh), or a
    single linear map when ``hidden_features is None``; then ``s = W(z) x + b(z)``.
    A linear ``g`` whose bias and bias rows are zero is exactly a :class:`MultiplicativeLinear`
    with ``U`` = the weight rows of ``g`` reshaped to (m, n, d): a multiplicative module is the
    simplest hypernetwork.
    """

    def __init__(self, in_features: int, out_features: int, context_features: int,
                 hidden_features: int | None = 16, *, generator: torch.Generator | None = None) -> None:
        super().__init__()
        self.in_features = check_int(in_features, "in_features", 1)
        self.out_features = check_int(out_features, "out_features", 1)
        self.context_features = check_int(context_features, "context_features", 1)
        n_out = out_features * in_features + out_features            # every weight and bias
        if hidden_features is None:
            self.hyper = nn.Linear(context_features, n_out)
        else:
            check_int(hidden_features, "hidden_features", 1)
            self.hyper = nn.Sequential(nn.Linear(context_features, hidden_features), nn.Tanh(),
                                       nn.Linear(hidden_features, n_out))
        _init_linear_(self, generator)

    def weights(self, z: Tensor) -> tuple[Tensor, Tensor]:
        """``z`` (..., d) -> the generated ``W(z)`` (..., m, n) and ``b(z)`` (..., m)."""
        m, n = self.out_features, self.in_features
        flat = self.hyper(z)                                          # (..., m*n + m)
        return flat[..., : m * n].unflatten(-1, (m, n)), flat[..., m * n:]

    def forward(self, x: Tensor, z: Tensor) -> Tensor:
        _check_pair(x, z, self.in_features, self.context_features)
        check_same_dtype("x", x, "the module's parameters", first_weight(self))
        W, b = self.weights(z)
        return torch.einsum("...ij,...j->...i", W, x) + b             # (..., m)


def soft_switch(xs: Tensor, scores: Tensor) -> tuple[Tensor, Tensor]:
    """A soft choice among ``K`` inputs (eq-gru-switch).

    ``xs`` (..., K, D), ``scores`` (..., K) -> ``out = sum_k w_k x_k`` (..., D) and the weights
    ``w = softmax(scores)`` (..., K), which are positive and sum to one. A large score gap makes
    the switch pick one input; equal scores average them.
    """
    check_tensor(xs, "xs")
    check_tensor(scores, "scores")
    dims: dict = {}
    check_shape(xs, "xs", "... K D", bound=dims)
    check_shape(scores, "scores", "... K", bound=dims)
    check_same_dtype("xs", xs, "scores", scores)
    w = torch.softmax(scores, dim=-1)                                 # (..., K)
    return torch.einsum("...k,...kd->...d", w, xs), w


def switch_tensor(num_inputs: int, dim: int,
                  dtype: torch.dtype = torch.float64) -> Tensor:
    """The 0/1 tensor ``U`` (D, K*D, K) that makes a soft switch a multiplicative
    module.

    With the inputs concatenated, ``x = [x_1; ...; x_K]`` (K*D), and the switch weights
    as the context, ``z = w`` (K): ``U[i, (k, j), k'] = [i == j][k == k']`` gives
    ``W(w) = [w_1 I, ..., w_K I]`` and ``W(w) x = sum_k w_k x_k``.
    """
    K, D = check_int(num_inputs, "num_inputs", 1), check_int(dim, "dim", 1)
    check_float_dtype(dtype, "dtype")
    eye_d, eye_k = torch.eye(D, dtype=dtype), torch.eye(K, dtype=dtype)
    return torch.einsum("ij,kl->ikjl", eye_d, eye_k).reshape(D, K * D, K)


class SoftSwitch(nn.Module):
    """Choose among ``K`` inputs with weights computed from a context:
    ``scores = V z + c``.

    ``forward(xs (..., K, D), z (..., C)) -> (out (..., D), weights (..., K))``. The
    weights depend on the data exactly when ``z`` does.
    """

    def __init__(self, context_features: int, num_inputs: int, *,
                 generator: torch.Generator | None = None) -> None:
        super().__init__()
        self.context_features = check_int(context_features, "context_features", 1)
        self.num_inputs = check_int(num_inputs, "num_inputs", 1)
        self.score = nn.Linear(context_features, num_inputs)          # V, c
        _init_linear_(self, generator)

    def forward(self, xs: Tensor, z: Tensor) -> tuple[Tensor, Tensor]:
        check_tensor(xs, "xs")
        check_tensor(z, "z")
        check_same_dtype("z", z, "the module's parameters", first_weight(self))
        lead: dict = {}
        check_shape(xs, "xs", "... K D", sizes={"K": self.num_inputs}, bound=lead)
        check_shape(z, "z", "... C", sizes={"C": self.context_features}, bound=lead)
        return soft_switch(xs, self.score(z))
