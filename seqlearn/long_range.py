r"""A long-range task and the gradient that reaches each input position.

*First-token recall*: a sequence of ``T`` random tokens, and the model must output the
**first** token after reading the last one. Whatever the model computes at the end must reach
back over ``T - 1`` positions, so the task isolates the path between distant positions.

:class:`LastStepReader` reads the sequence with one recurrent layer (an Elman network,
``torch.nn.RNN``) or one self-attention layer (the query of the last position attends to every
position, which carries a learned position vector), then classifies from the last position.
:func:`input_gradient_norms` measures ``|| d loss / d e_s ||``, the gradient that reaches the
embedding ``e_s`` of each position: through a recurrence it is a product of ``T - s``
Jacobians, through self-attention one (the chapter's eq-sa-path-rnn and eq-sa-path-att).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from seqlearn.attention import MultiHeadAttention
from seqlearn.data.vocab import Vocab, vocab_size
from seqlearn.validate import (check_dtypes_agree, check_int, check_shape, check_tensor,
                               check_tokens)

READERS = ("rnn", "attention")


def recall_batch(B: int, T: int, vocab: int, generator: torch.Generator) -> tuple[Tensor, Tensor]:
    """``B`` sequences of ``T`` uniform tokens in ``0..vocab-1`` and their first tokens.

    -> (tokens (B, T) long, target (B,) long) with ``target = tokens[:, 0]``.
    """
    for value, name in ((B, "B"), (T, "T"), (vocab, "vocab")):
        check_int(value, name)
    if not isinstance(generator, torch.Generator):
        raise TypeError(f"generator must be a torch.Generator, got {type(generator).__name__}")
    tokens = torch.randint(0, vocab, (B, T), generator=generator)  # (B, T)
    return tokens, tokens[:, 0].clone()


class LastStepReader(nn.Module):
    """Embed tokens, read them with one layer, classify from the last position.

    ``kind="rnn"``: ``h = RNN(e)`` (tanh Elman, ``hidden`` units), logits
    ``= W h_T + b``. ``kind="attention"``: ``x_s = e_s + p_s`` with a learned position
    vector ``p_s``, one head of :class:`seqlearn.attention.MultiHeadAttention` with the
    query ``x_T`` over all ``x_s``, logits from its output.
    ``forward(tokens (B, T), embedded=None) -> logits (B, vocab)``; pass ``embedded``
    (B, T, d) (from :meth:`embed`) to differentiate with respect to it. ``vocab``: the
    number of token ids, or a :class:`seqlearn.data.Vocab`.
    """

    def __init__(self, kind: str, vocab: int | Vocab, d: int, T: int, *,
                 hidden: int = 64) -> None:
        super().__init__()
        if kind not in READERS:
            raise ValueError(f"kind must be one of {READERS}, got {kind!r}")
        vocab = vocab_size(vocab, "vocab")
        for value, name in ((d, "d"), (T, "T"), (hidden, "hidden")):
            check_int(value, name)
        self.kind, self.T = kind, T
        self.embedding = nn.Embedding(vocab, d)
        if kind == "rnn":
            self.rnn = nn.RNN(d, hidden, batch_first=True)
            self.out = nn.Linear(hidden, vocab)
        else:
            # (T, d) learned positions
            self.position = nn.Parameter(0.5 * torch.randn(T, d))
            self.attention = MultiHeadAttention(d, 1)
            self.out = nn.Linear(d, vocab)

    def embed(self, tokens: Tensor) -> Tensor:
        """tokens (B, T) long -> embeddings (B, T, d)."""
        check_tokens(tokens, "tokens", "B T", self.embedding.num_embeddings)
        check_shape(tokens, "tokens", "B T", sizes={"T": self.T})
        return self.embedding(tokens)

    def forward(self, tokens: Tensor, embedded: Tensor | None = None) -> Tensor:
        if embedded is not None:  # NumPy or another dtype would fail inside torch
            check_tensor(embedded, "embedded")
            check_dtypes_agree(("embedded", embedded),
                               ("the module's parameters", self.embedding.weight))
        e = self.embed(tokens) if embedded is None else embedded  # (B, T, d)
        check_shape(e, "embedded", "B T d", sizes={"T": self.T, "d": self.embedding.embedding_dim})
        if self.kind == "rnn":
            return self.out(self.rnn(e)[0][:, -1])  # (B, vocab)
        x = e + self.position  # (B, T, d)
        read, _ = self.attention(x[:, -1:], x, x)  # (B, 1, d): the last position asks
        return self.out(read[:, 0])  # (B, vocab)


def input_gradient_norms(model: LastStepReader, tokens: Tensor, target: Tensor) -> Tensor:
    r"""Mean over the batch of ``|| d loss / d e_s ||`` for every position ``s``: (T,).

    ``loss`` is the cross-entropy of the batch (summed over sequences, so that each
    sequence's gradient is its own), ``e_s`` the embedding of position ``s``.
    """
    if not isinstance(model, LastStepReader):
        raise TypeError(f"model must be a LastStepReader, got {type(model).__name__}")
    e = model.embed(tokens).detach().requires_grad_(True)  # (B, T, d)
    check_tokens(target, "target", "B", model.embedding.num_embeddings)
    check_shape(target, "target", "B", sizes={"B": e.shape[0]})
    loss = F.cross_entropy(model(tokens, e), target, reduction="sum")
    (grad,) = torch.autograd.grad(loss, e)  # (B, T, d)
    return grad.norm(dim=-1).mean(dim=0)  # (T,)
