"""seqlearn.attention against brute-force loops, torch.nn.MultiheadAttention and its own
rules; defaults, devices and the wording of each error; properties at random sizes;
sizes 0 and reduced precision (float16 and bfloat16 against torch's SDPA)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings, strategies as st
from torch import nn

from properties import covers, not_bools, numpy_of, randn, refuses, seeds, sizes
from seqlearn import (attention as att, causal, complexity, local_attention,
                      online_softmax, scores)
from seqlearn.attention import (MultiHeadAttention, attend, attention, causal_mask,
                                masked_softmax, padding_mask)


F64 = dict(dtype=torch.float64)
TIGHT = dict(rtol=1e-10, atol=1e-12)


def loop_attention(q, k, v, allowed, scale):
    """Reference: explicit loops over batch rows, queries t and keys i (NumPy, float64)."""
    q, k, v = (x.detach().numpy().reshape(-1, *x.shape[-2:]) for x in (q, k, v))
    allowed = allowed.numpy().reshape(q.shape[0], q.shape[1], k.shape[1])
    out = np.zeros((q.shape[0], q.shape[1], v.shape[-1]))
    weights = np.zeros((q.shape[0], q.shape[1], k.shape[1]))
    for b in range(q.shape[0]):
        for t in range(q.shape[1]):
            keys = [i for i in range(k.shape[1]) if allowed[b, t, i]]
            if not keys:
                continue  # no allowed key: weights 0, output 0
            e = {i: scale * sum(q[b, t, j] * k[b, i, j] for j in range(q.shape[2])) for i in keys}
            top = max(e.values())
            z = sum(math.exp(e[i] - top) for i in keys)
            for i in keys:
                weights[b, t, i] = math.exp(e[i] - top) / z
                out[b, t] += weights[b, t, i] * v[b, i]
    return torch.from_numpy(out), torch.from_numpy(weights)


def random_qkv(gen, lead, Tq, Tk, d, dv, requires_grad=False):
    q = torch.randn(*lead, Tq, d, generator=gen, **F64)
    k = torch.randn(*lead, Tk, d, generator=gen, **F64)
    v = torch.randn(*lead, Tk, dv, generator=gen, **F64)
    return [x.requires_grad_(requires_grad) for x in (q, k, v)]


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), lead=st.lists(st.integers(1, 3), max_size=2),
       Tq=st.integers(1, 6), Tk=st.integers(1, 6), d=st.integers(1, 5), dv=st.integers(1, 4),
       use_mask=st.booleans(), causal=st.booleans(), scale=st.sampled_from([None, 0.0, 0.3, -2.0]))
def test_attention_equals_loop(seed, lead, Tq, Tk, d, dv, use_mask, causal, scale):
    gen = torch.Generator().manual_seed(seed)
    q, k, v = random_qkv(gen, lead, Tq, Tk, d, dv)
    mask = torch.rand(*lead, Tq, Tk, generator=gen) < 0.6 if use_mask else None
    out, weights = attention(q, k, v, mask=mask, causal=causal, scale=scale)
    allowed = torch.ones(*lead, Tq, Tk, dtype=torch.bool) if mask is None else mask
    if causal:  # key i visible to query t iff i <= t + (Tk - Tq), written out element by element
        allowed = allowed & torch.tensor([[i <= t + Tk - Tq for i in range(Tk)] for t in range(Tq)])
    ref_out, ref_w = loop_attention(q, k, v, allowed, 1 / math.sqrt(d) if scale is None else scale)
    torch.testing.assert_close(out.reshape(-1, Tq, dv), ref_out, **TIGHT)
    torch.testing.assert_close(weights.reshape(-1, Tq, Tk), ref_w, **TIGHT)


def test_mask_semantics_true_means_may_attend():
    gen = torch.Generator().manual_seed(0)
    q, k, v = random_qkv(gen, (2,), 4, 5, 3, 2)
    mask = torch.rand(2, 4, 5, generator=gen) < 0.5
    mask[:, :, 0] = True  # every row has an allowed key
    _, weights = attention(q, k, v, mask=mask)
    assert bool((weights[~mask] == 0).all())
    assert bool((weights[mask] > 0).all())
    torch.testing.assert_close(weights.sum(-1), torch.ones(2, 4, **F64), **TIGHT)


def test_mask_broadcasts_key_padding_and_shared_patterns():
    gen = torch.Generator().manual_seed(1)
    q, k, v = random_qkv(gen, (3,), 4, 6, 5, 2)
    keep = padding_mask(torch.tensor([6, 2, 4]), 6)  # (B, Tk)
    out, weights = attention(q, k, v, mask=keep[:, None, :])  # (B, 1, Tk) broadcasts over Tq
    full = keep[:, None, :].expand(3, 4, 6)
    torch.testing.assert_close(out, attention(q, k, v, mask=full)[0], **TIGHT)
    for b, n in enumerate([6, 2, 4]):  # padding is ignored: equal to attention on the prefix
        ref, ref_w = attention(q[b], k[b, :n], v[b, :n])
        torch.testing.assert_close(out[b], ref, **TIGHT)
        torch.testing.assert_close(weights[b, :, :n], ref_w, **TIGHT)
    pattern = torch.rand(4, 6, generator=gen) < 0.7  # one (Tq, Tk) pattern for the whole batch
    torch.testing.assert_close(attention(q, k, v, mask=pattern)[0],
                               attention(q, k, v, mask=pattern.expand(3, 4, 6))[0], **TIGHT)


def test_fully_masked_rows_give_zeros_without_nan_forward_and_backward():
    gen = torch.Generator().manual_seed(2)
    q, k, v = random_qkv(gen, (2,), 4, 3, 3, 2, requires_grad=True)
    mask = torch.rand(2, 4, 3, generator=gen) < 0.5
    mask[0, 1] = False
    mask[1, 3] = False
    mask[:, 0] = True
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "Anomaly Detection has been enabled")
        with torch.autograd.detect_anomaly():  # raises if any backward step computes a NaN
            out, weights = attention(q, k, v, mask=mask)
            (out.square().sum() + weights.square().sum()).backward()
    assert bool((out[0, 1] == 0).all()) and bool((out[1, 3] == 0).all())
    assert bool((weights[0, 1] == 0).all()) and bool((weights[1, 3] == 0).all())
    for x in (q, k, v):
        assert bool(torch.isfinite(x.grad).all())
    assert bool((q.grad[0, 1] == 0).all()) and bool((q.grad[1, 3] == 0).all())


def test_all_keys_masked_everywhere():
    gen = torch.Generator().manual_seed(3)
    q, k, v = random_qkv(gen, (), 3, 4, 2, 2, requires_grad=True)
    out, weights = attention(q, k, v, mask=torch.zeros(3, 4, dtype=torch.bool))
    assert not out.any() and not weights.any()
    out.sum().backward()
    assert all(bool((x.grad == 0).all()) for x in (q, k, v))


def test_gradients_equal_finite_differences():
    gen = torch.Generator().manual_seed(4)
    q, k, v = random_qkv(gen, (2,), 3, 4, 2, 2, requires_grad=True)
    mask = torch.rand(2, 3, 4, generator=gen) < 0.6
    mask[0, 2] = False  # an empty row inside the numerical gradient check
    assert torch.autograd.gradcheck(lambda q, k, v: attention(q, k, v, mask=mask), (q, k, v))
    assert torch.autograd.gradcheck(lambda q, k, v: attention(q, k, v, causal=True), (q, k, v),
                                    fast_mode=True)


def test_causal_equals_explicit_lower_triangular_mask():
    gen = torch.Generator().manual_seed(5)
    q, k, v = random_qkv(gen, (2, 3), 6, 6, 4, 3)
    tril = torch.tril(torch.ones(6, 6, dtype=torch.bool))
    for got, ref in zip(attention(q, k, v, causal=True), attention(q, k, v, mask=tril)):
        torch.testing.assert_close(got, ref, **TIGHT)
    assert torch.equal(causal_mask(6), tril)
    ref = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
    torch.testing.assert_close(attention(q, k, v, causal=True)[0], ref, **TIGHT)


def test_causal_and_mask_intersect():
    gen = torch.Generator().manual_seed(6)
    q, k, v = random_qkv(gen, (2,), 5, 5, 3, 2)
    mask = torch.rand(2, 5, 5, generator=gen) < 0.5
    for got, ref in zip(attention(q, k, v, mask=mask, causal=True),
                        attention(q, k, v, mask=mask & causal_mask(5))):
        torch.testing.assert_close(got, ref, **TIGHT)


def test_scale_default_is_one_over_sqrt_d():
    gen = torch.Generator().manual_seed(8)
    q, k, v = random_qkv(gen, (2,), 3, 4, 7, 2)
    for got, ref in zip(attention(q, k, v), attention(q, k, v, scale=1 / math.sqrt(7))):
        torch.testing.assert_close(got, ref, **TIGHT)
    torch.testing.assert_close(attention(q, k, v)[0],
                               torch.nn.functional.scaled_dot_product_attention(q, k, v), **TIGHT)
    _, uniform = attention(q, k, v, scale=0)
    torch.testing.assert_close(uniform, torch.full((2, 3, 4), 0.25, **F64), **TIGHT)


def test_masked_softmax_matches_plain_softmax_on_allowed_entries():
    gen = torch.Generator().manual_seed(9)
    scores = torch.randn(3, 4, 5, generator=gen, **F64)
    torch.testing.assert_close(masked_softmax(scores), torch.softmax(scores, -1), **TIGHT)
    mask = torch.rand(3, 4, 5, generator=gen) < 0.5
    mask[..., 2] = True
    ref = torch.softmax(scores.masked_fill(~mask, -math.inf), -1)
    torch.testing.assert_close(masked_softmax(scores, mask), ref, **TIGHT)


def test_attend_accepts_any_scores():
    gen = torch.Generator().manual_seed(10)
    q, k, v = random_qkv(gen, (2,), 3, 4, 5, 2)
    for got, ref in zip(attend(q @ k.transpose(-2, -1), v, causal=True),
                        attention(q, k, v, causal=True, scale=1.0)):
        torch.testing.assert_close(got, ref, **TIGHT)


@pytest.mark.parametrize("call, error, match", [
    (lambda q, k, v: attention(q.long(), k, v), TypeError, "q must be a floating-point"),
    (lambda q, k, v: attention(q.float(), k, v), TypeError, "same dtype"),
    (lambda q, k, v: attention(q, k.double(), v.float()), TypeError, "same dtype"),
    (lambda q, k, v: attention(q[..., :2], k, v), ValueError, r"k must have shape \(\.\.\., Tk, dq=2\), got .* \(dq as in q\)"),
    (lambda q, k, v: attention(q[0, 0], k, v), ValueError, "q must have shape"),
    (lambda q, k, v: attention(q[:1], k, v), ValueError, "leading"),
    (lambda q, k, v: attention(q, k, v[:, :2]), ValueError, r"v must have shape \(\.\.\., Tk=4, dv\)"),
    (lambda q, k, v: attention(q, k, v[:1]), ValueError, "leading"),
    (lambda q, k, v: attention(q, k, v, mask=torch.ones(3, 4)), TypeError, "bool tensor"),
    (lambda q, k, v: attention(q, k, v, mask=np.ones((3, 4), bool)), TypeError, "bool tensor"),
    (lambda q, k, v: attention(q, k, v, mask=torch.ones(4, 3).bool()), ValueError,
     r"mask of shape \(4, 3\) does not broadcast to .* \(2, 3, 4\)"),
    (lambda q, k, v: attention(q, k, v, mask=torch.ones(5, 2, 3, 4).bool()), ValueError,
     "does not broadcast"),
    (lambda q, k, v: attention(q, k, v, causal=1), TypeError, "causal must be a bool"),
    (lambda q, k, v: attention(q, k, v, scale="1"), TypeError, "scale must be a real number"),
    (lambda q, k, v: attention(q, k, v, scale=math.inf), ValueError, "scale must be a finite number"),
    (lambda q, k, v: masked_softmax(q.long()), TypeError, "scores must be a floating-point"),
    (lambda q, k, v: attend(q @ k.transpose(-2, -1), v.float()), TypeError, "same dtype"),
    (lambda q, k, v: causal_mask(0), ValueError, "Tq must be positive"),
    (lambda q, k, v: causal_mask(3, 2.0), TypeError, "Tk must be an int"),
    (lambda q, k, v: padding_mask(torch.tensor([1.0]), 3), TypeError, "integer tensor"),
    (lambda q, k, v: padding_mask(torch.tensor([4]), 3), ValueError, r"\[0, T=3\]"),
    (lambda q, k, v: padding_mask(torch.tensor([[1]]), 3), ValueError, "lengths must have shape"),
])
def test_attention_validation(call, error, match):
    gen = torch.Generator().manual_seed(11)
    q, k, v = random_qkv(gen, (2,), 3, 4, 5, 2)
    with pytest.raises(error, match=match):
        call(q, k, v)


# ---------------------------------------------------------------------------------------------
# MultiHeadAttention against torch.nn.MultiheadAttention


def torch_pair(d_model, heads, bias=True, kdim=None, vdim=None, seed=0):
    torch.manual_seed(seed)
    ref = torch.nn.MultiheadAttention(d_model, heads, bias=bias, kdim=kdim, vdim=vdim,
                                      batch_first=True, **F64)
    if bias:  # torch initialises the biases to zero: make them visible
        with torch.no_grad():
            ref.in_proj_bias.normal_()
            ref.out_proj.bias.normal_()
    return ref, MultiHeadAttention.from_torch(ref)


def compare_with_torch(ref, ours, query, key, value, mask=None, causal=False, torch_kwargs=None):
    inputs = [x.detach().clone().requires_grad_() for x in (query, key, value)]
    mine = [x.detach().clone().requires_grad_() for x in (query, key, value)]
    out_ref, w_ref = ref(*inputs, need_weights=True, average_attn_weights=False, **(torch_kwargs or {}))
    out, w = ours(*mine, mask=mask, causal=causal)
    torch.testing.assert_close(out, out_ref, **TIGHT)
    torch.testing.assert_close(w, w_ref, **TIGHT)
    gen = torch.Generator().manual_seed(99)
    cotangent = torch.randn(out.shape, generator=gen, **F64)
    (out_ref * cotangent).sum().backward()
    (out * cotangent).sum().backward()
    for a, b in zip(mine, inputs):
        torch.testing.assert_close(a.grad, b.grad, **TIGHT)
    for (name, p), p_ref in zip(ours.named_parameters(), _torch_grads(ref, bias=ours.q_proj.bias is not None)):
        torch.testing.assert_close(p.grad, p_ref, **TIGHT, msg=name)


def _torch_grads(ref, bias):
    """torch's parameter gradients in our order: q, k, v, out (weight, then bias)."""
    if ref._qkv_same_embed_dim:
        w = ref.in_proj_weight.grad.chunk(3)
    else:
        w = [getattr(ref, f"{n}_proj_weight").grad for n in "qkv"]
    b = ref.in_proj_bias.grad.chunk(3) if bias else [None] * 3
    grads = []
    for w_n, b_n in zip(w, b):
        grads += [w_n] + ([b_n] if bias else [])
    return grads + [ref.out_proj.weight.grad] + ([ref.out_proj.bias.grad] if bias else [])


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("d_model, heads, B, Tq, Tk", [(8, 2, 3, 5, 5), (12, 3, 2, 4, 6), (6, 6, 1, 3, 2)])
def test_mha_equals_torch_self_and_cross(bias, d_model, heads, B, Tq, Tk):
    ref, ours = torch_pair(d_model, heads, bias=bias, seed=d_model + heads)
    gen = torch.Generator().manual_seed(12)
    x = torch.randn(B, Tq, d_model, generator=gen, **F64)
    memory = torch.randn(B, Tk, d_model, generator=gen, **F64)
    compare_with_torch(ref, ours, x, x, x)  # self-attention
    ours.zero_grad()
    ref.zero_grad()
    compare_with_torch(ref, ours, x, memory, memory)  # cross-attention


