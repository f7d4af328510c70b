"""seqlearn.bptt.lstm: the hand-written LSTM forward/backward against torch.nn.LSTM and autograd."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from seqlearn.bptt import lstm_backward, lstm_forward
from seqlearn.bptt.lstm import BASE_KEYS, PEEPHOLES, sigmoid
from seqlearn.gated import LSTM

sizes = st.tuples(st.integers(1, 4), st.integers(1, 7), st.integers(1, 5), st.integers(1, 6),
                  st.integers(0, 2**31 - 1))  # B, T, D, H, seed


def rel_err(a: np.ndarray, b) -> float:
    b = b.detach().numpy() if isinstance(b, torch.Tensor) else b
    return float(np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-300))


def make_problem(B, T, D, H, seed, peephole):
    """A float64 seqlearn.gated.LSTM (the autograd reference), its parameters in seed 004's
    names with a random forget-gate bias shift, and random x, h0, c0, dh."""
    rng = np.random.default_rng(seed)
    net = LSTM(D, H, peephole=peephole, generator=torch.Generator().manual_seed(seed)).double()
    with torch.no_grad():
        net.cells[0].bias_ih[H:2 * H] += float(rng.normal())  # torch's blocks i, f, g, o
    params = net.cells[0].to_bptt_params()
    x, dh = rng.normal(size=(B, T, D)), rng.normal(size=(B, T, H))
    h0, c0 = rng.normal(size=(B, H)), rng.normal(size=(B, H))
    return net, params, x, h0, c0, dh


def check_against(net, params, x, h0, c0, dh):
    """Hand forward/backward against the autograd of ``net`` (a gated.LSTM or a torch.nn.LSTM)."""
    h, cache = lstm_forward(x, h0, c0, params)
    grads = lstm_backward(dh, cache)
    xt, h0t, c0t = (torch.tensor(a, requires_grad=True) for a in (x, h0, c0))
    y, (h_n, c_n) = net(xt, (h0t[None], c0t[None]))
    np.testing.assert_allclose(h, y.detach().numpy(), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(cache.c[:, -1], c_n[0].detach().numpy(), rtol=1e-12, atol=1e-14)
    (y * torch.tensor(dh)).sum().backward()
    assert set(grads) == set(params) | {"x", "h0", "c0"}
    ref = {"x": xt.grad, "h0": h0t.grad, "c0": c0t.grad}
    weights = dict(net.cells[0].named_parameters()) if isinstance(net, LSTM) else {
        name.removesuffix("_l0"): value for name, value in net.named_parameters()}
    H = h0.shape[1]
    for block, g in enumerate("ifco"):  # torch's row blocks i, f, g (= c~), o
        rows = slice(block * H, (block + 1) * H)
        ref[f"W_x{g}"] = weights["weight_ih"].grad[rows]
        ref[f"W_h{g}"] = weights["weight_hh"].grad[rows]
        ref[f"b_{g}"] = weights["bias_ih"].grad[rows]  # b = bias_ih + bias_hh: the same gradient
    for key in PEEPHOLES if "W_ci" in params else ():
        ref[key] = weights["weight_" + key[2:]].grad
    assert set(ref) == set(grads)
    for key, value in ref.items():
        assert grads[key].shape == tuple(value.shape), key
        assert rel_err(grads[key], value) <= 1e-10, (key, rel_err(grads[key], value))


@pytest.mark.parametrize("peephole", [False, True])
@settings(max_examples=20, deadline=None)
@given(sizes)
def test_backward_matches_autograd(peephole, size):
    """Outputs, cells and every gradient equal autograd through seqlearn.gated.LSTM (float64)."""
    check_against(*make_problem(*size, peephole))


@settings(max_examples=15, deadline=None)
@given(sizes)
def test_matches_torch_nn_lstm(size):
    """Without peepholes: outputs equal torch.nn.LSTM with copied weights, gradients its autograd."""
    B, T, D, H, seed = size
    torch.manual_seed(seed)
    module = torch.nn.LSTM(D, H, batch_first=True).double()
    params = LSTM.from_torch(module).cells[0].to_bptt_params()
    _, _, x, h0, c0, dh = make_problem(B, T, D, H, seed, False)
    check_against(module, params, x, h0, c0, dh)


def test_zero_peepholes_equal_no_peepholes():
    _, params, x, h0, c0, dh = make_problem(2, 5, 3, 4, 0, True)
    for key in PEEPHOLES:
        params[key][:] = 0.0
    plain = {k: params[k] for k in BASE_KEYS}
    h_peep, cache_peep = lstm_forward(x, h0, c0, params)
    h_plain, cache_plain = lstm_forward(x, h0, c0, plain)
    np.testing.assert_array_equal(h_peep, h_plain)
    g_peep, g_plain = lstm_backward(dh, cache_peep), lstm_backward(dh, cache_plain)
    for key in g_plain:
        np.testing.assert_allclose(g_peep[key], g_plain[key], rtol=1e-13, atol=1e-15)


def test_forget_gate_one_input_gate_zero_keeps_the_cell():
    """With f = 1 and i = 0 (saturated gates) the cell is carried unchanged: c_T = c_0."""
    _, params, x, h0, c0, _ = make_problem(3, 6, 2, 4, 1, False)
    for g, bias in (("f", 60.0), ("i", -60.0)):
        params[f"W_x{g}"][:] = 0.0
        params[f"W_h{g}"][:] = 0.0
        params[f"b_{g}"][:] = bias
    _, cache = lstm_forward(x, h0, c0, params)
    np.testing.assert_allclose(cache.c[:, -1], c0, rtol=1e-14)


def test_sigmoid_is_stable():
    """No overflow in the tails, full relative precision where 1/(1 + e^{-a}) itself is exact."""
    np.testing.assert_array_equal(sigmoid(np.array([-1e4, 0.0, 60.0, 1e4])), [0.0, 0.5, 1.0, 1.0])
    b = np.linspace(-700, 700, 1001)
    np.testing.assert_allclose(sigmoid(b), 1 / (1 + np.exp(-b)), rtol=1e-14, atol=1e-300)


def test_validation_errors():
    _, params, x, h0, c0, dh = make_problem(2, 3, 4, 5, 0, False)
    with pytest.raises(ValueError, match=r"x must have shape \(B, T, D\), got \(2, 3\)"):
        lstm_forward(x[:, :, 0], h0, c0, params)
    with pytest.raises(ValueError, match="at least one time step"):
        lstm_forward(x[:, :0], h0, c0, params)
    with pytest.raises(ValueError, match=r"h0 must have shape \(B=2, H\), got \(3, 5\)"):
        lstm_forward(x, np.zeros((3, 5)), c0, params)
    with pytest.raises(ValueError, match=r"c0 must have shape \(B=2, H=5\), got \(2, 4\)"):
        lstm_forward(x, h0, np.zeros((2, 4)), params)
    with pytest.raises(ValueError, match=r"params\['W_xi'\] must have shape \(H=5, D=4\), got \(5, 3\)"):
        lstm_forward(x, h0, c0, {**params, "W_xi": np.zeros((5, 3))})
    with pytest.raises(ValueError, match=r"missing \['b_o'\]"):
        lstm_forward(x, h0, c0, {k: v for k, v in params.items() if k != "b_o"})
    with pytest.raises(ValueError, match="peepholes need all of W_ci, W_cf, W_co"):
        lstm_forward(x, h0, c0, {**params, "W_ci": np.zeros((5, 5))})
    with pytest.raises(TypeError, match="must be a floating-point array"):
        lstm_forward(x.astype(np.int64), h0, c0, params)
    with pytest.raises(TypeError, match="same dtype"):
        lstm_forward(x, h0.astype(np.float32), c0, params)
    with pytest.raises(TypeError, match="x must be a float64 array"):
        lstm_forward(x.astype(np.float32), h0, c0, params)
    with pytest.raises(TypeError, match="numpy.ndarray"):
        lstm_forward(torch.tensor(x), h0, c0, params)
    with pytest.raises(ValueError, match="NaN or infinity"):
        lstm_forward(np.full_like(x, np.nan), h0, c0, params)
    _, cache = lstm_forward(x, h0, c0, params)
    with pytest.raises(ValueError, match=r"dh must have shape \(B=2, T=3, H=5\), got \(2, 3, 4\)"):
        lstm_backward(dh[:, :, :4], cache)
    with pytest.raises(TypeError, match="LSTMCache"):
        lstm_backward(dh, {"h": dh})
