"""1-D convolution, pooling and up-sampling over sequences, written from scratch.

Chapter: *Sequences and convolution* (``chapters/sequences_and_convolution.ipynb``).

Every operation here reads a sequence through the same window: :func:`unfold1d` cuts the
(padded) sequence into the windows a kernel of size ``k`` sees, one window per output position.
A convolution applies one small linear network to every window (the *same* weights at every
position: weight sharing); a pooling layer applies a fixed reduction (max, mean, p-norm).

Layout: these functions mirror their ``torch.nn.functional`` namesakes argument for argument,
so they use torch's convolution layout ``x: (B, C, T)`` (batch, channels, time). A batch-first
sequence ``(B, T, D)`` of the recurrent chapters becomes ``x.transpose(1, 2)``.

Output length (eq-conv-length). A window of ``k`` taps spaced ``d`` apart spans
``d (k - 1) + 1`` samples. Padding ``a`` zeros on each side turns length ``l`` into ``l + 2a``;
sliding the window with stride ``s`` gives::

    T_out = floor((l + 2a - d (k - 1) - 1) / s) + 1

which for ``d = 1`` is ``floor((l + 2a - k) / s) + 1``.
"""

from __future__ import annotations

import math
from typing import Callable

import torch

from seqlearn.validate import (check_float_dtype, check_int, check_nonempty, check_real,
                               check_same_dtype, check_shape, check_tensor)


def _check_sequence(x: torch.Tensor, name: str = "x") -> dict[str, int]:
    """A floating tensor of shape (B, C, T); returns the sizes."""
    dims = check_shape(x, name, "B C T")
    check_tensor(x, name)
    return dims


def output_length(length: int, kernel_size: int, stride: int = 1, padding: int = 0,
                  dilation: int = 1) -> int:
    """Number of positions a window visits (eq-conv-length).

    ``T_out = floor((l + 2a - d (k - 1) - 1) / s) + 1`` with ``l = length``,
    ``a = padding``, ``k = kernel_size``, ``s = stride``, ``d = dilation``. Raises
    ``ValueError`` when the window does not fit even once into the padded sequence.
    """
    check_int(length, "length", 1)
    return _output_length(length, kernel_size, stride, padding, dilation,
                          "the sequence")


def _output_length(length: int, kernel_size: int, stride: int, padding: int,
                   dilation: int, what: str) -> int:
    """:func:`output_length`; ``what`` names the sequence in the error (``"x"``)."""
    check_int(kernel_size, "kernel_size", 1)
    check_int(stride, "stride", 1)
    check_int(padding, "padding", 0)
    check_int(dilation, "dilation", 1)
    span = dilation * (kernel_size - 1) + 1  # samples covered by one window
    padded = length + 2 * padding  # the CMU 11-785 notes' "l + 2a"
    if span > padded:
        raise ValueError(f"{what} is too short: a window spanning {span} samples does "
                         f"not fit into the padded length {padded} (length {length} + "
                         f"2 * padding {padding})")
    return (padded - span) // stride + 1


def pad1d(x: torch.Tensor, left: int, right: int, value: float = 0.0) -> torch.Tensor:
    """Add ``left`` and ``right`` copies of ``value`` at the ends of the time axis (the last one).

    ``x`` may have any leading dimensions: ``(..., T) -> (..., left + T + right)``; ``T = 0``
    works (the result is all ``value``).
    """
    check_tensor(x, "x")
    check_shape(x, "x", "... T")
    value = check_real(value, "value", finite=False)  # 10**400: inf, as a float
    check_int(left, "left", 0)
    check_int(right, "right", 0)
    fill = x.new_full((*x.shape[:-1], left + x.shape[-1] + right), value)
    fill[..., left:left + x.shape[-1]] = x
    return fill