@pytest.mark.parametrize("bias", [True, False])
def test_mha_equals_torch_with_other_key_and_value_widths(bias):
    ref, ours = torch_pair(8, 4, bias=bias, kdim=5, vdim=3, seed=1)
    gen = torch.Generator().manual_seed(13)
    q = torch.randn(2, 4, 8, generator=gen, **F64)
    compare_with_torch(ref, ours, q, torch.randn(2, 6, 5, generator=gen, **F64),
                       torch.randn(2, 6, 3, generator=gen, **F64))


@pytest.mark.parametrize("bias", [True, False])
def test_mha_equals_torch_causal(bias):
    ref, ours = torch_pair(8, 2, bias=bias, seed=2)
    x = torch.randn(3, 6, 8, generator=torch.Generator().manual_seed(14), **F64)
    blocked = ~causal_mask(6)  # torch: True = NOT allowed
    compare_with_torch(ref, ours, x, x, x, causal=True, torch_kwargs=dict(attn_mask=blocked))


@pytest.mark.parametrize("bias", [True, False])
def test_mha_equals_torch_key_padding_and_attn_mask(bias):
    ref, ours = torch_pair(8, 2, bias=bias, seed=3)
    gen = torch.Generator().manual_seed(15)
    x = torch.randn(3, 5, 8, generator=gen, **F64)
    memory = torch.randn(3, 7, 8, generator=gen, **F64)
    keep = padding_mask(torch.tensor([7, 3, 5]), 7)  # (B, Tk), True = real key
    compare_with_torch(ref, ours, x, memory, memory, mask=keep[:, None, None, :],
                       torch_kwargs=dict(key_padding_mask=~keep))
    ours.zero_grad()
    ref.zero_grad()
    pattern = torch.rand(5, 7, generator=gen) < 0.6
    pattern[:, 0] = True
    compare_with_torch(ref, ours, x, memory, memory, mask=pattern & keep[:, None, None, :],
                       torch_kwargs=dict(attn_mask=~pattern, key_padding_mask=~keep))


