"""seqlearn.ngram: counts against a brute-force count, add-k probabilities against eq-
lm-addk; properties at random sizes."""

import math
from collections import Counter

import numpy as np
import pytest
import torch
from hypothesis import given, strategies as st

from properties import covers, refuses, seeds
from seqlearn import ngram
from seqlearn.ngram import NGramModel


def _text(seed, N=300, V=5):
    return torch.from_numpy(np.random.default_rng(seed).integers(0, V, N)).long()


def _brute_counts(ids, n, start):
    padded = [start] * (n - 1) + ids.tolist()
    grams = Counter(tuple(padded[t: t + n]) for t in range(len(ids)))
    contexts = Counter(g[:-1] for g in grams.elements())
    return grams, contexts


@pytest.mark.parametrize("n", [1, 2, 3, 4])
@pytest.mark.parametrize("seed", [0, 1])
def test_counts_equal_a_brute_force_count(n, seed):
    V, start = 5, 2
    ids = _text(seed, V=V)
    model = NGramModel(n, V, k=0.5, start=start).fit(ids)
    grams, contexts = _brute_counts(ids, n, start)
    for context in np.ndindex(*(V,) * (n - 1)):
        assert model.count(list(context)) == contexts[tuple(context)]
        for v in range(V):
            assert model.count(list(context), v) == grams[tuple(context) + (v,)]
    assert sum(grams.values()) == len(ids)


@pytest.mark.parametrize("n, k", [(1, 1.0), (2, 0.1), (3, 0.01), (4, 2.0)])
def test_probabilities_follow_add_k_by_hand(n, k):
    V, start = 5, 0
    train, test = _text(3, V=V), _text(4, N=60, V=V)
    model = NGramModel(n, V, k=k, start=start).fit(train)
    grams, contexts = _brute_counts(train, n, start)
    P = model.next_probabilities(test)
    assert P.shape == (60, V) and P.dtype == torch.float64
    padded = [start] * (n - 1) + test.tolist()
    for t in range(60):
        context = tuple(padded[t + 1: t + n])  # the n - 1 characters ending at test[t]
        for v in range(V):
            want = (grams[context + (v,)] + k) / (contexts[context] + k * V)
            assert math.isclose(float(P[t, v]), want, rel_tol=1e-12)
    torch.testing.assert_close(P.sum(-1), torch.ones(60, dtype=torch.float64))
    log_p = model.log_likelihood(test)
    torch.testing.assert_close(log_p, P[:-1].gather(1, test[1:, None])[:, 0].log())


def test_unseen_context_is_uniform_and_a_seen_one_is_not():
    model = NGramModel(2, 4, k=1.0, start=2).fit(torch.tensor([0, 1, 0, 1, 0, 1]))
    P = model.next_probabilities(torch.tensor([3, 0]))
    torch.testing.assert_close(P[0], torch.full((4,), 0.25, dtype=torch.float64))
    # context "0" was followed by 1 three times: (3 + 1) / (3 + 4)
    assert math.isclose(float(P[1, 1]), 4 / 7) and math.isclose(float(P[1, 0]), 1 / 7)


def test_start_pads_the_first_context():
    # with start = 3, the first character 0 is counted after the context (3,)
    model = NGramModel(2, 4, start=3).fit(torch.tensor([0, 1]))
    assert model.count([3], 0) == 1 and model.count([0], 1) == 1 and model.count([3]) == 1


def test_validation():
    with pytest.raises(ValueError, match="n must be positive"):
        NGramModel(0, 5)
    with pytest.raises(ValueError, match="k must be positive"):
        NGramModel(2, 5, k=0.0)
    with pytest.raises(ValueError, match="start must be at most 4"):
        NGramModel(2, 5, start=5)
    with pytest.raises(ValueError, match="too large"):
        NGramModel(12, 100)
    model = NGramModel(2, 5)
    with pytest.raises(ValueError, match="call fit"):
        model.next_probabilities(torch.tensor([0, 1]))
    with pytest.raises(ValueError, match=r"ids must hold ids in \[0, 5\)"):
        model.fit(torch.tensor([0, 5]))
    with pytest.raises(TypeError, match="LongTensor"):
        model.fit(torch.tensor([0.0, 1.0]))
    with pytest.raises(ValueError, match="at least one character"):
        model.fit(torch.zeros(0, dtype=torch.long))
    model.fit(torch.tensor([0, 1, 2]))
    with pytest.raises(ValueError, match="n - 1 = 1 ids"):
        model.count([0, 1], 2)
    with pytest.raises(ValueError, match="next_id must be at most 4"):
        model.count([0], 5)
    with pytest.raises(ValueError, match="at least 2"):
        model.log_likelihood(torch.tensor([0]))


