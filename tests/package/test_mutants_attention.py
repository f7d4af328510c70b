"""seqlearn.attention: defaults, devices and the exact wording of each validation error.

These tests close the gaps that mutation testing (``tools/mutation.py package``) found in
test_attention.py: a default argument that may not change, a tensor that must be built on the
inputs' device (checked with PyTorch's data-less ``meta`` device, so no GPU is needed), and
error messages that must name the argument and what it got.
"""

from __future__ import annotations

import pytest
import torch

from seqlearn.attention import (MultiHeadAttention, attend, causal_mask, masked_softmax,
                                padding_mask)

F64 = dict(dtype=torch.float64)


def scores_and_values(Tq=3, Tk=3, dv=2, seed=0):
    gen = torch.Generator().manual_seed(seed)
    return (torch.randn(2, Tq, Tk, generator=gen, **F64),
            torch.randn(2, Tk, dv, generator=gen, **F64))


# --- defaults ---------------------------------------------------------------------------------

def test_attend_is_not_causal_by_default():
    scores, v = scores_and_values()
    out, weights = attend(scores, v)
    torch.testing.assert_close(weights, torch.softmax(scores, dim=-1), rtol=1e-12, atol=0)
    torch.testing.assert_close(out, torch.softmax(scores, dim=-1) @ v, rtol=1e-12, atol=0)
    assert bool((weights[:, 0, 1:] > 0).all())  # the first query sees later keys


# --- devices (meta tensors carry shapes and devices but no data) --------------------------------

def test_causal_mask_is_built_on_the_requested_device():
    assert causal_mask(3, 4, device="meta").device.type == "meta"
    assert causal_mask(3, 4, device="meta").shape == (3, 4)


def test_attend_builds_its_causal_mask_on_the_scores_device():
    scores = torch.randn(2, 3, 3, device="meta")
    v = torch.randn(2, 3, 4, device="meta")
    out, weights = attend(scores, v, causal=True)  # a CPU mask would raise here
    assert out.device.type == weights.device.type == "meta"
    assert out.shape == (2, 3, 4) and weights.shape == (2, 3, 3)


def test_mha_from_torch_copies_onto_the_device_of_the_torch_module():
    ref = torch.nn.MultiheadAttention(4, 2, batch_first=True, device="meta")
    ours = MultiHeadAttention.from_torch(ref)  # copying meta weights into CPU ones would raise
    assert {p.device.type for p in ours.parameters()} == {"meta"}


# --- validation messages name the argument and what it got -------------------------------------

@pytest.mark.parametrize("call, error, match", [
    # _check_mask: the type it got, in the words of the rule
    (lambda s, v: masked_softmax(s, torch.ones(3, 3)), TypeError,
     r"^mask must be a bool tensor \(True = may attend\), got torch\.float32$"),
    (lambda s, v: masked_softmax(s, [[True] * 3] * 3), TypeError,
     r"^mask must be a bool tensor \(True = may attend\), got list$"),
    # attend: v and the scores are named
    (lambda s, v: attend(s, v.float()), TypeError,
     r"^scores and v must have the same dtype, got torch\.float64 and torch\.float32$"),
    (lambda s, v: attend(s, v.long()), TypeError, r"^v must be a floating-point tensor"),
    (lambda s, v: attend(s, v.tolist()), TypeError, r"^v must be a torch\.Tensor, got list$"),
    (lambda s, v: attend(s[0, 0], v), ValueError,
     r"^scores must have shape \(\.\.\., Tq, Tk\), got \(3,\)$"),
    (lambda s, v: attend(s, v[:, :2]), ValueError, r"^v must have shape \(\.\.\., Tk=3, dv\)"),
    (lambda s, v: attend(s, v, causal="yes"), TypeError, r"^causal must be a bool"),
    # masked_softmax
    (lambda s, v: masked_softmax(s[0, 0]), ValueError,
     r"^scores must have shape \(\.\.\., Tq, Tk\), got \(3,\)$"),
    (lambda s, v: masked_softmax(s.tolist()), TypeError, r"^scores must be a torch\.Tensor"),
    # causal_mask names Tq and Tk
    (lambda s, v: causal_mask(2.0), TypeError, r"^Tq must be an int"),
    (lambda s, v: causal_mask(3, 0), ValueError, r"^Tk must be positive"),
])
def test_attention_error_messages(call, error, match):
    scores, v = scores_and_values()
    with pytest.raises(error, match=match):
        call(scores, v)


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


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(bias=1), TypeError, r"^bias must be a bool, got int 1$"),
    (dict(kdim=0), ValueError, r"^kdim must be positive"),
    (dict(kdim=2.0), TypeError, r"^kdim must be an int"),
    (dict(vdim=0), ValueError, r"^vdim must be positive"),
    (dict(vdim=2.0), TypeError, r"^vdim must be an int"),
])
def test_mha_constructor_error_messages(kwargs, error, match):
    with pytest.raises(error, match=match):
        MultiHeadAttention(8, 2, **kwargs)
