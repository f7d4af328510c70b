"""NARX, Jordan and Elman networks: three places for a network's memory of the past.

Chapter: *Recurrent networks* (``chapters/recurrent_networks.ipynb``). Tensors are batch-first.

* :class:`NARX` -- the memory is a window of past inputs and past *outputs* fed back
  (tapped delay lines outside the network) (eq-rnn-narx).
* :class:`JordanNetwork` -- the memory is a set of context units holding a fixed, non-learned,
  exponentially decaying sum of past outputs, ``c_t = mu c_{t-1} + y_{t-1}`` (eq-rnn-jordan).
* :class:`ElmanRNN` -- the memory is the hidden state itself, fed back through learned weights,
  ``h_t = f(W_ih x_t + b_ih + W_hh h_{t-1} + b_hh)`` (eq-rnn-elman); follows ``torch.nn.RNN``
  with ``batch_first=True``.

Unrolling, stacking and running both directions are written once, for any cell that offers
``project_input(x)`` and ``step(gx_t, state)``: :func:`scan_cell` (one layer, one direction,
eq-rnn-unroll), :func:`run_stack` (layers and directions in torch's layout, eq-rnn-deep,
eq-rnn-bidir) and :class:`StackedRNN` (validation and ``from_torch``). The gated networks of
``seqlearn.gated`` reuse them with their own cells.
"""

from __future__ import annotations

import math
from typing import Callable, Sequence

import torch
import torch.nn.functional as F
from torch import nn

from seqlearn.conv import pad1d, unfold1d
from seqlearn.scan import _linear_scan
from seqlearn.validate import (check_bool, check_dtypes_agree, check_int,
                               check_nonempty, check_real, check_same_dtype,
                               check_shape, check_tensor, first_weight)

ACTIVATIONS: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "tanh": torch.tanh,
    "relu": torch.relu,
    "identity": lambda z: z,
}


def _activation(name: object, allowed: tuple[str, ...]) -> Callable[[torch.Tensor], torch.Tensor]:
    if not isinstance(name, str) or name not in allowed:
        raise ValueError(f"nonlinearity must be one of {allowed}, got {name!r}")
    return ACTIVATIONS[name]


def _check_input(x: torch.Tensor, input_size: int, like: torch.Tensor | None
                 ) -> dict[str, int]:
    """``x`` must be a floating ``(B, T, D=input_size)`` tensor with ``T >= 1`` and the
    dtype of ``like`` (the parameters; None: any)."""
    dims = check_shape(x, "x", "B T D", sizes={"D": input_size})
    check_tensor(x, "x")
    check_dtypes_agree(("x", x), ("the parameters", like))
    if dims["T"] < 1:
        raise ValueError(f"x must hold at least one time step, got shape {tuple(x.shape)}")
    return dims


def past_window(seq: torch.Tensor, width: int) -> torch.Tensor:
    """The last ``width`` vectors up to and including ``t``, for every ``t``, zeros
    before the start.

    ``(B, T, D) -> (B, T, width * D)``, flattened oldest first:
    ``[seq_{t-width+1}, ..., seq_{t-1}, seq_t]``. This is the input of a causal
    convolution (see ``seqlearn.conv.causal_conv1d``), i.e. a tapped delay line.
    """
    check_tensor(seq, "seq")
    dims = check_shape(seq, "seq", "B T D")
    check_int(width, "width", 1)
    if dims["T"] == 0:  # no time step, no window
        return seq.new_zeros(dims["B"], 0, width * dims["D"])
    by_channel = pad1d(seq.transpose(1, 2), width - 1, 0)  # (B, D, width - 1 + T)
    windows = unfold1d(by_channel, width)  # (B, D, T, width)
    return windows.permute(0, 2, 3, 1).flatten(2)  # (B, T, width * D)


