"""seqlearn.conv: the wording of each validation error and the checks of a system's output.

These tests close the gaps that mutation testing (``tools/mutation.py package``) found in
test_conv.py: every error names the argument at fault, and ``impulse_response`` refuses a
system that returns more than one channel.
"""

from __future__ import annotations

import pytest
import torch

from seqlearn.conv import causal_conv1d, conv_transpose1d, impulse_response, pad1d

F64 = torch.float64


def test_pad1d_names_value():
    with pytest.raises(TypeError, match=r"^value must be a real number, got str$"):
        pad1d(torch.zeros(1, 1, 3, dtype=F64), 1, 1, value="0")


def test_conv_transpose1d_names_dilation():
    x, w = torch.zeros(1, 1, 3, dtype=F64), torch.zeros(1, 1, 2, dtype=F64)
    with pytest.raises(ValueError, match=r"^dilation must be positive, got 0$"):
        conv_transpose1d(x, w, dilation=0)


def test_impulse_response_refuses_two_channels():
    two = lambda x: torch.cat([x, x], dim=1)  # (1, 2, T)
    with pytest.raises(ValueError, match=r"^system\(impulse\) must have shape \(B=1, C=1, T=4\), "
                                         r"got \(1, 2, 4\)$"):
        impulse_response(two, 4)


def test_causal_conv1d_names_weight():
    with pytest.raises(ValueError, match=r"^weight must have shape \(C_out, C_in, k\), "
                                         r"got \(1, 2\)$"):
        causal_conv1d(torch.zeros(1, 1, 3, dtype=F64), torch.zeros(1, 2, dtype=F64))
