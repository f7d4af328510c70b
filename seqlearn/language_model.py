r"""Character-level language models: an Elman RNN, an LSTM, a small causal Transformer.

Chapter: *Language models on real text* (``chapters/language_model.ipynb``).

A language model gives the probability of a text one character at a time (book equation
eq-lm-chain),

.. math::

    p(x_1, \dots, x_N) = \prod_{t=1}^{N} p(x_t \mid x_1, \dots, x_{t-1}),

and is trained by *teacher forcing*: the model reads the true characters
``x_1 .. x_{T}`` and is scored on predicting ``x_2 .. x_{T+1}``, every position at once.
The score is the cross-entropy; in bits per character (eq-lm-bpc),

.. math::

    \mathrm{bpc} = -\frac{1}{N-1} \sum_{t=1}^{N-1} \log_2 p(x_{t+1} \mid x_{\le t}) =
    \frac{\text{cross-entropy in nats}}{\ln 2},

over the ``N - 1`` predicted characters ``x_2 .. x_N`` of a text ``x_1 .. x_N`` (the
first character has no context and is not scored; a window of ``T + 1`` characters
gives ``T`` terms). :func:`bits_per_character` takes this mean over the targets it is
given, one term per target.

Every model here maps ``x (B, T)`` character ids and an optional state to
``(logits (B, T, V), state)``: ``logits[b, t]`` scores the character after ``x[b, t]``,
and the returned state lets the model continue where it stopped (a recurrent state, or
the Transformer's last characters), which is how :func:`seqlearn.sampling.generate`
feeds a model its own samples. The recurrent models are built on
:mod:`seqlearn.recurrent` and :mod:`seqlearn.gated`; the Transformer's blocks on
:class:`~seqlearn.attention.MultiHeadAttention` (with ``causal=True``),
:class:`~seqlearn.transformer_layers.FeedForward` and
:class:`~seqlearn.layernorm.LayerNorm`.
"""

from __future__ import annotations

import copy
import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from seqlearn.attention import MultiHeadAttention
from seqlearn.char_text import consecutive_windows
from seqlearn.gated import LSTM, LSTMGates
from seqlearn.layernorm import LayerNorm
from seqlearn.recurrent import ElmanRNN
from seqlearn.positional import sinusoidal_positional_encoding
from seqlearn.transformer_layers import FeedForward
from seqlearn.validate import (check_bool, check_int, check_real, check_shape,
                               check_tensor, check_tokens)

__all__ = ["bits_per_character", "language_model_loss", "held_out_bits",
           "parameter_count", "RecurrentLM", "CausalBlock", "CausalTransformerLM",
           "lstm_gates"]

LN2 = math.log(2.0)


def bits_per_character(logits: Tensor, targets: Tensor, *,
                       ignore_index: int = -1) -> Tensor:
    r"""Mean of ``-log2 softmax(logits)[target]`` over the targets (eq-lm-bpc).

    ``logits (..., V)`` (log-probabilities work too: their softmax is the distribution
    itself), ``targets (...)`` long; entries equal to ``ignore_index`` are left out. A
    scalar tensor in the dtype of ``logits``.
    """
    check_tensor(logits, "logits")
    check_tensor(targets, "targets", floating=False)
    if targets.dtype != torch.long:
        raise TypeError(f"targets must be a LongTensor of ids, got dtype "
                        f"{targets.dtype}")
    lead = check_shape(logits, "logits", "... V")
    if tuple(targets.shape) != lead["..."]:
        raise ValueError(f"targets must have shape {lead['...']} (logits without V), "
                         f"got {tuple(targets.shape)}")
    keep = targets != ignore_index
    if not bool(keep.any()):
        raise ValueError("targets must hold at least one target that is not "
                         "ignore_index")
    chosen = targets[keep]
    if int(chosen.min()) < 0 or int(chosen.max()) >= lead["V"]:
        raise ValueError(f"targets must hold ids in [0, {lead['V']}) or "
                         f"{ignore_index}, got min {int(chosen.min())} and max "
                         f"{int(chosen.max())}")
    log_p = torch.log_softmax(logits[keep], dim=-1)  # (M, V), natural log
    return -log_p.gather(-1, chosen[:, None]).mean() / LN2


def _check_model(model: object) -> None:
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be a torch.nn.Module, got {type(model).__name__}")


def language_model_loss(model: nn.Module, batch: tuple[Tensor, Tensor]) -> Tensor:
    """Teacher forcing's cross-entropy in nats for :func:`seqlearn.train.fit`.

    ``batch = (x (B, T), y (B, T))`` as :func:`seqlearn.char_text.random_windows` draws
    it; the model reads ``x`` from a zero state and is scored on ``y``.
    """
    _check_model(model)
    if not isinstance(batch, (tuple, list)) or len(batch) != 2:
        raise TypeError(f"batch must be a pair (x, y), got {type(batch).__name__}")
    x, y = batch
    logits, _ = model(x)  # (B, T, V)
    check_tokens(y, "y", "B T", logits.shape[-1])
    check_shape(y, "y", "B T", sizes={"B": x.shape[0], "T": x.shape[1]})
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))


