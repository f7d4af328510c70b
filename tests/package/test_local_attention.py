"""seqlearn.local_attention against attention with a band mask (outputs and gradients);
the defaults, devices and wording of each error; properties at random sizes."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, strategies as st

from properties import covers, not_bools, randn, refuses, seeds, sizes
from seqlearn import attention as att, local_attention as ra
from seqlearn.attention import attention
from seqlearn.local_attention import band_mask, restricted_attention


F64 = torch.float64


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("T, radius", [(1, 0), (5, 0), (9, 2), (9, 8), (6, 20)])
def test_equals_attention_with_a_band_mask(T, radius, causal):
    g = torch.Generator().manual_seed(T * 100 + radius)
    q, k, v = (torch.randn(2, 3, T, w, generator=g, dtype=F64, requires_grad=True)
               for w in (4, 4, 5))
    out = restricted_attention(q, k, v, radius, causal=causal, scale=0.7)
    ref, _ = attention(q, k, v, mask=band_mask(T, radius, causal=causal), scale=0.7)
    torch.testing.assert_close(out, ref, rtol=0, atol=1e-12)
    dout = torch.randn(ref.shape, generator=g, dtype=F64)
    for a, b in zip(torch.autograd.grad(out, (q, k, v), dout), torch.autograd.grad(ref, (q, k, v), dout)):
        torch.testing.assert_close(a, b, rtol=0, atol=1e-12)


def test_band_mask_by_loops():
    for causal in (False, True):
        want = torch.tensor([[(0 <= t - i <= 2) if causal else abs(t - i) <= 2 for i in range(6)]
                             for t in range(6)])
        assert torch.equal(band_mask(6, 2, causal=causal), want)


def test_refuses_bad_arguments():
    q = torch.randn(1, 4, 3, dtype=F64)
    with pytest.raises(ValueError, match="one length"):
        restricted_attention(q, q[:, :3], q[:, :3], 1)
    with pytest.raises(ValueError, match="radius"):
        restricted_attention(q, q, q, -1)
    with pytest.raises(TypeError, match="causal"):
        restricted_attention(q, q, q, 1, causal=None)
    with pytest.raises(ValueError, match="v must have shape"):
        restricted_attention(q, q, q[:, :2], 1)
    with pytest.raises(TypeError, match="radius"):
        band_mask(4, 1.5)


# --------------------- defaults, devices and the exact wording of each validation error


# Py. Devices are checked with PyTorch's data-less ``meta`` device, so no GPU is needed:
# a mask built on the CPU for ``meta`` inputs raises.


def qkv(T=4, d=3, dv=2, seed=0):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(2, T, w, generator=g, dtype=F64) for w in (d, d, dv)]


def test_band_mask_is_two_sided_by_default():
    want = torch.tensor([[abs(t - i) <= 1 for i in range(4)] for t in range(4)])
    assert torch.equal(band_mask(4, 1), want)
    assert torch.equal(band_mask(4, 1, causal=False), want)


def test_band_mask_and_restricted_attention_stay_on_the_inputs_device():
    for causal in (False, True):
        assert band_mask(5, 2, causal=causal, device="meta").device.type == "meta"
    q, k, v = (torch.randn(2, 5, w, device="meta") for w in (3, 3, 4))
    for causal in (False, True):
        out = restricted_attention(q, k, v, 1, causal=causal)  # a CPU mask would raise here
        assert out.device.type == "meta" and out.shape == (2, 5, 4)


@pytest.mark.parametrize("call, error, match", [
    (lambda q, k, v: restricted_attention(q, torch.cat([k, k], -1), v, 1), ValueError,
     r"^k must have shape \(\.\.\., Tk, dq=3\)"),
    (lambda q, k, v: restricted_attention(q, k, v.float(), 1), TypeError,
     r"^q and v must have the same dtype, got torch\.float64 and torch\.float32$"),
    (lambda q, k, v: restricted_attention(q, k, v[:, :3], 1), ValueError,
     r"^v must have shape \(\.\.\., T=4, dv\), got \(2, 3, 2\)$"),
    (lambda q, k, v: restricted_attention(q, k, v[:1], 1), ValueError,
     r"^v must have the leading \(batch\) dimensions \(2,\)"),
    (lambda q, k, v: restricted_attention(q, k, v.long(), 1), TypeError,
     r"^v must be a floating-point tensor"),
    (lambda q, k, v: restricted_attention(q, k, v, 1, causal=1), TypeError,
     r"^causal must be a bool"),
    (lambda q, k, v: restricted_attention(q, k, v, 1, scale="0.5"), TypeError,
     r"^scale must be a real number, got str$"),
    (lambda q, k, v: restricted_attention(q, k, v, -1), ValueError, r"^radius must be at least 0"),
    (lambda q, k, v: restricted_attention(q, k[:, :3], v, 1), ValueError,
     r"^restricted self-attention needs q and k of one length, got Tq=4 and Tk=3$"),
    (lambda q, k, v: band_mask(4, -1), ValueError, r"^radius must be at least 0"),
    (lambda q, k, v: band_mask(4, 1.0), TypeError, r"^radius must be an int"),
    (lambda q, k, v: band_mask(0, 1), ValueError, r"^T must be positive"),
    (lambda q, k, v: band_mask(4, 1, causal=0), TypeError, r"^causal must be a bool"),
])
def test_local_attention_error_messages(call, error, match):
    with pytest.raises(error, match=match):
        call(*qkv())


# ---------------------------------------------- properties at random sizes (hypothesis)


@covers("seqlearn.local_attention.restricted_attention",
        "seqlearn.local_attention.band_mask")
@given(seed=seeds, B=sizes, T=sizes, d=sizes, radius=st.integers(0, 5), flag=not_bools)
def test_restricted_attention_equals_banded_attention(seed, B, T, d, radius, flag):
    q, k, v = randn(seed, B, T, d), randn(seed + 1, B, T, d), randn(seed + 2, B, T, 3)
    for causal in (False, True):
        mask = ra.band_mask(T, radius, causal=causal)
        lag = torch.arange(T)[:, None] - torch.arange(T)
        assert torch.equal(mask, (lag.abs() <= radius) & ((lag >= 0) | (not causal)))
        torch.testing.assert_close(ra.restricted_attention(q, k, v, radius, causal=causal),
                                   att.attention(q, k, v, mask=mask)[0])
    refuses(ra.restricted_attention, q, k, v, radius, causal=flag)
    refuses(ra.restricted_attention, q, k, v, -1 - radius)
    refuses(ra.band_mask, T, radius, causal=flag)
    refuses(ra.restricted_attention, q, k, v[..., :1, :] if T > 1 else v[..., :0, :], radius)
