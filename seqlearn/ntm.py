r"""Neural Turing Machine (Graves et al. 2014): a network that reads and writes memory.

A memory matrix ``M`` of ``N`` rows (*locations*) of ``W`` numbers is read and written
through *heads*. At every step a head turns a few numbers emitted by the controller into
a *weighting* ``w``, a probability distribution over the ``N`` rows, in four steps (the
book's ``eq-ntm-cosine`` to ``eq-ntm-sharpen``)::

    content      w^c_i = softmax_i(beta K(k, M_i)),   K(u, v) = u.v / (|u| |v|)
    interpolate  w^g   = g w^c + (1 - g) w_{t-1}
    shift        w~_i  = sum_j w^g_j s_{(i - j) mod N}      (a circular convolution)
    sharpen      w_i   = (w~_i)^gamma / sum_j (w~_j)^gamma

with key ``k`` (W,), key strength ``beta >= 0``, gate ``g`` in [0, 1], a shift
distribution ``s`` over the offsets ``-r .. r`` (``S = 2r + 1`` numbers) and
``gamma >= 1``. A read head returns ``r = sum_i w_i M_i`` (``eq-ntm-read``); the write
head erases, then adds (``eq-ntm-erase``, ``eq-ntm-add``)::

    M_i <- M_i * (1 - w_i e) + w_i a,      e in [0, 1]^W (erase), a (W,) (add).

Every step is differentiable, so the controller learns by gradient descent where to
write and what to read. The functions below are the steps one by one (each validates
its arguments); :class:`NTMCell` chains them for one time step with an LSTM or a
feed-forward controller, and :class:`NTM` runs the cell over a sequence and records the
weightings.

The cosine similarity divides by ``max(|u| |v|, eps)``, so a row of zeros (an empty
memory) has similarity 0 instead of NaN; ``eps`` (1e-8) changes nothing for vectors of
norm 1e-4 and more. Within a step the write comes before the reads, so a head can read
at step ``t`` what was written at step ``t`` (the order of the differentiable neural
computer, Graves et al. 2016; Graves et al. 2014 leave it open).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from seqlearn.validate import (check_int, check_real, check_same_dtype, check_shape,
                               check_tensor)

EPS = 1e-8
"""The floor of ``|u| |v|`` in :func:`cosine_similarity`."""

CONTROLLERS = ("lstm", "feedforward")


# ------------------------------------------------------------------------ validation

def _check_floats(pairs: list[tuple[Any, str]]) -> None:
    """Every tensor floating and of the first one's dtype."""
    for x, name in pairs:
        check_tensor(x, name)
    first, first_name = pairs[0]
    for x, name in pairs[1:]:
        check_same_dtype(first_name, first, name, x)


def _check_in_range(x: Tensor, name: str, low: float,
                    high: float | None = None) -> None:
    """``ValueError`` unless every entry is finite and in ``[low, high]``."""
    ok = torch.isfinite(x) & (x >= low)
    if high is not None:
        ok &= x <= high
    if not bool(ok.all()):
        where = f"[{low}, {high}]" if high is not None else f">= {low}"
        bad = x[~ok].reshape(-1)[0]
        raise ValueError(f"{name} must hold finite numbers {where}, got "
                         f"{float(bad):.4g}")


def _check_distribution(w: Tensor, name: str) -> None:
    """``ValueError`` unless ``w`` is nonnegative and sums to 1 over its last axis."""
    _check_in_range(w, name, 0.0)
    total = w.sum(-1)
    tol = 1e-3 if w.dtype in (torch.float16, torch.bfloat16) else 1e-5
    if not bool(((total - 1).abs() <= tol).all()):
        raise ValueError(f"{name} must sum to 1 over its last axis (a weighting), got "
                         f"sums from {float(total.min()):.4g} to "
                         f"{float(total.max()):.4g}")


# -------------------------------------------------------------- addressing kernels

