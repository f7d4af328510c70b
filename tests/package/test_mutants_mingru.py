"""seqlearn.mingru: the wording of each validation error and the scan method MinLSTM runs.

These tests close the gaps that mutation testing (``tools/mutation.py package``) found in
test_mingru.py: every error names the argument at fault, and ``MinLSTM.forward`` hands its
``method`` to the scan (all methods agree to rounding, so only a spy can tell them apart).
"""

from __future__ import annotations

import pytest
import torch

import seqlearn.mingru as mingru
from seqlearn.mingru import MinGRU, MinLSTM, log_positive_candidate, log_space_scan

F64 = torch.float64
Z = torch.zeros(1, 2, 3, dtype=F64)


@pytest.mark.parametrize("call, error, match", [
    (lambda: log_positive_candidate(torch.zeros(2, dtype=torch.long)), TypeError,
     r"^y must be a floating-point tensor, got dtype torch\.int64$"),
    (lambda: log_space_scan(Z, Z.long()), TypeError,
     r"^log_b must be a floating-point tensor, got dtype torch\.int64$"),
    (lambda: log_space_scan(Z, Z.float()), TypeError,
     r"^log_a and log_b must have the same dtype, got torch\.float64 and torch\.float32$"),
    (lambda: log_space_scan(Z, Z, torch.zeros(1, 3)), TypeError,
     r"^log_a and log_h0 must have the same dtype, got torch\.float64 and torch\.float32$"),
    (lambda: MinGRU(3, 2)(Z.long()), TypeError,
     r"^x must be a floating-point tensor, got dtype torch\.int64$"),
    (lambda: MinGRU(3, 2)(Z), TypeError,
     r"^x and the module's parameters must have the same dtype, got torch\.float64 and "
     r"torch\.float32$"),
    (lambda: MinGRU(3.0, 2), TypeError, r"^input_size must be an int, got float$"),
])
def test_errors_name_the_argument(call, error, match):
    with pytest.raises(error, match=match):
        call()


@pytest.mark.parametrize("method", ["parallel", "blelloch"])
def test_minlstm_hands_its_method_to_the_scan(monkeypatch, method):
    seen = []
    real = mingru.linear_scan

    def spy(*args, **kwargs):
        seen.append(kwargs.get("method", "sequential"))
        return real(*args, **kwargs)

    monkeypatch.setattr(mingru, "linear_scan", spy)
    torch.manual_seed(0)
    m = MinLSTM(3, 2).double()
    x = torch.randn(1, 4, 3, dtype=F64)
    h = m(x, method=method)
    assert seen == [method]
    torch.testing.assert_close(h, m(x, method="log"), rtol=1e-12, atol=1e-14)
