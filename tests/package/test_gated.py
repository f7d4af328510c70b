"""seqlearn.gated against torch.nn (copied weights) and against hand loops of the
papers' equations; the gates a step returns and the generator weights are drawn from.
(The property tests of the cells and stacks against torch, one for the three kinds of
recurrent network, are in test_recurrent.py; how far an LSTM can imitate a GRU is in
test_gru_lstm_relation.py.)"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

from seqlearn.gated import GRU, GRUCell, LSTM, LSTMCell


F64 = torch.float64
SETTINGS = settings(max_examples=12, deadline=None)
sizes = st.fixed_dictionaries({
    "B": st.integers(1, 3), "T": st.integers(1, 5), "D": st.integers(1, 4), "H": st.integers(1, 4),
    "L": st.integers(1, 3), "bidirectional": st.booleans(), "bias": st.booleans(),
    "seed": st.integers(0, 2**16)})


def _inputs(s: dict, n_states: int) -> tuple[torch.Tensor, list[torch.Tensor]]:
    g = torch.Generator().manual_seed(s["seed"])
    dirs = 2 if s["bidirectional"] else 1
    x = torch.randn(s["B"], s["T"], s["D"], dtype=F64, generator=g, requires_grad=True)
    states = [torch.randn(s["L"] * dirs, s["B"], s["H"], dtype=F64, generator=g, requires_grad=True)
              for _ in range(n_states)]
    return x, states


def _assert_same_everything(ours, theirs, ours_module, theirs_module, x, states):
    """Outputs, final states, and gradients w.r.t. inputs, initial states and every weight."""
    ours_flat, theirs_flat = torch.cat([t.flatten() for t in ours]), torch.cat([t.flatten() for t in theirs])
    torch.testing.assert_close(ours_flat, theirs_flat, rtol=1e-12, atol=1e-12)
    w = torch.randn(ours_flat.shape, dtype=F64, generator=torch.Generator().manual_seed(1))
    wrt, theirs_params = [x, *states], dict(theirs_module.named_parameters())
    g_ours = torch.autograd.grad(ours_flat @ w, wrt + list(ours_module.parameters()))
    g_theirs = torch.autograd.grad(theirs_flat @ w, wrt + list(theirs_params.values()))
    for a, b in zip(g_ours[: len(wrt)], g_theirs[: len(wrt)]):
        torch.testing.assert_close(a, b, rtol=1e-10, atol=1e-12)
    ours_by_name = dict(zip([n for n, _ in ours_module.named_parameters()], g_ours[len(wrt):]))
    dirs = 2 if theirs_module.bidirectional else 1
    for name, g_ref in zip(theirs_params, g_theirs[len(wrt):]):     # e.g. weight_ih_l1_reverse
        kind, rest = name.split("_l")
        k = int(rest.split("_")[0]) * dirs + int(name.endswith("_reverse"))
        torch.testing.assert_close(ours_by_name[f"cells.{k}.{kind}"], g_ref, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("ours_cls, torch_cls", [(GRU, torch.nn.GRU), (LSTM, torch.nn.LSTM)])
@SETTINGS
@given(s=sizes)
def test_from_torch_equal_outputs_states_and_gradients(ours_cls, torch_cls, s):
    torch.manual_seed(s["seed"])
    m = torch_cls(s["D"], s["H"], s["L"], bias=s["bias"], batch_first=True,
                  bidirectional=s["bidirectional"]).double()
    ours = ours_cls.from_torch(m)
    assert ours.cells[0].weight_ih.dtype == F64
    x, states = _inputs(s, 2 if torch_cls is torch.nn.LSTM else 1)
    state0 = tuple(states) if len(states) == 2 else states[0]
    (y, final), (y_ref, final_ref) = ours(x, state0), m(x, state0)
    final, final_ref = (final, final_ref) if len(states) == 2 else ((final,), (final_ref,))
    _assert_same_everything((y, *final), (y_ref, *final_ref), ours, m, x, states)


def test_default_zero_state_and_float32_match_torch():
    torch.manual_seed(0)
    m = torch.nn.GRU(3, 4, 2, batch_first=True, bidirectional=True)
    x = torch.randn(2, 6, 3)
    for a, b in zip(GRU.from_torch(m)(x), m(x)):
        torch.testing.assert_close(a, b)
    m = torch.nn.LSTM(3, 4, 2, batch_first=True)
    y, (h, c) = LSTM.from_torch(m)(x)
    y_ref, (h_ref, c_ref) = m(x)
    torch.testing.assert_close((y, h, c), (y_ref, h_ref, c_ref))


# ---- hand loops of the written equations -------------------------------------------------------

def _cho_step(x, h, p):
    """Cho et al. (2014), biases added: z keeps the past, reset before the matrix U(r * h)."""
    z = torch.sigmoid(x @ p["W_z"].T + h @ p["U_z"].T + p["b_z"])
    r = torch.sigmoid(x @ p["W_r"].T + h @ p["U_r"].T + p["b_r"])
    h_tilde = torch.tanh(x @ p["W"].T + (r * h) @ p["U"].T + p["b"])
    return z * h + (1 - z) * h_tilde


def _cho_params(cell: GRUCell) -> dict[str, torch.Tensor]:
    (W_r, W_z, W), (U_r, U_z, U) = cell.weight_ih.chunk(3), cell.weight_hh.chunk(3)
    b_r, b_z, b = (cell.bias_ih + cell.bias_hh).chunk(3)     # one bias per gate in the paper
    return dict(W_z=W_z, U_z=U_z, b_z=b_z, W_r=W_r, U_r=U_r, b_r=b_r, W=W, U=U, b=b)


def _seed004_peephole_step(x, h, c, p):
    """Seed 004's LSTM: i, f see [c_{t-1}; h_{t-1}; x_t], o sees [c_t; h_{t-1}; x_t]."""
    def cat(*vs):
        return torch.cat(vs, dim=-1)
    i = torch.sigmoid(cat(c, h, x) @ p["W_i"].T + p["b_i"])
    f = torch.sigmoid(cat(c, h, x) @ p["W_f"].T + p["b_f"])
    c_new = f * c + i * torch.tanh(cat(h, x) @ p["W_c"].T + p["b_c"])
    o = torch.sigmoid(cat(c_new, h, x) @ p["W_o"].T + p["b_o"])
    return o * torch.tanh(c_new), c_new


