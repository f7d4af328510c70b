"""seqlearn.conv against torch.nn.functional at random sizes (float64); the wording of
each error; properties at random sizes."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings, strategies as st

from properties import covers, not_bools, numpy_of, randn, refuses, seeds, sizes
from seqlearn import conv
from seqlearn.conv import causal_conv1d, conv_transpose1d, impulse_response, pad1d
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


def test_lp_pool1d_is_a_norm_where_torch_has_none() -> None:
    """|x|^p inside: a norm of every window; torch drops |.| (NaN or signed values)."""
    odd = torch.tensor([[[-2.0, 1.0, -1.0, 1.0]]], dtype=F64)
    assert torch.isnan(F.lp_pool1d(odd, 3, 2)[..., 0])  # torch.pow(-7, 1/3) is NaN
    torch.testing.assert_close(conv.lp_pool1d(odd, 3, 2),
                               torch.tensor([[[9 ** (1 / 3), 2 ** (1 / 3)]]], dtype=F64))
    torch.testing.assert_close(conv.lp_pool1d(odd, 1, 2), torch.tensor([[[3.0, 2.0]]], dtype=F64))
    u, v = rand(300, 2, 5, seed=11), rand(300, 2, 5, seed=12)
    c = rand(300, 2, 1, seed=13)
    for p in (0.5, 1, 1.5, 2, 3, 7, math.inf):
        norm = conv.lp_pool1d(u, p, 5)
        torch.testing.assert_close(norm, torch.linalg.vector_norm(u, p, dim=-1, keepdim=True))
        torch.testing.assert_close(conv.lp_pool1d(c * u, p, 5), c.abs() * norm)
        assert float(conv.lp_pool1d(torch.zeros(1, 1, 5, dtype=F64), p, 5)) == 0.0
        if p >= 1:  # the triangle inequality needs p >= 1
            assert torch.all(conv.lp_pool1d(u + v, p, 5) <= norm + conv.lp_pool1d(v, p, 5) + 1e-12)
    for p in (2, 4):  # even p: torch's formula is the norm too
        torch.testing.assert_close(conv.lp_pool1d(u, p, 5, 2), F.lp_pool1d(u, p, 5, 2))
    with pytest.raises(ValueError, match="norm_type must be > 0, got 0"):
        conv.lp_pool1d(u, 0, 2)
    with pytest.raises(ValueError, match="norm_type must be > 0"):
        conv.lp_pool1d(u, -1.5, 2)
    with pytest.raises(TypeError, match="norm_type must be a number, got str"):
        conv.lp_pool1d(u, "2", 2)
    with pytest.raises(TypeError, match="norm_type must be a number, got bool"):
        conv.lp_pool1d(u, True, 2)


def test_output_length_is_the_count_of_window_starts() -> None:
    """eq-conv-length on a grid, against a brute-force count; refused where nothing fits."""
    for length in range(1, 10):
        for k in range(1, 5):
            for a in range(3):
                for s in range(1, 4):
                    for d in range(1, 4):
                        span = d * (k - 1) + 1
                        if span > length + 2 * a:
                            with pytest.raises(ValueError, match=f"spanning {span} samples does "
                                               f"not fit into the padded length {length + 2 * a}"):
                                conv.output_length(length, k, s, a, d)
                            continue
                        starts = [t for t in range(0, length + 2 * a, s)
                                  if t + span <= length + 2 * a]
                        assert conv.output_length(length, k, s, a, d) == len(starts)
    assert conv.output_length(5, 5) == 1 and conv.output_length(5, 3, padding=1) == 5
    assert conv.output_length(7, 3) == 5 and conv.output_length(7, 3, 2) == 3
    for bad, match in (((0, 1), "length must be positive"),
                       ((3, 0), "kernel_size must be positive"),
                       ((3, 1, 0), "stride must be positive"),
                       ((3, 1, 1, -1), "padding must be at least 0"),
                       ((3, 1, 1, 0, 0), "dilation must be positive")):
        with pytest.raises(ValueError, match=match):
            conv.output_length(*bad)


def test_pad1d_and_unfold1d_against_brute_force() -> None:
    x = rand(2, 3, 6, seed=21)
    for left, right, value in ((0, 0, 0.0), (2, 1, 0.0), (1, 3, -2.5), (0, 2, -math.inf)):
        padded = conv.pad1d(x, left, right, value)
        torch.testing.assert_close(padded, F.pad(x, (left, right), value=value))
    empty = conv.pad1d(torch.zeros(2, 0, dtype=F64), 1, 2, 7.0)  # T = 0 works
    torch.testing.assert_close(empty, torch.full((2, 3), 7.0, dtype=F64))
    # any leading dimensions
    torch.testing.assert_close(conv.pad1d(x[0, 0], 1, 1), F.pad(x[0, 0], (1, 1)))
    for k, s, a, d, value in ((3, 1, 0, 1, 0.0), (2, 2, 1, 2, -1.0), (4, 3, 2, 1, 5.0),
                              (1, 2, 1, 3, 0.0)):
        windows = conv.unfold1d(x, k, s, a, d, value)
        x_pad = F.pad(x, (a, a), value=value)
        t_out = conv.output_length(6, k, s, a, d)
        assert windows.shape == (2, 3, t_out, k)
        for t in range(t_out):
            for j in range(k):
                torch.testing.assert_close(windows[:, :, t, j], x_pad[:, :, t * s + j * d])
    defaults = conv.unfold1d(x, 2)  # stride 1, no padding, dilation 1
    torch.testing.assert_close(defaults, torch.stack([x[..., :-1], x[..., 1:]], dim=-1))
    with pytest.raises(ValueError, match="left must be at least 0"):
        conv.pad1d(x, -1, 0)
    with pytest.raises(TypeError, match="right must be an int"):
        conv.pad1d(x, 0, 1.0)
    with pytest.raises(ValueError, match=r"x must have shape \(B, C, T\)"):
        conv.unfold1d(x[0], 2)


def test_insert_zeros_and_transposed_conv_edges() -> None:
    x = rand(2, 3, 5, seed=31)
    torch.testing.assert_close(conv.insert_zeros(x, 1), x)
    for factor in (2, 3):  # up-sampling: the transposed stride-factor convolution with kernel (1)
        ones = torch.ones(3, 1, 1, dtype=F64)  # one channel at a time (groups=3)
        z = conv.insert_zeros(x, factor)
        torch.testing.assert_close(z, F.conv_transpose1d(x, ones, stride=factor, groups=3))
        assert z.shape[-1] == 4 * factor + 1
    with pytest.raises(ValueError,
                       match=r"x must have T >= 1 \(shape \(B, C, T\)\), got shape \(2, 3, 0\)"):
        conv.insert_zeros(x[..., :0], 2)
    with pytest.raises(ValueError, match="factor must be positive"):
        conv.insert_zeros(x, 0)
    w = rand(3, 2, 3, seed=32)
    # T_out = (T - 1) s - 2a + d (k - 1) + output_padding + 1 = 0 is refused, 1 is accepted
    with pytest.raises(ValueError, match=r"padding 4 removes the whole output "
                                         r"\(length 0 with output_padding 1\)"):
        conv.conv_transpose1d(x[..., :2], w, stride=2, padding=4, output_padding=1, dilation=2)
    one = conv.conv_transpose1d(x[..., :1], w, padding=1)
    torch.testing.assert_close(one, F.conv_transpose1d(x[..., :1], w, padding=1))
    assert one.shape[-1] == 1
    # output_padding must stay below max(stride, dilation): dilation alone allows it
    ok = conv.conv_transpose1d(x, w, stride=1, dilation=3, output_padding=2)
    torch.testing.assert_close(ok, F.conv_transpose1d(x, w, stride=1, dilation=3, output_padding=2))
    with pytest.raises(ValueError, match=r"output_padding must be smaller than stride \(2\) or "
                                         r"dilation \(1\), got 2"):
        conv.conv_transpose1d(x, w, stride=2, output_padding=2)
    with pytest.raises(ValueError, match="output_padding must be at least 0"):
        conv.conv_transpose1d(x, w, output_padding=-1)
    with pytest.raises(ValueError, match=r"weight must have shape \(C_in=3, C_out, k\)"):
        conv.conv_transpose1d(x, rand(2, 3, 3, seed=33))
    with pytest.raises(ValueError, match=r"bias must have shape \(C_out=2\)"):
        conv.conv_transpose1d(x, w, rand(3, seed=34))
    with pytest.raises(TypeError, match="same dtype"):
        conv.conv_transpose1d(x, w, rand(2, seed=34).float())
    with pytest.raises(TypeError, match="same dtype"):
        conv.conv_transpose1d(x, w.float())


def test_pools_padding_limit_and_defaults() -> None:
    x = rand(2, 2, 11, seed=41)
    # padding exactly half the window is allowed (torch agrees), one more is refused
    torch.testing.assert_close(conv.max_pool1d(x, 4, 1, 2), F.max_pool1d(x, 4, 1, 2))
    torch.testing.assert_close(conv.avg_pool1d(x, 4, 1, 2), F.avg_pool1d(x, 4, 1, 2))
    for pool in (conv.max_pool1d, conv.avg_pool1d):
        with pytest.raises(ValueError, match="padding must be at most half of kernel_size, got "
                                             "padding=3 and kernel_size=5"):
            pool(x, 5, 1, 3)
    # stride defaults to the window size; max pooling pads with -inf, mean pooling with 0
    assert conv.max_pool1d(x, 3).shape[-1] == 3 and conv.avg_pool1d(x, 3).shape[-1] == 3
    negative = -1.0 - x.abs()
    torch.testing.assert_close(conv.max_pool1d(negative, 2, 2, 1)[..., 0], negative[..., 0])
    torch.testing.assert_close(conv.avg_pool1d(negative, 2, 2, 1)[..., 0], negative[..., 0] / 2)
    torch.testing.assert_close(conv.lp_pool1d(x.abs(), 2, 3), F.lp_pool1d(x.abs(), 2, 3))
    torch.testing.assert_close(conv.lp_pool1d(x, math.inf, 3, 2),
                               F.max_pool1d(x.abs(), 3, 2))
    with pytest.raises(ValueError, match="kernel_size must be positive"):
        conv.max_pool1d(x, 0)


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


def test_defaults_match_torch() -> None:
    """Every default equals torch's: stride 1 (pools: the window), no padding, dilation 1."""
    x, w, wt = rand(2, 3, 9, seed=61), rand(4, 3, 3, seed=62), rand(3, 4, 3, seed=63)
    torch.testing.assert_close(conv.conv1d(x, w), F.conv1d(x, w))
    torch.testing.assert_close(conv.conv_transpose1d(x, wt), F.conv_transpose1d(x, wt))
    torch.testing.assert_close(conv.max_pool1d(x, 2), F.max_pool1d(x, 2))
    torch.testing.assert_close(conv.avg_pool1d(x, 2), F.avg_pool1d(x, 2))
    torch.testing.assert_close(conv.lp_pool1d(x.abs(), 2, 2), F.lp_pool1d(x.abs(), 2, 2))
    torch.testing.assert_close(conv.causal_conv1d(x, w), F.conv1d(F.pad(x, (2, 0)), w))
    assert conv.output_length(9, 3) == 7
    assert conv.impulse(4).flatten().tolist() == [1.0, 0.0, 0.0, 0.0]
    assert conv.impulse(1).tolist() == [[[1.0]]]  # the shortest impulse
    assert conv.impulse(4).dtype == torch.float64
    assert conv.impulse(4, 2, torch.float32).dtype == torch.float32
    assert conv.impulse(4, 2).flatten().tolist() == [0.0, 0.0, 1.0, 0.0]
    assert conv.impulse_response(lambda u: u, 3).dtype == torch.float64
    with pytest.raises(ValueError, match="at must be at least 0"):
        conv.impulse(4, -1)