def _cosine(key: Tensor, memory: Tensor, eps: float) -> Tensor:
    dots = (memory @ key[..., None])[..., 0]  # (..., N)
    norms = memory.norm(dim=-1) * key.norm(dim=-1, keepdim=True)  # (..., N)
    return dots / norms.clamp_min(eps)


def _content(key: Tensor, beta: Tensor, memory: Tensor, eps: float) -> Tensor:
    scores = beta[..., None] * _cosine(key, memory, eps)  # (..., N)
    return torch.softmax(scores, dim=-1)


def _interpolate(content: Tensor, previous: Tensor, gate: Tensor) -> Tensor:
    g = gate[..., None]  # (..., 1)
    return g * content + (1 - g) * previous  # (..., N)


def _shift(weights: Tensor, shifts: Tensor) -> Tensor:
    # pad circularly by r on each side, p[n] = w[(n - r) mod N]; window i of the
    # padding holds p[i + q] = w[i - (r - q)], the row that offset r - q carries to
    # row i, whose probability is s[2r - q]: the flipped shift distribution
    N, S = weights.shape[-1], shifts.shape[-1]
    r = (S - 1) // 2
    padded = torch.cat([weights[..., N - r:], weights, weights[..., :r]], dim=-1)
    windows = padded.unfold(-1, S, 1)  # (..., N, S): window i holds p[i .. i + 2r]
    return (windows @ shifts.flip(-1)[..., :, None])[..., 0]  # (..., N)


def _sharpen(weights: Tensor, gamma: Tensor) -> Tensor:
    # (w / max w)^gamma, the same weighting as w^gamma once normalised: the largest term
    # is 1, so the sum never underflows (a uniform w = 1/12 with gamma = 50 gives
    # 12^-50, below float32's smallest number, and w^gamma / sum w^gamma was 0/0).
    # Powers only where w > 0: 0^gamma = 0, and no 0 * log 0 in the gradient.
    ratio = weights / weights.amax(-1, keepdim=True)  # (..., N), max 1
    tiny = torch.finfo(weights.dtype).tiny
    powered = torch.where(ratio > 0, ratio.clamp_min(tiny).pow(gamma[..., None]),
                          torch.zeros_like(ratio))
    return powered / powered.sum(-1, keepdim=True)  # (..., N)


def _read(memory: Tensor, weights: Tensor) -> Tensor:
    return (weights[..., None, :] @ memory)[..., 0, :]  # (..., W)


def _write(memory: Tensor, weights: Tensor, erase: Tensor, add: Tensor) -> Tensor:
    w = weights[..., :, None]  # (..., N, 1)
    return memory * (1 - w * erase[..., None, :]) + w * add[..., None, :]


# ----------------------------------------------------------- public, one step each

def cosine_similarity(key: Tensor, memory: Tensor, *, eps: float = EPS) -> Tensor:
    r"""``K(k, M_i) = k . M_i / max(|k| |M_i|, eps)`` for every row
    (``eq-ntm-cosine``).

    key (..., W), memory (..., N, W) -> (..., N), in [-1, 1].
    """
    _check_floats([(key, "key"), (memory, "memory")])
    dims: dict = {}
    check_shape(key, "key", "... W", bound=dims)
    check_shape(memory, "memory", "... N W", bound=dims)
    return _cosine(key, memory, check_real(eps, "eps", positive=True))


def content_weights(key: Tensor, beta: Tensor, memory: Tensor, *,
                    eps: float = EPS) -> Tensor:
    r"""Content addressing ``w^c_i = softmax_i(beta K(k, M_i))`` (``eq-ntm-content``).

    key (..., W), beta (...) >= 0, memory (..., N, W) -> w^c (..., N). ``beta = 0``
    weighs every row alike; a large ``beta`` puts the weight on the most similar rows.
    """
    _check_floats([(key, "key"), (beta, "beta"), (memory, "memory")])
    dims: dict = {}
    check_shape(key, "key", "... W", bound=dims)
    check_shape(beta, "beta", "...", bound=dims)
    check_shape(memory, "memory", "... N W", bound=dims)
    _check_in_range(beta, "beta", 0.0)
    return _content(key, beta, memory, check_real(eps, "eps", positive=True))


