"""seqlearn.online_softmax: buffer sizes, leading dimensions and the exact wording of each
validation error.

These tests close the gaps that mutation testing (``tools/mutation.py package``) found in
test_online_softmax.py. The blocked attention writes each block's scores into a reused buffer
(``torch.matmul(..., out=buffer)``); a buffer of the wrong shape still gives the right numbers,
because torch resizes it, but with a ``UserWarning``. So the forward and backward passes must
run without any warning, for a last block shorter than the others and for several leading
dimensions.
"""

from __future__ import annotations

import math
import warnings

import pytest
import torch

from seqlearn.attention import attention
from seqlearn.online_softmax import memory_efficient_attention, online_normalizer

F64 = torch.float64


def qkv(lead=(2,), Tq=3, Tk=5, d=4, dv=2, seed=0, grad=False):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(*lead, T, w, generator=g, dtype=F64).requires_grad_(grad)
            for T, w in ((Tq, d), (Tk, d), (Tk, dv))]


@pytest.mark.parametrize("lead", [(), (2,), (2, 3)])
@pytest.mark.parametrize("Tk, block", [(5, 2), (5, 5), (3, 8), (7, 3)])
def test_blocked_attention_reuses_buffers_of_the_right_shape(lead, Tk, block):
    q, k, v = qkv(lead, 4, Tk, grad=True)
    mask = torch.rand(4, Tk, generator=torch.Generator().manual_seed(1)) < 0.7
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a resized out= buffer warns
        out = memory_efficient_attention(q, k, v, mask=mask, causal=True, block_size=block)
        grads = torch.autograd.grad(out.sum(), (q, k, v))
    ref, _ = attention(q, k, v, mask=mask, causal=True)
    torch.testing.assert_close(out, ref, rtol=1e-10, atol=1e-12)
    for a, b in zip(grads, torch.autograd.grad(ref.sum(), (q, k, v))):
        torch.testing.assert_close(a, b, rtol=1e-10, atol=1e-12)


def test_block_size_defaults_to_128():
    q, k, v = qkv((1,), 2, 300)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = memory_efficient_attention(q, k, v)
    torch.testing.assert_close(out, memory_efficient_attention(q, k, v, block_size=128),
                               rtol=0, atol=0)
    torch.testing.assert_close(out, attention(q, k, v)[0], rtol=1e-10, atol=1e-12)


def test_online_normalizer_of_one_block_and_of_single_entries():
    scores = torch.tensor([[0.5, -1.0, 2.0, float("-inf")], [float("-inf")] * 4], dtype=F64)
    for block in (1, 3, 4, 10):
        m, l = online_normalizer(scores, block)
        assert m.tolist() == [2.0, float("-inf")]
        torch.testing.assert_close(l, torch.tensor([math.exp(-1.5) + math.exp(-3.0) + 1.0, 0.0],
                                                   dtype=F64), rtol=1e-12, atol=0)


@pytest.mark.parametrize("call, error, match", [
    (lambda q, k, v: memory_efficient_attention(q, k, v.float()), TypeError,
     r"^q and v must have the same dtype, got torch\.float64 and torch\.float32$"),
    (lambda q, k, v: memory_efficient_attention(q, k, v.long()), TypeError,
     r"^v must be a floating-point tensor"),
    (lambda q, k, v: memory_efficient_attention(q, k, v[:1].expand(1, 5, 2)), ValueError,
     r"^v must have the leading \(batch\) dimensions \(2,\) of the arguments before it"),
    (lambda q, k, v: memory_efficient_attention(q, k, v[:, :4]), ValueError,
     r"^v must have shape \(\.\.\., Tk=5, dv\), got \(2, 4, 2\)$"),
    (lambda q, k, v: memory_efficient_attention(q, k[..., :3], v), ValueError,
     r"^k must have shape \(\.\.\., Tk, dq=4\)"),
    (lambda q, k, v: memory_efficient_attention(q, k, v, causal=1), TypeError,
     r"^causal must be a bool"),
    (lambda q, k, v: memory_efficient_attention(q, k, v, block_size=0), ValueError,
     r"^block_size must be positive"),
    (lambda q, k, v: memory_efficient_attention(q, k, v, block_size=2.0), TypeError,
     r"^block_size must be an int"),
    (lambda q, k, v: memory_efficient_attention(q, k, v, scale="0.5"), TypeError,
     r"^scale must be a real number, got str$"),
    (lambda q, k, v: memory_efficient_attention(q, k, v, scale=math.nan), ValueError,
     r"^scale must be a finite number, got nan$"),
    (lambda q, k, v: memory_efficient_attention(q, k, v, mask=torch.ones(3, 5)), TypeError,
     r"^mask must be a bool tensor"),
    (lambda q, k, v: online_normalizer(q, 0), ValueError, r"^block_size must be positive"),
    (lambda q, k, v: online_normalizer(q, 1.5), TypeError, r"^block_size must be an int"),
    (lambda q, k, v: online_normalizer(q.long(), 2), TypeError,
     r"^scores must be a floating-point tensor"),
    (lambda q, k, v: online_normalizer(q.tolist(), 2), TypeError,
     r"^scores must be a torch\.Tensor, got list$"),
    (lambda q, k, v: online_normalizer(q[0, 0, 0], 2), ValueError,
     r"^scores must have shape \(\.\.\., n\), got \(\)$"),
    (lambda q, k, v: online_normalizer(torch.tensor([0.0, math.inf]), 2), ValueError,
     r"^scores must not hold NaN or \+inf \(-inf marks a masked score\)$"),
])
def test_online_softmax_error_messages(call, error, match):
    with pytest.raises(error, match=match):
        call(*qkv())
