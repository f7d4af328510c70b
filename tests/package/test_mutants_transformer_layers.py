"""seqlearn.transformer_layers: defaults, devices and the exact wording of each validation error.

These tests close the gaps that mutation testing (``tools/mutation.py package``) found in the
layer tests of test_transformer.py. Devices are checked with PyTorch's data-less ``meta``
device, so no GPU is needed: copying meta weights into CPU ones raises.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from seqlearn.transformer_layers import DecoderLayer, EncoderLayer, FeedForward

F64 = torch.float64


def test_defaults_are_post_norm_relu_and_eps_1e_5():
    torch.manual_seed(0)
    for cls in (EncoderLayer, DecoderLayer):
        layer = cls(4, 2, 8)
        assert layer.norm_first is False and layer.ff.activation == "relu"
        assert layer.norm1.eps == 1e-5 and layer.norm2.eps == 1e-5
    assert FeedForward(4, 8).activation == "relu"
    ff = FeedForward(3, 5).double()
    x = torch.randn(2, 3, dtype=F64)
    torch.testing.assert_close(ff(x), ff.linear2(F.relu(ff.linear1(x))), rtol=0, atol=0)


def test_post_norm_decoder_layer_by_hand():
    """The default (post-norm) decoder layer, its three Add & Norm steps written out."""
    torch.manual_seed(1)
    layer = DecoderLayer(4, 2, 8, eps=0.1).double()
    y, memory = torch.randn(2, 3, 4, dtype=F64), torch.randn(2, 5, 4, dtype=F64)
    ln = lambda x, norm: F.layer_norm(x, (4,), norm.weight, norm.bias, eps=0.1)  # noqa: E731
    z1 = ln(y + layer.self_attn(y, y, y, causal=True)[0], layer.norm1)
    z2 = ln(z1 + layer.multihead_attn(z1, memory, memory)[0], layer.norm2)
    want = ln(z2 + layer.ff(z2), layer.norm3)
    torch.testing.assert_close(layer(y, memory), want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("cls, kind", [(EncoderLayer, nn.TransformerEncoderLayer),
                                       (DecoderLayer, nn.TransformerDecoderLayer)])
def test_from_torch_builds_on_the_device_of_the_torch_layer(cls, kind):
    ref = kind(4, 2, 8, batch_first=True, device="meta", dtype=F64)
    ours = cls.from_torch(ref)
    assert {(p.device.type, p.dtype) for p in ours.parameters()} == {("meta", F64)}


@pytest.mark.parametrize("call, error, match", [
    (lambda enc, dec, x: enc(x, mask=torch.ones(2, 3)), TypeError,
     r"^mask must be a bool tensor \(True = token\), got torch\.float32$"),
    (lambda enc, dec, x: enc(x, mask=[[True] * 3] * 2), TypeError,
     r"^mask must be a bool tensor \(True = token\), got list$"),
    (lambda enc, dec, x: dec(x, x, memory_mask=torch.ones(2, 3)), TypeError,
     r"^memory_mask must be a bool tensor \(True = token\), got torch\.float32$"),
    (lambda enc, dec, x: dec(x, x, memory_mask=torch.ones(2, 4, dtype=torch.bool)), ValueError,
     r"^memory_mask must have shape \(B=2, S=3\)"),
    (lambda enc, dec, x: dec(x, x, memory_mask=torch.zeros(2, 3, dtype=torch.bool)), ValueError,
     r"^memory_mask must mark at least one token in every row$"),
    (lambda enc, dec, x: enc(x.double()), TypeError,
     r"^x and the layer's parameters must have the same dtype, got torch\.float64 and "
     r"torch\.float32$"),
    (lambda enc, dec, x: dec(x.double(), x), TypeError,
     r"^y and the layer's parameters must have the same dtype"),
    (lambda enc, dec, x: dec(x, x.double()), TypeError,
     r"^memory and the layer's parameters must have the same dtype"),
    (lambda enc, dec, x: dec(x[..., :3], x), ValueError,
     r"^y must have shape \(B, T, d=4\), got \(2, 3, 3\)$"),
    (lambda enc, dec, x: dec(x.long(), x), TypeError, r"^y must be a floating-point tensor"),
    (lambda enc, dec, x: dec(x, x.tolist()), TypeError, r"^memory must be a torch\.Tensor"),
    (lambda enc, dec, x: enc(x[0]), ValueError,
     r"^x must have shape \(B, S, d=4\), got \(3, 4\)$"),
    (lambda enc, dec, x: enc.ff(x.double()), TypeError,
     r"^x and the module's parameters must have the same dtype"),
    (lambda enc, dec, x: enc.ff(x[..., :2]), ValueError,
     r"^x must have shape \(\.\.\., d_model=4\), got \(2, 3, 2\)$"),
    (lambda enc, dec, x: enc.ff(x.tolist()), TypeError, r"^x must be a torch\.Tensor"),
])
def test_layer_error_messages(call, error, match):
    torch.manual_seed(0)
    enc, dec = EncoderLayer(4, 2, 8), DecoderLayer(4, 2, 8)
    with pytest.raises(error, match=match):
        call(enc, dec, torch.randn(2, 3, 4))


@pytest.mark.parametrize("call, error, match", [
    (lambda: EncoderLayer(0, 2, 8), ValueError, r"^d_model must be positive"),
    (lambda: DecoderLayer(4.0, 2, 8), TypeError, r"^d_model must be an int"),
    (lambda: EncoderLayer(4, 2, 8, norm_first="no"), TypeError, r"^norm_first must be a bool"),
    (lambda: FeedForward(0, 8), ValueError, r"^d_model must be positive"),
    (lambda: FeedForward(4, 0), ValueError, r"^d_ff must be positive"),
    (lambda: FeedForward(4, 8.0), TypeError, r"^d_ff must be an int"),
    (lambda: FeedForward(4, 8, "tanh"), ValueError,
     r"^activation must be one of \('relu', 'gelu'\), got 'tanh'$"),
    (lambda: EncoderLayer.from_torch(nn.Linear(2, 2)), TypeError,
     r"^m must be a torch\.nn\.TransformerEncoderLayer, got Linear$"),
    (lambda: DecoderLayer.from_torch(nn.Linear(2, 2)), TypeError,
     r"^m must be a torch\.nn\.TransformerDecoderLayer, got Linear$"),
    (lambda: DecoderLayer.from_torch(nn.TransformerDecoderLayer(4, 2, 8)), ValueError,
     r"^m must be built with batch_first=True \(seqlearn is batch first\)$"),
    (lambda: EncoderLayer.from_torch(nn.TransformerEncoderLayer(4, 2, 8, batch_first=True,
                                                                bias=False)), ValueError,
     r"^torch layers built with bias=False are not supported$"),
    (lambda: EncoderLayer.from_torch(nn.TransformerEncoderLayer(
        4, 2, 8, batch_first=True, activation=nn.GELU(approximate="tanh"))), ValueError,
     r"^only relu and gelu activations are supported, got GELU\(approximate='tanh'\)$"),
])
def test_constructor_error_messages(call, error, match):
    with pytest.raises(error, match=match):
        call()


@pytest.mark.parametrize("activation, name", [(F.relu, "relu"), (nn.ReLU(), "relu"),
                                              (F.gelu, "gelu"), (nn.GELU(), "gelu")])
def test_from_torch_reads_each_activation(activation, name):
    torch.manual_seed(0)
    ref = nn.TransformerEncoderLayer(4, 2, 8, dropout=0.0, activation=activation,
                                     batch_first=True, dtype=F64)
    ours = EncoderLayer.from_torch(ref)
    assert ours.ff.activation == name
    x = torch.randn(2, 3, 4, dtype=F64)
    torch.testing.assert_close(ours(x), ref(x), rtol=1e-10, atol=1e-12)
