r"""A GRU encoder--decoder, with or without attention (chapters :doc:`seq2seq`, :doc:`attention`).

**Encoder** (Sutskever et al. 2014; bidirectional as in Bahdanau et al. 2015). The source ids
``x_1 .. x_S`` are embedded and read by a GRU; a bidirectional encoder runs a second GRU from
the last real token back to the first and concatenates, ``h_i = [->h_i ; <-h_i]``. Each
direction has ``hidden // dirs`` units, so ``h_i`` and the *code*

.. math::

    c = [\overrightarrow{h}_{T_x} \,;\, \overleftarrow{h}_{1}] \in \mathbb{R}^{H}
    \qquad (T_x = \text{the source's length, book equation eq-s2s-code})

have ``H = hidden`` numbers whatever the direction count. Padding after the ``T_x`` real
tokens is never read: the forward GRU stops at ``T_x`` and the backward GRU reads each sequence
reversed within its own length, so extra padding changes no state (the chapter checks it).

**Decoder** (Cho et al. 2014 without attention, Bahdanau et al. 2015 with it). With
``y_0 = <bos>`` and state ``s_0`` (below), for ``t = 1 .. T``:

.. math::

    e_{t,i} &= \mathrm{score}(s_{t-1}, h_i), \qquad
    \alpha_{t,i} = \frac{m_i \exp e_{t,i}}{\sum_j m_j \exp e_{t,j}}, \qquad
    c_t = \sum_i \alpha_{t,i} h_i \quad \text{(attention; } c_t = c \text{ without)} \\
    s_t &= \mathrm{GRU}\big([E y_{t-1} ; c_t],\, s_{t-1}\big), \qquad
    \mathrm{logits}_t = W_o [s_t ; c_t ; E y_{t-1}] + b_o,

with ``m_i`` the source padding mask (True = token): a padded key gets weight exactly 0.
``score`` is one of :mod:`seqlearn.scores` (``"dot"``, ``"scaled_dot"``, ``"general"``,
``"additive"``, ``"mlp"``, ``"location"``) or any module ``(q (B,1,H), k (B,S,H)) -> (B,1,S)``.

**Initial decoder state** ``s_0`` (the CMU 11-785 notes' ``s_{-1}``), ``init=``:

==================  ============================================================
``"zero"``          ``s_0 = 0`` (a fixed value)
``"parameter"``     ``s_0 = p``, one learned vector for every input
``"mean"``          ``s_0 = mean_i h_i`` over the real positions
``"last"``          ``s_0 = c`` (Sutskever et al.: the encoder's last state)
``"learned"``       ``s_0 = tanh(W_s c + b_s)`` (a learned projection; Cho et al.'s
                    ``tanh(V' c)``; Bahdanau et al. use ``tanh(W_s <-h_1)``)
``"learned_mean"``  ``s_0 = tanh(W_s mean_i h_i + b_s)``, the mean over the real
                    positions (the CMU 11-785 notes' fourth rule, a learned map of
                    the mean; book equation eq-s2s-init-mean)
==================  ============================================================

**Teacher forcing**: :meth:`Seq2Seq.forward` feeds the true previous token ``y_{t-1}``
(``tgt_in = <bos> y_1 .. y_{T-1}``); :meth:`Seq2Seq.greedy_decode` feeds back its own arg-max.
The layers are ``torch.nn.GRU`` for speed; :meth:`Seq2Seq.to_seqlearn` returns the same model
computed with :class:`seqlearn.gated.GRU` (equal outputs, tested).

**Other encoders** (``encoder=``): ``"conv"`` replaces each direction's GRU by a causal
:class:`seqlearn.conv_encoder.ConvEncoder`, so that ``h_i`` reads a window of the source
on each side of ``i`` (the padding, after the real tokens, is never read); a callable
``(input_size, hidden_size) -> module`` builds any module with the ``torch.nn.GRU``
contract (``batch_first=True``, ``(y, h_n)``).
"""

from __future__ import annotations

import copy
from typing import Any, Callable

import torch
from torch import Tensor, nn

