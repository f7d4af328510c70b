"""seqlearn.memory: MemN2N against a per-example loop over sentences and words (float64)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from seqlearn.data import StoryBatch, encode_stories, stories, story_vocab
from seqlearn.memory import (MemN2N, answer_accuracy, answer_loss, fit_memn2n,
                             position_encoding, supporting_share)

F64 = torch.float64


def loop_position(J: int, d: int) -> torch.Tensor:
    """l_kj = (1 - j/J) - (k/d)(1 - 2j/J), one entry at a time."""
    return torch.tensor([[(1 - j / J) - (k / d) * (1 - 2 * j / J) for k in range(1, d + 1)]
                         for j in range(1, J + 1)], dtype=F64)


def loop_memn2n(model: MemN2N, story: torch.Tensor, query: torch.Tensor, linear: bool = False):
    """The equations of Sukhbaatar et al. (2015), one example, sentence and word at a time."""
    E = [e.weight for e in model.embeddings]
    T = list(model.temporal)
    d, K = model.d, model.hops

    def sentence(ids: list[int], k: int) -> torch.Tensor:
        words = [w for w in ids if w != 0]
        if not words:
            return torch.zeros(d, dtype=F64)
        weights = loop_position(len(words), d)
        return sum(weights[j] * E[k][w] for j, w in enumerate(words))

    rows = [r for r in story.tolist() if any(r)]  # the real sentences, in order
    n = len(rows)
    u = sentence(query.tolist(), 0)
    hops = []
    for k in range(K):
        m = [sentence(r, k) + T[k][n - 1 - i] for i, r in enumerate(rows)]
        c = [sentence(r, k + 1) + T[k + 1][n - 1 - i] for i, r in enumerate(rows)]
        scores = torch.stack([m_i @ u for m_i in m])
        p = scores if linear else torch.softmax(scores, 0)
        u = u + sum(p_i * c_i for p_i, c_i in zip(p, c))
        hops.append(p)
    return E[K] @ u, hops


def test_position_encoding_equals_the_formula_and_is_zero_past_the_length():
    for J, d in [(1, 1), (3, 4), (6, 5)]:
        torch.testing.assert_close(position_encoding(J, d).double(), loop_position(J, d))
    lengths = torch.tensor([[2, 0], [5, 3]])
    w = position_encoding(lengths, 4, width=6)
    assert w.shape == (2, 2, 6, 4)
    for (a, b), J in np.ndenumerate(lengths.numpy()):
        if J:
            torch.testing.assert_close(w[a, b, :J].double(), loop_position(int(J), 4))
        assert torch.count_nonzero(w[a, b, J:]) == 0
    # the weights tell word order apart: swapping two words changes the sum
    e = torch.randn(3, 4)
    l3 = position_encoding(3, 4)
    assert not torch.allclose((l3 * e).sum(0), (l3 * e[[1, 0, 2]]).sum(0))


@pytest.mark.parametrize("hops", [1, 2, 3])
@pytest.mark.parametrize("linear", [False, True])
def test_forward_equals_the_loop(hops, linear):
    torch.manual_seed(hops)
    vocab = story_vocab()
    batch = encode_stories(stories(5, np.random.default_rng(hops), task=2, min_sentences=2,
                                   max_sentences=7), vocab, sentences=9, words=6)
    model = MemN2N(len(vocab), 6, hops, max_sentences=12, max_words=6).double()
    logits, attention = model(batch.story, batch.query, linear=linear)
    assert logits.shape == (5, len(vocab)) and attention.shape == (5, hops, 9)
    for b in range(5):
        want_logits, want_hops = loop_memn2n(model, batch.story[b], batch.query[b], linear)
        torch.testing.assert_close(logits[b], want_logits, rtol=1e-12, atol=1e-12)
        n = len(want_hops[0])
        for k in range(hops):
            torch.testing.assert_close(attention[b, k, :n], want_hops[k], rtol=1e-12, atol=1e-12)
            assert torch.count_nonzero(attention[b, k, n:]) == 0
        if not linear:
            torch.testing.assert_close(attention[b].sum(-1), torch.ones(hops, dtype=F64))


def test_padding_changes_nothing_and_tying_is_adjacent():
    torch.manual_seed(0)
    vocab = story_vocab()
    batch = stories(4, np.random.default_rng(0), task=1)
    tight = encode_stories(batch, vocab)
    wide = encode_stories(batch, vocab, sentences=30, words=9)
    model = MemN2N(len(vocab), 8, 3, max_sentences=30, max_words=9).double()
    a, p = model(tight.story, tight.query)
    b, q = model(wide.story, wide.query)
    torch.testing.assert_close(a, b)
    torch.testing.assert_close(q[..., :p.shape[-1]], p)
    assert torch.count_nonzero(q[..., p.shape[-1]:]) == 0
    # K + 1 embedding matrices and temporal tables: adjacent hops share one of each
    assert len(model.embeddings) == len(model.temporal) == 4
    assert sum(t.numel() for t in model.parameters()) == 4 * (len(vocab) * 8 + 30 * 8)
    assert torch.count_nonzero(model.embeddings[0].weight[0]) == 0  # <pad> embeds to zero


def test_training_helpers():
    torch.manual_seed(0)
    vocab = story_vocab()
    data = encode_stories(stories(64, np.random.default_rng(0), task=1), vocab)
    model = MemN2N(len(vocab), 16, 1, max_sentences=20)
    seen = []
    forward = model.forward

    def spy(story, query, *, linear=False):
        seen.append(linear)
        return forward(story, query, linear=linear)

    model.forward = spy
    losses = fit_memn2n(model, lambda step: data, 30, lr=1e-2, linear_steps=10)
    assert seen == [True] * 10 + [False] * 20
    assert losses[-1] < losses[0]
    model.forward = forward
    with torch.no_grad():
        logits, attention = model(data.story, data.query)
    want = float((logits.argmax(-1) == data.answer).double().mean())
    assert answer_accuracy(model, data) == pytest.approx(want)
    torch.testing.assert_close(answer_loss(model, data),
                               torch.nn.functional.cross_entropy(logits, data.answer))
    share = supporting_share(attention, data.supporting)
    loop = [np.mean([float(attention[b, 0][data.supporting[b]].sum()) for b in range(64)])]
    torch.testing.assert_close(share.double(), torch.tensor(loop, dtype=F64))


def test_refusals():
    vocab = story_vocab()
    model = MemN2N(len(vocab), 4, 2, max_sentences=5, max_words=6)
    story = torch.zeros(2, 5, 6, dtype=torch.long)
    query = torch.ones(2, 6, dtype=torch.long)
    with pytest.raises(ValueError, match="more than the model's maximum 5"):
        model(torch.zeros(2, 6, 6, dtype=torch.long), query)
    with pytest.raises(ValueError, match="more than the model's maximum 6"):
        model(story, torch.ones(2, 7, dtype=torch.long))
    with pytest.raises(ValueError, match=r"ids in \[0, 38\)"):
        model(story + 38, query)
    with pytest.raises(TypeError, match="integer word ids"):
        model(story.float(), query)
    with pytest.raises(ValueError, match=r"query must have shape \(B=2, Wq\)"):
        model(story, query[:1])
    with pytest.raises(TypeError, match="linear must be a bool"):
        model(story, query, linear=1)
    with pytest.raises(ValueError, match="vocab_size must be at least 2"):
        MemN2N(1, 4, 1)
    with pytest.raises(ValueError, match="hops must be positive"):
        MemN2N(5, 4, 0)
    with pytest.raises(ValueError, match="width must be at least 3"):
        position_encoding(torch.tensor([3]), 4, width=2)
    with pytest.raises(TypeError, match="integer lengths"):
        position_encoding(torch.tensor([3.0]), 4)
    with pytest.raises(ValueError, match="linear_steps must be at most 3"):
        fit_memn2n(model, lambda step: None, 3, linear_steps=4)
    with pytest.raises(TypeError, match="model must be a MemN2N"):
        fit_memn2n(torch.nn.Linear(2, 2), lambda step: None, 3)
    with pytest.raises(TypeError, match="supporting must be a bool"):
        supporting_share(torch.rand(2, 1, 5), torch.ones(2, 5))
    with pytest.raises(ValueError, match="supporting must have shape"):
        supporting_share(torch.rand(2, 1, 5), torch.ones(2, 4, dtype=torch.bool))
    assert isinstance(StoryBatch(story, query, query[:, 0], story[..., 0] > 0), tuple)
