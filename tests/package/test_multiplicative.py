"""seqlearn.multiplicative against brute-force sums, torch.nn.Bilinear and the GRU
update; initialisation and the wording of each error; properties at random sizes."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings, strategies as st
from torch import nn

from properties import covers, not_bools, numpy_of, randn, refuses, seeds, sizes
from seqlearn import multiplicative as mult
from seqlearn.multiplicative import (HyperLinear, MultiplicativeLinear, SoftSwitch,
                                     multiplicative_weights, soft_switch, switch_tensor)


F64 = torch.float64
dims = st.tuples(st.integers(1, 4), st.integers(1, 4), st.integers(1, 4), st.integers(1, 3),
                 st.integers(0, 2**16))


@settings(max_examples=15, deadline=None)
@given(dims)
def test_multiplicative_linear_equals_the_triple_sum_and_bilinear(d):
    M, N, K, B, seed = d
    g = torch.Generator().manual_seed(seed)
    layer = MultiplicativeLinear(N, M, K, generator=g).double()
    x, z = torch.randn(B, N, dtype=F64, generator=g), torch.randn(B, K, dtype=F64, generator=g)
    U, b = layer.weight, layer.bias
    brute = torch.zeros(B, M, dtype=F64)
    for n in range(B):
        for i in range(M):
            w_i = [sum(U[i, j, k] * z[n, k] for k in range(K)) for j in range(N)]   # w_ij = u_ij^T z
            brute[n, i] = sum(w_i[j] * x[n, j] for j in range(N)) + b[i]
    torch.testing.assert_close(layer(x, z), brute)
    bil = torch.nn.Bilinear(N, K, M).double()
    torch.testing.assert_close(MultiplicativeLinear.from_bilinear(bil)(x, z), bil(x, z))
    torch.testing.assert_close(layer.weights(z)[0], multiplicative_weights(U, z[0]))


def test_multiplicative_is_bilinear_and_batches_over_leading_dimensions():
    g = torch.Generator().manual_seed(0)
    layer = MultiplicativeLinear(3, 2, 4, bias=False, generator=g).double()
    x1, x2 = torch.randn(2, 5, 3, dtype=F64, generator=g), torch.randn(2, 5, 3, dtype=F64, generator=g)
    z1, z2 = torch.randn(2, 5, 4, dtype=F64, generator=g), torch.randn(2, 5, 4, dtype=F64, generator=g)
    torch.testing.assert_close(layer(2 * x1 - x2, z1), 2 * layer(x1, z1) - layer(x2, z1))
    torch.testing.assert_close(layer(x1, 3 * z1 + z2), 3 * layer(x1, z1) + layer(x1, z2))
    assert layer(x1, z1).shape == (2, 5, 2)


def test_linear_hypernetwork_is_a_multiplicative_module():
    g = torch.Generator().manual_seed(1)
    M, N, K = 2, 3, 4
    hyper = HyperLinear(N, M, K, hidden_features=None, generator=g).double()
    with torch.no_grad():
        hyper.hyper.bias.zero_()
        hyper.hyper.weight[M * N:] = 0.0                     # no generated bias
    mult = MultiplicativeLinear(N, M, K, bias=False).double()
    with torch.no_grad():
        mult.weight.copy_(hyper.hyper.weight[: M * N].reshape(M, N, K))
    x, z = torch.randn(7, N, dtype=F64, generator=g), torch.randn(7, K, dtype=F64, generator=g)
    torch.testing.assert_close(hyper(x, z), mult(x, z))
    deep = HyperLinear(N, M, K, hidden_features=5, generator=g).double()
    W, b = deep.weights(z)
    torch.testing.assert_close(deep(x, z), (W @ x[..., None])[..., 0] + b)
    assert W.shape == (7, M, N) and b.shape == (7, M)


@settings(max_examples=15, deadline=None)
@given(st.integers(1, 4), st.integers(1, 4), st.integers(0, 2**16))
def test_soft_switch_is_a_weighted_sum_and_a_multiplicative_module(K, D, seed):
    g = torch.Generator().manual_seed(seed)
    xs, scores = torch.randn(3, K, D, dtype=F64, generator=g), torch.randn(3, K, dtype=F64, generator=g)
    out, w = soft_switch(xs, scores)
    torch.testing.assert_close(w.sum(-1), torch.ones(3, dtype=F64))
    torch.testing.assert_close(out, sum(w[:, k, None] * xs[:, k] for k in range(K)))
    W = multiplicative_weights(switch_tensor(K, D), w)                     # (3, D, K*D)
    torch.testing.assert_close(out, (W @ xs.flatten(-2)[..., None])[..., 0])


def test_gru_update_is_a_two_input_soft_switch():
    g = torch.Generator().manual_seed(2)
    a, h, n = (torch.randn(4, 5, dtype=F64, generator=g) for _ in range(3))
    u = torch.sigmoid(a)
    out, w = soft_switch(torch.stack([h, n], -1)[..., None], torch.stack([a, torch.zeros_like(a)], -1))
    torch.testing.assert_close(out[..., 0], u * h + (1 - u) * n)
    torch.testing.assert_close(w[..., 0], u)


def test_soft_switch_module_depends_on_the_context():
    g = torch.Generator().manual_seed(3)
    switch = SoftSwitch(3, 2, generator=g).double()
    xs, z = torch.randn(4, 2, 6, dtype=F64, generator=g), torch.randn(4, 3, dtype=F64, generator=g)
    out, w = switch(xs, z)
    torch.testing.assert_close((out, w), soft_switch(xs, switch.score(z)))
    assert not torch.allclose(switch(xs, -z)[1], w)


def test_validation_errors():
    layer = MultiplicativeLinear(3, 2, 4)
    with pytest.raises(ValueError, match=r"x must have shape \(\.\.\., n=3\), got \(5, 2\)"):
        layer(torch.randn(5, 2), torch.randn(5, 4))
    with pytest.raises(ValueError, match="leading \\(batch\\) dimensions"):
        layer(torch.randn(5, 3), torch.randn(6, 4))
    with pytest.raises(TypeError, match="same dtype"):
        layer(torch.randn(5, 3, dtype=F64), torch.randn(5, 4, dtype=F64))
    with pytest.raises(TypeError, match="floating-point"):
        layer(torch.ones(5, 3, dtype=torch.long), torch.randn(5, 4))
    with pytest.raises(ValueError, match=r"U must have shape \(m, n, d\)"):
        multiplicative_weights(torch.randn(2, 3), torch.randn(3))
    with pytest.raises(ValueError, match=r"scores must have shape \(\.\.\., K=3\)"):
        soft_switch(torch.randn(2, 3, 4), torch.randn(2, 4))
    with pytest.raises(ValueError, match="leading \\(batch\\) dimensions"):
        soft_switch(torch.randn(2, 3, 4), torch.randn(5, 3))
    with pytest.raises(ValueError, match=r"xs must have shape \(\.\.\., K=2, D\)"):
        SoftSwitch(3, 2)(torch.randn(4, 3, 6), torch.randn(4, 3))
    with pytest.raises(TypeError, match="expected a torch.nn.Bilinear"):
        MultiplicativeLinear.from_bilinear(torch.nn.Linear(2, 3))
    with pytest.raises(ValueError, match="hidden_features must be positive"):
        HyperLinear(2, 3, 4, hidden_features=0)


def test_multiplicative_modules_check_dtype_against_parameters():
    hyper = HyperLinear(3, 2, 4)
    x, z = torch.randn(5, 3, dtype=torch.float64), torch.randn(5, 4, dtype=torch.float64)
    with pytest.raises(TypeError, match="x and the module's parameters must have the same dtype"):
        hyper(x, z)
    switch = SoftSwitch(4, 2)
    with pytest.raises(TypeError, match="z and the module's parameters must have the same dtype"):
        switch(torch.randn(5, 2, 3, dtype=torch.float64), z)


@pytest.mark.parametrize("hidden", [None, 5])
def test_hypernetwork_output_equals_the_generated_weights_and_bias_by_loop(hidden):
    """s_i = sum_j g(z)[i * n + j] x_j + g(z)[m * n + i]: row-major weights, then the bias."""
    g = torch.Generator().manual_seed(3)
    M, N, K = 3, 2, 4
    hyper = HyperLinear(N, M, K, hidden_features=hidden, generator=g).double()
    with torch.no_grad():
        for p in hyper.parameters():                         # every bias clearly non-zero
            p.add_(0.5 * torch.randn(p.shape, dtype=F64, generator=g))
    x, z = torch.randn(5, N, dtype=F64, generator=g), torch.randn(5, K, dtype=F64, generator=g)
    flat = hyper.hyper(z).detach()                           # g(z): (5, M*N + M)
    loop = torch.zeros(5, M, dtype=F64)
    for row in range(5):
        for i in range(M):
            loop[row, i] = sum(flat[row, i * N + j] * x[row, j] for j in range(N)) \
                + flat[row, M * N + i]
    torch.testing.assert_close(hyper(x, z), loop)
    W, b = hyper.weights(z)
    torch.testing.assert_close(b, flat[:, M * N:])
    assert b.abs().min() > 0 and W.shape == (5, M, N)
    # a linear hypernetwork with a bias is affine in z, not bilinear: s(x, 0) = W_0 x + b_0
    if hidden is None:
        zero = torch.zeros(1, K, dtype=F64)
        assert not torch.allclose(hyper(x[:1], zero), torch.zeros(1, M, dtype=F64))


# ------------------------ initialisation from a generator and the wording of each error


# Py: the modules draw their weights from the generator they are given, in torch's
# default range ``U(+-1/sqrt(fan_in))``, and every error names the argument at fault.


@pytest.mark.parametrize("make", [
    lambda g: MultiplicativeLinear(3, 2, 4, generator=g),
    lambda g: HyperLinear(3, 2, 4, hidden_features=5, generator=g),
    lambda g: HyperLinear(3, 2, 4, hidden_features=None, generator=g),
    lambda g: SoftSwitch(4, 3, generator=g),
])
def test_modules_draw_their_weights_from_the_generator(make):
    a = make(torch.Generator().manual_seed(7))
    torch.manual_seed(99)  # the global generator must play no part
    b = make(torch.Generator().manual_seed(7))
    for (name, p), q in zip(a.named_parameters(), b.parameters()):
        assert torch.equal(p, q), name


@pytest.mark.parametrize("make", [
    lambda g: HyperLinear(64, 8, 100, hidden_features=None, generator=g),
    lambda g: SoftSwitch(100, 64, generator=g),
])
def test_linear_layers_use_torch_default_range(make):
    m = make(torch.Generator().manual_seed(0))
    for layer in m.modules():
        if isinstance(layer, torch.nn.Linear):
            bound = 1.0 / math.sqrt(layer.in_features)
            for p in layer.parameters():  # thousands of draws: the extremes approach the bound
                assert float(p.detach().abs().max()) <= bound
                assert float(p.detach().abs().max()) > 0.9 * bound


def _pair():
    return torch.zeros(2, 3, dtype=F64), torch.zeros(2, 4, dtype=F64)


@pytest.mark.parametrize("call, error, match", [
    (lambda: MultiplicativeLinear(3, 2, 4).double()(torch.zeros(2, 3, dtype=F64),
                                                   torch.zeros(2, 5, dtype=F64)),
     ValueError, r"^z must have shape \(\.\.\., d=4\), got \(2, 5\)$"),
    (lambda: HyperLinear(3, 2, 4).double()(torch.zeros(2, 3, dtype=F64),
                                          torch.zeros(2, 5, dtype=F64)),
     ValueError, r"^z must have shape \(\.\.\., d=4\), got \(2, 5\)$"),  # before nn.Linear
    (lambda: MultiplicativeLinear(3, 2, 4).double()(torch.zeros(2, 3, dtype=F64),
                                                   torch.zeros(2, 4)),
     TypeError, r"^x and z must have the same dtype, got torch\.float64 and torch\.float32$"),
    (lambda: multiplicative_weights(torch.zeros(2, 3, 4), torch.zeros(4, dtype=torch.long)),
     TypeError, r"^z must be a floating-point tensor, got dtype torch\.int64$"),
    (lambda: multiplicative_weights(torch.zeros(2, 3, 4), torch.zeros(5)),
     ValueError, r"^z must have shape \(\.\.\., d=4\), got \(5,\)$"),
    (lambda: MultiplicativeLinear(3, 2, 4, bias=1), TypeError, r"^bias must be a bool, got int 1$"),
    (lambda: soft_switch(torch.zeros(3), torch.zeros(3)), ValueError,
     r"^xs must have shape \(\.\.\., K, D\), got \(3,\)$"),
    (lambda: switch_tensor(0, 2), ValueError, r"^num_inputs must be positive, got 0$"),
    (lambda: SoftSwitch(2.0, 3), TypeError, r"^context_features must be an int, got float$"),
    (lambda: SoftSwitch(4, 3)(torch.zeros(3, 2), torch.zeros(5)), ValueError,
     r"^z must have shape \(\.\.\., C=4\), got \(5,\)$"),
])
def test_errors_name_the_argument(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_multiplicative_linear_repr_shows_its_sizes_and_bias():
    assert repr(MultiplicativeLinear(3, 2, 4)) == (
        "MultiplicativeLinear(in_features=3, out_features=2, context_features=4, bias=True)")
    assert repr(MultiplicativeLinear(3, 2, 4, bias=False)).endswith("bias=False)")


# ---------------------------------------------- properties at random sizes (hypothesis)


@covers("seqlearn.multiplicative.multiplicative_weights",
        "seqlearn.multiplicative.MultiplicativeLinear", "seqlearn.multiplicative.HyperLinear",
        "seqlearn.multiplicative.soft_switch", "seqlearn.multiplicative.switch_tensor",
        "seqlearn.multiplicative.SoftSwitch")
@given(seed=seeds, B=sizes, n=sizes, m=sizes, d=sizes, flag=not_bools)
def test_multiplicative_modules_equal_bilinear_and_switches(seed, B, n, m, d, flag):
    torch.manual_seed(seed)
    ref = nn.Bilinear(n, d, m, dtype=F64)
    ours = mult.MultiplicativeLinear.from_bilinear(ref)
    x, z = randn(seed, B, n), randn(seed + 1, B, d)
    torch.testing.assert_close(ours(x, z), ref(x, z))
    W = mult.multiplicative_weights(ours.weight, z)
    torch.testing.assert_close(torch.einsum("bij,bj->bi", W, x) + ours.bias, ref(x, z))
    assert mult.HyperLinear(n, m, d).double()(x, z).shape == (B, m)
    xs, scores = randn(seed, B, 3, n), randn(seed + 2, B, 3)
    out, w = mult.soft_switch(xs, scores)
    torch.testing.assert_close(out, (torch.softmax(scores, -1)[..., None] * xs).sum(1))
    U = mult.switch_tensor(3, n)
    torch.testing.assert_close(torch.einsum("ijk,bk,bj->bi", U, w, xs.flatten(1)), out)
    assert mult.SoftSwitch(d, 3).double()(xs, z)[0].shape == (B, n)
    refuses(mult.MultiplicativeLinear, n, m, d, bias=flag)
    refuses(ours, numpy_of(x), z)
    refuses(mult.soft_switch, xs, scores[..., :2])
    refuses(mult.switch_tensor, 0, n)
