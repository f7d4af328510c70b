"""Gated recurrent networks: the GRU and the LSTM, one readable cell each.

Gate convention (the book's, stated once per chapter): the GRU's **update gate ``u_t`` keeps the
past**, ``h_t = u_t * h_{t-1} + (1 - u_t) * h~_t``. This is ``z_t`` in ``torch.nn.GRU``, in Cho et
al. (2014), in the GRU-to-Transformer notes and in the NYU notes; the Chinese Transformer notes
and the CMU 11-785 notes (and Chung et al. 2014) write the opposite gate, which selects the
candidate (``Gamma_u = z = 1 - u``).

Parameters are stored exactly as ``torch.nn`` stores them (``weight_ih`` with the gate blocks
stacked in torch's order, two biases ``bias_ih`` and ``bias_hh``), so ``from_torch`` is a copy
and every equation below can be read off a ``torch.nn.GRU``/``LSTM`` as well. Row vectors act on
the right of the transposed weights, ``x @ W.T`` (``torch.nn.functional.linear``).

GRU cell, book equations ``eq-gru-reset``, ``eq-gru-update``, ``eq-gru-cand-after``,
``eq-gru-cand-before``, ``eq-gru-state``::

    r_t  = sigma(W_r x_t + b_r + U_r h_{t-1} + c_r)                 reset gate
    u_t  = sigma(W_u x_t + b_u + U_u h_{t-1} + c_u)                 update (keep) gate
    h~_t = tanh(W_h x_t + b_h + r_t * (U_h h_{t-1} + c_h))          reset="after"  (torch, cuDNN)
    h~_t = tanh(W_h x_t + b_h + U_h (r_t * h_{t-1}) + c_h)          reset="before" (Cho et al. 2014)
    h_t  = u_t * h_{t-1} + (1 - u_t) * h~_t

with ``weight_ih = [W_r; W_u; W_h]`` (3H, D), ``weight_hh = [U_r; U_u; U_h]`` (3H, H),
``bias_ih = [b_r; b_u; b_h]``, ``bias_hh = [c_r; c_u; c_h]``.

LSTM cell (Hochreiter & Schmidhuber 1997 with the forget gate of Gers et al. 2000;
optional peepholes as in the CMU 11-785 notes and Gers et al. 2002: ``i`` and ``f`` see
``c_{t-1}``, ``o`` sees ``c_t``), book equations ``eq-lstm-*``::

    i_t  = sigma(W_xi x_t + b_xi + W_hi h_{t-1} + b_hi [+ W_ci c_{t-1}])   input gate
    f_t  = sigma(W_xf x_t + b_xf + W_hf h_{t-1} + b_hf [+ W_cf c_{t-1}])   forget gate
    c~_t = tanh (W_xc x_t + b_xc + W_hc h_{t-1} + b_hc)                     candidate (torch: g)
    c_t  = f_t * c_{t-1} + i_t * c~_t
    o_t  = sigma(W_xo x_t + b_xo + W_ho h_{t-1} + b_ho [+ W_co c_t])       output gate
    h_t  = o_t * tanh(c_t)

with ``weight_ih = [W_xi; W_xf; W_xc; W_xo]`` (torch's order i, f, g, o) and, when
``peephole=True``, full (H, H) peephole matrices ``weight_ci``, ``weight_cf``, ``weight_co``
(the form of the CMU 11-785 notes and of the ``seqlearn.bptt.lstm_*`` contract; a diagonal
peephole is the special case of a diagonal matrix).

Layers and directions are plumbed once, in ``seqlearn.recurrent`` (:class:`StackedRNN`,
``run_stack``, ``scan_cell``), for any cell that offers ``project_input`` and ``step``; this
module only adds the two cells.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor, nn

from seqlearn.recurrent import RecurrentCell, State, StackedRNN
from seqlearn.validate import check_bool

__all__ = ["GRUCell", "GRUGates", "LSTMCell", "LSTMGates", "GRU", "LSTM"]

def _rows(b: Tensor | None, rows: slice) -> Tensor | None:
    return None if b is None else b[rows]


class GRUGates(NamedTuple):
    """Everything one GRU step computes, each (B, H): gates ``r``, ``u``, candidate ``n``, ``h``."""
    r: Tensor
    u: Tensor
    n: Tensor
    h: Tensor


class GRUCell(RecurrentCell):
    """One GRU step (equations in the module docstring); ``u`` is the keep gate (torch's ``z``).

    ``reset="after"`` multiplies the reset gate into ``U_h h + c_h`` (torch.nn.GRU, cuDNN);
    ``reset="before"`` multiplies it into the state before the matrix, ``U_h (r * h)`` (Cho et
    al. 2014). Both use the same parameters, so one set of weights can be run both ways.
    """

    gates_count = 3

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, reset: str = "after",
                 *, generator: torch.Generator | None = None) -> None:
        if reset not in ("after", "before"):
            raise ValueError(f'reset must be "after" or "before", got {reset!r}')
        super().__init__(input_size, hidden_size, bias)
        self.reset = reset
        self.reset_parameters(generator)

    def extra_repr(self) -> str:
        return super().extra_repr() + f", reset={self.reset!r}"

    def gates(self, gx: Tensor, h: Tensor) -> GRUGates:
        """One step from the projected input ``gx = project_input(x_t)`` (B, 3H) and ``h`` (B, H)."""
        H = self.hidden_size
        gx_r, gx_u, gx_n = gx.split(H, dim=-1)                          # 3 x (B, H)
        # reset="after" needs U_h h before r is known: one product for all three blocks (cuDNN's
        # reason for this form); reset="before" must wait for r to form U_h (r * h).
        rows = slice(0, 3 * H if self.reset == "after" else 2 * H)
        gh = F.linear(h, self.weight_hh[rows], _rows(self.bias_hh, rows))   # (B, 3H) or (B, 2H)
        r = torch.sigmoid(gx_r + gh[:, :H])
        u = torch.sigmoid(gx_u + gh[:, H:2 * H])
        if self.reset == "after":
            n = torch.tanh(gx_n + r * gh[:, 2 * H:])                        # r * (U_h h + c_h)
        else:
            cand = slice(2 * H, 3 * H)
            n = torch.tanh(gx_n + F.linear(r * h, self.weight_hh[cand], _rows(self.bias_hh, cand)))
        return GRUGates(r, u, n, u * h + (1 - u) * n)

    def step(self, gx: Tensor, state: State) -> State:
        """The driver's interface: projected input (B, 3H), state ``(h,)`` -> new state ``(h,)``."""
        return (self.gates(gx, state[0]).h,)

    def forward(self, x: Tensor, h: Tensor | None = None) -> Tensor:
        """``x`` (B, D), ``h`` (B, H) or None (zeros) -> the next state ``h`` (B, H)."""
        state = self._check_step(x, (h,))  # validate before any arithmetic
        return self.step(self.project_input(x), state)[0]


class LSTMGates(NamedTuple):
    """Everything one LSTM step computes, each (B, H): ``i, f, g`` (= c~), ``o``, ``c``, ``h``."""
    i: Tensor
    f: Tensor
    g: Tensor
    o: Tensor
    c: Tensor
    h: Tensor


class LSTMCell(RecurrentCell):
    """One LSTM step (equations in the module docstring), optionally with full peephole matrices."""

    gates_count = 4

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, peephole: bool = False,
                 *, generator: torch.Generator | None = None) -> None:
        super().__init__(input_size, hidden_size, bias)
        self.peephole = check_bool(peephole, "peephole")
        for name in ("weight_ci", "weight_cf", "weight_co"):        # (H, H) each, or absent
            self.register_parameter(name, nn.Parameter(torch.empty(hidden_size, hidden_size))
                                    if self.peephole else None)
        self.reset_parameters(generator)

    def extra_repr(self) -> str:
        return super().extra_repr() + f", peephole={self.peephole}"

    def gates(self, gx: Tensor, h: Tensor, c: Tensor) -> LSTMGates:
        """One step from ``gx = project_input(x_t)`` (B, 4H), ``h`` and ``c`` (B, H)."""
        a_i, a_f, a_g, a_o = (gx + F.linear(h, self.weight_hh, self.bias_hh)).split(self.hidden_size, -1)
        if self.peephole:                       # i and f look at the old cell, o at the new one
            a_i = a_i + F.linear(c, self.weight_ci)
            a_f = a_f + F.linear(c, self.weight_cf)
        i, f, g = torch.sigmoid(a_i), torch.sigmoid(a_f), torch.tanh(a_g)
        c_new = f * c + i * g
        if self.peephole:
            a_o = a_o + F.linear(c_new, self.weight_co)
        o = torch.sigmoid(a_o)
        return LSTMGates(i, f, g, o, c_new, o * torch.tanh(c_new))

    def step(self, gx: Tensor, state: State) -> State:
        """The driver's interface: projected input (B, 4H), state ``(h, c)`` -> ``(h, c)``."""
        out = self.gates(gx, *state)
        return out.h, out.c

    def forward(self, x: Tensor, state: tuple[Tensor, Tensor] | None = None) -> tuple[Tensor, Tensor]:
        """``x`` (B, D), ``(h, c)`` each (B, H) or None (zeros) -> the next ``(h, c)``."""
        checked = self._check_step(x, (None, None) if state is None else tuple(state))
        h, c = self.step(self.project_input(x), checked)
        return h, c

    def to_bptt_params(self) -> dict[str, np.ndarray]:
        """The parameters under the CMU 11-785 notes' names (the
        ``seqlearn.bptt.lstm_forward`` contract).

        NumPy float64 copies; each gate's two torch biases are summed into one ``b_*``.
        """
        H = self.hidden_size
        W_x = self.weight_ih.detach().double().numpy()
        W_h = self.weight_hh.detach().double().numpy()
        b = (np.zeros(4 * H) if self.bias_ih is None
             else (self.bias_ih + self.bias_hh).detach().double().numpy())
        params = {}
        for k, gate in enumerate("ifco"):                           # torch's order i, f, g(=c~), o
            rows = slice(k * H, (k + 1) * H)
            params[f"W_x{gate}"], params[f"W_h{gate}"], params[f"b_{gate}"] = W_x[rows], W_h[rows], b[rows]
        if self.peephole:
            for gate in "ifo":
                params[f"W_c{gate}"] = getattr(self, f"weight_c{gate}").detach().double().numpy()
        return params