def interpolate(content: Tensor, previous: Tensor, gate: Tensor) -> Tensor:
    r"""``w^g = g w^c + (1 - g) w_{t-1}`` (``eq-ntm-gate``): ``g = 1`` addresses by
    content only, ``g = 0`` keeps the previous weighting.

    content (..., N), previous (..., N), gate (...) in [0, 1] -> (..., N).
    """
    _check_floats([(content, "content"), (previous, "previous"), (gate, "gate")])
    dims: dict = {}
    check_shape(content, "content", "... N", bound=dims)
    check_shape(previous, "previous", "... N", bound=dims)
    check_shape(gate, "gate", "...", bound=dims)
    _check_in_range(gate, "gate", 0.0, 1.0)
    return _interpolate(content, previous, gate)


def shift(weights: Tensor, shifts: Tensor) -> Tensor:
    r"""Circular convolution ``w~_i = sum_j w_j s_{(i - j) mod N}`` (``eq-ntm-shift``).

    weights (..., N), shifts (..., S) with ``S = 2r + 1 <= N`` the probabilities of
    the offsets ``-r .. r`` (entry ``m`` is offset ``m - r``) -> (..., N). All the
    weight on offset ``+1`` moves every row's weight to the next row, the last to the
    first.
    """
    _check_floats([(weights, "weights"), (shifts, "shifts")])
    dims: dict = {}
    check_shape(weights, "weights", "... N", bound=dims)
    found = check_shape(shifts, "shifts", "... S", bound=dims)
    S = found["S"]
    if S % 2 == 0 or S > dims["N"]:
        raise ValueError(f"shifts must have an odd number S = 2r + 1 <= N = "
                         f"{dims['N']} of offsets on its last axis, got S = {S}")
    return _shift(weights, shifts)


def sharpen(weights: Tensor, gamma: Tensor) -> Tensor:
    r"""``w_i = w~_i^gamma / sum_j w~_j^gamma`` (``eq-ntm-sharpen``), ``gamma >= 1``.

    weights (..., N) a weighting (nonnegative, sums to 1), gamma (...) -> (..., N).
    Undoes the blur of a fractional shift; ``gamma = 1`` changes nothing.
    """
    _check_floats([(weights, "weights"), (gamma, "gamma")])
    dims: dict = {}
    check_shape(weights, "weights", "... N", bound=dims)
    check_shape(gamma, "gamma", "...", bound=dims)
    _check_distribution(weights, "weights")
    _check_in_range(gamma, "gamma", 1.0)
    return _sharpen(weights, gamma)


class Addressing(NamedTuple):
    """The four weightings of one head's addressing, each (..., N)."""

    content: Tensor  # w^c, eq-ntm-content
    gated: Tensor  # w^g, eq-ntm-gate
    shifted: Tensor  # w~, eq-ntm-shift
    weights: Tensor  # w, eq-ntm-sharpen: the head's weighting


def address(memory: Tensor, previous: Tensor, key: Tensor, beta: Tensor,
            gate: Tensor, shifts: Tensor, gamma: Tensor, *,
            eps: float = EPS) -> Addressing:
    r"""The whole addressing of one head: content, interpolation, shift, sharpening.

    memory (..., N, W), previous (..., N) the head's last weighting, key (..., W),
    beta, gate, gamma (...), shifts (..., S) -> :class:`Addressing` of (..., N)
    weightings.
    """
    _check_floats([(memory, "memory"), (previous, "previous"), (key, "key"),
                   (beta, "beta"), (gate, "gate"), (shifts, "shifts"),
                   (gamma, "gamma")])
    dims: dict = {}
    check_shape(memory, "memory", "... N W", bound=dims)
    check_shape(previous, "previous", "... N", bound=dims)
    check_shape(key, "key", "... W", bound=dims)
    for x, name in ((beta, "beta"), (gate, "gate"), (gamma, "gamma")):
        check_shape(x, name, "...", bound=dims)
    _check_distribution(previous, "previous")
    _check_in_range(beta, "beta", 0.0)
    _check_in_range(gate, "gate", 0.0, 1.0)
    _check_in_range(gamma, "gamma", 1.0)
    _check_distribution(shifts, "shifts")
    content = content_weights(key, beta, memory, eps=eps)
    gated = _interpolate(content, previous, gate)
    shifted = shift(gated, shifts)
    return Addressing(content, gated, shifted, _sharpen(shifted, gamma))


