"""seqlearn.data.multi_recall: indexed recall of k symbols; properties at random
sizes."""

import numpy as np
import pytest
import torch
from hypothesis import given, strategies as st

from properties import covers, not_bools, refuses, seeds
from seqlearn.data import multi_recall
from seqlearn.data.multi_recall import multi_recall_dataset, multi_recall_vocab_size


@pytest.mark.parametrize("k, K, M", [(1, 4, 3), (3, 2, 1), (5, 6, 2)])
def test_vocabulary_is_symbols_distractors_and_one_cue_per_position(k, K, M):
    assert multi_recall_vocab_size(k, K, M) == K + M + k
    assert multi_recall_vocab_size(k) == 4 + 3 + k


@pytest.mark.parametrize("k, delay, K, M", [(1, 0, 4, 3), (3, 5, 4, 3), (6, 2, 2, 1), (2, 9, 5, 4)])
def test_layout_and_label_follow_the_definition(k, delay, K, M):
    n = 300
    tokens, labels = multi_recall_dataset(n, k, delay, np.random.default_rng(1), num_symbols=K,
                                          num_distractors=M, onehot=False)
    assert tokens.shape == (n, k + delay + 1) and tokens.dtype == torch.int64
    assert labels.shape == (n,) and labels.dtype == torch.int64
    assert ((tokens[:, :k] >= 0) & (tokens[:, :k] < K)).all()              # symbols
    assert ((tokens[:, k:k + delay] >= K) & (tokens[:, k:k + delay] < K + M)).all()
    cue = tokens[:, -1] - (K + M)                                            # the cued position
    assert ((cue >= 0) & (cue < k)).all()
    assert torch.equal(labels, tokens[torch.arange(n), cue])                # label = s_j
    # every position is cued, every symbol and distractor occurs (n is large)
    assert set(cue.tolist()) == set(range(k))
    assert set(labels.tolist()) == set(range(K))
    if delay:
        assert set(tokens[:, k:k + delay].flatten().tolist()) == set(range(K, K + M))


def test_onehot_encodes_the_tokens_and_is_seeded():
    x, y = multi_recall_dataset(20, 3, 4, np.random.default_rng(7), dtype=torch.float64)
    tokens, labels = multi_recall_dataset(20, 3, 4, np.random.default_rng(7), onehot=False)
    assert x.dtype == torch.float64 and x.shape == (20, 8, multi_recall_vocab_size(3))
    assert torch.equal(x.argmax(-1), tokens) and torch.equal(x.sum(-1), torch.ones(20, 8,
                                                                                    dtype=torch.float64))
    assert torch.equal(y, labels)
    x2, _ = multi_recall_dataset(20, 3, 4, np.random.default_rng(8))
    assert not torch.equal(x2.argmax(-1), tokens)


def test_one_item_is_the_recall_task():
    tokens, labels = multi_recall_dataset(50, 1, 6, np.random.default_rng(0), onehot=False)
    assert torch.equal(labels, tokens[:, 0]) and (tokens[:, -1] == 7).all()


def test_validation_errors():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="num_items"):
        multi_recall_vocab_size(0)
    with pytest.raises(ValueError, match="num_symbols"):
        multi_recall_vocab_size(2, 1)
    with pytest.raises(ValueError, match="num_distractors"):
        multi_recall_vocab_size(2, 4, 0)
    with pytest.raises(TypeError, match="num_items"):
        multi_recall_vocab_size(2.0)
    with pytest.raises(ValueError, match="n must"):
        multi_recall_dataset(0, 2, 3, rng)
    with pytest.raises(ValueError, match="delay"):
        multi_recall_dataset(4, 2, -1, rng)
    with pytest.raises(ValueError, match="num_items"):
        multi_recall_dataset(4, 0, 3, rng)
    with pytest.raises(TypeError, match="rng"):
        multi_recall_dataset(4, 2, 3, 0)
    with pytest.raises(TypeError, match="onehot"):
        multi_recall_dataset(4, 2, 3, rng, onehot=1)


# ---------------------------------------------- properties at random sizes (hypothesis)


@covers("seqlearn.data.multi_recall.multi_recall_dataset",
        "seqlearn.data.multi_recall.multi_recall_vocab_size")
@given(seed=seeds, n=st.integers(1, 6), k=st.integers(1, 5), delay=st.integers(0, 6),
       K=st.integers(2, 5), M=st.integers(1, 3), flag=not_bools)
def test_label_is_the_symbol_at_the_cued_position(seed, n, k, delay, K, M, flag):
    rng = np.random.default_rng(seed)
    x, y = multi_recall.multi_recall_dataset(n, k, delay, rng, num_symbols=K, num_distractors=M)
    V = multi_recall.multi_recall_vocab_size(k, K, M)
    assert V == K + M + k and x.shape == (n, k + delay + 1, V)
    tokens = x.argmax(-1)
    cue = tokens[:, -1] - (K + M)
    assert ((cue >= 0) & (cue < k)).all()
    assert torch.equal(y, tokens[torch.arange(n), cue]) and (y < K).all()
    assert ((tokens[:, k:-1] >= K) & (tokens[:, k:-1] < K + M)).all()
    refuses(multi_recall.multi_recall_dataset, n, k, delay, rng, onehot=flag)
    refuses(multi_recall.multi_recall_dataset, n, 0, delay, rng)
    refuses(multi_recall.multi_recall_vocab_size, k, 1)


@pytest.mark.parametrize("onehot", [True, False])
@pytest.mark.parametrize("dtype", [torch.int64, "float32", None, np.float32])
def test_dtype_must_be_a_floating_torch_dtype(dtype, onehot):
    """``dtype`` was handed to ``Tensor.to`` unchecked (issue 31)."""
    with pytest.raises(TypeError, match="dtype must be a floating torch.dtype"):
        multi_recall_dataset(2, 2, 1, np.random.default_rng(0), dtype=dtype,
                             onehot=onehot)