@torch.no_grad()
def held_out_bits(model: nn.Module, ids: Tensor, length: int, *, batch_size: int = 64,
                  carry: bool = False) -> float:
    """Bits per character of ``model`` on a whole text ``ids (N,)``.

    The text is cut into consecutive windows of ``length`` characters
    (:func:`seqlearn.char_text.consecutive_windows`), so every character after the first
    is predicted once. With ``carry=False`` the model reads each window from a zero
    state, so a character is predicted from at most ``length`` characters of context
    (from only one at the start of a window). With ``carry=True`` it reads the windows
    in order as one stream, each from the state the previous one returned: a recurrent
    model then predicts every character from the whole text before it, and a
    :class:`CausalTransformerLM` from its last ``context`` characters at most (its state
    holds ``context - 1`` characters, so a window of ``length`` characters sees at
    least ``context - length`` characters before it).
    """
    _check_model(model)
    check_int(batch_size, "batch_size")
    carry = check_bool(carry, "carry")
    x, y = consecutive_windows(ids, length)  # (W, L) each
    was_training = model.training
    model.eval()
    total, count = 0.0, 0
    if carry and isinstance(model, CausalTransformerLM):
        # its state is the text itself: the n characters of window w are read after
        # the last context - n characters before them, so the windows run side by side
        C, L = model.context, x.shape[1]
        n = (y != -1).sum(1)  # (W,) characters per window
        ends = torch.arange(x.shape[0]) * L + n  # (W,) one past each window's end
        full = (ends >= C) & (n == L)  # a whole context, a whole window
        reads = torch.arange(C) + ends[full, None] - C  # (F, C) indices into ids
        for rows in torch.arange(reads.shape[0]).split(batch_size):
            logits, _ = model(ids[reads[rows]])  # (b, C, V): the last L are the window
            total += float(bits_per_character(logits[:, -L:].double(),
                                              y[full][rows])) * L * len(rows)
            count += L * len(rows)
        for w in torch.nonzero(~full)[:, 0].tolist():  # the first windows, the last
            read = ids[max(0, int(ends[w]) - C): int(ends[w])]
            logits, _ = model(read[None])  # (1, <= C, V)
            m = int(n[w])
            total += float(bits_per_character(logits[0, -m:].double(), y[w, :m])) * m
            count += m
    elif carry:  # one stream: window w starts from the state window w - 1 ended in
        state = None
        for w in range(x.shape[0]):
            keep = y[w] != -1
            n = int(keep.sum())
            logits, state = model(x[w: w + 1, :n], state)  # (1, n, V)
            total += float(bits_per_character(logits[0].double(), y[w, :n])) * n
            count += n
    else:
        for rows in torch.arange(x.shape[0]).split(batch_size):
            logits, _ = model(x[rows])  # (b, L, V)
            keep = y[rows] != -1
            n = int(keep.sum())
            total += float(bits_per_character(logits.double(), y[rows])) * n
            count += n
    model.train(was_training)
    return total / count


def parameter_count(model: nn.Module) -> int:
    """The number of trainable parameters (entries of tensors that require grad)."""
    _check_model(model)
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


CELLS = {"elman": (ElmanRNN, nn.RNN), "lstm": (LSTM, nn.LSTM)}