# ------------- the wording of each validation error and the checks of a system's output


# Py: every error names the argument at fault, and ``impulse_response`` refuses a system
# that returns more than one channel.


def test_pad1d_names_value():
    with pytest.raises(TypeError, match=r"^value must be a real number, got str$"):
        pad1d(torch.zeros(1, 1, 3, dtype=F64), 1, 1, value="0")


def test_conv_transpose1d_names_dilation():
    x, w = torch.zeros(1, 1, 3, dtype=F64), torch.zeros(1, 1, 2, dtype=F64)
    with pytest.raises(ValueError, match=r"^dilation must be positive, got 0$"):
        conv_transpose1d(x, w, dilation=0)


def test_impulse_response_refuses_two_channels():
    two = lambda x: torch.cat([x, x], dim=1)  # (1, 2, T)
    with pytest.raises(ValueError, match=r"^system\(impulse\) must have shape \(B=1, C=1, T=4\), "
                                         r"got \(1, 2, 4\)$"):
        impulse_response(two, 4)


def test_causal_conv1d_names_weight():
    with pytest.raises(ValueError, match=r"^weight must have shape \(C_out, C_in, k\), "
                                         r"got \(1, 2\)$"):
        causal_conv1d(torch.zeros(1, 1, 3, dtype=F64), torch.zeros(1, 2, dtype=F64))


