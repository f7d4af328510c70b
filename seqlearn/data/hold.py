"""Sample and hold: remember the value written at the latest flagged step.

Each step carries a value ``v_t ~ U(-1, 1)`` and a write flag ``w_t ~ Bernoulli(p)``; the target
is the value at the most recent write,

.. math::  y_t = v_{s(t)}, \\qquad s(t) = \\max\\{ s \\le t : w_s = 1 \\},

and ``y_t = 0`` before the first write. A gated network solves it by closing its keep gate at a
write and holding it open in between, which is why the GRU chapters use it.
"""

from __future__ import annotations

import torch

from seqlearn.validate import check_bool, check_int, check_real


def sample_and_hold(n: int, T: int, p_write: float, generator: torch.Generator, *,
                    write_at_start: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    """Draw ``n`` sequences of length ``T``: ``x (n, T, 2) = (value, flag)``, ``target (n, T)``.

    ``write_at_start=True`` forces a write at ``t = 0``, so every target is a written value.
    """
    check_int(n, "n")
    check_int(T, "T")
    check_bool(write_at_start, "write_at_start")
    if not 0.0 <= check_real(p_write, "p_write") <= 1.0:
        raise ValueError(f"p_write must be a probability in [0, 1], got {p_write!r}")
    if not isinstance(generator, torch.Generator):
        raise TypeError(f"generator must be a torch.Generator, got {type(generator).__name__}")
    value = 2 * torch.rand(n, T, generator=generator) - 1  # (n, T)
    write = torch.rand(n, T, generator=generator) < p_write  # (n, T)
    if write_at_start:
        write[:, 0] = True
    latest = torch.where(write, torch.arange(T), -1).cummax(dim=1).values  # (n, T), -1: none yet
    target = torch.where(latest >= 0, value.gather(1, latest.clamp(min=0)), 0.0)  # (n, T)
    return torch.stack([value, write.float()], dim=-1), target
