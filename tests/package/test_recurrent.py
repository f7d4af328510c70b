"""seqlearn.recurrent: ElmanRNN against torch.nn.RNN, NARX and Jordan against explicit
loops; the wording of each error; properties at random sizes (the stacks and cells of
seqlearn.gated are checked against torch here too, one test for the three kinds)."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings, strategies as st
from torch import nn

from properties import covers, not_bools, numpy_of, randn, refuses, seeds, sizes
from seqlearn import gated, recurrent
from seqlearn.recurrent import (ElmanCell, ElmanRNN, JordanNetwork, NARX, context_step,
                                exponential_trace, past_window, run_stack, scan_cell)
from tensors import rand


FAST = settings(max_examples=25, deadline=None, derandomize=True, database=None)
F64 = torch.float64


@st.composite
def rnn_cases(draw: st.DrawFn) -> dict:
    return dict(B=draw(st.integers(1, 3)), T=draw(st.integers(1, 7)), D=draw(st.integers(1, 4)),
                H=draw(st.integers(1, 5)), L=draw(st.integers(1, 3)),
                bidirectional=draw(st.booleans()), bias=draw(st.booleans()),
                nonlinearity=draw(st.sampled_from(["tanh", "relu"])),
                seed=draw(st.integers(0, 10_000)))


@FAST
@given(rnn_cases(), st.booleans())
def test_elman_from_torch_outputs_states_and_gradients(c: dict, give_h0: bool) -> None:
    torch.manual_seed(c["seed"])
    ref = nn.RNN(c["D"], c["H"], c["L"], nonlinearity=c["nonlinearity"], bias=c["bias"],
                 batch_first=True, bidirectional=c["bidirectional"]).double()
    ours = ElmanRNN.from_torch(ref)
    dirs = 2 if c["bidirectional"] else 1
    x = rand(c["B"], c["T"], c["D"], seed=c["seed"])
    h0 = rand(c["L"] * dirs, c["B"], c["H"], seed=c["seed"] + 1) if give_h0 else None
    results = []
    for model in (ref, ours):
        xg = x.clone().requires_grad_()
        hg = None if h0 is None else h0.clone().requires_grad_()
        y, h_n = model(xg, hg)
        weights = rand(*y.shape, seed=c["seed"] + 2)  # a random linear loss on y and h_n
        loss = (weights * y).sum() + (h_n ** 2).sum()
        loss.backward()
        results.append((y, h_n, xg.grad, None if hg is None else hg.grad))
    (y1, h1, gx1, gh1), (y2, h2, gx2, gh2) = results
    assert y2.shape == (c["B"], c["T"], dirs * c["H"]) and h2.shape == (c["L"] * dirs, c["B"], c["H"])
    torch.testing.assert_close(y2, y1, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(h2, h1, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(gx2, gx1, rtol=1e-10, atol=1e-12)
    if give_h0:
        torch.testing.assert_close(gh2, gh1, rtol=1e-10, atol=1e-12)
    # parameter gradients, matched by torch's names
    for k, cell in enumerate(ours.cells):
        layer, direction = divmod(k, dirs)
        suffix = f"_l{layer}" + ("_reverse" if direction else "")
        for name in ("weight_ih", "weight_hh") + (("bias_ih", "bias_hh") if c["bias"] else ()):
            torch.testing.assert_close(getattr(cell, name).grad, getattr(ref, name + suffix).grad,
                                       rtol=1e-10, atol=1e-12)


def test_elman_default_state_is_zero_and_float32_works() -> None:
    torch.manual_seed(0)
    ref = nn.RNN(3, 4, 2, batch_first=True, bidirectional=True)
    ours = ElmanRNN.from_torch(ref)
    x = torch.randn(2, 6, 3)
    torch.testing.assert_close(ours(x)[0], ref(x)[0])
    torch.testing.assert_close(ours(x)[1], ours(x, torch.zeros(4, 2, 4))[1])


def test_elman_cell_matches_rnn_cell() -> None:
    torch.manual_seed(1)
    ref = nn.RNNCell(3, 5, nonlinearity="relu").double()
    cell = ElmanCell(3, 5, nonlinearity="relu").double()
    cell.load_state_dict(ref.state_dict())
    x, h = rand(4, 3, seed=0), rand(4, 5, seed=1)
    torch.testing.assert_close(cell(x, h), ref(x, h))
    torch.testing.assert_close(cell(x), ref(x))


def test_elman_is_the_seed_004_recurrence() -> None:
    """h(t) = tanh(W1 x(t) + W11 h(t-1) + b1), written as a plain loop over time."""
    torch.manual_seed(2)
    net = ElmanRNN(3, 4).double()
    cell = net.cells[0]
    W1, W11, b1 = cell.weight_ih, cell.weight_hh, cell.bias_ih + cell.bias_hh
    x, h = rand(2, 9, 3, seed=3), rand(1, 2, 4, seed=4)
    y, h_n = net(x, h)
    state = h[0]
    for t in range(9):
        state = torch.tanh(x[:, t] @ W1.T + state @ W11.T + b1)
        torch.testing.assert_close(y[:, t], state)
    torch.testing.assert_close(h_n[0], state)


def test_backward_direction_is_the_forward_one_on_the_reversed_sequence() -> None:
    torch.manual_seed(3)
    cell = ElmanCell(2, 3).double()
    x, h0 = rand(2, 8, 2, seed=5), rand(2, 3, seed=6)
    y_rev, (h_rev,) = scan_cell(cell, x, (h0,), reverse=True)
    y_fwd, (h_fwd,) = scan_cell(cell, x.flip(1), (h0,))
    torch.testing.assert_close(y_rev, y_fwd.flip(1))
    torch.testing.assert_close(h_rev, h_fwd)


def test_past_window_is_a_tapped_delay_line() -> None:
    x = rand(2, 6, 3, seed=7)
    win = past_window(x, 3)  # (B, T, 3 * D)
    padded = torch.cat([torch.zeros(2, 2, 3, dtype=F64), x], dim=1)
    for t in range(6):
        torch.testing.assert_close(win[:, t], padded[:, t:t + 3].flatten(1))


def narx_loop(net: NARX, x: torch.Tensor, y_feedback: torch.Tensor | None = None) -> torch.Tensor:
    """NARX written out: explicit windows, one time step at a time."""
    B, T, D = x.shape
    p, q, O = net.input_window, net.output_window, net.output_size
    A, b = net.from_inputs.weight, net.from_inputs.bias
    C, c = net.readout.weight, net.readout.bias
    ys: list[torch.Tensor] = []
    for t in range(T):
        xs = [x[:, s] if s >= 0 else torch.zeros(B, D, dtype=x.dtype) for s in range(t - p + 1, t + 1)]
        z = torch.cat(xs, dim=1) @ A.T + b
        if q:
            source = ys if y_feedback is None else list(y_feedback.unbind(1))
            past = [source[s] if s >= 0 else torch.zeros(B, O, dtype=x.dtype) for s in range(t - q, t)]
            z = z + torch.cat(past, dim=1) @ net.from_outputs.weight.T
        ys.append(torch.tanh(z) @ C.T + c)
    return torch.stack(ys, dim=1)


@FAST
@given(st.integers(1, 3), st.integers(1, 8), st.integers(1, 3), st.integers(1, 4),
       st.integers(1, 3), st.integers(1, 4), st.integers(0, 3), st.integers(0, 10_000))
def test_narx_matches_explicit_loop(B: int, T: int, D: int, H: int, O: int, p: int, q: int,
                                    seed: int) -> None:
    torch.manual_seed(seed)
    net = NARX(D, H, O, input_window=p, output_window=q).double()
    x = rand(B, T, D, seed=seed)
    torch.testing.assert_close(net(x), narx_loop(net, x), rtol=1e-12, atol=1e-12)
    y_true = rand(B, T, O, seed=seed + 1)
    torch.testing.assert_close(net(x, y_true), narx_loop(net, x, y_true), rtol=1e-12, atol=1e-12)


def test_narx_response_finite_without_feedback_infinite_with_it() -> None:
    torch.manual_seed(4)
    x = torch.zeros(1, 30, 1, dtype=F64)
    bump = x.clone()
    bump[0, 5, 0] = 1.0
    for q, expect_finite in ((0, True), (2, False)):
        net = NARX(1, 6, 1, input_window=3, output_window=q).double()
        with torch.no_grad():
            change = (net(bump) - net(x)).abs()[0, :, 0]
        assert torch.all(change[:5] == 0)  # causal: nothing before the bump
        if expect_finite:
            assert torch.all(change[8:] == 0)  # the window of 3 has passed: t = 5, 6, 7 only
        else:
            assert torch.all(change[8:15] > 0)  # fed-back outputs carry it on


def jordan_loop(net: JordanNetwork, x: torch.Tensor, mu: float) -> torch.Tensor:
    B, T, _ = x.shape
    c = torch.zeros(B, net.output_size, dtype=x.dtype)
    y = torch.zeros(B, net.output_size, dtype=x.dtype)
    ys = []
    for t in range(T):
        c = mu * c + y
        h = torch.tanh(x[:, t] @ net.from_inputs.weight.T + net.from_inputs.bias
                       + c @ net.from_context.weight.T)
        y = h @ net.readout.weight.T + net.readout.bias
        ys.append(y)
    return torch.stack(ys, dim=1)


@FAST
@given(st.integers(1, 3), st.integers(1, 8), st.integers(1, 3), st.integers(1, 4),
       st.integers(1, 3), st.sampled_from([0.0, 0.3, 0.9]), st.integers(0, 10_000))
def test_jordan_matches_explicit_loop(B: int, T: int, D: int, H: int, O: int, mu: float,
                                      seed: int) -> None:
    torch.manual_seed(seed)
    net = JordanNetwork(D, H, O, mu=mu).double()
    x = rand(B, T, D, seed=seed)
    y, c = net(x)
    torch.testing.assert_close(y, jordan_loop(net, x, mu), rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(c, exponential_trace(y, mu))  # the context is the trace of y


def test_exponential_trace_closed_form() -> None:
    y, c0, mu = rand(2, 10, 3, seed=8), rand(2, 3, seed=9), 0.7
    c = exponential_trace(y, mu, c0)
    for t in range(10):
        expected = mu ** t * c0 + sum(mu ** (k - 1) * y[:, t - k] for k in range(1, t + 1))
        torch.testing.assert_close(c[:, t], expected)


def test_jordan_memory_is_not_learned() -> None:
    torch.manual_seed(5)
    net = JordanNetwork(2, 4, 1, mu=0.6)
    assert all("mu" not in name for name, _ in net.named_parameters())
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    net(torch.randn(3, 5, 2))[0].pow(2).sum().backward()
    opt.step()
    assert net.mu == 0.6


def test_validation_errors() -> None:
    net = ElmanRNN(3, 4, num_layers=2, bidirectional=True)
    x = torch.randn(2, 5, 3)
    with pytest.raises(ValueError, match=r"x must have shape \(B, T, D=3\), got \(2, 5, 4\)"):
        net(torch.randn(2, 5, 4))
    with pytest.raises(ValueError, match=r"x must have shape \(B, T, D=3\), got \(5, 3\)"):
        net(torch.randn(5, 3))
    with pytest.raises(ValueError, match="at least one time step"):
        net(torch.randn(2, 0, 3))
    with pytest.raises(TypeError, match="same dtype"):
        net(x.double())
    with pytest.raises(TypeError, match="floating-point"):
        net(x.long())
    with pytest.raises(ValueError, match=r"h0 must have shape \(LD=4, B=2, H=4\), got \(2, 2, 4\)"):
        net(x, torch.zeros(2, 2, 4))
    with pytest.raises(TypeError, match="same dtype"):
        net(x, torch.zeros(4, 2, 4, dtype=F64))
    with pytest.raises(ValueError, match="nonlinearity must be one of"):
        ElmanRNN(3, 4, nonlinearity="sigmoid")
    with pytest.raises(ValueError, match="hidden_size must be positive"):
        ElmanRNN(3, 0)
    with pytest.raises(TypeError, match="num_layers must be an int"):
        ElmanRNN(3, 4, num_layers=2.0)
    with pytest.raises(TypeError, match="bidirectional must be a bool"):
        ElmanRNN(3, 4, bidirectional=1)
    with pytest.raises(TypeError, match="bias must be a bool"):
        ElmanRNN(3, 4, bias="yes")
    with pytest.raises(ValueError, match="batch_first=True"):
        ElmanRNN.from_torch(nn.RNN(3, 4))
    with pytest.raises(TypeError, match="torch.nn.RNN"):
        ElmanRNN.from_torch(nn.GRU(3, 4, batch_first=True))
    with pytest.raises(ValueError, match="dropout"):
        ElmanRNN.from_torch(nn.RNN(3, 4, 2, batch_first=True, dropout=0.5))
    with pytest.raises(ValueError, match=r"h must have shape \(B=2, H=4\)"):
        ElmanCell(3, 4)(torch.randn(2, 3), torch.randn(3, 4))
    with pytest.raises(ValueError, match="mu must be a number in"):
        JordanNetwork(2, 3, 1, mu=1.0)
    with pytest.raises(ValueError, match="nonlinearity must be one of"):
        JordanNetwork(2, 3, 1, nonlinearity="sigmoid")
    with pytest.raises(ValueError, match=r"c0 must have shape \(B=2, O=1\)"):
        JordanNetwork(2, 3, 1)(torch.randn(2, 4, 2), torch.zeros(2, 2))
    with pytest.raises(ValueError, match="output_window must be at least 0"):
        NARX(2, 3, 1, output_window=-1)
    with pytest.raises(ValueError, match=r"y_feedback must have shape \(B=2, T=4, O=1\)"):
        NARX(2, 3, 1)(torch.randn(2, 4, 2), torch.randn(2, 3, 1))
    with pytest.raises(ValueError, match=r"x must have shape \(B, T, D=2\)"):
        NARX(2, 3, 1)(torch.randn(2, 4, 3))


def test_exponential_trace_needs_a_finite_decay():
    y = torch.randn(2, 5, 3)
    with pytest.raises(ValueError, match="mu must be a finite number"):
        exponential_trace(y, float("nan"))
    with pytest.raises(ValueError, match="mu must be a finite number"):
        exponential_trace(y, True)


def test_reprs_name_the_settings() -> None:
    assert repr(ElmanCell(3, 4, bias=False, nonlinearity="relu")) == \
        "ElmanCell(3, 4, bias=False, nonlinearity='relu')"
    net = ElmanRNN(3, 4, 2, bidirectional=True)
    assert repr(net).splitlines()[1].strip() == \
        "3, 4, num_layers=2, bidirectional=True, nonlinearity='tanh', bias=True"
    assert "ElmanCell(8, 4, bias=True, nonlinearity='tanh')" in repr(net)  # 2 * H inputs
    assert repr(NARX(2, 3, 1, 3, 0)).splitlines()[1].strip() == "input_window=3, output_window=0"
    assert repr(JordanNetwork(2, 3, 1, mu=0.25)).splitlines()[1].strip() == "mu=0.25"


def test_context_step_values_and_validation() -> None:
    c, y = rand(2, 3, seed=50), rand(2, 3, seed=51)
    torch.testing.assert_close(context_step(c, y, 0.4), 0.4 * c + y)
    torch.testing.assert_close(context_step(c, y, 0), y)
    mu = torch.tensor(0.3, dtype=F64)  # a tensor mu is accepted as it is
    torch.testing.assert_close(context_step(c, y, mu), 0.3 * c + y)
    with pytest.raises(ValueError, match=r"y_prev must have shape \(B=2, O=3\)"):
        context_step(c, y[:, :2], 0.5)
    with pytest.raises(TypeError, match="same dtype"):
        context_step(c, y.float(), 0.5)
    with pytest.raises(ValueError, match="mu must be a finite number, got inf"):
        context_step(c, y, float("inf"))
    with pytest.raises(ValueError, match=r"c must have shape \(B, O\)"):
        context_step(c[0], y[0], 0.5)


def test_exponential_trace_edges() -> None:
    y, c0 = rand(2, 1, 3, seed=52), rand(2, 3, seed=53)
    torch.testing.assert_close(exponential_trace(y, 0.5, c0), c0[:, None])  # T = 1: just c_0
    y = rand(2, 4, 3, seed=54)
    c = exponential_trace(y, 2)  # an int decay, even above 1, is a valid trace
    torch.testing.assert_close(c[:, 3], 4 * y[:, 0] + 2 * y[:, 1] + y[:, 2])
    assert torch.all(exponential_trace(y, 0.5)[:, 0] == 0)  # c_0 = 0 by default
    with pytest.raises(ValueError, match=r"c0 must have shape \(B=2, O=3\)"):
        exponential_trace(y, 0.5, c0[:1])
    with pytest.raises(TypeError, match="same dtype"):
        exponential_trace(y, 0.5, c0.float())
    with pytest.raises(ValueError, match="must have T >= 1"):
        exponential_trace(y[:, :0], 0.5)


@pytest.mark.parametrize("f,g", [("tanh", "identity"), ("relu", "tanh"), ("tanh", "relu")])
def test_jordan_nonlinearities_and_initial_context(f: str, g: str) -> None:
    acts = {"tanh": torch.tanh, "relu": torch.relu, "identity": lambda z: z}
    torch.manual_seed(6)
    net = JordanNetwork(2, 4, 2, mu=0.4, nonlinearity=f, output_nonlinearity=g).double()
    x, c0 = rand(3, 6, 2, seed=55), rand(3, 2, seed=56)
    y, c = net(x, c0)
    ctx, prev, ys = c0, None, []
    for t in range(6):
        if t:
            ctx = 0.4 * ctx + prev
        prev = acts[g](net.readout(acts[f](net.from_inputs(x[:, t]) + net.from_context(ctx))))
        ys.append(prev)
    torch.testing.assert_close(y, torch.stack(ys, 1), rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(c, exponential_trace(y, 0.4, c0))
    with pytest.raises(TypeError, match="same dtype"):
        net(x, c0.float())
    for bad in (True, -0.1, "0.5", 1):
        with pytest.raises(ValueError, match="mu must be a number in"):
            JordanNetwork(2, 3, 1, mu=bad)
    with pytest.raises(ValueError, match="nonlinearity must be one of"):
        JordanNetwork(2, 3, 1, output_nonlinearity="sigmoid")


def test_narx_feedback_is_the_only_path_to_the_far_past() -> None:
    """With the fed-back outputs given (or B = 0), y_t depends on x_{t-p+1..t} only."""
    torch.manual_seed(7)
    net = NARX(1, 5, 1, input_window=2, output_window=3).double()
    point = rand(10, seed=57)
    own = net(point.view(1, -1, 1)).detach()
    jac = torch.autograd.functional.jacobian
    J_x = jac(lambda v: net(v.view(1, -1, 1), own).flatten(), point)
    J = jac(lambda v: net(v.view(1, -1, 1)).flatten(), point)
    J_y = jac(lambda f: net(point.view(1, -1, 1), f.view(1, -1, 1)).flatten(), own.flatten())
    lag = torch.arange(10)[:, None] - torch.arange(10)[None, :]
    window = (lag >= 0) & (lag < 2)
    assert torch.all(J_x[~window] == 0) and torch.all(J_x[window] != 0)
    assert torch.all(J[lag >= 2] != 0)
    torch.testing.assert_close(J, J_x + J_y @ J)
    assert torch.all(J_y[(lag < 1) | (lag > 3)] == 0)  # the output window: y_{t-3} .. y_{t-1}
    # q = 0: the given outputs are ignored
    ff = NARX(1, 5, 1, input_window=2, output_window=0).double()
    torch.testing.assert_close(ff(point.view(1, -1, 1), own), ff(point.view(1, -1, 1)))
    with pytest.raises(TypeError, match="same dtype"):
        net(point.view(1, -1, 1), own.float())
    with pytest.raises(ValueError, match="input_window must be positive"):
        NARX(1, 5, 1, input_window=0)


def test_scan_cell_and_run_stack_directly() -> None:
    torch.manual_seed(8)
    ref = nn.RNN(2, 3, num_layers=2, bidirectional=True, batch_first=True).double()
    net = ElmanRNN.from_torch(ref)
    x, h0 = rand(2, 5, 2, seed=58), rand(4, 2, 3, seed=59)
    y, (h_n,) = run_stack(net.cells, x, (h0,), num_directions=2)
    y_ref, h_ref = ref(x, h0)
    torch.testing.assert_close(y, y_ref)
    torch.testing.assert_close(h_n, h_ref)
    cell = net.cells[0]
    out, (h_last,) = scan_cell(cell, x, (h0[0],))
    h = h0[0]
    for t in range(5):
        h = cell(x[:, t], h)
        torch.testing.assert_close(out[:, t], h)
    torch.testing.assert_close(h_last, h)
    with pytest.raises(TypeError, match="reverse must be a bool"):
        scan_cell(cell, x, (h0[0],), reverse=1)


def test_cells_initialisation_and_bias_free_networks() -> None:
    a = ElmanCell(3, 16, generator=torch.Generator().manual_seed(0))
    b = ElmanCell(3, 16, generator=torch.Generator().manual_seed(0))
    for p, q in zip(a.parameters(), b.parameters()):
        torch.testing.assert_close(p, q)  # reproducible from the generator alone
        top = float(p.detach().abs().max())
        assert 0.2 < top <= 0.25  # U(-1/4, 1/4) with H = 16
    torch.manual_seed(9)
    ref = nn.RNN(3, 4, 2, nonlinearity="relu", bias=False, batch_first=True).double()
    net = ElmanRNN.from_torch(ref)
    assert net.bias is False and net.nonlinearity == "relu" and net.cells[1].bias_ih is None
    x = rand(2, 5, 3, seed=60)
    torch.testing.assert_close(net(x)[0], ref(x)[0])
    ref32 = nn.RNN(3, 4, batch_first=True)
    assert ElmanRNN.from_torch(ref32).cells[0].weight_ih.dtype == torch.float32
    assert ElmanCell(3, 4, bias=False)(x[:, 0].float()).shape == (2, 4)
    with pytest.raises(TypeError, match="same dtype"):
        ElmanCell(3, 4)(x[:, 0])
    with pytest.raises(ValueError, match="nonlinearity must be one of"):
        ElmanCell(3, 4, nonlinearity="identity")


# ------------------------------------------- the exact wording of each validation error


# Py: every error names the argument at fault, what was expected and what arrived.


LONG = torch.zeros(1, 2, 3, dtype=torch.long)


@pytest.mark.parametrize("call, error, match", [
    (lambda: NARX(3, 4, 2)(torch.zeros(1, 2, 3, dtype=F64)), TypeError,
     r"^x and the parameters must have the same dtype, got torch\.float64 and torch\.float32$"),
    (lambda: NARX(3, 4, 2).double()(torch.zeros(1, 2, 3, dtype=F64), torch.zeros(1, 2, 2)),
     TypeError, r"^x and y_feedback must have the same dtype, got torch\.float64 and "
                r"torch\.float32$"),
    (lambda: past_window(LONG, 2), TypeError,
     r"^seq must be a floating-point tensor, got dtype torch\.int64$"),
    (lambda: context_step(torch.zeros(2, 3, dtype=torch.long), torch.zeros(2, 3), 0.5), TypeError,
     r"^c must be a floating-point tensor, got dtype torch\.int64$"),
    (lambda: context_step(torch.zeros(2, 3, dtype=F64), torch.zeros(2, 3), 0.5), TypeError,
     r"^c and y_prev must have the same dtype, got torch\.float64 and torch\.float32$"),
    (lambda: exponential_trace(LONG, 0.5), TypeError,
     r"^y must be a floating-point tensor, got dtype torch\.int64$"),
    (lambda: JordanNetwork(0, 2, 1), ValueError, r"^input_size must be positive, got 0$"),
    (lambda: JordanNetwork(1.0, 2, 1), TypeError, r"^input_size must be an int, got float$"),
    (lambda: ElmanCell(0, 2), ValueError, r"^input_size must be positive, got 0$"),
    (lambda: ElmanCell(2, 0), ValueError, r"^hidden_size must be positive, got 0$"),
    (lambda: ElmanCell(3, 2)(LONG[0]), TypeError,
     r"^x must be a floating-point tensor, got dtype torch\.int64$"),
])
def test_errors_name_the_argument(call, error, match):
    with pytest.raises(error, match=match):
        call()


# ---------------------------------------------- properties at random sizes (hypothesis)


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


# --------------------------- edge cases: dtypes and sizes of cells (issue 31)

def test_stacked_rnn_refuses_cells_of_another_size():
    """The first forward used to blame state0, which the caller never passed."""
    with pytest.raises(
            ValueError, match=r"make_cell must return cells of hidden_size=3 .*"
                              r"got hidden_size=5 for cells\[0\]"):
        recurrent.StackedRNN(lambda d: ElmanCell(d, 5), 2, 3, 1, False)
    with pytest.raises(
            ValueError, match=r"input_size=6 .*got input_size=3 for cells\[2\]"):
        recurrent.StackedRNN(lambda d: ElmanCell(3, 3), 3, 3, 2, True)
    with pytest.raises(TypeError, match="make_cell must be callable"):
        recurrent.StackedRNN(None, 2, 3, 1, False)
    with pytest.raises(TypeError, match=r"make_cell\(\.\.\.\) \(cells\[0\]\) must be a "
                                        r"recurrent cell"):
        recurrent.StackedRNN(lambda d: object(), 2, 3, 1, False)


def test_scan_cell_and_run_stack_compare_x_with_the_cells_dtype():
    cell = ElmanCell(2, 3).double()
    x = torch.randn(1, 4, 2)  # float32
    with pytest.raises(
            TypeError, match=r"x and the cell's parameters must have the same "
                             r"dtype, got torch.float32 and torch.float64"):
        recurrent.scan_cell(cell, x, (torch.zeros(1, 3),))
    with pytest.raises(
            TypeError, match=r"x and the parameters of cells\[0\] must have the "
                             r"same dtype"):
        recurrent.run_stack([cell], x, (torch.zeros(1, 1, 3),))
    h0 = torch.zeros(1, 3, dtype=torch.float64)
    y, _ = recurrent.scan_cell(cell, x.double(), (h0,))
    assert y.dtype == torch.float64