class NARX(nn.Module):
    """Nonlinear AutoRegressive network with eXogenous inputs (eq-rnn-narx).

    With an input window of ``p`` steps and an output window of ``q`` steps::

        h_t = tanh(A [x_{t-p+1}; ...; x_t] + B [y_{t-q}; ...; y_{t-1}] + b)
        y_t = C h_t + c

    (windows oldest first, zeros before ``t = 0``). ``q = 0`` leaves a purely feed-forward
    network over a finite input window (a causal convolution with a hidden layer: finite
    response); ``q >= 1`` feeds outputs back, so one input affects every later output.
    The memory lives in the two delay lines, not in the network.
    """

    def __init__(self, input_size: int, hidden_size: int, output_size: int,
                 input_window: int = 2, output_window: int = 2) -> None:
        super().__init__()
        self.input_size = check_int(input_size, "input_size", 1)
        self.hidden_size = check_int(hidden_size, "hidden_size", 1)
        self.output_size = check_int(output_size, "output_size", 1)
        self.input_window = check_int(input_window, "input_window", 1)
        self.output_window = check_int(output_window, "output_window", 0)
        self.from_inputs = nn.Linear(input_window * input_size, hidden_size)  # A, b
        self.from_outputs = (nn.Linear(output_window * output_size, hidden_size, bias=False)
                             if output_window else None)  # B (none without feedback)
        self.readout = nn.Linear(hidden_size, output_size)  # C, c

    def extra_repr(self) -> str:
        return f"input_window={self.input_window}, output_window={self.output_window}"

    def forward(self, x: torch.Tensor, y_feedback: torch.Tensor | None = None) -> torch.Tensor:
        """``x (B, T, D) -> y (B, T, O)``.

        By default the network feeds back its own outputs (closed loop, a step-by-step loop).
        Passing the true outputs ``y_feedback (B, T, O)`` fills the output window with them
        instead (open loop, "teacher forcing"): ``y_t`` then sees ``y_feedback_{t-q}, ...,
        y_feedback_{t-1}``, every step is known in advance and all steps run in parallel.
        """
        dims = _check_input(x, self.input_size, self.readout.weight)
        if y_feedback is not None:
            check_shape(y_feedback, "y_feedback", "B T O",
                        sizes={"B": dims["B"], "T": dims["T"], "O": self.output_size})
            check_same_dtype("x", x, "y_feedback", y_feedback)
        drive = self.from_inputs(past_window(x, self.input_window))  # (B, T, H): input part, all t
        q = self.output_window
        if q == 0:  # no feedback: a feed-forward network over a sliding window
            return self.readout(torch.tanh(drive))  # (B, T, O)
        if y_feedback is not None:
            previous = torch.cat([torch.zeros_like(y_feedback[:, :1]), y_feedback[:, :-1]],
                                 dim=1)  # (B, T, O): y_{t-1}, zero at t = 0
            z = drive + self.from_outputs(past_window(previous, q))  # (B, T, H)
            return self.readout(torch.tanh(z))  # (B, T, O)
        history = x.new_zeros(dims["B"], q, self.output_size)  # (B, q, O): y_{t-q} .. y_{t-1}
        outputs = []
        for t in range(dims["T"]):
            z = drive[:, t] + self.from_outputs(history.flatten(1))  # (B, H)
            y = self.readout(torch.tanh(z))  # (B, O)
            outputs.append(y)
            history = torch.cat([history[:, 1:], y[:, None]], dim=1)  # shift the delay line
        return torch.stack(outputs, dim=1)  # (B, T, O)


def context_step(c: torch.Tensor, y_prev: torch.Tensor, mu: float | torch.Tensor) -> torch.Tensor:
    """One step of a Jordan context unit: ``c_t = mu * c_{t-1} + y_{t-1}`` (eq-rnn-jordan).

    ``c`` and ``y_prev`` are ``(B, O)`` tensors of one dtype; ``mu`` a finite number.
    """
    check_tensor(c, "c")
    dims = check_shape(c, "c", "B O")
    check_tensor(y_prev, "y_prev")
    check_shape(y_prev, "y_prev", "B O", sizes=dims)
    check_same_dtype("c", c, "y_prev", y_prev)
    if not isinstance(mu, torch.Tensor):
        check_real(mu, "mu")
    return mu * c + y_prev


