"""seqlearn.seq2seq against per-example loops of the equations with torch.nn layers (float64)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from seqlearn import gated
from seqlearn.data import Seq2SeqBatch, Vocab, seq2seq_batch, string_pairs
from seqlearn.seq2seq import (INITS, SCORES, Seq2Seq, exact_match, fit_seq2seq,
                              greedy_exact_match, masked_cross_entropy)

F64 = torch.float64
SRC, TGT = Vocab("abcde"), Vocab("xyz")
SETTINGS = settings(max_examples=6, deadline=None)


def _model(score, bidirectional=True, init="learned", seed=0, hidden=4) -> Seq2Seq:
    torch.manual_seed(seed)
    return Seq2Seq(SRC, TGT, hidden, score=score, bidirectional=bidirectional, init=init,
                   embedding=3).double()


def _batch(seed: int, B: int = 3, **widths) -> Seq2SeqBatch:
    rng = np.random.default_rng(seed)
    pairs = [("".join(rng.choice(list("abcde"), rng.integers(1, 6))),
              "".join(rng.choice(list("xyz"), rng.integers(0, 5)))) for _ in range(B)]
    return seq2seq_batch(pairs, SRC, TGT, **widths)


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
             "parameter": model.s0, "learned": torch.tanh(model.init_proj(c_fixed))
             if model.init_proj is not None else None}[model.init]
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
    model = _model(score, bidirectional, init, seed)
    batch = _batch(seed, src_width=7)  # extra source padding must be ignored
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
    model = _model(score, bidirectional, seed=seed)
    tight = _batch(seed)
    wide = _batch(seed, src_width=tight.src.shape[1] + more_src,
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
    model = _model(score, seed=3)
    twin = model.to_seqlearn()
    assert isinstance(twin.encoder_fwd, gated.GRU) and isinstance(twin.decoder, gated.GRU)
    batch = _batch(4, B=4, src_width=6)
    for a, b in zip(model(batch.src, batch.src_lengths, batch.tgt_in),
                    twin(batch.src, batch.src_lengths, batch.tgt_in)):
        if a is None:
            assert b is None
        else:
            torch.testing.assert_close(a, b, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("score", [None, "scaled_dot"])
def test_greedy_decode_feeds_back_its_own_argmax(score):
    model = _model(score, seed=5)
    batch = _batch(6, B=5)
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


def test_masked_cross_entropy_equals_a_loop():
    g = torch.Generator().manual_seed(0)
    logits = torch.randn(3, 4, 5, dtype=F64, generator=g)
    target = torch.randint(0, 5, (3, 4), generator=g)
    mask = torch.tensor([[1, 1, 0, 0], [1, 1, 1, 1], [1, 0, 0, 0]], dtype=torch.bool)
    terms = [-torch.log_softmax(logits[b, t], -1)[target[b, t]]
             for b in range(3) for t in range(4) if mask[b, t]]
    torch.testing.assert_close(masked_cross_entropy(logits, target, mask),
                               torch.stack(terms).mean())
    logits[~mask] = float("nan")  # padded logits never reach the loss
    assert torch.isfinite(masked_cross_entropy(logits, target, mask))
    with pytest.raises(TypeError, match="bool"):
        masked_cross_entropy(logits, target, mask.long())
    with pytest.raises(ValueError, match="at least one token"):
        masked_cross_entropy(logits, target, torch.zeros_like(mask))
    with pytest.raises(ValueError, match="ids in"):
        masked_cross_entropy(logits, target + 5, mask)
    with pytest.raises(ValueError, match="shape"):
        masked_cross_entropy(logits, target[:, :3], mask)


def test_exact_match_cuts_at_the_first_eos():
    eos = 2
    target = torch.tensor([[5, 6, 2, 0], [5, 2, 0, 0], [5, 6, 7, 2], [4, 2, 0, 0]])
    tokens = torch.tensor([[5, 6, 2], [5, 2, 9], [5, 6, 7], [4, 3, 2]])
    assert exact_match(tokens, target, eos).tolist() == [True, True, False, False]
    assert exact_match(target, target, eos).all()
    with pytest.raises(TypeError, match="LongTensor"):
        exact_match(tokens.int(), target, eos)
    with pytest.raises(ValueError, match="shape"):
        exact_match(tokens[:2], target, eos)


def test_inputs_are_validated():
    model = _model("additive")
    batch = _batch(0)
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


def test_training_learns_to_reverse_short_strings():
    torch.manual_seed(0)
    v = Vocab("abc")
    rng = np.random.default_rng(0)
    model = Seq2Seq(v, v, 16, score="additive", embedding=8)
    losses = fit_seq2seq(model, lambda step: seq2seq_batch(
        string_pairs(32, rng, min_len=2, max_len=2, alphabet="abc"), v, v), 40, lr=2e-2)
    assert np.mean(losses[-5:]) < 0.3 * np.mean(losses[:5])
    test = seq2seq_batch(string_pairs(50, np.random.default_rng(1), min_len=2, max_len=2,
                                      alphabet="abc"), v, v)
    assert float(greedy_exact_match(model, test).float().mean()) > 0.9
    with pytest.raises(TypeError, match="callable"):
        fit_seq2seq(model, None, 1)
    with pytest.raises(ValueError, match="positive"):
        fit_seq2seq(model, lambda s: test, 1, lr=0.0)
    with pytest.raises(TypeError, match="Seq2SeqBatch"):
        fit_seq2seq(model, lambda s: tuple(test), 1)


def test_decay_is_linear_to_zero(monkeypatch):
    model = _model(None)
    batch = _batch(0)
    seen = []
    real_step = torch.optim.Adam.step

    def spy(self, *args, **kwargs):
        seen.append(self.param_groups[0]["lr"])
        return real_step(self, *args, **kwargs)

    monkeypatch.setattr(torch.optim.Adam, "step", spy)
    fit_seq2seq(model, lambda s: batch, 4, lr=0.1, decay=True)
    fit_seq2seq(model, lambda s: batch, 2, lr=0.1)
    np.testing.assert_allclose(seen, [0.1, 0.075, 0.05, 0.025, 0.1, 0.1])
