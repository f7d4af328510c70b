"""seqlearn.transformer_layers against torch.nn.TransformerEncoderLayer and
TransformerDecoderLayer with copied weights (post- and pre-norm), the feed-forward
block, causality; defaults, devices and the wording of each error; properties at random
sizes."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, strategies as st
from torch import nn

from properties import covers, not_bools, randn, refuses, seeds, sizes
from seqlearn import transformer_layers as layers
from seqlearn.transformer_layers import DecoderLayer, EncoderLayer, FeedForward
from tensors import randomise


TIGHT = dict(rtol=1e-12, atol=1e-12)
F64 = torch.float64


def _mask(lengths, S):
    return torch.arange(S) < torch.tensor(lengths)[:, None]  # (B, S)


@pytest.mark.parametrize("activation", ["relu", "gelu"])
def test_feed_forward_is_the_two_layer_mlp(activation):
    torch.manual_seed(0)
    ff = FeedForward(5, 7, activation).double()
    x = torch.randn(2, 3, 5, dtype=F64)
    phi = torch.relu if activation == "relu" else nn.functional.gelu
    want = phi(x @ ff.linear1.weight.T + ff.linear1.bias) @ ff.linear2.weight.T + ff.linear2.bias
    torch.testing.assert_close(ff(x), want, **TIGHT)
    for t in range(3):  # position-wise: each position alone gives the same output
        torch.testing.assert_close(ff(x[:, t]), ff(x)[:, t], **TIGHT)
    with pytest.raises(ValueError, match="activation must be one of"):
        FeedForward(5, 7, "tanh")


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
def test_encoder_layer_equals_torch(norm_first, activation):
    torch.manual_seed(1)
    ref = nn.TransformerEncoderLayer(8, 2, 12, dropout=0.0, activation=activation,
                                     batch_first=True, norm_first=norm_first, dtype=F64)
    randomise(ref, 1)
    ours = EncoderLayer.from_torch(ref)
    assert ours.norm_first is norm_first
    x = torch.randn(3, 6, 8, dtype=F64)
    mask = _mask([6, 4, 1], 6)
    torch.testing.assert_close(ours(x, mask=mask), ref(x, src_key_padding_mask=~mask), **TIGHT)
    torch.testing.assert_close(ours(x), ref(x), **TIGHT)
    w = ours.self_weights  # the last call had no mask: every row sums to 1
    assert w.shape == (3, 2, 6, 6)
    ours(x, mask=mask)
    assert bool((ours.self_weights[1, :, :, 4:] == 0).all())  # padded keys get weight 0


@pytest.mark.parametrize("norm_first", [False, True])
def test_decoder_layer_equals_torch(norm_first):
    torch.manual_seed(2)
    ref = nn.TransformerDecoderLayer(8, 4, 16, dropout=0.0, batch_first=True,
                                     norm_first=norm_first, dtype=F64)
    randomise(ref, 2)
    ours = DecoderLayer.from_torch(ref)
    y, memory = torch.randn(3, 5, 8, dtype=F64), torch.randn(3, 7, 8, dtype=F64)
    mask = _mask([7, 3, 5], 7)
    causal = nn.Transformer.generate_square_subsequent_mask(5, dtype=F64)
    want = ref(y, memory, tgt_mask=causal, tgt_is_causal=True, memory_key_padding_mask=~mask)
    torch.testing.assert_close(ours(y, memory, memory_mask=mask), want, **TIGHT)
    assert ours.self_weights.shape == (3, 4, 5, 5) and ours.cross_weights.shape == (3, 4, 5, 7)
    assert bool((ours.self_weights.triu(1) == 0).all())  # causal
    assert bool((ours.cross_weights[1, ..., 3:] == 0).all())  # padded memory


@pytest.mark.parametrize("norm_first", [False, True])
def test_decoder_output_at_t_ignores_later_inputs(norm_first):
    torch.manual_seed(3)
    layer = DecoderLayer(8, 2, 8, norm_first=norm_first).double()
    y, memory = torch.randn(2, 6, 8, dtype=F64), torch.randn(2, 4, 8, dtype=F64)
    changed = y.clone()
    changed[:, 3:] = torch.randn(2, 3, 8, dtype=F64)
    torch.testing.assert_close(layer(changed, memory)[:, :3], layer(y, memory)[:, :3], **TIGHT)


def test_layer_validation():
    enc, dec = EncoderLayer(4, 2, 8), DecoderLayer(4, 2, 8)
    x = torch.randn(2, 3, 4)
    with pytest.raises(ValueError, match=r"x must have shape \(B, S, d=4\)"):
        enc(torch.randn(2, 3, 5))
    with pytest.raises(TypeError, match="mask must be a bool tensor"):
        enc(x, mask=torch.ones(2, 3))
    with pytest.raises(ValueError, match=r"mask must have shape \(B=2, S=3\)"):
        enc(x, mask=torch.ones(2, 4, dtype=torch.bool))
    with pytest.raises(ValueError, match="at least one token in every row"):
        enc(x, mask=_mask([3, 0], 3))
    with pytest.raises(ValueError, match=r"memory must have shape \(B=2, S, d=4\)"):
        dec(x, torch.randn(3, 3, 4))
    with pytest.raises(TypeError, match="norm_first must be a bool"):
        EncoderLayer(4, 2, 8, norm_first=1)
    with pytest.raises(ValueError, match="divisible"):
        DecoderLayer(6, 4, 8)
    with pytest.raises(TypeError, match="TransformerEncoderLayer"):
        EncoderLayer.from_torch(nn.TransformerDecoderLayer(4, 2, 8, batch_first=True))
    with pytest.raises(TypeError, match="TransformerDecoderLayer"):
        DecoderLayer.from_torch(nn.TransformerEncoderLayer(4, 2, 8, batch_first=True))
    with pytest.raises(ValueError, match="batch_first=True"):
        EncoderLayer.from_torch(nn.TransformerEncoderLayer(4, 2, 8))
    with pytest.raises(ValueError, match="only relu and gelu"):
        EncoderLayer.from_torch(nn.TransformerEncoderLayer(4, 2, 8, batch_first=True,
                                                           activation=torch.tanh))
    with pytest.raises(ValueError, match="bias=False"):
        DecoderLayer.from_torch(nn.TransformerDecoderLayer(4, 2, 8, batch_first=True,
                                                           bias=False))


# --------------------- defaults, devices and the exact wording of each validation error


# Devices are checked with PyTorch's data-less ``meta`` device, so no GPU is needed:
# copying meta weights into CPU ones raises.


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


# ---------------------------------------------- properties at random sizes (hypothesis)


@covers("seqlearn.transformer_layers.EncoderLayer", "seqlearn.transformer_layers.DecoderLayer")
@given(seed=seeds, B=sizes, S=sizes, T=sizes, heads=st.integers(1, 2),
       norm_first=st.booleans(), flag=not_bools)
def test_layers_equal_torch_with_copied_weights(seed, B, S, T, heads, norm_first, flag):
    torch.manual_seed(seed)
    d = 2 * heads
    kwargs = dict(dropout=0.0, batch_first=True, norm_first=norm_first, dtype=F64)
    enc_ref = nn.TransformerEncoderLayer(d, heads, 3, **kwargs)
    dec_ref = nn.TransformerDecoderLayer(d, heads, 3, **kwargs)
    enc = layers.EncoderLayer.from_torch(enc_ref)
    dec = layers.DecoderLayer.from_torch(dec_ref)
    x, y = randn(seed, B, S, d), randn(seed + 1, B, T, d)
    lengths = torch.randint(1, S + 1, (B,), generator=torch.Generator().manual_seed(seed))
    mask = torch.arange(S) < lengths[:, None]  # (B, S), at least one token per row
    memory = enc(x, mask=mask)
    torch.testing.assert_close(memory, enc_ref(x, src_key_padding_mask=~mask))
    causal = nn.Transformer.generate_square_subsequent_mask(T, dtype=F64)
    torch.testing.assert_close(dec(y, memory, memory_mask=mask),
                               dec_ref(y, memory, tgt_mask=causal, tgt_is_causal=True,
                                       memory_key_padding_mask=~mask))
    refuses(layers.EncoderLayer, d, heads, 3, norm_first=flag)
    refuses(enc, x, mask=mask.double())
    refuses(enc, x, mask=torch.zeros_like(mask))
    refuses(dec, y, memory[..., :1] if d > 1 else memory.expand(B, S, 2))
    refuses(layers.EncoderLayer.from_torch, dec_ref)