def _seed004_params(cell: LSTMCell) -> dict[str, torch.Tensor]:
    (Wxi, Wxf, Wxc, Wxo), (Whi, Whf, Whc, Who) = cell.weight_ih.chunk(4), cell.weight_hh.chunk(4)
    b_i, b_f, b_c, b_o = (cell.bias_ih + cell.bias_hh).chunk(4)
    return dict(W_i=torch.cat([cell.weight_ci, Whi, Wxi], 1), W_f=torch.cat([cell.weight_cf, Whf, Wxf], 1),
                W_o=torch.cat([cell.weight_co, Who, Wxo], 1), W_c=torch.cat([Whc, Wxc], 1),
                b_i=b_i, b_f=b_f, b_c=b_c, b_o=b_o)


def _reference_stack(net, step, params_of, x, states):
    """Layers and directions written out independently of seqlearn.recurrent.run_stack."""
    dirs = net.num_directions
    layer_input, finals = x, []
    for layer in range(net.num_layers):
        outs = []
        for d in range(dirs):
            k = layer * dirs + d
            p, state = params_of(net.cells[k]), tuple(s[k] for s in states)
            ys = {}
            for t in (reversed(range(x.shape[1])) if d else range(x.shape[1])):
                state = step(layer_input[:, t], *state, p)
                state = state if isinstance(state, tuple) else (state,)
                ys[t] = state[0]
            outs.append(torch.stack([ys[t] for t in range(x.shape[1])], 1))
            finals.append(state)
        layer_input = torch.cat(outs, -1)
    return layer_input, [torch.stack(parts) for parts in zip(*finals)]


