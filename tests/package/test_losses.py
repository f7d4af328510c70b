"""seqlearn.losses: the masked cross-entropy against a loop over the real tokens, exact
match up to the first ``<eos>``, the batch checks field by field; the wording of each
error."""

from __future__ import annotations

import pytest
import torch

from seqlearn import seq2seq, transformer
from seqlearn.data import Seq2SeqBatch, Vocab
from seqlearn.losses import exact_match, masked_cross_entropy
from toy_seq2seq import toy_batch, toy_model


F64 = torch.float64


def test_masked_cross_entropy_equals_a_loop():
    g = torch.Generator().manual_seed(0)
    logits = torch.randn(3, 4, 5, dtype=F64, generator=g)
    target = torch.randint(0, 5, (3, 4), generator=g)
    mask = torch.tensor([[1, 1, 0, 0], [1, 1, 1, 1], [1, 0, 0, 0]], dtype=torch.bool)
    terms = [-torch.log_softmax(logits[b, t], -1)[target[b, t]]
             for b in range(3) for t in range(4) if mask[b, t]]
    torch.testing.assert_close(masked_cross_entropy(logits, target, mask),
                               torch.stack(terms).mean())
    logits[~mask] = float("nan")  # padded logits never reach the loss
    assert torch.isfinite(masked_cross_entropy(logits, target, mask))
    with pytest.raises(TypeError, match="bool"):
        masked_cross_entropy(logits, target, mask.long())
    with pytest.raises(ValueError, match="at least one token"):
        masked_cross_entropy(logits, target, torch.zeros_like(mask))
    with pytest.raises(ValueError, match="ids in"):
        masked_cross_entropy(logits, target + 5, mask)
    with pytest.raises(ValueError, match="shape"):
        masked_cross_entropy(logits, target[:, :3], mask)


