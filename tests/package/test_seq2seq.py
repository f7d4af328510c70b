"""seqlearn.seq2seq against per-example loops of the equations with torch.nn layers
(float64); copies, defaults and the wording of each error; properties at random sizes.
(Its loss and exact match are tested in test_losses.py, its training loop in
test_train.py.)"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st
from torch import nn

from properties import covers, not_bools, refuses, seeds
from seqlearn import gated, losses, scores, seq2seq, train
from seqlearn.data import Seq2SeqBatch, strings, vocab
from seqlearn.losses import masked_cross_entropy
from seqlearn.seq2seq import INITS, SCORES, Seq2Seq, greedy_exact_match
from toy_seq2seq import SRC, TGT, toy_batch, toy_model


F64 = torch.float64
SETTINGS = settings(max_examples=6, deadline=None)


def _gru(module: nn.GRU, reverse: bool = False) -> nn.GRUCell:
    cell = nn.GRUCell(module.input_size, module.hidden_size).double()
    cell.load_state_dict({k.replace("_l0", ""): v for k, v in module.state_dict().items()})
    return cell


def _reference(model: Seq2Seq, batch: Seq2SeqBatch) -> tuple[torch.Tensor, torch.Tensor]:
    """Logits and weights, one example at a time without any padding (the module docstring)."""
    B, S = batch.src.shape
    T = batch.tgt_in.shape[1]
    dec = _gru(model.decoder)
    logits = torch.zeros(B, T, len(TGT), dtype=F64)
    weights = torch.zeros(B, T, S, dtype=F64)
    for b in range(B):
        L = int(batch.src_lengths[b])
        x = model.src_embed(batch.src[b, :L])  # (L, E)
        fwd_cell, h = _gru(model.encoder_fwd), torch.zeros(model.encoder_fwd.hidden_size, dtype=F64)
        fwd = []
        for i in range(L):
            h = fwd_cell(x[i], h)
            fwd.append(h)
        states = [[f] for f in fwd]
        code = [fwd[-1]]
        if model.bidirectional:
            bwd_cell, h = _gru(model.encoder_bwd), torch.zeros_like(h)
            bwd = [None] * L
            for i in reversed(range(L)):
                h = bwd_cell(x[i], h)
                bwd[i] = h
            states = [[f, g] for f, g in zip(fwd, bwd)]
            code.append(bwd[0])
        H = torch.stack([torch.cat(s) for s in states])  # (L, H)
        c_fixed = torch.cat(code)
        s = {"zero": torch.zeros_like(c_fixed), "last": c_fixed, "mean": H.mean(0),
             "parameter": model.s0}.get(model.init)
        if model.init in ("learned", "learned_mean"):  # tanh(W_s v + b_s) by hand
            v = c_fixed if model.init == "learned" else H.mean(0)
            W_s, b_s = model.init_proj.weight, model.init_proj.bias
            s = torch.tanh(sum(W_s[:, j] * v[j] for j in range(len(v))) + b_s)
        for t in range(T):
            emb = model.tgt_embed(batch.tgt_in[b, t])
            if model.score is None:
                c = c_fixed
            else:
                e = torch.stack([model.score(s[None, None], H[None, i:i + 1])[0, 0, 0]
                                 for i in range(L)])
                alpha = torch.exp(e - e.max()) / torch.exp(e - e.max()).sum()
                weights[b, t, :L] = alpha
                c = (alpha[:, None] * H).sum(0)
            s = dec(torch.cat([emb, c]), s)
            logits[b, t] = model.out(torch.cat([s, c, emb]))
    return logits, weights


@SETTINGS
@given(st.sampled_from([None, *SCORES]), st.booleans(), st.sampled_from(INITS),
       st.integers(0, 2**16))
def test_forward_equals_the_per_example_loop(score, bidirectional, init, seed):
    model = toy_model(score, bidirectional, init, seed)
    batch = toy_batch(seed, src_width=7)  # extra source padding must be ignored
    logits, weights = model(batch.src, batch.src_lengths, batch.tgt_in)
    ref_logits, ref_weights = _reference(model, batch)
    torch.testing.assert_close(logits, ref_logits, rtol=1e-10, atol=1e-10)
    if score is None:
        assert weights is None
    else:
        torch.testing.assert_close(weights, ref_weights, rtol=1e-10, atol=1e-10)
        assert bool((weights[~batch.src_mask[:, None, :].expand_as(weights)] == 0).all())


@SETTINGS
@given(st.sampled_from([None, "additive", "location", "dot"]), st.booleans(),
       st.integers(0, 2**16), st.integers(0, 3), st.integers(0, 3))
def test_padding_changes_neither_loss_nor_gradient(score, bidirectional, seed, more_src, more_tgt):
    model = toy_model(score, bidirectional, seed=seed)
    tight = toy_batch(seed)
    wide = toy_batch(seed, src_width=tight.src.shape[1] + more_src,
                  tgt_width=tight.tgt_in.shape[1] + more_tgt)
    grads = []
    for batch in (tight, wide):
        model.zero_grad()
        logits, _ = model(batch.src, batch.src_lengths, batch.tgt_in)
        loss = masked_cross_entropy(logits, batch.tgt_out, batch.tgt_mask)
        loss.backward()
        grads.append((loss.detach(), [p.grad.clone() for p in model.parameters()]))
    torch.testing.assert_close(grads[0][0], grads[1][0], rtol=1e-12, atol=1e-12)
    for a, b in zip(grads[0][1], grads[1][1]):
        torch.testing.assert_close(a, b, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("score", [None, "general"])
def test_seqlearn_layers_give_the_same_model(score):
    model = toy_model(score, seed=3)
    twin = model.to_seqlearn()
    assert isinstance(twin.encoder_fwd, gated.GRU) and isinstance(twin.decoder, gated.GRU)
    batch = toy_batch(4, B=4, src_width=6)
    for a, b in zip(model(batch.src, batch.src_lengths, batch.tgt_in),
                    twin(batch.src, batch.src_lengths, batch.tgt_in)):
        if a is None:
            assert b is None
        else:
            torch.testing.assert_close(a, b, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("score", [None, "scaled_dot"])
def test_greedy_decode_feeds_back_its_own_argmax(score):
    model = toy_model(score, seed=5)
    batch = toy_batch(6, B=5)
    tokens, weights = model.greedy_decode(batch.src, batch.src_lengths, 6)
    assert tokens.dtype == torch.long and tokens.shape[0] == 5 and tokens.shape[1] <= 6
    tgt_in = torch.cat([torch.full((5, 1), TGT.bos), tokens[:, :-1]], 1)
    tgt_in = tgt_in.masked_fill(tgt_in == TGT.pad, TGT.bos)  # any valid id after <eos>
    logits, w = model(batch.src, batch.src_lengths, tgt_in)
    for b in range(5):
        ended = (tokens[b] == TGT.eos).nonzero()
        n = int(ended[0]) + 1 if len(ended) else tokens.shape[1]
        assert torch.equal(logits[b, :n].argmax(-1), tokens[b, :n])
        assert bool((tokens[b, n:] == TGT.pad).all())
        if score is not None:
            torch.testing.assert_close(weights[b, :n], w[b, :n])
            assert bool((weights[b, n:] == 0).all())
    if tokens.shape[1] < 6:  # stopped early: every row has ended
        assert bool((tokens == TGT.eos).any(1).all())


def test_inputs_are_validated():
    model = toy_model("additive")
    batch = toy_batch(0)
    src, lengths, tgt_in = batch.src, batch.src_lengths, batch.tgt_in
    with pytest.raises(TypeError, match="LongTensor"):
        model(src.int(), lengths, tgt_in)
    with pytest.raises(ValueError, match=r"src_lengths must lie in \[1, S"):
        model(src, lengths * 0, tgt_in)
    with pytest.raises(ValueError, match=r"src_lengths must lie in \[1, S"):
        model(src, lengths + src.shape[1], tgt_in)
    with pytest.raises(ValueError, match="src_lengths must have shape"):
        model(src, lengths[:2], tgt_in)
    with pytest.raises(TypeError, match="integer"):
        model(src, lengths.bool(), tgt_in)
    with pytest.raises(ValueError, match=r"ids in \[0, 8\)"):
        model(src + 8, lengths, tgt_in)
    with pytest.raises(ValueError, match=r"ids in \[0, 6\)"):
        model(src, lengths, tgt_in + 6)
    with pytest.raises(ValueError, match="tgt_in must have shape"):
        model(src, lengths, tgt_in[:1])
    with pytest.raises(ValueError, match="max_len must be positive"):
        model.greedy_decode(src, lengths, 0)
    with pytest.raises(ValueError, match="score must be"):
        Seq2Seq(SRC, TGT, 4, score="cosine")
    with pytest.raises(ValueError, match="init must be"):
        Seq2Seq(SRC, TGT, 4, init="random")
    with pytest.raises(ValueError, match="even"):
        Seq2Seq(SRC, TGT, 5)
    with pytest.raises(TypeError, match="bidirectional must be a bool"):
        Seq2Seq(SRC, TGT, 4, bidirectional=1)
    with pytest.raises(TypeError, match="src_vocab"):
        Seq2Seq("abc", TGT, 4)
    loc = Seq2Seq(SRC, TGT, 4, score="location", max_src_len=2)
    with pytest.raises(ValueError, match="max_src_len"):
        loc(src, lengths.clamp(max=2), tgt_in.long())


def test_learned_mean_maps_the_mean_of_the_real_states_not_the_code():
    """The CMU 11-785 notes' fourth rule: s_0 = tanh(W_s mean_i h_i + b_s), the mean over
    the real positions only; it differs from the map of the code and of the padded mean."""
    model = toy_model(None, True, "learned_mean", 3)
    batch = toy_batch(3, B=4, src_width=8)
    states, code, mask = model.encode(batch.src, batch.src_lengths)
    s0 = model.initial_state(states, code, mask)
    W_s, b_s = model.init_proj.weight, model.init_proj.bias
    for b in range(4):
        L = int(batch.src_lengths[b])
        mean = states[b, :L].sum(0) / L
        want = torch.tanh(W_s @ mean + b_s)
        torch.testing.assert_close(s0[b], want, rtol=1e-12, atol=1e-12)
        assert not torch.allclose(s0[b], torch.tanh(W_s @ code[b] + b_s))
        if L < 8:
            padded = torch.tanh(W_s @ states[b].mean(0) + b_s)
            assert not torch.allclose(s0[b], padded)


# --------------------------------------- copies, defaults and the wording of each error


def test_to_seqlearn_leaves_the_original_model_alone():
    model = toy_model(score="additive")
    twin = model.to_seqlearn()
    for name in ("encoder_fwd", "encoder_bwd", "decoder"):
        assert type(getattr(model, name)) is nn.GRU
        assert type(getattr(twin, name)) is gated.GRU
    assert twin.src_embed.weight is not model.src_embed.weight  # a copy, not shared
    with torch.no_grad():
        twin.src_embed.weight.add_(1.0)
    assert not torch.equal(twin.src_embed.weight, model.src_embed.weight)


def test_defaults():
    model = toy_model()
    assert model.bidirectional and model.init == "learned" and model.score is None
    assert model.max_src_len == 64 and model.src_embed.embedding_dim == 3
    assert Seq2Seq(SRC, TGT, 6).src_embed.embedding_dim == 6  # embedding defaults to hidden


@pytest.mark.parametrize("call, error, match", [
    (lambda m, b: greedy_exact_match("model", b), TypeError,
     r"^model must be a Seq2Seq, got str$"),
    (lambda m, b: greedy_exact_match(m, tuple(b)), TypeError,
     r"^batch must be a Seq2SeqBatch, got tuple$"),
    (lambda m, b: Seq2Seq("abc", TGT, 4), TypeError,
     r"^src_vocab must be an int \(the vocabulary's size\) or a seqlearn\.data\.Vocab, got str$"),
    (lambda m, b: Seq2Seq(SRC, "xyz", 4), TypeError,
     r"^tgt_vocab must be an int \(the vocabulary's size\) or a seqlearn\.data\.Vocab, got str$"),
    (lambda m, b: Seq2Seq(SRC, TGT, 0), ValueError, r"^hidden must be positive"),
    (lambda m, b: Seq2Seq(SRC, TGT, 5), ValueError,
     r"^hidden must be even with bidirectional=True \(hidden // 2 per direction\), got 5$"),
    (lambda m, b: Seq2Seq(SRC, TGT, 4, init="random"), ValueError,
     r"^init must be one of \('zero', 'parameter', 'mean', 'last', 'learned', "
     r"'learned_mean'\), "
     r"got 'random'$"),
    (lambda m, b: Seq2Seq(SRC, TGT, 4, score="cosine"), ValueError,
     r"^score must be None, an nn\.Module or one of \('dot', "),
    (lambda m, b: Seq2Seq(SRC, TGT, 4, embedding=0), ValueError, r"^embedding must be positive"),
    (lambda m, b: Seq2Seq(SRC, TGT, 4, max_src_len=0), ValueError,
     r"^max_src_len must be positive"),
    (lambda m, b: Seq2Seq(SRC, TGT, 4, bidirectional=1), TypeError,
     r"^bidirectional must be a bool"),
    (lambda m, b: m(b.src, b.src_lengths.tolist(), b.tgt_in), TypeError,
     r"^src_lengths must be a torch\.Tensor, got list$"),
    (lambda m, b: m(b.src, b.src_lengths.bool(), b.tgt_in), TypeError,
     r"^src_lengths must be an integer tensor, got dtype torch\.bool$"),
    (lambda m, b: m(b.src, b.src_lengths.double(), b.tgt_in), TypeError,
     r"^src_lengths must be an integer tensor, got dtype torch\.float64$"),
    (lambda m, b: m(b.src, b.src_lengths[:2], b.tgt_in), ValueError,
     r"^src_lengths must have shape \(B=3\)"),
    (lambda m, b: m(b.src, b.src_lengths * 0, b.tgt_in), ValueError,
     r"^src_lengths must lie in \[1, S=\d+\], got \[0, 0, 0\]$"),
    (lambda m, b: m(b.src, b.src_lengths, b.tgt_in[:1]), ValueError,
     r"^tgt_in must have shape \(B=3, T\)"),
    (lambda m, b: m(b.src, b.src_lengths, b.tgt_in + 6), ValueError,
     r"^tgt_in must hold ids in \[0, 6\)"),
    (lambda m, b: m.greedy_decode(b.src, b.src_lengths, 0), ValueError,
     r"^max_len must be positive"),
])
def test_seq2seq_error_messages(call, error, match):
    model, batch = toy_model(score="dot"), toy_batch()
    with pytest.raises(error, match=match):
        call(model, batch)


def test_location_score_accepts_exactly_max_src_len_positions():
    torch.manual_seed(0)
    model = Seq2Seq(SRC, TGT, 4, score="location", max_src_len=3).double()
    src = torch.tensor([[3, 4, 5], [3, 4, 0]])
    logits, weights = model(src, torch.tensor([3, 2]), torch.tensor([[1, 3], [1, 4]]))
    assert logits.shape == (2, 2, len(TGT)) and weights.shape == (2, 2, 3)
    with pytest.raises(ValueError, match=r"^src has S=4 positions, more than max_src_len=3 of "
                                         r"the location score$"):
        model(torch.tensor([[3, 4, 5, 6]]), torch.tensor([4]), torch.tensor([[1]]))


# ---------------------------------------------- properties at random sizes (hypothesis)


SRC4, TGT2 = vocab.Vocab("abcd"), vocab.Vocab("ab")


@covers("seqlearn.seq2seq.Seq2Seq", "seqlearn.losses.masked_cross_entropy",
        "seqlearn.losses.exact_match", "seqlearn.seq2seq.greedy_exact_match",
        "seqlearn.train.fit_seq2seq")
@given(seed=seeds, score=st.sampled_from([None, *seq2seq.SCORES]),
       init=st.sampled_from(seq2seq.INITS), flag=not_bools)
def test_seq2seq_shapes_masks_and_loss(seed, score, init, flag):
    torch.manual_seed(seed % 1000)
    rng = np.random.default_rng(seed)
    model = seq2seq.Seq2Seq(SRC4, TGT2, 4, score=score, init=init, embedding=2).double()
    pairs = [(s, t[: 1 + i % 2]) for i, (s, t) in
             enumerate(strings.string_pairs(3, rng, min_len=1, max_len=4, alphabet="ab"))]
    batch = vocab.seq2seq_batch(pairs, SRC4, TGT2)
    logits, weights = model(batch.src, batch.src_lengths, batch.tgt_in)
    B, S = batch.src.shape
    assert logits.shape == (B, batch.tgt_in.shape[1], len(TGT2))
    if score is None:
        assert weights is None
    else:  # each row is a distribution over the real source positions only
        torch.testing.assert_close(weights.sum(-1), torch.ones(B, weights.shape[1], dtype=weights.dtype))
        assert bool((weights.masked_select(~batch.src_mask[:, None, :]) == 0).all())
    loss = losses.masked_cross_entropy(logits, batch.tgt_out, batch.tgt_mask)
    ref = torch.nn.functional.cross_entropy(logits.flatten(0, 1), batch.tgt_out.flatten(),
                                            ignore_index=TGT2.pad)  # torch's padding-aware mean
    torch.testing.assert_close(loss, ref)
    ok = seq2seq.greedy_exact_match(model, batch)
    tokens, _ = model.greedy_decode(batch.src, batch.src_lengths, batch.tgt_out.shape[1])
    assert ok.tolist() == [TGT2.decode(tokens[b][: (tokens[b] == TGT2.eos).nonzero()[0, 0] + 1])
                           == t if bool((tokens[b] == TGT2.eos).any()) else False
                           for b, (_, t) in enumerate(pairs)]
    assert bool(losses.exact_match(batch.tgt_out, batch.tgt_out, TGT2.eos).all())
    trace = train.fit_seq2seq(model, lambda step: batch, 1)
    assert len(trace) == 1 and np.isfinite(trace[0])
    refuses(seq2seq.Seq2Seq, SRC4, TGT2, 4, bidirectional=flag)
    refuses(model, batch.src.float(), batch.src_lengths, batch.tgt_in)
    refuses(model, batch.src, batch.src_lengths + S, batch.tgt_in)
    refuses(seq2seq.masked_cross_entropy, logits, batch.tgt_out, batch.tgt_mask.long())
    refuses(train.fit_seq2seq, model, lambda step: batch, 1, lr=-1.0)
    refuses(train.fit_seq2seq, model, lambda step: batch, 1, decay=flag)
    refuses(train.fit_seq2seq, model, lambda step: batch.src, 1)


def test_parts_of_the_wrong_size_are_refused_at_construction():
    """A score module or an encoder factory whose sizes disagree with ``hidden`` is
    refused by name when the model is built, not blamed later on ``q`` or left to a
    matrix-product error inside torch."""
    with pytest.raises(ValueError, match="score must accept inputs of shape"):
        Seq2Seq(10, 10, 8, score=scores.AdditiveScore(5, 7, 4))
    with pytest.raises(ValueError, match=r"encoder\(8, 4\) must give outputs of width 4"):
        Seq2Seq(10, 10, 8, encoder=lambda i, h: nn.GRU(i, h + 1, batch_first=True))
    model = Seq2Seq(10, 10, 8, score=scores.AdditiveScore(8, 8, 4),
                    encoder=lambda i, h: nn.GRU(i, h, batch_first=True))
    assert model.training and model.score.training     # the probe leaves the mode alone