def test_mha_per_sequence_mask_equals_torch_per_head_mask():
    """A (B, Tq, Tk) mask is shared by the heads; torch takes it repeated as (B * heads, Tq, Tk)."""
    ref, ours = torch_pair(8, 2, bias=True, seed=4)
    gen = torch.Generator().manual_seed(16)
    x = torch.randn(3, 5, 8, generator=gen, **F64)
    allowed = torch.rand(3, 5, 5, generator=gen) < 0.5
    allowed[..., 0] = True
    compare_with_torch(ref, ours, x, x, x, mask=allowed,
                       torch_kwargs=dict(attn_mask=~allowed.repeat_interleave(2, dim=0)))


def test_mha_from_torch_ignores_dropout_in_eval_and_keeps_dtype():
    torch.manual_seed(4)
    ref = torch.nn.MultiheadAttention(8, 2, dropout=0.5, batch_first=True).eval()
    ours = MultiHeadAttention.from_torch(ref)
    assert ours.q_proj.weight.dtype == torch.float32
    x = torch.randn(2, 3, 8)
    out_ref, w_ref = ref(x, x, x, average_attn_weights=False)
    out, w = ours(x, x, x)
    torch.testing.assert_close(out, out_ref)
    torch.testing.assert_close(w, w_ref)