def unfold1d(x: torch.Tensor, kernel_size: int, stride: int = 1, padding: int = 0,
             dilation: int = 1, pad_value: float = 0.0) -> torch.Tensor:
    """Cut the sequence into the windows a kernel sees (eq-conv-general):
    ``(B, C, T) -> (B, C, T_out, k)``.

    ``windows[b, c, t, j] = x_pad[b, c, t * s + j * d]``, where ``x_pad`` is ``x`` with
    ``padding`` copies of ``pad_value`` at both ends (the CMU 11-785 notes'
    ``l -> l + 2a``).
    """
    dims = check_nonempty(x, "x", "B C T", "T")
    check_tensor(x, "x")
    pad_value = check_real(pad_value, "pad_value", finite=False)
    t_out = _output_length(dims["T"], kernel_size, stride, padding, dilation, "x")
    # (B, C, T + 2a)
    x_pad = x if padding == 0 else pad1d(x, padding, padding, pad_value)
    starts = torch.arange(t_out) * stride  # (T_out,)  first sample of each window
    taps = torch.arange(kernel_size) * dilation  # (k,)  offsets inside a window
    index = starts[:, None] + taps[None, :]  # (T_out, k)
    return x_pad[:, :, index]  # (B, C, T_out, k)


def conv1d(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None = None,
           stride: int = 1, padding: int = 0, dilation: int = 1) -> torch.Tensor:
    """1-D convolution (cross-correlation, as in every deep-learning library)
    (eq-conv-def, eq-conv-general).

    One small linear network, the kernel ``weight (C_out, C_in, k)``, is applied to
    every
    window::

        y[b, o, t] = bias[o] + sum_c sum_j weight[o, c, j] * x_pad[b, c, t * s + j * d]

    Shapes: ``x (B, C_in, T) -> y (B, C_out, T_out)`` with ``T_out`` from
    :func:`output_length`. The number of parameters, ``C_out * C_in * k (+ C_out)``,
    does not depend on ``T``.
    """
    dims = _check_sequence(x)
    check_tensor(weight, "weight")
    check_nonempty(weight, "weight", "C_out C_in k", "k")
    check_shape(weight, "weight", "C_out C_in k", sizes={"C_in": dims["C"]})
    check_same_dtype("x", x, "weight", weight)
    kernel_size = weight.shape[-1]
    windows = unfold1d(x, kernel_size, stride, padding, dilation)  # (B, C_in, T_out, k)
    y = torch.einsum("bctj,ocj->bot", windows, weight)  # (B, C_out, T_out)
    if bias is not None:
        check_shape(bias, "bias", "C_out", sizes={"C_out": weight.shape[0]})
        check_same_dtype("x", x, "bias", bias)
        y = y + bias[None, :, None]
    return y


def insert_zeros(x: torch.Tensor, factor: int) -> torch.Tensor:
    """Up-sample by inserting ``factor - 1`` zeros between neighbours (eq-conv-zero-insert).

    ``z[..., i * factor] = x[..., i]`` and zero elsewhere: ``(B, C, T) -> (B, C, (T - 1) * factor + 1)``.
    ``T = 0`` is refused (``ValueError``): the formula has no length for it.
    """
    dims = _check_sequence(x)
    check_nonempty(x, "x", "B C T", "T")
    check_int(factor, "factor", 1)
    z = x.new_zeros((dims["B"], dims["C"], (dims["T"] - 1) * factor + 1))
    z[:, :, ::factor] = x
    return z


