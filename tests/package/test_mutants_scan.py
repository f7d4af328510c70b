"""seqlearn.scan: the extended-exponent stage of the blocked scan, defaults and error wording.

These tests close the gaps that mutation testing (``tools/mutation.py package``) found in
test_scan.py: the blocked ("parallel") scan in extended-exponent arithmetic, where the identity
step ``(1, 0)`` pads the last block and starts every block's reduction; ``blocked_scan``'s
default block length; and the argument each error names.
"""

from __future__ import annotations

import pytest
import torch

import seqlearn.scan as scan
from seqlearn.scan import blocked_scan, default_chunk, linear_scan, to_extended

F64 = torch.float64


@pytest.mark.parametrize("T, chunk", [(7, 3), (8, 4), (10, 4)])
def test_blocked_scan_in_extended_arithmetic_equals_the_loop(T, chunk):
    # a_t = 2^{+-600}: the states reach 2^1200 (overflow in float64) and come back down, so
    # linear_scan falls back to extended exponents; both methods must then agree exactly
    up, down = 2.0 ** 600, 2.0 ** -600
    a = torch.tensor([0.5, up, up, down, down, 0.5, 3.0, 0.25, up, down][:T], dtype=F64)
    b = torch.linspace(1.0, 2.0, T, dtype=F64)
    a, b = a[:, None], b[:, None]  # (T, 1)
    want = linear_scan(a, b, method="sequential")
    h = linear_scan(a, b, method="parallel", chunk=chunk)
    assert not bool(torch.isfinite(want).all()) and bool(torch.isfinite(want[-1]).all())
    torch.testing.assert_close(h, want, rtol=1e-15, atol=0)
    ref = b.new_zeros(1)  # the loop in float64, with exact powers of two where it stays finite
    for t in range(T):
        ref = a[t] * ref + b[t]
        if bool(torch.isfinite(ref).all()):
            torch.testing.assert_close(h[t], ref, rtol=1e-15, atol=0)


def test_blocked_scan_default_chunk_is_16(monkeypatch):
    seen = []
    real = scan.linear_scan

    def spy(*args, **kwargs):
        seen.append(kwargs.get("chunk"))
        return real(*args, **kwargs)

    monkeypatch.setattr(scan, "linear_scan", spy)
    a, b = torch.full((40, 2), 0.9, dtype=F64), torch.ones(40, 2, dtype=F64)
    torch.testing.assert_close(blocked_scan(a, b), real(a, b, method="parallel", chunk=16),
                               rtol=0, atol=0)
    assert seen == [16]


@pytest.mark.parametrize("call, error, match", [
    (lambda: to_extended(torch.tensor([1.0, float("inf")])), ValueError,
     r"^x contains NaN or infinity$"),
    (lambda: default_chunk(0), ValueError, r"^T must be positive, got 0$"),
    (lambda: linear_scan(torch.zeros(2, 1), [[1.0], [2.0]]), TypeError,
     r"^a and b must be torch\.Tensor, got Tensor and list$"),
    (lambda: linear_scan(torch.zeros(2, 1, dtype=torch.long), torch.zeros(2, 1, dtype=torch.long)),
     TypeError, r"^a must be a floating-point tensor, got dtype torch\.int64$"),
    (lambda: linear_scan(torch.zeros(2, 1, dtype=F64), torch.zeros(2, 1, dtype=F64),
                         torch.zeros(1)),
     TypeError, r"^a and h0 must have the same dtype, got torch\.float64 and torch\.float32$"),
])
def test_errors_name_the_argument(call, error, match):
    with pytest.raises(error, match=match):
        call()
