r"""Sampling from a language model: temperature and top-k.

Chapter: *Language models on real text* (``chapters/language_model.ipynb``).

Given the scores (logits) ``z`` of the next token, sampling at temperature ``tau > 0``
with the ``k`` best tokens kept draws from (book equation eq-lm-sampling)

.. math::

    q_{\tau, k}(v) = \frac{\exp(z_v / \tau)\, [v \in \mathrm{top}_k(z)]}
                          {\sum_{u \in \mathrm{top}_k(z)} \exp(z_u / \tau)},

where ``top_k(z)`` holds the tokens whose score is at least the ``k``-th largest (ties
at the boundary are all kept; ``k = None`` keeps every token). ``tau = 1`` is the
model's own distribution; ``tau < 1`` sharpens it and ``tau -> 0`` tends to the one-hot
distribution of the best token, which is what ``temperature=0`` means here: greedy
decoding. ``k = 1`` is greedy too, at any temperature (with a tie for the best score,
both give the first of the tied tokens).
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from seqlearn.scores import _compute_dtype
from seqlearn.validate import (check_int, check_real, check_shape, check_tensor,
                               check_tokens)

__all__ = ["sampling_distribution", "sample_next", "generate"]


def _check(logits: object, temperature: object,
           top_k: object) -> tuple[float, int | None]:
    check_tensor(logits, "logits")
    V = check_shape(logits, "logits", "... V")["V"]
    if V < 1:
        raise ValueError(f"logits must score at least one token, got shape "
                         f"{tuple(logits.shape)}")
    if not bool(torch.isfinite(logits).all()):
        raise ValueError("logits must be finite (use top_k to leave tokens out)")
    tau = check_real(temperature, "temperature", minimum=0.0)
    k = None if top_k is None else check_int(top_k, "top_k")
    return tau, k


def sampling_distribution(logits: Tensor, temperature: float = 1.0,
                          top_k: int | None = None) -> Tensor:
    """``q_{tau,k}`` of eq-lm-sampling over the last axis of ``logits (..., V)``.

    ``temperature = 0`` gives the one-hot distribution of the best token (greedy; the
    first of tied best tokens). Returns ``(..., V)`` in the dtype of ``logits``.
    """
    tau, k = _check(logits, temperature, top_k)
    if tau == 0.0 or k == 1:
        best = logits.argmax(dim=-1, keepdim=True)  # (..., 1): the first of tied maxima
        return torch.zeros_like(logits).scatter_(-1, best, 1.0)
    # (..., V), in float32 for float16/bfloat16 logits: tau < 1 magnifies rounding errors
    scores = logits.to(_compute_dtype(logits.dtype)) / tau
    if k is not None and k < logits.shape[-1]:
        kth = scores.topk(k, dim=-1).values[..., -1:]  # (..., 1): the k-th largest
        scores = scores.masked_fill(scores < kth, -torch.inf)
    return torch.softmax(scores, dim=-1).to(logits.dtype)


def sample_next(logits: Tensor, temperature: float = 1.0, top_k: int | None = None, *,
                generator: torch.Generator | None = None) -> Tensor:
    """One token per row drawn from ``sampling_distribution(logits, temperature,
    top_k)``: ``logits (..., V) -> ids (...)`` long. ``temperature = 0`` or
    ``top_k = 1``: the argmax, no random number drawn."""
    tau, k = _check(logits, temperature, top_k)
    if generator is not None and not isinstance(generator, torch.Generator):
        raise TypeError(f"generator must be a torch.Generator or None, got "
                        f"{type(generator).__name__}")
    if tau == 0.0 or k == 1:
        return logits.argmax(dim=-1)
    q = sampling_distribution(logits.double(), tau, k)  # (..., V), float64 for the draw
    flat = q.reshape(-1, q.shape[-1])  # (M, V)
    return torch.multinomial(flat, 1, generator=generator).view(q.shape[:-1])


@torch.no_grad()
def generate(model: nn.Module, prompt: Tensor, steps: int, *,
             temperature: float = 1.0, top_k: int | None = None,
             generator: torch.Generator | None = None) -> Tensor:
    """Continue ``prompt (B, T0)`` by ``steps`` tokens, feeding the model its own
    samples.

    ``model(x, state) -> (logits (B, T, V), state)`` (the models of
    :mod:`seqlearn.language_model`): the model reads the prompt, then each sampled token
    in turn, carrying its state. Returns the ``(B, steps)`` sampled ids (without the
    prompt).
    """
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be a torch.nn.Module, got {type(model).__name__}")
    check_int(steps, "steps")
    vocab = getattr(model, "vocab_size", None)
    check_tokens(prompt, "prompt", "B T", vocab if vocab is not None else 2**62)
    check_real(temperature, "temperature", minimum=0.0)
    if top_k is not None:
        check_int(top_k, "top_k")
    was_training = model.training
    model.eval()
    logits, state = model(prompt)  # (B, T0, V)
    out = []
    for step in range(steps):
        token = sample_next(logits[:, -1], temperature, top_k,
                            generator=generator)  # (B,)
        out.append(token)
        if step < steps - 1:
            logits, state = model(token[:, None], state)  # (B, 1, V)
    model.train(was_training)
    return torch.stack(out, dim=1)  # (B, steps)
