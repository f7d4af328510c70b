"""seqlearn.transformer: defaults, boundaries and the exact wording of each validation error.

These tests close the gaps that mutation testing (``tools/mutation.py package``) found in
test_transformer.py (the pre-norm / post-norm structure is checked there, against torch layers).
"""

from __future__ import annotations

import math

import pytest
import torch

from seqlearn.data import Vocab, seq2seq_batch
from seqlearn.transformer import Transformer, sinusoidal_positional_encoding, transformer_loss

F64 = torch.float64
LONG = dict(dtype=torch.long)


def test_defaults():
    torch.manual_seed(0)
    model = Transformer(5, 7, 4, 2, 1, 8)
    assert model.max_len == 512 and model.pe.shape == (512, 4)
    assert model.norm_first is False and model.encoder_norm is None
    assert model.out.weight is not model.tgt_embed.weight  # tie_weights=False
    torch.manual_seed(0)
    same = Transformer(5, 7, 4, 2, 1, 8, norm_first=False, max_len=512, tie_weights=False,
                       embedding_std=0.5)
    for (name, a), (_, b) in zip(model.state_dict().items(), same.state_dict().items()):
        assert torch.equal(a, b), name
    torch.testing.assert_close(model.pe, sinusoidal_positional_encoding(512, 4))


def test_embedding_std_sets_the_spread_of_both_embeddings():
    torch.manual_seed(0)
    model = Transformer(300, 400, 64, 2, 1, 8, embedding_std=2.0)
    for embedding in (model.src_embed, model.tgt_embed):
        assert abs(float(embedding.weight.detach().std()) - 2.0) < 0.05


def test_sequences_of_exactly_max_len_positions_are_accepted():
    torch.manual_seed(0)
    model = Transformer(5, 7, 4, 2, 1, 8, max_len=6).double()
    logits = model(torch.ones(2, 6, **LONG), torch.ones(2, 6, **LONG))
    assert logits.shape == (2, 6, 7)
    with pytest.raises(ValueError, match=r"^src has 7 positions, more than max_len=6$"):
        model(torch.ones(2, 7, **LONG), torch.ones(2, 6, **LONG))
    with pytest.raises(ValueError, match=r"^tgt_in has 7 positions, more than max_len=6$"):
        model(torch.ones(2, 6, **LONG), torch.ones(2, 7, **LONG))


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(src_vocab=0), ValueError, r"^src_vocab must be positive"),
    (dict(tgt_vocab=0), ValueError, r"^tgt_vocab must be positive"),
    (dict(tgt_vocab=2.0), TypeError, r"^tgt_vocab must be an int"),
    (dict(d_model=0), ValueError, r"^d_model must be positive"),
    (dict(num_layers=0), ValueError, r"^num_layers must be positive"),
    (dict(num_layers=1.0), TypeError, r"^num_layers must be an int"),
    (dict(max_len=0), ValueError, r"^max_len must be positive"),
    (dict(norm_first=1), TypeError, r"^norm_first must be a bool, got int 1$"),
    (dict(tie_weights="yes"), TypeError, r"^tie_weights must be a bool"),
    (dict(embedding_std=0.0), ValueError, r"^embedding_std must be positive, got 0\.0$"),
    (dict(embedding_std=-1.0), ValueError, r"^embedding_std must be positive"),
    (dict(embedding_std="1"), TypeError, r"^embedding_std must be a real number"),
])
def test_constructor_error_messages(kwargs, error, match):
    args = dict(src_vocab=5, tgt_vocab=7, d_model=4, num_heads=2, num_layers=1, d_ff=8)
    with pytest.raises(error, match=match):
        Transformer(**{**args, **kwargs})


@pytest.mark.parametrize("call, error, match", [
    (lambda m, src, tgt: m(src, tgt + 7), ValueError, r"^tgt_in must hold ids in \[0, 7\)"),
    (lambda m, src, tgt: m(src, tgt.int()), TypeError, r"^tgt_in must be a LongTensor"),
    (lambda m, src, tgt: m(src + 5, tgt), ValueError, r"^src must hold ids in \[0, 5\)"),
    (lambda m, src, tgt: m(src, tgt, src_mask=torch.zeros(2, 4, dtype=torch.bool)), ValueError,
     r"^src_mask must mark at least one token in every row$"),
    (lambda m, src, tgt: m.attention_maps(), ValueError,
     r"^no attention maps yet: run the model forward first$"),
    (lambda m, src, tgt: transformer_loss(m, (src, tgt)), TypeError,
     r"^batch must be a Seq2SeqBatch, got tuple$"),
    (lambda m, src, tgt: m.greedy_decode(src, 3, 1, 2, pad=7), ValueError,
     r"^pad must be at most 6"),
    (lambda m, src, tgt: m.greedy_decode(src, 3, -1, 2), ValueError, r"^bos must be at least 0"),
    (lambda m, src, tgt: m.greedy_decode(src, 0, 1, 2), ValueError, r"^max_len must be positive"),
])
def test_forward_error_messages(call, error, match):
    torch.manual_seed(0)
    model = Transformer(5, 7, 4, 2, 1, 8, max_len=6)
    with pytest.raises(error, match=match):
        call(model, torch.ones(2, 4, **LONG), torch.ones(2, 3, **LONG))


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(base=1.0), ValueError, r"^base must be a number > 1, got 1\.0$"),
    (dict(base="10"), TypeError, r"^base must be a real number"),
    (dict(dtype=torch.long), TypeError,
     r"^dtype must be a floating torch\.dtype or None, got torch\.int64$"),
    (dict(dtype="float64"), TypeError, r"^dtype must be a floating torch\.dtype or None"),
])
def test_positional_encoding_error_messages(kwargs, error, match):
    with pytest.raises(error, match=match):
        sinusoidal_positional_encoding(3, 4, **kwargs)


def test_positional_encoding_defaults_and_device():
    pe = sinusoidal_positional_encoding(5, 6)
    assert pe.dtype == torch.get_default_dtype()
    torch.testing.assert_close(pe, sinusoidal_positional_encoding(5, 6, base=10000.0,
                                                                  dtype=torch.float32))
    assert sinusoidal_positional_encoding(5, 6, device="meta").device.type == "meta"
    assert math.isclose(sinusoidal_positional_encoding(5, 6, dtype=F64)[1, 2],
                        math.sin(10000.0 ** (-2 / 6)), rel_tol=1e-14)
