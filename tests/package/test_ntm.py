"""seqlearn.ntm: every addressing step, read and write against its definition written as
a loop over rows (float64), gradients against autograd and finite differences, and the
cell against a step written out by hand; properties at random sizes."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, strategies as st

from properties import covers, not_reals, refuses, seeds, sizes
from seqlearn import ntm


F64 = torch.float64


def gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def randn(seed: int, *shape: int) -> torch.Tensor:
    return torch.randn(*shape, dtype=F64, generator=gen(seed))


def simplex(seed: int, *shape: int) -> torch.Tensor:
    return torch.softmax(2 * randn(seed, *shape), -1)


# ------------------------------------------------------------------ loops over the rows

def loop_cosine(k, M):
    return torch.stack([(k @ M[i]) / (k.norm() * M[i].norm()) for i in range(len(M))])


def loop_content(k, beta, M):
    scores = [torch.exp(beta * c) for c in loop_cosine(k, M)]
    return torch.stack([s / sum(scores) for s in scores])


def loop_shift(w, s):
    N, r = len(w), (len(s) - 1) // 2
    out = torch.zeros(N, dtype=F64)
    for i in range(N):
        for j in range(N):
            offset = (i - j) % N  # the offset that carries row j to row i
            for m in range(len(s)):
                if (m - r) % N == offset:
                    out[i] += w[j] * s[m]
    return out


def loop_sharpen(w, gamma):
    powered = [x ** gamma for x in w]
    return torch.stack([p / sum(powered) for p in powered])


def loop_write(M, w, e, a):
    out = M.clone()
    for i in range(M.shape[0]):
        for j in range(M.shape[1]):
            out[i, j] = M[i, j] * (1 - w[i] * e[j]) + w[i] * a[j]
    return out


# ------------------------------------------------------------------------- the steps

def test_cosine_and_content_weights_equal_the_loops():
    B, N, W = 3, 7, 5
    k, M, beta = randn(0, B, W), randn(1, B, N, W), 3 * torch.rand(B, dtype=F64,
                                                                   generator=gen(2))
    cos = ntm.cosine_similarity(k, M)
    wc = ntm.content_weights(k, beta, M)
    for b in range(B):
        torch.testing.assert_close(cos[b], loop_cosine(k[b], M[b]), rtol=1e-12,
                                   atol=1e-12)
        torch.testing.assert_close(wc[b], loop_content(k[b], beta[b], M[b]), rtol=1e-12,
                                   atol=1e-12)
    assert cos.abs().max() <= 1
    torch.testing.assert_close(wc.sum(-1), torch.ones(B, dtype=F64))
    # beta = 0 weighs every row alike; cosine ignores the lengths of key and rows
    flat = ntm.content_weights(k, torch.zeros(B, dtype=F64), M)
    torch.testing.assert_close(flat, torch.full((B, N), 1 / N, dtype=F64))
    torch.testing.assert_close(ntm.cosine_similarity(5 * k, M * torch.rand(B, N, 1,
                               dtype=F64, generator=gen(3)) + 0), cos)


def test_content_weights_find_the_matching_row_as_beta_grows():
    M = randn(4, 6, 8)
    k = 3 * M[4]  # the direction of row 4
    for beta, least in ((10.0, 0.3), (100.0, 0.99), (1000.0, 1 - 1e-12)):
        w = ntm.content_weights(k, torch.tensor(beta, dtype=F64), M)
        assert w.argmax() == 4 and w[4] > least


def test_an_empty_memory_has_similarity_zero_not_nan():
    M = torch.zeros(2, 4, 3, dtype=F64)
    k = randn(5, 2, 3)
    assert torch.equal(ntm.cosine_similarity(k, M), torch.zeros(2, 4, dtype=F64))
    torch.testing.assert_close(ntm.content_weights(k, torch.ones(2, dtype=F64), M),
                               torch.full((2, 4), 0.25, dtype=F64))


def test_interpolate_is_the_convex_combination():
    wc, wp = simplex(6, 4, 9), simplex(7, 4, 9)
    g = torch.tensor([0.0, 1.0, 0.3, 0.75], dtype=F64)
    out = ntm.interpolate(wc, wp, g)
    for b in range(4):
        torch.testing.assert_close(out[b], g[b] * wc[b] + (1 - g[b]) * wp[b])
    torch.testing.assert_close(out[0], wp[0])
    torch.testing.assert_close(out[1], wc[1])
    torch.testing.assert_close(out.sum(-1), torch.ones(4, dtype=F64))


@pytest.mark.parametrize("N, S", [(1, 1), (3, 3), (5, 3), (8, 5), (7, 7)])
def test_shift_is_the_circular_convolution_loop(N, S):
    w, s = simplex(8, 3, N), simplex(9, 3, S)
    out = ntm.shift(w, s)
    for b in range(3):
        torch.testing.assert_close(out[b], loop_shift(w[b], s[b]), rtol=1e-12,
                                   atol=1e-12)
    torch.testing.assert_close(out.sum(-1), torch.ones(3, dtype=F64))
    assert (out >= 0).all()


def test_a_one_hot_shift_rolls_the_weighting():
    N, r = 6, 2
    w = simplex(10, N)
    for offset in range(-r, r + 1):
        s = F.one_hot(torch.tensor(offset + r), 2 * r + 1).to(F64)
        want = torch.stack([w[(i - offset) % N] for i in range(N)])
        torch.testing.assert_close(ntm.shift(w, s), want, rtol=0, atol=0)


def test_sharpen_is_the_power_normalised():
    w = simplex(11, 4, 6)
    gamma = torch.tensor([1.0, 1.5, 3.0, 20.0], dtype=F64)
    out = ntm.sharpen(w, gamma)
    for b in range(4):
        torch.testing.assert_close(out[b], loop_sharpen(w[b], gamma[b]), rtol=1e-12,
                                   atol=1e-14)
    torch.testing.assert_close(out[0], w[0])  # gamma = 1 changes nothing
    torch.testing.assert_close(out.sum(-1), torch.ones(4, dtype=F64))
    # a larger gamma never lowers the largest weight
    assert (out.amax(-1)[1:] >= w.amax(-1)[1:]).all()
    assert out[3].argmax() == w[3].argmax() and out[3].max() > 2 * w[3].max()
    # zeros stay zero and give no NaN, in the value or the gradient
    hot = torch.tensor([0.0, 0.5, 0.5, 0.0], dtype=F64, requires_grad=True)
    g = torch.tensor(2.0, dtype=F64, requires_grad=True)
    out = ntm.sharpen(hot, g)
    torch.testing.assert_close(out, hot.detach())
    out[1].backward()
    assert torch.isfinite(hot.grad).all() and torch.isfinite(g.grad)

    # no underflow: every (1/12)^50 is below float32's smallest number, yet the weighting
    # is uniform still (it was 0/0 = NaN), and a gradient flows
    flat = torch.full((12,), 1 / 12, requires_grad=True)
    steep = torch.tensor(50.0, requires_grad=True)
    out = ntm.sharpen(flat, steep)
    torch.testing.assert_close(out, torch.full((12,), 1 / 12))
    (out * torch.arange(12.0)).sum().backward()
    assert torch.isfinite(flat.grad).all() and torch.isfinite(steep.grad)
    peaked = torch.tensor([0.7, 0.2, 0.1])
    torch.testing.assert_close(ntm.sharpen(peaked, torch.tensor(200.0)),
                               torch.tensor([1.0, 0.0, 0.0]))


def test_address_chains_the_four_steps():
    B, N, W, S = 2, 6, 4, 3
    M, prev = randn(12, B, N, W), simplex(13, B, N)
    k, beta = randn(14, B, W), torch.tensor([0.5, 4.0], dtype=F64)
    g, gamma = torch.tensor([0.2, 0.9], dtype=F64), torch.tensor([1.0, 2.5], dtype=F64)
    s = simplex(15, B, S)
    a = ntm.address(M, prev, k, beta, g, s, gamma)
    assert isinstance(a, ntm.Addressing)
    wc = ntm.content_weights(k, beta, M)
    wg = ntm.interpolate(wc, prev, g)
    ws = ntm.shift(wg, s)
    for got, want in zip(a, (wc, wg, ws, ntm.sharpen(ws, gamma))):
        torch.testing.assert_close(got, want)
    for b in range(B):
        want = loop_sharpen(loop_shift(g[b] * loop_content(k[b], beta[b], M[b])
                                       + (1 - g[b]) * prev[b], s[b]), gamma[b])
        torch.testing.assert_close(a.weights[b], want, rtol=1e-12, atol=1e-12)


def test_read_and_write_equal_the_loops():
    B, N, W = 3, 5, 4
    M, w = randn(16, B, N, W), simplex(17, B, N)
    e = torch.rand(B, W, dtype=F64, generator=gen(18))
    a = randn(19, B, W)
    r = ntm.read(M, w)
    new = ntm.write(M, w, e, a)
    for b in range(B):
        torch.testing.assert_close(r[b], sum(w[b, i] * M[b, i] for i in range(N)))
        torch.testing.assert_close(new[b], loop_write(M[b], w[b], e[b], a[b]),
                                   rtol=1e-12, atol=1e-12)
    assert not torch.equal(new, M)  # a new tensor; the argument is unchanged
    torch.testing.assert_close(M, randn(16, B, N, W), rtol=0, atol=0)


def test_write_then_read_returns_what_was_written_under_one_hot_addressing():
    N, W = 8, 5
    M = randn(20, N, W)
    for i in range(N):
        w = F.one_hot(torch.tensor(i), N).to(F64)
        a = randn(21 + i, W)
        after = ntm.write(M, w, torch.ones(W, dtype=F64), a)
        torch.testing.assert_close(ntm.read(after, w), a, rtol=0, atol=0)
        others = [j for j in range(N) if j != i]
        torch.testing.assert_close(after[others], M[others], rtol=0, atol=0)
        # erase 0 adds to the old contents
        kept = ntm.write(M, w, torch.zeros(W, dtype=F64), a)
        torch.testing.assert_close(ntm.read(kept, w), M[i] + a)


# -------------------------------------------------------------------------- gradients

def test_every_step_passes_gradcheck_in_float64():
    N, W, S = 5, 3, 3
    M, prev = randn(30, N, W), simplex(31, N)
    k, a = randn(32, W), randn(33, W)
    checks = {
        "cosine": (lambda k, M: ntm.cosine_similarity(k, M), (k, M)),
        "content": (lambda k, beta, M: ntm.content_weights(k, beta, M),
                    (k, torch.tensor(2.0, dtype=F64), M)),
        "interpolate": (ntm.interpolate, (simplex(34, N), prev, torch.tensor(0.4,
                                                                          dtype=F64))),
        "shift": (ntm.shift, (prev, simplex(35, S))),
        "sharpen": (lambda w, g: ntm._sharpen(w, g), (prev, torch.tensor(2.3,
                                                                         dtype=F64))),
        "read": (ntm.read, (M, prev)),
        "write": (ntm.write, (M, prev, torch.full((W,), 0.3, dtype=F64), a)),
    }
    for name, (fn, args) in checks.items():
        leaves = tuple(x.clone().requires_grad_() for x in args)
        assert torch.autograd.gradcheck(fn, leaves, eps=1e-6, atol=1e-8), name


def test_hand_derived_gradients_equal_autograd():
    N, S = 7, 5
    w, s = simplex(40, N).requires_grad_(), simplex(41, S).requires_grad_()
    up = randn(42, N)  # dL/dw~
    r = (S - 1) // 2
    out = ntm.shift(w, s)
    gw, gs = torch.autograd.grad(out, (w, s), up)
    # the gradient of a circular convolution is a circular correlation
    want_w = torch.stack([sum(up[(j + m - r) % N] * s[m] for m in range(S))
                          for j in range(N)])
    want_s = torch.stack([sum(up[(j + m - r) % N] * w[j] for j in range(N))
                          for m in range(S)])
    torch.testing.assert_close(gw, want_w.detach(), rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(gs, want_s.detach(), rtol=1e-12, atol=1e-12)
    # sharpening: dw_i/dgamma = w_i (log w~_i - sum_j w_j log w~_j)
    v = simplex(43, N)
    gamma = torch.tensor(1.7, dtype=F64, requires_grad=True)
    sharp = ntm.sharpen(v, gamma)
    (dgamma,) = torch.autograd.grad(sharp @ up, gamma)
    w_s = sharp.detach()
    want = (up * w_s * (v.log() - (w_s * v.log()).sum())).sum()
    torch.testing.assert_close(dgamma, want, rtol=1e-12, atol=1e-12)
    # content: dw_i/dbeta = w_i (K_i - sum_j w_j K_j)
    M, k = randn(44, N, 4), randn(45, 4)
    beta = torch.tensor(3.0, dtype=F64, requires_grad=True)
    wc = ntm.content_weights(k, beta, M)
    (dbeta,) = torch.autograd.grad(wc @ up, beta)
    K = ntm.cosine_similarity(k, M)
    wcd = wc.detach()
    torch.testing.assert_close(dbeta, (up * wcd * (K - (wcd * K).sum())).sum(),
                               rtol=1e-12, atol=1e-12)


# --------------------------------------------------------------------------- the cell

def loop_step(cell: ntm.NTMCell, x: torch.Tensor, state: ntm.NTMState):
    """One step of the cell written out for one sequence (b = 0 .. B-1), row by row."""
    R, W, N = cell.read_heads, cell.word_size, cell.memory_size
    S = 2 * cell.shift_radius + 1
    outs, states = [], []
    for b in range(x.shape[0]):
        inputs = torch.cat([x[b], state.reads[b].reshape(-1)])
        if cell.controller_kind == "lstm":
            h, c = state.controller[0][b], state.controller[1][b]
            L = cell.controller
            z = L.weight_ih @ inputs + L.bias_ih + L.weight_hh @ h + L.bias_hh
            i, f, gg, o = z.chunk(4)
            c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(gg)
            h = torch.sigmoid(o) * torch.tanh(c)
            ctrl = (h, c)
        else:
            h = torch.tanh(cell.controller.weight @ inputs + cell.controller.bias)
            ctrl = None
        raw = cell.heads.weight @ h + cell.heads.bias
        per = raw[: (R + 1) * (W + S + 3)].reshape(R + 1, W + S + 3)
        erase = torch.sigmoid(raw[(R + 1) * (W + S + 3):][:W])
        add = torch.tanh(raw[(R + 1) * (W + S + 3):][W:])

        def weighting(head, M, prev):
            k = torch.tanh(per[head, :W])
            beta = F.softplus(per[head, W])
            g = torch.sigmoid(per[head, W + 1])
            s = torch.softmax(per[head, W + 2:W + 2 + S], 0)
            gamma = 1 + F.softplus(per[head, W + 2 + S])
            wg = g * loop_content(k, beta, M) + (1 - g) * prev
            return loop_sharpen(loop_shift(wg, s), gamma)

        ww = weighting(R, state.memory[b], state.write_weights[b])
        M = loop_write(state.memory[b], ww, erase, add)
        wr = torch.stack([weighting(j, M, state.read_weights[b, j]) for j in range(R)])
        reads = torch.stack([sum(wr[j, i] * M[i] for i in range(N)) for j in range(R)])
        outs.append(torch.cat([h, reads.reshape(-1)]))
        states.append((M, reads, wr, ww, ctrl))
    return torch.stack(outs), states


@pytest.mark.parametrize("controller, heads, radius",
                         [("lstm", 1, 1), ("feedforward", 2, 1), ("lstm", 2, 2)])
def test_cell_equals_the_step_written_out(controller, heads, radius):
    torch.manual_seed(0)
    cell = ntm.NTMCell(3, 6, 7, 4, read_heads=heads, shift_radius=radius,
                       controller=controller).double()
    B = 2
    state = cell.initial_state(B)
    assert state.memory.shape == (B, 7, 4) and state.read_weights.shape == (B, heads, 7)
    for t in range(3):  # a few steps, so that the memory and the weightings move
        x = randn(50 + t, B, 3)
        out, new = cell(x, state)
        want, per_b = loop_step(cell, x, state)
        torch.testing.assert_close(out, want, rtol=1e-10, atol=1e-12)
        for b, (M, reads, wr, ww, ctrl) in enumerate(per_b):
            torch.testing.assert_close(new.memory[b], M, rtol=1e-10, atol=1e-12)
            torch.testing.assert_close(new.reads[b], reads, rtol=1e-10, atol=1e-12)
            torch.testing.assert_close(new.read_weights[b], wr, rtol=1e-10, atol=1e-12)
            torch.testing.assert_close(new.write_weights[b], ww, rtol=1e-10, atol=1e-12)
        state = new
    assert out.shape == (B, cell.output_size)


def test_ntm_runs_the_cell_and_records_distributions():
    torch.manual_seed(1)
    model = ntm.NTM(3, 2, 5, 6, 4, read_heads=2).double()
    x = randn(60, 4, 5, 3)
    logits, trace = model(x)
    assert logits.shape == (4, 5, 2) and isinstance(trace, ntm.NTMTrace)
    assert trace.read_weights.shape == (4, 5, 2, 6)
    assert trace.write_weights.shape == (4, 5, 6)
    state, outs = None, []
    for t in range(5):
        out, state = model.cell(x[:, t], state)
        outs.append(model.output(out))
    torch.testing.assert_close(logits, torch.stack(outs, 1))
    torch.testing.assert_close(trace.memory, state.memory)
    for w in (trace.read_weights, trace.write_weights):
        assert (w >= 0).all()
        torch.testing.assert_close(w.sum(-1), torch.ones(w.shape[:-1], dtype=F64))
    # gradients reach every parameter
    logits.sum().backward()
    assert all(p.grad is not None and p.grad.abs().sum() > 0
               for p in model.parameters())


def test_the_cell_backward_equals_finite_differences():
    torch.manual_seed(2)
    model = ntm.NTM(2, 2, 3, 4, 3, controller="feedforward").double()
    x = randn(61, 1, 3, 2)
    names = [n for n, _ in model.named_parameters()]

    def logits(*values):
        return torch.func.functional_call(model, dict(zip(names, values)), (x,))[0]

    leaves = tuple(p.detach().clone().requires_grad_() for p in model.parameters())
    assert torch.autograd.gradcheck(logits, leaves, eps=1e-6, atol=1e-7, fast_mode=True)


# -------------------------------------------------------------------------- validation

def test_bad_arguments_raise_naming_the_argument():
    M, w, k = randn(70, 2, 5, 3), simplex(71, 2, 5), randn(72, 2, 3)
    one = torch.ones(2, dtype=F64)
    with pytest.raises(ValueError, match=r"memory must have shape \(\.\.\., N, W=3\)"):
        ntm.cosine_similarity(k, randn(73, 2, 5, 4))
    with pytest.raises(TypeError, match="key must be a floating-point tensor"):
        ntm.cosine_similarity(k.long(), M)
    with pytest.raises(TypeError, match="key and memory must have the same dtype"):
        ntm.cosine_similarity(k.float(), M)
    with pytest.raises(ValueError, match="eps must be positive"):
        ntm.cosine_similarity(k, M, eps=0.0)
    with pytest.raises(ValueError, match=r"beta must hold finite numbers >= 0"):
        ntm.content_weights(k, -one, M)
    with pytest.raises(ValueError, match=r"beta must have the leading"):
        ntm.content_weights(k, torch.ones(3, dtype=F64), M)
    with pytest.raises(ValueError, match=r"gate must hold finite numbers \[0.0, 1.0\]"):
        ntm.interpolate(w, w, 1.5 * one)
    with pytest.raises(ValueError, match=r"previous must have shape"):
        ntm.interpolate(w, simplex(74, 2, 4), one)
    with pytest.raises(ValueError, match="odd number S"):
        ntm.shift(w, simplex(75, 2, 4))
    with pytest.raises(ValueError, match="odd number S"):
        ntm.shift(simplex(76, 2, 2), simplex(77, 2, 3))
    with pytest.raises(ValueError, match=r"gamma must hold finite numbers >= 1"):
        ntm.sharpen(w, 0.5 * one)
    with pytest.raises(ValueError, match="weights must sum to 1"):
        ntm.sharpen(2 * w, one)
    with pytest.raises(ValueError, match="weights must hold finite numbers >= 0"):
        ntm.sharpen(w - 0.5, one)
    with pytest.raises(ValueError, match="shifts must sum to 1"):
        ntm.address(M, w, k, one, one, torch.ones(2, 3, dtype=F64), one)
    with pytest.raises(ValueError, match="previous must sum to 1"):
        ntm.address(M, 2 * w, k, one, one, simplex(78, 2, 3), one)
    with pytest.raises(ValueError, match=r"erase must hold finite numbers \[0.0, 1"):
        ntm.write(M, w, 2 * k.abs() + 1, k)
    with pytest.raises(ValueError, match=r"weights must have shape \(\.\.\., N=5\)"):
        ntm.read(M, simplex(79, 2, 4))
    with pytest.raises(ValueError, match="controller must be one of"):
        ntm.NTMCell(3, 4, 5, 6, controller="gru")
    with pytest.raises(ValueError, match="shift_radius must be at most 2"):
        ntm.NTMCell(3, 4, 5, 6, shift_radius=3)
    with pytest.raises(TypeError, match="read_heads must be an int"):
        ntm.NTMCell(3, 4, 5, 6, read_heads=1.0)
    cell = ntm.NTMCell(3, 4, 5, 6)
    with pytest.raises(ValueError, match=r"x must have shape \(B, D=3\)"):
        cell(torch.zeros(2, 4))
    with pytest.raises(TypeError, match="state must be an NTMState"):
        cell(torch.zeros(2, 3), (torch.zeros(2, 5, 6),))
    with pytest.raises(ValueError,
                       match=r"state.memory must have shape \(B=2, N=5, W=6\)"):
        cell(torch.zeros(2, 3), cell.initial_state(3))
    with pytest.raises(TypeError, match="x and state.memory must have the same dtype"):
        cell(torch.zeros(2, 3, dtype=F64), cell.initial_state(2))
    model = ntm.NTM(3, 2, 4, 5, 6)
    with pytest.raises(ValueError, match="x must have T >= 1"):
        model(torch.zeros(2, 0, 3))
    with pytest.raises(ValueError, match=r"x must have shape \(B, T, D=3\)"):
        model(torch.zeros(2, 4))


# ---------------------------------------------- properties at random sizes (hypothesis)


@covers("seqlearn.ntm.cosine_similarity", "seqlearn.ntm.content_weights",
        "seqlearn.ntm.interpolate", "seqlearn.ntm.shift", "seqlearn.ntm.sharpen",
        "seqlearn.ntm.address", "seqlearn.ntm.Addressing")
@given(seed=seeds, B=sizes, N=st.integers(1, 7), W=sizes, data=st.data())
def test_addressing_steps_equal_their_definitions(seed, B, N, W, data):
    r = data.draw(st.integers(0, (N - 1) // 2))
    S = 2 * r + 1
    M, prev, k = randn(seed, B, N, W), simplex(seed + 1, B, N), randn(seed + 2, B, W)
    u = torch.rand(4, B, dtype=F64, generator=torch.Generator().manual_seed(seed))
    beta, g, gamma = 5 * u[0], u[1], 1 + 3 * u[2]
    s = simplex(seed + 3, B, S)
    cos = ntm.cosine_similarity(k, M)
    want = torch.einsum("bnw,bw->bn", M, k) / (M.norm(dim=-1) * k.norm(dim=-1)[:, None])
    torch.testing.assert_close(cos, want)
    wc = ntm.content_weights(k, beta, M)
    torch.testing.assert_close(wc, torch.softmax(beta[:, None] * want, -1))
    wg = ntm.interpolate(wc, prev, g)
    torch.testing.assert_close(wg, g[:, None] * wc + (1 - g[:, None]) * prev)
    ws = ntm.shift(wg, s)
    loop = torch.zeros(B, N, dtype=F64)
    for i in range(N):
        for m in range(S):  # offset m - r carries row i - (m - r) to row i
            loop[:, i] += s[:, m] * wg[:, (i - (m - r)) % N]
    torch.testing.assert_close(ws, loop)
    w = ntm.sharpen(ws, gamma)
    torch.testing.assert_close(w, ws ** gamma[:, None] / (ws ** gamma[:, None]).sum(-1,
                                                                                 True))
    a = ntm.address(M, prev, k, beta, g, s, gamma)
    assert isinstance(a, ntm.Addressing)
    for got, expected in zip(a, (wc, wg, ws, w)):
        torch.testing.assert_close(got, expected)
    for x in (wc, wg, ws, w):  # every weighting is a distribution
        assert (x >= 0).all()
        torch.testing.assert_close(x.sum(-1), torch.ones(B, dtype=F64))
    refuses(ntm.cosine_similarity, k, M, eps=data.draw(not_reals))
    refuses(ntm.content_weights, k, -1 - beta, M)
    refuses(ntm.interpolate, wc, prev, g + 1.5)
    refuses(ntm.shift, wg, simplex(seed, B, S + 1))
    refuses(ntm.sharpen, ws, 1 - gamma)
    refuses(ntm.address, M, prev, k, beta, g, s + 1, gamma)
    refuses(ntm.cosine_similarity, k.float(), M)


@covers("seqlearn.ntm.read", "seqlearn.ntm.write")
@given(seed=seeds, B=sizes, N=sizes, W=sizes, data=st.data())
def test_write_then_read_one_hot_returns_the_add_vector(seed, B, N, W, data):
    M, w = randn(seed, B, N, W), simplex(seed + 1, B, N)
    e = torch.rand(B, W, dtype=F64, generator=torch.Generator().manual_seed(seed))
    a = randn(seed + 2, B, W)
    torch.testing.assert_close(ntm.read(M, w), torch.einsum("bn,bnw->bw", w, M))
    new = ntm.write(M, w, e, a)
    want = M * (1 - w[..., None] * e[:, None]) + w[..., None] * a[:, None]
    torch.testing.assert_close(new, want)
    i = data.draw(st.integers(0, N - 1))
    hot = F.one_hot(torch.full((B,), i), N).to(F64)
    after = ntm.write(M, hot, torch.ones(B, W, dtype=F64), a)
    torch.testing.assert_close(ntm.read(after, hot), a, rtol=0, atol=0)
    refuses(ntm.write, M, w, e + 1.5, a)
    refuses(ntm.read, M, randn(seed, B, N + 1))


@covers("seqlearn.ntm.NTMCell", "seqlearn.ntm.NTM", "seqlearn.ntm.NTMState",
        "seqlearn.ntm.HeadParameters", "seqlearn.ntm.NTMTrace")
@given(seed=seeds, B=sizes, T=sizes, D=sizes, heads=st.integers(1, 2),
       controller=st.sampled_from(ntm.CONTROLLERS),
       bad=st.sampled_from(["gru", "", None]))
def test_the_cell_chains_the_public_steps(seed, B, T, D, heads, controller, bad):
    torch.manual_seed(seed % 1000)
    N, W, C = 5, 3, 4
    model = ntm.NTM(D, 2, C, N, W, read_heads=heads, controller=controller).double()
    cell = model.cell
    x = randn(seed, B, T, D)
    logits, trace = model(x)
    assert isinstance(trace, ntm.NTMTrace) and logits.shape == (B, T, 2)
    state = cell.initial_state(B)
    assert isinstance(state, ntm.NTMState)
    for t in range(T):
        inputs = torch.cat([x[:, t], state.reads.reshape(B, -1)], -1)
        if controller == "lstm":
            h, c = cell.controller(inputs, state.controller)
        else:
            h, c = torch.tanh(cell.controller(inputs)), None
        p = cell.head_parameters(h)
        assert isinstance(p, ntm.HeadParameters)
        ww = ntm.address(state.memory, state.write_weights, p.key[:, heads],
                         p.beta[:, heads], p.gate[:, heads], p.shifts[:, heads],
                         p.gamma[:, heads]).weights
        M = ntm.write(state.memory, ww, p.erase, p.add)
        wr = torch.stack([ntm.address(M, state.read_weights[:, j], p.key[:, j],
                                      p.beta[:, j], p.gate[:, j], p.shifts[:, j],
                                      p.gamma[:, j]).weights for j in range(heads)], 1)
        reads = torch.stack([ntm.read(M, wr[:, j]) for j in range(heads)], 1)
        torch.testing.assert_close(trace.write_weights[:, t], ww)
        torch.testing.assert_close(trace.read_weights[:, t], wr)
        torch.testing.assert_close(logits[:, t], model.output(torch.cat(
            [h, reads.reshape(B, -1)], -1)))
        state = ntm.NTMState(M, reads, wr, ww, None if c is None else (h, c))
    torch.testing.assert_close(trace.memory, state.memory)
    refuses(ntm.NTMCell, D, C, N, W, controller=bad)
    refuses(model, x[..., :0] if D > 1 else torch.zeros(B, T, D + 1, dtype=F64))
    refuses(model, x.float())
