"""seqlearn.layernorm: devices, the printed form and the exact wording of each validation error.

These tests close the gaps that mutation testing (``tools/mutation.py package``) found in the
LayerNorm tests of test_transformer.py. Devices are checked with PyTorch's data-less ``meta``
device, so no GPU is needed: copying meta weights into CPU ones raises.
"""

from __future__ import annotations

import pytest
import torch
from torch import nn

from seqlearn.layernorm import LayerNorm

F64 = torch.float64


def test_repr_shows_the_width_and_eps():
    assert repr(LayerNorm(4)) == "LayerNorm(4, eps=1e-05)"
    assert repr(LayerNorm(3, eps=0.25)) == "LayerNorm(3, eps=0.25)"


def test_eps_is_added_to_the_variance_inside_the_square_root():
    x = torch.tensor([[1.0, 3.0], [0.0, 0.0]], dtype=F64)  # variances 1 and 0
    y = LayerNorm(2, eps=3.0).double()(x)
    torch.testing.assert_close(y, torch.tensor([[-0.5, 0.5], [0.0, 0.0]], dtype=F64),
                               rtol=1e-14, atol=0)
    ln = LayerNorm(2, eps=3.0).double()
    with torch.no_grad():
        ln.weight.copy_(torch.tensor([2.0, -1.0]))
        ln.bias.copy_(torch.tensor([0.5, 0.25]))
    torch.testing.assert_close(ln(x), torch.tensor([[-0.5, -0.25], [0.5, 0.25]], dtype=F64),
                               rtol=1e-14, atol=0)


def test_from_torch_keeps_the_device_and_dtype():
    ours = LayerNorm.from_torch(nn.LayerNorm(4, device="meta", dtype=F64))
    assert {(p.device.type, p.dtype) for p in ours.parameters()} == {("meta", F64)}
    assert ours.d == 4 and ours.eps == 1e-5


def test_from_torch_copies_eps_gain_and_bias():
    ref = nn.LayerNorm(3, eps=0.5, dtype=F64)
    with torch.no_grad():
        ref.weight.copy_(torch.tensor([1.0, 2.0, 3.0]))
        ref.bias.copy_(torch.tensor([-1.0, 0.0, 1.0]))
    ours = LayerNorm.from_torch(ref)
    assert ours.eps == 0.5
    assert ours.weight.tolist() == [1.0, 2.0, 3.0] and ours.bias.tolist() == [-1.0, 0.0, 1.0]


@pytest.mark.parametrize("call, error, match", [
    (lambda: LayerNorm(0), ValueError, r"^d must be positive"),
    (lambda: LayerNorm(2.0), TypeError, r"^d must be an int"),
    (lambda: LayerNorm(4, eps=0.0), ValueError, r"^eps must be positive, got 0\.0$"),
    (lambda: LayerNorm(4, eps="1"), TypeError, r"^eps must be a real number, got str$"),
    (lambda: LayerNorm(4)(torch.zeros(2, 4, dtype=F64)), TypeError,
     r"^x and the module's parameters must have the same dtype, got torch\.float64 and "
     r"torch\.float32$"),
    (lambda: LayerNorm(4)(torch.zeros(2, 3)), ValueError,
     r"^x must have shape \(\.\.\., d=4\), got \(2, 3\)$"),
    (lambda: LayerNorm(4)(torch.zeros(2, 4, dtype=torch.long)), TypeError,
     r"^x must be a floating-point tensor"),
    (lambda: LayerNorm(4)([0.0] * 4), TypeError, r"^x must be a torch\.Tensor, got list$"),
    (lambda: LayerNorm.from_torch(nn.Linear(2, 2)), TypeError,
     r"^m must be a torch\.nn\.LayerNorm, got Linear$"),
    (lambda: LayerNorm.from_torch(nn.LayerNorm([2, 3])), ValueError,
     r"^m must normalise over one \(the last\) axis, got normalized_shape \(2, 3\)$"),
])
def test_layernorm_error_messages(call, error, match):
    with pytest.raises(error, match=match):
        call()
