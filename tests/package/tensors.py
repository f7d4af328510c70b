"""Random float64 test tensors, each from its own seeded generator (no global random state)."""

import torch


def rand(*shape: int, seed: int = 0) -> torch.Tensor:
    """Standard-normal float64 tensor of ``shape``, reproducible from ``seed`` alone."""
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