def read(memory: Tensor, weights: Tensor) -> Tensor:
    r"""A read head: ``r = sum_i w_i M_i`` (``eq-ntm-read``).

    memory (..., N, W), weights (..., N) -> r (..., W).
    """
    _check_floats([(memory, "memory"), (weights, "weights")])
    dims: dict = {}
    check_shape(memory, "memory", "... N W", bound=dims)
    check_shape(weights, "weights", "... N", bound=dims)
    return _read(memory, weights)


def write(memory: Tensor, weights: Tensor, erase: Tensor, add: Tensor) -> Tensor:
    r"""The write head: erase, then add, ``M_i <- M_i * (1 - w_i e) + w_i a``
    (``eq-ntm-erase``, ``eq-ntm-add``).

    memory (..., N, W), weights (..., N), erase (..., W) in [0, 1], add (..., W) -> the
    new memory (..., N, W); the argument is not changed. A row with ``w_i = 0`` keeps
    its contents; with ``w_i = 1`` and ``e = 1`` it becomes ``a``.
    """
    _check_floats([(memory, "memory"), (weights, "weights"), (erase, "erase"),
                   (add, "add")])
    dims: dict = {}
    check_shape(memory, "memory", "... N W", bound=dims)
    check_shape(weights, "weights", "... N", bound=dims)
    check_shape(erase, "erase", "... W", bound=dims)
    check_shape(add, "add", "... W", bound=dims)
    _check_in_range(erase, "erase", 0.0, 1.0)
    return _write(memory, weights, erase, add)


# --------------------------------------------------------------------------- the cell

class NTMState(NamedTuple):
    """What an NTM carries from one step to the next."""

    memory: Tensor  # (B, N, W)
    reads: Tensor  # (B, R, W): the last step's read vectors
    read_weights: Tensor  # (B, R, N)
    write_weights: Tensor  # (B, N)
    controller: tuple[Tensor, Tensor] | None  # LSTM (h, c), each (B, C), or None


class HeadParameters(NamedTuple):
    """What the controller emits at one step for R read heads and one write head."""

    key: Tensor  # (B, R + 1, W), the write head last
    beta: Tensor  # (B, R + 1) >= 0
    gate: Tensor  # (B, R + 1) in [0, 1]
    shifts: Tensor  # (B, R + 1, S), a distribution over the offsets -r .. r
    gamma: Tensor  # (B, R + 1) >= 1
    erase: Tensor  # (B, W) in [0, 1]
    add: Tensor  # (B, W)


