"""seqlearn.gated: the gates a GRU step returns and the generator an LSTM is built with.

These tests close the gaps that mutation testing (``tools/mutation.py package``) found in
test_gated.py: ``GRUCell.gates`` returns the reset gate itself (not only the new state), and
``LSTM(generator=...)`` draws every weight from that generator.
"""

from __future__ import annotations

import pytest
import torch

from seqlearn.gated import GRUCell, LSTM

F64 = torch.float64


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
