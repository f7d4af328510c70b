"""A small, explicit training loop for sequence classifiers (the book's experiments use it).

Nothing is hidden: :func:`fit` is the usual loop of forward pass, cross-entropy, backward pass,
optional gradient-norm clipping and an Adam step, written out in a dozen lines.
"""

from __future__ import annotations

from typing import Any, Callable

import torch
from torch import nn

from seqlearn.validate import (check_bool, check_finite, check_int, check_nonempty,
                               check_real, check_shape, check_tensor, check_tokens)

Batch = tuple[torch.Tensor, torch.Tensor]


class SequenceClassifier(nn.Module):
    """Read a sequence with a recurrent module and classify it from the last output.

    ``logits = W_out y_T + b_out`` where ``y_T`` is the recurrent module's output at the
    last time step. ``rnn`` follows the ``torch.nn.RNN`` contract with
    ``batch_first=True``: ``rnn(x) -> (y (B, T, F), state)``; ``features`` is ``F``
    (``dirs * hidden_size``).
    """

    def __init__(self, rnn: nn.Module, features: int, num_classes: int) -> None:
        super().__init__()
        if not isinstance(rnn, nn.Module):
            raise TypeError(f"rnn must be a torch.nn.Module, got {type(rnn).__name__}")
        self.rnn = rnn
        self.head = nn.Linear(check_int(features, "features"),
                              check_int(num_classes, "num_classes"))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        check_tensor(x, "x")
        check_nonempty(x, "x", "B T D", "T")  # the last step must exist
        y, _ = self.rnn(x)  # (B, T, F)
        return self.head(y[:, -1])  # (B, C)


def _check_model(model: Any) -> None:
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be a torch.nn.Module, got {type(model).__name__}")


def _check_labels(labels: Any, x: Any) -> None:
    """``labels``: a LongTensor ``(B,)``, one class per sequence of ``x``, ``B >= 1``.

    ``x`` is whatever the model reads: features ``(B, T, D)`` or token ids ``(B, T)``."""
    check_tensor(x, "x", floating=False)
    check_tensor(labels, "labels", floating=False)
    if labels.dtype != torch.long:
        raise TypeError(f"labels must be a LongTensor of class ids, got dtype "
                        f"{labels.dtype}")
    if x.dim() == 0:
        raise ValueError("x must have a batch dimension (B, ...), got a scalar")
    if tuple(labels.shape) != (x.shape[0],):
        raise ValueError(f"labels must have shape (B,) with B = {x.shape[0]} sequences "
                         f"as in x, got {tuple(labels.shape)}")
    if labels.numel() == 0:
        raise ValueError("labels must hold at least one example, got B = 0")


