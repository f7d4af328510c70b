r"""A convolutional encoder: one annotation per position from stacked 1-D convolutions.

The encoder of an attention model only has to turn the source into one vector per
position; nothing requires a recurrence (the CMU 11-785 notes: the encoder and decoder
"need not be RNNs, even CNNs"). :class:`ConvEncoder` reads a sequence of vectors
``x_1 .. x_T`` with ``L`` residual convolution layers of kernel size ``k`` and stride 1
(chapter :doc:`attention`, *Going further*):

.. math::

    h^0_t &= W_{\text{in}} x_t + b_{\text{in}}, \\
    h^l_t &= h^{l-1}_t + \operatorname{gelu}\Big(b_l + \sum_{j=0}^{k-1}
             W_{l,j}\, \bar h^{l-1}_{t + j - o}\Big), \qquad l = 1, \dots, L, \\
    y_t &= m_t\, h^L_t,

where ``\bar h^{l-1}_s = m_s h^{l-1}_s`` is the previous layer with its padding set to
0, a position outside ``1 .. T`` reads 0, ``m_t`` is 1 at a real token and 0 at padding,
and the offset ``o`` places the window: ``o = (k - 1) / 2`` centres it
(``causal=False``, ``k`` odd), ``o = k - 1`` ends it at ``t`` (``causal=True``). Each
layer widens the window by ``k - 1`` positions, so ``y_t`` reads ``1 + L(k - 1)``
inputs: ``x_{t - L(k-1)/2} .. x_{t + L(k-1)/2}`` centred, ``x_{t - L(k-1)} .. x_t``
causal (the receptive field of the chapter :doc:`sequences_and_convolution`, exercise
2). The residual path and the input projection act position by position and widen
nothing.

**Padding.** Setting the padding to 0 before every convolution makes it look like the
zeros a convolution reads beyond the end of a sequence, so the outputs at real positions
depend neither on what the padding holds nor on how much of it there is. Without that a
centred stack would read the padding at its last ``L(k-1)/2`` real positions. A causal
stack never reads it when the padding follows the real tokens (``y_t`` reads nothing
after ``t``); this is why :class:`seqlearn.seq2seq.Seq2Seq` with ``encoder="conv"`` can
use two causal stacks in place of the two GRUs of its bidirectional encoder without
being told where the padding is.

The layers are ``torch.nn.Conv1d``; ``forward`` follows the ``torch.nn.GRU`` contract
with ``batch_first=True`` (``(y, h_n)``) so that the encoder can stand in for a GRU.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from seqlearn.validate import check_bool, check_int, check_shape, check_tensor


class ConvEncoder(nn.Module):
    """``L`` residual GELU convolutions over ``(B, T, input_size)`` (module docstring).

    ``forward(x (B, T, D), mask (B, T) bool | None) -> (y (B, T, H), h_n (1, B, H))``:
    ``y`` is 0 at padding (``mask`` False) and ``h_n`` is ``y`` at the last position
    ``T`` (the second value of the ``torch.nn.GRU`` contract; a convolution has no
    state). ``mask=None`` means every position is a token.
    """

    def __init__(self, input_size: int, hidden_size: int, *, layers: int = 3,
                 kernel_size: int = 3, causal: bool = False) -> None:
        super().__init__()
        self.input_size = check_int(input_size, "input_size")
        self.hidden_size = check_int(hidden_size, "hidden_size")
        self.layers = check_int(layers, "layers")
        self.kernel_size = check_int(kernel_size, "kernel_size")
        self.causal = check_bool(causal, "causal")
        if not causal and kernel_size % 2 == 0:
            raise ValueError("kernel_size must be odd with causal=False (a window "
                             f"centred on t), got {kernel_size}")
        # zeros read before and after the sequence: (left, right)
        k = kernel_size
        self.padding = (k - 1, 0) if causal else ((k - 1) // 2, (k - 1) // 2)
        self.proj = nn.Linear(input_size, hidden_size)  # W_in, b_in
        self.convs = nn.ModuleList(nn.Conv1d(hidden_size, hidden_size, k)
                                   for _ in range(layers))  # W_l (H, H, k), b_l

    @property
    def receptive_field(self) -> int:
        """``1 + L(k - 1)``: how many input positions one output reads."""
        return 1 + self.layers * (self.kernel_size - 1)

    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        check_tensor(x, "x")
        dims = check_shape(x, "x", "B T D", sizes={"D": self.input_size})
        if mask is not None:
            check_tensor(mask, "mask", floating=False)
            if mask.dtype != torch.bool:
                raise TypeError(f"mask must be a bool tensor (True = token), got dtype "
                                f"{mask.dtype}")
            check_shape(mask, "mask", "B T", sizes={"B": dims["B"], "T": dims["T"]})
        if x.dtype != self.proj.weight.dtype:
            raise TypeError(f"x must have the dtype of the encoder's weights "
                            f"({self.proj.weight.dtype}), got {x.dtype}")
        B, T = dims["B"], dims["T"]
        if T == 0:  # nothing to read (torch's convolution refuses an empty window)
            empty = x.new_zeros(B, 0, self.hidden_size)
            return empty, x.new_zeros(1, B, self.hidden_size)
        keep = (torch.ones(B, T, dtype=torch.bool, device=x.device) if mask is None
                else mask)[..., None]  # (B, T, 1)
        h = self.proj(x)  # (B, T, H): h^0
        for conv in self.convs:
            read = torch.where(keep, h, 0.0).transpose(1, 2)  # (B, H, T): padding = 0
            h = h + F.gelu(conv(F.pad(read, self.padding))).transpose(1, 2)  # (B, T, H)
        y = torch.where(keep, h, 0.0)  # (B, T, H)
        return y, y[:, -1][None]  # (B, T, H), (1, B, H)
