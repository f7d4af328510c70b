"""seqlearn.multiplicative against brute-force sums, torch.nn.Bilinear and the GRU update."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

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
