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
