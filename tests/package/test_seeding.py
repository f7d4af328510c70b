"""seqlearn.seeding: one call makes the run reproducible and pins the thread count."""

import numpy as np
import pytest
import torch

from seqlearn.seeding import seed_all


def test_seed_all_is_reproducible():
    g1 = seed_all(3)
    a = torch.randn(4), np.random.rand(), torch.randn(2, generator=g1)
    g2 = seed_all(3)
    b = torch.randn(4), np.random.rand(), torch.randn(2, generator=g2)
    torch.testing.assert_close(a[0], b[0])
    assert a[1] == b[1]
    torch.testing.assert_close(a[2], b[2])
    with pytest.raises(TypeError):
        seed_all(1.5)


def test_seed_all_pins_the_thread_count():
    before = torch.get_num_threads()
    try:
        seed_all(0, threads=1)
        assert torch.get_num_threads() == 1
        seed_all(0, threads=None)
        assert torch.get_num_threads() == 1
        with pytest.raises(ValueError, match="threads"):
            seed_all(0, threads=0)
    finally:
        torch.set_num_threads(before)


@pytest.mark.parametrize("seed", [2**64, 2**70, -2**63 - 1])
def test_a_seed_outside_torchs_range_is_refused_before_anything_is_seeded(seed):
    """``seed_all(2**70)`` failed in torch after Python and NumPy were reseeded
    (issue 31)."""
    import random

    random.seed(5)
    np.random.seed(5)
    before = random.getstate(), np.random.get_state()[1].copy(), torch.get_rng_state()
    with pytest.raises(ValueError, match=r"seed must be in \[-2\*\*63, 2\*\*64 - 1\]"):
        seed_all(seed, threads=None)
    assert random.getstate() == before[0]
    assert np.array_equal(np.random.get_state()[1], before[1])
    assert torch.equal(torch.get_rng_state(), before[2])


def test_the_ends_of_torchs_seed_range_are_accepted():
    for seed in (-2**63, 2**64 - 1):
        assert isinstance(seed_all(seed, threads=None), torch.Generator)