def exponential_trace(y: torch.Tensor, mu: float,
                      c0: torch.Tensor | None = None) -> torch.Tensor:
    """Jordan's context for a whole output sequence, ``(B, T, O) -> c (B, T, O)``
    (eq-rnn-jordan-unrolled).

    ``c_t = mu c_{t-1} + y_{t-1}`` with ``c_0 = c0`` (zeros by default), so that
    ``c_t = mu^t c_0 + sum_{k=1}^{t} mu^(k-1) y_{t-k}``: a linear recurrence whose
    impulse response ``0, 1, mu, mu^2, ...`` decays but never ends (an infinite
    response). ``T = 0`` is refused (``ValueError``).
    """
    check_tensor(y, "y")
    dims = check_nonempty(y, "y", "B T O", "T")  # c_0 is the first output: T >= 1
    if isinstance(mu, bool) or not isinstance(mu, (int, float)):
        raise ValueError(f"mu must be a finite number, got {mu!r}")
    check_real(mu, "mu")  # NaN, inf and ints beyond float (10**400)
    c0 = y.new_zeros(dims["B"], dims["O"]) if c0 is None else c0
    check_tensor(c0, "c0")
    check_shape(c0, "c0", "B O", sizes={"B": dims["B"], "O": dims["O"]})
    check_same_dtype("y", y, "c0", c0)
    decay = torch.full_like(y[:, 1:], float(mu))  # (B, T - 1, O)
    later = _linear_scan(decay, y[:, :-1], c0, "sequential", None,  # c_1 .. c_{T-1}:
                         ("mu", "y", "c0"))  # c_t = mu c_{t-1} + y_{t-1}
    return torch.cat([c0[:, None], later], dim=1)  # (B, T, O)


class JordanNetwork(nn.Module):
    """Jordan (1986) network: context units keep a fixed decaying memory of the outputs.

    Equations (eq-rnn-jordan)::

        c_t = mu c_{t-1} + y_{t-1}          (c_0 = 0; mu fixed, not learned)
        h_t = f(W_x x_t + W_c c_t + b)
        y_t = g(W_y h_t + b_y)

    ``mu`` is a plain number, not a parameter, so an optimiser never changes it. ``f`` is
    ``nonlinearity`` (``"tanh"`` or ``"relu"``), ``g`` is ``output_nonlinearity`` (``"identity"``
    by default).
    """

    def __init__(self, input_size: int, hidden_size: int, output_size: int, mu: float = 0.5,
                 nonlinearity: str = "tanh", output_nonlinearity: str = "identity") -> None:
        super().__init__()
        self.input_size = check_int(input_size, "input_size", 1)
        self.hidden_size = check_int(hidden_size, "hidden_size", 1)
        self.output_size = check_int(output_size, "output_size", 1)
        if isinstance(mu, bool) or not isinstance(mu, (int, float)) or not 0 <= mu < 1:
            raise ValueError(f"mu must be a number in [0, 1) so that the memory decays, got {mu!r}")
        self.f = _activation(nonlinearity, ("tanh", "relu"))
        self.g = _activation(output_nonlinearity, ("identity", "tanh", "relu"))
        self.mu = float(mu)  # fixed decay of the context units: not an nn.Parameter
        self.from_inputs = nn.Linear(input_size, hidden_size)  # W_x, b
        self.from_context = nn.Linear(output_size, hidden_size, bias=False)  # W_c
        self.readout = nn.Linear(hidden_size, output_size)  # W_y, b_y

    def extra_repr(self) -> str:
        return f"mu={self.mu}"

    def forward(self, x: torch.Tensor, c0: torch.Tensor | None = None
                ) -> tuple[torch.Tensor, torch.Tensor]:
        """``x (B, T, D) -> (y (B, T, O), c (B, T, O))``: outputs and the context each step used."""
        dims = _check_input(x, self.input_size, self.readout.weight)
        c = x.new_zeros(dims["B"], self.output_size) if c0 is None else c0  # (B, O)
        check_shape(c, "c0", "B O", sizes={"B": dims["B"], "O": self.output_size})
        check_same_dtype("x", x, "c0", c)
        drive = self.from_inputs(x)  # (B, T, H)
        outputs: list[torch.Tensor] = []
        contexts: list[torch.Tensor] = []
        for t in range(dims["T"]):
            if t > 0:
                c = context_step(c, outputs[-1], self.mu)  # (B, O)
            h = self.f(drive[:, t] + self.from_context(c))  # (B, H)
            outputs.append(self.g(self.readout(h)))  # (B, O)
            contexts.append(c)
        return torch.stack(outputs, dim=1), torch.stack(contexts, dim=1)


