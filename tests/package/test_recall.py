"""Tests of seqlearn.data.recall: delayed recall of one symbol."""

import numpy as np
import pytest
import torch

from seqlearn.data.recall import recall_batches, recall_dataset, recall_tokens, recall_vocab_size


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
