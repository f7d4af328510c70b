"""seqlearn.data.recall: delayed recall of one symbol (the copy task of Part I): its
layout, one-hot inputs, batches and errors, at fixed and at random sizes."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

from seqlearn.data.recall import (recall_batches, recall_dataset, recall_tokens,
                                  recall_vocab_size)


@pytest.mark.parametrize("K, M", [(4, 3), (2, 1), (6, 5)])
def test_layout_follows_the_definition(K, M):
    n, delay = 400, 7
    tokens, labels = recall_tokens(n, delay, np.random.default_rng(0), num_symbols=K,
                                   num_distractors=M)
    assert recall_vocab_size(K, M) == K + M + 1
    assert tokens.shape == (n, delay + 2) and tokens.dtype == np.int64
    assert np.array_equal(tokens[:, 0], labels)                       # the symbol at step 0
    assert set(labels.tolist()) == set(range(K))                      # every symbol occurs
    middle = tokens[:, 1:-1]
    assert set(middle.flatten().tolist()) == set(range(K, K + M))     # every distractor
    assert (tokens[:, -1] == K + M).all()                             # the cue, last token
    assert (tokens[:, 1:] >= K).all()                                 # no symbol after step 0


def test_dataset_is_the_onehot_of_the_tokens_and_zero_delay_works():
    x, y = recall_dataset(30, 4, np.random.default_rng(5), dtype=torch.float64)
    tokens, labels = recall_tokens(30, 4, np.random.default_rng(5))
    assert x.dtype == torch.float64 and x.shape == (30, 6, recall_vocab_size())
    assert torch.equal(x.argmax(-1), torch.from_numpy(tokens))
    assert torch.equal(y, torch.from_numpy(labels))
    assert torch.equal(x.sum(-1), torch.ones(30, 6, dtype=torch.float64))
    idx, _ = recall_dataset(3, 0, np.random.default_rng(1), onehot=False)
    assert idx.shape == (3, 2) and (idx[:, 1] == 7).all()


def test_batches_draw_fresh_data_with_delays_from_the_list():
    batches = recall_batches(16, [2, 5], np.random.default_rng(2))
    lengths = {batches(step)[0].shape[1] for step in range(20)}
    assert lengths == {4, 7}
    x1, x2 = batches(0)[0], batches(1)[0]
    assert not (x1.shape == x2.shape and torch.equal(x1, x2))
    again = recall_batches(16, [2, 5], np.random.default_rng(2))
    fresh = recall_batches(16, [2, 5], np.random.default_rng(2))
    torch.testing.assert_close(again(0)[0], fresh(0)[0])


def test_validation_errors():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="num_symbols"):
        recall_vocab_size(1)
    with pytest.raises(ValueError, match="num_distractors"):
        recall_vocab_size(4, 0)
    with pytest.raises(ValueError, match="delay"):
        recall_tokens(3, -1, rng)
    with pytest.raises(ValueError, match="delays"):
        recall_batches(4, [], rng)
    with pytest.raises(ValueError, match="every delay"):
        recall_batches(4, [1, -2], rng)
    with pytest.raises(ValueError, match="batch_size"):
        recall_batches(0, [1], rng)
    with pytest.raises(TypeError, match="rng"):
        recall_tokens(3, 2, 0)


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 20), st.integers(0, 30), st.integers(2, 6), st.integers(1, 4), st.integers(0, 2**32 - 1))
def test_layout_at_random_sizes(n, delay, K, M, seed):
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


def test_tokens_and_batches_refuse_bad_arguments():
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


@pytest.mark.parametrize("dtype", [torch.int64, "float32", None])
def test_dtype_must_be_a_floating_torch_dtype(dtype):
    """As in ``multi_recall_dataset`` (issue 31): checked before any draw."""
    with pytest.raises(TypeError, match="dtype must be a floating torch.dtype"):
        recall_dataset(2, 1, np.random.default_rng(0), dtype=dtype)
    with pytest.raises(TypeError, match="dtype must be a floating torch.dtype"):
        recall_batches(2, [1], np.random.default_rng(0), dtype=dtype)