class GRU(StackedRNN):
    """Multi-layer, optionally bidirectional GRU with the ``torch.nn.GRU`` contract (batch first).

    ``forward(x (B, T, D), h0 (L*dirs, B, H) | None) -> (y (B, T, dirs*H), h_n (L*dirs, B, H))``.
    Cell equations: module docstring; ``reset="after"`` equals ``torch.nn.GRU``.
    """

    _torch_type = nn.GRU
    _state_names = ("h0",)

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 bidirectional: bool = False, reset: str = "after", *,
                 generator: torch.Generator | None = None) -> None:
        super().__init__(lambda d: GRUCell(d, hidden_size, bias, reset, generator=generator),
                         input_size, hidden_size, num_layers, bidirectional)
        self.reset = reset

    def forward(self, x: Tensor, h0: Tensor | None = None) -> tuple[Tensor, Tensor]:
        y, (h_n,) = self._run(x, None if h0 is None else (h0,))
        return y, h_n

    @classmethod
    def from_torch(cls, m: nn.GRU) -> "GRU":
        """A GRU with the weights of ``m`` (reset="after"): equal outputs and final states."""
        return cls._from_torch(m)


class LSTM(StackedRNN):
    """Multi-layer, optionally bidirectional LSTM with the ``torch.nn.LSTM`` contract (batch first).

    ``forward(x (B, T, D), (h0, c0) | None) -> (y (B, T, dirs*H), (h_n, c_n))``, states
    (L*dirs, B, H). ``peephole=True`` adds full (H, H) peephole matrices per cell.
    """

    _torch_type = nn.LSTM
    _state_names = ("h0", "c0")

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 bidirectional: bool = False, peephole: bool = False, *,
                 generator: torch.Generator | None = None) -> None:
        check_bool(peephole, "peephole")
        super().__init__(lambda d: LSTMCell(d, hidden_size, bias, peephole, generator=generator),
                         input_size, hidden_size, num_layers, bidirectional)
        self.peephole = peephole

    def forward(self, x: Tensor, state0: tuple[Tensor, Tensor] | None = None
                ) -> tuple[Tensor, tuple[Tensor, Tensor]]:
        if state0 is not None and (not isinstance(state0, (tuple, list)) or len(state0) != 2):
            raise TypeError(f"state0 must be a tuple (h0, c0) or None, got {type(state0).__name__}")
        y, (h_n, c_n) = self._run(x, None if state0 is None else tuple(state0))
        return y, (h_n, c_n)

    @classmethod
    def from_torch(cls, m: nn.LSTM) -> "LSTM":
        """An LSTM (no peepholes) with the weights of ``m``: equal outputs and final states."""
        if isinstance(m, nn.LSTM) and m.proj_size:
            raise ValueError(f"projected LSTMs are not implemented, got proj_size={m.proj_size}")
        return cls._from_torch(m)
