"""A small, explicit training loop for sequence classifiers (the book's experiments use it).

Nothing is hidden: :func:`fit` is the usual loop of forward pass, cross-entropy, backward pass,
optional gradient-norm clipping and an Adam step, written out in a dozen lines.
"""

from __future__ import annotations

from typing import Any, Callable

import torch
from torch import nn

from seqlearn.validate import check_bool, check_int, check_real, check_shape, check_tensor

Batch = tuple[torch.Tensor, torch.Tensor]


class SequenceClassifier(nn.Module):
    """Read a sequence with a recurrent module and classify it from the last output.

    ``logits = W_out y_T + b_out`` where ``y_T`` is the recurrent module's output at the last
    time step. ``rnn`` follows the ``torch.nn.RNN`` contract with ``batch_first=True``:
    ``rnn(x) -> (y (B, T, F), state)``; ``features`` is ``F`` (``dirs * hidden_size``).
    """

    def __init__(self, rnn: nn.Module, features: int, num_classes: int) -> None:
        super().__init__()
        self.rnn = rnn
        self.head = nn.Linear(features, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        check_tensor(x, "x")
        check_shape(x, "x", "B T D")
        y, _ = self.rnn(x)  # (B, T, F)
        return self.head(y[:, -1])  # (B, C)


def accuracy(model: nn.Module, x: torch.Tensor, labels: torch.Tensor) -> float:
    """Fraction of sequences whose arg-max logit equals the label (model in eval mode, no grad)."""
    was_training = model.training
    model.eval()
    with torch.no_grad():
        predictions = model(x).argmax(dim=-1)  # (B,)
    model.train(was_training)
    if predictions.shape != labels.shape:
        raise ValueError(f"labels must have shape {tuple(predictions.shape)}, got {tuple(labels.shape)}")
    return float((predictions == labels).float().mean())


def _classification_loss(model: nn.Module, batch: Batch) -> torch.Tensor:
    x, labels = batch  # (B, T, D), (B,)
    return nn.functional.cross_entropy(model(x), labels)


def fit(model: nn.Module, batches: Callable[[int], Any], steps: int, *, lr: float = 1e-2,
        clip: float | None = 1.0, weight_decay: float = 0.0, decay: bool = False,
        loss: Callable[[nn.Module, Any], torch.Tensor] | None = None,
        schedule: Callable[[int], float] | None = None,
        betas: tuple[float, float] = (0.9, 0.999)) -> list[float]:
    """Train ``model`` with Adam for ``steps`` mini-batches; return the losses.

    ``batches(step)`` returns the batch for that step, so the caller controls the data stream
    (and its seeding); ``loss(model, batch)`` computes its loss, by default the cross-entropy
    of ``model(x)`` against ``labels`` for a batch ``(x (B, T, D), labels (B,))``. ``clip``
    rescales the gradient when its global norm exceeds the threshold,
    ``g <- g * clip / ||g||`` (Pascanu et al., 2013); ``None`` turns it off. The rate at step
    ``k`` is ``lr * schedule(k)`` (e.g. a warm-up, :mod:`seqlearn.warmup`); ``decay=True`` is
    the schedule ``1 - k / steps``, a linear decay to 0. ``betas`` are Adam's.
    """
    check_int(steps, "steps")
    check_real(lr, "lr", positive=True)
    check_real(weight_decay, "weight_decay", minimum=0.0)
    check_bool(decay, "decay")
    if schedule is not None and not callable(schedule):
        raise TypeError(f"schedule must be callable (step -> multiplier), got "
                        f"{type(schedule).__name__}")
    if decay and schedule is not None:
        raise ValueError("pass either decay=True or a schedule, not both")
    if decay:
        schedule = lambda k: 1 - k / steps  # noqa: E731
    if clip is not None:
        check_real(clip, "clip", positive=True)  # a threshold <= 0 would reverse the step
    if not callable(batches):
        raise TypeError(f"batches must be callable (step -> batch), got {type(batches).__name__}")
    if loss is None:
        loss = _classification_loss
    elif not callable(loss):
        raise TypeError(f"loss must be callable (model, batch) -> loss, got {type(loss).__name__}")
    optimizer = torch.optim.Adam(model.parameters(), lr=lr, betas=betas,
                                 weight_decay=weight_decay)
    losses = []
    model.train()
    for step in range(steps):
        optimizer.param_groups[0]["lr"] = lr * (1.0 if schedule is None else schedule(step))
        value = loss(model, batches(step))
        if not torch.isfinite(value):
            raise FloatingPointError(f"the loss became {value.item()} at step {step}; "
                                     "lower lr, warm up longer or clip")
        optimizer.zero_grad()
        value.backward()
        if clip is not None:
            nn.utils.clip_grad_norm_(model.parameters(), clip)
        optimizer.step()
        losses.append(value.item())
    return losses
