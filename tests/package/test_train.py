"""seqlearn.train: the loops that train the book's models. ``fit`` learns, refuses bad
thresholds, schedules and non-finite losses or gradients; ``fit_seq2seq`` trains the
encoder-decoder (it learns to reverse short strings, decays the rate linearly) and
``fit_memn2n`` the memory network (linear start, the paper's clipping); what each hands
to the loop and the wording of each error."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, strategies as st
from torch import nn

from properties import covers, refuses, seeds
from seqlearn import train
from seqlearn.data import (Vocab, encode_stories, seq2seq_batch, stories, story_vocab,
                           string_pairs)
from seqlearn.memory import MemN2N
from seqlearn.recurrent import ElmanRNN
from seqlearn.seeding import seed_all
from seqlearn.seq2seq import Seq2Seq, greedy_exact_match
from seqlearn.train import SequenceClassifier, accuracy, fit, fit_memn2n, fit_seq2seq
from toy_seq2seq import toy_batch, toy_model


def test_fit_learns_the_sign_of_the_sum():
    """A tiny torch.nn.RNN learns whether the inputs sum to a positive number."""
    g = seed_all(0)
    model = SequenceClassifier(torch.nn.RNN(1, 8, batch_first=True), 8, 2)

    def batch(step):
        x = torch.randn(64, 5, 1, generator=g)
        return x, (x.sum(dim=(1, 2)) > 0).long()

    losses = fit(model, batch, steps=150, lr=0.02)
    x, y = batch(0)
    assert sum(losses[-10:]) / 10 < 0.5 * sum(losses[:10]) / 10
    assert accuracy(model, x, y) > 0.85
    assert model.training


def test_errors():
    model = SequenceClassifier(torch.nn.RNN(1, 4, batch_first=True), 4, 2)
    with pytest.raises(ValueError, match="steps"):
        fit(model, lambda s: None, steps=0)
    with pytest.raises(ValueError, match=r"x must have shape \(B, T, D\)"):
        model(torch.zeros(3, 4))
    with pytest.raises(TypeError):
        model(torch.zeros(3, 4, 1, dtype=torch.long))
    with pytest.raises(ValueError, match="labels must have shape"):
        accuracy(model, torch.zeros(3, 4, 1), torch.zeros(2, dtype=torch.long))


def test_fit_refuses_a_non_finite_loss():
    model = SequenceClassifier(torch.nn.RNN(1, 4, batch_first=True), 4, 2)
    x = torch.full((3, 4, 1), float("nan"))
    with pytest.raises(ValueError, match=r"model\(x\).* contains NaN or infinity"):
        fit(model, lambda s: (x, torch.zeros(3, dtype=torch.long)), steps=2)
    with pytest.raises(ValueError, match="loss became nan at step 0"):
        fit(model, lambda s: None, steps=2, loss=lambda m, b: torch.tensor(float("nan")))
    with pytest.raises(TypeError, match="steps must be an int"):
        fit(model, lambda s: (x, None), steps=2.5)


# ---------------------------------------------- properties at random sizes (hypothesis)


@covers("seqlearn.train.SequenceClassifier", "seqlearn.train.accuracy", "seqlearn.train.fit")
@given(seed=seeds, bad=st.sampled_from([0.0, -1.0, float("nan"), "1", True]))
def test_training_loop_lowers_the_loss_and_refuses_bad_thresholds(seed, bad):
    torch.manual_seed(seed % 1000)
    model = train.SequenceClassifier(ElmanRNN(2, 4), 4, 2)
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(16, 3, 2, generator=g)
    labels = (x[:, -1, 0] > 0).long()
    losses = train.fit(model, lambda step: (x, labels), 15, lr=0.05)
    assert losses[-1] < losses[0]
    assert 0.0 <= train.accuracy(model, x, labels) <= 1.0
    refuses(train.fit, model, lambda step: (x, labels), 1, clip=bad)
    refuses(train.fit, model, lambda step: (x, labels), 1, lr=bad)
    refuses(model, x.numpy())
    assert isinstance(model, nn.Module)


# ---------------------------- edge cases: sizes 0, reduced precision, non-finite values


@pytest.mark.parametrize("bad", [-1.0, math.nan, math.inf, None, "0.5"])
def test_fit_reads_every_schedule_value_before_the_first_step(bad):
    torch.manual_seed(0)
    model = train.SequenceClassifier(nn.RNN(2, 3, batch_first=True), 3, 2)
    before = [p.detach().clone() for p in model.parameters()]
    x, labels = torch.randn(4, 5, 2), torch.tensor([0, 1, 1, 0])
    error = TypeError if bad is None or isinstance(bad, str) else ValueError
    with pytest.raises(error, match=r"schedule\(2\)"):  # steps 0 and 1 are fine
        train.fit(
            model, lambda k: (x, labels), 4, schedule=lambda k: 1.0 if k < 2 else bad
        )
    for p, p0 in zip(model.parameters(), before):  # no step was taken
        assert torch.equal(p, p0)


def test_fit_stops_before_a_non_finite_gradient_reaches_the_parameters():
    torch.manual_seed(0)
    model = nn.Linear(2, 1).double()
    before = [p.detach().clone() for p in model.parameters()]

    def loss(m, batch):  # 0, with an infinite slope: sqrt(|w - w|) at w
        return (m.weight - m.weight.detach()).abs().sqrt().sum()

    with pytest.raises(ValueError, match="gradient became"):
        train.fit(model, lambda k: None, 1, loss=loss)
    for p, p0 in zip(model.parameters(), before):
        assert torch.equal(p, p0)


# -------------------------------------------------------------------------- fit_seq2seq


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
    model = toy_model(None)
    batch = toy_batch(0)
    seen = []
    real_step = torch.optim.Adam.step

    def spy(self, *args, **kwargs):
        seen.append(self.param_groups[0]["lr"])
        return real_step(self, *args, **kwargs)

    monkeypatch.setattr(torch.optim.Adam, "step", spy)
    fit_seq2seq(model, lambda s: batch, 4, lr=0.1, decay=True)
    fit_seq2seq(model, lambda s: batch, 2, lr=0.1)
    np.testing.assert_allclose(seen, [0.1, 0.075, 0.05, 0.025, 0.1, 0.1])


# ------------------------------------- what fit_seq2seq and fit_memn2n hand to the loop


# Adam divides each step by the gradient's running size, so clipping hardly changes a
# short training run: whether ``clip`` arrives is checked by watching
# ``torch.nn.utils.clip_grad_norm_``.


def spy_on_clipping(monkeypatch):
    thresholds = []
    real = torch.nn.utils.clip_grad_norm_

    def spy(parameters, max_norm, *args, **kwargs):
        thresholds.append(max_norm)
        return real(parameters, max_norm, *args, **kwargs)

    monkeypatch.setattr(torch.nn.utils, "clip_grad_norm_", spy)
    return thresholds


def test_fit_seq2seq_hands_clip_to_the_loop(monkeypatch):
    model, batch = toy_model(), toy_batch()
    thresholds = spy_on_clipping(monkeypatch)
    fit_seq2seq(model, lambda s: batch, 2)
    assert thresholds == [1.0, 1.0]  # the default
    thresholds.clear()
    fit_seq2seq(model, lambda s: batch, 2, clip=0.25)
    assert thresholds == [0.25, 0.25]
    thresholds.clear()
    fit_seq2seq(model, lambda s: batch, 2, clip=None)
    assert thresholds == []


@pytest.fixture(scope="module")
def data():
    vocab = story_vocab()
    return vocab, encode_stories(stories(8, np.random.default_rng(0), task=1), vocab)


def test_fit_memn2n_defaults_clip_40_and_no_linear_start(monkeypatch, data):
    vocab, batch = data
    torch.manual_seed(0)
    model = MemN2N(len(vocab), 8, 1, max_sentences=20)
    thresholds = spy_on_clipping(monkeypatch)
    seen, steps = [], []
    forward = model.forward

    def spy(story, query, *, linear=False):
        seen.append(linear)
        return forward(story, query, linear=linear)

    model.forward = spy

    def batches(step):
        steps.append(step)
        return batch

    losses = fit_memn2n(model, batches, 3)  # linear_steps=0, clip=40
    assert len(losses) == 3 and steps == [0, 1, 2] and seen == [False] * 3
    assert thresholds == [40.0] * 3
    thresholds.clear()
    fit_memn2n(model, batches, 2, clip=0.5, linear_steps=2)
    assert thresholds == [0.5] * 2 and seen[3:] == [True, True]
    thresholds.clear()
    fit_memn2n(model, batches, 2, clip=None)
    assert thresholds == []


# ------------------------------------------------------------ the wording of each error


@pytest.mark.parametrize("call, error, match", [
    (lambda m, b: fit_seq2seq("model", lambda s: b, 1), TypeError,
     r"^model must be a Seq2Seq, got str$"),
    (lambda m, b: fit_seq2seq(m, lambda s: tuple(b), 1), TypeError,
     r"^batches\(step\) must return a Seq2SeqBatch, got tuple$"),
])
def test_fit_seq2seq_error_messages(call, error, match):
    model, batch = toy_model(score="dot"), toy_batch()
    with pytest.raises(error, match=match):
        call(model, batch)


@pytest.mark.parametrize("call, error, match", [
    (lambda m, b: fit_memn2n(m, lambda s: b, 0), ValueError, r"^steps must be positive"),
    (lambda m, b: fit_memn2n(m, lambda s: b, 2.0), TypeError, r"^steps must be an int"),
    (lambda m, b: fit_memn2n(m, lambda s: b, 2, linear_steps=-1), ValueError,
     r"^linear_steps must be at least 0"),
    (lambda m, b: fit_memn2n(m, lambda s: b, 2, linear_steps=3), ValueError,
     r"^linear_steps must be at most 2"),
    (lambda m, b: fit_memn2n(m, [b], 2), TypeError,
     r"^batches must be callable \(step -> batch\), got list$"),
    (lambda m, b: fit_memn2n("model", lambda s: b, 2), TypeError,
     r"^model must be a MemN2N, got str$"),
])
def test_fit_memn2n_error_messages(call, error, match, data):
    vocab, batch = data
    torch.manual_seed(0)
    model = MemN2N(len(vocab), 4, 1, max_sentences=20)
    with pytest.raises(error, match=match):
        call(model, batch)


def test_sequence_classifier_compares_features_with_the_rnn():
    """``features`` was never compared with the RNN's output size (issue 31)."""
    with pytest.raises(
            ValueError, match=r"features must be the rnn's output size .* = 3, "
                              r"got 4"):
        SequenceClassifier(nn.RNN(2, 3, batch_first=True), 4, 2)
    with pytest.raises(ValueError, match=r"= 8, got 4"):
        SequenceClassifier(ElmanRNN(2, 4, bidirectional=True), 4, 2)

    class Tagger(nn.Module):  # no RNN attributes: checked at the call
        def forward(self, x):
            return x.repeat(1, 1, 2), None

    model = SequenceClassifier(Tagger(), 3, 2)
    with pytest.raises(ValueError, match=r"the rnn's output y must have shape "
                                         r"\(B=1, T, F=3\), got \(1, 2, 4\)"):
        model(torch.randn(1, 2, 2))
    assert SequenceClassifier(Tagger(), 4, 2)(torch.randn(1, 2, 2)).shape == (1, 2)
