r"""End-to-end memory network (MemN2N, Sukhbaatar et al. 2015) for story question answering.

A story of ``S`` sentences is written into memory twice per hop: sentence ``i`` becomes an
input (key) vector ``m_i`` and an output (value) vector ``c_i``. The question becomes the
internal state ``u^1``. Hop ``k = 1 .. K`` reads the memory with :func:`seqlearn.associative.
soft_lookup` and adds what it read to the state (the book's ``eq-mem-hop``)::

    p^k = softmax(m^k_i . u^k),   o^k = sum_i p^k_i c^k_i,   u^{k+1} = u^k + o^k,

and the answer is ``softmax(W u^{K+1})`` over the vocabulary (``eq-mem-answer``).

A sentence's vector is a position-weighted sum of its word embeddings plus a temporal
embedding of its age (``eq-mem-pe``, ``eq-mem-te``)::

    m_i = sum_j l_j * A x_ij + T_A(t_i),   l_hj = (1 - j/J) - (h/d)(1 - 2j/J),

``j = 1..J`` the word position in a sentence of ``J`` words, ``h = 1..d`` the coordinate (the
paper's ``k``, which the book keeps for the hops), and
``t_i`` the number of sentences after sentence ``i`` (the newest has age 0). Without ``l`` a
sentence would be a bag of words: "mary gave john the apple" and "john gave mary the apple"
would be stored alike.

Weights are tied between adjacent hops: with embedding matrices ``E_0 .. E_K``, hop ``k``
uses ``A^k = E_{k-1}`` (keys) and ``C^k = E_k`` (values), the question is embedded with
``B = A^1 = E_0`` and the answer layer is ``W = (C^K)^T``, i.e. ``logits = E_K u^{K+1}``; the
temporal embeddings ``T_0 .. T_K`` are tied the same way.

*Linear start* (``linear=True``) removes the softmax from every hop, ``p^k_i = m^k_i . u^k``,
which the paper uses for the first part of training. In ``bench/study_memn2n.py`` (task 2,
five seeds, the same digits under the native and the perturbed numerics) a 3-hop model
started linearly reached 0.94 to 0.97 in all five seeds; started with the softmax it
stayed at the accuracy of one hop in four of them (0.36 to 0.43; one hop: 0.34 to 0.42)
and reached 0.81 in the fifth (``bench/results/study_memn2n.no_linear_start.perturbed.txt``).

The paper's ablations have switches: ``MemN2N(..., position_encoding=False)`` stores a
sentence as a bag of words (``l_kj = 1``), ``temporal_encoding=False`` drops ``T_A`` and
``T_C``. *Random noise* (RN) inserts empty memories into training stories at random,
which only shifts the ages ``t_i``: :func:`random_noise_ages` draws the shifted ages and
``forward(..., ages=...)`` reads them (``seqlearn.train.fit_memn2n(..., noise=0.1)``).
"""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor, nn

from seqlearn.associative import soft_lookup
from seqlearn.data.vocab import Vocab, vocab_size as _vocab_size
from seqlearn.validate import (check_bool, check_int, check_real, check_shape,
                               check_tensor)

PAD = 0
"""The word id that means "no word" (``<pad>`` of :class:`seqlearn.data.Vocab`)."""


def position_encoding(J: int | Tensor, d: int, *, width: int | None = None,
                      dtype: torch.dtype | None = None) -> Tensor:
    r"""Word-position weights of ``eq-mem-pe``: ``l_hj = (1 - j/J) - (h/d)(1 - 2j/J)``.

    ``J`` an int: returns ``(J, d)`` with row ``j - 1`` the weights of word ``j``. ``J``
    a tensor of sentence lengths ``(...)``: returns ``(..., width, d)`` (``width``
    defaults to the largest length) with zero rows at the positions past each sentence's
    length. A length of 0 gives all zeros. ``dtype`` defaults to torch's default dtype.
    """
    d = check_int(d, "d")
    if isinstance(J, Tensor):
        if J.is_floating_point() or J.dtype == torch.bool or J.is_complex():
            raise TypeError(f"J must hold integer lengths, got dtype {J.dtype}")
        if bool((J < 0).any()):
            raise ValueError(f"J must be at least 0, got {int(J.min())}")
        longest = int(J.max()) if J.numel() else 0
        width = longest if width is None else check_int(width, "width")
        if longest > width:
            raise ValueError(f"width must be at least {longest} (the longest length in "
                             f"J), got {width}")
        lengths = J
    else:
        J = check_int(J, "J")
        width = J if width is None else check_int(width, "width", minimum=J)
        lengths = torch.tensor(J)
    dtype = torch.get_default_dtype() if dtype is None else dtype
    j = torch.arange(1, width + 1, dtype=dtype)[:, None]  # (J, 1)
    h = torch.arange(1, d + 1, dtype=dtype)  # (d,)
    n = lengths.to(dtype).clamp(min=1)[..., None, None]  # (..., 1, 1)
    weights = (1 - j / n) - (h / d) * (1 - 2 * j / n)  # (..., J, d)
    inside = j <= lengths[..., None, None]  # (..., J, 1)
    return weights * inside


