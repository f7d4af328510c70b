"""Property tests of seqlearn.bptt: hand-written gradients against autograd, bad input."""

import numpy as np
import torch
from hypothesis import given, strategies as st

from properties import covers, not_bools, refuses, seeds, sizes
from seqlearn import bptt
from seqlearn.bptt import lstm as lstm_mod, params as P, reference as R, rnn


@covers("seqlearn.bptt.rnn.rnn_forward", "seqlearn.bptt.rnn.rnn_backward",
        "seqlearn.bptt.rnn.deep_rnn_forward", "seqlearn.bptt.rnn.deep_rnn_backward",
        "seqlearn.bptt.rnn.birnn_forward", "seqlearn.bptt.rnn.birnn_backward",
        "seqlearn.bptt.rnn.rnn_layer_forward", "seqlearn.bptt.rnn.rnn_layer_backward",
        "seqlearn.bptt.rnn.rnn_step", "seqlearn.bptt.rnn.hidden_jacobians",
        "seqlearn.bptt.reference.torch_reference", "seqlearn.bptt.reference.to_torch",
        "seqlearn.bptt.reference.torch_names", "seqlearn.bptt.params.init_params",
        "seqlearn.bptt.params.param_names", "seqlearn.bptt.params.suffixes",
        "seqlearn.bptt.params.orthogonal_matrix", "seqlearn.bptt.params.check_array",
        "seqlearn.bptt.params.check_keys", "seqlearn.bptt.params.check_params")
@given(seed=seeds, B=sizes, T=sizes, D=sizes, H=sizes, L=st.integers(1, 2), bi=st.booleans(),
       flag=not_bools)
def test_rnn_gradients_equal_autograd(seed, B, T, D, H, L, bi, flag):
    rng = np.random.default_rng(seed)
    params = P.init_params(D, H, 2, rng, num_layers=L, bidirectional=bi, orthogonal=True)
    assert list(params) == P.param_names(L, bi)
    assert set(R.torch_names(L, bi)) == set(params) and R.to_torch(params, bi) is not None
    x, dy = rng.standard_normal((B, T, D)), rng.standard_normal((B, T, 2))
    h0 = rng.standard_normal((L * (2 if bi else 1), B, H))
    y, cache = bptt.deep_rnn_forward(x, h0, params, bidirectional=bi)
    x[...] = 0  # the cache holds copies: editing the input afterwards changes nothing
    grads = bptt.deep_rnn_backward(dy, cache)
    y_ref, g_ref = R.torch_reference(cache["layers"][0][0]["x"], h0, params, dy, bi)
    np.testing.assert_allclose(y, y_ref, rtol=1e-10, atol=1e-12)
    for k in g_ref:
        np.testing.assert_allclose(grads[k], g_ref[k], rtol=1e-9, atol=1e-12)
    q = P.orthogonal_matrix(H, rng)
    np.testing.assert_allclose(q @ q.T, np.eye(H), atol=1e-12)
    assert P.suffixes(bi) == (["_f", "_b"] if bi else [""])
    refuses(P.suffixes, flag)
    refuses(P.init_params, D, H, 2, rng, orthogonal=flag)
    refuses(bptt.deep_rnn_forward, x[:, :0], h0, params, bidirectional=bi)
    refuses(bptt.deep_rnn_forward, x, h0, params, bidirectional=flag)
    refuses(P.check_array, torch.zeros(2), "x", "T", {})
    refuses(P.check_keys, {}, ["W1"])
    refuses(P.check_params, params, L, not bi, {"D": D, "H": H}, x)
    if L == 1 and not bi:
        single = P.init_params(D, H, 2, rng)
        y1, c1 = rnn.rnn_forward(x, h0[0], single)
        g1 = rnn.rnn_backward(dy, c1)
        _, g1_ref = R.torch_reference(x, h0[0], single, dy)
        np.testing.assert_allclose(g1["W11"], g1_ref["W11"], rtol=1e-9, atol=1e-12)
        assert rnn.hidden_jacobians(c1).shape == (B, T, H, H)
        h, layer = rnn.rnn_layer_forward(x, h0[0], single["W1"], single["W11"], single["b1"])
        np.testing.assert_allclose(h[:, 0], rnn.rnn_step(x[:, 0], h0[0], single["W1"],
                                                         single["W11"], single["b1"]))
        assert rnn.rnn_layer_backward(np.ones_like(h), layer)["x"].shape == x.shape
        yb, cb = rnn.birnn_forward(x, np.stack([h0[0], h0[0]]), P.init_params(
            D, H, 2, rng, bidirectional=True))
        assert rnn.birnn_backward(np.ones_like(yb), cb)["x"].shape == x.shape
        refuses(rnn.rnn_forward, x[:, :0], h0[0], single)