State = tuple[torch.Tensor, ...]  # one cell's recurrent state: (h,) for Elman and GRU, (h, c) for LSTM


class RecurrentCell(nn.Module):
    """Parameter layout shared by the Elman, GRU and LSTM cells, as in ``torch.nn``.

    ``weight_ih (G, D)``, ``weight_hh (G, H)`` and biases ``(G,)`` stack ``G = gates_count * H``
    rows: one block for Elman, three for the GRU, four for the LSTM. Subclasses add ``step``.
    """

    gates_count: int = 1   # number of stacked blocks of H rows, set by the subclasses

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True) -> None:
        super().__init__()
        check_int(input_size, "input_size", 1)
        check_int(hidden_size, "hidden_size", 1)
        check_bool(bias, "bias")
        self.input_size, self.hidden_size = input_size, hidden_size
        G = self.gates_count * hidden_size
        self.weight_ih = nn.Parameter(torch.empty(G, input_size))    # (G, D)
        self.weight_hh = nn.Parameter(torch.empty(G, hidden_size))   # (G, H)
        self.bias_ih = nn.Parameter(torch.empty(G)) if bias else None
        self.bias_hh = nn.Parameter(torch.empty(G)) if bias else None

    def extra_repr(self) -> str:
        return f"{self.input_size}, {self.hidden_size}, bias={self.bias_ih is not None}"

    def reset_parameters(self, generator: torch.Generator | None = None) -> None:
        """torch.nn's default initialisation: every parameter ~ U(-1/sqrt(H), 1/sqrt(H))."""
        bound = 1.0 / math.sqrt(self.hidden_size)
        with torch.no_grad():
            for p in self.parameters():
                nn.init.uniform_(p, -bound, bound, generator=generator)

    def project_input(self, x: torch.Tensor) -> torch.Tensor:
        """The input terms of all gates at once: ``x @ weight_ih.T + bias_ih``, (..., D) -> (..., G).

        They do not depend on the state, so a layer computes them for every time step in one
        matrix product before the recurrence starts.
        """
        return F.linear(x, self.weight_ih, self.bias_ih)

    def _check_step(self, x: torch.Tensor, state: tuple[torch.Tensor | None, ...]) -> State:
        """Validate one step's input (B, D) and state; missing (None) states become zeros."""
        check_tensor(x, "x")
        dims = check_shape(x, "x", "B D", sizes={"D": self.input_size})
        check_same_dtype("x", x, "weight_ih", self.weight_ih)
        for name, s in zip(("h", "c"), state):
            if s is not None:
                check_shape(s, name, "B H", sizes={"B": dims["B"], "H": self.hidden_size})
                check_same_dtype("x", x, name, s)
        return tuple(x.new_zeros(dims["B"], self.hidden_size) if s is None else s for s in state)


class ElmanCell(RecurrentCell):
    """One Elman step (eq-rnn-elman): ``h_t = f(W_ih x_t + b_ih + W_hh h_{t-1} + b_hh)``.

    ``weight_ih (H, D)``, ``weight_hh (H, H)``, biases ``(H,)`` as in ``torch.nn.RNNCell``; in
    the CMU 11-785 notes' notation ``W_ih = W^(1)``, ``W_hh = W^(11)`` and ``b_ih + b_hh = b^(1)``.
    ``forward(x_t (B, D), h (B, H) | None) -> h_t (B, H)``.
    """

    gates_count = 1

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 nonlinearity: str = "tanh", *, generator: torch.Generator | None = None) -> None:
        super().__init__(input_size, hidden_size, bias)
        self.f = _activation(nonlinearity, ("tanh", "relu"))
        self.nonlinearity = nonlinearity
        self.reset_parameters(generator)

    def extra_repr(self) -> str:
        return super().extra_repr() + f", nonlinearity={self.nonlinearity!r}"

    def step(self, gx: torch.Tensor, state: State) -> State:
        """The recurrence proper: projected input ``gx (B, H)``, ``(h_{t-1},)`` -> ``(h_t,)``."""
        return (self.f(gx + F.linear(state[0], self.weight_hh, self.bias_hh)),)

    def forward(self, x: torch.Tensor, h: torch.Tensor | None = None) -> torch.Tensor:
        """``x_t (B, D)``, ``h_{t-1} (B, H)`` or None (zeros) -> ``h_t (B, H)``."""
        state = self._check_step(x, (h,))  # validate before any arithmetic
        return self.step(self.project_input(x), state)[0]


