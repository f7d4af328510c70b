"""seqlearn.associative: soft lookup against a loop, its gradients, and the hard limit;
the defaults and the wording of each error; properties at random sizes; the hard lookup
on float16 overflow and NaN."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, strategies as st

from properties import covers, not_reals, randn, refuses, seeds, sizes
from seqlearn import associative
from seqlearn.associative import hard_lookup, soft_lookup


F64 = torch.float64


def test_soft_lookup_equals_a_loop_and_respects_the_mask():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(3, 4, dtype=F64, generator=g)
    keys = torch.randn(3, 5, 4, dtype=F64, generator=g)
    values = torch.randn(3, 5, 2, dtype=F64, generator=g)
    mask = torch.tensor([[1, 1, 1, 1, 1], [1, 0, 1, 0, 0], [0, 0, 0, 0, 0]], dtype=torch.bool)
    s, c = soft_lookup(x, keys, values, temperature=0.7, mask=mask)
    for b in range(3):
        allowed = [i for i in range(5) if mask[b, i]]
        if not allowed:
            assert torch.count_nonzero(c[b]) == 0 and torch.count_nonzero(s[b]) == 0
            continue
        scores = torch.stack([keys[b, i] @ x[b] / 0.7 for i in allowed])
        weights = torch.exp(scores) / torch.exp(scores).sum()
        torch.testing.assert_close(c[b, allowed], weights)
        torch.testing.assert_close(s[b], sum(w * values[b, i] for w, i in zip(weights, allowed)))


def test_gradients_reach_the_address_keys_and_values():
    g = torch.Generator().manual_seed(1)
    x, keys, values = (torch.randn(*shape, dtype=F64, generator=g, requires_grad=True)
                       for shape in [(2, 3), (2, 4, 3), (2, 4, 5)])
    assert torch.autograd.gradcheck(
        lambda a, k, v: soft_lookup(a, k, v, temperature=0.5)[0], (x, keys, values))


def test_hard_lookup_is_the_zero_temperature_limit():
    g = torch.Generator().manual_seed(2)
    x = torch.randn(4, 3, dtype=F64, generator=g)
    keys = torch.randn(4, 6, 3, dtype=F64, generator=g)
    values = torch.randn(4, 6, 2, dtype=F64, generator=g)
    s_hard, c_hard = hard_lookup(x, keys, values)
    best = (keys @ x[..., None])[..., 0].argmax(-1)
    torch.testing.assert_close(s_hard, values[torch.arange(4), best])
    s_cold, c_cold = soft_lookup(x, keys, values, temperature=1e-4)
    torch.testing.assert_close(c_cold, c_hard)
    torch.testing.assert_close(s_cold, s_hard)
    # ties share the weight equally, as the limit of the softmax does
    tied = torch.tensor([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]], dtype=F64)
    s, c = hard_lookup(torch.tensor([1.0, 0.0], dtype=F64), tied, torch.eye(3, dtype=F64))
    torch.testing.assert_close(c, torch.tensor([0.5, 0.5, 0.0], dtype=F64))
    torch.testing.assert_close(soft_lookup(torch.tensor([1.0, 0.0], dtype=F64), tied,
                                           torch.eye(3, dtype=F64), temperature=1e-3)[1], c)
    # masked slots are never read, and an empty memory reads zero
    mask = torch.tensor([False, True, True])
    assert hard_lookup(torch.tensor([1.0, 0.0], dtype=F64), tied, torch.eye(3, dtype=F64),
                       mask=mask)[1].tolist() == [0.0, 1.0, 0.0]
    s, c = hard_lookup(torch.tensor([1.0, 0.0], dtype=F64), tied, torch.eye(3, dtype=F64),
                       mask=torch.zeros(3, dtype=torch.bool))
    assert torch.count_nonzero(s) == 0 and torch.count_nonzero(c) == 0


def test_refusals():
    x, keys, values = torch.zeros(3), torch.zeros(4, 3), torch.zeros(4, 2)
    with pytest.raises(ValueError, match="temperature must be positive"):
        soft_lookup(x, keys, values, temperature=0.0)
    with pytest.raises(TypeError, match="temperature must be a real number"):
        soft_lookup(x, keys, values, temperature="1")
    with pytest.raises(ValueError, match="keys must have shape"):
        soft_lookup(x, torch.zeros(4, 2), values)
    with pytest.raises(ValueError, match="values must have shape"):
        hard_lookup(x, keys, torch.zeros(5, 2))
    with pytest.raises(TypeError, match="same dtype"):
        soft_lookup(x.double(), keys, values)
    with pytest.raises(TypeError, match="mask must be a bool"):
        soft_lookup(x, keys, values, mask=torch.ones(4))
    with pytest.raises(ValueError, match="mask must have shape"):
        hard_lookup(x, keys, values, mask=torch.ones(5, dtype=torch.bool))
    with pytest.raises(TypeError, match="x must be a torch.Tensor"):
        soft_lookup([0.0, 0.0, 0.0], keys, values)


# ---------- defaults, leading dimensions and the exact wording of each validation error


# Py.


def memory(lead=(), N=4, d=3, dv=2, seed=0):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(*lead, d, generator=g, dtype=F64),
            torch.randn(*lead, N, d, generator=g, dtype=F64),
            torch.randn(*lead, N, dv, generator=g, dtype=F64))


def test_soft_lookup_temperature_defaults_to_1():
    x, keys, values = memory()
    s, c = soft_lookup(x, keys, values)
    want = torch.softmax(keys @ x, 0)
    torch.testing.assert_close(c, want, rtol=1e-12, atol=0)
    torch.testing.assert_close(s, want @ values, rtol=1e-12, atol=0)
    s2, c2 = soft_lookup(x, keys, values, temperature=2.0)
    torch.testing.assert_close(c2, torch.softmax(keys @ x / 2.0, 0), rtol=1e-12, atol=0)


@pytest.mark.parametrize("lookup", [soft_lookup, hard_lookup])
def test_lookups_with_two_leading_dimensions_and_a_mask(lookup):
    x, keys, values = memory((2, 3), N=5)
    mask = torch.rand(2, 3, 5, generator=torch.Generator().manual_seed(1)) < 0.6
    mask[0, 0] = False  # a memory with no readable slot
    s, c = lookup(x, keys, values, mask=mask)
    assert s.shape == (2, 3, 2) and c.shape == (2, 3, 5)
    for a in range(2):
        for b in range(3):
            s1, c1 = lookup(x[a, b], keys[a, b], values[a, b], mask=mask[a, b])
            torch.testing.assert_close(c[a, b], c1, rtol=1e-12, atol=0)
            torch.testing.assert_close(s[a, b], s1, rtol=1e-12, atol=0)
    assert not c[0, 0].any() and not s[0, 0].any()
    assert not c.masked_select(~mask).any()


def test_hard_lookup_keeps_the_dtype_and_shares_ties():
    keys = torch.tensor([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    values = torch.tensor([[2.0], [4.0], [8.0]])
    s, c = hard_lookup(torch.tensor([1.0, 0.0]), keys, values)
    assert c.dtype == s.dtype == torch.float32
    assert c.tolist() == [0.5, 0.5, 0.0] and s.tolist() == [3.0]


@pytest.mark.parametrize("call, error, match", [
    (lambda x, k, v: soft_lookup(x, k.float(), v), TypeError,
     r"^x and keys must have the same dtype, got torch\.float64 and torch\.float32$"),
    (lambda x, k, v: soft_lookup(x, k, v.float()), TypeError,
     r"^keys and values must have the same dtype, got torch\.float64 and torch\.float32$"),
    (lambda x, k, v: hard_lookup(x, k.tolist(), v), TypeError,
     r"^keys must be a torch\.Tensor, got list$"),
    (lambda x, k, v: hard_lookup(x, k, v.long()), TypeError,
     r"^values must be a floating-point tensor"),
    (lambda x, k, v: soft_lookup(x.long(), k, v), TypeError,
     r"^x must be a floating-point tensor"),
    (lambda x, k, v: soft_lookup(x[0], k, v), ValueError,
     r"^x must have shape \(\.\.\., d\), got \(\)$"),
    (lambda x, k, v: soft_lookup(x[:2], k, v), ValueError,
     r"^keys must have shape \(\.\.\., N, d=2\), got \(4, 3\) \(d as in x\)$"),
    (lambda x, k, v: soft_lookup(x, k, v[:3]), ValueError,
     r"^values must have shape \(\.\.\., N=4, dv\), got \(3, 2\) \(N as in keys\)$"),
    (lambda x, k, v: soft_lookup(x, k, v[None]), ValueError,
     r"^values must have the leading \(batch\) dimensions \(\) of x"),
    (lambda x, k, v: soft_lookup(x, k, v, mask=torch.ones(4)), TypeError,
     r"^mask must be a bool tensor \(True = a slot that may be read\), got torch\.float32$"),
    (lambda x, k, v: hard_lookup(x, k, v, mask=[True] * 4), TypeError,
     r"^mask must be a bool tensor \(True = a slot that may be read\), got list$"),
    (lambda x, k, v: hard_lookup(x, k, v, mask=torch.ones(3, dtype=torch.bool)), ValueError,
     r"^mask must have shape \(\.\.\., N=4\), got \(3,\)$"),
    (lambda x, k, v: hard_lookup(x, k, v, mask=torch.ones(2, 4, dtype=torch.bool)), ValueError,
     r"^mask must have the leading \(batch\) dimensions \(\)"),
    (lambda x, k, v: soft_lookup(x, k, v, temperature=0.0), ValueError,
     r"^temperature must be positive, got 0\.0$"),
    (lambda x, k, v: soft_lookup(x, k, v, temperature=True), TypeError,
     r"^temperature must be a real number, got bool$"),
])
def test_associative_error_messages(call, error, match):
    with pytest.raises(error, match=match):
        call(*memory())


# ---------------------------------------------- properties at random sizes (hypothesis)


@covers("seqlearn.associative.soft_lookup", "seqlearn.associative.hard_lookup")
@given(seed=seeds, B=sizes, N=sizes, d=sizes, dv=sizes,
       temperature=st.floats(0.05, 5.0), bad=not_reals)
def test_lookups_equal_softmax_and_argmax_references(seed, B, N, d, dv, temperature, bad):
    x, keys, values = randn(seed, B, d), randn(seed + 1, B, N, d), randn(seed + 2, B, N, dv)
    s, c = associative.soft_lookup(x, keys, values, temperature=temperature)
    scores = torch.einsum("bnd,bd->bn", keys, x)
    ref = torch.softmax(scores / temperature, -1)
    torch.testing.assert_close(c, ref)
    torch.testing.assert_close(s, torch.einsum("bn,bnv->bv", ref, values))
    s_hard, c_hard = associative.hard_lookup(x, keys, values)
    best = scores.argmax(-1)  # ties have probability 0 for Gaussian draws
    torch.testing.assert_close(c_hard, torch.nn.functional.one_hot(best, N).to(F64))
    torch.testing.assert_close(s_hard, values[torch.arange(B), best])
    refuses(associative.soft_lookup, x, keys, values, temperature=bad)
    refuses(associative.soft_lookup, x, keys, values, temperature=-temperature)
    refuses(associative.hard_lookup, x, keys[..., :0, :].transpose(-1, -2), values)
    refuses(associative.hard_lookup, x, keys, values, mask=torch.ones(B, N))


# ---------------------------- edge cases: sizes 0, reduced precision, non-finite values


def test_hard_lookup_reads_the_largest_score_in_float16_and_propagates_nan():
    x = torch.tensor(
        [300.0, 300.0], dtype=torch.float16
    )  # k . x = 60000 + 60000 > 65504
    keys = torch.tensor([[100.0, 100.0], [1.0, 1.0]], dtype=torch.float16)
    values = torch.tensor([[1.0], [2.0]], dtype=torch.float16)
    s, c = associative.hard_lookup(x, keys, values)
    assert c.tolist() == [1.0, 0.0] and s.tolist() == [1.0]
    s, c = associative.hard_lookup(x, keys, values, mask=torch.tensor([False, True]))
    assert c.tolist() == [0.0, 1.0] and s.tolist() == [2.0]
    s, c = associative.hard_lookup(
        torch.tensor([math.nan, 1.0]), keys.float(), values.float()
    )
    assert bool(s.isnan().all()) and bool(c.isnan().all())