def test_mha_fully_masked_query_gives_output_bias_not_nan():
    _, ours = torch_pair(8, 2, seed=5)
    x = torch.randn(2, 3, 8, generator=torch.Generator().manual_seed(16), **F64, requires_grad=True)
    mask = torch.ones(3, 3, dtype=torch.bool)
    mask[1] = False
    out, w = ours(x, x, x, mask=mask)
    torch.testing.assert_close(out[:, 1], ours.out_proj.bias.expand(2, 8).detach(), **TIGHT)
    assert not w[:, :, 1].any()
    out.sum().backward()
    assert bool(torch.isfinite(x.grad).all())


def test_mha_heads_are_single_head_attention_on_slices():
    _, ours = torch_pair(6, 3, seed=6)
    x = torch.randn(2, 4, 6, generator=torch.Generator().manual_seed(17), **F64)
    _, w = ours(x, x, x)
    q, k = ours.q_proj(x), ours.k_proj(x)
    for n in range(3):
        sl = slice(2 * n, 2 * n + 2)
        torch.testing.assert_close(w[:, n], attention(q[..., sl], k[..., sl], k[..., sl])[1], **TIGHT)


@pytest.mark.parametrize("args, error, match", [
    ((8, 3), ValueError, "d_model=8 must be divisible by num_heads=3"),
    ((8, 0), ValueError, "num_heads must be positive"),
    ((8.0, 2), TypeError, "d_model must be an int"),
])
def test_mha_constructor_validation(args, error, match):
    with pytest.raises(error, match=match):
        MultiHeadAttention(*args)


