"""Property tests of seqlearn.data, seqlearn.seeding and seqlearn.train."""

import numpy as np
import torch
from hypothesis import given, strategies as st
from torch import nn

from properties import covers, not_bools, refuses, seeds
from seqlearn import data, seeding, train
from seqlearn.data import Vocab, brackets, hold, recall, vocab_size
from seqlearn.recurrent import ElmanRNN


@covers("seqlearn.data.brackets.balanced_string", "seqlearn.data.brackets.hard_negative",
        "seqlearn.data.brackets.bracket_strings", "seqlearn.data.brackets.bracket_dataset",
        "seqlearn.data.brackets.encode_brackets", "seqlearn.data.brackets.is_balanced",
        "seqlearn.data.brackets.nesting_depth", "seqlearn.data.brackets.running_count")
@given(seed=seeds, half=st.integers(1, 30), depth=st.one_of(st.none(), st.integers(1, 4)),
       flag=not_bools)
def test_brackets_are_balanced_within_depth_and_negatives_are_not(seed, half, depth, flag):
    rng = np.random.default_rng(seed)
    s = brackets.balanced_string(2 * half, rng, max_depth=depth)
    c = brackets.running_count(s)
    assert brackets.is_balanced(s) and c.min() >= 0 and c[-1] == 0
    assert brackets.nesting_depth(s) <= (depth or half)
    assert not brackets.is_balanced(brackets.hard_negative(s, rng))
    strings, labels = brackets.bracket_strings(4, 2 * half, rng, max_depth=depth)
    assert [brackets.is_balanced(t) for t in strings] == [bool(v) for v in labels]
    x, y = brackets.bracket_dataset(3, 2 * half, rng)
    assert x.shape == (3, 2 * half, 3) and torch.equal(x.sum(-1), torch.ones(3, 2 * half))
    assert brackets.encode_brackets([s], onehot=False).shape == (1, 2 * half)
    refuses(brackets.encode_brackets, [s], onehot=flag)
    refuses(brackets.balanced_string, 2 * half + 1, rng)
    refuses(brackets.balanced_string, 2 * half, rng, fill=float("nan"))


def test_balanced_string_cost_is_linear_without_a_depth_bound():
    s = brackets.balanced_string(20000, np.random.default_rng(0))  # was a cubic big-int table
    assert brackets.is_balanced(s)


@covers("seqlearn.data.hold.sample_and_hold", "seqlearn.data.recall.recall_tokens",
        "seqlearn.data.recall.recall_dataset", "seqlearn.data.recall.recall_batches",
        "seqlearn.data.recall.recall_vocab_size", "seqlearn.seeding.seed_all")
@given(seed=seeds, n=st.integers(1, 5), T=st.integers(1, 8), p=st.floats(0, 1), flag=not_bools)
def test_hold_and_recall_targets_follow_their_definitions(seed, n, T, p, flag):
    g = seeding.seed_all(seed % 1000)
    assert isinstance(g, torch.Generator)
    x, target = hold.sample_and_hold(n, T, p, g)
    for b in range(n):
        held = 0.0
        for t in range(T):
            held = float(x[b, t, 0]) if x[b, t, 1] else held
            assert float(target[b, t]) == held
    rng = np.random.default_rng(seed)
    tokens, labels = recall.recall_tokens(n, T, rng)
    assert (tokens[:, 0] == labels).all() and tokens.shape == (n, T + 2)
    xr, yr = recall.recall_dataset(n, T, rng)
    assert xr.shape == (n, T + 2, recall.recall_vocab_size())
    assert recall.recall_batches(2, [T], rng)(0)[0].shape[0] == 2
    refuses(hold.sample_and_hold, n, T, p, g, write_at_start=flag)
    refuses(hold.sample_and_hold, n, T, float("nan"), g)
    refuses(recall.recall_dataset, n, T, rng, onehot=flag)
    refuses(seeding.seed_all, "0")
    assert data.balanced_string is brackets.balanced_string


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


@covers("seqlearn.data.vocab.vocab_size")
@given(tokens=st.lists(st.sampled_from("abcdefgh"), unique=True, max_size=8),
       minimum=st.integers(0, 12), bad=st.sampled_from([True, 2.5, "7", None, [1, 2]]))
def test_vocab_size_is_the_length_of_a_vocab_or_the_int_itself(tokens, minimum, bad):
    vocab = Vocab(tokens)
    size = len(tokens) + 3  # the three specials come first
    if size >= minimum:
        assert vocab_size(vocab, "v", minimum) == size == vocab_size(size, "v", minimum)
        assert vocab_size(np.int64(size), "v", minimum) == size
    else:
        assert "v must" in str(refuses(vocab_size, vocab, "v", minimum))
        assert "v must" in str(refuses(vocab_size, size, "v", minimum))
    assert "v must be an int (the vocabulary's size) or a" in str(refuses(vocab_size, bad, "v"))
