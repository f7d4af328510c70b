"""seqlearn.causal: the exact wording of each validation error.

These tests close the gaps that mutation testing (``tools/mutation.py package``) found in
test_causal.py: each error names the argument at fault and what was expected.
"""

from __future__ import annotations

import pytest
import torch

from seqlearn.causal import KeyValueAttention, causal_attention_loop

F64 = torch.float64


def _qkv():
    return (torch.zeros(1, 2, 3, dtype=F64), torch.zeros(1, 2, 3, dtype=F64),
            torch.zeros(1, 2, 4, dtype=F64))


@pytest.mark.parametrize("call, error, match", [
    (lambda q, k, v: causal_attention_loop(q, k, v.long()), TypeError,
     r"^v must be a floating-point tensor, got dtype torch\.int64$"),
    (lambda q, k, v: causal_attention_loop(q[0], k, v), ValueError,
     r"^q must have shape \(B, T, d\), got \(2, 3\)$"),
    (lambda q, k, v: causal_attention_loop(q, k, v, scale="1"), TypeError,
     r"^scale must be a real number, got str$"),
    (lambda q, k, v: KeyValueAttention(2.0, 3), TypeError, r"^d_in must be an int, got float$"),
    (lambda q, k, v: KeyValueAttention(3, 2)(q), TypeError,
     r"^fx and the module's parameters must have the same dtype, got torch\.float64 and "
     r"torch\.float32$"),
])
def test_errors_name_the_argument(call, error, match):
    with pytest.raises(error, match=match):
        call(*_qkv())
