"""seqlearn.transformer.sinusoidal_positional_encoding: formula, properties, validation."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from seqlearn.transformer import sinusoidal_positional_encoding

TIGHT = dict(rtol=1e-12, atol=1e-12)


def pe_loop(T, d, base=10000.0):
    """PE[t, 2k] = sin(t / base^(2k/d)), PE[t, 2k+1] = cos(t / base^(2k/d)), one entry at a time."""
    pe = torch.zeros(T, d, dtype=torch.float64)
    for t in range(T):
        for col in range(d):
            k = col // 2
            angle = t / base ** (2 * k / d)
            pe[t, col] = math.sin(angle) if col % 2 == 0 else math.cos(angle)
    return pe


@settings(max_examples=25, deadline=None)
@given(T=st.integers(1, 20), d=st.integers(1, 16), base=st.sampled_from([10000.0, 100.0, 2.0]))
def test_formula_equals_loop_for_even_and_odd_d(T, d, base):
    pe = sinusoidal_positional_encoding(T, d, base=base, dtype=torch.float64)
    torch.testing.assert_close(pe, pe_loop(T, d, base), **TIGHT)


def test_matches_the_annotated_transformer_recipe():
    T, d = 50, 16  # exp(-log(10000) 2k / d) is how many implementations write omega_k
    omega = torch.exp(torch.arange(0, d, 2, dtype=torch.float64) * -(math.log(10000.0) / d))
    t = torch.arange(T, dtype=torch.float64)[:, None]
    ref = torch.stack([torch.sin(t * omega), torch.cos(t * omega)], dim=-1).reshape(T, d)
    torch.testing.assert_close(sinusoidal_positional_encoding(T, d, dtype=torch.float64), ref, **TIGHT)


def test_first_row_and_range():
    pe = sinusoidal_positional_encoding(100, 10, dtype=torch.float64)
    torch.testing.assert_close(pe[0], torch.tensor([0.0, 1.0] * 5, dtype=torch.float64), **TIGHT)
    assert bool((pe.abs() <= 1).all())
    # every pair (sin, cos) lies on the unit circle
    torch.testing.assert_close(pe[:, 0::2] ** 2 + pe[:, 1::2] ** 2, torch.ones(100, 5, dtype=torch.float64), **TIGHT)


@pytest.mark.parametrize("shift", [1, 3, 17])
def test_shift_is_a_rotation_of_each_frequency_pair(shift):
    T, d = 60, 12
    pe = sinusoidal_positional_encoding(T, d, dtype=torch.float64)
    omega = 10000.0 ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)  # (d/2,)
    c, s = torch.cos(omega * shift), torch.sin(omega * shift)
    # [sin(w(t+s)), cos(w(t+s))] = [[cos ws, sin ws], [-sin ws, cos ws]] [sin wt, cos wt]
    M = torch.zeros(d, d, dtype=torch.float64)  # block diagonal, the same for every t
    M[0::2, 0::2] = torch.diag(c)
    M[0::2, 1::2] = torch.diag(s)
    M[1::2, 0::2] = torch.diag(-s)
    M[1::2, 1::2] = torch.diag(c)
    torch.testing.assert_close(pe[shift:], pe[:-shift] @ M.T, **TIGHT)
    torch.testing.assert_close(M @ M.T, torch.eye(d, dtype=torch.float64), **TIGHT)  # orthogonal


def test_dot_product_depends_only_on_the_offset():
    pe = sinusoidal_positional_encoding(40, 8, dtype=torch.float64)
    gram = pe @ pe.T  # (T, T): PE_t . PE_u = sum_k cos(omega_k (t - u))
    for offset in range(-5, 6):
        diagonal = torch.diagonal(gram, offset)
        torch.testing.assert_close(diagonal, diagonal[:1].expand_as(diagonal), **TIGHT)


def test_dtype_and_device():
    assert sinusoidal_positional_encoding(3, 4).dtype == torch.get_default_dtype()
    assert sinusoidal_positional_encoding(3, 4, dtype=torch.float64).dtype == torch.float64
    assert sinusoidal_positional_encoding(3, 5).shape == (3, 5)


@pytest.mark.parametrize("args, kwargs, error, match", [
    ((0, 4), {}, ValueError, "T must be positive"),
    ((3, 0), {}, ValueError, "d must be positive"),
    ((3.0, 4), {}, TypeError, "T must be an int"),
    ((3, True), {}, TypeError, "d must be an int"),
    ((3, 4), {"base": 1.0}, ValueError, "base must be a number > 1"),
])
def test_validation(args, kwargs, error, match):
    with pytest.raises(error, match=match):
        sinusoidal_positional_encoding(*args, **kwargs)


# --------------------------------------------------------------------------- layers and model

import numpy as np
from torch import nn

from seqlearn.data import Vocab, seq2seq_batch
from seqlearn.seq2seq import exact_match, masked_cross_entropy
from seqlearn.transformer import (DecoderLayer, EncoderLayer, FeedForward, LayerNorm,
                                  Transformer, decoded_exact_match, transformer_loss)
from seqlearn.warmup import adam_moments, fit_scheduled, linear_warmup_rate, noam_rate

F64 = torch.float64


def _randomise(module: nn.Module, seed: int) -> nn.Module:
    """Non-trivial values for every parameter (LayerNorm gains/biases included)."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(torch.randn(p.shape, generator=g, dtype=p.dtype) * 0.5)
    return module