@SETTINGS
@given(sizes)
def test_gru_reset_before_equals_cho_equations(s):
    gru = GRU(s["D"], s["H"], s["L"], bias=True, bidirectional=s["bidirectional"], reset="before",
              generator=torch.Generator().manual_seed(s["seed"])).double()
    x, (h0,) = _inputs(s, 1)
    y, h_n = gru(x, h0)
    y_ref, (h_ref,) = _reference_stack(gru, _cho_step, _cho_params, x, [h0])
    torch.testing.assert_close((y, h_n), (y_ref, h_ref), rtol=1e-12, atol=1e-12)


@SETTINGS
@given(sizes)
def test_peephole_lstm_equals_seed004_equations(s):
    lstm = LSTM(s["D"], s["H"], s["L"], bidirectional=s["bidirectional"], peephole=True,
                generator=torch.Generator().manual_seed(s["seed"])).double()
    x, (h0, c0) = _inputs(s, 2)
    y, (h_n, c_n) = lstm(x, (h0, c0))
    y_ref, (h_ref, c_ref) = _reference_stack(lstm, _seed004_peephole_step, _seed004_params, x, [h0, c0])
    torch.testing.assert_close((y, h_n, c_n), (y_ref, h_ref, c_ref), rtol=1e-12, atol=1e-12)


def test_lstm_to_bptt_params_reproduce_the_cell():
    for peephole, bias in ((True, True), (False, True), (True, False)):
        cell = LSTMCell(3, 4, bias=bias, peephole=peephole,
                        generator=torch.Generator().manual_seed(3)).double()
        p = {k: torch.from_numpy(v) for k, v in cell.to_bptt_params().items()}
        assert all(isinstance(v, np.ndarray) and v.dtype == np.float64 for v in cell.to_bptt_params().values())
        x, h, c = torch.randn(5, 3, dtype=F64), torch.randn(5, 4, dtype=F64), torch.randn(5, 4, dtype=F64)
        Wc = {g: p.get(f"W_c{g}", torch.zeros(4, 4, dtype=F64)) for g in "ifo"}
        i = torch.sigmoid(x @ p["W_xi"].T + h @ p["W_hi"].T + c @ Wc["i"].T + p["b_i"])
        f = torch.sigmoid(x @ p["W_xf"].T + h @ p["W_hf"].T + c @ Wc["f"].T + p["b_f"])
        c_new = f * c + i * torch.tanh(x @ p["W_xc"].T + h @ p["W_hc"].T + p["b_c"])
        o = torch.sigmoid(x @ p["W_xo"].T + h @ p["W_ho"].T + c_new @ Wc["o"].T + p["b_o"])
        torch.testing.assert_close(cell(x, (h, c)), (o * torch.tanh(c_new), c_new))


def test_cells_equal_one_step_of_the_network():
    g = torch.Generator().manual_seed(0)
    x, h = torch.randn(4, 1, 3, dtype=F64, generator=g), torch.randn(1, 4, 5, dtype=F64, generator=g)
    for reset in ("after", "before"):
        gru = GRU(3, 5, reset=reset).double()
        y, h_n = gru(x, h)
        torch.testing.assert_close(gru.cells[0](x[:, 0], h[0]), h_n[0])
        gates = gru.cells[0].gates(gru.cells[0].project_input(x[:, 0]), h[0])
        torch.testing.assert_close(gates.h, y[:, 0])
        torch.testing.assert_close(gru.cells[0](x[:, 0]), gru.cells[0](x[:, 0], torch.zeros_like(h[0])))
    lstm = LSTM(3, 5, peephole=True).double()
    _, (h_n, c_n) = lstm(x, (h, -h))
    torch.testing.assert_close(lstm.cells[0](x[:, 0], (h[0], -h[0])), (h_n[0], c_n[0]))


