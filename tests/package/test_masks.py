"""seqlearn.masks: the causal and padding masks against their definitions, their devices
and the wording of each error; properties at random sizes."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given

from properties import covers, refuses, seeds, sizes
from seqlearn import masks
from seqlearn.attention import attention
from seqlearn.masks import causal_mask, padding_mask


F64 = dict(dtype=torch.float64)
TIGHT = dict(rtol=1e-10, atol=1e-12)


def random_qkv(gen, lead, Tq, Tk, d, dv, requires_grad=False):
    q = torch.randn(*lead, Tq, d, generator=gen, **F64)
    k = torch.randn(*lead, Tk, d, generator=gen, **F64)
    v = torch.randn(*lead, Tk, dv, generator=gen, **F64)
    return [x.requires_grad_(requires_grad) for x in (q, k, v)]


def test_padding_mask_values():
    expected = torch.tensor([[True, True, False], [False, False, False], [True, True, True]])
    assert torch.equal(padding_mask(torch.tensor([2, 0, 3]), 3), expected)


def test_causal_mask_aligns_last_query_with_last_key():
    assert torch.equal(causal_mask(2, 4), torch.tensor([[1, 1, 1, 0], [1, 1, 1, 1]]).bool())
    assert torch.equal(causal_mask(3, 2), torch.tensor([[0, 0], [1, 0], [1, 1]]).bool())
    # incremental decoding: the last 2 queries against all 5 keys = the last 2 rows of 5 x 5
    gen = torch.Generator().manual_seed(7)
    q, k, v = random_qkv(gen, (2,), 5, 5, 3, 2)
    full, w_full = attention(q, k, v, causal=True)
    last, w_last = attention(q[:, 3:], k, v, causal=True)
    torch.testing.assert_close(last, full[:, 3:], **TIGHT)
    torch.testing.assert_close(w_last, w_full[:, 3:], **TIGHT)


# --------------------- defaults, devices and the exact wording of each validation error


# Py: a default argument that may not change, a tensor that must be built on the inputs'
# device (checked with PyTorch's data-less ``meta`` device, so no GPU is needed), and
# error messages that must name the argument and what it got.


# --- devices (meta tensors carry shapes and devices but no data) --------------------------------

def test_causal_mask_is_built_on_the_requested_device():
    assert causal_mask(3, 4, device="meta").device.type == "meta"
    assert causal_mask(3, 4, device="meta").shape == (3, 4)


@pytest.mark.parametrize("lengths, T, error, match", [
    (torch.tensor([1.0, 2.0]), 3, TypeError,
     r"^lengths must be an integer tensor, got torch\.float32$"),
    (torch.tensor([True, False]), 3, TypeError,
     r"^lengths must be an integer tensor, got torch\.bool$"),
    ([1, 2], 3, TypeError, r"^lengths must be an integer tensor, got list$"),
    (torch.tensor([[1, 2]]), 3, ValueError, r"^lengths must have shape \(B\), got \(1, 2\)$"),
    (torch.tensor([1, 2]), 2.0, TypeError, r"^T must be an int"),
    (torch.tensor([0, 0]), 0, ValueError, r"^T must be positive"),
    (torch.tensor([-1, 2]), 3, ValueError, r"^lengths must lie in \[0, T=3\], got \[-1, 2\]$"),
])
def test_padding_mask_error_messages(lengths, T, error, match):
    with pytest.raises(error, match=match):
        padding_mask(lengths, T)


def test_padding_mask_accepts_the_boundary_lengths_zero_and_T():
    mask = padding_mask(torch.tensor([0, 3, 1]), 3)
    assert mask.tolist() == [[False] * 3, [True] * 3, [True, False, False]]


# ---------------------------------------------- properties at random sizes (hypothesis)


@covers("seqlearn.masks.causal_mask", "seqlearn.masks.padding_mask")
@given(seed=seeds, B=sizes, Tq=sizes, Tk=sizes)
def test_masks_follow_their_definitions(seed, B, Tq, Tk):
    want = [[i <= t + (Tk - Tq) for i in range(Tk)] for t in range(Tq)]
    assert masks.causal_mask(Tq, Tk).tolist() == want
    square = [[i <= t for i in range(Tq)] for t in range(Tq)]
    assert masks.causal_mask(Tq).tolist() == square
    g = torch.Generator().manual_seed(seed)
    lengths = torch.randint(0, Tk + 1, (B,), generator=g)
    keep = masks.padding_mask(lengths, Tk)
    assert keep.tolist() == [[i < n for i in range(Tk)] for n in lengths.tolist()]
    refuses(masks.causal_mask, 0)
    refuses(masks.causal_mask, Tq, float(Tk))
    refuses(masks.padding_mask, lengths + Tk + 1, Tk)
    refuses(masks.padding_mask, lengths.double(), Tk)
    refuses(masks.padding_mask, lengths[:, None], Tk)
