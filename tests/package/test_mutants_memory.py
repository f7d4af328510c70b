"""seqlearn.memory: what the training helper hands to the loop, defaults and the exact wording
of each validation error.

These tests close the gaps that mutation testing (``tools/mutation.py package``) found in
test_memory.py. Adam divides each step by the gradient's running size, so clipping hardly
changes a short training run: whether ``clip`` arrives is checked by watching
``torch.nn.utils.clip_grad_norm_``.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from seqlearn.data import encode_stories, stories, story_vocab
from seqlearn.memory import (MemN2N, answer_accuracy, fit_memn2n, position_encoding,
                             supporting_share)

F64 = torch.float64


@pytest.fixture(scope="module")
def data():
    vocab = story_vocab()
    return vocab, encode_stories(stories(8, np.random.default_rng(0), task=1), vocab)


def spy_on_clipping(monkeypatch):
    thresholds = []
    real = torch.nn.utils.clip_grad_norm_

    def spy(parameters, max_norm, *args, **kwargs):
        thresholds.append(max_norm)
        return real(parameters, max_norm, *args, **kwargs)

    monkeypatch.setattr(torch.nn.utils, "clip_grad_norm_", spy)
    return thresholds


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
    (lambda m, b: answer_accuracy("model", b), TypeError, r"^model must be a MemN2N, got str$"),
    (lambda m, b: m(b.story, b.query, linear=1), TypeError, r"^linear must be a bool"),
    (lambda m, b: m(b.story.float(), b.query), TypeError,
     r"^story must hold integer word ids, got dtype torch\.float32$"),
    (lambda m, b: m(b.story, b.query.float()), TypeError,
     r"^query must hold integer word ids, got dtype torch\.float32$"),
    (lambda m, b: m(b.story, b.query[:1]), ValueError, r"^query must have shape \(B=8, Wq\)"),
    (lambda m, b: m(b.story[:, :, :2].tolist(), b.query), TypeError,
     r"^story must be a torch\.Tensor"),
    (lambda m, b: m(b.story - 1, b.query), ValueError, r"^story must hold ids in \[0, "),
    (lambda m, b: MemN2N(1, 4, 1), ValueError, r"^vocab_size must be at least 2"),
    (lambda m, b: MemN2N(5, 0, 1), ValueError, r"^d must be positive"),
    (lambda m, b: MemN2N(5, 4, 0), ValueError, r"^hops must be positive"),
    (lambda m, b: MemN2N(5, 4, 1, max_sentences=0), ValueError,
     r"^max_sentences must be positive"),
    (lambda m, b: MemN2N(5, 4, 1, max_words=0), ValueError, r"^max_words must be positive"),
    (lambda m, b: position_encoding(torch.tensor([1.0]), 3), TypeError,
     r"^J must hold integer lengths, got dtype torch\.float32$"),
    (lambda m, b: position_encoding(torch.tensor([True]), 3), TypeError,
     r"^J must hold integer lengths, got dtype torch\.bool$"),
    (lambda m, b: position_encoding(torch.tensor([1j]), 3), TypeError,
     r"^J must hold integer lengths, got dtype torch\.complex64$"),
    (lambda m, b: m(b.story[0], b.query), ValueError, r"^story must have shape \(B, S, W\)"),
    (lambda m, b: m(b.story, b.query[0]), ValueError, r"^query must have shape \(B, Wq\)"),
    (lambda m, b: position_encoding(torch.tensor([2, -1]), 3), ValueError,
     r"^J must be at least 0, got -1$"),
    (lambda m, b: position_encoding(0, 3), ValueError, r"^J must be positive"),
    (lambda m, b: position_encoding(3, 0), ValueError, r"^d must be positive"),
    (lambda m, b: position_encoding(3, 2, width=2), ValueError, r"^width must be at least 3"),
    (lambda m, b: position_encoding(torch.tensor([0]), 2, width=0), ValueError,
     r"^width must be positive, got 0$"),
    (lambda m, b: supporting_share(torch.ones(2, 1, 3), torch.ones(2, 3)), TypeError,
     r"^supporting must be a bool tensor \(True = a supporting fact\), got torch\.float32$"),
    (lambda m, b: supporting_share(torch.ones(2, 1, 3), [[True] * 3] * 2), TypeError,
     r"^supporting must be a bool tensor \(True = a supporting fact\), got list$"),
    (lambda m, b: supporting_share(torch.ones(2, 1, 3), torch.ones(2, 4, dtype=torch.bool)),
     ValueError, r"^supporting must have shape \(B=2, S=3\)"),
    (lambda m, b: supporting_share(torch.ones(0, 1, 3), torch.ones(0, 3, dtype=torch.bool)),
     ValueError, r"^attention must hold at least one example, got B = 0$"),
    (lambda m, b: supporting_share(torch.ones(2, 3), torch.ones(2, 3, dtype=torch.bool)),
     ValueError, r"^attention must have shape \(B, K, S\)"),
])
def test_memory_error_messages(call, error, match, data):
    vocab, batch = data
    torch.manual_seed(0)
    model = MemN2N(len(vocab), 4, 1, max_sentences=20)
    with pytest.raises(error, match=match):
        call(model, batch)


def test_position_encoding_defaults():
    assert position_encoding(3, 4).dtype == torch.get_default_dtype()
    torch.testing.assert_close(position_encoding(3, 4), position_encoding(3, 4, width=3))
    lengths = torch.tensor([[2, 0], [3, 1]])
    pe = position_encoding(lengths, 4, dtype=F64)
    assert pe.shape == (2, 2, 3, 4) and pe.dtype == F64
    for index in [(0, 0), (0, 1), (1, 0), (1, 1)]:
        J = int(lengths[index])
        want = torch.zeros(3, 4, dtype=F64)
        if J:
            want[:J] = position_encoding(J, 4, dtype=F64)
        torch.testing.assert_close(pe[index], want, rtol=0, atol=0)


def test_position_encoding_width_may_be_1_for_lengths_of_at_most_1():
    for lengths in ([0], [1], [1, 0]):
        pe = position_encoding(torch.tensor(lengths), 2, width=1, dtype=F64)
        assert pe.shape == (len(lengths), 1, 2)
        for row, J in zip(pe, lengths):
            want = position_encoding(1, 2, dtype=F64) if J else torch.zeros(1, 2, dtype=F64)
            torch.testing.assert_close(row, want, rtol=0, atol=0)


def test_memn2n_defaults_and_initial_spread():
    torch.manual_seed(0)
    model = MemN2N(400, 32, 1)
    assert model.max_sentences == 50 and model.max_words == 12
    for embedding in model.embeddings:
        assert abs(float(embedding.weight.detach()[1:].std()) - 0.1) < 0.005
        assert not embedding.weight.detach()[0].any()  # the padding row
    for temporal in model.temporal:
        assert abs(float(temporal.detach().std()) - 0.1) < 0.01
