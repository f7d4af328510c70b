r"""The Transformer's layers (Vaswani et al. 2017): feed-forward, encoder layer, decoder layer.

Every sub-layer ``f`` (self-attention, cross-attention, feed-forward) is wrapped in a residual
connection and a :class:`~seqlearn.layernorm.LayerNorm`, in one of two placements:

.. math::

    \text{post-norm (the paper):}\quad x \leftarrow \mathrm{LN}\big(x + f(x)\big), \qquad
    \text{pre-norm (Xiong et al. 2020):}\quad x \leftarrow x + f\big(\mathrm{LN}(x)\big)
    \qquad \text{(book equations eq-tf-postnorm, eq-tf-prenorm)}.

An **encoder layer** is self-attention then the feed-forward network; a **decoder layer** is
causal (masked) self-attention, then cross-attention whose queries come from the decoder and
whose keys and values are the encoder's output (the *memory*), then the feed-forward network.
Parameters and their names follow ``torch.nn.TransformerEncoderLayer`` /
``TransformerDecoderLayer`` (``self_attn``, ``multihead_attn``, ``linear1``, ``linear2``,
``norm1`` .. ``norm3``), and ``from_torch`` copies them so that outputs are equal. There is no
dropout: compare with torch's layers built with ``dropout=0`` or in ``eval()`` mode.

Masks are boolean with **True = a real token** (torch's ``key_padding_mask`` uses True = pad).
The last forward's attention weights ``(B, heads, Tq, Tk)`` stay in ``self_weights`` (and
``cross_weights`` for the decoder), detached, for plotting.
"""

from __future__ import annotations

from typing import Callable

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from seqlearn.attention import MultiHeadAttention
from seqlearn.layernorm import LayerNorm
from seqlearn.validate import check_bool, check_int, check_same_dtype, check_shape, check_tensor

ACTIVATIONS: dict[str, Callable[[Tensor], Tensor]] = {"relu": F.relu, "gelu": F.gelu}


class FeedForward(nn.Module):
    r"""Position-wise feed-forward network, the same two-layer MLP at every position.

    .. math::  \mathrm{FFN}(x) = W_2\, \phi(W_1 x + b_1) + b_2, \qquad
               W_1 \in \mathbb{R}^{d_{ff} \times d}, \ W_2 \in \mathbb{R}^{d \times d_{ff}}
               \qquad \text{(book equation eq-tf-ffn)}

    with ``phi`` = ReLU (the paper) or GELU. ``forward(x (..., d_model)) -> (..., d_model)``.
    """

    def __init__(self, d_model: int, d_ff: int, activation: str = "relu") -> None:
        super().__init__()
        check_int(d_model, "d_model")
        check_int(d_ff, "d_ff")
        if activation not in ACTIVATIONS:
            raise ValueError(f"activation must be one of {tuple(ACTIVATIONS)}, got {activation!r}")
        self.activation = activation
        self.linear1 = nn.Linear(d_model, d_ff)  # W_1, b_1
        self.linear2 = nn.Linear(d_ff, d_model)  # W_2, b_2

    def forward(self, x: Tensor) -> Tensor:
        check_tensor(x, "x")
        check_same_dtype("x", x, "the module's parameters", self.linear1.weight)
        check_shape(x, "x", "... d_model", sizes={"d_model": self.linear1.in_features})
        return self.linear2(ACTIVATIONS[self.activation](self.linear1(x)))  # (..., d_model)


def _residual(x: Tensor, sublayer: Callable[[Tensor], Tensor], norm: LayerNorm,
              norm_first: bool) -> Tensor:
    """eq-tf-prenorm ``x + f(LN(x))`` or eq-tf-postnorm ``LN(x + f(x))``."""
    return x + sublayer(norm(x)) if norm_first else norm(x + sublayer(x))


def _key_mask(mask: Tensor | None, name: str, B: int, S: int) -> Tensor | None:
    """Validate a ``(B, S)`` token mask and return it as ``(B, 1, 1, S)`` for every head/query."""
    if mask is None:
        return None
    if not isinstance(mask, Tensor) or mask.dtype != torch.bool:
        raise TypeError(f"{name} must be a bool tensor (True = token), got "
                        f"{getattr(mask, 'dtype', type(mask).__name__)}")
    check_shape(mask, name, "B S", sizes={"B": B, "S": S})
    if not bool(mask.any(dim=1).all()):
        raise ValueError(f"{name} must mark at least one token in every row")
    return mask[:, None, None, :]  # (B, 1, 1, S)