def test_reset_before_and_after_coincide_only_in_special_cases():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(3, 6, 2, dtype=F64, generator=g)
    after = GRU(2, 4, reset="after", generator=g).double()
    before = GRU(2, 4, reset="before").double()
    before.load_state_dict(after.state_dict())
    with torch.no_grad():
        after.cells[0].bias_hh[8:] = 0.0                # c_h = 0 is not enough ...
        before.cells[0].bias_hh[8:] = 0.0
    assert (after(x)[0] - before(x)[0]).abs().max() > 1e-3
    with torch.no_grad():                               # ... a diagonal U_h (with c_h = 0) is
        for net in (after, before):
            net.cells[0].weight_hh[8:] = torch.diag(torch.diagonal(net.cells[0].weight_hh[8:]))
    torch.testing.assert_close(after(x), before(x), rtol=1e-13, atol=1e-13)


def test_generator_makes_initialisation_reproducible():
    a = GRU(3, 4, 2, generator=torch.Generator().manual_seed(7))
    b = GRU(3, 4, 2, generator=torch.Generator().manual_seed(7))
    for p, q in zip(a.parameters(), b.parameters()):
        assert torch.equal(p, q) and p.abs().max() <= 0.5
    assert LSTM(2, 3, peephole=True).cells[0].weight_co.shape == (3, 3)


# ---- validation --------------------------------------------------------------------------------

def test_validation_errors():
    gru, lstm = GRU(3, 4, 2), LSTM(3, 4)
    with pytest.raises(ValueError, match=r"x must have shape \(B, T, D=3\), got \(2, 5, 4\)"):
        gru(torch.randn(2, 5, 4))
    with pytest.raises(ValueError, match=r"x must have shape"):
        gru(torch.randn(5, 3))
    with pytest.raises(ValueError, match="at least one time step"):
        gru(torch.randn(2, 0, 3))
    with pytest.raises(TypeError, match="floating-point"):
        gru(torch.ones(2, 5, 3, dtype=torch.long))
    with pytest.raises(TypeError, match="same dtype"):
        gru(torch.randn(2, 5, 3, dtype=F64))
    with pytest.raises(ValueError, match=r"h0 must have shape \(LD=2, B=2, H=4\), got \(1, 2, 4\)"):
        gru(torch.randn(2, 5, 3), torch.randn(1, 2, 4))
    with pytest.raises(TypeError, match="same dtype"):
        gru(torch.randn(2, 5, 3), torch.randn(2, 2, 4, dtype=F64))
    with pytest.raises(ValueError, match=r"c0 must have shape"):
        lstm(torch.randn(2, 5, 3), (torch.randn(1, 2, 4), torch.randn(1, 3, 4)))
    with pytest.raises(TypeError, match=r"state0 must be a tuple \(h0, c0\)"):
        lstm(torch.randn(2, 5, 3), torch.randn(1, 2, 4))
    with pytest.raises(ValueError, match=r"h must have shape \(B=2, H=4\), got \(2, 5\)"):
        GRUCell(3, 4)(torch.randn(2, 3), torch.randn(2, 5))
    with pytest.raises(ValueError, match=r"x must have shape \(B, D=3\)"):
        LSTMCell(3, 4)(torch.randn(2, 1, 3))
    with pytest.raises(ValueError, match='reset must be "after" or "before"'):
        GRU(3, 4, reset="middle")
    with pytest.raises(ValueError, match="hidden_size must be positive, got 0"):
        LSTM(3, 0)
    with pytest.raises(TypeError, match="num_layers must be an int, got bool"):
        GRU(3, 4, num_layers=True)


def test_from_torch_errors():
    with pytest.raises(TypeError, match="m must be a torch.nn.GRU, got LSTM"):
        GRU.from_torch(torch.nn.LSTM(2, 3, batch_first=True))
    with pytest.raises(ValueError, match="batch_first=True"):
        GRU.from_torch(torch.nn.GRU(2, 3))
    with pytest.raises(ValueError, match="dropout"):
        LSTM.from_torch(torch.nn.LSTM(2, 3, 2, dropout=0.5, batch_first=True))
    with pytest.raises(ValueError, match="proj_size=2"):
        LSTM.from_torch(torch.nn.LSTM(2, 3, proj_size=2, batch_first=True))