# ---------------------------------------------- properties at random sizes (hypothesis)


@covers("seqlearn.ngram.NGramModel")
@given(seed=seeds, n=st.integers(1, 4), V=st.integers(1, 4), N=st.integers(1, 40),
       k=st.floats(0.01, 3.0))
def test_ngram_counts_and_probabilities_equal_brute_force(seed, n, V, N, k):
    ids = torch.from_numpy(np.random.default_rng(seed).integers(0, V, N)).long()
    model = ngram.NGramModel(n, V, k=k, start=V - 1).fit(ids)
    padded = [V - 1] * (n - 1) + ids.tolist()
    grams = Counter(tuple(padded[t: t + n]) for t in range(N))
    contexts = Counter(g[:-1] for g in grams.elements())
    P = model.next_probabilities(ids)
    for t in range(N):
        context = tuple(padded[t + 1: t + n])
        assert model.count(list(context)) == contexts[context]
        for v in range(V):
            want = (grams[context + (v,)] + k) / (contexts[context] + k * V)
            assert math.isclose(float(P[t, v]), want, rel_tol=1e-12)
    refuses(ngram.NGramModel, n, V, k=-k)
    refuses(model.fit, ids + V)


# ------------------------------------------------ interpolated Kneser-Ney (eq-lm-kn)


def _kn_brute(train, n, V, D, start):
    """Interpolated Kneser-Ney written out from its definition with Python counters:
    raw counts at order n, continuation counts (distinct characters before) below."""
    padded = [start] * (n - 1) + train.tolist()
    ends = range(n - 1, len(padded))  # the positions of the training characters
    levels = {}
    for m in range(1, n + 1):
        if m == n:
            a = Counter(tuple(padded[e - m + 1: e + 1]) for e in ends)
        else:
            before = {}
            for e in ends:
                before.setdefault(tuple(padded[e - m + 1: e + 1]), set()).add(
                    padded[e - m])
            a = Counter({g: len(s) for g, s in before.items()})
        levels[m] = a

    def p(m, history, v):  # history: the m - 1 characters before v
        if m == 0:
            return 1 / V
        a = levels[m]
        total = sum(a[history + (u,)] for u in range(V))
        lower = p(m - 1, history[1:], v)
        if total == 0:
            return lower
        kinds = sum(a[history + (u,)] > 0 for u in range(V))
        return (max(a[history + (v,)] - D, 0) + D * kinds * lower) / total

    return p


@pytest.mark.parametrize("n, D", [(1, 0.5), (2, 0.75), (3, 1.0), (4, 0.3)])
@pytest.mark.parametrize("seed", [0, 1])
def test_kneser_ney_equals_a_brute_force_count(n, D, seed):
    V, start = 4, 3
    train, test = _text(seed, N=120, V=V), _text(seed + 10, N=40, V=V)
    model = ngram.KneserNeyModel(n, V, discount=D, start=start).fit(train)
    p = _kn_brute(train, n, V, D, start)
    P = model.next_probabilities(test)
    padded = [start] * (n - 1) + test.tolist()
    for t in range(len(test)):
        history = tuple(padded[t + 1: t + n])  # the n - 1 characters ending at test[t]
        want = [p(n, history, v) for v in range(V)]
        torch.testing.assert_close(P[t], torch.tensor(want, dtype=torch.float64),
                                   rtol=1e-12, atol=0)
    log_p = model.log_likelihood(test)
    torch.testing.assert_close(log_p, P[:-1].gather(1, test[1:, None])[:, 0].log())