def conv_transpose1d(x: torch.Tensor, weight: torch.Tensor,
                     bias: torch.Tensor | None = None, stride: int = 1,
                     padding: int = 0, output_padding: int = 0,
                     dilation: int = 1) -> torch.Tensor:
    """Transposed convolution = zero insertion + convolution with the flipped kernel
    (eq-conv-transpose).

    ``weight`` has torch's transposed layout ``(C_in, C_out, k)``. The steps:

    1. insert ``s - 1`` zeros between input samples (:func:`insert_zeros`);
    2. pad ``d (k - 1)`` zeros on the left and ``d (k - 1) + output_padding`` on the
       right;
    3. convolve (stride 1) with the kernel flipped in time and with in/out channels
       swapped;
    4. drop ``padding`` samples at the start and keep
       ``T_out = (T - 1) s - 2 a + d (k - 1) + output_padding + 1`` samples.

    It is the adjoint of :func:`conv1d` with the same ``stride``, ``padding``,
    ``dilation``: ``<conv1d(u, W), v> = <u, conv_transpose1d(v, W)>``.
    """
    dims = _check_sequence(x)
    check_tensor(weight, "weight")
    check_nonempty(weight, "weight", "C_in C_out k", "k")
    check_shape(weight, "weight", "C_in C_out k", sizes={"C_in": dims["C"]})
    check_same_dtype("x", x, "weight", weight)
    check_int(stride, "stride", 1)
    check_int(padding, "padding", 0)
    check_int(dilation, "dilation", 1)
    check_int(output_padding, "output_padding", 0)
    if output_padding >= max(stride, dilation):
        raise ValueError(f"output_padding must be smaller than stride ({stride}) or "
                         f"dilation ({dilation}), got {output_padding}")
    kernel_size = weight.shape[-1]
    reach = dilation * (kernel_size - 1)
    t_out = (dims["T"] - 1) * stride - 2 * padding + reach + output_padding + 1
    if t_out < 1:
        raise ValueError(f"padding {padding} removes the whole output (length {t_out} "
                         f"with output_padding {output_padding})")
    z = insert_zeros(x, stride)  # (B, C_in, (T - 1) s + 1)
    z = pad1d(z, reach, reach + output_padding)  # full padding: every overlap counts
    flipped = weight.flip(-1).transpose(0, 1)  # (C_out, C_in, k)
    # (B, C_out, (T - 1) s + reach + 1 + output_padding)
    y = conv1d(z, flipped, dilation=dilation)
    y = y[:, :, padding:padding + t_out]  # (B, C_out, T_out)
    if bias is not None:
        check_shape(bias, "bias", "C_out", sizes={"C_out": weight.shape[1]})
        check_same_dtype("x", x, "bias", bias)
        y = y + bias[None, :, None]
    return y


def _pool_windows(x: torch.Tensor, kernel_size: int, stride: int | None, padding: int,
                  dilation: int, pad_value: float) -> torch.Tensor:
    """Windows for pooling; ``stride`` defaults to ``kernel_size`` as in torch."""
    check_int(kernel_size, "kernel_size", 1)
    check_int(padding, "padding", 0)
    if 2 * padding > kernel_size:
        raise ValueError(f"padding must be at most half of kernel_size, got padding={padding} "
                         f"and kernel_size={kernel_size}")
    stride = kernel_size if stride is None else stride
    return unfold1d(x, kernel_size, stride, padding, dilation, pad_value)  # (B, C, T_out, k)


def max_pool1d(x: torch.Tensor, kernel_size: int, stride: int | None = None, padding: int = 0,
               dilation: int = 1) -> torch.Tensor:
    """Max pooling (eq-conv-pool): ``y[b, c, t] = max_j x_pad[b, c, t s + j d]`` (padding counts as ``-inf``).

    ``x (B, C, T) -> (B, C, T_out)``; ``stride`` defaults to ``kernel_size``.
    """
    windows = _pool_windows(x, kernel_size, stride, padding, dilation, -math.inf)
    return windows.amax(dim=-1)  # (B, C, T_out)


def avg_pool1d(x: torch.Tensor, kernel_size: int, stride: int | None = None,
               padding: int = 0) -> torch.Tensor:
    """Mean pooling (eq-conv-pool): ``y[b, c, t] = (1 / k) sum_j x_pad[b, c, t s + j]`` (padding counts as 0).

    Padded zeros are counted in the mean (torch's ``count_include_pad=True``).
    """
    windows = _pool_windows(x, kernel_size, stride, padding, 1, 0.0)
    return windows.mean(dim=-1)  # (B, C, T_out)


