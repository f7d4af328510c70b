"""seqlearn.conv against torch.nn.functional at random sizes (float64)."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from seqlearn import conv
from tensors import rand

FAST = settings(max_examples=40, deadline=None, derandomize=True, database=None)
F64 = torch.float64



@st.composite
def conv_cases(draw: st.DrawFn) -> dict:
    """Random sizes and hyper-parameters for which the window fits at least once."""
    k = draw(st.integers(1, 5))
    d = draw(st.integers(1, 3))
    a = draw(st.integers(0, 4))
    s = draw(st.integers(1, 4))
    span = d * (k - 1) + 1
    length = draw(st.integers(max(1, span - 2 * a), 20))
    return dict(B=draw(st.integers(1, 3)), C_in=draw(st.integers(1, 4)),
                C_out=draw(st.integers(1, 4)), T=length, k=k, s=s, a=a, d=d,
                seed=draw(st.integers(0, 10_000)))


@FAST
@given(conv_cases(), st.booleans())
def test_conv1d_matches_torch_and_length_formula(c: dict, with_bias: bool) -> None:
    x = rand(c["B"], c["C_in"], c["T"], seed=c["seed"])
    w = rand(c["C_out"], c["C_in"], c["k"], seed=c["seed"] + 1)
    b = rand(c["C_out"], seed=c["seed"] + 2) if with_bias else None
    ours = conv.conv1d(x, w, b, stride=c["s"], padding=c["a"], dilation=c["d"])
    ref = F.conv1d(x, w, b, stride=c["s"], padding=c["a"], dilation=c["d"])
    torch.testing.assert_close(ours, ref, rtol=1e-12, atol=1e-12)
    assert ours.shape[-1] == conv.output_length(c["T"], c["k"], c["s"], c["a"], c["d"])
    if c["d"] == 1:  # the book's (l + 2a - k) / s + 1, rounded down
        assert ours.shape[-1] == (c["T"] + 2 * c["a"] - c["k"]) // c["s"] + 1


@FAST
@given(conv_cases(), st.integers(0, 3), st.booleans())
def test_conv_transpose1d_matches_torch(c: dict, output_padding: int, with_bias: bool) -> None:
    output_padding = output_padding % max(c["s"], c["d"])
    reach = c["d"] * (c["k"] - 1)
    t_out = (c["T"] - 1) * c["s"] - 2 * c["a"] + reach + output_padding + 1
    if t_out < 1:
        return
    x = rand(c["B"], c["C_in"], c["T"], seed=c["seed"])
    w = rand(c["C_in"], c["C_out"], c["k"], seed=c["seed"] + 1)
    b = rand(c["C_out"], seed=c["seed"] + 2) if with_bias else None
    ours = conv.conv_transpose1d(x, w, b, stride=c["s"], padding=c["a"],
                                 output_padding=output_padding, dilation=c["d"])
    ref = F.conv_transpose1d(x, w, b, stride=c["s"], padding=c["a"],
                             output_padding=output_padding, dilation=c["d"])
    torch.testing.assert_close(ours, ref, rtol=1e-12, atol=1e-12)
    assert ours.shape[-1] == t_out


@FAST
@given(conv_cases())
def test_conv_transpose_is_the_adjoint_of_conv(c: dict) -> None:
    """<conv1d(u, W), v> = <u, conv_transpose1d(v, W)>: the transpose of the linear map."""
    u = rand(c["B"], c["C_in"], c["T"], seed=c["seed"]).requires_grad_()
    w = rand(c["C_out"], c["C_in"], c["k"], seed=c["seed"] + 1)
    y = conv.conv1d(u, w, stride=c["s"], padding=c["a"], dilation=c["d"])
    v = rand(*y.shape, seed=c["seed"] + 3)
    (grad,) = torch.autograd.grad((y * v).sum(), u)
    natural = (y.shape[-1] - 1) * c["s"] - 2 * c["a"] + c["d"] * (c["k"] - 1) + 1
    extra = c["T"] - natural  # samples the last window did not reach: (l + 2a - span) mod s
    assert 0 <= extra < c["s"]
    back = conv.conv_transpose1d(v, w, stride=c["s"], padding=c["a"], dilation=c["d"],
                                 output_padding=extra)
    torch.testing.assert_close(back, grad, rtol=1e-12, atol=1e-12)


@FAST
@given(st.integers(1, 3), st.integers(1, 3), st.integers(1, 12), st.integers(1, 4),
       st.integers(0, 10_000))
def test_insert_zeros(batch: int, channels: int, length: int, factor: int, seed: int) -> None:
    x = rand(batch, channels, length, seed=seed)
    z = conv.insert_zeros(x, factor)
    assert z.shape == (batch, channels, (length - 1) * factor + 1)
    torch.testing.assert_close(z[..., ::factor], x)
    assert int((z != 0).sum()) == int((x != 0).sum())


@st.composite
def pool_cases(draw: st.DrawFn) -> dict:
    k = draw(st.integers(1, 5))
    return dict(B=draw(st.integers(1, 3)), C=draw(st.integers(1, 3)),
                T=draw(st.integers(k, 20)), k=k,
                s=draw(st.one_of(st.none(), st.integers(1, 4))),
                a=draw(st.integers(0, k // 2)), seed=draw(st.integers(0, 10_000)))


@FAST
@given(pool_cases(), st.integers(1, 2))
def test_max_pool1d_matches_torch(c: dict, dilation: int) -> None:
    x = rand(c["B"], c["C"], c["T"] + dilation * c["k"], seed=c["seed"])
    ours = conv.max_pool1d(x, c["k"], c["s"], c["a"], dilation)
    torch.testing.assert_close(ours, F.max_pool1d(x, c["k"], c["s"], c["a"], dilation))


@FAST
@given(pool_cases())
def test_avg_pool1d_matches_torch(c: dict) -> None:
    x = rand(c["B"], c["C"], c["T"], seed=c["seed"])
    ours = conv.avg_pool1d(x, c["k"], c["s"], c["a"])
    torch.testing.assert_close(ours, F.avg_pool1d(x, c["k"], c["s"], c["a"]), rtol=1e-12, atol=1e-12)


@FAST
@given(pool_cases(), st.sampled_from([1, 2, 3, 1.5, 4.0, 7, math.inf]))
def test_lp_pool1d_matches_torch(c: dict, p: float) -> None:
    x = rand(c["B"], c["C"], c["T"], seed=c["seed"]).abs()  # torch's definition needs sum x^p >= 0
    ours = conv.lp_pool1d(x, p, c["k"], c["s"])
    torch.testing.assert_close(ours, F.lp_pool1d(x, p, c["k"], c["s"]), rtol=1e-10, atol=1e-12)


def test_lp_pool1d_even_p_accepts_signed_inputs_and_limits() -> None:
    x = rand(2, 3, 12, seed=0)
    torch.testing.assert_close(conv.lp_pool1d(x, 2, 3), F.lp_pool1d(x, 2, 3))
    pos = x.abs()
    # p = 1: the window sum, k times the mean pool
    torch.testing.assert_close(conv.lp_pool1d(pos, 1, 3), 3 * conv.avg_pool1d(pos, 3))
    # p -> inf: squeezed between max and k^(1/p) max
    big = conv.lp_pool1d(pos, 200.0, 3)
    top = conv.max_pool1d(pos, 3)
    assert torch.all(big >= top - 1e-12) and torch.all(big <= 3 ** (1 / 200) * top + 1e-12)


def test_lp_pool1d_raises_instead_of_nan() -> None:
    x = -torch.ones(1, 1, 4, dtype=F64)
    assert torch.isnan(F.lp_pool1d(x, 3, 2)).all()  # what torch does
    with pytest.raises(ValueError, match="negative"):
        conv.lp_pool1d(x, 3, 2)
    with pytest.raises(ValueError, match="norm_type must be > 0"):
        conv.lp_pool1d(x.abs(), 0, 2)
    with pytest.raises(TypeError, match="norm_type must be a number"):
        conv.lp_pool1d(x.abs(), "2", 2)


def test_stride_is_down_sampling() -> None:
    x, w = rand(2, 3, 19, seed=1), rand(4, 3, 3, seed=2)
    for s in (2, 3, 4):
        torch.testing.assert_close(conv.conv1d(x, w, stride=s), conv.conv1d(x, w)[..., ::s])
        torch.testing.assert_close(conv.max_pool1d(x, 3, s), conv.max_pool1d(x, 3, 1)[..., ::s])


def test_impulse_responses_finite_and_infinite() -> None:
    w = rand(1, 1, 4, seed=3)
    response = conv.impulse_response(lambda u: conv.causal_conv1d(u, w), 12)
    torch.testing.assert_close(response[:4], w[0, 0].flip(0))  # a causal conv's response is its kernel
    assert torch.all(response[4:] == 0)  # ... and nothing after it

    def leaky(u: torch.Tensor, mu: float = 0.8) -> torch.Tensor:
        h, out = torch.zeros(1, 1, dtype=F64), []
        for t in range(u.shape[-1]):
            h = mu * h + u[..., t]
            out.append(h)
        return torch.stack(out, dim=-1)

    decay = conv.impulse_response(leaky, 40)
    torch.testing.assert_close(decay, 0.8 ** torch.arange(40, dtype=F64))
    assert torch.all(decay > 0)  # never exactly zero


def test_causal_conv_sees_only_the_past() -> None:
    x, w = rand(2, 2, 10, seed=4), rand(3, 2, 3, seed=5)
    y = conv.causal_conv1d(x, w, dilation=2)
    assert y.shape == (2, 3, 10)
    x2 = x.clone()
    x2[..., 6:] += 1.0  # change the future of t = 5
    torch.testing.assert_close(conv.causal_conv1d(x2, w, dilation=2)[..., :6], y[..., :6])
    torch.testing.assert_close(y, F.conv1d(F.pad(x, (4, 0)), w, dilation=2))


def test_validation_errors() -> None:
    x, w = rand(2, 3, 10, seed=0), rand(4, 3, 3, seed=1)
    with pytest.raises(ValueError, match=r"x must have shape \(B, C, T\), got \(3, 10\)"):
        conv.conv1d(x[0], w)
    with pytest.raises(ValueError, match=r"weight must have shape \(C_out, C_in=3, k\)"):
        conv.conv1d(x, rand(4, 2, 3, seed=2))
    with pytest.raises(TypeError, match="same dtype"):
        conv.conv1d(x, w.float())
    with pytest.raises(TypeError, match="floating-point"):
        conv.conv1d(x.long(), w)
    with pytest.raises(ValueError, match=r"bias must have shape \(C_out=4\)"):
        conv.conv1d(x, w, rand(3, seed=3))
    with pytest.raises(ValueError, match="does not fit"):
        conv.conv1d(x, rand(4, 3, 11, seed=4))
    with pytest.raises(ValueError, match="stride must be positive"):
        conv.conv1d(x, w, stride=0)
    with pytest.raises(TypeError, match="padding must be an int"):
        conv.conv1d(x, w, padding=1.5)
    with pytest.raises(ValueError, match="output_padding must be smaller"):
        conv.conv_transpose1d(x, rand(3, 4, 3, seed=5), stride=2, output_padding=2)
    with pytest.raises(ValueError, match="removes the whole output"):
        conv.conv_transpose1d(x[..., :1], rand(3, 4, 1, seed=5), padding=1)
    with pytest.raises(ValueError, match="at most half of kernel_size"):
        conv.max_pool1d(x, 3, padding=2)
    with pytest.raises(ValueError, match="at most half of kernel_size"):
        conv.avg_pool1d(x, 2, padding=2)
    with pytest.raises(ValueError, match="length must be positive"):
        conv.output_length(0, 3)
    with pytest.raises(ValueError, match="at must be < length"):
        conv.impulse(5, at=5)
    with pytest.raises(ValueError, match=r"system\(impulse\) must have shape"):
        conv.impulse_response(lambda u: u[..., :-1], 5)