def _check_cell(cell: object, name: str) -> None:
    if not (callable(getattr(cell, "project_input", None))
            and callable(getattr(cell, "step", None))):
        raise TypeError(f"{name} must be a recurrent cell with project_input(x) and "
                        f"step(gx_t, state) (e.g. ElmanCell), got "
                        f"{type(cell).__name__}")


def _check_states(states: object, name: str, spec: str, sizes: dict[str, int],
                  like: torch.Tensor) -> None:
    """Each state component: a tensor of shape ``spec`` with ``sizes``, ``like``'s
    dtype."""
    if not isinstance(states, (tuple, list)) or not states:
        raise TypeError(f"{name} must be a tuple of state tensors, got "
                        f"{type(states).__name__}")
    for i, s in enumerate(states):
        check_tensor(s, f"{name}[{i}]")
        check_shape(s, f"{name}[{i}]", spec, sizes=sizes)
        check_same_dtype("x", like, f"{name}[{i}]", s)


def _check_unroll(cell: object, x: object, state: object) -> None:
    """:func:`scan_cell`'s arguments: a cell, ``x (B, T, D)`` and ``(B, H)`` states."""
    _check_cell(cell, "cell")
    check_tensor(x, "x")
    D, H = getattr(cell, "input_size", None), getattr(cell, "hidden_size", None)
    B = check_shape(x, "x", "B T D", sizes=None if D is None else {"D": D})["B"]
    _check_states(state, "state", "B H", {"B": B, **({} if H is None else {"H": H})}, x)
    check_dtypes_agree(("x", x), ("the cell's parameters", first_weight(cell)))


def _check_stack(cells: object, x: object, state0: object,
                 num_directions: object) -> None:
    """:func:`run_stack`'s arguments: ``num_directions`` cells per layer,
    ``x (B, T, D)`` and ``(L * dirs, B, H)`` states."""
    if (isinstance(cells, (str, bytes))
            or not isinstance(cells, (Sequence, nn.ModuleList)) or not len(cells)):
        raise TypeError(f"cells must be a non-empty sequence of recurrent cells, got "
                        f"{type(cells).__name__}")
    for k, cell in enumerate(cells):
        _check_cell(cell, f"cells[{k}]")
    check_int(num_directions, "num_directions", minimum=1, maximum=2)
    if len(cells) % num_directions:
        raise ValueError(f"cells must hold num_directions={num_directions} cells per "
                         f"layer, got {len(cells)}")
    check_tensor(x, "x")
    check_shape(x, "x", "B T D")
    for k, cell in enumerate(cells):
        check_dtypes_agree(("x", x),
                           (f"the parameters of cells[{k}]", first_weight(cell)))
    H = getattr(cells[0], "hidden_size", None)
    sizes = {"LD": len(cells), "B": x.shape[0], **({} if H is None else {"H": H})}
    _check_states(state0, "state0", "LD B H", sizes, x)


def scan_cell(cell: nn.Module, x: torch.Tensor, state: State, reverse: bool = False
              ) -> tuple[torch.Tensor, State]:
    """Unroll one cell over time (eq-rnn-unroll):
    ``x (B, T, D) -> (outputs (B, T, H), final state)``.

    The same cell -- the same weights -- is applied at every step. ``reverse=True`` runs
    from ``t = T - 1`` down to ``0`` (the backward direction of a bidirectional layer);
    the output computed at position ``t`` is stored at index ``t`` either way. Works for
    any cell with ``project_input(x)`` and ``step(gx_t, state) -> state`` whose
    ``state[0]`` is the output. ``T = 0`` gives outputs ``(B, 0, H)`` and ``state``
    unchanged.
    """
    _check_unroll(cell, x, state)
    check_bool(reverse, "reverse")
    gx = cell.project_input(x)  # (B, T, G): the input terms of every step at once
    steps = x.shape[1]
    outputs: list[torch.Tensor] = [x] * steps  # placeholders, each overwritten below
    for t in (range(steps - 1, -1, -1) if reverse else range(steps)):
        state = cell.step(gx[:, t], state)
        outputs[t] = state[0]  # (B, H)
    if not outputs:  # T = 0
        return x.new_zeros(x.shape[0], 0, state[0].shape[-1]), tuple(state)
    return torch.stack(outputs, dim=1), state  # (B, T, H)