from seqlearn import gated, scores
from seqlearn.attention import attend
from seqlearn.conv_encoder import ConvEncoder
from seqlearn.data.vocab import Seq2SeqBatch, Vocab, vocab_size
# the loss and the score are shared with the Transformer (importable from here too)
from seqlearn.losses import (_check_batch, exact_match,  # noqa: F401
                             masked_cross_entropy)
from seqlearn.validate import (check_bool, check_int, check_shape, check_tensor,
                               check_tokens, first_weight)

SCORES = ("dot", "scaled_dot", "general", "additive", "mlp", "location")
INITS = ("zero", "parameter", "mean", "last", "learned", "learned_mean")


ENCODERS = ("gru", "conv")


def _encoder_factory(encoder: Any) -> Callable[[int, int], nn.Module]:
    """``encoder`` (``"gru"``, ``"conv"`` or a callable) as ``(E, H_dir) -> module``."""
    if isinstance(encoder, str):
        if encoder not in ENCODERS:
            raise ValueError(f"encoder must be one of {ENCODERS} or a callable, "
                             f"got {encoder!r}")
        if encoder == "conv":
            return lambda E, H: ConvEncoder(E, H, causal=True)
        return lambda E, H: nn.GRU(E, H, batch_first=True)
    if not callable(encoder) or isinstance(encoder, nn.Module):
        raise TypeError(f"encoder must be one of {ENCODERS} or a callable "
                        "(input_size, hidden_size) -> module, got "
                        f"{type(encoder).__name__}")

    def make(E: int, H: int) -> nn.Module:
        module = encoder(E, H)
        if not isinstance(module, nn.Module):
            raise TypeError(f"encoder({E}, {H}) must return a torch.nn.Module, got "
                            f"{type(module).__name__}")
        _probe_width(module, (1, 1, E), H, f"encoder({E}, {H})", first=True)
        return module
    return make


def _probe_width(module: nn.Module, shape: tuple[int, ...], width: int, name: str, *,
                 first: bool = False, second: tuple[int, ...] | None = None) -> None:
    """Run ``module`` once on zeros of ``shape`` (and ``second``) in its own dtype and
    raise ``ValueError`` naming ``name`` unless the output (its first element with
    ``first``) ends in ``width``: a part of the wrong size is refused at construction,
    not blamed later on an argument the caller never passed."""
    weight = first_weight(module)
    like = {"dtype": weight.dtype} if weight is not None else {}
    args = [torch.zeros(shape, **like)] + ([torch.zeros(second, **like)] if second else [])
    was_training = getattr(module, "training", False)
    try:
        with torch.no_grad():
            module.eval()  # no running statistics updated by the probe
            out = module(*args)
    except (ValueError, TypeError, RuntimeError) as error:
        raise ValueError(f"{name} must accept inputs of shape {shape}"
                         + (f" and {second}" if second else "")
                         + f" and give ... x {width}: {error}") from None
    finally:
        module.train(was_training)
    out = out[0] if first else out
    if not isinstance(out, Tensor) or out.shape[-1] != width:
        got = tuple(out.shape) if isinstance(out, Tensor) else type(out).__name__
        raise ValueError(f"{name} must give outputs of width {width}, got {got}")


def _reverse_within(x: Tensor, lengths: Tensor) -> Tensor:
    """Reverse each row's first ``lengths[b]`` steps, leave its padding in place (an involution).

    x (B, S, ...) -> (B, S, ...): out[b, t] = x[b, L_b - 1 - t] for t < L_b, else x[b, t].
    """
    t = torch.arange(x.shape[1], device=x.device)  # (S,)
    index = torch.where(t < lengths[:, None], lengths[:, None] - 1 - t, t)  # (B, S)
    index = index.view(*index.shape, *([1] * (x.dim() - 2))).expand_as(x)
    return x.gather(1, index)