@pytest.mark.parametrize("D", [0.1, 0.75, 1.0])
def test_kneser_ney_sums_to_one_for_every_context(D):
    """Every context of n - 1 characters, seen or not, gets a distribution that sums to
    1 over the alphabet; the lower orders are exercised by the unseen ones."""
    V, n = 4, 3
    train = _text(5, N=200, V=V)
    model = ngram.KneserNeyModel(n, V, discount=D, start=0).fit(train)
    contexts = torch.tensor([c for c in np.ndindex(V, V)]).reshape(-1)  # every pair
    # each pair (a, b) read as a two-character text: the row after b has context a b
    P = model.next_probabilities(contexts)[1::2]  # (V * V, V)
    assert len(P) == V * V and bool((P > 0).all())
    torch.testing.assert_close(P.sum(-1), torch.ones(V * V, dtype=torch.float64),
                               rtol=0, atol=1e-12)


def test_kneser_ney_refuses_a_discount_that_breaks_normalisation():
    """With D > 1 a character seen once would lose more than its count: the rows would
    not sum to 1, so the model refuses such a discount."""
    with pytest.raises(ValueError, match="discount must be at most 1"):
        ngram.KneserNeyModel(3, 5, discount=1.5)
    model = ngram.KneserNeyModel(3, 5)
    with pytest.raises(ValueError, match="discount must be at most 1"):
        model.discount = 2.0
    with pytest.raises(ValueError, match="discount must be positive"):
        model.discount = 0.0
    with pytest.raises(ValueError, match="call fit"):
        model.log_likelihood(torch.tensor([0, 1]))
    with pytest.raises(ValueError, match="at least one character"):
        model.fit(torch.zeros(0, dtype=torch.long))
    with pytest.raises(ValueError, match="too large"):
        ngram.KneserNeyModel(12, 100)
    model.fit(torch.tensor([0, 1, 2]))
    with pytest.raises(ValueError, match="at least 2"):
        model.log_likelihood(torch.tensor([0]))


def test_kneser_ney_beats_add_k_on_held_out_text():
    """On the book's text Kneser-Ney of order 5 with D = 0.75, not tuned, spends fewer
    bits per held-out character than add-k with its best order and pseudo-count on a
    small grid chosen on validation text cut from the training topics."""
    from seqlearn.char_text import CharVocab, reference_topics, split_reference_text
    split = split_reference_text()
    vocab = CharVocab(split.train + split.held_out)
    topics = reference_topics()
    inner = split_reference_text({t: topics[t] for t in split.train_topics}, every=7)
    fit_ids, val_ids = vocab.encode(inner.train), vocab.encode(inner.held_out)
    V, start = len(vocab), vocab.stoi["\n"]

    def bits(model, ids):
        return float(-model.log_likelihood(ids).mean()) / math.log(2)

    _, n, k = min((bits(NGramModel(n, V, k=k, start=start).fit(fit_ids), val_ids), n, k)
                  for n in (4, 5, 6) for k in (0.1, 0.01))
    train_ids, held_ids = vocab.encode(split.train), vocab.encode(split.held_out)
    held_add_k = bits(NGramModel(n, V, k=k, start=start).fit(train_ids), held_ids)
    held_kn = bits(ngram.KneserNeyModel(5, V, discount=0.75, start=start)
                   .fit(train_ids), held_ids)
    assert held_kn < held_add_k - 0.2, (held_kn, held_add_k)


@covers("seqlearn.ngram.KneserNeyModel")
@given(seed=seeds, n=st.integers(1, 4), V=st.integers(1, 4), N=st.integers(1, 30),
       D=st.floats(0.01, 1.0))
def test_kneser_ney_equals_brute_force_and_sums_to_one(seed, n, V, N, D):
    ids = torch.from_numpy(np.random.default_rng(seed).integers(0, V, N)).long()
    model = ngram.KneserNeyModel(n, V, discount=D, start=V - 1).fit(ids)
    p = _kn_brute(ids, n, V, D, V - 1)
    P = model.next_probabilities(ids)
    padded = [V - 1] * (n - 1) + ids.tolist()
    for t in range(N):
        history = tuple(padded[t + 1: t + n])
        for v in range(V):
            assert math.isclose(float(P[t, v]), p(n, history, v), rel_tol=1e-12)
    torch.testing.assert_close(P.sum(-1), torch.ones(N, dtype=torch.float64))
    refuses(ngram.KneserNeyModel, n, V, discount=1.0 + D)
    refuses(model.fit, ids + V)
