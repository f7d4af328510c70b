"""seqlearn.local_attention: defaults, devices and the exact wording of each validation error.

These tests close the gaps that mutation testing (``tools/mutation.py package``) found in
test_local_attention.py. Devices are checked with PyTorch's data-less ``meta`` device, so no
GPU is needed: a mask built on the CPU for ``meta`` inputs raises.
"""

from __future__ import annotations

import pytest
import torch

from seqlearn.local_attention import band_mask, restricted_attention

F64 = torch.float64


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
