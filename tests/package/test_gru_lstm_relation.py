"""Is the GRU a simplified LSTM? Exact numeric checks of how far an LSTM can imitate a GRU.

The NYU notes call the GRU "a simplified version of the LSTM" and the CMU 11-785 notes head
their GRU section "a simplified LSTM cell". The checks below, on ``seqlearn.gated`` cells in
float64 (book convention: the GRU's update gate ``u`` keeps the past, the NYU notes' ``z``):

1. Tying the gates is exact: negating the forget gate's weights and biases gives
   ``i_t = 1 - f_t``, because ``sigma(-a) = 1 - sigma(a)``.
2. An LSTM with tied gates and an output gate fixed at 1 (bias 40: ``sigma(40)`` rounds to
   1.0 in float64) computes a GRU *without reset gate* whose recurrent inputs read
   ``tanh(c_{t-1})`` instead of the state: the LSTM feeds back ``h_{t-1} = o * tanh(c_{t-1})``,
   the GRU the state itself. With peepholes (the CMU 11-785 notes' LSTM) the gates can read
   ``c_{t-1}`` directly; the candidate never can. The difference from a real GRU (reset gate
   held at 1) vanishes exactly when the candidate does not read the state (``U_h = 0``) and
   the LSTM has peepholes, and only then: without peepholes its gates read ``tanh(c_{t-1})``.
3. The reset gate is what no LSTM has: the LSTM's candidate pre-activation is affine in
   ``h_{t-1}`` (second differences zero), the GRU's is not, unless ``r`` is held constant.
4. The NYU notes' full reset: with ``r = 0`` *and* ``u = 0`` (biases -800, where the sigmoid is
   exactly 0.0) the new state depends on the input only, ``h_t = tanh(W_h x_t + b_h + ...)``, and
   ``dh_t / dh_{t-1}`` is exactly zero, in both reset placements; either gate alone leaves a
   path from the past.
"""

from __future__ import annotations

import pytest
import torch

from seqlearn.gated import GRUCell, LSTMCell

F64 = torch.float64
D, H, B, T = 3, 4, 5, 6
ONE, ZERO = 40.0, -800.0          # sigmoid(40) == 1.0 and sigmoid(-800) == 0.0 in float64


def _gru(reset: str, seed: int = 0, scale: float = 1.0) -> GRUCell:
    cell = GRUCell(D, H, reset=reset, generator=torch.Generator().manual_seed(seed)).double()
    with torch.no_grad():
        for p in cell.parameters():
            p.mul_(scale * H ** 0.5)             # weights of order `scale`, states far from 0
    return cell


def _blocks(w: torch.Tensor, n: int) -> list[torch.Tensor]:
    return list(w.chunk(n, dim=0))


def _lstm_from_gru(gru: GRUCell, peephole: bool) -> LSTMCell:
    """The LSTM that ties i = 1 - f to the GRU's update gate and holds o at 1.

    Forget gate = the GRU's update gate u, reading ``c_{t-1}`` through the peephole (or
    ``h_{t-1} = tanh(c_{t-1})`` without one); input gate = its negation; candidate = the GRU's
    candidate without reset, reading ``h_{t-1}``; output gate: weights 0, bias 40.
    """
    lstm = LSTMCell(D, H, peephole=peephole).double()
    _, W_u, W_h = _blocks(gru.weight_ih, 3)
    _, U_u, U_h = _blocks(gru.weight_hh, 3)
    _, b_u, b_h = _blocks(gru.bias_ih, 3)
    _, c_u, c_h = _blocks(gru.bias_hh, 3)
    zeros = torch.zeros(H, H, dtype=F64)
    gate_hh = zeros if peephole else U_u
    with torch.no_grad():
        lstm.weight_ih.copy_(torch.cat([-W_u, W_u, W_h, torch.zeros(H, D, dtype=F64)]))
        lstm.weight_hh.copy_(torch.cat([-gate_hh, gate_hh, U_h, zeros]))
        lstm.bias_ih.copy_(torch.cat([-b_u, b_u, b_h, torch.full((H,), ONE, dtype=F64)]))
        lstm.bias_hh.copy_(torch.cat([-c_u, c_u, c_h, torch.zeros(H, dtype=F64)]))
        if peephole:
            lstm.weight_ci.copy_(-U_u)
            lstm.weight_cf.copy_(U_u)
            lstm.weight_co.zero_()
    return lstm


