"""seqlearn.multiplicative: initialisation from a generator and the wording of each error.

These tests close the gaps that mutation testing (``tools/mutation.py package``) found in
test_multiplicative.py: the modules draw their weights from the generator they are given, in
torch's default range ``U(+-1/sqrt(fan_in))``, and every error names the argument at fault.
"""

from __future__ import annotations

import math

import pytest
import torch

from seqlearn.multiplicative import (HyperLinear, MultiplicativeLinear, SoftSwitch,
                                     multiplicative_weights, soft_switch, switch_tensor)

F64 = torch.float64


@pytest.mark.parametrize("make", [
    lambda g: MultiplicativeLinear(3, 2, 4, generator=g),
    lambda g: HyperLinear(3, 2, 4, hidden_features=5, generator=g),
    lambda g: HyperLinear(3, 2, 4, hidden_features=None, generator=g),
    lambda g: SoftSwitch(4, 3, generator=g),
])
def test_modules_draw_their_weights_from_the_generator(make):
    a = make(torch.Generator().manual_seed(7))
    torch.manual_seed(99)  # the global generator must play no part
    b = make(torch.Generator().manual_seed(7))
    for (name, p), q in zip(a.named_parameters(), b.parameters()):
        assert torch.equal(p, q), name


@pytest.mark.parametrize("make", [
    lambda g: HyperLinear(64, 8, 100, hidden_features=None, generator=g),
    lambda g: SoftSwitch(100, 64, generator=g),
])
def test_linear_layers_use_torch_default_range(make):
    m = make(torch.Generator().manual_seed(0))
    for layer in m.modules():
        if isinstance(layer, torch.nn.Linear):
            bound = 1.0 / math.sqrt(layer.in_features)
            for p in layer.parameters():  # thousands of draws: the extremes approach the bound
                assert float(p.detach().abs().max()) <= bound
                assert float(p.detach().abs().max()) > 0.9 * bound


def _pair():
    return torch.zeros(2, 3, dtype=F64), torch.zeros(2, 4, dtype=F64)


@pytest.mark.parametrize("call, error, match", [
    (lambda: MultiplicativeLinear(3, 2, 4).double()(torch.zeros(2, 3, dtype=F64),
                                                   torch.zeros(2, 5, dtype=F64)),
     ValueError, r"^z must have shape \(\.\.\., d=4\), got \(2, 5\)$"),
    (lambda: HyperLinear(3, 2, 4).double()(torch.zeros(2, 3, dtype=F64),
                                          torch.zeros(2, 5, dtype=F64)),
     ValueError, r"^z must have shape \(\.\.\., d=4\), got \(2, 5\)$"),  # before nn.Linear
    (lambda: MultiplicativeLinear(3, 2, 4).double()(torch.zeros(2, 3, dtype=F64),
                                                   torch.zeros(2, 4)),
     TypeError, r"^x and z must have the same dtype, got torch\.float64 and torch\.float32$"),
    (lambda: multiplicative_weights(torch.zeros(2, 3, 4), torch.zeros(4, dtype=torch.long)),
     TypeError, r"^z must be a floating-point tensor, got dtype torch\.int64$"),
    (lambda: multiplicative_weights(torch.zeros(2, 3, 4), torch.zeros(5)),
     ValueError, r"^z must have shape \(\.\.\., d=4\), got \(5,\)$"),
    (lambda: MultiplicativeLinear(3, 2, 4, bias=1), TypeError, r"^bias must be a bool, got int 1$"),
    (lambda: soft_switch(torch.zeros(3), torch.zeros(3)), ValueError,
     r"^xs must have shape \(\.\.\., K, D\), got \(3,\)$"),
    (lambda: switch_tensor(0, 2), ValueError, r"^num_inputs must be positive, got 0$"),
    (lambda: SoftSwitch(2.0, 3), TypeError, r"^context_features must be an int, got float$"),
    (lambda: SoftSwitch(4, 3)(torch.zeros(3, 2), torch.zeros(5)), ValueError,
     r"^z must have shape \(\.\.\., C=4\), got \(5,\)$"),
])
def test_errors_name_the_argument(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_multiplicative_linear_repr_shows_its_sizes_and_bias():
    assert repr(MultiplicativeLinear(3, 2, 4)) == (
        "MultiplicativeLinear(in_features=3, out_features=2, context_features=4, bias=True)")
    assert repr(MultiplicativeLinear(3, 2, 4, bias=False)).endswith("bias=False)")
