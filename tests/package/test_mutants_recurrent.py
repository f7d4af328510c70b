"""seqlearn.recurrent: the exact wording of each validation error.

These tests close the gaps that mutation testing (``tools/mutation.py package``) found in
test_recurrent.py: every error names the argument at fault, what was expected and what arrived.
"""

from __future__ import annotations

import pytest
import torch

from seqlearn.recurrent import (NARX, ElmanCell, JordanNetwork, context_step, exponential_trace,
                                past_window)

F64 = torch.float64
LONG = torch.zeros(1, 2, 3, dtype=torch.long)


@pytest.mark.parametrize("call, error, match", [
    (lambda: NARX(3, 4, 2)(torch.zeros(1, 2, 3, dtype=F64)), TypeError,
     r"^x and the parameters must have the same dtype, got torch\.float64 and torch\.float32$"),
    (lambda: NARX(3, 4, 2).double()(torch.zeros(1, 2, 3, dtype=F64), torch.zeros(1, 2, 2)),
     TypeError, r"^x and y_feedback must have the same dtype, got torch\.float64 and "
                r"torch\.float32$"),
    (lambda: past_window(LONG, 2), TypeError,
     r"^seq must be a floating-point tensor, got dtype torch\.int64$"),
    (lambda: context_step(torch.zeros(2, 3, dtype=torch.long), torch.zeros(2, 3), 0.5), TypeError,
     r"^c must be a floating-point tensor, got dtype torch\.int64$"),
    (lambda: context_step(torch.zeros(2, 3, dtype=F64), torch.zeros(2, 3), 0.5), TypeError,
     r"^c and y_prev must have the same dtype, got torch\.float64 and torch\.float32$"),
    (lambda: exponential_trace(LONG, 0.5), TypeError,
     r"^y must be a floating-point tensor, got dtype torch\.int64$"),
    (lambda: JordanNetwork(0, 2, 1), ValueError, r"^input_size must be positive, got 0$"),
    (lambda: JordanNetwork(1.0, 2, 1), TypeError, r"^input_size must be an int, got float$"),
    (lambda: ElmanCell(0, 2), ValueError, r"^input_size must be positive, got 0$"),
    (lambda: ElmanCell(2, 0), ValueError, r"^hidden_size must be positive, got 0$"),
    (lambda: ElmanCell(3, 2)(LONG[0]), TypeError,
     r"^x must be a floating-point tensor, got dtype torch\.int64$"),
])
def test_errors_name_the_argument(call, error, match):
    with pytest.raises(error, match=match):
        call()
