"""seqlearn.layernorm against torch.nn.LayerNorm: values, defaults, copies from torch
(with and without parameters, in every dtype); the printed form and the wording of each
error; properties at random sizes."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st
from torch import nn

from properties import covers, numpy_of, randn, refuses, seeds, sizes
from seqlearn import layernorm, transformer_layers as layers
from seqlearn.layernorm import LayerNorm
from tensors import randomise


TIGHT = dict(rtol=1e-12, atol=1e-12)
F64 = torch.float64


@settings(max_examples=10, deadline=None)
@given(shape=st.lists(st.integers(1, 5), min_size=1, max_size=3), d=st.integers(1, 9),
       eps=st.sampled_from([1e-5, 1e-3, 0.5]), seed=st.integers(0, 10_000))
def test_layernorm_equals_torch(shape, d, eps, seed):
    ref = randomise(nn.LayerNorm(d, eps=eps, dtype=F64), seed)
    ours = LayerNorm.from_torch(ref)
    x = torch.randn(*shape, d, dtype=F64, generator=torch.Generator().manual_seed(seed)) * 3 + 2
    torch.testing.assert_close(ours(x), ref(x), **TIGHT)
    x.requires_grad_(True)
    g_ours = torch.autograd.grad(ours(x).pow(2).sum(), x)[0]
    g_ref = torch.autograd.grad(ref(x).pow(2).sum(), x)[0]
    torch.testing.assert_close(g_ours, g_ref, rtol=1e-10, atol=1e-10)


def test_layernorm_defaults_and_affine_free_torch():
    fresh = LayerNorm(6)
    assert fresh.eps == 1e-5 and torch.equal(fresh.weight, torch.ones(6))
    # seeded: an unlucky row of tiny variance would feel eps
    x = torch.randn(4, 6, dtype=F64, generator=torch.Generator().manual_seed(0))
    ref = nn.LayerNorm(6, elementwise_affine=False, dtype=F64)
    torch.testing.assert_close(LayerNorm.from_torch(ref).double()(x), ref(x), **TIGHT)
    nobias = randomise(nn.LayerNorm(6, bias=False, dtype=F64), 3)
    torch.testing.assert_close(LayerNorm.from_torch(nobias)(x), nobias(x), **TIGHT)
    y = LayerNorm(6).double()(x)  # per row: mean 0, biased variance 1 (up to eps)
    torch.testing.assert_close(y.mean(-1), torch.zeros(4, dtype=F64), atol=1e-12, rtol=0)
    torch.testing.assert_close(y.var(-1, correction=0), torch.ones(4, dtype=F64),
                               atol=1e-4, rtol=0)


def test_layernorm_validation():
    ln = LayerNorm(4)
    with pytest.raises(ValueError, match=r"x must have shape \(\.\.\., d=4\)"):
        ln(torch.randn(2, 3))
    with pytest.raises(TypeError, match="same dtype"):
        ln(torch.randn(2, 4, dtype=F64))
    with pytest.raises(TypeError, match="x must be a torch.Tensor"):
        ln(np.zeros((2, 4)))
    with pytest.raises(ValueError, match="eps must be positive"):
        LayerNorm(4, eps=0.0)
    with pytest.raises(TypeError, match="torch.nn.LayerNorm"):
        LayerNorm.from_torch(nn.Linear(2, 2))
    with pytest.raises(ValueError, match="one \\(the last\\) axis"):
        LayerNorm.from_torch(nn.LayerNorm([2, 3]))


# ------------- devices, the printed form and the exact wording of each validation error


# Devices are checked with PyTorch's data-less ``meta`` device, so no GPU is needed:
# copying meta weights into CPU ones raises.


def test_repr_shows_the_width_and_eps():
    assert repr(LayerNorm(4)) == "LayerNorm(4, eps=1e-05)"
    assert repr(LayerNorm(3, eps=0.25)) == "LayerNorm(3, eps=0.25)"


def test_eps_is_added_to_the_variance_inside_the_square_root():
    x = torch.tensor([[1.0, 3.0], [0.0, 0.0]], dtype=F64)  # variances 1 and 0
    y = LayerNorm(2, eps=3.0).double()(x)
    torch.testing.assert_close(y, torch.tensor([[-0.5, 0.5], [0.0, 0.0]], dtype=F64),
                               rtol=1e-14, atol=0)
    ln = LayerNorm(2, eps=3.0).double()
    with torch.no_grad():
        ln.weight.copy_(torch.tensor([2.0, -1.0]))
        ln.bias.copy_(torch.tensor([0.5, 0.25]))
    torch.testing.assert_close(ln(x), torch.tensor([[-0.5, -0.25], [0.5, 0.25]], dtype=F64),
                               rtol=1e-14, atol=0)


def test_from_torch_keeps_the_device_and_dtype():
    ours = LayerNorm.from_torch(nn.LayerNorm(4, device="meta", dtype=F64))
    assert {(p.device.type, p.dtype) for p in ours.parameters()} == {("meta", F64)}
    assert ours.d == 4 and ours.eps == 1e-5


def test_from_torch_copies_eps_gain_and_bias():
    ref = nn.LayerNorm(3, eps=0.5, dtype=F64)
    with torch.no_grad():
        ref.weight.copy_(torch.tensor([1.0, 2.0, 3.0]))
        ref.bias.copy_(torch.tensor([-1.0, 0.0, 1.0]))
    ours = LayerNorm.from_torch(ref)
    assert ours.eps == 0.5
    assert ours.weight.tolist() == [1.0, 2.0, 3.0] and ours.bias.tolist() == [-1.0, 0.0, 1.0]


@pytest.mark.parametrize("call, error, match", [
    (lambda: LayerNorm(0), ValueError, r"^d must be positive"),
    (lambda: LayerNorm(2.0), TypeError, r"^d must be an int"),
    (lambda: LayerNorm(4, eps=0.0), ValueError, r"^eps must be positive, got 0\.0$"),
    (lambda: LayerNorm(4, eps="1"), TypeError, r"^eps must be a real number, got str$"),
    (lambda: LayerNorm(4)(torch.zeros(2, 4, dtype=F64)), TypeError,
     r"^x and the module's parameters must have the same dtype, got torch\.float64 and "
     r"torch\.float32$"),
    (lambda: LayerNorm(4)(torch.zeros(2, 3)), ValueError,
     r"^x must have shape \(\.\.\., d=4\), got \(2, 3\)$"),
    (lambda: LayerNorm(4)(torch.zeros(2, 4, dtype=torch.long)), TypeError,
     r"^x must be a floating-point tensor"),
    (lambda: LayerNorm(4)([0.0] * 4), TypeError, r"^x must be a torch\.Tensor, got list$"),
    (lambda: LayerNorm.from_torch(nn.Linear(2, 2)), TypeError,
     r"^m must be a torch\.nn\.LayerNorm, got Linear$"),
    (lambda: LayerNorm.from_torch(nn.LayerNorm([2, 3])), ValueError,
     r"^m must normalise over one \(the last\) axis, got normalized_shape \(2, 3\)$"),
])
def test_layernorm_error_messages(call, error, match):
    with pytest.raises(error, match=match):
        call()


# ---------------------------------------------- properties at random sizes (hypothesis)


@covers("seqlearn.layernorm.LayerNorm", "seqlearn.transformer_layers.FeedForward")
@given(seed=seeds, B=sizes, T=sizes, d=st.integers(1, 6), eps=st.sampled_from([1e-5, 0.1]))
def test_layernorm_and_feed_forward_equal_torch(seed, B, T, d, eps):
    torch.manual_seed(seed)
    ref = nn.LayerNorm(d, eps=eps, dtype=F64)
    nn.init.normal_(ref.weight)
    nn.init.normal_(ref.bias)
    x = randn(seed, B, T, d) * 2 + 1
    torch.testing.assert_close(layernorm.LayerNorm.from_torch(ref)(x), ref(x))
    ff = layers.FeedForward(d, 3).double()
    hidden = torch.relu(x @ ff.linear1.weight.T + ff.linear1.bias)
    torch.testing.assert_close(ff(x), hidden @ ff.linear2.weight.T + ff.linear2.bias)
    refuses(layernorm.LayerNorm, d, eps=-eps)
    refuses(layernorm.LayerNorm(d).double(), x[..., :0] if d > 1 else x.expand(B, T, 2))
    refuses(layernorm.LayerNorm(d), x)  # float32 module, float64 input
    refuses(ff, numpy_of(x))
    refuses(layers.FeedForward, d, 3, "sigmoid")


# ---------------------------- edge cases: sizes 0, reduced precision, non-finite values


@pytest.mark.parametrize("affine, bias", [(False, False), (True, False), (True, True)])
def test_layernorm_from_torch_keeps_dtype_and_missing_parameters(affine, bias):
    m = nn.LayerNorm(5, eps=1e-3, elementwise_affine=affine, bias=bias, dtype=F64)
    if affine:
        nn.init.normal_(m.weight)
    ours = layernorm.LayerNorm.from_torch(m)
    x = torch.randn(2, 3, 5, dtype=F64)
    torch.testing.assert_close(ours(x), m(x), rtol=1e-12, atol=1e-12)
    assert (ours.weight is None) == (m.weight is None) and (ours.bias is None) == (
        m.bias is None
    )
    if not affine:  # no parameters: any floating dtype is normalised, as in torch
        torch.testing.assert_close(ours(x.float()), m(x.float()))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_precision_is_normalised_in_float32_as_torch_does(dtype):
    # two close features on a large offset: mean and variance cancel in 8 or 11 bits
    gen = torch.Generator().manual_seed(0)
    x = (torch.randn(256, 2, generator=gen) + 40).to(dtype)
    exact = nn.functional.layer_norm(x.double(), (2,))
    ours = LayerNorm(2, elementwise_affine=False)(x)
    reference = nn.functional.layer_norm(x, (2,))
    assert ours.dtype == dtype
    ours_error = (ours.double() - exact).abs().max()
    torch_error = (reference.double() - exact).abs().max()
    assert ours_error <= 1.5 * torch_error + 1e-3, (ours_error, torch_error)