@pytest.mark.parametrize("call, error, match", [
    (lambda m, x: m(x[..., :4], x, x), ValueError, r"query must have shape \(B, Tq, d_model=8\)"),
    (lambda m, x: m(x, x[:1], x), ValueError, r"key must have shape \(B=2, Tk, kdim=8\)"),
    (lambda m, x: m(x, x, x[:, :2]), ValueError, r"value must have shape \(B=2, Tk=3, vdim=8\)"),
    (lambda m, x: m(x.float(), x, x), TypeError, "query and the module's parameters must have the same dtype"),
    (lambda m, x: m(x, x.long(), x), TypeError, "key must be a floating-point"),
    (lambda m, x: m(x, x, x, mask=torch.ones(1, 3, 3).bool()), ValueError, r"a 3-D mask must have shape \(B=2, Tq=3, Tk=3\)"),
    (lambda m, x: m(x, x, x.long()), TypeError, r"^value must be a floating-point tensor"),
    (lambda m, x: m(x, x, x.float()), TypeError,
     r"^value and the module's parameters must have the same dtype"),
    (lambda m, x: m(x.tolist(), x, x), TypeError, r"^query must be a torch\.Tensor"),
    (lambda m, x: m(x, x, x, mask=torch.ones(3).bool()), ValueError,
     r"^mask must be \(Tq, Tk\), \(B, Tq, Tk\) or 4-D broadcastable to "
     r"\(B, num_heads, Tq, Tk\), e\.g\. \(B, 1, 1, Tk\); got \(3,\)$"),
    (lambda m, x: m(x, x, x, mask=torch.ones(3, 3)), TypeError, "bool tensor"),
    (lambda m, x: m(x, x, x, mask=torch.ones(2, 5, 3, 3).bool()), ValueError, "does not broadcast"),
])
def test_mha_forward_validation(call, error, match):
    m = MultiHeadAttention(8, 2).double()
    x = torch.randn(2, 3, 8, **F64)
    with pytest.raises(error, match=match):
        call(m, x)


