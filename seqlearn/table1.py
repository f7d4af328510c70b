r"""The five layer types of Vaswani et al.'s Table 1, built so that their columns can be measured.

The paper's Table 1 has four rows (``PAPER``):

=============================  ==================  ==========  ==================
layer type                     complexity          sequential  max. path length
=============================  ==================  ==========  ==================
Self-Attention                 O(n^2 d)            O(1)        O(1)
Recurrent                      O(n d^2)            O(n)        O(n)
Convolutional                  O(k n d^2)          O(1)        O(log_k(n))
Self-Attention (restricted)    O(r n d)            O(1)        O(n/r)
=============================  ==================  ==========  ==================

Its one convolutional row gives the path of *dilated* convolutions; the paper's text adds that
a stack of contiguous kernels needs O(n/k) layers. Here the two are measured as two kinds
(``KINDS``; ``PAPER_ROW`` names the row of the table each kind belongs to).

:func:`layer` returns one layer of a type as a function ``(B, n, d) -> (B, n, d)`` (its cost is
measured against ``n`` and ``d``, its sequential operations with
:func:`seqlearn.complexity.graph_depth`); :func:`dependency_patterns` returns the
direct-dependency patterns (:func:`seqlearn.complexity.jacobian_pattern`) of a stack of such
layers on a sequence of length ``T``, from which :func:`seqlearn.complexity.max_path_length`
reads the path length. The recurrent type is a GRU; the convolutions are causal, as in WaveNet
and ByteNet's decoder (output ``t`` reads inputs ``t - (k - 1) dilation, ..., t``), and the
dilated stack multiplies its dilation by ``k`` from layer to layer, ``1, k, k^2, ...``
(WaveNet's pattern for ``k = 2``; ByteNet, Kalchbrenner et al. 2016, doubles its dilations with
``k = 3``).
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from seqlearn.attention import MultiHeadAttention, attention
from seqlearn.complexity import jacobian_pattern
from seqlearn.local_attention import restricted_attention
from seqlearn.validate import check_int, check_nonempty, check_shape, check_tensor

KINDS = ("self-attention", "recurrent", "convolutional", "dilated convolutional",
         "restricted self-attention")
"""The layer types measured: the paper's rows, with contiguous and dilated convolutions apart."""

PAPER = {
    "Self-Attention": ("O(n^2 d)", "O(1)", "O(1)"),
    "Recurrent": ("O(n d^2)", "O(n)", "O(n)"),
    "Convolutional": ("O(k n d^2)", "O(1)", "O(log_k(n))"),
    "Self-Attention (restricted)": ("O(r n d)", "O(1)", "O(n/r)"),
}
"""Vaswani et al.'s Table 1 as printed: complexity per layer, sequential operations, maximum
path length. For contiguous kernels the paper's text gives a path of O(n/k) layers."""

PAPER_ROW = {
    "self-attention": "Self-Attention",
    "recurrent": "Recurrent",
    "convolutional": "Convolutional",
    "dilated convolutional": "Convolutional",
    "restricted self-attention": "Self-Attention (restricted)",
}
"""The row of ``PAPER`` that each measured kind belongs to."""


def _check_kind(kind: str) -> None:
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")


def _causal_conv(d: int, kernel: int, dilation: int,
                 dtype: torch.dtype | None) -> Callable[[Tensor], Tensor]:
    """``(B, n, d) -> (B, n, d)``: output t reads inputs t - (kernel - 1) * dilation, ..., t."""
    conv = nn.Conv1d(d, d, kernel, dilation=dilation, dtype=dtype)
    left = (kernel - 1) * dilation  # zeros before the first position

    def apply(x: Tensor) -> Tensor:
        return conv(F.pad(x.transpose(-1, -2), (left, 0))).transpose(-1, -2)  # (B, n, d)

    return apply