def _mask(lengths, S):
    return torch.arange(S) < torch.tensor(lengths)[:, None]  # (B, S)


@settings(max_examples=10, deadline=None)
@given(shape=st.lists(st.integers(1, 5), min_size=1, max_size=3), d=st.integers(1, 9),
       eps=st.sampled_from([1e-5, 1e-3, 0.5]), seed=st.integers(0, 10_000))
def test_layernorm_equals_torch(shape, d, eps, seed):
    ref = _randomise(nn.LayerNorm(d, eps=eps, dtype=F64), seed)
    ours = LayerNorm.from_torch(ref)
    x = torch.randn(*shape, d, dtype=F64, generator=torch.Generator().manual_seed(seed)) * 3 + 2
    torch.testing.assert_close(ours(x), ref(x), **TIGHT)
    x.requires_grad_(True)
    g_ours = torch.autograd.grad(ours(x).pow(2).sum(), x)[0]
    g_ref = torch.autograd.grad(ref(x).pow(2).sum(), x)[0]
    torch.testing.assert_close(g_ours, g_ref, rtol=1e-10, atol=1e-10)


def test_layernorm_defaults_and_affine_free_torch():
    fresh = LayerNorm(6)
    assert fresh.eps == 1e-5 and torch.equal(fresh.weight, torch.ones(6))
    x = torch.randn(4, 6, dtype=F64)
    ref = nn.LayerNorm(6, elementwise_affine=False, dtype=F64)
    torch.testing.assert_close(LayerNorm.from_torch(ref).double()(x), ref(x), **TIGHT)
    nobias = _randomise(nn.LayerNorm(6, bias=False, dtype=F64), 3)
    torch.testing.assert_close(LayerNorm.from_torch(nobias)(x), nobias(x), **TIGHT)
    y = LayerNorm(6).double()(x)  # per row: mean 0, biased variance 1 (up to eps)
    torch.testing.assert_close(y.mean(-1), torch.zeros(4, dtype=F64), atol=1e-12, rtol=0)
    torch.testing.assert_close(y.var(-1, correction=0), torch.ones(4, dtype=F64),
                               atol=1e-4, rtol=0)


