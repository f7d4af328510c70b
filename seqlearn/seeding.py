"""One seeding helper for the whole book: every random number flows from here."""

from __future__ import annotations

import random

import numpy as np
import torch


def seed_all(seed: int = 0, *, threads: int | None = 1) -> torch.Generator:
    """Seed Python, NumPy and PyTorch, and return a fresh ``torch.Generator`` seeded with ``seed``.

    Chapters call this once at the top; functions that need their own stream take the returned
    generator as an explicit ``generator=`` argument instead of touching global state.

    ``threads`` sets PyTorch's intra-op thread count (``None`` leaves it alone). The book's
    models are tiny: on them one thread is faster than several (no synchronisation per small
    matrix product), and a fixed count keeps floating-point reductions, hence results, identical
    on machines with different numbers of cores.
    """
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise TypeError(f"seed must be an int, got {type(seed).__name__}")
    if not -2**63 <= seed < 2**64:  # torch's range, checked before anything is seeded
        raise ValueError(f"seed must be in [-2**63, 2**64 - 1] (torch.manual_seed), "
                         f"got {seed}")
    if threads is not None:
        if not isinstance(threads, int) or isinstance(threads, bool) or threads < 1:
            raise ValueError(f"threads must be a positive int or None, got {threads!r}")
        torch.set_num_threads(threads)
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)
    return torch.Generator().manual_seed(seed)