# ---------------------------------------------- properties at random sizes (hypothesis)


@covers("seqlearn.conv.conv1d", "seqlearn.conv.conv_transpose1d", "seqlearn.conv.unfold1d",
        "seqlearn.conv.pad1d", "seqlearn.conv.output_length", "seqlearn.conv.insert_zeros",
        "seqlearn.conv.causal_conv1d", "seqlearn.conv.max_pool1d", "seqlearn.conv.avg_pool1d",
        "seqlearn.conv.lp_pool1d", "seqlearn.conv.impulse", "seqlearn.conv.impulse_response")
@given(seed=seeds, B=sizes, C=sizes, T=st.integers(3, 9), k=st.integers(1, 3),
       s=st.integers(1, 2), flag=not_bools)
def test_convolutions_and_pools_equal_torch(seed, B, C, T, k, s, flag):
    x, w, b = randn(seed, B, C, T), randn(seed + 1, 2, C, k), randn(seed + 2, 2)
    torch.testing.assert_close(conv.conv1d(x, w, b, stride=s, padding=1),
                               F.conv1d(x, w, b, stride=s, padding=1))
    wt = randn(seed + 3, C, 2, k)
    torch.testing.assert_close(conv.conv_transpose1d(x, wt, b, stride=s),
                               F.conv_transpose1d(x, wt, b, stride=s))
    assert conv.unfold1d(x, k, s).shape == (B, C, conv.output_length(T, k, s), k)
    assert conv.pad1d(x, 1, 2).shape == (B, C, T + 3)
    assert conv.insert_zeros(x, s).shape == (B, C, (T - 1) * s + 1)
    torch.testing.assert_close(conv.causal_conv1d(x, w), F.conv1d(F.pad(x, (k - 1, 0)), w))
    torch.testing.assert_close(conv.max_pool1d(x, k, s), F.max_pool1d(x, k, s))
    torch.testing.assert_close(conv.avg_pool1d(x, k, s), F.avg_pool1d(x, k, s))
    torch.testing.assert_close(conv.lp_pool1d(x.abs(), 2, k, s), F.lp_pool1d(x.abs(), 2, k, s))
    # on signed inputs: the p-norm of every window (torch drops the absolute values)
    torch.testing.assert_close(conv.lp_pool1d(x, 3, k, s),
                               torch.linalg.vector_norm(conv.unfold1d(x, k, s), 3, dim=-1))
    assert conv.impulse(T, T - 1).sum() == 1
    torch.testing.assert_close(conv.impulse_response(lambda d: conv.causal_conv1d(d, w[:1, :1]), T)[:k],
                               w[0, 0].flip(0))
    refuses(conv.insert_zeros, x[..., :0], s)
    refuses(conv.pad1d, numpy_of(x), 1, 1)
    refuses(conv.conv1d, numpy_of(x), w)
    refuses(conv.conv1d, x, w[:, :0] if C > 1 else randn(seed, 2, C + 1, k))
    refuses(conv.max_pool1d, x, "2" if flag in (0, 1) else flag)
    refuses(conv.output_length, T, T + 1)


@pytest.mark.parametrize("p", [math.inf, 2.0])
def test_lp_pool_checks_x_before_the_infinite_branch(p):
    """``p = inf`` called ``x.abs()`` before x was checked: a NumPy array gave
    AttributeError (issue 31)."""
    import numpy as np

    with pytest.raises(TypeError, match="x must be a torch.Tensor, got ndarray"):
        conv.lp_pool1d(np.ones((1, 1, 4)), p, 2)


def test_lp_pool_huge_int_p_is_the_max_pool():
    x = torch.randn(1, 2, 6, dtype=torch.float64)
    assert torch.equal(conv.lp_pool1d(x, 10**400, 2), conv.lp_pool1d(x, math.inf, 2))
