r"""Decoding a trained sequence model: beam search over a decoder run step by step.

A decoder models :math:`p(y \mid x) = \prod_{t=1}^{n} p(y_t \mid y_{<t}, x)` and reveals
it one step at a time (the chapter :doc:`decoding`). Decoding looks for the output

.. math::

    \hat y = \arg\max_{y} \; \frac{\log p(y \mid x)}{|y|^{\alpha}}
    \qquad \text{(book equation eq-dec-objective)}

over the sequences ``y`` that end with the first ``<eos>`` within ``max_len`` tokens, or
are cut at ``max_len`` tokens without one. ``|y|`` counts the tokens, ``<eos>``
included; ``alpha = 0`` (the default) ranks by the probability itself, ``alpha = 1`` by
the mean log-probability per token (*length normalisation*).

**Beam search** (book equation eq-dec-beam) keeps the ``K`` best hypotheses: at step
``t`` it extends every kept prefix by every token of the vocabulary (``K V``
candidates), scores each candidate by the objective above at its own length, and keeps
the ``K`` best. A finished hypothesis (one that has emitted ``<eos>``) stays a
candidate: its only extension is ``<pad>`` at no cost, so it keeps its score and
competes with the longer ones. Hence

- ``K = 1`` is greedy decoding, the arg-max token at every step;
- ``K`` at least the number of sequences of at most ``max_len`` tokens
  (``V ** max_len`` suffices) never prunes a hypothesis, so beam search returns the
  exact maximiser;
- in between, beam search is a heuristic: a prefix that falls out of the beam is lost.

The search stops when every hypothesis has finished or after ``max_len`` steps, as
greedy decoding does. Scores are accumulated in float64.

**The step interface.** :class:`StepDecoder` holds a function
``step(y_prev (N,) long, state) -> (logits (N, V), state)`` and the state before the
first step, one row per source. A state is a tensor or a tuple, list or dict of them
(``None`` entries allowed), each with the ``N`` rows first; beam search copies and
reorders the rows as hypotheses are kept. :func:`seq2seq_decoder` and
:func:`transformer_decoder` expose the book's two encoder--decoders this way without
changing them. The Transformer is a model of Part IV, later than this module:
:func:`transformer_decoder` reads it through the methods it calls
(``_Transformer`` below), without importing it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, NamedTuple, Protocol, runtime_checkable

import torch
from torch import Tensor, nn

from seqlearn.seq2seq import Seq2Seq
from seqlearn.validate import check_int, check_real, check_shape, check_tensor

State = Any  # a tensor, or a tuple / list / dict of tensors (or None), rows first

__all__ = ["StepDecoder", "BeamResult", "normalised_score", "beam_search",
           "seq2seq_decoder", "transformer_decoder"]


def _leaves(state: State) -> list[Tensor]:
    """Every tensor of a state (nested tuples, lists and dicts)."""
    if isinstance(state, Tensor):
        return [state]
    if isinstance(state, (tuple, list)):
        return [leaf for part in state for leaf in _leaves(part)]
    if isinstance(state, dict):
        return [leaf for part in state.values() for leaf in _leaves(part)]
    return []


def _rows(state: State, index: Tensor) -> State:
    """The state's rows ``index`` (N',) in that order, in every tensor of the state."""
    if isinstance(state, Tensor):
        return state.index_select(0, index)
    if isinstance(state, tuple):
        return tuple(_rows(part, index) for part in state)
    if isinstance(state, list):
        return [_rows(part, index) for part in state]
    if isinstance(state, dict):
        return {key: _rows(part, index) for key, part in state.items()}
    return state  # None or another constant


@dataclass(frozen=True)
class StepDecoder:
    """A decoder exposed one step at a time (module docstring).

    ``step(y_prev (N,) long, state) -> (logits (N, vocab_size), state)``: the logits of
    ``p(y_t | y_<t, x)`` for ``N`` rows given each row's previous token and state.
    ``state``: the state before the first step for the ``batch_size`` sources (every
    tensor in it has ``batch_size`` rows first). ``bos`` is fed at the first step,
    ``eos`` ends a hypothesis, ``pad`` fills a finished one. ``max_len``: the most steps
    the model can take (``None``: no limit).
    """

    step: Callable[[Tensor, State], tuple[Tensor, State]]
    state: State
    batch_size: int
    vocab_size: int
    bos: int
    eos: int
    pad: int
    max_len: int | None = None

    def __post_init__(self) -> None:
        if not callable(self.step):
            raise TypeError(f"step must be a callable (y_prev, state) -> (logits, "
                            f"state), got {type(self.step).__name__}")
        check_int(self.batch_size, "batch_size")
        check_int(self.vocab_size, "vocab_size", minimum=2)
        for value, name in ((self.bos, "bos"), (self.eos, "eos"), (self.pad, "pad")):
            check_int(value, name, minimum=0, maximum=self.vocab_size - 1)
        if self.eos == self.pad:
            raise ValueError(f"eos and pad must be different ids, got {self.eos} for "
                             f"both")
        if self.max_len is not None:
            check_int(self.max_len, "max_len")
        leaves = _leaves(self.state)
        if not leaves:
            raise TypeError(f"state must hold at least one tensor (rows first), got "
                            f"{type(self.state).__name__}")
        for k, leaf in enumerate(leaves):
            if leaf.dim() == 0 or leaf.shape[0] != self.batch_size:
                raise ValueError(f"state tensor {k} must have batch_size="
                                 f"{self.batch_size} rows first, got shape "
                                 f"{tuple(leaf.shape)}")


class BeamResult(NamedTuple):
    """The ``K`` kept hypotheses of each source, best first.

    ``tokens (B, K, L)`` long: each hypothesis without ``<bos>``, its ``<eos>`` then
    ``<pad>``; ``log_probs (B, K)``: ``log p(y | x)``; ``lengths (B, K)`` long: ``|y|``
    (``<eos>`` counted); ``scores (B, K)``: the objective ``log p / |y|^alpha``. When a
    source has fewer than ``K`` possible sequences, the missing beams have score and
    log-probability ``-inf``, length 0 and only ``<pad>`` tokens.
    """

    tokens: Tensor
    log_probs: Tensor
    lengths: Tensor
    scores: Tensor

    @property
    def best(self) -> Tensor:
        """``(B, L)`` long: the best hypothesis of each source."""
        return self.tokens[:, 0]


def normalised_score(log_prob: Tensor, length: Tensor, alpha: float) -> Tensor:
    r"""The objective of eq-dec-objective: ``log_prob / length ** alpha``, elementwise.

    ``length >= 1`` tokens, an integer tensor of the shape of ``log_prob``;
    ``alpha = 0`` returns ``log_prob`` itself, ``alpha = 1`` the mean log-probability
    per token. ``-inf`` stays ``-inf``.
    """
    check_tensor(log_prob, "log_prob")
    check_tensor(length, "length", floating=False)
    alpha = check_real(alpha, "alpha", minimum=0.0)
    if length.dtype == torch.bool or length.is_complex() or length.is_floating_point():
        raise TypeError(f"length must be an integer tensor, got dtype {length.dtype}")
    if length.shape != log_prob.shape:
        raise ValueError(f"length must have the shape of log_prob "
                         f"{tuple(log_prob.shape)}, got {tuple(length.shape)}")
    if length.numel() and int(length.min()) < 1:
        raise ValueError(f"length must be at least 1 token, got {int(length.min())}")
    return log_prob / length.to(log_prob.dtype) ** alpha


@torch.no_grad()
def beam_search(decoder: StepDecoder, beam_size: int, max_len: int, *,
                length_penalty: float = 0.0) -> BeamResult:
    r"""Batched beam search (book equation eq-dec-beam) with ``K = beam_size`` beams.

    Maximises ``log p(y | x) / |y|^alpha`` with ``alpha = length_penalty``
    approximately (exactly when ``K >= V ** max_len``; greedily when ``K = 1``, see the
    module docstring), for every source of ``decoder`` at once: ``B`` sources times
    ``K`` beams are ``B K`` rows of one call to ``decoder.step`` per step.
    """
    if not isinstance(decoder, StepDecoder):
        raise TypeError(f"decoder must be a StepDecoder, got {type(decoder).__name__}")
    K = check_int(beam_size, "beam_size")
    max_len = check_int(max_len, "max_len", maximum=decoder.max_len)
    alpha = check_real(length_penalty, "length_penalty", minimum=0.0)
    B, V = decoder.batch_size, decoder.vocab_size
    device = _leaves(decoder.state)[0].device
    first = torch.arange(B, device=device)[:, None] * K  # (B, 1): a source's first row
    state = _rows(decoder.state, torch.arange(B, device=device).repeat_interleave(K))
    y = torch.full((B * K,), decoder.bos, dtype=torch.long, device=device)  # (B K,)
    log_probs = torch.full((B, K), -torch.inf, dtype=torch.float64, device=device)
    log_probs[:, 0] = 0.0  # one empty hypothesis per source; the other beams are empty
    lengths = torch.zeros(B, K, dtype=torch.long, device=device)
    finished = torch.zeros(B, K, dtype=torch.bool, device=device)
    tokens = torch.zeros(B, K, 0, dtype=torch.long, device=device)  # (B, K, t)
    only_pad = torch.full((V,), -torch.inf, dtype=torch.float64, device=device)
    only_pad[decoder.pad] = 0.0  # a finished hypothesis goes on with <pad> at no cost
    name = "the logits that step returns"
    for t in range(1, max_len + 1):
        logits, state = decoder.step(y, state)
        check_tensor(logits, name)
        check_shape(logits, name, "N V", sizes={"N": B * K, "V": V})
        step_lp = torch.log_softmax(logits.double(), -1).view(B, K, V)  # log p(v | ...)
        if bool(torch.isnan(step_lp).any()):
            raise ValueError(f"step returned logits with NaN log-probabilities at step "
                             f"{t}")
        step_lp = torch.where(finished[..., None], only_pad, step_lp)
        candidate = log_probs[..., None] + step_lp  # (B, K, V): log p of each extension
        length = torch.where(finished, lengths, t)[..., None].expand(B, K, V)
        rank = normalised_score(candidate, length, alpha)  # eq-dec-objective
        _, best = rank.reshape(B, K * V).topk(K, dim=1)  # (B, K): the kept candidates
        parent, token = best // V, best % V  # (B, K) each
        state = _rows(state, (first + parent).reshape(-1))
        kept = tokens.gather(1, parent[..., None].expand(B, K, t - 1))  # (B, K, t - 1)
        tokens = torch.cat([kept, token[..., None]], dim=-1)  # (B, K, t)
        was_finished = finished.gather(1, parent)
        log_probs = candidate.reshape(B, K * V).gather(1, best)
        lengths = torch.where(was_finished, lengths.gather(1, parent), t)
        finished = was_finished | (token == decoder.eos)
        y = token.reshape(-1)  # (B K,)
        if bool((finished | torch.isinf(log_probs)).all()):
            break
    empty = torch.isinf(log_probs)  # beams that hold no hypothesis
    lengths = lengths.masked_fill(empty, 0)
    tokens = tokens.masked_fill(empty[..., None], decoder.pad)
    scores = normalised_score(log_probs, lengths.clamp(min=1), alpha)  # (B, K)
    scores, order = scores.sort(dim=1, descending=True, stable=True)
    L = tokens.shape[-1]
    return BeamResult(tokens.gather(1, order[..., None].expand(B, K, L)),
                      log_probs.gather(1, order), lengths.gather(1, order), scores)


def seq2seq_decoder(model: Seq2Seq, src: Tensor, src_lengths: Tensor) -> StepDecoder:
    r""":class:`seqlearn.seq2seq.Seq2Seq` one step at a time.

    The state is ``(s_{t-1} (B, H), encoder states h (B, S, H), code c (B, H), source
    mask (B, S))`` and a step is :meth:`Seq2Seq.step`, the step that
    :meth:`Seq2Seq.greedy_decode` takes.
    """
    if not isinstance(model, Seq2Seq):
        raise TypeError(f"model must be a Seq2Seq, got {type(model).__name__}")
    with torch.no_grad():
        states, code, mask = model.encode(src, src_lengths)  # (B, S, H), (B, H), (B, S)
        s0 = model.initial_state(states, code, mask)  # (B, H)

    def step(y_prev: Tensor, state: State) -> tuple[Tensor, State]:
        s, states, code, mask = state
        logits, s, _ = model.step(y_prev, s, states, code, mask)  # (N, V), (N, H)
        return logits, (s, states, code, mask)

    return StepDecoder(step, (s0, states, code, mask), int(src.shape[0]),
                       model.tgt_vocab_size, model.bos, model.eos, model.pad)


@runtime_checkable
class _Transformer(Protocol):
    """What :func:`transformer_decoder` reads of a
    :class:`seqlearn.transformer.Transformer` (Part IV): its sizes and the two methods
    it calls, named here so that this module does not import a later part."""

    tgt_vocab_size: int
    max_len: int

    def encode(self, src: Tensor, src_mask: Tensor | None = None) -> Tensor: ...

    def decode(self, tgt_in: Tensor, memory: Tensor,
               src_mask: Tensor | None = None) -> Tensor: ...


def transformer_decoder(model: _Transformer, src: Tensor, *, bos: int, eos: int,
                        pad: int = 0, src_mask: Tensor | None = None) -> StepDecoder:
    r""":class:`seqlearn.transformer.Transformer` one step at a time.

    The state is ``(memory (B, S, d), source mask (B, S) or None, prefix (B, t - 1))``;
    a step appends ``y_{t-1}`` to the prefix and reruns the decoder on
    ``<bos> y_1 .. y_{t-1}`` (no cache), as :meth:`Transformer.greedy_decode` does; the
    logits are those of the last position.
    """
    if not (isinstance(model, nn.Module) and isinstance(model, _Transformer)):
        raise TypeError(f"model must be a Transformer, got {type(model).__name__}")
    with torch.no_grad():
        memory = model.encode(src, src_mask)  # (B, S, d)
    prefix = torch.zeros(src.shape[0], 0, dtype=torch.long, device=src.device)  # (B, 0)

    def step(y_prev: Tensor, state: State) -> tuple[Tensor, State]:
        memory, mask, prefix = state
        prefix = torch.cat([prefix, y_prev[:, None]], dim=1)  # (N, t): <bos> y_1 ..
        logits = model.decode(prefix, memory, mask)[:, -1]  # (N, V)
        return logits, (memory, mask, prefix)

    return StepDecoder(step, (memory, src_mask, prefix), int(src.shape[0]),
                       model.tgt_vocab_size, bos, eos, pad, max_len=model.max_len)
