"""seqlearn.long_range: the recall batch, both readers against hand-written forward
passes, and the input-gradient norms against autograd on the whole batch; properties at
random sizes."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, strategies as st

from properties import covers, refuses, seeds, sizes
from seqlearn import long_range
from seqlearn.long_range import LastStepReader, input_gradient_norms, recall_batch


F64 = torch.float64


def test_recall_batch_targets_the_first_token():
    tokens, target = recall_batch(50, 7, 5, torch.Generator().manual_seed(0))
    assert tokens.shape == (50, 7) and tokens.dtype == torch.long
    assert torch.equal(target, tokens[:, 0]) and int(tokens.min()) >= 0 and int(tokens.max()) <= 4
    again, _ = recall_batch(50, 7, 5, torch.Generator().manual_seed(0))
    assert torch.equal(tokens, again)


def test_readers_by_hand():
    torch.manual_seed(0)
    tokens, _ = recall_batch(3, 6, 5, torch.Generator().manual_seed(1))
    rnn = LastStepReader("rnn", 5, 4, 6, hidden=7).double()
    e = rnn.embedding(tokens)
    h = torch.zeros(3, 7, dtype=F64)
    for t in range(6):  # h_t = tanh(W_ih e_t + b_ih + W_hh h_{t-1} + b_hh)
        h = torch.tanh(e[:, t] @ rnn.rnn.weight_ih_l0.T + rnn.rnn.bias_ih_l0
                       + h @ rnn.rnn.weight_hh_l0.T + rnn.rnn.bias_hh_l0)
    torch.testing.assert_close(rnn(tokens), rnn.out(h))
    att = LastStepReader("attention", 5, 4, 6).double()
    x = att.embedding(tokens) + att.position  # (B, T, d)
    a = att.attention
    q, k, v = a.q_proj(x[:, -1]), a.k_proj(x), a.v_proj(x)  # (B, d), (B, T, d), (B, T, d)
    w = torch.softmax((k @ q[:, :, None])[..., 0] / math.sqrt(4), dim=-1)  # (B, T)
    read = a.out_proj((w[:, :, None] * v).sum(1))
    torch.testing.assert_close(att(tokens), att.out(read))


@pytest.mark.parametrize("kind", ["rnn", "attention"])
def test_input_gradient_norms_equal_autograd(kind):
    torch.manual_seed(2)
    model = LastStepReader(kind, 4, 3, 5).double()
    tokens, target = recall_batch(6, 5, 4, torch.Generator().manual_seed(3))
    norms = input_gradient_norms(model, tokens, target)
    rows = []
    for b in range(6):  # each sequence alone
        e = model.embed(tokens[b:b + 1]).detach().requires_grad_(True)
        F.cross_entropy(model(tokens[b:b + 1], e), target[b:b + 1]).backward()
        rows.append(e.grad[0].norm(dim=-1))
    torch.testing.assert_close(norms, torch.stack(rows).mean(0))


def test_refuses_bad_input():
    model = LastStepReader("rnn", 4, 3, 5)
    with pytest.raises(ValueError, match="kind"):
        LastStepReader("lstm", 4, 3, 5)
    with pytest.raises(ValueError, match="tokens must have shape"):
        model(torch.zeros(2, 4, dtype=torch.long))
    with pytest.raises(TypeError, match="LongTensor"):
        model(torch.zeros(2, 5))
    with pytest.raises(TypeError, match="generator"):
        recall_batch(2, 3, 4, 0)
    with pytest.raises(ValueError, match="target must have shape"):
        input_gradient_norms(model, torch.zeros(2, 5, dtype=torch.long), torch.zeros(3, dtype=torch.long))
    with pytest.raises(TypeError, match="LastStepReader"):
        input_gradient_norms(torch.nn.Linear(2, 2), None, None)


# ---------------------------------------------- properties at random sizes (hypothesis)


@covers("seqlearn.long_range.recall_batch", "seqlearn.long_range.LastStepReader",
        "seqlearn.long_range.input_gradient_norms")
@given(seed=seeds, B=sizes, T=sizes, vocab=st.integers(2, 5), kind=st.sampled_from(["rnn", "attention"]))
def test_recall_readers_and_input_gradients(seed, B, T, vocab, kind):
    tokens, target = long_range.recall_batch(B, T, vocab, torch.Generator().manual_seed(seed))
    assert torch.equal(target, tokens[:, 0])
    torch.manual_seed(seed)
    model = long_range.LastStepReader(kind, vocab, 3, T, hidden=4).double()
    logits = model(tokens)
    assert logits.shape == (B, vocab)
    e = model.embed(tokens).detach().requires_grad_(True)  # reference: autograd per position
    torch.nn.functional.cross_entropy(model(tokens, e), target, reduction="sum").backward()
    torch.testing.assert_close(long_range.input_gradient_norms(model, tokens, target),
                               e.grad.norm(dim=-1).mean(0))
    refuses(long_range.recall_batch, B, T, vocab, seed)
    refuses(long_range.LastStepReader, kind.upper(), vocab, 3, T)
    refuses(model, tokens[:, :0] if T > 1 else tokens.float())
    refuses(long_range.input_gradient_norms, model, tokens, target + vocab)


def test_forward_refuses_a_numpy_embedding_or_another_dtype():
    """A NumPy ``embedded`` failed inside torch (issue 31)."""
    model = LastStepReader("rnn", 5, 3, 4)
    tokens = torch.zeros(2, 4, dtype=torch.long)
    e = model.embed(tokens).detach()
    with pytest.raises(TypeError, match="embedded must be a torch.Tensor, got ndarray"):
        model(tokens, e.numpy())
    with pytest.raises(
            TypeError, match="embedded and the module's parameters must have the "
                             "same dtype"):
        model(tokens, e.double())
    assert torch.equal(model(tokens, e), model(tokens))
