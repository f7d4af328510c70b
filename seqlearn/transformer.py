"""The Transformer (Vaswani et al. 2017): the encoder--decoder model.

The layers live in :mod:`seqlearn.transformer_layers`, layer normalisation in
:mod:`seqlearn.layernorm` and the positional encoding in :mod:`seqlearn.positional`;
their public names are importable from here too
(``from seqlearn.transformer import LayerNorm``). The learning-rate warm-up is in
:mod:`seqlearn.warmup`, the loss and exact match in :mod:`seqlearn.losses`.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from seqlearn.data.vocab import Seq2SeqBatch, Vocab, vocab_size
from seqlearn.layernorm import LayerNorm
from seqlearn.losses import _check_batch, exact_match, masked_cross_entropy
from seqlearn.positional import sinusoidal_positional_encoding
from seqlearn.transformer_layers import DecoderLayer, EncoderLayer, FeedForward, _key_mask
from seqlearn.validate import check_bool, check_int, check_real, check_shape, check_tokens

__all__ = ["sinusoidal_positional_encoding", "Transformer", "transformer_loss",
           "decoded_exact_match", "LayerNorm", "FeedForward", "EncoderLayer", "DecoderLayer"]


class Transformer(nn.Module):
    r"""Encoder--decoder Transformer (Vaswani et al. 2017) without dropout.

    .. math::

        x^{(0)}_i = E_x[x_i] + PE_i, \qquad y^{(0)}_t = E_y[y_{t-1}] + PE_t, \qquad
        p(y_t \mid y_{<t}, x) = \operatorname{softmax}\big(W_o\, y^{(N)}_t + b_o\big)

    (book equations eq-tf-embed and eq-tf-output): ``num_layers`` :class:`EncoderLayer`
    read the source, ``num_layers`` :class:`DecoderLayer` read the shifted target with
    causal self-attention and cross-attention on the encoder's output. With
    ``norm_first=True`` (pre-norm) a final :class:`LayerNorm` follows each stack, as in
    ``torch.nn.Transformer`` and the Annotated Transformer. The embeddings start as
    ``N(0, embedding_std^2)`` and are **not** multiplied by ``sqrt(d_model)``: the
    positions' entries have a root mean square of ``1/sqrt(2)``, and the paper's factor
    on torch's ``N(0, 1)`` start would drown them. The default 0.5 keeps the token part
    of ``x^{(0)}`` a little below the positional part (a choice of this library;
    ``bench/study_transformer.py`` trains with it, it compares no other scale).
    ``tie_weights=True`` uses the target embedding as ``W_o`` (Press & Wolf 2017).
    ``src_vocab``/``tgt_vocab``: vocabulary sizes (or :class:`seqlearn.data.Vocab`).
    """

    def __init__(self, src_vocab: int | Vocab, tgt_vocab: int | Vocab, d_model: int,
                 num_heads: int, num_layers: int, d_ff: int, *,
                 norm_first: bool = False, max_len: int = 512,
                 tie_weights: bool = False, embedding_std: float = 0.5) -> None:
        super().__init__()
        sizes = [vocab_size(src_vocab, "src_vocab"), vocab_size(tgt_vocab, "tgt_vocab")]
        self.src_vocab_size, self.tgt_vocab_size = sizes
        self.d_model = check_int(d_model, "d_model")
        self.max_len = check_int(max_len, "max_len")
        check_int(num_layers, "num_layers")
        check_bool(tie_weights, "tie_weights")
        self.norm_first = check_bool(norm_first, "norm_first")
        self.src_embed = nn.Embedding(sizes[0], d_model)  # E_x
        self.tgt_embed = nn.Embedding(sizes[1], d_model)  # E_y
        std = check_real(embedding_std, "embedding_std", positive=True)
        for embedding in (self.src_embed, self.tgt_embed):
            nn.init.normal_(embedding.weight, std=std)
        self.register_buffer("pe", sinusoidal_positional_encoding(max_len, d_model),
                             persistent=False)  # (max_len, d)
        layer = dict(norm_first=norm_first)
        self.encoder = nn.ModuleList([EncoderLayer(d_model, num_heads, d_ff, **layer)
                                      for _ in range(num_layers)])
        self.decoder = nn.ModuleList([DecoderLayer(d_model, num_heads, d_ff, **layer)
                                      for _ in range(num_layers)])
        self.encoder_norm = LayerNorm(d_model) if norm_first else None
        self.decoder_norm = LayerNorm(d_model) if norm_first else None
        self.out = nn.Linear(d_model, sizes[1])  # W_o, b_o
        if tie_weights:
            self.out.weight = self.tgt_embed.weight

    def _positions(self, ids: Tensor, name: str, vocab_size: int) -> int:
        T = check_tokens(ids, name, "B T", vocab_size)["T"]
        if T > self.max_len:
            raise ValueError(f"{name} has {T} positions, more than max_len={self.max_len}")
        return T

    def encode(self, src: Tensor, src_mask: Tensor | None = None) -> Tensor:
        """The encoder's output, the *memory* ``(B, S, d)``."""
        S = self._positions(src, "src", self.src_vocab_size)
        _key_mask(src_mask, "src_mask", src.shape[0], S)  # validated once, named for the caller
        x = self.src_embed(src) + self.pe[:S]  # (B, S, d): eq-tf-embed
        for layer in self.encoder:
            x = layer(x, mask=src_mask)
        return x if self.encoder_norm is None else self.encoder_norm(x)

    def decode(self, tgt_in: Tensor, memory: Tensor, src_mask: Tensor | None = None) -> Tensor:
        """Logits ``(B, T, tgt_vocab)`` for every position of ``tgt_in`` given the memory."""
        T = self._positions(tgt_in, "tgt_in", self.tgt_vocab_size)
        check_shape(tgt_in, "tgt_in", "B T", sizes={"B": memory.shape[0]})
        y = self.tgt_embed(tgt_in) + self.pe[:T]  # (B, T, d)
        for layer in self.decoder:
            y = layer(y, memory, memory_mask=src_mask)
        y = y if self.decoder_norm is None else self.decoder_norm(y)
        return self.out(y)  # (B, T, V): eq-tf-output before the softmax

    def forward(self, src: Tensor, tgt_in: Tensor, *, src_mask: Tensor | None = None) -> Tensor:
        """Teacher forcing: ``src (B, S)``, ``tgt_in (B, T)`` long -> logits ``(B, T, V)``."""
        return self.decode(tgt_in, self.encode(src, src_mask), src_mask)

    @torch.no_grad()
    def greedy_decode(self, src: Tensor, max_len: int, bos: int, eos: int, *,
                      src_mask: Tensor | None = None, pad: int = 0) -> Tensor:
        """Feed back the arg-max token until every row has emitted ``eos`` or ``max_len`` steps.

        Returns ``tokens (B, L)`` long, ``L <= max_len``, without the leading ``bos``; after a
        row's ``eos`` come ``pad`` ids. Each step reruns the decoder on the whole prefix (no
        cache), so :meth:`attention_maps` then holds the last step's weights.
        """
        max_len = check_int(max_len, "max_len", maximum=self.max_len - 1)
        for value, name in ((bos, "bos"), (eos, "eos"), (pad, "pad")):
            check_int(value, name, minimum=0, maximum=self.tgt_vocab_size - 1)
        memory = self.encode(src, src_mask)  # (B, S, d)
        ys = torch.full((src.shape[0], 1), bos, dtype=torch.long, device=src.device)
        done = torch.zeros(src.shape[0], dtype=torch.bool, device=src.device)  # (B,)
        for _ in range(max_len):
            y = self.decode(ys, memory, src_mask)[:, -1].argmax(-1)  # (B,)
            y = y.masked_fill(done, pad)
            ys = torch.cat([ys, y[:, None]], dim=1)  # (B, t + 1)
            done = done | (y == eos)
            if bool(done.all()):
                break
        return ys[:, 1:]

    def attention_maps(self) -> dict[str, list[Tensor]]:
        """The last forward's weights: ``"encoder"``, ``"decoder_self"``, ``"cross"``, each a
        list over layers of ``(B, heads, Tq, Tk)``."""
        if self.encoder[0].self_weights is None or self.decoder[0].self_weights is None:
            raise ValueError("no attention maps yet: run the model forward first")
        return {"encoder": [layer.self_weights for layer in self.encoder],
                "decoder_self": [layer.self_weights for layer in self.decoder],
                "cross": [layer.cross_weights for layer in self.decoder]}


