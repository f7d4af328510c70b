"""Property tests of seqlearn.conv and seqlearn.multiplicative against torch.nn.functional."""

import torch
import torch.nn.functional as F
from hypothesis import given, strategies as st
from torch import nn

from properties import F64, covers, not_bools, numpy_of, randn, refuses, seeds, sizes
from seqlearn import conv, multiplicative as mult


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