def layer(kind: str, d: int, *, kernel: int = 3, radius: int = 4, dilation: int = 1,
          dtype: torch.dtype | None = None) -> Callable[[Tensor], Tensor]:
    """One layer of ``kind`` on ``d`` features, as a function
    ``(B, n, d) -> (B, n, d)``.

    Self-attention is the bare scaled dot product ``attention(x, x, x)`` (the
    ``O(n^2 d)`` of the table; the projections add ``O(n d^2)``); recurrent is
    ``torch.nn.GRU(d, d)``; convolutional is a causal
    ``torch.nn.Conv1d(d, d, kernel, dilation=dilation)``; restricted self-attention sees
    ``radius`` neighbours per side. Weights are drawn from torch's global generator
    (seed it first).
    """
    _check_kind(kind)
    for value, name in ((d, "d"), (kernel, "kernel"), (dilation, "dilation")):
        check_int(value, name)
    check_int(radius, "radius", minimum=0)
    if kernel < 2:
        raise ValueError("kernel must be at least 2 (a kernel of 1 never connects "
                         f"positions), got {kernel}")
    if kind == "self-attention":
        return _checked(lambda x: attention(x, x, x)[0], d, None)
    if kind == "restricted self-attention":
        return _checked(lambda x: restricted_attention(x, x, x, radius), d, None)
    if kind == "recurrent":
        gru = nn.GRU(d, d, batch_first=True, dtype=dtype)
        return _checked(lambda x: gru(x)[0], d, gru.weight_ih_l0.dtype)
    conv = _causal_conv(d, kernel, dilation, dtype)
    return _checked(conv, d, dtype or torch.get_default_dtype())


def _checked(fn: Callable[[Tensor], Tensor], d: int,
             dtype: torch.dtype | None) -> Callable[[Tensor], Tensor]:
    """``fn`` with its input checked first: ``x (B, n >= 1, d)`` floating, of ``dtype``
    (the layer's weights') when it has one."""
    def layer_of(x: Tensor) -> Tensor:
        check_tensor(x, "x")
        check_nonempty(x, "x", "B n d", "n")
        check_shape(x, "x", "B n d", sizes={"d": d})
        if dtype is not None and x.dtype != dtype:
            raise TypeError(f"x must have the layer's dtype {dtype}, got {x.dtype}")
        return fn(x)  # (B, n, d)

    return layer_of


def dependency_patterns(kind: str, T: int, *, d: int = 4, kernel: int = 3,
                        radius: int = 4,
                        seed: int = 0) -> tuple[list[Tensor], Tensor | None, bool]:
    """Direct-dependency patterns of a stack of ``kind`` layers on ``T`` positions.

    Returns ``(layers, within, causal)`` for
    :func:`seqlearn.complexity.max_path_length`: ``layers`` the ``(T, T)`` bool pattern
    of each layer's output on its input (one per distinct layer; the dilated stack lists
    dilations ``1, k, ..., k^(L-1)`` until their reach ``k^L - 1`` spans the sequence),
    ``within`` how a recurrent layer's outputs read each other (``h_t`` reads
    ``h_{t-1}``, from the Jacobian of ``GRUCell`` with respect to its state), ``causal``
    whether only pairs ``s <= t`` can be connected (the recurrent layer and the causal
    convolutions read left to right). Every pattern is measured with
    :func:`seqlearn.complexity.jacobian_pattern` on random float64 inputs and weights.
    """
    _check_kind(kind)
    check_int(T, "T")
    check_int(d, "d")
    check_int(kernel, "kernel", minimum=2)
    check_int(radius, "radius")
    check_int(seed, "seed", minimum=0)
    gen = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    x = torch.randn(T, d, generator=gen, dtype=torch.float64)  # (T, d)
    if kind == "recurrent":
        cell = nn.GRUCell(d, d).double()
        h = torch.randn(T, d, generator=gen, dtype=torch.float64)  # states h_1..h_T

        def previous(states: Tensor) -> Tensor:  # h_{t-1} for t = 1..T, with h_0 = 0
            return torch.cat([torch.zeros_like(states[:1]), states[:-1]])  # (T, d)

        reads_input = jacobian_pattern(lambda z: cell(z, previous(h)), x)  # h_t on x_s
        reads_state = jacobian_pattern(lambda s: cell(x, previous(s)), h)  # h_t on h_u
        return [reads_input], reads_state, True
    if kind == "self-attention":
        mha = MultiHeadAttention(d, 1).double()
        pattern = jacobian_pattern(lambda z: mha(z[None], z[None], z[None])[0][0], x)
        return [pattern], None, False
    if kind == "restricted self-attention":
        pattern = jacobian_pattern(
            lambda z: restricted_attention(z[None], z[None], z[None], radius)[0], x)
        return [pattern], None, False
    dilations = [1]
    if kind == "dilated convolutional":
        while kernel ** len(dilations) < T:  # the stack reaches back k^L - 1 positions
            dilations.append(kernel ** len(dilations))
    layers = []
    for dilation in dilations:
        conv = _causal_conv(d, kernel, dilation, torch.float64)
        layers.append(jacobian_pattern(lambda z: conv(z[None])[0], x))
    return layers, None, True