def random_noise_ages(present: Tensor, rate: float, *,
                      generator: torch.Generator | None = None,
                      max_age: int | None = None) -> Tensor:
    r"""The ages ``t_i`` of a story into which empty memories were inserted at random.

    *Random noise* (RN) of Sukhbaatar et al. (2015, Section 4): at training time,
    empty memories are added to the stories at random, so that the temporal embeddings
    do not learn exact positions. Row ``b`` of ``present (B, S)`` marks the ``n``
    sentences of story ``b`` (True), in their order. For it, ``m`` empty memories are
    drawn, ``m`` uniform on ``0 .. ceil(rate * n)`` (the authors' released code; the
    paper's ``rate`` is 0.1), and the ``n + m`` memories are put in an order drawn
    uniformly among those that keep the sentences in their order. Sentence ``i`` gets as
    its age the number of memories after it, empty ones included: ages that decrease
    along the story, the newest ``>= 0``, with ``m`` ages skipped. An empty memory holds
    no words, so it is never read: the ages are all that changes. Ages above
    ``max_age`` become ``max_age`` (the last row of the temporal table, as the released
    code does). Absent sentences get age 0.

    present (B, S) bool -> ages (B, S) long. ``rate = 0`` gives the usual ages.
    """
    check_tensor(present, "present", floating=False)
    if present.dtype != torch.bool:
        raise TypeError(f"present must be a bool tensor (True = a sentence), got dtype "
                        f"{present.dtype}")
    check_shape(present, "present", "B S")
    rate = check_real(rate, "rate", minimum=0.0)
    if max_age is not None:
        max_age = check_int(max_age, "max_age", minimum=0)
    if generator is not None and not isinstance(generator, torch.Generator):
        raise TypeError(f"generator must be a torch.Generator or None, got "
                        f"{type(generator).__name__}")
    B, S = present.shape
    g = dict(generator=generator, dtype=torch.float64)
    row = present.cpu()
    n = row.sum(-1)  # (B,) sentences
    most = torch.ceil(rate * n.double() - 1e-9).long()  # ceil(rate n), also for 0.1 * 30
    m = (torch.rand(B, **g) * (most + 1)).long().clamp(max=most)  # (B,) empty memories
    total = n + m  # (B,) memories
    width = S + (int(m.max()) if B else 0)
    slot = torch.arange(width)  # (width,)
    keys = torch.rand(B, width, **g).masked_fill(slot >= total[:, None], 2.0)
    chosen = keys.argsort(-1).argsort(-1) < n[:, None]  # (B, width): n of total slots
    # the k-th chosen slot (in order) holds the k-th sentence
    slots = torch.where(chosen, slot, width).sort(-1).values[:, :S]  # (B, S)
    k = (row.long().cumsum(-1) - 1).clamp(min=0)  # (B, S) sentence i is number k
    ages = (total[:, None] - 1 - slots.gather(1, k)) * row  # memories after each one
    if max_age is not None:
        ages = ages.clamp(max=max_age)
    return ages.to(present.device)


def _check_ids(x: Any, name: str, spec: str, vocab_size: int, **sizes: int) -> dict:
    check_tensor(x, name, floating=False)
    if x.is_floating_point() or x.dtype == torch.bool or x.is_complex():
        raise TypeError(f"{name} must hold integer word ids, got dtype {x.dtype}")
    if x.dtype != torch.long:  # nn.Embedding reads int64 (and int32) ids only
        raise TypeError(f"{name} must be a LongTensor of word ids, got dtype {x.dtype}")
    dims = check_shape(x, name, spec)
    for dim, limit in sizes.items():
        if dims[dim] > limit:
            raise ValueError(f"{name} has {dims[dim]} along {dim}, more than the "
                             f"model's maximum {limit}; shape {tuple(x.shape)}")
    if x.numel() and (int(x.min()) < 0 or int(x.max()) >= vocab_size):
        raise ValueError(f"{name} must hold ids in [0, {vocab_size}), got "
                         f"[{int(x.min())}, {int(x.max())}]")
    return dims