@pytest.mark.parametrize("eps", [0.0, 0.1, 0.5, 1.0])
def test_label_smoothing_equals_a_loop_and_torch(eps):
    """(1 - eps) (-log p_y) + eps * mean_v (-log p_v) per real token, as torch's
    cross_entropy(label_smoothing=eps); eps = 0 is the plain loss."""
    g = torch.Generator().manual_seed(1)
    logits = torch.randn(3, 4, 5, dtype=F64, generator=g)
    target = torch.randint(0, 5, (3, 4), generator=g)
    mask = torch.tensor([[1, 1, 0, 0], [1, 1, 1, 1], [1, 0, 1, 0]], dtype=torch.bool)
    terms = []
    for b in range(3):
        for t in range(4):
            if mask[b, t]:
                p = torch.exp(logits[b, t]) / torch.exp(logits[b, t]).sum()
                q = torch.full((5,), eps / 5, dtype=F64)
                q[target[b, t]] += 1 - eps  # the smoothed target distribution
                terms.append(-(q * p.log()).sum())
    loss = masked_cross_entropy(logits, target, mask, label_smoothing=eps)
    torch.testing.assert_close(loss, torch.stack(terms).mean(), rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(loss, torch.nn.functional.cross_entropy(
        logits[mask], target[mask], label_smoothing=eps), rtol=1e-12, atol=1e-12)
    if eps == 0:
        assert torch.equal(loss, masked_cross_entropy(logits, target, mask))


def test_exact_match_cuts_at_the_first_eos():
    eos = 2
    target = torch.tensor([[5, 6, 2, 0], [5, 2, 0, 0], [5, 6, 7, 2], [4, 2, 0, 0]])
    tokens = torch.tensor([[5, 6, 2], [5, 2, 9], [5, 6, 7], [4, 3, 2]])
    assert exact_match(tokens, target, eos).tolist() == [True, True, False, False]
    assert exact_match(target, target, eos).all()
    with pytest.raises(TypeError, match="LongTensor"):
        exact_match(tokens.int(), target, eos)
    with pytest.raises(ValueError, match="shape"):
        exact_match(tokens[:2], target, eos)


# ------------------------------------------------------------ the wording of each error


@pytest.mark.parametrize("call, error, match", [
    (lambda m, b: masked_cross_entropy(torch.zeros(3, 2, 6), b.tgt_out[:, :2],
                                       torch.ones(3, 2)), TypeError,
     r"^mask must be a bool tensor \(True = token\), got dtype torch\.float32$"),
    (lambda m, b: masked_cross_entropy(torch.zeros(3, 2, 6), b.tgt_out[:, :2],
                                       torch.zeros(3, 2, dtype=torch.bool)), ValueError,
     r"^mask must mark at least one token, got none$"),
    (lambda m, b: masked_cross_entropy(torch.zeros(3, 2, 6), b.tgt_out[:, :2],
                                       torch.ones(3, 3, dtype=torch.bool)), ValueError,
     r"^mask must have shape \(B=3, T=2\)"),
    (lambda m, b: masked_cross_entropy(torch.zeros(3, 2, 6), b.tgt_out[:2, :2],
                                       torch.ones(3, 2, dtype=torch.bool)), ValueError,
     r"^target must have shape \(B=3, T=2\)"),
    (lambda m, b: masked_cross_entropy(torch.zeros(3, 2, 6).long(), b.tgt_out[:, :2],
                                       torch.ones(3, 2, dtype=torch.bool)), TypeError,
     r"^logits must be a floating-point tensor"),
    (lambda m, b: masked_cross_entropy(torch.zeros(3, 2), b.tgt_out[:, :2],
                                       torch.ones(3, 2, dtype=torch.bool)), ValueError,
     r"^logits must have shape \(B, T, V\)"),
    (lambda m, b: masked_cross_entropy(torch.zeros(3, 2, 6), b.tgt_out[:, :2],
                                       torch.ones(3, 2, dtype=torch.bool),
                                       label_smoothing=-0.1), ValueError,
     r"^label_smoothing must be at least 0\.0, got -0\.1$"),
    (lambda m, b: masked_cross_entropy(torch.zeros(3, 2, 6), b.tgt_out[:, :2],
                                       torch.ones(3, 2, dtype=torch.bool),
                                       label_smoothing=1.5), ValueError,
     r"^label_smoothing must be at most 1, got 1\.5$"),
    (lambda m, b: masked_cross_entropy(torch.zeros(3, 2, 6), b.tgt_out[:, :2],
                                       torch.ones(3, 2, dtype=torch.bool),
                                       label_smoothing="0.1"), TypeError,
     r"^label_smoothing must be a real number, got str$"),
    (lambda m, b: exact_match(b.tgt_out.int(), b.tgt_out, 2), TypeError,
     r"^tokens must be a LongTensor, got dtype torch\.int32$"),
    (lambda m, b: exact_match(b.tgt_out, b.tgt_out.int(), 2), TypeError,
     r"^target must be a LongTensor, got dtype torch\.int32$"),
    (lambda m, b: exact_match(b.tgt_out[0], b.tgt_out, 2), ValueError,
     r"^tokens must have shape \(B, T\), got \(\d+,\)$"),
    (lambda m, b: exact_match(b.tgt_out, b.tgt_out[:2], 2), ValueError,
     r"^target must have shape \(B=3, T\)"),
    (lambda m, b: exact_match(b.tgt_out, b.tgt_out, -1), ValueError, r"^eos must be at least 0"),
])
def test_loss_and_exact_match_error_messages(call, error, match):
    model, batch = toy_model(score="dot"), toy_batch()
    with pytest.raises(error, match=match):
        call(model, batch)


# ---------------------------- batches checked field by field, before a model reads them


def test_seq2seq_batches_are_checked_field_by_field():
    chars = Vocab("abcd")
    model = seq2seq.Seq2Seq(chars, chars, 4)
    src = torch.tensor([[3, 4, 5]])
    batch = Seq2SeqBatch(
        src,
        torch.tensor([3]),
        src > 0,
        torch.tensor([[1, 3]]),
        torch.tensor([[3, 2]]),
        torch.ones(1, 2, dtype=torch.bool),
    )
    assert seq2seq.greedy_exact_match(model, batch).shape == (1,)
    with pytest.raises(ValueError, match=r"batch\.tgt_out must hold ids in \[0, 7\)"):
        seq2seq.greedy_exact_match(
            model, batch._replace(tgt_out=torch.tensor([[3, 9]]))
        )
    with pytest.raises(TypeError, match=r"batch\.tgt_mask must be a bool tensor"):
        transformer.transformer_loss(
            transformer.Transformer(chars, chars, 4, 2, 1, 8),
            batch._replace(tgt_mask=batch.tgt_mask.long()),
        )
