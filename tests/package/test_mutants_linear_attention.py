"""seqlearn.linear_attention: the exact wording of each validation error.

These tests close the gaps that mutation testing (``tools/mutation.py package``) found in
test_linear_attention.py: every error names the argument at fault, and the time axis of ``q``
binds that of ``k`` and ``v``.
"""

from __future__ import annotations

import pytest
import torch

from seqlearn.linear_attention import decay_mask, masked_linear_attention, mingru_as_attention

F64 = torch.float64


def _qkv(T=3):
    return (torch.zeros(2, T, 4, dtype=F64), torch.zeros(2, T, 4, dtype=F64),
            torch.zeros(2, T, 5, dtype=F64))


@pytest.mark.parametrize("call, error, match", [
    (lambda q, k, v: masked_linear_attention(q, k.long(), v), TypeError,
     r"^k must be a floating-point tensor, got dtype torch\.int64$"),
    (lambda q, k, v: masked_linear_attention(q, k, v.long()), TypeError,
     r"^v must be a floating-point tensor, got dtype torch\.int64$"),
    (lambda q, k, v: masked_linear_attention(q, k[:, :2], v[:, :2]), ValueError,
     r"^k must have shape \(\.\.\., T=3, dk=4\), got \(2, 2, 4\) \(T as in q\)$"),
    (lambda q, k, v: masked_linear_attention(q, k.float(), v), TypeError,
     r"^q and k must have the same dtype, got torch\.float64 and torch\.float32$"),
    (lambda q, k, v: masked_linear_attention(q, k, v.float()), TypeError,
     r"^q and v must have the same dtype, got torch\.float64 and torch\.float32$"),
    (lambda q, k, v: masked_linear_attention(q, k, v, torch.zeros(2, 3)), TypeError,
     r"^q and log_decay must have the same dtype, got torch\.float64 and torch\.float32$"),
    (lambda q, k, v: decay_mask(torch.zeros(3, dtype=torch.long)), TypeError,
     r"^log_decay must be a floating-point tensor, got dtype torch\.int64$"),
    (lambda q, k, v: decay_mask(torch.tensor([0.0, 0.5])), ValueError,
     r"^log_decay must be <= 0 \(a decay a_t = exp\(log_decay\) in \[0, 1\]\)$"),
    (lambda q, k, v: mingru_as_attention(torch.full((1, 2, 3), 1.5), torch.zeros(1, 2, 3)),
     ValueError, r"^u must lie in \[0, 1\] \(keep gates\)$"),
])
def test_errors_name_the_argument(call, error, match):
    with pytest.raises(error, match=match):
        call(*_qkv())
