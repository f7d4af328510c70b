import pytest
import torch

from seqlearn.data import sample_and_hold


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