@covers("seqlearn.bptt.lstm.lstm_forward", "seqlearn.bptt.lstm.lstm_backward",
        "seqlearn.bptt.lstm.LSTMCache", "seqlearn.bptt.lstm.sigmoid",
        "seqlearn.bptt.clip.clip_grad_norm", "seqlearn.bptt.clip.global_norm")
@given(seed=seeds, B=sizes, T=sizes, D=sizes, H=sizes, peephole=st.booleans(),
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


@covers("seqlearn.bptt.truncated.truncated_rnn_backward",
        "seqlearn.bptt.truncated.pre_activation_gradients",
        "seqlearn.bptt.truncated.recurrent_gradient_terms",
        "seqlearn.bptt.counter.counter_params")
@given(seed=seeds, B=sizes, T=st.integers(1, 7), D=sizes, H=sizes, k=st.integers(1, 8),
       bad_k=st.sampled_from([0, -1, 1.5, True, "2", None]))
def test_truncated_bptt_equals_detached_autograd(seed, B, T, D, H, k, bad_k):
    rng = np.random.default_rng(seed)
    params = P.init_params(D, H, 2, rng)
    x, h0 = rng.standard_normal((B, T, D)), rng.standard_normal((B, H))
    y, cache = rnn.rnn_forward(x, h0, params)
    dy = rng.standard_normal(y.shape)
    t = {n: torch.tensor(v, requires_grad=True) for n, v in {**params, "x": x, "h0": h0}.items()}
    copies = [torch.tensor(params["W11"], requires_grad=True) for _ in range(T)]
    h, ys = t["h0"], []
    for s in range(T):  # detach before steps k, 2k, ...; W11 used through private copies
        if s > 0 and s % k == 0:
            h = h.detach()
        h = torch.tanh(t["x"][:, s] @ t["W1"].T + h @ copies[s].T + t["b1"])
        ys.append(h @ t["W2"].T + t["b2"])
    (torch.stack(ys, 1) * torch.tensor(dy)).sum().backward()
    from seqlearn.bptt import truncated as TR
    g = TR.truncated_rnn_backward(dy, cache, k)
    np.testing.assert_allclose(g["W11"], sum(c.grad for c in copies).numpy(), rtol=1e-9,
                               atol=1e-12)
    for n in ("W1", "b1", "W2", "b2", "x", "h0"):
        np.testing.assert_allclose(g[n], t[n].grad.numpy(), rtol=1e-9, atol=1e-12)
    if k >= T:  # no cut: the terms are the gradients of the private copies
        np.testing.assert_allclose(TR.recurrent_gradient_terms(dy, cache),
                                   torch.stack([c.grad for c in copies]).numpy(),
                                   rtol=1e-9, atol=1e-12)
    assert TR.pre_activation_gradients(dy, cache, k).shape == (B, T, H)
    refuses(TR.truncated_rnn_backward, dy, cache, bad_k)
    refuses(TR.recurrent_gradient_terms, dy[:, :, :1], cache)
    from seqlearn.bptt import counter as CT
    from seqlearn.data import encode_brackets, is_balanced, nesting_depth
    depth = 1 + seed % 3
    strings = ["".join("()x"[int(i)] for i in rng.integers(3, size=T)) for _ in range(8)]
    xs = encode_brackets(strings, dtype=torch.float64).numpy()
    yc, _ = rnn.rnn_forward(xs, -np.ones((8, depth + 2)), CT.counter_params(depth))
    truth = [is_balanced(s) and nesting_depth(s) <= depth for s in strings]
    assert (yc[:, -1].argmax(-1) == 1).tolist() == truth
    refuses(CT.counter_params, bad_k if bad_k != 1.5 else 0)
