"""seqlearn.memory: MemN2N against a per-example loop over sentences and words
(float64); defaults and the wording of each error; properties at random sizes; answers
that would broadcast and ids of another integer type; then the model as in Sukhbaatar et
al. (2015): its position- and temporal-encoding switches against a loop, and random noise
(RN) against an exhaustive enumeration of the insertions and inside fit_memn2n. (The
training loop ``fit_memn2n`` itself is tested in test_train.py.)"""

from __future__ import annotations

import importlib
import itertools
import math
from collections import Counter

import numpy as np
import pytest
import torch
from hypothesis import given, strategies as st

from properties import covers, not_bools, not_reals, refuses, seeds
from seqlearn import memory, train
from seqlearn.data import StoryBatch, encode_stories, stories, story_vocab
from seqlearn.memory import (MemN2N, answer_accuracy, answer_loss, position_encoding,
                             random_noise_ages, supporting_share)
from seqlearn.train import fit_memn2n


F64 = torch.float64


def loop_position(J: int, d: int) -> torch.Tensor:
    """l_kj = (1 - j/J) - (k/d)(1 - 2j/J), one entry at a time."""
    return torch.tensor([[(1 - j / J) - (k / d) * (1 - 2 * j / J) for k in range(1, d + 1)]
                         for j in range(1, J + 1)], dtype=F64)


def loop_memn2n(model: MemN2N, story: torch.Tensor, query: torch.Tensor,
                linear: bool = False, ages: torch.Tensor | None = None):
    """The equations of Sukhbaatar et al. (2015), one example, sentence and word at a
    time: ``l_kj = 1`` without position encoding, no ``T`` without temporal encoding;
    ``ages`` are the sentences' ``t_i`` (default: counted back from the last real
    sentence)."""
    E = [e.weight for e in model.embeddings]
    d, K = model.d, model.hops

    def sentence(ids: list[int], k: int) -> torch.Tensor:
        words = [w for w in ids if w != 0]
        if not words:
            return torch.zeros(d, dtype=F64)
        weights = (loop_position(len(words), d) if model.use_position
                   else torch.ones(len(words), d, dtype=F64))
        return sum(weights[j] * E[k][w] for j, w in enumerate(words))

    rows = [i for i, r in enumerate(story.tolist()) if any(r)]  # the real sentences
    n = len(rows)
    age = {i: n - 1 - pos if ages is None else int(ages[i])
           for pos, i in enumerate(rows)}

    def slot(i: int, k: int) -> torch.Tensor:
        vector = sentence(story[i].tolist(), k)
        return vector + model.temporal[k][age[i]] if model.use_temporal else vector

    u = sentence(query.tolist(), 0)
    hops = []
    for k in range(K):
        m = [slot(i, k) for i in rows]
        c = [slot(i, k + 1) for i in rows]
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


# ----------------------------------------------- defaults and the wording of each error


@pytest.fixture(scope="module")
def data():
    vocab = story_vocab()
    return vocab, encode_stories(stories(8, np.random.default_rng(0), task=1), vocab)


