"""Random float64 test tensors and parameters, each from its own seeded generator (no
global random state)."""

import torch
from torch import nn


def rand(*shape: int, seed: int = 0) -> torch.Tensor:
    """Standard-normal float64 tensor of ``shape``, reproducible from ``seed`` alone."""
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


def randomise(module: nn.Module, seed: int) -> nn.Module:
    """Non-trivial values for every parameter (LayerNorm gains/biases included)."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(torch.randn(p.shape, generator=g, dtype=p.dtype) * 0.5)
    return module
