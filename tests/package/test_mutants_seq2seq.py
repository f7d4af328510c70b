"""seqlearn.seq2seq: copies, what the training helper hands to the loop, defaults and the exact
wording of each validation error.

These tests close the gaps that mutation testing (``tools/mutation.py package``) found in
test_seq2seq.py. Adam divides each step by the gradient's running size, so clipping hardly
changes a short training run: whether ``clip`` arrives is checked by watching
``torch.nn.utils.clip_grad_norm_``.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

from seqlearn import gated
from seqlearn.data import Vocab, seq2seq_batch
from seqlearn.seq2seq import (Seq2Seq, exact_match, fit_seq2seq, greedy_exact_match,
                              masked_cross_entropy)

F64 = torch.float64
SRC, TGT = Vocab("abcde"), Vocab("xyz")


def _batch(seed=0, B=3):
    rng = np.random.default_rng(seed)
    pairs = [("".join(rng.choice(list("abcde"), rng.integers(1, 6))),
              "".join(rng.choice(list("xyz"), rng.integers(0, 5)))) for _ in range(B)]
    return seq2seq_batch(pairs, SRC, TGT)


def _model(**kwargs):
    torch.manual_seed(0)
    return Seq2Seq(SRC, TGT, 4, embedding=3, **kwargs).double()


def test_to_seqlearn_leaves_the_original_model_alone():
    model = _model(score="additive")
    twin = model.to_seqlearn()
    for name in ("encoder_fwd", "encoder_bwd", "decoder"):
        assert type(getattr(model, name)) is nn.GRU
        assert type(getattr(twin, name)) is gated.GRU
    assert twin.src_embed.weight is not model.src_embed.weight  # a copy, not shared
    with torch.no_grad():
        twin.src_embed.weight.add_(1.0)
    assert not torch.equal(twin.src_embed.weight, model.src_embed.weight)


def test_defaults():
    model = _model()
    assert model.bidirectional and model.init == "learned" and model.score is None
    assert model.max_src_len == 64 and model.src_embed.embedding_dim == 3
    assert Seq2Seq(SRC, TGT, 6).src_embed.embedding_dim == 6  # embedding defaults to hidden


def spy_on_clipping(monkeypatch):
    thresholds = []
    real = torch.nn.utils.clip_grad_norm_

    def spy(parameters, max_norm, *args, **kwargs):
        thresholds.append(max_norm)
        return real(parameters, max_norm, *args, **kwargs)

    monkeypatch.setattr(torch.nn.utils, "clip_grad_norm_", spy)
    return thresholds


def test_fit_seq2seq_hands_clip_to_the_loop(monkeypatch):
    model, batch = _model(), _batch()
    thresholds = spy_on_clipping(monkeypatch)
    fit_seq2seq(model, lambda s: batch, 2)
    assert thresholds == [1.0, 1.0]  # the default
    thresholds.clear()
    fit_seq2seq(model, lambda s: batch, 2, clip=0.25)
    assert thresholds == [0.25, 0.25]
    thresholds.clear()
    fit_seq2seq(model, lambda s: batch, 2, clip=None)
    assert thresholds == []


@pytest.mark.parametrize("call, error, match", [
    (lambda m, b: fit_seq2seq("model", lambda s: b, 1), TypeError,
     r"^model must be a Seq2Seq, got str$"),
    (lambda m, b: fit_seq2seq(m, lambda s: tuple(b), 1), TypeError,
     r"^batches\(step\) must return a Seq2SeqBatch, got tuple$"),
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
     r"^init must be one of \('zero', 'parameter', 'mean', 'last', 'learned'\), "
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
    (lambda m, b: masked_cross_entropy(torch.zeros(3, 2, 6), b.tgt_out[:, :2],
                                       torch.ones(3, 2)), TypeError,
     r"^mask must be a bool tensor \(True = token\), got dtype torch\.float32$"),
    (lambda m, b: masked_cross_entropy(torch.zeros(3, 2, 6), b.tgt_out[:, :2],
                                       torch.zeros(3, 2, dtype=torch.bool)), ValueError,
     r"^mask must mark at least one token, got none$"),
    (lambda m, b: masked_cross_entropy(torch.zeros(3, 2, 6), b.tgt_out[:, :2],
                                       torch.ones(3, 3, dtype=torch.bool)), ValueError,
     r"^mask must have shape \(B=3, T=2\)"),
    (lambda m, b: masked_cross_entropy(torch.zeros(3, 2, 6), b.tgt_out[:2, :2],
                                       torch.ones(3, 2, dtype=torch.bool)), ValueError,
     r"^target must have shape \(B=3, T=2\)"),
    (lambda m, b: masked_cross_entropy(torch.zeros(3, 2, 6).long(), b.tgt_out[:, :2],
                                       torch.ones(3, 2, dtype=torch.bool)), TypeError,
     r"^logits must be a floating-point tensor"),
    (lambda m, b: masked_cross_entropy(torch.zeros(3, 2), b.tgt_out[:, :2],
                                       torch.ones(3, 2, dtype=torch.bool)), ValueError,
     r"^logits must have shape \(B, T, V\)"),
    (lambda m, b: exact_match(b.tgt_out.int(), b.tgt_out, 2), TypeError,
     r"^tokens must be a LongTensor, got dtype torch\.int32$"),
    (lambda m, b: exact_match(b.tgt_out, b.tgt_out.int(), 2), TypeError,
     r"^target must be a LongTensor, got dtype torch\.int32$"),
    (lambda m, b: exact_match(b.tgt_out[0], b.tgt_out, 2), ValueError,
     r"^tokens must have shape \(B, T\), got \(\d+,\)$"),
    (lambda m, b: exact_match(b.tgt_out, b.tgt_out[:2], 2), ValueError,
     r"^target must have shape \(B=3, T\)"),
    (lambda m, b: exact_match(b.tgt_out, b.tgt_out, -1), ValueError, r"^eos must be at least 0"),
])
def test_seq2seq_error_messages(call, error, match):
    model, batch = _model(score="dot"), _batch()
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