def _check_ages(ages: Any, dims: dict, max_sentences: int) -> None:
    """``ages``: a LongTensor ``(B, S)`` as the story's, with ages in ``[0,
    max_sentences)`` (the rows of a temporal table)."""
    check_tensor(ages, "ages", floating=False)
    if ages.dtype != torch.long:
        raise TypeError(f"ages must be a LongTensor of sentence ages, got dtype "
                        f"{ages.dtype}")
    check_shape(ages, "ages", "B S", sizes={"B": dims["B"], "S": dims["S"]})
    if ages.numel() and (int(ages.min()) < 0 or int(ages.max()) >= max_sentences):
        raise ValueError(f"ages must lie in [0, max_sentences={max_sentences}), got "
                         f"[{int(ages.min())}, {int(ages.max())}]")


class MemN2N(nn.Module):
    """End-to-end memory network with position and temporal encoding and adjacent tying.

    ``forward(story (B, S, J) long, query (B, Jq) long, *, linear=False)
    -> (logits (B, vocab_size), attention (B, hops, S))``, ``S <= max_sentences`` and
    ``J, Jq <= max_words``. Id 0 (:data:`PAD`) is "no word"; a sentence of only padding
    is no sentence (its attention is 0). ``attention[:, k]`` is hop ``k``'s weights
    ``p^k`` over the sentences (raw scores, 0 at missing sentences, when
    ``linear=True``). Parameters ``N(0, 0.1^2)`` as in the paper; the padding row of
    each embedding is 0. ``vocab_size``: the number of word ids, or a
    :class:`seqlearn.data.Vocab`. ``position_encoding=False``: bag-of-words sentences;
    ``temporal_encoding=False``: no temporal tables. ``ages (B, S)`` long in
    ``[0, max_sentences)``: the ages ``t_i`` to use instead of counting the sentences
    after each one (:func:`random_noise_ages`).
    """

    def __init__(self, vocab_size: int | Vocab, d: int, hops: int, *,
                 max_sentences: int = 50, max_words: int = 12,
                 position_encoding: bool = True,
                 temporal_encoding: bool = True) -> None:
        super().__init__()
        self.vocab_size = vocab_size = _vocab_size(vocab_size, "vocab_size", minimum=2)
        self.d = check_int(d, "d")
        self.hops = check_int(hops, "hops")
        self.max_sentences = check_int(max_sentences, "max_sentences")
        self.max_words = check_int(max_words, "max_words")
        self.use_position = check_bool(position_encoding, "position_encoding")
        self.use_temporal = check_bool(temporal_encoding, "temporal_encoding")
        self.embeddings = nn.ModuleList(  # E_0 .. E_K
            nn.Embedding(vocab_size, d, padding_idx=PAD) for _ in range(hops + 1))
        self.temporal = nn.ParameterList(  # T_0 .. T_K (none without temporal encoding)
            nn.Parameter(torch.empty(max_sentences, d))
            for _ in range(hops + 1 if temporal_encoding else 0))
        with torch.no_grad():
            for k, e in enumerate(self.embeddings):
                nn.init.normal_(e.weight, std=0.1)
                e.weight[PAD] = 0.0
                if temporal_encoding:
                    nn.init.normal_(self.temporal[k], std=0.1)

    def word_weights(self, tokens: Tensor) -> Tensor:
        """The weights ``l_j`` of ``tokens (..., W)`` -> ``(..., W, d)``: the
        :func:`position_encoding`, or 1 at every word (a bag of words) without it; 0
        past each sentence's words."""
        lengths = (tokens != PAD).sum(-1)  # (...,)  words are left-aligned
        dtype = self.embeddings[0].weight.dtype
        if not self.use_position:
            j = torch.arange(tokens.shape[-1], device=tokens.device)  # (W,)
            words = (j < lengths[..., None])[..., None]  # (..., W, 1)
            return words.to(dtype).expand(*words.shape[:-1], self.d)  # (..., W, d)
        return position_encoding(lengths, self.d, width=tokens.shape[-1], dtype=dtype)

    def encode(self, tokens: Tensor, k: int, weights: Tensor | None = None) -> Tensor:
        """``sum_j l_j * E_k x_j`` over the last axis of ``tokens (..., W)`` -> ``(..., d)``.

        ``weights`` are the :meth:`word_weights` of ``tokens`` (computed when omitted;
        :meth:`forward` computes them once for all hops).
        """
        if weights is None:
            weights = self.word_weights(tokens)  # (..., W, d)
        return (weights * self.embeddings[k](tokens)).sum(-2)  # (..., d)

    def forward(self, story: Tensor, query: Tensor, *, linear: bool = False,
                ages: Tensor | None = None) -> tuple[Tensor, Tensor]:
        dims = _check_ids(story, "story", "B S W", self.vocab_size, S=self.max_sentences,
                          W=self.max_words)
        _check_ids(query, "query", "B Wq", self.vocab_size, Wq=self.max_words)
        check_shape(query, "query", "B Wq", sizes={"B": dims["B"]})
        check_bool(linear, "linear")
        present = (story != PAD).any(-1)  # (B, S)
        if ages is None:  # t_i = the number of sentences after sentence i (eq-mem-te)
            ages = (present.flip(-1).cumsum(-1).flip(-1) - 1).clamp(min=0)  # (B, S)
        else:
            _check_ages(ages, dims, self.max_sentences)
        u = self.encode(query, 0)  # (B, d)  B = A^1 = E_0
        weights = self.word_weights(story)  # (B, S, W, d)  eq-mem-pe
        memory = [self.encode(story, k, weights)  # (B, S, d) each, eq-mem-te
                  + (self.temporal[k][ages] if self.use_temporal else 0)
                  for k in range(self.hops + 1)]
        attention = []
        for k in range(self.hops):  # eq-mem-hop
            keys, values = memory[k], memory[k + 1]  # A^k = E_{k-1}, C^k = E_k (0-based here)
            if linear:
                p = (keys @ u[..., None])[..., 0] * present  # (B, S)
                o = (p[..., None, :] @ values)[..., 0, :]  # (B, d)
            else:
                o, p = soft_lookup(u, keys, values, mask=present)  # (B, d), (B, S)
            u = u + o
            attention.append(p)
        logits = u @ self.embeddings[self.hops].weight.T  # (B, V)  W = (C^K)^T, eq-mem-answer
        return logits, torch.stack(attention, 1)  # (B, V), (B, hops, S)


