"""seqlearn.associative: defaults, leading dimensions and the exact wording of each validation
error.

These tests close the gaps that mutation testing (``tools/mutation.py package``) found in
test_associative.py.
"""

from __future__ import annotations

import pytest
import torch

from seqlearn.associative import hard_lookup, soft_lookup

F64 = torch.float64


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