def _check_model_batch(model: Transformer, batch: Seq2SeqBatch) -> None:
    if not isinstance(model, Transformer):
        raise TypeError(f"model must be a Transformer, got {type(model).__name__}")
    _check_batch(batch, model.src_vocab_size, model.tgt_vocab_size)


def transformer_loss(model: Transformer, batch: Seq2SeqBatch) -> Tensor:
    """Teacher-forced :func:`seqlearn.losses.masked_cross_entropy` of a batch
    (eq-s2s-loss)."""
    _check_model_batch(model, batch)
    logits = model(batch.src, batch.tgt_in, src_mask=batch.src_mask)  # (B, T, V)
    return masked_cross_entropy(logits, batch.tgt_out, batch.tgt_mask)


def decoded_exact_match(model: Transformer, batch: Seq2SeqBatch,
                        vocab: Vocab) -> Tensor:
    """``(B,)`` bool: greedy decoding reproduces ``batch.tgt_out`` up to ``<eos>``."""
    _check_model_batch(model, batch)
    if not isinstance(vocab, Vocab):
        raise TypeError(f"vocab must be a seqlearn.data.Vocab, got "
                        f"{type(vocab).__name__}")
    if len(vocab) != model.tgt_vocab_size:
        raise ValueError(f"vocab must be the model's target vocabulary of "
                         f"{model.tgt_vocab_size} tokens, got {len(vocab)} tokens")
    tokens = model.greedy_decode(batch.src, batch.tgt_out.shape[1], vocab.bos,
                                 vocab.eos,
                                 src_mask=batch.src_mask, pad=vocab.pad)
    return exact_match(tokens, batch.tgt_out, vocab.eos)
