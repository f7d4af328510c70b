"""seqlearn.transformer: the model against torch's layers with one-hot embeddings,
padding, greedy decoding against teacher forcing, weight tying, the loss and exact-
match helpers; defaults, boundaries and the wording of each error; properties at
random sizes."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, strategies as st
from torch import nn

from properties import covers, not_bools, refuses, seeds
from seqlearn import transformer
from seqlearn.data import Vocab, seq2seq_batch
from seqlearn.losses import exact_match, masked_cross_entropy
from seqlearn.transformer import (Transformer, decoded_exact_match,
                                  sinusoidal_positional_encoding, transformer_loss)
from tensors import randomise


TIGHT = dict(rtol=1e-12, atol=1e-12)
F64 = torch.float64


def _reference_logits(model: Transformer, src, tgt_in, src_mask, norm_first):
    """The model's equations written with torch.nn layers whose weights are the model's.

    ``norm_first`` is the placement the model was built with (not read from the model, so a
    model that dropped it is caught): pre-norm layers and a final LayerNorm after each stack,
    or post-norm layers and no final LayerNorm."""
    def torch_layer(kind, ours):
        ref = kind(model.d_model, ours.self_attn.num_heads, ours.ff.linear1.out_features,
                   dropout=0.0, batch_first=True, norm_first=norm_first, dtype=F64)
        ref.load_state_dict(_torch_names(ours.state_dict()))
        return ref

    S, T = src.shape[1], tgt_in.shape[1]
    one_hot = nn.functional.one_hot(src, model.src_vocab_size).to(F64)  # (B, S, V)
    x = one_hot @ model.src_embed.weight + model.pe[:S]  # embedding = one-hot x W
    for layer in model.encoder:
        x = torch_layer(nn.TransformerEncoderLayer, layer)(x, src_key_padding_mask=~src_mask)
    if norm_first:
        x = nn.functional.layer_norm(x, (model.d_model,), model.encoder_norm.weight,
                                     model.encoder_norm.bias)
    y = model.tgt_embed.weight[tgt_in] + model.pe[:T]
    causal = nn.Transformer.generate_square_subsequent_mask(T, dtype=F64)
    for layer in model.decoder:
        y = torch_layer(nn.TransformerDecoderLayer, layer)(
            y, x, tgt_mask=causal, tgt_is_causal=True, memory_key_padding_mask=~src_mask)
    if norm_first:
        y = nn.functional.layer_norm(y, (model.d_model,), model.decoder_norm.weight,
                                     model.decoder_norm.bias)
    return y @ model.out.weight.T + model.out.bias


def _torch_names(state):
    """Our layer's state dict under torch's names (in_proj packs q, k, v; ff.* drops ff.)."""
    out = {}
    for prefix in ("self_attn", "multihead_attn"):
        if f"{prefix}.q_proj.weight" in state:
            out[f"{prefix}.in_proj_weight"] = torch.cat(
                [state[f"{prefix}.{p}_proj.weight"] for p in "qkv"])
            out[f"{prefix}.in_proj_bias"] = torch.cat(
                [state[f"{prefix}.{p}_proj.bias"] for p in "qkv"])
            out[f"{prefix}.out_proj.weight"] = state[f"{prefix}.out_proj.weight"]
            out[f"{prefix}.out_proj.bias"] = state[f"{prefix}.out_proj.bias"]
    for key, value in state.items():
        if key.startswith("ff.") or key.startswith("norm"):
            out[key.removeprefix("ff.")] = value
    return out


SRC_V, TGT_V = Vocab("abcdef"), Vocab("xyz")


def _pairs(seed, n=4):
    rng = np.random.default_rng(seed)
    return [("".join(rng.choice(list("abcdef"), rng.integers(1, 7))),
             "".join(rng.choice(list("xyz"), rng.integers(0, 5)))) for _ in range(n)]


@pytest.mark.parametrize("norm_first", [False, True])
def test_transformer_equals_torch_layers_with_one_hot_embeddings(norm_first):
    torch.manual_seed(4)
    model = randomise(Transformer(SRC_V, TGT_V, 8, 2, 2, 16, norm_first=norm_first,
                                   max_len=20), 4).double()
    batch = seq2seq_batch(_pairs(4), SRC_V, TGT_V)
    logits = model(batch.src, batch.tgt_in, src_mask=batch.src_mask)
    assert logits.shape == (*batch.tgt_in.shape, len(TGT_V))
    assert model.norm_first is norm_first
    assert (model.encoder_norm is None, model.decoder_norm is None) == (not norm_first,) * 2
    want = _reference_logits(model, batch.src, batch.tgt_in, batch.src_mask, norm_first)
    torch.testing.assert_close(logits, want, **TIGHT)
    maps = model.attention_maps()
    S, T = batch.src.shape[1], batch.tgt_in.shape[1]
    assert [w.shape for w in maps["encoder"]] == [(4, 2, S, S)] * 2
    assert [w.shape for w in maps["decoder_self"]] == [(4, 2, T, T)] * 2
    assert [w.shape for w in maps["cross"]] == [(4, 2, T, S)] * 2
    for w in maps["cross"]:
        torch.testing.assert_close(w.sum(-1), torch.ones(4, 2, T, dtype=F64), **TIGHT)
        assert bool((w.masked_select(~batch.src_mask[:, None, None, :]) == 0).all())


def _torch_transformer(model: Transformer, norm_first: bool) -> nn.Transformer:
    """``torch.nn.Transformer`` (dropout 0, float64) holding ``model``'s weights; pre-norm
    stacks end with a LayerNorm each, post-norm stacks with none (``norm_first`` is passed
    in, not read from the model)."""
    d, heads = model.d_model, model.encoder[0].self_attn.num_heads
    d_ff, n = model.encoder[0].ff.linear1.out_features, len(model.encoder)
    kwargs = dict(dropout=0.0, batch_first=True, norm_first=norm_first, dtype=F64)
    final = (lambda: nn.LayerNorm(d, dtype=F64)) if norm_first else (lambda: None)
    twin = nn.Transformer(d, heads, custom_encoder=nn.TransformerEncoder(
        nn.TransformerEncoderLayer(d, heads, d_ff, **kwargs), n, norm=final(),
        enable_nested_tensor=False), custom_decoder=nn.TransformerDecoder(
        nn.TransformerDecoderLayer(d, heads, d_ff, **kwargs), n, norm=final()), **kwargs)
    state = {}
    for stack in ("encoder", "decoder"):
        for i, layer in enumerate(getattr(model, stack)):
            for key, value in _torch_names(layer.state_dict()).items():
                state[f"{stack}.layers.{i}.{key}"] = value
        if norm_first:
            norm = getattr(model, f"{stack}_norm")
            state[f"{stack}.norm.weight"], state[f"{stack}.norm.bias"] = norm.weight, norm.bias
    twin.load_state_dict(state)
    return twin


@pytest.mark.parametrize("norm_first", [False, True])
def test_whole_transformer_equals_torch_nn_transformer(norm_first):
    """The assembled model (embeddings, positions, both stacks, masks, final LayerNorms,
    output layer) against torch.nn.Transformer with copied weights: logits and the gradient
    of the embedding tables. A decode that skipped the pre-norm stack's final LayerNorm
    would pass every layer-wise test and fails here."""
    model = randomise(Transformer(SRC_V, TGT_V, 8, 2, 3, 16, norm_first=norm_first,
                                   max_len=20), 11).double()
    twin = _torch_transformer(model, norm_first)
    batch = seq2seq_batch(_pairs(11, 5), SRC_V, TGT_V)
    src, tgt_in, mask = batch.src, batch.tgt_in, batch.src_mask
    S, T = src.shape[1], tgt_in.shape[1]
    position = torch.arange(20, dtype=F64)[:, None]
    omega = 10000.0 ** (-torch.arange(0, 8, 2, dtype=F64) / 8)
    # sin/cos interleaved; rounded to float32 as the model's buffer is before .double()
    pe = torch.stack([torch.sin(position * omega), torch.cos(position * omega)], -1)
    pe = pe.flatten(1).float().double()
    E_x, E_y = (e.weight.detach().clone().requires_grad_()
                for e in (model.src_embed, model.tgt_embed))
    hidden = twin(E_x[src] + pe[:S], E_y[tgt_in] + pe[:T],
                  tgt_mask=nn.Transformer.generate_square_subsequent_mask(T, dtype=F64),
                  tgt_is_causal=True, src_key_padding_mask=~mask,
                  memory_key_padding_mask=~mask)
    want = hidden @ model.out.weight.detach().T + model.out.bias.detach()
    logits = model(src, tgt_in, src_mask=mask)
    torch.testing.assert_close(logits, want, **TIGHT)
    g = torch.randn(want.shape, generator=torch.Generator().manual_seed(0), dtype=F64)
    (logits * g).sum().backward()
    (want * g).sum().backward()
    torch.testing.assert_close(model.src_embed.weight.grad, E_x.grad, **TIGHT)
    torch.testing.assert_close(model.tgt_embed.weight.grad, E_y.grad, **TIGHT)


def test_source_padding_changes_nothing():
    torch.manual_seed(5)
    model = Transformer(SRC_V, TGT_V, 8, 2, 1, 16, norm_first=True).double()
    pairs = _pairs(5)
    tight, wide = (seq2seq_batch(pairs, SRC_V, TGT_V, src_width=w) for w in (None, 9))
    torch.testing.assert_close(model(wide.src, wide.tgt_in, src_mask=wide.src_mask),
                               model(tight.src, tight.tgt_in, src_mask=tight.src_mask), **TIGHT)


@pytest.mark.parametrize("norm_first", [False, True])
def test_greedy_decoding_agrees_with_teacher_forcing(norm_first):
    torch.manual_seed(6)
    model = randomise(Transformer(SRC_V, TGT_V, 8, 2, 2, 16, norm_first=norm_first), 6)
    model = model.double()
    batch = seq2seq_batch(_pairs(6, 8), SRC_V, TGT_V)
    tokens = model.greedy_decode(batch.src, 7, TGT_V.bos, TGT_V.eos, src_mask=batch.src_mask)
    assert tokens.dtype == torch.long and tokens.shape[0] == 8 and tokens.shape[1] <= 7
    fed = torch.cat([torch.full((8, 1), TGT_V.bos), tokens[:, :-1]], 1)
    logits = model(batch.src, fed, src_mask=batch.src_mask)
    for b in range(8):
        ends = (tokens[b] == TGT_V.eos).nonzero()
        n = int(ends[0]) + 1 if len(ends) else tokens.shape[1]
        assert torch.equal(logits[b, :n].argmax(-1), tokens[b, :n])
        assert bool((tokens[b, n:] == TGT_V.pad).all())
    # the whole decode equals a loop over examples, one at a time
    for b in range(3):
        alone = model.greedy_decode(batch.src[b:b + 1], 7, TGT_V.bos, TGT_V.eos,
                                    src_mask=batch.src_mask[b:b + 1])
        n = alone.shape[1]
        assert torch.equal(alone[0], tokens[b, :n])


def test_weight_tying_and_embedding_as_one_hot_product():
    model = Transformer(5, 7, 4, 1, 1, 8, tie_weights=True)
    assert model.out.weight is model.tgt_embed.weight
    ids = torch.tensor([[3, 0, 6]])
    one_hot = nn.functional.one_hot(ids, 7).float()
    torch.testing.assert_close(model.tgt_embed(ids), one_hot @ model.tgt_embed.weight)
    n_tied = sum(p.numel() for p in model.parameters())
    n_free = sum(p.numel() for p in Transformer(5, 7, 4, 1, 1, 8).parameters())
    assert n_free - n_tied == 7 * 4


def test_loss_and_exact_match_helpers():
    torch.manual_seed(7)
    model = Transformer(SRC_V, TGT_V, 8, 2, 1, 16).double()
    batch = seq2seq_batch(_pairs(7), SRC_V, TGT_V)
    logits = model(batch.src, batch.tgt_in, src_mask=batch.src_mask)
    torch.testing.assert_close(transformer_loss(model, batch),
                               masked_cross_entropy(logits, batch.tgt_out, batch.tgt_mask))
    tokens = model.greedy_decode(batch.src, batch.tgt_out.shape[1], TGT_V.bos, TGT_V.eos,
                                 src_mask=batch.src_mask)
    assert torch.equal(decoded_exact_match(model, batch, TGT_V),
                       exact_match(tokens, batch.tgt_out, TGT_V.eos))


def test_transformer_validation():
    model = Transformer(SRC_V, TGT_V, 8, 2, 1, 16, max_len=6)
    src, tgt = torch.ones(2, 4, dtype=torch.long), torch.ones(2, 3, dtype=torch.long)
    with pytest.raises(ValueError, match="more than max_len=6"):
        model(torch.ones(2, 7, dtype=torch.long), tgt)
    with pytest.raises(ValueError, match=r"src must hold ids in \[0, 9\)"):
        model(src + 20, tgt)
    with pytest.raises(TypeError, match="LongTensor"):
        model(src.int(), tgt)
    with pytest.raises(ValueError, match=r"tgt_in must have shape \(B=2, T\)"):
        model(src, tgt[:1])
    with pytest.raises(TypeError, match="src_mask must be a bool tensor"):
        model(src, tgt, src_mask=torch.ones(2, 4))
    with pytest.raises(ValueError, match=r"src_mask must have shape \(B=2, S=4\)"):
        model(src, tgt, src_mask=torch.ones(2, 5, dtype=torch.bool))
    with pytest.raises(ValueError, match="at most 5"):
        model.greedy_decode(src, 6, 1, 2)
    with pytest.raises(ValueError, match="eos must be at most 5"):
        model.greedy_decode(src, 3, 1, 6)
    with pytest.raises(ValueError, match="no attention maps yet"):
        model.attention_maps()
    with pytest.raises(TypeError, match="tie_weights must be a bool"):
        Transformer(3, 3, 4, 1, 1, 4, tie_weights="yes")
    with pytest.raises(TypeError, match="Seq2SeqBatch"):
        transformer_loss(model, (src, tgt))


# ------------------ defaults, boundaries and the exact wording of each validation error


# Py (the pre-norm / post-norm structure is checked there, against torch layers).


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


# ---------------------------------------------- properties at random sizes (hypothesis)


SRC, TGT = Vocab("abcd"), Vocab("xy")


@covers("seqlearn.transformer.Transformer", "seqlearn.transformer.transformer_loss",
        "seqlearn.transformer.decoded_exact_match")
@given(seed=seeds, n=st.integers(1, 4), norm_first=st.booleans(), tie=st.booleans(),
       flag=not_bools)
def test_transformer_greedy_output_is_its_own_teacher_forced_argmax(seed, n, norm_first, tie,
                                                                    flag):
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    model = transformer.Transformer(SRC, TGT, 4, 2, 1, 6, norm_first=norm_first,
                                    max_len=12, tie_weights=tie).double()
    pairs = [("".join(rng.choice(list("abcd"), rng.integers(1, 5))),
              "".join(rng.choice(list("xy"), rng.integers(0, 4)))) for _ in range(n)]
    batch = seq2seq_batch(pairs, SRC, TGT)
    tokens = model.greedy_decode(batch.src, 6, TGT.bos, TGT.eos, src_mask=batch.src_mask)
    fed = torch.cat([torch.full((n, 1), TGT.bos), tokens[:, :-1]], 1)
    argmax = model(batch.src, fed, src_mask=batch.src_mask).argmax(-1)  # (n, L)
    done = ((tokens == TGT.eos).long().cumsum(1) - (tokens == TGT.eos).long()) > 0
    assert torch.equal(argmax[~done], tokens[~done])  # up to and with each row's <eos>
    assert bool((tokens[done] == TGT.pad).all())
    loss = transformer.transformer_loss(model, batch)
    assert math.isfinite(loss.item()) and loss.item() > 0
    assert torch.equal(transformer.decoded_exact_match(model, batch, TGT),
                       exact_match(model.greedy_decode(batch.src, batch.tgt_out.shape[1],
                                                       TGT.bos, TGT.eos,
                                                       src_mask=batch.src_mask),
                                   batch.tgt_out, TGT.eos))
    refuses(transformer.Transformer, SRC, TGT, 4, 2, 1, 6, norm_first=flag)
    refuses(transformer.Transformer, SRC, TGT, 4, 3, 1, 6)  # 4 not divisible by 3 heads
    refuses(model, batch.src.double(), batch.tgt_in)
    refuses(model.greedy_decode, batch.src, 12, TGT.bos, TGT.eos)  # max_len - 1 = 11 at most
    refuses(transformer.decoded_exact_match, model, batch, "xy")