def _logits(model: nn.Module, x: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """``model(x)`` checked to be finite ``(B, C)`` logits, with ``labels`` in
    ``[0, C)``."""
    logits = model(x)  # (B, C)
    check_tensor(logits, "model(x)")
    dims = check_nonempty(logits, "model(x)", "B C", "C")
    check_tokens(labels, "labels", "B", dims["C"])
    check_finite(logits, "model(x) (check x and the model's parameters)")
    return logits


def accuracy(model: nn.Module, x: torch.Tensor, labels: torch.Tensor) -> float:
    """Fraction of sequences whose arg-max logit equals the label (model in eval mode,
    no grad).

    ``labels (B,)`` long in ``[0, C)``; NaN or infinite logits raise ``ValueError``
    (their arg-max would be a meaningless class).
    """
    _check_model(model)
    _check_labels(labels, x)
    was_training = model.training
    model.eval()
    with torch.no_grad():
        predictions = _logits(model, x, labels).argmax(dim=-1)  # (B,)
    model.train(was_training)
    return float((predictions == labels).float().mean())


def _classification_loss(model: nn.Module, batch: Batch) -> torch.Tensor:
    if not isinstance(batch, (tuple, list)) or len(batch) != 2:
        raise TypeError("batches(step) must return a pair (x (B, T, D), labels (B,)), "
                        f"got {type(batch).__name__}")
    x, labels = batch  # (B, T, D), (B,)
    _check_labels(labels, x)
    return nn.functional.cross_entropy(_logits(model, x, labels), labels)


def _gradient_norm(model: nn.Module) -> torch.Tensor:
    """The global norm ``||g||`` of all the parameters' gradients."""
    norms = [p.grad.norm() for p in model.parameters() if p.grad is not None]
    return torch.stack(norms).norm() if norms else torch.zeros(())


def fit(model: nn.Module, batches: Callable[[int], Any], steps: int, *,
        lr: float = 1e-2, clip: float | None = 1.0, weight_decay: float = 0.0,
        decay: bool = False,
        loss: Callable[[nn.Module, Any], torch.Tensor] | None = None,
        schedule: Callable[[int], float] | None = None,
        betas: tuple[float, float] = (0.9, 0.999)) -> list[float]:
    """Train ``model`` with Adam for ``steps`` mini-batches; return the losses.

    ``batches(step)`` returns the batch for that step, so the caller controls the data
    stream (and its seeding); ``loss(model, batch)`` computes its loss (a scalar
    tensor), by default the cross-entropy of ``model(x)`` against ``labels`` for a batch
    ``(x (B, T, D), labels (B,))``. ``clip`` rescales the gradient when its global norm
    exceeds the threshold, ``g <- g * clip / ||g||`` (Pascanu et al., 2013); ``None``
    turns it off. The rate at step ``k`` is ``lr * schedule(k)`` (e.g. a warm-up,
    :mod:`seqlearn.warmup`); ``decay=True`` is the schedule ``1 - k / steps``, a linear
    decay to 0. ``betas`` are Adam's. Every ``schedule(k)`` is read before the first
    step and must be a finite number ``>= 0`` (a negative rate would climb the loss). A
    loss or a gradient that becomes NaN or infinite raises ``ValueError`` before the
    step that would spread it to the parameters.
    """
    _check_model(model)
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
    rates = [lr * (1.0 if schedule is None else  # eta_k, all checked before step 0
                   check_real(schedule(k), f"schedule({k})", minimum=0.0))
             for k in range(steps)]
    if clip is not None:
        # a threshold <= 0 would reverse the step
        check_real(clip, "clip", positive=True)
    if not callable(batches):
        raise TypeError(f"batches must be callable (step -> batch), got "
                        f"{type(batches).__name__}")
    if loss is None:
        loss = _classification_loss
    elif not callable(loss):
        raise TypeError(f"loss must be callable (model, batch) -> loss, got "
                        f"{type(loss).__name__}")
    optimizer = torch.optim.Adam(model.parameters(), lr=lr, betas=betas,
                                 weight_decay=weight_decay)
    losses = []
    model.train()
    for step, rate in enumerate(rates):
        optimizer.param_groups[0]["lr"] = rate
        value = loss(model, batches(step))
        if not isinstance(value, torch.Tensor) or value.dim() != 0:
            raise TypeError(f"loss(model, batch) must return a scalar tensor, got "
                            f"{getattr(value, 'shape', type(value).__name__)}")
        if not torch.isfinite(value):
            raise ValueError(f"the loss became {value.item()} at step {step}: lower lr, "
                             f"warm up longer or clip, or look for NaN or inf in "
                             f"batches({step})")
        optimizer.zero_grad()
        value.backward()
        norm = (_gradient_norm(model) if clip is None  # ||g||, before any clipping
                else nn.utils.clip_grad_norm_(model.parameters(), clip))
        if not torch.isfinite(norm):
            raise ValueError(f"the gradient became {norm.item()} at step {step} (the "
                             "parameters are left as they were before it): lower lr or "
                             f"look for NaN or inf in batches({step})")
        optimizer.step()
        losses.append(value.item())
    return losses
