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