def _check_input(layer: nn.Module, x: Tensor, name: str, spec: str,
                 sizes: dict[str, int] | None = None) -> dict[str, int]:
    check_tensor(x, name)
    check_same_dtype(name, x, "the layer's parameters", layer.norm1.weight)
    return check_shape(x, name, spec, sizes={"d": layer.d_model, **(sizes or {})})


def _activation_of(m: nn.Module) -> str:
    act = m.activation
    if act is F.relu or isinstance(act, nn.ReLU):
        return "relu"
    if act is F.gelu or (isinstance(act, nn.GELU) and act.approximate == "none"):
        return "gelu"
    raise ValueError(f"only relu and gelu activations are supported, got {act!r}")


def _from_torch(cls: type, m: nn.Module, kind: type) -> nn.Module:
    """``cls`` built with ``m``'s sizes and norm placement, its self-attention, feed-forward and
    norms copied from ``m`` (a torch layer of type ``kind``, same parameter names)."""
    if not isinstance(m, kind):
        raise TypeError(f"m must be a torch.nn.{kind.__name__}, got {type(m).__name__}")
    if not m.self_attn.batch_first:
        raise ValueError("m must be built with batch_first=True (seqlearn is batch first)")
    if m.linear1.bias is None:
        raise ValueError("torch layers built with bias=False are not supported")
    d, heads, d_ff = m.self_attn.embed_dim, m.self_attn.num_heads, m.linear1.out_features
    new = cls(d, heads, d_ff, norm_first=m.norm_first, activation=_activation_of(m),
              eps=m.norm1.eps).to(device=m.linear1.weight.device, dtype=m.linear1.weight.dtype)
    new.self_attn = MultiHeadAttention.from_torch(m.self_attn)
    with torch.no_grad():
        for name in ("linear1", "linear2"):
            getattr(new.ff, name).weight.copy_(getattr(m, name).weight)
            getattr(new.ff, name).bias.copy_(getattr(m, name).bias)
    for name in ("norm1", "norm2", "norm3"):
        if hasattr(m, name):
            setattr(new, name, LayerNorm.from_torch(getattr(m, name)))
    return new


class _Layer(nn.Module):
    """What both layers hold: self-attention, cross-attention (decoder only), the
    feed-forward network and one LayerNorm per sub-layer (torch's names and order)."""

    def __init__(self, d_model: int, num_heads: int, d_ff: int, *, cross: bool,
                 norm_first: bool, activation: str, eps: float) -> None:
        super().__init__()
        self.norm_first = check_bool(norm_first, "norm_first")
        self.d_model = check_int(d_model, "d_model")
        self.self_attn = MultiHeadAttention(d_model, num_heads)
        if cross:
            self.multihead_attn = MultiHeadAttention(d_model, num_heads)  # cross-attention
        self.ff = FeedForward(d_model, d_ff, activation)
        for k in range(1, 4 if cross else 3):
            setattr(self, f"norm{k}", LayerNorm(d_model, eps))
        self.self_weights: Tensor | None = None