def _run_lstm(lstm: LSTMCell, x: torch.Tensor, c0: torch.Tensor):
    """Unroll from ``(h_0, c_0) = (tanh(c0), c0)``; return every step's gates."""
    h, c, out = torch.tanh(c0), c0, []
    for t in range(x.shape[1]):
        g = lstm.gates(lstm.project_input(x[:, t]), h, c)
        h, c = g.h, g.c
        out.append(g)
    return out


def _gru_reading_tanh(gru: GRUCell, x: torch.Tensor, h0: torch.Tensor, gates_tanh: bool):
    """A GRU without reset whose candidate (and, if ``gates_tanh``, gate) reads tanh(h)."""
    _, W_u, W_h = _blocks(gru.weight_ih, 3)
    _, U_u, U_h = _blocks(gru.weight_hh, 3)
    _, b_u, b_h = _blocks(gru.bias_ih, 3)
    _, c_u, c_h = _blocks(gru.bias_hh, 3)
    h, states = h0, []
    for t in range(x.shape[1]):
        seen = torch.tanh(h) if gates_tanh else h
        u = torch.sigmoid(x[:, t] @ W_u.T + b_u + seen @ U_u.T + c_u)
        n = torch.tanh(x[:, t] @ W_h.T + b_h + torch.tanh(h) @ U_h.T + c_h)
        h = u * h + (1 - u) * n
        states.append(h)
    return torch.stack(states, 1)                                      # (B, T, H)


def _run_gru(gru: GRUCell, x: torch.Tensor, h0: torch.Tensor) -> torch.Tensor:
    h, states = h0, []
    for t in range(x.shape[1]):
        h = gru(x[:, t], h)
        states.append(h)
    return torch.stack(states, 1)


def _data(seed: int = 1):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(B, T, D, dtype=F64, generator=g)
    h0 = 0.9 * (2 * torch.rand(B, H, dtype=F64, generator=g) - 1)   # in (-1, 1), as a GRU's
    return x, h0


def _hold_reset_at_one(gru: GRUCell) -> GRUCell:
    with torch.no_grad():
        gru.bias_ih[:H] = ONE
    return gru


@pytest.mark.parametrize("peephole", [False, True])
def test_negated_forget_weights_tie_the_input_gate(peephole):
    lstm = _lstm_from_gru(_gru("before"), peephole)
    x, h0 = _data()
    for g in _run_lstm(lstm, x, h0):
        torch.testing.assert_close(g.i, 1 - g.f, rtol=0, atol=1e-15)
        assert torch.equal(g.o, torch.ones_like(g.o))                 # sigmoid(40) == 1.0


@pytest.mark.parametrize("peephole", [False, True])
def test_tied_lstm_is_a_gru_without_reset_that_reads_tanh_of_its_state(peephole):
    gru = _gru("before")
    lstm = _lstm_from_gru(gru, peephole)
    x, h0 = _data()
    steps = _run_lstm(lstm, x, h0)
    c = torch.stack([g.c for g in steps], 1)
    torch.testing.assert_close(c, _gru_reading_tanh(gru, x, h0, gates_tanh=not peephole),
                               rtol=1e-12, atol=1e-12)
    for g in steps:                                    # what the LSTM emits: tanh of the state
        assert torch.equal(g.h, torch.tanh(g.c))


@pytest.mark.parametrize("reset", ["before", "after"])
def test_the_difference_from_a_gru_is_the_tanh_on_the_fed_back_state(reset):
    x, h0 = _data()
    gru = _hold_reset_at_one(_gru(reset))             # r == 1.0: both reset forms agree
    c = torch.stack([g.c for g in _run_lstm(_lstm_from_gru(gru, True), x, h0)], 1)
    gap = (c - _run_gru(gru, x, h0)).abs().max().item()
    assert gap > 0.05, gap                             # not a GRU: the candidate reads tanh(c)
    with torch.no_grad():                              # a candidate that ignores the state
        gru.weight_hh[2 * H:] = 0.0
        gru.bias_hh[2 * H:] = 0.0
    c = torch.stack([g.c for g in _run_lstm(_lstm_from_gru(gru, True), x, h0)], 1)
    torch.testing.assert_close(c, _run_gru(gru, x, h0), rtol=1e-12, atol=1e-12)
    # only with peepholes: without them the gates read h = tanh(c), not the state itself
    c = torch.stack([g.c for g in _run_lstm(_lstm_from_gru(gru, False), x, h0)], 1)
    gap = (c - _run_gru(gru, x, h0)).abs().max().item()
    assert gap > 0.05, gap