@pytest.mark.parametrize("make, error, match", [
    (lambda: torch.nn.Linear(2, 2), TypeError,
     r"^m must be a torch\.nn\.MultiheadAttention, got Linear$"),
    (lambda: torch.nn.MultiheadAttention(4, 2), ValueError,
     r"^m must be built with batch_first=True \(seqlearn is batch first\)$"),
    (lambda: torch.nn.MultiheadAttention(4, 2, add_bias_kv=True, batch_first=True), ValueError,
     r"^add_bias_kv and add_zero_attn are not supported$"),
    (lambda: torch.nn.MultiheadAttention(4, 2, add_zero_attn=True, batch_first=True), ValueError,
     r"^add_bias_kv and add_zero_attn are not supported$"),
])
def test_mha_from_torch_validation(make, error, match):
    with pytest.raises(error, match=match):
        MultiHeadAttention.from_torch(make())


# --------------------- defaults, devices and the exact wording of each validation error


# Py: a default argument that may not change, a tensor that must be built on the inputs'
# device (checked with PyTorch's data-less ``meta`` device, so no GPU is needed), and
# error messages that must name the argument and what it got.


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


# ---------------------------------------------- properties at random sizes (hypothesis)


@covers("seqlearn.attention.attention", "seqlearn.attention.attend",
        "seqlearn.attention.masked_softmax", "seqlearn.masks.causal_mask",
        "seqlearn.masks.padding_mask", "seqlearn.scores.dot_score",
        "seqlearn.scores.scaled_dot_score", "seqlearn.scores.check_query_key",
        "seqlearn.scores.default_scale", "seqlearn.causal.causal_attention_loop")