def lp_pool1d(x: torch.Tensor, norm_type: float, kernel_size: int,
              stride: int | None = None) -> torch.Tensor:
    """p-norm pooling: the p-norm of every window (eq-conv-pool, eq-conv-lp-limit).

    ``y[b, c, t] = (sum_j |x[b, c, t s + j]| ** p) ** (1 / p)`` -- a sum, *not* a mean, as in
    ``torch.nn.functional.lp_pool1d``; ``p = inf`` gives ``max_j |x|``. With the absolute
    values it is a norm of the window for every ``p >= 1`` (non-negative, zero only for the
    zero window, ``y(c x) = |c| y(x)``, triangle inequality). On non-negative inputs (e.g.
    after a ReLU), and for even ``p`` on any inputs, it equals torch's ``lp_pool1d``, which
    omits the absolute values (and returns NaN where its ``pow(s, 1 / p)`` meets a negative
    window sum ``s``). On non-negative inputs

    * ``p = 1`` gives the window sum, ``k`` times the mean (a mean pool up to the factor ``k``);
    * ``p -> inf`` tends to the max pool, since ``max <= y <= k ** (1 / p) * max``.
    """
    if isinstance(norm_type, bool) or not isinstance(norm_type, (int, float)):
        raise TypeError(f"norm_type must be a number, got {type(norm_type).__name__}")
    if not norm_type > 0:
        raise ValueError(f"norm_type must be > 0, got {norm_type}")
    check_tensor(x, "x")  # before x.abs() below
    # an int beyond float's range (10**400) is p = inf, as its limit
    if check_real(norm_type, "norm_type", finite=False) == math.inf:
        return max_pool1d(x.abs(), kernel_size, stride)
    windows = _pool_windows(x, kernel_size, stride, 0, 1, 0.0)  # (B, C, T_out, k)
    return windows.abs().pow(norm_type).sum(dim=-1).pow(1.0 / norm_type)  # (B, C, T_out)


def impulse(length: int, at: int = 0,
            dtype: torch.dtype = torch.float64) -> torch.Tensor:
    """The unit impulse ``delta[t] = 1 if t == at else 0`` as a ``(1, 1, length)``
    sequence."""
    check_int(length, "length", 1)
    check_int(at, "at", 0)
    check_float_dtype(dtype, "dtype")
    if at >= length:
        raise ValueError(f"at must be < length ({length}), got {at}")
    delta = torch.zeros(1, 1, length, dtype=dtype)
    delta[0, 0, at] = 1.0
    return delta


def impulse_response(system: Callable[[torch.Tensor], torch.Tensor], length: int,
                     dtype: torch.dtype = torch.float64) -> torch.Tensor:
    """Feed a unit impulse at ``t = 0`` to a sequence-to-sequence map and return its output ``(T,)``.

    ``system`` maps a ``(1, 1, T)`` sequence to a ``(1, 1, T)`` sequence (e.g. a causal
    convolution or a linear recurrence). For a linear, time-invariant system the response
    determines everything: ``y = sum_i x_i * response[t - i]`` (eq-conv-impulse).
    """
    y = system(impulse(length, dtype=dtype))
    check_shape(y, "system(impulse)", "B C T", sizes={"B": 1, "C": 1, "T": length})
    return y[0, 0]


def causal_conv1d(x: torch.Tensor, weight: torch.Tensor,
                  bias: torch.Tensor | None = None, dilation: int = 1) -> torch.Tensor:
    """Convolution that sees only the present and the past:
    ``(B, C_in, T) -> (B, C_out, T)``.

    Pads ``d (k - 1)`` zeros on the left only, so that ``y[t]`` depends on
    ``x[t - d (k - 1)], ..., x[t]``: a finite response of length ``d (k - 1) + 1``.
    """
    _check_sequence(x)
    check_tensor(weight, "weight")
    check_nonempty(weight, "weight", "C_out C_in k", "k")
    check_int(dilation, "dilation", 1)
    reach = dilation * (weight.shape[-1] - 1)
    return conv1d(pad1d(x, reach, 0), weight, bias, dilation=dilation)
