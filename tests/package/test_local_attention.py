"""seqlearn.local_attention against attention with a band mask (outputs and gradients)."""

from __future__ import annotations

import pytest
import torch

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