@pytest.mark.parametrize("make", [lambda: GRU(3, 4, bias=1), lambda: LSTM(3, 4, bias="yes")])
def test_bias_must_be_a_bool(make):
    with pytest.raises(TypeError, match="bias must be a bool"):
        make()


def test_repr_names_the_variant():
    assert repr(GRUCell(2, 3, reset="before")) == "GRUCell(2, 3, bias=True, reset='before')"
    assert repr(LSTMCell(2, 3, bias=False, peephole=True)) == \
        "LSTMCell(2, 3, bias=False, peephole=True)"
    assert GRU(2, 3, reset="before").reset == "before" and LSTM(2, 3, peephole=True).peephole


def test_bias_free_reset_before_and_bias_free_bptt_params():
    g = torch.Generator().manual_seed(4)
    cell = GRUCell(3, 2, bias=False, reset="before", generator=g).double()
    x, h = torch.randn(5, 3, dtype=F64, generator=g), torch.randn(5, 2, dtype=F64, generator=g)
    Wr, Wu, Wh = cell.weight_ih.chunk(3)
    Ur, Uu, Uh = cell.weight_hh.chunk(3)
    r, u = torch.sigmoid(x @ Wr.T + h @ Ur.T), torch.sigmoid(x @ Wu.T + h @ Uu.T)
    n = torch.tanh(x @ Wh.T + (r * h) @ Uh.T)
    torch.testing.assert_close(cell(x, h), u * h + (1 - u) * n)
    lstm = LSTMCell(3, 2, bias=False, generator=g).double()
    params = lstm.to_bptt_params()
    assert all(np.array_equal(params[f"b_{k}"], np.zeros(2)) for k in "ifco")
    assert sorted(params) == sorted(f"{w}{k}" for k in "ifco" for w in ("W_x", "W_h", "b_"))


# ----------------- the gates a GRU step returns and the generator an LSTM is built with


# Py: ``GRUCell.gates`` returns the reset gate itself (not only the new state), and
# ``LSTM(generator=...)`` draws every weight from that generator.


@pytest.mark.parametrize("reset", ["after", "before"])
def test_gru_gates_returns_reset_and_update_gates(reset):
    g = torch.Generator().manual_seed(0)
    cell = GRUCell(3, 2, reset=reset, generator=g).double()
    x, h = torch.randn(4, 3, dtype=F64, generator=g), torch.randn(4, 2, dtype=F64, generator=g)
    W_ir, W_iu, _ = cell.weight_ih.split(2)
    W_hr, W_hu, _ = cell.weight_hh.split(2)
    b_ir, b_iu, _ = cell.bias_ih.split(2)
    b_hr, b_hu, _ = cell.bias_hh.split(2)
    gates = cell.gates(cell.project_input(x), h)
    torch.testing.assert_close(gates.r, torch.sigmoid(x @ W_ir.T + b_ir + h @ W_hr.T + b_hr),
                               rtol=1e-14, atol=1e-15)
    torch.testing.assert_close(gates.u, torch.sigmoid(x @ W_iu.T + b_iu + h @ W_hu.T + b_hu),
                               rtol=1e-14, atol=1e-15)
    torch.testing.assert_close(gates.h, cell(x, h), rtol=0, atol=0)


def test_lstm_draws_its_weights_from_the_generator():
    a = LSTM(3, 2, num_layers=2, generator=torch.Generator().manual_seed(5))
    torch.manual_seed(123)  # the global generator must play no part
    b = LSTM(3, 2, num_layers=2, generator=torch.Generator().manual_seed(5))
    for (name, p), q in zip(a.named_parameters(), b.parameters()):
        assert torch.equal(p, q), name