@given(seed=seeds, B=sizes, Tq=sizes, Tk=sizes, d=sizes, flag=not_bools)
def test_attention_equals_softmax_reference(seed, B, Tq, Tk, d, flag):
    q, k, v = randn(seed, B, Tq, d), randn(seed + 1, B, Tk, d), randn(seed + 2, B, Tk, 2)
    lengths = torch.randint(0, Tk + 1, (B,), generator=torch.Generator().manual_seed(seed))
    mask = att.padding_mask(lengths, Tk)[:, None, :] & att.causal_mask(Tq, Tk)
    out, w = att.attention(q, k, v, mask=mask)
    s = q @ k.transpose(-2, -1) / math.sqrt(d)
    assert scores.default_scale(d) == 1 / math.sqrt(d)
    torch.testing.assert_close(scores.scaled_dot_score(q, k), s)
    torch.testing.assert_close(scores.dot_score(q, k), s * math.sqrt(d))
    ref = torch.softmax(s.masked_fill(~mask, -math.inf), -1).nan_to_num(0.0)
    torch.testing.assert_close(w, ref)
    torch.testing.assert_close(out, ref @ v)
    torch.testing.assert_close(att.masked_softmax(s, mask), ref)
    torch.testing.assert_close(att.attend(s, v, mask=mask)[0], out)
    assert scores.check_query_key(q, k)["Tk"] == Tk
    if Tq == Tk:
        torch.testing.assert_close(causal.causal_attention_loop(q, k, v)[0],
                                   att.attention(q, k, v, causal=True)[0])
    refuses(scores.dot_score, numpy_of(q[0]), numpy_of(k[0]))  # NumPy's transpose differs
    refuses(att.attention, q, k, v, causal=flag)
    refuses(att.attention, q, k, v, mask=mask.double())
    refuses(att.attention, q, k[..., :0, :], v)
    refuses(att.causal_mask, 0)
    refuses(att.padding_mask, lengths + Tk + 1, Tk)


@covers("seqlearn.attention.MultiHeadAttention", "seqlearn.scores.BilinearScore",
        "seqlearn.scores.AdditiveScore", "seqlearn.scores.MLPScore",
        "seqlearn.scores.LocationScore")