def run_stack(cells: Sequence[nn.Module], x: torch.Tensor, state0: State,
              num_directions: int = 1) -> tuple[torch.Tensor, State]:
    """Deep and bidirectional recurrent networks in ``torch.nn``'s layout (eq-rnn-deep,
    eq-rnn-bidir).

    ``cells[l * dirs + r]`` is layer ``l``, direction ``r`` (``r = 1`` reads the
    sequence backwards); ``state0`` holds each state component as ``(L * dirs, B, H)``,
    indexed the same way. Layer ``l > 0`` reads the concatenated outputs of both
    directions of layer ``l - 1`` (the directions are interleaved layer by layer).
    Returns the last layer's outputs ``(B, T, dirs * H)`` and the final states, each
    ``(L * dirs, B, H)``.
    """
    _check_stack(cells, x, state0, num_directions)
    finals: list[State] = []
    layer_input = x  # (B, T, D)
    for layer in range(len(cells) // num_directions):
        outputs = []
        for direction in range(num_directions):
            k = layer * num_directions + direction
            y, state = scan_cell(cells[k], layer_input, tuple(s[k] for s in state0),
                                 reverse=direction == 1)
            outputs.append(y)  # (B, T, H)
            finals.append(state)
        layer_input = torch.cat(outputs, dim=-1)  # (B, T, dirs * H)
    return layer_input, tuple(torch.stack(parts) for parts in zip(*finals))


class StackedRNN(nn.Module):
    """A multi-layer, optionally bidirectional network over any recurrent cell, torch-compatible.

    Subclasses name the ``torch.nn`` class they mirror (``_torch_type``) and their state
    components (``_state_names``), and pass ``make_cell(layer_input_size) -> cell``. The cells
    live in ``self.cells`` in :func:`run_stack`'s order; ``cells[k].weight_ih`` corresponds to
    torch's ``weight_ih_l{l}`` (``k = l * dirs``) and ``weight_ih_l{l}_reverse`` (``k = l * dirs + 1``).
    """

    _torch_type: type = nn.Module
    _state_names: tuple[str, ...] = ()

    def __init__(self, make_cell: Callable[[int], nn.Module], input_size: int, hidden_size: int,
                 num_layers: int, bidirectional: bool) -> None:
        super().__init__()
        self.input_size = check_int(input_size, "input_size", 1)
        self.hidden_size = check_int(hidden_size, "hidden_size", 1)
        self.num_layers = check_int(num_layers, "num_layers", 1)
        check_bool(bidirectional, "bidirectional")
        self.bidirectional = bidirectional
        self.num_directions = 2 if bidirectional else 1
        if not callable(make_cell):
            raise TypeError(f"make_cell must be callable (input size -> cell), got "
                            f"{type(make_cell).__name__}")
        sizes = [input_size if layer == 0 else self.num_directions * hidden_size
                 for layer in range(num_layers) for _ in range(self.num_directions)]
        cells = [make_cell(size) for size in sizes]
        for k, cell in enumerate(cells):  # a cell of another size would fail later
            _check_cell(cell, f"make_cell(...) (cells[{k}])")
            if not isinstance(cell, nn.Module):
                raise TypeError(f"make_cell must return torch.nn.Module cells, got "
                                f"{type(cell).__name__}")
            wanted = {"input_size": sizes[k], "hidden_size": hidden_size}
            for attr, size in wanted.items():
                got = getattr(cell, attr, size)
                if got != size:
                    raise ValueError(f"make_cell must return cells of {attr}={size} "
                                     f"(hidden_size={hidden_size} of the network), got "
                                     f"{attr}={got} for cells[{k}]")
        self.cells = nn.ModuleList(cells)

    def extra_repr(self) -> str:
        return (f"{self.input_size}, {self.hidden_size}, num_layers={self.num_layers}, "
                f"bidirectional={self.bidirectional}")

    def _run(self, x: torch.Tensor, state0: State | None) -> tuple[torch.Tensor, State]:
        """Validate ``x (B, T, D)`` and the initial states (zeros when None), then run the stack."""
        dims = _check_input(x, self.input_size, first_weight(self.cells[0]))
        n_states = self.num_layers * self.num_directions
        if state0 is None:
            state0 = tuple(x.new_zeros(n_states, dims["B"], self.hidden_size)
                           for _ in self._state_names)
        for name, s in zip(self._state_names, state0):
            check_shape(s, name, "LD B H", sizes={"LD": n_states, "B": dims["B"], "H": self.hidden_size})
            check_same_dtype("x", x, name, s)
        return run_stack(self.cells, x, state0, self.num_directions)

    @classmethod
    def _settings_from_torch(cls, m: nn.Module) -> dict:
        """Constructor keywords read off a torch module (subclasses add their own)."""
        return dict(num_layers=m.num_layers, bias=m.bias, bidirectional=m.bidirectional)

    @classmethod
    def _from_torch(cls, m: nn.Module) -> "StackedRNN":
        """A network with the per-layer, per-direction weights of ``m`` copied in (same dtype)."""
        if not isinstance(m, cls._torch_type):
            raise TypeError(f"m must be a torch.nn.{cls._torch_type.__name__}, got {type(m).__name__}")
        if not m.batch_first:
            raise ValueError("m must be built with batch_first=True, got batch_first=False "
                             f"({cls.__name__} takes x as (B, T, D))")
        if m.dropout:
            raise ValueError(f"dropout between layers is not implemented, got dropout={m.dropout}")
        net = cls(m.input_size, m.hidden_size, **cls._settings_from_torch(m))
        net.to(device=m.weight_ih_l0.device, dtype=m.weight_ih_l0.dtype)
        with torch.no_grad():
            for k, cell in enumerate(net.cells):
                layer, direction = divmod(k, net.num_directions)
                suffix = f"_l{layer}" + ("_reverse" if direction else "")
                for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
                    if getattr(cell, name) is not None:
                        getattr(cell, name).copy_(getattr(m, name + suffix))
        return net


class ElmanRNN(StackedRNN):
    """Elman (1990) recurrent network with the ``torch.nn.RNN(batch_first=True)`` contract.

    ``forward(x (B, T, D), h0 (L * dirs, B, H) | None) -> (y (B, T, dirs * H), h_n (L * dirs, B, H))``:
    ``y`` holds the last layer's states at every step, ``h_n[l * dirs + r]`` the final state of
    layer ``l``, direction ``r`` (for the backward direction, its state after reading ``x_0``).
    Each cell is an :class:`ElmanCell`; ``from_torch`` copies a ``torch.nn.RNN``.
    """

    _torch_type = nn.RNN
    _state_names = ("h0",)

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 nonlinearity: str = "tanh", bias: bool = True, bidirectional: bool = False, *,
                 generator: torch.Generator | None = None) -> None:
        _activation(nonlinearity, ("tanh", "relu"))
        super().__init__(lambda d: ElmanCell(d, hidden_size, bias, nonlinearity, generator=generator),
                         input_size, hidden_size, num_layers, bidirectional)
        self.nonlinearity = nonlinearity
        self.bias = bias

    def extra_repr(self) -> str:
        return super().extra_repr() + f", nonlinearity={self.nonlinearity!r}, bias={self.bias}"

    def forward(self, x: torch.Tensor, h0: torch.Tensor | None = None
                ) -> tuple[torch.Tensor, torch.Tensor]:
        """``x (B, T, D), h0 (L * dirs, B, H) | None -> (y (B, T, dirs * H), h_n (L * dirs, B, H))``."""
        y, (h_n,) = self._run(x, None if h0 is None else (h0,))
        return y, h_n

    @classmethod
    def _settings_from_torch(cls, m: nn.Module) -> dict:
        return dict(super()._settings_from_torch(m), nonlinearity=m.nonlinearity)

    @classmethod
    def from_torch(cls, m: nn.RNN) -> "ElmanRNN":
        """An ElmanRNN with the weights, dtype and settings of ``m``: equal outputs and states."""
        return cls._from_torch(m)
