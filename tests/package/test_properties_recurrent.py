"""Property tests of seqlearn.recurrent and seqlearn.gated: torch.nn parity, loops, bad input."""

import torch
from hypothesis import given, strategies as st
from torch import nn

from properties import F64, covers, not_bools, numpy_of, randn, refuses, seeds, sizes
from seqlearn import gated, recurrent

kinds = st.sampled_from([(recurrent.ElmanRNN, nn.RNN), (gated.GRU, nn.GRU), (gated.LSTM, nn.LSTM)])


@covers("seqlearn.recurrent.ElmanRNN", "seqlearn.gated.GRU", "seqlearn.gated.LSTM",
        "seqlearn.recurrent.StackedRNN", "seqlearn.recurrent.run_stack",
        "seqlearn.recurrent.scan_cell", "seqlearn.recurrent.RecurrentCell")
@given(seed=seeds, kind=kinds, B=sizes, T=sizes, D=sizes, H=sizes, L=st.integers(1, 2),
       bi=st.booleans(), flag=not_bools)
def test_stacks_equal_torch_and_refuse_bad_input(seed, kind, B, T, D, H, L, bi, flag):
    ours, theirs = kind
    torch.manual_seed(seed)
    ref = theirs(D, H, num_layers=L, bidirectional=bi, batch_first=True, dtype=F64)
    net = ours.from_torch(ref)
    assert isinstance(net, recurrent.StackedRNN)
    assert all(isinstance(c, recurrent.RecurrentCell) for c in net.cells)
    x = randn(seed, B, T, D)
    y, state = net(x)
    y_ref, state_ref = ref(x)
    torch.testing.assert_close(y, y_ref)
    torch.testing.assert_close(state, state_ref)
    refuses(net, numpy_of(x))
    refuses(net, x.float())
    refuses(net, randn(seed, B, 0, D))
    refuses(net, randn(seed, B, T, D + 1))
    refuses(ours, D, H, bidirectional=flag)
    refuses(recurrent.scan_cell, net.cells[0], x, (torch.zeros(B, H, dtype=F64),) * 2, flag)


@covers("seqlearn.recurrent.ElmanCell", "seqlearn.gated.GRUCell", "seqlearn.gated.LSTMCell",
        "seqlearn.gated.GRUGates", "seqlearn.gated.LSTMGates")
@given(seed=seeds, B=sizes, D=sizes, H=sizes, flag=not_bools)
def test_cells_equal_torch_cells_and_validate_first(seed, B, D, H, flag):
    x, h, c = randn(seed, B, D), randn(seed + 1, B, H), randn(seed + 2, B, H)
    for ours, theirs in ((recurrent.ElmanCell, nn.RNNCell), (gated.GRUCell, nn.GRUCell),
                         (gated.LSTMCell, nn.LSTMCell)):
        cell = ours(D, H).double()
        ref = theirs(D, H, dtype=F64)
        with torch.no_grad():
            for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
                getattr(ref, name).copy_(getattr(cell, name))
        if ours is gated.LSTMCell:
            torch.testing.assert_close(cell(x, (h, c)), ref(x, (h, c)))
            gates = cell.gates(cell.project_input(x), h, c)
            assert isinstance(gates, gated.LSTMGates)
        else:
            torch.testing.assert_close(cell(x, h), ref(x, h))
        if ours is gated.GRUCell:
            assert isinstance(cell.gates(cell.project_input(x), h), gated.GRUGates)
        refuses(cell, randn(seed, B, D + 1))  # the shape is named before any product
        refuses(cell, numpy_of(x))
        refuses(ours, D, H, flag)
    refuses(gated.LSTMCell, D, H, peephole=flag)
    refuses(gated.LSTM, D, H, peephole=flag)


@covers("seqlearn.recurrent.past_window", "seqlearn.recurrent.NARX",
        "seqlearn.recurrent.context_step", "seqlearn.recurrent.exponential_trace",
        "seqlearn.recurrent.JordanNetwork")
@given(seed=seeds, B=sizes, T=sizes, D=sizes, width=st.integers(1, 3),
       mu=st.floats(0, 0.99), flag=not_bools)
def test_delay_lines_and_context_units_equal_their_loops(seed, B, T, D, width, mu, flag):
    x = randn(seed, B, T, D)
    win = recurrent.past_window(x, width)
    padded = torch.cat([torch.zeros(B, width - 1, D, dtype=F64), x], 1)
    for t in range(T):
        torch.testing.assert_close(win[:, t], padded[:, t:t + width].flatten(1))
    c = torch.zeros(B, D, dtype=F64)
    trace = recurrent.exponential_trace(x, mu)
    for t in range(T):
        torch.testing.assert_close(trace[:, t], c)
        c = recurrent.context_step(c, x[:, t], mu)
    net = recurrent.NARX(D, 3, 2).double()
    assert net(x).shape == (B, T, 2)
    y, ctx = recurrent.JordanNetwork(D, 3, 2, mu=mu).double()(x)
    assert y.shape == ctx.shape == (B, T, 2)
    refuses(recurrent.past_window, numpy_of(x), width)
    refuses(recurrent.exponential_trace, x[:, :0], mu)
    refuses(recurrent.exponential_trace, x, "0.5")
    refuses(recurrent.context_step, c, numpy_of(c), mu)
    refuses(recurrent.NARX(D, 3, 2).double(), numpy_of(x))
    refuses(recurrent.JordanNetwork, D, 3, 2, mu=1.0)
