"""Small, explicit training loops: the book trains every model here, none trains itself.

Nothing is hidden: :func:`fit` is the usual loop of forward pass, loss, backward pass,
optional gradient-norm clipping and an Adam step, written out in a dozen lines. The
encoder--decoder of Part III (:func:`fit_seq2seq`) and the memory network of Part V
(:func:`fit_memn2n`) are trained by the same loop with their own loss.
"""

from __future__ import annotations

from typing import Any, Callable

import torch
from torch import nn

from seqlearn.data.vocab import Seq2SeqBatch
from seqlearn.losses import _check_batch, masked_cross_entropy
from seqlearn.memory import PAD, MemN2N, answer_loss, random_noise_ages
from seqlearn.seq2seq import Seq2Seq
from seqlearn.validate import (check_bool, check_dtypes_agree, check_finite, check_int,
                               check_nonempty, check_real, check_shape, check_tensor,
                               check_tokens, first_weight)

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
        features = check_int(features, "features")
        out = _output_size(rnn)
        if out is not None and out != features:
            raise ValueError(f"features must be the rnn's output size F = dirs * "
                             f"hidden_size = {out}, got {features}")
        self.head = nn.Linear(features, check_int(num_classes, "num_classes"))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        check_tensor(x, "x")
        check_nonempty(x, "x", "B T D", "T")  # the last step must exist
        check_dtypes_agree(("x", x), ("the rnn's parameters", first_weight(self.rnn)))
        y, _ = self.rnn(x)  # (B, T, F)
        check_tensor(y, "the rnn's output y")
        check_shape(y, "the rnn's output y", "B T F",
                    sizes={"B": x.shape[0], "F": self.head.in_features})
        return self.head(y[:, -1])  # (B, C)


def _output_size(rnn: nn.Module) -> int | None:
    """``dirs * hidden_size`` (``proj_size`` for a projected LSTM) of a module with
    ``torch.nn.RNN``'s attributes ``hidden_size`` and ``bidirectional`` (torch's and
    seqlearn's stacks); None for another module (its output is checked at each call)."""
    hidden = getattr(rnn, "hidden_size", None)
    bidirectional = getattr(rnn, "bidirectional", None)
    if (isinstance(hidden, bool) or not isinstance(hidden, int)
            or not isinstance(bidirectional, bool)):
        return None
    hidden = getattr(rnn, "proj_size", 0) or hidden
    return (2 if bidirectional else 1) * hidden


def _check_model(model: Any, kind: type[nn.Module] = nn.Module) -> None:
    if not isinstance(model, kind):
        what = "a torch.nn.Module" if kind is nn.Module else f"a {kind.__name__}"
        raise TypeError(f"model must be {what}, got {type(model).__name__}")


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


def _check_batches(batches: Any) -> None:
    if not callable(batches):
        raise TypeError(f"batches must be callable (step -> batch), got "
                        f"{type(batches).__name__}")


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
    _check_batches(batches)
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


def _seq2seq_loss(model: Seq2Seq, batch: Seq2SeqBatch) -> torch.Tensor:
    """Teacher-forced :func:`seqlearn.losses.masked_cross_entropy` of a batch."""
    if not isinstance(batch, Seq2SeqBatch):
        raise TypeError(f"batches(step) must return a Seq2SeqBatch, "
                        f"got {type(batch).__name__}")
    _check_batch(batch, model.src_vocab_size, model.tgt_vocab_size, "batches(step)")
    logits, _ = model(batch.src, batch.src_lengths, batch.tgt_in)  # (B, T, V)
    return masked_cross_entropy(logits, batch.tgt_out, batch.tgt_mask)


def fit_seq2seq(model: Seq2Seq, batches: Callable[[int], Seq2SeqBatch], steps: int, *,
                lr: float = 3e-3, clip: float | None = 1.0,
                decay: bool = False) -> list[float]:
    """Train a :class:`seqlearn.seq2seq.Seq2Seq` with teacher forcing on
    :func:`seqlearn.losses.masked_cross_entropy` with Adam; return the losses.

    ``batches(step)`` returns a :class:`seqlearn.data.Seq2SeqBatch`. ``clip`` rescales
    the gradient to that global norm when it is larger (``None``: off). ``decay=True``
    lowers the learning rate linearly, ``lr_k = lr (1 - k / steps)`` at step ``k`` (an
    attention model on the reverse task goes from about 0.5 to 0.97 exact match in 300
    steps with it). The loop is :func:`fit` with this loss.
    """
    _check_model(model, Seq2Seq)
    return fit(model, batches, steps, lr=lr, clip=clip, decay=decay, loss=_seq2seq_loss)


class _Linear:
    """A story batch seen through the linear-start switch (``linear`` added to its
    fields) and, with ``noise > 0``, through random noise (``ages`` added)."""

    def __init__(self, batch: Any, linear: bool, noise: float = 0.0,
                 generator: torch.Generator | None = None, max_age: int = 0) -> None:
        if not all(hasattr(batch, field) for field in ("story", "query", "answer")):
            raise TypeError("batches(step) must return a batch with story, query and "
                            "answer fields (a seqlearn.data.StoryBatch), got "
                            f"{type(batch).__name__}")
        self.story, self.query, self.answer, self.linear = (
            batch.story, batch.query, batch.answer, linear)
        story = batch.story  # (B, S, W) ids; anything else is refused by answer_loss
        if noise > 0 and isinstance(story, torch.Tensor) and story.dim() == 3:
            self.ages = random_noise_ages((story != PAD).any(-1), noise,
                                          generator=generator, max_age=max_age)


def fit_memn2n(model: MemN2N, batches: Callable[[int], Any], steps: int, *,
               lr: float = 5e-3, linear_steps: int = 0, clip: float | None = 40.0,
               decay: bool = False, noise: float = 0.0,
               generator: torch.Generator | None = None) -> list[float]:
    """Train a :class:`seqlearn.memory.MemN2N` with Adam on
    :func:`seqlearn.memory.answer_loss`; the first ``linear_steps`` steps without the
    memory's softmax (linear start). ``batches(step)`` returns a StoryBatch. Returns the
    losses.

    One optimizer runs through both phases (:func:`fit`); ``clip`` is the gradient-norm
    threshold of the paper (40), ``decay`` lowers the learning rate linearly. ``noise``
    is the rate of random noise (RN; the paper's 0.1, 0 = off): every training batch,
    in both phases, is read with the ages of :func:`seqlearn.memory.random_noise_ages`
    (drawn with ``generator``; ages past the model's temporal table are clipped to its
    last row). Evaluation never adds noise.
    """
    _check_model(model, MemN2N)
    steps = check_int(steps, "steps")
    linear_steps = check_int(linear_steps, "linear_steps", minimum=0, maximum=steps)
    noise = check_real(noise, "noise", minimum=0.0)
    if generator is not None and not isinstance(generator, torch.Generator):
        raise TypeError(f"generator must be a torch.Generator or None, got "
                        f"{type(generator).__name__}")
    _check_batches(batches)
    last = model.max_sentences - 1  # the last row of the temporal table
    return fit(model, lambda step: _Linear(batches(step), step < linear_steps, noise,
                                           generator, last),
               steps, lr=lr, clip=clip, decay=decay, loss=answer_loss)
