"""seqlearn.bptt.lstm: the hand-written LSTM forward/backward against torch.nn.LSTM and
autograd; the parameters it requires and the wording of each error; properties at random
sizes."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

from properties import covers, refuses, seeds, sizes as small_sizes
from seqlearn import bptt
from seqlearn.bptt import lstm as lstm_mod, lstm_backward
from seqlearn.bptt.lstm import BASE_KEYS, PEEPHOLES, lstm_forward, sigmoid
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


# ------------------------------- exact parameters, bounds and the wording of each error


# The hand-built counter's exact weights, the largest allowed number of layers, and
# which argument each dtype or shape error names.


RNG = np.random.default_rng(0)


def test_sigmoid_names_its_argument():
    with pytest.raises(TypeError, match=r"^a must be a floating-point array, got dtype int64$"):
        sigmoid(np.array([1, 2], dtype=np.int64))


def _lstm_params(H=3, D=2, peephole=False, dtype=np.float64):
    rng = np.random.default_rng(2)
    keys = BASE_KEYS + (PEEPHOLES if peephole else ())
    shape = lambda k: (H, D) if k.startswith("W_x") else (H,) if k.startswith("b_") else (H, H)
    return {k: rng.standard_normal(shape(k)).astype(dtype) for k in keys}


def test_lstm_peepholes_alone_are_missing_the_base_keys():
    x, h0 = RNG.standard_normal((1, 2, 2)), np.zeros((1, 3))
    only = {k: np.zeros((3, 3)) for k in PEEPHOLES}
    with pytest.raises(ValueError, match=r"^params must have keys \['W_xi', .*missing "
                                         r"\['W_xi', 'W_hi', 'b_i', .*'b_c'\], unexpected \[\]$"):
        lstm_forward(x, h0, h0, only)


def test_lstm_bias_shape_and_dtype_are_checked():
    x, h0 = RNG.standard_normal((1, 2, 2)), np.zeros((1, 3))
    p = _lstm_params()
    p["b_f"] = np.zeros(4)
    with pytest.raises(ValueError, match=r"^params\['b_f'\] must have shape \(H=3\), got \(4,\)$"):
        lstm_forward(x, h0, h0, p)
    p = _lstm_params()
    p["W_hi"] = p["W_hi"].astype(np.float32)
    with pytest.raises(TypeError, match=r"^params\['W_hi'\] and x must have the same dtype, "
                                        r"got float32 and float64$"):
        lstm_forward(x, h0, h0, p)


# ---------------------------------------------- properties at random sizes (hypothesis)


@covers("seqlearn.bptt.lstm.lstm_forward", "seqlearn.bptt.lstm.lstm_backward",
        "seqlearn.bptt.lstm.LSTMCache", "seqlearn.bptt.lstm.sigmoid",
        "seqlearn.bptt.clip.clip_grad_norm", "seqlearn.bptt.clip.global_norm")
@given(seed=seeds, B=small_sizes, T=small_sizes, D=small_sizes, H=small_sizes, peephole=st.booleans(),
       bad=st.sampled_from([0.0, -1.0, float("nan"), True, "1"]))
def test_lstm_gradients_equal_autograd_and_clipping(seed, B, T, D, H, peephole, bad):
    from seqlearn.gated import LSTMCell
    torch.manual_seed(seed)
    cell = LSTMCell(D, H, peephole=peephole).double()
    params = cell.to_bptt_params()
    rng = np.random.default_rng(seed)
    x, h0, c0 = (rng.standard_normal(s) for s in ((B, T, D), (B, H), (B, H)))
    h, cache = bptt.lstm_forward(x, h0, c0, params)
    assert isinstance(cache, lstm_mod.LSTMCache)
    dh = rng.standard_normal((B, T, H))
    grads = bptt.lstm_backward(dh, cache)
    xt = torch.tensor(x, requires_grad=True)
    state = (torch.tensor(h0), torch.tensor(c0))
    outs = []
    for t in range(T):
        state = cell(xt[:, t], state)
        outs.append(state[0])
    (torch.stack(outs, 1) * torch.tensor(dh)).sum().backward()
    np.testing.assert_allclose(h, torch.stack(outs, 1).detach().numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(grads["x"], xt.grad.numpy(), rtol=1e-9, atol=1e-12)
    a = rng.standard_normal(5) * 50
    np.testing.assert_allclose(lstm_mod.sigmoid(a), torch.sigmoid(torch.tensor(a)).numpy())
    clipped, norm = bptt.clip_grad_norm(grads, 1.0)
    assert norm == bptt.global_norm(grads) and bptt.global_norm(clipped) <= 1.0 + 1e-9
    refuses(bptt.clip_grad_norm, grads, bad)
    refuses(lstm_mod.sigmoid, [1.0])
    refuses(bptt.lstm_forward, x[:, :0], h0, c0, params)
    refuses(bptt.lstm_backward, dh, {})