class NTMCell(nn.Module):
    r"""One time step of a Neural Turing Machine with ``read_heads`` read heads and one
    write head.

    The controller reads ``[x_t; r_{t-1}]`` (the input and the last step's reads): an
    ``nn.LSTMCell`` (``controller="lstm"``) or one ``tanh`` layer
    (``"feedforward"``), ``h_t`` of ``controller_size`` units. A linear map of ``h_t``
    gives every head's parameters (:meth:`head_parameters`); the write head addresses
    and writes (:func:`address`, :func:`write`), then the read heads address the new
    memory and read. ``forward`` returns ``[h_t; r_t]`` (B, controller_size + R W), the
    input of an output layer, and the new :class:`NTMState`.

    The memory starts as ``1e-6`` everywhere (a constant start trains faster than a
    learned or random one, Collier & Beel 2018), every head's weighting on row 0 and the
    reads as learned vectors.
    """

    def __init__(self, input_size: int, controller_size: int, memory_size: int,
                 word_size: int, *, read_heads: int = 1, shift_radius: int = 1,
                 controller: str = "lstm") -> None:
        super().__init__()
        self.input_size = check_int(input_size, "input_size")
        self.controller_size = check_int(controller_size, "controller_size")
        self.memory_size = check_int(memory_size, "memory_size")
        self.word_size = check_int(word_size, "word_size")
        self.read_heads = check_int(read_heads, "read_heads")
        self.shift_radius = check_int(shift_radius, "shift_radius", minimum=0,
                                      maximum=(self.memory_size - 1) // 2)
        if controller not in CONTROLLERS:
            raise ValueError(f"controller must be one of {CONTROLLERS}, got "
                             f"{controller!r}")
        self.controller_kind = controller
        R, W, S = self.read_heads, self.word_size, 2 * self.shift_radius + 1
        inputs = self.input_size + R * W
        if controller == "lstm":
            self.controller = nn.LSTMCell(inputs, self.controller_size)
        else:
            self.controller = nn.Linear(inputs, self.controller_size)
        # per head: key W, beta 1, gate 1, shifts S, gamma 1; then erase and add
        self.heads = nn.Linear(self.controller_size, (R + 1) * (W + S + 3) + 2 * W)
        self.initial_reads = nn.Parameter(torch.randn(R, W) * 0.1)  # (R, W)

    def extra_repr(self) -> str:
        return (f"{self.input_size}, controller={self.controller_kind}"
                f"({self.controller_size}), memory=({self.memory_size}, "
                f"{self.word_size}), read_heads={self.read_heads}, "
                f"shift_radius={self.shift_radius}")

    @property
    def output_size(self) -> int:
        """The size of ``[h_t; r_t]``."""
        return self.controller_size + self.read_heads * self.word_size

    def initial_state(self, batch: int) -> NTMState:
        """The state before the first step of ``batch`` sequences."""
        batch = check_int(batch, "batch", minimum=0)
        p = self.initial_reads
        B, N, W, R = batch, self.memory_size, self.word_size, self.read_heads
        memory = torch.full((B, N, W), 1e-6, dtype=p.dtype, device=p.device)
        start = torch.zeros(B, R + 1, N, dtype=p.dtype, device=p.device)
        start[..., 0] = 1.0  # every head on row 0
        controller = None
        if self.controller_kind == "lstm":
            zeros = torch.zeros(B, self.controller_size, dtype=p.dtype,
                                device=p.device)
            controller = (zeros, zeros)
        return NTMState(memory, p.expand(B, R, W), start[:, :R], start[:, R],
                        controller)

    def head_parameters(self, h: Tensor) -> HeadParameters:
        """Split ``heads(h)`` (B, ...) into every head's parameters, each in its
        range: key and add by ``tanh``, beta by softplus, gate and erase by a sigmoid,
        the shifts by a softmax and gamma by ``1 + softplus``."""
        B, R, W = h.shape[0], self.read_heads, self.word_size
        S = 2 * self.shift_radius + 1
        raw = self.heads(h)  # (B, (R + 1)(W + S + 3) + 2W)
        per_head, erase, add = raw.split([(R + 1) * (W + S + 3), W, W], dim=-1)
        key, beta, gate, shifts, gamma = per_head.view(B, R + 1, W + S + 3).split(
            [W, 1, 1, S, 1], dim=-1)
        return HeadParameters(torch.tanh(key), F.softplus(beta[..., 0]),
                              torch.sigmoid(gate[..., 0]),
                              torch.softmax(shifts, dim=-1),
                              1 + F.softplus(gamma[..., 0]), torch.sigmoid(erase),
                              torch.tanh(add))

    def forward(self, x: Tensor,
                state: NTMState | None = None) -> tuple[Tensor, NTMState]:
        check_tensor(x, "x")
        dims = check_shape(x, "x", "B D", sizes={"D": self.input_size})
        B, R = dims["B"], self.read_heads
        if state is None:
            state = self.initial_state(B)
        elif not isinstance(state, NTMState):
            raise TypeError(f"state must be an NTMState or None, got "
                            f"{type(state).__name__}")
        else:
            check_shape(state.memory, "state.memory", "B N W", sizes={
                "B": B, "N": self.memory_size, "W": self.word_size})
        check_same_dtype("x", x, "state.memory", state.memory)
        inputs = torch.cat([x, state.reads.flatten(1)], dim=-1)  # (B, D + R W)
        if self.controller_kind == "lstm":
            h, c = self.controller(inputs, state.controller)  # (B, C) each
            controller = (h, c)
        else:
            h, controller = torch.tanh(self.controller(inputs)), None  # (B, C)
        p = self.head_parameters(h)
        previous = torch.cat([state.read_weights, state.write_weights[:, None]], 1)
        # the write head first (row R of the parameters), then reads of the new memory
        w_write = self._address(state.memory, previous[:, R], p, R)  # (B, N)
        memory = _write(state.memory, w_write, p.erase, p.add)  # (B, N, W)
        w_read = self._address(memory[:, None], previous[:, :R], p, slice(0, R))
        reads = w_read @ memory  # (B, R, W): eq-ntm-read for every head
        out = torch.cat([h, reads.flatten(1)], dim=-1)  # (B, C + R W)
        return out, NTMState(memory, reads, w_read, w_write, controller)

    @staticmethod
    def _address(memory: Tensor, previous: Tensor, p: HeadParameters,
                 heads: Any) -> Tensor:
        content = _content(p.key[:, heads], p.beta[:, heads], memory, EPS)
        gated = _interpolate(content, previous, p.gate[:, heads])
        return _sharpen(_shift(gated, p.shifts[:, heads]), p.gamma[:, heads])


class NTMTrace(NamedTuple):
    """The weightings of a whole sequence and the last memory."""

    read_weights: Tensor  # (B, T, R, N)
    write_weights: Tensor  # (B, T, N)
    memory: Tensor  # (B, N, W) after the last step


class NTM(nn.Module):
    r"""A Neural Turing Machine over sequences: :class:`NTMCell` and an output layer.

    ``forward(x (B, T, D)) -> (logits (B, T, output_size), NTMTrace)`` with
    ``logits_t = W_o [h_t; r_t] + b_o``. The arguments are those of :class:`NTMCell`.
    """

    def __init__(self, input_size: int, output_size: int, controller_size: int,
                 memory_size: int, word_size: int, *, read_heads: int = 1,
                 shift_radius: int = 1, controller: str = "lstm") -> None:
        super().__init__()
        self.cell = NTMCell(input_size, controller_size, memory_size, word_size,
                            read_heads=read_heads, shift_radius=shift_radius,
                            controller=controller)
        self.output = nn.Linear(self.cell.output_size,
                                check_int(output_size, "output_size"))

    def forward(self, x: Tensor,
                state: NTMState | None = None) -> tuple[Tensor, NTMTrace]:
        check_tensor(x, "x")
        dims = check_shape(x, "x", "B T D", sizes={"D": self.cell.input_size})
        if dims["T"] < 1:
            raise ValueError(f"x must have T >= 1 time steps, got shape "
                             f"{tuple(x.shape)}")
        outs, reads, writes = [], [], []
        for t in range(dims["T"]):
            out, state = self.cell(x[:, t], state)
            outs.append(out)
            reads.append(state.read_weights)
            writes.append(state.write_weights)
        logits = self.output(torch.stack(outs, 1))  # (B, T, O)
        trace = NTMTrace(torch.stack(reads, 1), torch.stack(writes, 1), state.memory)
        return logits, trace
