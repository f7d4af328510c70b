"""seqlearn.unroll: devices and the exact wording of each validation error.

These tests close the gaps that mutation testing (``tools/mutation.py package``) found in
test_unroll.py. Devices are checked with PyTorch's data-less ``meta`` device, so no GPU is
needed: a mask built on the CPU cannot be combined with meta gates.
"""

from __future__ import annotations

import pytest
import torch

from seqlearn.gated import GRU
from seqlearn.unroll import apply_implied_weights, gru_gates, gru_implied_weights

F64 = torch.float64


def test_gru_implied_weights_stay_on_the_device_of_u():
    alpha, beta = gru_implied_weights(torch.zeros(2, 3, 4, device="meta"))
    assert (alpha.device.type, tuple(alpha.shape)) == ("meta", (2, 3, 3, 4))
    assert (beta.device.type, tuple(beta.shape)) == ("meta", (2, 3, 4))


def _weights(T=3, H=2):
    u = torch.full((1, T, H), 0.5, dtype=F64)
    alpha, beta = gru_implied_weights(u)
    return alpha, beta, torch.zeros(1, T, H, dtype=F64)


@pytest.mark.parametrize("call, error, match", [
    (lambda a, b, h: apply_implied_weights(a, b, h.long()), TypeError,
     r"^h_tilde must be a floating-point tensor, got dtype torch\.int64$"),
    (lambda a, b, h: apply_implied_weights(a, b, h[0, 0]), ValueError,
     r"^h_tilde must have shape \(\.\.\., T, H\), got \(2,\)$"),
    (lambda a, b, h: apply_implied_weights(a, b[..., :1], h), ValueError,
     r"^beta must have shape \(1, 3, 2\), got \(1, 3, 1\) \(h_tilde has shape \(1, 3, 2\)\)$"),
    (lambda a, b, h: apply_implied_weights(a, b.float(), h), TypeError,
     r"^beta and h_tilde must have the same dtype, got torch\.float32 and torch\.float64$"),
    (lambda a, b, h: apply_implied_weights(a, b, h, torch.zeros(1, 2)), TypeError,
     r"^h0 and h_tilde must have the same dtype, got torch\.float32 and torch\.float64$"),
    (lambda a, b, h: gru_gates(GRU(2, 3), torch.zeros(1, 4, 2, dtype=torch.long)), TypeError,
     r"^x must be a floating-point tensor, got dtype torch\.int64$"),
    (lambda a, b, h: gru_gates(GRU(2, 3), torch.zeros(1, 4, 2, dtype=F64)), TypeError,
     r"^x and the GRU's weights must have the same dtype, got torch\.float64 and "
     r"torch\.float32$"),
])
def test_errors_name_the_argument(call, error, match):
    with pytest.raises(error, match=match):
        call(*_weights())
