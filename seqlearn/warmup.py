r"""Learning-rate warm-up: the Transformer paper's schedule, a linear one, and a loop using them.

Vaswani et al. (2017, section 5.3) raise the learning rate linearly for ``warmup`` steps and
then let it fall as the inverse square root of the step number ``n = 1, 2, ...``:

.. math::

    \eta_n = d_{\text{model}}^{-1/2} \min\big(n^{-1/2},\ n\, w^{-3/2}\big)
    \qquad \text{(book equation eq-tf-noam)}.

The book's small models use a linear warm-up to a peak ``lr`` followed by a linear decay to
zero at the last step (step ``k = 0 .. steps - 1``):

.. math::

    \eta_k = \eta \min\Big(\frac{k + 1}{w},\ \frac{\text{steps} - k}{\text{steps} - w}\Big)
    \qquad \text{(book equation eq-tf-linear-warmup)};

with ``w = 0`` this is ``eta (1 - k / steps)``, the decay of :func:`seqlearn.train.fit`.

:func:`adam_moments` replays Adam's bias-corrected moments (book equation eq-tf-adam) on given
gradients, to measure how its adaptive rate ``1 / sqrt(v_hat)`` behaves over the first steps.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import torch
from torch import nn

from seqlearn.train import fit
from seqlearn.validate import check_int, check_real, check_shape, check_tensor


def noam_rate(step: int, d_model: int, warmup: int, *, factor: float = 1.0) -> float:
    """The paper's learning rate at step ``step >= 1`` (eq-tf-noam), times ``factor``."""
    step = check_int(step, "step")
    d_model = check_int(d_model, "d_model")
    warmup = check_int(warmup, "warmup")
    factor = check_real(factor, "factor", positive=True)
    return factor * d_model ** -0.5 * min(step ** -0.5, step * warmup ** -1.5)


def linear_warmup_rate(step: int, steps: int, warmup: int) -> float:
    """The multiplier of the peak rate at step ``0 <= step < steps`` (eq-tf-linear-warmup)."""
    steps = check_int(steps, "steps")
    step = check_int(step, "step", minimum=0, maximum=steps - 1)
    warmup = check_int(warmup, "warmup", minimum=0, maximum=steps - 1)
    up = (step + 1) / warmup if warmup else math.inf
    return min(up, (steps - step) / (steps - warmup))


def fit_scheduled(model: nn.Module, batches: Callable[[int], Any], steps: int, *,
                  loss: Callable[[nn.Module, Any], torch.Tensor], lr: float,
                  schedule: Callable[[int], float] | None = None, clip: float | None = 1.0,
                  betas: tuple[float, float] = (0.9, 0.999)) -> list[float]:
    """Adam on ``loss(model, batches(k))`` for ``steps`` steps at rate ``lr * schedule(k)``.

    :func:`seqlearn.train.fit` with any schedule (``None``: constant ``lr``), e.g.
    ``lambda k: linear_warmup_rate(k, steps, 50)``. ``clip`` rescales the gradient to that
    global norm when it is larger (``None``: off). Returns the losses.
    """
    if not callable(loss):
        raise TypeError(f"loss must be callable, got {type(loss).__name__}")
    return fit(model, batches, steps, lr=lr, clip=clip, loss=loss, schedule=schedule,
               betas=betas)


def adam_moments(grads: torch.Tensor, *, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8) -> tuple[torch.Tensor, torch.Tensor]:
    r"""Adam's adaptive rate and step after each of the first ``N`` steps (eq-tf-adam).

    ``grads`` (..., N, P): the gradients of ``P`` coordinates at steps ``n = 1 .. N``
    (leading dimensions for independent runs). With ``m_n``, ``v_n`` the running
    averages of the gradient and of its square and the bias corrections
    ``m_hat = m_n / (1 - beta1^n)``, ``v_hat = v_n / (1 - beta2^n)``, returns
    ``(rate, step)``, each (..., N, P): ``rate = 1 / (sqrt(v_hat) + eps)``, the adaptive
    rate that multiplies ``eta m_hat``, and ``step = m_hat * rate``, the update in units
    of ``eta``.
    """
    check_tensor(grads, "grads")
    N = check_shape(grads, "grads", "... N P")["N"]
    beta1 = check_real(betas[0], "beta1")
    beta2 = check_real(betas[1], "beta2")
    if not (0 <= beta1 < 1 and 0 <= beta2 < 1):
        raise ValueError(f"betas must lie in [0, 1), got {betas}")
    eps = check_real(eps, "eps", positive=True)
    m = grads.new_zeros(grads.shape[:-2] + grads.shape[-1:])  # (..., P)
    v = torch.zeros_like(m)
    rates, steps = [], []
    for n in range(1, N + 1):
        g = grads[..., n - 1, :]
        m = beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g * g
        rate = 1 / ((v / (1 - beta2**n)).sqrt() + eps)  # (..., P)
        rates.append(rate)
        steps.append(m / (1 - beta1**n) * rate)
    if N == 0:  # no step yet
        return grads.new_zeros(grads.shape), grads.new_zeros(grads.shape)
    return torch.stack(rates, -2), torch.stack(steps, -2)  # (..., N, P) each