def _second_difference(pre_activation, h0: torch.Tensor, direction: torch.Tensor) -> float:
    a = [pre_activation(h0 + s * direction) for s in (0.0, 0.5, 1.0)]
    return (a[0] - 2 * a[1] + a[2]).abs().max().item()


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_only_the_gru_candidate_is_non_affine_in_the_state(seed):
    """The reset gate r(h) * h makes the GRU's candidate pre-activation bend along a line of
    states; the LSTM's candidate pre-activation W x + U h + b is affine in h."""
    g = torch.Generator().manual_seed(10 + seed)
    x = torch.randn(B, D, dtype=F64, generator=g)
    h0 = 0.5 * torch.randn(B, H, dtype=F64, generator=g)
    direction = torch.randn(B, H, dtype=F64, generator=g)
    lstm = LSTMCell(D, H, generator=g).double()
    c = torch.zeros(B, H, dtype=F64)
    lstm_pre = lambda h: torch.atanh(lstm.gates(lstm.project_input(x), h, c).g)   # noqa: E731
    gru = _gru("before", seed, scale=0.5)
    gru_pre = lambda h: torch.atanh(gru.gates(gru.project_input(x), h).n)       # noqa: E731
    assert _second_difference(lstm_pre, h0, direction) < 1e-12
    assert _second_difference(gru_pre, h0, direction) > 1e-3
    _hold_reset_at_one(gru)                          # r constant: the bend disappears
    assert _second_difference(gru_pre, h0, direction) < 1e-12


def _forget_gates(gru: GRUCell, reset: bool, update: bool) -> GRUCell:
    with torch.no_grad():
        if reset:
            gru.bias_ih[:H] = ZERO                     # r == 0.0
        if update:
            gru.bias_ih[H:2 * H] = ZERO                # u == 0.0 (the NYU notes' z_t = 0)
    return gru


@pytest.mark.parametrize("reset", ["before", "after"])
def test_full_reset_keeps_nothing_of_the_past(reset):
    gru = _forget_gates(_gru(reset), reset=True, update=True)
    x, h_a = _data()
    h_b = -h_a.flip(0)                                 # another past
    gates = gru.gates(gru.project_input(x[:, 0]), h_a)
    assert torch.equal(gates.r, torch.zeros_like(gates.r))
    assert torch.equal(gates.u, torch.zeros_like(gates.u))
    new_a, new_b = gru(x[:, 0], h_a), gru(x[:, 0], h_b)
    assert torch.equal(new_a, new_b)
    _, _, W_h = _blocks(gru.weight_ih, 3)
    _, _, b_h = _blocks(gru.bias_ih, 3)
    _, _, c_h = _blocks(gru.bias_hh, 3)
    only_input = x[:, 0] @ W_h.T + b_h + (c_h if reset == "before" else 0.0)
    torch.testing.assert_close(new_a, torch.tanh(only_input), rtol=1e-14, atol=1e-15)
    jac = torch.autograd.functional.jacobian(lambda h: gru(x[:, :1][:, 0], h), h_a)
    assert torch.equal(jac, torch.zeros_like(jac))     # exactly no path from h_{t-1}


@pytest.mark.parametrize("reset", ["before", "after"])
@pytest.mark.parametrize("which", ["reset only", "update only"])
def test_one_gate_alone_leaves_a_path_from_the_past(reset, which):
    gru = _forget_gates(_gru(reset), reset=which == "reset only",
                        update=which == "update only")
    x, h_a = _data()
    jac = torch.autograd.functional.jacobian(lambda h: gru(x[:, 0], h), h_a)
    assert jac.abs().max().item() > 0.05