@pytest.mark.parametrize("call, error, match", [
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


# ---------------------------------------------- properties at random sizes (hypothesis)


# ``seqlearn.data.stories`` is the function (re-exported); the module is reached by its name
st_stories = importlib.import_module("seqlearn.data.stories")


@covers("seqlearn.memory.position_encoding", "seqlearn.memory.MemN2N",
        "seqlearn.memory.answer_loss", "seqlearn.memory.answer_accuracy",
        "seqlearn.memory.supporting_share", "seqlearn.train.fit_memn2n",
        "seqlearn.data.stories.Story", "seqlearn.data.stories.StoryBatch",
        "seqlearn.data.stories.stories", "seqlearn.data.stories.story_vocab",
        "seqlearn.data.stories.encode_stories")
@given(seed=seeds, n=st.integers(1, 4), task=st.sampled_from([1, 2]), hops=st.integers(1, 3),
       d=st.integers(1, 5), flag=not_bools)
def test_memn2n_on_stories_against_references(seed, n, task, hops, d, flag):
    torch.manual_seed(seed % 1000)
    vocab = st_stories.story_vocab()
    batch = st_stories.stories(n, np.random.default_rng(seed), task=task, min_sentences=2,
                               max_sentences=6)
    assert all(isinstance(s, st_stories.Story) and len(s.supporting) == task for s in batch)
    enc = st_stories.encode_stories(batch, vocab)
    assert isinstance(enc, st_stories.StoryBatch)
    assert enc.supporting.sum(-1).tolist() == [task] * n
    J = int(enc.story.shape[-1])
    loop = torch.tensor([[(1 - j / J) - (k / d) * (1 - 2 * j / J) for k in range(1, d + 1)]
                         for j in range(1, J + 1)], dtype=F64)
    torch.testing.assert_close(memory.position_encoding(J, d, dtype=F64), loop)
    model = memory.MemN2N(len(vocab), d, hops, max_sentences=6, max_words=J).double()
    logits, attention = model(enc.story, enc.query)
    present = (enc.story != 0).any(-1)
    torch.testing.assert_close(attention.sum(-1), torch.ones(n, hops, dtype=F64))
    assert torch.count_nonzero(attention * ~present[:, None]) == 0
    # the answer layer is tied to the last embedding: logits = E_K u for some state u
    u = torch.linalg.lstsq(model.embeddings[hops].weight, logits.T).solution  # (d, n)
    torch.testing.assert_close(model.embeddings[hops].weight @ u, logits.T)
    loss = memory.answer_loss(model, enc)
    torch.testing.assert_close(loss, torch.nn.functional.cross_entropy(logits, enc.answer))
    acc = memory.answer_accuracy(model, enc)
    assert acc == float((logits.argmax(-1) == enc.answer).double().mean())
    share = memory.supporting_share(attention, enc.supporting)
    torch.testing.assert_close(share, (attention * enc.supporting[:, None]).sum(-1).mean(0))
    losses = train.fit_memn2n(model, lambda step: enc, 2, linear_steps=1)
    assert len(losses) == 2 and all(np.isfinite(losses))
    refuses(model, enc.story, enc.query, linear=flag)
    refuses(model, enc.story.double(), enc.query)
    refuses(memory.MemN2N, len(vocab), d, hops, max_words=0)
    refuses(memory.position_encoding, torch.tensor([-1]), d)
    refuses(memory.supporting_share, attention, enc.supporting.double())
    refuses(train.fit_memn2n, model, lambda step: enc, 2, linear_steps=3)
    refuses(st_stories.stories, n, np.random.default_rng(seed), task=3)
    refuses(st_stories.encode_stories, batch, vocab, words=1)


# ---------------------------- edge cases: sizes 0, reduced precision, non-finite values


def _memn2n_batch(answer: torch.Tensor) -> tuple[memory.MemN2N, StoryBatch]:
    torch.manual_seed(0)
    model = memory.MemN2N(9, 4, 1).double()
    gen = torch.Generator().manual_seed(1)
    story, query = torch.randint(1, 9, (4, 3, 5), generator=gen), torch.randint(
        1, 9, (4, 5)
    )
    return model, StoryBatch(story, query, answer, torch.zeros(4, 3, dtype=torch.bool))


def test_answer_accuracy_refuses_answers_that_would_broadcast():
    model, batch = _memn2n_batch(torch.zeros(4, dtype=torch.long))
    with torch.no_grad():
        right = model(batch.story, batch.query)[0].argmax(-1)
    assert memory.answer_accuracy(model, batch._replace(answer=right)) == 1.0
    with pytest.raises(ValueError, match=r"batch\.answer must have shape \(B=4\)"):
        memory.answer_accuracy(model, batch._replace(answer=right[:, None]))  # (B, 1)
    with pytest.raises(ValueError, match=r"batch\.answer must hold ids in \[0, 9\)"):
        memory.answer_loss(model, batch._replace(answer=right + 9))


def test_memn2n_refuses_ids_of_another_integer_type():
    model = memory.MemN2N(9, 4, 1)
    ids = torch.ones(2, 3, 4, dtype=torch.uint8)
    with pytest.raises(TypeError, match="story must be a LongTensor of word ids"):
        model(ids, ids[:, 0])


# ----------------------------------------------------------------------------- the paper's
# switches (position and temporal encoding) and random noise

PAPER_VOCAB = story_vocab()


def _batch(n=4, seed=7, task=2, **widths) -> StoryBatch:
    return encode_stories(stories(n, np.random.default_rng(seed), task=task,
                                  min_sentences=2, max_sentences=9), PAPER_VOCAB, **widths)


def _model(hops=2, d=5, seed=0, **switches) -> MemN2N:
    torch.manual_seed(seed)
    return MemN2N(len(PAPER_VOCAB), d, hops, max_sentences=12, max_words=8, **switches).double()


@pytest.mark.parametrize("position, temporal", list(itertools.product([True, False], repeat=2)))
def test_switches_equal_the_loop(position, temporal):
    model = _model(hops=2, position_encoding=position, temporal_encoding=temporal)
    assert len(model.temporal) == (3 if temporal else 0)
    batch = _batch(sentences=11, words=8)  # extra empty sentences and word slots
    logits, attention = model(batch.story, batch.query)
    for b in range(len(batch.answer)):
        want, p = loop_memn2n(model, batch.story[b], batch.query[b])
        torch.testing.assert_close(logits[b], want, rtol=1e-12, atol=1e-12)
        rows = (batch.story[b] != 0).any(-1)
        torch.testing.assert_close(attention[b][:, rows], torch.stack(p), rtol=1e-12,
                                   atol=1e-12)
        assert not attention[b][:, ~rows].any()


def test_the_default_model_is_unchanged_by_the_switches():
    torch.manual_seed(3)
    old = MemN2N(len(PAPER_VOCAB), 6, 3, max_sentences=12)  # the defaults: PE and TE on
    torch.manual_seed(3)
    new = MemN2N(len(PAPER_VOCAB), 6, 3, max_sentences=12, position_encoding=True,
                 temporal_encoding=True)
    for a, b in zip(old.parameters(), new.parameters()):
        assert torch.equal(a, b)  # same initialisation, drawn in the same order
    batch = _batch()
    present = (batch.story != 0).any(-1)
    usual = (present.flip(-1).cumsum(-1).flip(-1) - 1).clamp(min=0)
    torch.testing.assert_close(new(batch.story, batch.query, ages=usual)[0],
                               old(batch.story, batch.query)[0], rtol=0, atol=0)


def test_bag_of_words_ignores_word_order_and_position_encoding_does_not():
    bow, pe = _model(position_encoding=False), _model(position_encoding=True)
    words = torch.tensor([[PAPER_VOCAB.stoi[w] for w in "mary got the milk".split()]])
    swapped = words[:, [3, 1, 2, 0]]  # "milk got the mary"
    torch.testing.assert_close(bow.encode(words, 1), bow.encode(swapped, 1))
    assert not torch.allclose(pe.encode(words, 1), pe.encode(swapped, 1))


def test_without_temporal_encoding_the_memory_is_a_set():
    model = _model(hops=3, temporal_encoding=False)
    batch = _batch(n=3)
    logits, attention = model(batch.story, batch.query)
    perm = torch.randperm(batch.story.shape[1], generator=torch.Generator().manual_seed(0))
    logits_p, attention_p = model(batch.story[:, perm], batch.query)
    torch.testing.assert_close(logits_p, logits)
    torch.testing.assert_close(attention_p, attention[..., perm])
    # and so random noise, which only moves the ages, changes nothing
    ages = random_noise_ages((batch.story != 0).any(-1), 0.5,
                             generator=torch.Generator().manual_seed(1), max_age=11)
    torch.testing.assert_close(model(batch.story, batch.query, ages=ages)[0], logits)


def test_given_ages_equal_the_loop_and_are_validated():
    model = _model(hops=2)
    batch = _batch(n=3, sentences=9)
    present = (batch.story != 0).any(-1)
    ages = random_noise_ages(present, 0.5, generator=torch.Generator().manual_seed(2),
                             max_age=11)
    logits, _ = model(batch.story, batch.query, ages=ages)
    for b in range(3):
        want, _ = loop_memn2n(model, batch.story[b], batch.query[b], ages=ages[b])
        torch.testing.assert_close(logits[b], want, rtol=1e-12, atol=1e-12)
    with pytest.raises(TypeError, match="ages must be a LongTensor"):
        model(batch.story, batch.query, ages=ages.int())
    with pytest.raises(ValueError, match=r"ages must have shape \(B=3, S=9\)"):
        model(batch.story, batch.query, ages=ages[:, :4])
    with pytest.raises(ValueError, match=r"ages must lie in \[0, max_sentences=12\)"):
        model(batch.story, batch.query, ages=ages + 12)


def _rn_distribution(row: list[bool], rate: float) -> dict[tuple, float]:
    """The definition, enumerated: m empty memories, m uniform on 0 .. ceil(rate n), in
    every order of the n + m memories that keeps the sentences in order, equally likely;
    a sentence's age counts the memories after it."""
    n = sum(row)
    most = math.ceil(rate * n - 1e-9)
    dist: Counter = Counter()
    for m in range(most + 1):
        orders = list(itertools.combinations(range(n + m), n))  # slots of the sentences
        for slots in orders:
            ages = iter(n + m - 1 - s for s in slots)
            key = tuple(next(ages) if present else 0 for present in row)
            dist[key] += 1 / (most + 1) / len(orders)
    return dict(dist)


@pytest.mark.parametrize("row, rate", [([True, False, True, True], 0.5),
                                       ([True] * 5, 0.3), ([True, True], 0.1)])
def test_random_noise_matches_its_definition_exhaustively(row, rate):
    N = 20_000
    present = torch.tensor([row] * N)
    ages = random_noise_ages(present, rate, generator=torch.Generator().manual_seed(0))
    seen = Counter(map(tuple, ages.tolist()))
    want = _rn_distribution(row, rate)
    assert set(seen) <= set(want)  # only orders the definition allows
    for key, p in want.items():
        assert abs(seen[key] / N - p) < 0.012, (key, seen[key] / N, p)


def test_random_noise_shifts_ages_as_specified():
    g = torch.Generator().manual_seed(5)
    present = torch.rand(500, 12, generator=g) < 0.8
    present[:, 0] = True
    ages = random_noise_ages(present, 0.1, generator=g)
    skipped_total = 0
    for row, a in zip(present, ages):
        n = int(row.sum())
        real = a[row]
        assert bool((real[:-1] > real[1:]).all())  # older sentences are older
        assert int(real[-1]) >= 0 and not a[~row].any()
        skipped = int(real[0]) + 1 - n  # empty memories among the n + m
        assert 0 <= skipped <= math.ceil(0.1 * n - 1e-9)
        skipped_total += skipped
    assert skipped_total > 0
    torch.testing.assert_close(  # rate 0: the usual ages
        random_noise_ages(present, 0.0),
        (present.flip(-1).cumsum(-1).flip(-1) - 1).clamp(min=0) * present)
    clipped = random_noise_ages(present, 1.0, generator=g, max_age=11)
    assert int(clipped.max()) == 11


def test_fit_memn2n_reads_noisy_ages_in_both_phases():
    batch = _batch(n=8, task=1)
    model = _model(hops=1)
    seen = []
    forward = model.forward

    def spy(story, query, *, linear=False, ages=None):
        seen.append((linear, ages))
        return forward(story, query, linear=linear, ages=ages)

    model.forward = spy
    fit_memn2n(model, lambda step: batch, 4, linear_steps=2, noise=0.5,
               generator=torch.Generator().manual_seed(0))
    assert [linear for linear, _ in seen] == [True, True, False, False]
    present = (batch.story != 0).any(-1)
    usual = (present.flip(-1).cumsum(-1).flip(-1) - 1).clamp(min=0)
    for _, ages in seen:
        assert ages is not None and int(ages.max()) <= 11
        assert bool((ages >= usual).all())  # empty memories only ever add age
    assert any(not torch.equal(ages, usual) for _, ages in seen)
    seen.clear()
    fit_memn2n(model, lambda step: batch, 2)  # noise 0: no ages are passed
    assert [ages for _, ages in seen] == [None, None]


def test_fit_memn2n_with_noise_is_reproducible():
    batch = _batch(n=8, task=1)
    runs = []
    for _ in range(2):
        model = _model(hops=2)
        runs.append(fit_memn2n(model, lambda step: batch, 5, noise=0.3,
                               generator=torch.Generator().manual_seed(9)))
    assert runs[0] == runs[1]


def test_noise_refusals():
    present = torch.ones(2, 3, dtype=torch.bool)
    with pytest.raises(TypeError, match="present must be a bool tensor"):
        random_noise_ages(present.long(), 0.1)
    with pytest.raises(ValueError, match=r"present must have shape \(B, S\)"):
        random_noise_ages(present[0], 0.1)
    with pytest.raises(ValueError, match="rate must be at least 0"):
        random_noise_ages(present, -0.1)
    with pytest.raises(ValueError, match="rate must be a finite number"):
        random_noise_ages(present, float("nan"))
    with pytest.raises(ValueError, match="max_age must be at least 0"):
        random_noise_ages(present, 0.1, max_age=-1)
    with pytest.raises(TypeError, match="generator must be a torch.Generator"):
        random_noise_ages(present, 0.1, generator=0)
    with pytest.raises(TypeError, match="position_encoding must be a bool"):
        MemN2N(10, 4, 1, position_encoding="no")
    with pytest.raises(TypeError, match="temporal_encoding must be a bool"):
        MemN2N(10, 4, 1, temporal_encoding=1)
    batch = _batch(n=2)
    model = _model(hops=1)
    with pytest.raises(ValueError, match="noise must be at least 0"):
        fit_memn2n(model, lambda step: batch, 1, noise=-0.1)
    with pytest.raises(TypeError, match="generator must be a torch.Generator"):
        fit_memn2n(model, lambda step: batch, 1, noise=0.1, generator=1)


# ------------------------------------------------------------------ property tests

@covers("seqlearn.memory.random_noise_ages")
@given(seed=seeds, B=st.integers(0, 5), S=st.integers(0, 12),
       rate=st.floats(0.0, 1.0), max_age=st.integers(0, 15), bad=not_reals)
def test_random_noise_ages_skip_at_most_ceil_rate_n(seed, B, S, rate, max_age, bad):
    g = torch.Generator().manual_seed(seed)
    present = torch.rand(B, S, generator=g) < 0.7
    ages = random_noise_ages(present, rate, generator=g)
    usual = (present.flip(-1).cumsum(-1).flip(-1) - 1).clamp(min=0) * present
    assert ages.shape == (B, S) and ages.dtype == torch.long
    for row, a, u in zip(present, ages, usual):
        n = int(row.sum())
        if n == 0:
            assert not a.any()
            continue
        real = a[row]
        assert bool((real[:-1] > real[1:]).all()) and int(real[-1]) >= 0
        assert bool((a >= u).all()) and not a[~row].any()
        assert int(real[0]) + 1 - n <= math.ceil(rate * n - 1e-9)  # skipped ages
    assert torch.equal(random_noise_ages(present, 0.0), usual)
    clipped = random_noise_ages(present, rate, generator=torch.Generator().manual_seed(seed),
                                max_age=max_age)
    again = random_noise_ages(present, rate, generator=torch.Generator().manual_seed(seed))
    assert torch.equal(clipped, again.clamp(max=max_age))  # same draws, then clipped
    refuses(random_noise_ages, present, bad)
    refuses(random_noise_ages, present.long(), rate)


@covers("seqlearn.memory.MemN2N")
@given(seed=seeds, position=st.booleans(), temporal=st.booleans())
def test_switches_keep_the_contract(seed, position, temporal):
    torch.manual_seed(seed % 1000)
    model = MemN2N(12, 4, 2, max_sentences=6, max_words=5, position_encoding=position,
                   temporal_encoding=temporal).double()
    g = torch.Generator().manual_seed(seed)
    story = torch.randint(0, 12, (3, 6, 5), generator=g)
    query = torch.randint(1, 12, (3, 5), generator=g)
    logits, attention = model(story, query)
    assert logits.shape == (3, 12) and attention.shape == (3, 2, 6)
    present = (story != 0).any(-1)
    torch.testing.assert_close(attention.sum(-1), torch.ones(3, 2, dtype=logits.dtype))
    assert not (attention * ~present[:, None]).any()
    ages = random_noise_ages(present, 0.5, generator=g, max_age=5)
    noisy, _ = model(story, query, ages=ages)
    if not temporal:  # the ages reach nothing
        torch.testing.assert_close(noisy, logits)
    refuses(model, story, query, ages=ages.double())