def test_layernorm_validation():
    ln = LayerNorm(4)
    with pytest.raises(ValueError, match=r"x must have shape \(\.\.\., d=4\)"):
        ln(torch.randn(2, 3))
    with pytest.raises(TypeError, match="same dtype"):
        ln(torch.randn(2, 4, dtype=F64))
    with pytest.raises(TypeError, match="x must be a torch.Tensor"):
        ln(np.zeros((2, 4)))
    with pytest.raises(ValueError, match="eps must be positive"):
        LayerNorm(4, eps=0.0)
    with pytest.raises(TypeError, match="torch.nn.LayerNorm"):
        LayerNorm.from_torch(nn.Linear(2, 2))
    with pytest.raises(ValueError, match="one \\(the last\\) axis"):
        LayerNorm.from_torch(nn.LayerNorm([2, 3]))


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
    _randomise(ref, 1)
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
    _randomise(ref, 2)
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
    model = _randomise(Transformer(SRC_V, TGT_V, 8, 2, 2, 16, norm_first=norm_first,
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
    model = _randomise(Transformer(SRC_V, TGT_V, 8, 2, 2, 16, norm_first=norm_first), 6)
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


# --------------------------------------------------------------------------- warm-up


def test_noam_rate_is_the_papers_formula():
    d, w = 512, 4000
    for step in (1, 10, 3999, 4000, 4001, 100_000):
        want = d ** -0.5 * min(step ** -0.5, step * w ** -1.5)
        assert noam_rate(step, d, w) == pytest.approx(want, rel=1e-15)
    rates = [noam_rate(n, d, w) for n in range(1, 10_000)]
    assert int(np.argmax(rates)) + 1 == w  # the peak is at step w
    assert noam_rate(4000, 512, 4000, factor=2.0) == pytest.approx(2 * (512 * 4000) ** -0.5)
    with pytest.raises(ValueError, match="step must be positive"):
        noam_rate(0, d, w)


def test_linear_warmup_rate():
    steps, w = 10, 4
    rates = [linear_warmup_rate(k, steps, w) for k in range(steps)]
    assert rates[:4] == pytest.approx([0.25, 0.5, 0.75, 1.0])
    assert rates[4] == pytest.approx(1.0) and rates[-1] == pytest.approx(1 / 6)
    assert [linear_warmup_rate(k, steps, 0) for k in range(steps)] == pytest.approx(
        [1 - k / steps for k in range(steps)])  # w = 0: the decay of seqlearn.train.fit
    with pytest.raises(ValueError, match="step must be at most 9"):
        linear_warmup_rate(10, steps, w)
    with pytest.raises(ValueError, match="warmup must be at most 9"):
        linear_warmup_rate(0, steps, 10)


def test_fit_scheduled_uses_the_schedule_and_learns():
    torch.manual_seed(8)
    model = nn.Linear(3, 1).double()
    x = torch.randn(32, 3, dtype=F64)
    y = x @ torch.tensor([[1.0], [-2.0], [0.5]], dtype=F64)
    seen = []

    def loss(m, batch):
        return (m(batch[0]) - batch[1]).pow(2).mean()

    def schedule(k):
        seen.append(k)
        return linear_warmup_rate(k, 200, 10)

    losses = fit_scheduled(model, lambda k: (x, y), 200, loss=loss, lr=0.05, schedule=schedule)
    assert seen == list(range(200)) and len(losses) == 200
    assert losses[-1] < 1e-3 * losses[0]
    # Adam's first update is lr * sign(gradient) in every coordinate, whatever its size
    model = nn.Linear(3, 1).double()
    before = [p.detach().clone() for p in model.parameters()]
    fit_scheduled(model, lambda k: (x, y), 1, loss=loss, lr=1e-3, clip=None)
    for p, p0 in zip(model.parameters(), before):
        torch.testing.assert_close((p - p0).abs(), torch.full_like(p, 1e-3), rtol=1e-6, atol=0)
    with pytest.raises(TypeError, match="schedule must be callable"):
        fit_scheduled(model, lambda k: (x, y), 1, loss=loss, lr=0.1, schedule=0.5)
    with pytest.raises(ValueError, match="lr must be positive"):
        fit_scheduled(model, lambda k: (x, y), 1, loss=loss, lr=0.0)
    with pytest.raises(ValueError, match="warm up longer"):
        fit_scheduled(model, lambda k: (x * float("nan"), y), 1, loss=loss, lr=0.1)


@pytest.mark.parametrize("betas", [(0.9, 0.999), (0.9, 0.98), (0.0, 0.5)])
def test_adam_moments_replay_torch_adam(betas):
    torch.manual_seed(9)
    grads = torch.randn(3, 6, 5, dtype=F64) * torch.logspace(-4, 1, 5, dtype=F64)  # (runs, N, P)
    rate, step = adam_moments(grads, betas=betas, eps=1e-8)
    assert rate.shape == step.shape == grads.shape
    for r in range(3):  # reference: torch.optim.Adam at lr 1, fed the same gradients
        theta = torch.zeros(5, dtype=F64, requires_grad=True)
        adam = torch.optim.Adam([theta], lr=1.0, betas=betas, eps=1e-8)
        for n in range(6):
            before = theta.detach().clone()
            theta.grad = grads[r, n].clone()
            adam.step()
            torch.testing.assert_close(before - theta.detach(), step[r, n], rtol=1e-10,
                                       atol=1e-14)
    torch.testing.assert_close(step[:, 0], grads[:, 0].sign() * (1 - 1e-8 * rate[:, 0]))
    with pytest.raises(ValueError, match="betas"):
        adam_moments(grads, betas=(1.0, 0.9))
    with pytest.raises(ValueError, match="eps"):
        adam_moments(grads, eps=0.0)
    with pytest.raises(ValueError, match="grads"):
        adam_moments(grads[0, 0])
