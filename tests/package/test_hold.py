"""seqlearn.data.hold: sample-and-hold targets against a brute-force loop; properties at
random sizes (with the recall data and the seeding helper they draw with)."""

import numpy as np
import pytest
import torch
from hypothesis import given, strategies as st

from properties import covers, not_bools, refuses, seeds
from seqlearn import data, seeding
from seqlearn.data import brackets, hold, recall, sample_and_hold


def brute_force(x: torch.Tensor) -> torch.Tensor:
    target = torch.zeros(x.shape[:2])
    for b in range(x.shape[0]):
        held = 0.0
        for t in range(x.shape[1]):
            if x[b, t, 1] == 1:
                held = float(x[b, t, 0])
            target[b, t] = held
    return target


@pytest.mark.parametrize("p, start", [(0.2, False), (0.05, True), (0.0, False), (1.0, False)])
def test_target_is_the_value_at_the_latest_write(p, start):
    x, y = sample_and_hold(16, 25, p, torch.Generator().manual_seed(3), write_at_start=start)
    assert x.shape == (16, 25, 2) and y.shape == (16, 25)
    torch.testing.assert_close(y, brute_force(x))
    assert bool(((x[..., 0] >= -1) & (x[..., 0] <= 1)).all())
    if start:
        assert bool((x[:, 0, 1] == 1).all())


def test_seeded_and_errors():
    a = sample_and_hold(4, 6, 0.3, torch.Generator().manual_seed(0))
    b = sample_and_hold(4, 6, 0.3, torch.Generator().manual_seed(0))
    torch.testing.assert_close(a, b)
    with pytest.raises(ValueError, match="p_write"):
        sample_and_hold(2, 3, 1.5, torch.Generator())
    with pytest.raises(ValueError, match="T must be positive"):
        sample_and_hold(2, 0, 0.5, torch.Generator())
    with pytest.raises(TypeError, match="torch.Generator"):
        sample_and_hold(2, 3, 0.5, 0)


# ---------------------------------------------- properties at random sizes (hypothesis)


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
