"""One seeding helper for the whole book: every random number flows from here."""

from __future__ import annotations

import random

import numpy as np
import torch


def seed_all(seed: int = 0) -> torch.Generator:
    """Seed Python, NumPy and PyTorch, and return a fresh ``torch.Generator`` seeded with ``seed``.

    Chapters call this once at the top; functions that need their own stream take the returned
    generator as an explicit ``generator=`` argument instead of touching global state.
    """
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise TypeError(f"seed must be an int, got {type(seed).__name__}")
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)
    return torch.Generator().manual_seed(seed)