class EncoderLayer(_Layer):
    r"""Self-attention and feed-forward, each with a residual connection and LayerNorm.

    .. math::

        \text{post-norm:}\quad z = \mathrm{LN}_1\big(x + \mathrm{MHA}(x, x, x)\big), \quad
        x' = \mathrm{LN}_2\big(z + \mathrm{FFN}(z)\big);
        \qquad \text{pre-norm:}\quad z = x + \mathrm{MHA}(\mathrm{LN}_1 x, \dots), \quad
        x' = z + \mathrm{FFN}(\mathrm{LN}_2 z)

    (book equation eq-tf-encoder). ``forward(x (B, S, d), *, mask=None (B, S) bool, True =
    token) -> (B, S, d)``: no query attends to a padded key.
    """

    def __init__(self, d_model: int, num_heads: int, d_ff: int, *, norm_first: bool = False,
                 activation: str = "relu", eps: float = 1e-5) -> None:
        super().__init__(d_model, num_heads, d_ff, cross=False, norm_first=norm_first,
                         activation=activation, eps=eps)

    def _self_attention(self, x: Tensor, mask: Tensor | None) -> Tensor:
        out, weights = self.self_attn(x, x, x, mask=mask)  # (B, S, d)
        self.self_weights = weights.detach()  # (B, heads, S, S)
        return out

    def forward(self, x: Tensor, *, mask: Tensor | None = None) -> Tensor:
        dims = _check_input(self, x, "x", "B S d")
        key_mask = _key_mask(mask, "mask", dims["B"], dims["S"])  # (B, 1, 1, S)
        x = _residual(x, lambda h: self._self_attention(h, key_mask), self.norm1,
                      self.norm_first)
        return _residual(x, self.ff, self.norm2, self.norm_first)  # (B, S, d)

    @classmethod
    def from_torch(cls, m: nn.TransformerEncoderLayer) -> EncoderLayer:
        """Copy ``torch.nn.TransformerEncoderLayer(..., batch_first=True)``: equal outputs.

        ``m(x, src_key_padding_mask=~mask)`` equals ``self(x, mask=mask)`` when ``m`` has
        ``dropout=0`` or is in ``eval()`` mode.
        """
        return _from_torch(cls, m, nn.TransformerEncoderLayer)


class DecoderLayer(_Layer):
    r"""Causal self-attention, cross-attention on the memory, feed-forward; each Add & Norm.

    .. math::

        z_1 = \mathrm{AddNorm}_1\big(y, \mathrm{MHA}_{\text{causal}}(y, y, y)\big), \quad
        z_2 = \mathrm{AddNorm}_2\big(z_1, \mathrm{MHA}(z_1, m, m)\big), \quad
        y' = \mathrm{AddNorm}_3\big(z_2, \mathrm{FFN}(z_2)\big)

    (book equation eq-tf-decoder), with AddNorm post- or pre-norm as in the module docstring:
    queries from the decoder, keys and values from the encoder's output ``m``. ``forward(y
    (B, T, d), memory (B, S, d), *, memory_mask=None (B, S) bool) -> (B, T, d)``; position
    ``t`` sees decoder positions ``<= t`` only.
    """

    def __init__(self, d_model: int, num_heads: int, d_ff: int, *, norm_first: bool = False,
                 activation: str = "relu", eps: float = 1e-5) -> None:
        super().__init__(d_model, num_heads, d_ff, cross=True, norm_first=norm_first,
                         activation=activation, eps=eps)
        self.cross_weights: Tensor | None = None

    def _self_attention(self, y: Tensor) -> Tensor:
        out, weights = self.self_attn(y, y, y, causal=True)  # (B, T, d)
        self.self_weights = weights.detach()  # (B, heads, T, T)
        return out

    def _cross_attention(self, y: Tensor, memory: Tensor, mask: Tensor | None) -> Tensor:
        out, weights = self.multihead_attn(y, memory, memory, mask=mask)  # (B, T, d)
        self.cross_weights = weights.detach()  # (B, heads, T, S)
        return out

    def forward(self, y: Tensor, memory: Tensor, *, memory_mask: Tensor | None = None) -> Tensor:
        dims = _check_input(self, y, "y", "B T d")
        dims |= _check_input(self, memory, "memory", "B S d", {"B": dims["B"]})
        key_mask = _key_mask(memory_mask, "memory_mask", dims["B"], dims["S"])  # (B,1,1,S)
        y = _residual(y, self._self_attention, self.norm1, self.norm_first)
        y = _residual(y, lambda h: self._cross_attention(h, memory, key_mask), self.norm2,
                      self.norm_first)
        return _residual(y, self.ff, self.norm3, self.norm_first)  # (B, T, d)

    @classmethod
    def from_torch(cls, m: nn.TransformerDecoderLayer) -> DecoderLayer:
        """Copy ``torch.nn.TransformerDecoderLayer(..., batch_first=True)``: equal outputs.

        ``m(y, memory, tgt_mask=causal, tgt_is_causal=True, memory_key_padding_mask=~mask)``
        (``causal`` = ``nn.Transformer.generate_square_subsequent_mask(T)``) equals
        ``self(y, memory, memory_mask=mask)`` when ``m`` has ``dropout=0`` or is in ``eval()``.
        """
        new = _from_torch(cls, m, nn.TransformerDecoderLayer)
        new.multihead_attn = MultiHeadAttention.from_torch(m.multihead_attn)
        return new