class RecurrentLM(nn.Module):
    r"""Embedding, one recurrent layer, a linear read-out (eq-lm-rnn).

    .. math::

        e_t = E[x_t], \qquad h_t = \mathrm{cell}(e_t, h_{t-1}), \qquad
        p(x_{t+1} \mid x_{\le t}) = \operatorname{softmax}(W_o h_t + b_o)

    with ``cell`` an Elman step (:class:`seqlearn.recurrent.ElmanRNN`, tanh) or an LSTM
    step (:class:`seqlearn.gated.LSTM`; the state is then ``(h, c)``). ``fast=True``
    runs the same equations with ``torch.nn.RNN``/``torch.nn.LSTM`` (fused loops,
    several times faster on a CPU); :meth:`readable` returns the model with seqlearn's
    layers and the same weights. ``forward(x (B, T) long, state | None) -> (logits (B,
    T, V), state)``.
    """

    def __init__(self, vocab_size: int, embed_dim: int, hidden_size: int, *,
                 cell: str = "lstm", fast: bool = False) -> None:
        super().__init__()
        if cell not in CELLS:
            raise ValueError(f"cell must be one of {tuple(CELLS)}, got {cell!r}")
        self.vocab_size = check_int(vocab_size, "vocab_size")
        check_int(embed_dim, "embed_dim")
        check_int(hidden_size, "hidden_size")
        self.cell, self.fast = cell, check_bool(fast, "fast")
        self.embed = nn.Embedding(vocab_size, embed_dim)  # E (V, d_e)
        readable, fused = CELLS[cell]
        self.rnn = (fused(embed_dim, hidden_size, batch_first=True) if fast
                    else readable(embed_dim, hidden_size))
        self.out = nn.Linear(hidden_size, vocab_size)  # W_o, b_o

    def extra_repr(self) -> str:
        return f"cell={self.cell!r}, fast={self.fast}"

    def forward(self, x: Tensor, state: Tensor | tuple[Tensor, Tensor] | None = None
                ) -> tuple[Tensor, Tensor | tuple[Tensor, Tensor]]:
        check_tokens(x, "x", "B T", self.vocab_size)
        y, state = self.rnn(self.embed(x), state)  # (B, T, H), state (1, B, H) each
        return self.out(y), state  # (B, T, V)

    def readable(self) -> RecurrentLM:
        """A copy that runs seqlearn's own recurrent layer (equal logits and states)."""
        new = copy.deepcopy(self)
        if self.fast:
            new.rnn = CELLS[self.cell][0].from_torch(self.rnn)
            new.fast = False
        return new


def lstm_gates(model: RecurrentLM, x: Tensor) -> LSTMGates:
    """Every gate and state of an LSTM language model at every step, ``x (B, T)``.

    Runs seqlearn's :class:`~seqlearn.gated.LSTMCell` step by step from a zero state and
    returns :class:`~seqlearn.gated.LSTMGates` whose fields ``i, f, g, o, c, h`` are
    each ``(B, T, H)``: ``c[:, t]`` is the cell state after reading ``x[:, t]``.
    """
    if not isinstance(model, RecurrentLM) or model.cell != "lstm":
        raise TypeError(f"model must be a RecurrentLM with cell='lstm', got "
                        f"{getattr(model, 'cell', type(model).__name__)!r}")
    check_tokens(x, "x", "B T", model.vocab_size)
    cell = model.readable().rnn.cells[0]
    with torch.no_grad():
        gx = cell.project_input(model.embed(x))  # (B, T, 4H)
        h = c = gx.new_zeros(x.shape[0], cell.hidden_size)  # (B, H)
        steps = []
        for t in range(x.shape[1]):
            gates = cell.gates(gx[:, t], h, c)
            h, c = gates.h, gates.c
            steps.append(gates)
    return LSTMGates(*(torch.stack(parts, dim=1) for parts in zip(*steps)))  # (B, T, H)


class CausalBlock(nn.Module):
    r"""A pre-norm Transformer block with causal self-attention (eq-lm-block).

    .. math::

        z = x + \mathrm{MHA}_{\text{causal}}\big(\mathrm{LN}_1(x)\big), \qquad
        x' = z + \mathrm{FFN}\big(\mathrm{LN}_2(z)\big):

    position ``t`` attends to positions ``<= t`` only. Parameter names follow
    ``torch.nn.TransformerEncoderLayer`` (``self_attn``, ``linear1``/``linear2`` inside
    ``ff``, ``norm1``, ``norm2``); :meth:`from_torch` copies one built with
    ``norm_first=True, batch_first=True``, which with a causal mask gives equal outputs.
    ``forward(x (B, T, d)) -> (B, T, d)``; the last weights ``(B, heads, T, T)`` stay in
    ``self.weights``.
    """

    def __init__(self, d_model: int, num_heads: int, d_ff: int) -> None:
        super().__init__()
        self.d_model = check_int(d_model, "d_model")
        self.norm1 = LayerNorm(d_model)
        self.self_attn = MultiHeadAttention(d_model, num_heads)
        self.norm2 = LayerNorm(d_model)
        self.ff = FeedForward(d_model, d_ff)
        self.weights: Tensor | None = None

    def forward(self, x: Tensor) -> Tensor:
        check_tensor(x, "x")
        check_shape(x, "x", "B T d", sizes={"d": self.d_model})
        h = self.norm1(x)
        attended, weights = self.self_attn(h, h, h, causal=True)  # (B, T, d)
        self.weights = weights.detach()  # (B, heads, T, T)
        z = x + attended
        return z + self.ff(self.norm2(z))  # (B, T, d)

    @classmethod
    def from_torch(cls, m: nn.TransformerEncoderLayer) -> CausalBlock:
        """Copy a pre-norm ``torch.nn.TransformerEncoderLayer``: equal outputs.

        ``m`` built with ``norm_first=True, batch_first=True`` and ``dropout=0`` (or in
        ``eval()`` mode): ``m(x, src_mask=causal, is_causal=True)`` equals ``self(x)``.
        """
        if not isinstance(m, nn.TransformerEncoderLayer):
            raise TypeError(f"m must be a torch.nn.TransformerEncoderLayer, got "
                            f"{type(m).__name__}")
        if not m.norm_first:
            raise ValueError("m must be built with norm_first=True (a pre-norm block)")
        if not (m.activation is F.relu or isinstance(m.activation, nn.ReLU)):
            raise ValueError(f"m must use the relu activation, got {m.activation!r}")
        new = cls(m.self_attn.embed_dim, m.self_attn.num_heads, m.linear1.out_features)
        new = new.to(dtype=m.linear1.weight.dtype)
        new.self_attn = MultiHeadAttention.from_torch(m.self_attn)
        new.norm1 = LayerNorm.from_torch(m.norm1)
        new.norm2 = LayerNorm.from_torch(m.norm2)
        with torch.no_grad():
            for name in ("linear1", "linear2"):
                getattr(new.ff, name).weight.copy_(getattr(m, name).weight)
                getattr(new.ff, name).bias.copy_(getattr(m, name).bias)
        return new