@given(seed=seeds, B=sizes, Tq=sizes, Tk=sizes, heads=st.integers(1, 2), flag=not_bools)
def test_score_modules_and_multi_head_attention(seed, B, Tq, Tk, heads, flag):
    torch.manual_seed(seed)
    d = 2 * heads
    ref = nn.MultiheadAttention(d, heads, batch_first=True, dtype=DOUBLE).eval()
    mha = att.MultiHeadAttention.from_torch(ref)
    q, k = randn(seed, B, Tq, d), randn(seed + 1, B, Tk, d)
    out, w = mha(q, k, k)
    out_ref, w_ref = ref(q, k, k, average_attn_weights=False)
    torch.testing.assert_close(out, out_ref)
    torch.testing.assert_close(w, w_ref)
    bil = scores.BilinearScore(d, d).double()
    torch.testing.assert_close(bil(q, k), q @ bil.weight @ k.transpose(-2, -1))
    add = scores.AdditiveScore(d, d, 3).double()
    want = torch.stack([torch.stack([add.w(torch.tanh(add.query(q[:, t]) + add.key(k[:, i])))
                                     .squeeze(-1) for i in range(Tk)], -1) for t in range(Tq)], 1)
    torch.testing.assert_close(add(q, k), want)
    assert scores.MLPScore(d, d).double()(q, k).shape == (B, Tq, Tk)
    assert scores.LocationScore(d, 8).double()(q, k).shape == (B, Tq, Tk)
    refuses(att.MultiHeadAttention, d, heads, bias=flag)
    refuses(scores.AdditiveScore, d, d, 3, bias=flag)
    refuses(scores.MLPScore, d, d, bias=flag)
    refuses(mha, numpy_of(q), k, k)
    refuses(bil, q, randn(seed, B, Tk, d + 1))
    refuses(scores.LocationScore(d, 1).double(), q, randn(seed, B, 2, d))


# ---------------------------- edge cases: sizes 0, reduced precision, non-finite values


DOUBLE = torch.float64


def test_empty_sizes_give_empty_results_or_name_the_argument():
    q = torch.zeros(2, 0, 3, dtype=DOUBLE)
    assert local_attention.restricted_attention(q, q, q, 1).shape == (2, 0, 3)
    z = torch.zeros(2, 3, 0, dtype=DOUBLE)
    with pytest.raises(ValueError, match="d=0 features.*pass scale="):
        att.attention(z, z, torch.zeros(2, 3, 2, dtype=DOUBLE))
    out, w = att.attention(z, z, torch.ones(2, 3, 2, dtype=DOUBLE), scale=1.0)
    torch.testing.assert_close(w, torch.full((2, 3, 3), 1 / 3, dtype=DOUBLE))  # uniform
    empty = torch.zeros(0, 0, dtype=torch.bool)
    with pytest.raises(ValueError, match=r"layers\[0\] must relate T >= 1 positions"):
        complexity.max_path_length([empty])
    with pytest.raises(ValueError, match="within must relate T >= 1 positions"):
        complexity.sequential_steps(empty)


def _errors(dtype, fn, q, k, v):
    """Largest error of ``fn`` in ``dtype`` against float64 attention."""
    reference = F.scaled_dot_product_attention(q, k, v)
    return float(
        (fn(q.to(dtype), k.to(dtype), v.to(dtype)).double() - reference).abs().max()
    )


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("scale", [1.0, 3.0, 40.0])
def test_reduced_precision_attention_is_as_accurate_as_sdpa(dtype, scale):
    gen = torch.Generator().manual_seed(int(scale))
    q, k, v = (torch.randn(2, 2, 48, 32, generator=gen, dtype=DOUBLE) for _ in range(3))
    q = q * scale  # scale 40: float16 scores q . k overflow unless summed in float32
    sdpa = _errors(dtype, F.scaled_dot_product_attention, q, k, v)
    plain = _errors(dtype, lambda q, k, v: att.attention(q, k, v)[0], q, k, v)
    blocked = _errors(
        dtype,
        lambda q, k, v: online_softmax.memory_efficient_attention(
            q, k, v, block_size=16
        ),
        q,
        k,
        v,
    )
    assert math.isfinite(plain) and math.isfinite(blocked)
    assert plain <= 1.5 * sdpa and blocked <= 1.5 * sdpa, (plain, blocked, sdpa)


def test_a_huge_int_scale_is_refused_by_name():
    """float(10**400) overflowed inside check_real, which every real argument goes
    through (issue 31)."""
    q = torch.randn(1, 2, 2, dtype=torch.float64)
    with pytest.raises(
            ValueError, match=r"^scale must be a finite number, got an int too "
                              r"large for a float \(401 digits\)$"):
        attention(q, q, q, scale=10**400)