class Seq2Seq(nn.Module):
    """GRU encoder--decoder; Bahdanau attention when ``score`` is given (module
    docstring).

    ``src_vocab``/``tgt_vocab``: a :class:`seqlearn.data.Vocab` or its size, as for
    :class:`seqlearn.transformer.Transformer`; with a size, the target ids 0, 1, 2 are
    ``<pad>``, ``<bos>``, ``<eos>`` (the numbering of ``Vocab``), kept in ``pad``,
    ``bos``, ``eos``.
    """

    def __init__(self, src_vocab: Vocab | int, tgt_vocab: Vocab | int, hidden: int, *,
                 score: str | nn.Module | None = None, bidirectional: bool = True,
                 init: str = "learned", embedding: int | None = None,
                 max_src_len: int = 64,
                 encoder: str | Callable[[int, int], nn.Module] = "gru") -> None:
        super().__init__()
        V_src = vocab_size(src_vocab, "src_vocab")
        # <pad>, <bos>, <eos> at least
        V_tgt = vocab_size(tgt_vocab, "tgt_vocab", minimum=3)
        # ids 0, 1, 2
        specials = tgt_vocab if isinstance(tgt_vocab, Vocab) else Vocab([])
        self.pad, self.bos, self.eos = specials.pad, specials.bos, specials.eos
        hidden = check_int(hidden, "hidden")
        check_bool(bidirectional, "bidirectional")
        if bidirectional and hidden % 2:
            raise ValueError("hidden must be even with bidirectional=True (hidden // 2 "
                             f"per direction), got {hidden}")
        if init not in INITS:
            raise ValueError(f"init must be one of {INITS}, got {init!r}")
        E = hidden if embedding is None else check_int(embedding, "embedding")
        self.max_src_len = check_int(max_src_len, "max_src_len")
        self.src_vocab, self.tgt_vocab = src_vocab, tgt_vocab
        self.src_vocab_size, self.tgt_vocab_size = V_src, V_tgt
        self.hidden, self.bidirectional, self.init = hidden, bidirectional, init
        H_dir = hidden // 2 if bidirectional else hidden
        self.src_embed = nn.Embedding(V_src, E)
        self.tgt_embed = nn.Embedding(V_tgt, E)
        make = _encoder_factory(encoder)  # (E, H_dir) -> a module with the nn.GRU contract
        self.encoder_fwd = make(E, H_dir)
        self.encoder_bwd = make(E, H_dir) if bidirectional else None
        self.decoder = nn.GRU(E + hidden, hidden, batch_first=True)
        self.out = nn.Linear(2 * hidden + E, V_tgt)
        # W_s, b_s of "learned" and "learned_mean"
        self.init_proj = (nn.Linear(hidden, hidden) if init in ("learned", "learned_mean")
                          else None)
        self.s0 = nn.Parameter(torch.zeros(hidden)) if init == "parameter" else None
        self.score_name, self.score = self._make_score(score, hidden, self.max_src_len)

    @staticmethod
    def _make_score(score: str | nn.Module | None, hidden: int, max_src_len: int
                    ) -> tuple[str | None, Callable | None]:
        if score is None:
            return None, None
        if isinstance(score, nn.Module):  # (B, 1, hidden) against (B, S, hidden)
            _probe_width(score, (1, 1, hidden), 2, "score", second=(1, 2, hidden))
            return type(score).__name__, score
        if score not in SCORES:
            raise ValueError(f"score must be None, an nn.Module or one of {SCORES}, got {score!r}")
        return score, {
            "dot": lambda: scores.dot_score,
            "scaled_dot": lambda: scores.scaled_dot_score,
            "general": lambda: scores.BilinearScore(hidden, hidden),
            "additive": lambda: scores.AdditiveScore(hidden, hidden, hidden),
            "mlp": lambda: scores.MLPScore(hidden, hidden, (hidden,)),
            "location": lambda: scores.LocationScore(hidden, max_src_len),
        }[score]()

    # ------------------------------------------------------------------ validation

    def _check_source(self, src: Tensor, src_lengths: Tensor) -> dict[str, int]:
        dims = check_tokens(src, "src", "B S", self.src_vocab_size)
        check_tensor(src_lengths, "src_lengths", floating=False)
        if (src_lengths.dtype == torch.bool or src_lengths.is_complex()
                or src_lengths.is_floating_point()):
            raise TypeError(f"src_lengths must be an integer tensor, got dtype "
                            f"{src_lengths.dtype}")
        check_shape(src_lengths, "src_lengths", "B", sizes={"B": dims["B"]})
        if bool(((src_lengths < 1) | (src_lengths > dims["S"])).any()):
            raise ValueError(f"src_lengths must lie in [1, S={dims['S']}], got "
                             f"{src_lengths.tolist()}")
        if self.score_name == "location" and dims["S"] > self.max_src_len:
            raise ValueError(f"src has S={dims['S']} positions, more than max_src_len="
                             f"{self.max_src_len} of the location score")
        return dims

    # ------------------------------------------------------------------ encoder

    def encode(self, src: Tensor, src_lengths: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        """Encoder states ``h (B, S, H)`` (zero at padding), the code ``c (B, H)``, the mask ``(B, S)``."""
        dims = self._check_source(src, src_lengths)
        lengths = src_lengths.long()  # (B,)
        mask = torch.arange(dims["S"], device=src.device) < lengths[:, None]  # (B, S)
        x = self.src_embed(src)  # (B, S, E)
        rows = torch.arange(dims["B"], device=src.device)
        fwd, _ = self.encoder_fwd(x)  # (B, S, H_dir); padding comes after the real steps
        parts, code = [fwd], [fwd[rows, lengths - 1]]  # ->h_L: (B, H_dir)
        if self.encoder_bwd is not None:
            bwd_rev, _ = self.encoder_bwd(_reverse_within(x, lengths))  # (B, S, H_dir)
            bwd = _reverse_within(bwd_rev, lengths)  # <-h_i back at position i
            parts.append(bwd)
            code.append(bwd[:, 0])  # <-h_1: (B, H_dir)
        states = torch.cat(parts, dim=-1) * mask[..., None]  # (B, S, H)
        return states, torch.cat(code, dim=-1), mask  # (B, S, H), (B, H), (B, S)

    def initial_state(self, states: Tensor, code: Tensor, mask: Tensor) -> Tensor:
        """``s_0 (B, H)`` by the rule ``self.init`` (module docstring)."""
        if self.init == "zero":
            return torch.zeros_like(code)
        if self.init == "parameter":
            return self.s0.expand_as(code)
        # (B, H): mean over the real positions (states are 0 at padding)
        mean = states.sum(1) / mask.sum(1, keepdim=True).to(states.dtype)
        if self.init == "mean":
            return mean
        if self.init == "last":
            return code
        if self.init == "learned_mean":
            return torch.tanh(self.init_proj(mean))  # tanh(W_s mean_i h_i + b_s)
        return torch.tanh(self.init_proj(code))  # "learned"

    # ------------------------------------------------------------------ decoder

    def _context(self, s: Tensor, states: Tensor, mask: Tensor) -> tuple[Tensor, Tensor]:
        """Bahdanau attention: ``s_{t-1} (B, H)`` -> context ``c_t (B, H)``, weights ``(B, S)``."""
        e = self.score(s[:, None], states)  # (B, 1, S)
        c, w = attend(e, states, mask=mask[:, None])  # (B, 1, H), (B, 1, S)
        return c[:, 0], w[:, 0]

    def step(self, y_prev: Tensor, s: Tensor, states: Tensor, code: Tensor, mask: Tensor
             ) -> tuple[Tensor, Tensor, Tensor | None]:
        """One decoder step: ``y_{t-1} (B,)``, ``s_{t-1} (B, H)`` -> ``logits (B, V)``, ``s_t``, weights."""
        emb = self.tgt_embed(y_prev)  # (B, E)
        w = None
        if self.score is None:
            c = code  # (B, H): the same fixed-size code at every step
        else:
            c, w = self._context(s, states, mask)  # (B, H), (B, S)
        _, h = self.decoder(torch.cat([emb, c], -1)[:, None], s[None].contiguous())
        s = h[0]  # (B, H)
        return self.out(torch.cat([s, c, emb], -1)), s, w

    def forward(self, src: Tensor, src_lengths: Tensor, tgt_in: Tensor
                ) -> tuple[Tensor, Tensor | None]:
        """Teacher forcing: ``logits (B, T, V)`` for every step and weights
        ``(B, T, S)`` or None."""
        B = self._check_source(src, src_lengths)["B"]
        T = check_tokens(tgt_in, "tgt_in", "B T", self.tgt_vocab_size)["T"]
        check_shape(tgt_in, "tgt_in", "B T", sizes={"B": B})
        states, code, mask = self.encode(src, src_lengths)
        s = self.initial_state(states, code, mask)  # (B, H)
        # no attention: the decoder's input is known, run it in one call
        if self.score is None:
            emb = self.tgt_embed(tgt_in)  # (B, T, E)
            c = code[:, None].expand(B, T, self.hidden)  # (B, T, H)
            # (B, T, H)
            s_all, _ = self.decoder(torch.cat([emb, c], -1), s[None].contiguous())
            return self.out(torch.cat([s_all, c, emb], -1)), None
        logits, weights = [], []
        for t in range(T):
            out, s, w = self.step(tgt_in[:, t], s, states, code, mask)
            logits.append(out)
            weights.append(w)
        return torch.stack(logits, 1), torch.stack(weights, 1)  # (B, T, V), (B, T, S)

    @torch.no_grad()
    def greedy_decode(self, src: Tensor, src_lengths: Tensor, max_len: int
                      ) -> tuple[Tensor, Tensor | None]:
        """Feed back the arg-max token until every row has emitted ``<eos>`` or
        ``max_len`` steps.

        Returns ``tokens (B, L)`` long, ``L <= max_len``, each row ending with its
        ``<eos>`` then ``<pad>``, and the attention weights ``(B, L, S)`` (zero after
        ``<eos>``) or None.
        """
        max_len = check_int(max_len, "max_len")
        states, code, mask = self.encode(src, src_lengths)
        s = self.initial_state(states, code, mask)
        B = src.shape[0]
        y = torch.full((B,), self.bos, dtype=torch.long, device=src.device)
        done = torch.zeros(B, dtype=torch.bool, device=src.device)
        tokens, weights = [], []
        for _ in range(max_len):
            logits, s, w = self.step(y, s, states, code, mask)
            y = logits.argmax(-1).masked_fill(done, self.pad)  # (B,)
            tokens.append(y)
            if w is not None:
                weights.append(w.masked_fill(done[:, None], 0.0))
            done = done | (y == self.eos)
            if bool(done.all()):
                break
        return torch.stack(tokens, 1), (torch.stack(weights, 1) if weights else None)

    def to_seqlearn(self) -> "Seq2Seq":
        """A copy whose GRUs are :class:`seqlearn.gated.GRU` (same weights, equal outputs)."""
        twin = copy.deepcopy(self)
        if isinstance(self.encoder_fwd, nn.GRU):  # another encoder is kept as it is
            twin.encoder_fwd = gated.GRU.from_torch(self.encoder_fwd)
        if isinstance(self.encoder_bwd, nn.GRU):
            twin.encoder_bwd = gated.GRU.from_torch(self.encoder_bwd)
        twin.decoder = gated.GRU.from_torch(self.decoder)
        return twin


def greedy_exact_match(model: Seq2Seq, batch: Seq2SeqBatch, *,
                       max_len: int | None = None) -> Tensor:
    """``(B,)`` bool: does greedy decoding reproduce ``batch.tgt_out`` (up to
    ``<eos>``)?

    ``max_len`` defaults to the target width (enough for a correct answer and its
    ``<eos>``).
    """
    if not isinstance(model, Seq2Seq):
        raise TypeError(f"model must be a Seq2Seq, got {type(model).__name__}")
    _check_batch(batch, model.src_vocab_size, model.tgt_vocab_size)
    max_len = batch.tgt_out.shape[1] if max_len is None else max_len
    tokens, _ = model.greedy_decode(batch.src, batch.src_lengths, max_len)
    return exact_match(tokens, batch.tgt_out, model.eos)
