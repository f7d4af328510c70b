"""seqlearn.data.recall: the delayed-recall (copy) task."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from seqlearn.data import recall_batches, recall_dataset, recall_tokens, recall_vocab_size


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 20), st.integers(0, 30), st.integers(2, 6), st.integers(1, 4), st.integers(0, 2**32 - 1))
def test_layout(n, delay, K, M, seed):
    tokens, labels = recall_tokens(n, delay, np.random.default_rng(seed), num_symbols=K, num_distractors=M)
    assert tokens.shape == (n, delay + 2) and labels.shape == (n,)
    assert tokens.dtype == np.int64 and labels.dtype == np.int64
    np.testing.assert_array_equal(tokens[:, 0], labels)  # the symbol is shown at step 0
    assert ((0 <= labels) & (labels < K)).all()
    assert ((K <= tokens[:, 1:-1]) & (tokens[:, 1:-1] < K + M)).all()  # distractors only in between
    assert (tokens[:, -1] == K + M).all()  # the cue comes last
    assert recall_vocab_size(K, M) == K + M + 1


def test_onehot_matches_tokens_and_is_seeded():
    x, labels = recall_dataset(50, 7, np.random.default_rng(3), num_symbols=5, num_distractors=2)
    tokens, labels2 = recall_tokens(50, 7, np.random.default_rng(3), num_symbols=5, num_distractors=2)
    assert x.shape == (50, 9, 8) and x.dtype == torch.float32
    torch.testing.assert_close(x.argmax(-1), torch.from_numpy(tokens))
    torch.testing.assert_close(x.sum(-1), torch.ones(50, 9))
    torch.testing.assert_close(labels, torch.from_numpy(labels2))
    idx, _ = recall_dataset(50, 7, np.random.default_rng(3), num_symbols=5, num_distractors=2, onehot=False)
    torch.testing.assert_close(idx, torch.from_numpy(tokens))
    x64, _ = recall_dataset(4, 1, np.random.default_rng(0), dtype=torch.float64)
    assert x64.dtype == torch.float64


def test_symbols_are_uniform():
    _, labels = recall_tokens(40_000, 0, np.random.default_rng(0), num_symbols=4)
    counts = np.bincount(labels, minlength=4) / 40_000
    np.testing.assert_allclose(counts, 0.25, atol=0.01)


def test_batches_stream_is_reproducible_and_uses_the_delays():
    a = recall_batches(8, [2, 5], np.random.default_rng(1))
    b = recall_batches(8, [2, 5], np.random.default_rng(1))
    lengths = set()
    for step in range(20):
        (xa, la), (xb, lb) = a(step), b(step)
        torch.testing.assert_close(xa, xb)
        torch.testing.assert_close(la, lb)
        assert xa.shape[0] == 8
        lengths.add(xa.shape[1])
    assert lengths == {4, 7}


def test_validation_errors():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="delay must be an integer >= 0, got -1"):
        recall_tokens(3, -1, rng)
    with pytest.raises(ValueError, match="n must be an integer >= 1, got 0"):
        recall_tokens(0, 3, rng)
    with pytest.raises(ValueError, match="num_symbols must be an integer >= 2, got 1"):
        recall_dataset(3, 3, rng, num_symbols=1)
    with pytest.raises(ValueError, match="num_distractors must be an integer >= 1, got 0"):
        recall_dataset(3, 3, rng, num_distractors=0)
    with pytest.raises(ValueError, match="delay must be an integer"):
        recall_tokens(3, 2.5, rng)
    with pytest.raises(TypeError, match="numpy.random.Generator"):
        recall_tokens(3, 3, 0)
    with pytest.raises(ValueError, match="delays must be a non-empty sequence"):
        recall_batches(4, [], rng)
    with pytest.raises(ValueError, match="delays must be a non-empty sequence"):
        recall_batches(4, 5, rng)
    with pytest.raises(ValueError, match="every delay must be an integer >= 0"):
        recall_batches(4, [3, -2], rng)
    with pytest.raises(ValueError, match="batch_size must be an integer >= 1"):
        recall_batches(0, [3], rng)