class CausalTransformerLM(nn.Module):
    r"""A decoder-only Transformer over characters (eq-lm-transformer).

    .. math::

        z^{(0)}_t = E[x_t] + PE_t, \qquad z^{(l)} = \mathrm{Block}_l(z^{(l-1)}), \qquad
        p(x_{t+1} \mid x_{\le t}) = \operatorname{softmax}\big(W_o\,
        \mathrm{LN}(z^{(L)}_t) + b_o\big)

    with the sinusoidal ``PE`` of
    :func:`seqlearn.positional.sinusoidal_positional_encoding` and ``num_layers``
    :class:`CausalBlock`. It reads at most ``context`` characters: ``forward(x (B, T),
    state)`` with ``T <= context`` returns ``(logits (B, T, V), state)`` where ``state``
    holds the last ``context - 1`` characters read (the context the next call sees;
    ``None`` at the start). Positions are counted from the first character of the window
    read, as in training on windows cut at random places.
    """

    def __init__(self, vocab_size: int, d_model: int, num_heads: int, num_layers: int,
                 d_ff: int, *, context: int, embedding_std: float = 0.5) -> None:
        super().__init__()
        self.vocab_size = check_int(vocab_size, "vocab_size")
        self.d_model = check_int(d_model, "d_model")
        self.context = check_int(context, "context")
        check_int(num_layers, "num_layers")
        check_real(embedding_std, "embedding_std", positive=True)
        self.embed = nn.Embedding(vocab_size, d_model)  # E (V, d)
        nn.init.normal_(self.embed.weight, std=embedding_std)
        self.blocks = nn.ModuleList(CausalBlock(d_model, num_heads, d_ff)
                                    for _ in range(num_layers))
        self.norm = LayerNorm(d_model)
        self.out = nn.Linear(d_model, vocab_size)  # W_o, b_o
        self.register_buffer("pe", sinusoidal_positional_encoding(context, d_model),
                             persistent=False)  # (context, d)

    def extra_repr(self) -> str:
        return f"context={self.context}"

    def forward(self, x: Tensor, state: Tensor | None = None) -> tuple[Tensor, Tensor]:
        T = check_tokens(x, "x", "B T", self.vocab_size)["T"]
        if T > self.context:
            raise ValueError(f"x must hold at most context={self.context} characters "
                             f"per row, got {T}")
        if state is not None:
            check_tensor(state, "state", floating=False)
            if state.dtype != torch.long:
                raise TypeError(f"state must be a LongTensor of ids, got dtype "
                                f"{state.dtype}")
            check_shape(state, "state", "B S", sizes={"B": x.shape[0]})
            inside = (state >= 0) & (state < self.vocab_size)
            if state.numel() and not bool(inside.all()):
                raise ValueError(f"state must hold ids in [0, {self.vocab_size})")
            x = torch.cat([state, x], dim=1)[:, -self.context:]  # (B, <= context)
        pe = self.pe[: x.shape[1]].to(self.embed.weight.dtype)  # (S, d)
        z = self.embed(x) + pe  # (B, S, d)
        for block in self.blocks:
            z = block(z)
        logits = self.out(self.norm(z))[:, -T:]  # (B, T, V): the new positions only
        return logits, x[:, max(0, x.shape[1] - self.context + 1):]  # the next context

    def attention_maps(self) -> list[Tensor]:
        """The last forward's weights, one ``(B, heads, S, S)`` per block."""
        return [block.weights for block in self.blocks]