def _check_batch(model: Any, batch: Any, name: str = "batch") -> None:
    """``model`` a MemN2N; ``batch`` has ``story``, ``query`` and ``answer (B,)``
    ids."""
    if not isinstance(model, MemN2N):
        raise TypeError(f"model must be a MemN2N, got {type(model).__name__}")
    if not all(hasattr(batch, field) for field in ("story", "query", "answer")):
        raise TypeError(f"{name} must have story, query and answer fields (a "
                        f"seqlearn.data.StoryBatch), got {type(batch).__name__}")
    dims = _check_ids(batch.story, f"{name}.story", "B S W", model.vocab_size)
    check_tensor(batch.answer, f"{name}.answer", floating=False)
    check_shape(batch.answer, f"{name}.answer", "B", sizes={"B": dims["B"]})
    _check_ids(batch.answer, f"{name}.answer", "B", model.vocab_size)
    if dims["B"] == 0:
        raise ValueError(f"{name} must hold at least one question, got B = 0")


def answer_loss(model: MemN2N, batch: Any) -> Tensor:
    """Cross-entropy of the answer; ``batch`` has ``story``, ``query`` and ``answer``
    fields (a :class:`seqlearn.data.StoryBatch`) and optionally ``linear`` (bool,
    default False) and ``ages`` (the ages of :func:`random_noise_ages`)."""
    _check_batch(model, batch)
    ages = getattr(batch, "ages", None)  # passed only when there are some
    logits, _ = model(batch.story, batch.query, linear=getattr(batch, "linear", False),
                      **({} if ages is None else {"ages": ages}))
    return nn.functional.cross_entropy(logits, batch.answer)


@torch.no_grad()
def answer_accuracy(model: MemN2N, batch: Any) -> float:
    """Fraction of questions whose arg-max answer is right (eval mode, softmax
    memory)."""
    _check_batch(model, batch)
    was_training = model.training
    model.eval()
    logits, _ = model(batch.story, batch.query)
    model.train(was_training)
    return float((logits.argmax(-1) == batch.answer).double().mean())


def supporting_share(attention: Tensor, supporting: Tensor) -> Tensor:
    """Mean attention mass each hop puts on supporting facts: ``mean_b sum_{i in F_b} p^k_bi``.

    attention (B, hops, S) (softmax weights), supporting (B, S) bool -> (hops,).
    """
    check_tensor(attention, "attention")
    dims = check_shape(attention, "attention", "B K S")
    if not isinstance(supporting, Tensor) or supporting.dtype != torch.bool:
        raise TypeError("supporting must be a bool tensor (True = a supporting fact), got "
                        f"{getattr(supporting, 'dtype', type(supporting).__name__)}")
    check_shape(supporting, "supporting", "B S", sizes={"B": dims["B"], "S": dims["S"]})
    if dims["B"] == 0:
        raise ValueError("attention must hold at least one example, got B = 0")
    return (attention * supporting[:, None, :]).sum(-1).mean(0)  # (hops,)
