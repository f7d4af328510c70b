"""Property tests of the seq2seq data (vocabulary, batches, dates, strings) and seqlearn.seq2seq."""

import numpy as np
import torch
from hypothesis import given, strategies as st

from properties import covers, not_bools, refuses, seeds
from seqlearn.data import dates, strings, vocab
from seqlearn import seq2seq

SRC, TGT = vocab.Vocab("abcd"), vocab.Vocab("ab")


@covers("seqlearn.data.vocab.Vocab", "seqlearn.data.vocab.PaddedBatch",
        "seqlearn.data.vocab.pad_batch", "seqlearn.data.vocab.Seq2SeqBatch",
        "seqlearn.data.vocab.seq2seq_batch", "seqlearn.data.strings.string_pairs",
        "seqlearn.data.dates.date_pairs")
@given(seed=seeds, n=st.integers(1, 5), lo=st.integers(1, 4), span=st.integers(0, 3),
       extra=st.integers(0, 2))
def test_pairs_encode_pad_and_decode_back(seed, n, lo, span, extra):
    rng = np.random.default_rng(seed)
    pairs = strings.string_pairs(n, rng, min_len=lo, max_len=lo + span, alphabet="abcd")
    assert all(t == s[::-1] and lo <= len(s) <= lo + span for s, t in pairs)
    batch = vocab.seq2seq_batch(pairs, SRC, SRC, src_width=lo + span + extra)
    assert isinstance(batch, vocab.Seq2SeqBatch)
    for b, (s, t) in enumerate(pairs):  # the loop reference: row b is the pair, then padding
        assert SRC.decode(batch.src[b]) == s and SRC.decode(batch.tgt_out[b]) == t
        assert batch.tgt_in[b, 0] == SRC.bos and batch.tgt_out[b, len(t)] == SRC.eos
        assert int(batch.src_mask[b].sum()) == int(batch.src_lengths[b]) == len(s)
    padded = vocab.pad_batch([SRC.encode(s) for s, _ in pairs], SRC.pad)
    assert isinstance(padded, vocab.PaddedBatch)
    assert torch.equal(padded.tokens, batch.src[:, : padded.tokens.shape[1]])
    for source, target in dates.date_pairs(n, rng):
        assert len(target) == 10 and target[4] == target[7] == "-"
    refuses(vocab.Vocab, "abca")
    refuses(SRC.encode, "abz")
    refuses(vocab.pad_batch, [], 0)
    refuses(vocab.seq2seq_batch, pairs, "abcd", SRC)
    refuses(strings.string_pairs, n, rng, min_len=lo + 1, max_len=lo)
    refuses(dates.date_pairs, 0, rng)
    refuses(dates.date_pairs, n, rng, formats=["nope"])


@covers("seqlearn.seq2seq.Seq2Seq", "seqlearn.seq2seq.masked_cross_entropy",
        "seqlearn.seq2seq.exact_match", "seqlearn.seq2seq.greedy_exact_match",
        "seqlearn.seq2seq.fit_seq2seq")
@given(seed=seeds, score=st.sampled_from([None, *seq2seq.SCORES]),
       init=st.sampled_from(seq2seq.INITS), flag=not_bools)
def test_seq2seq_shapes_masks_and_loss(seed, score, init, flag):
    torch.manual_seed(seed % 1000)
    rng = np.random.default_rng(seed)
    model = seq2seq.Seq2Seq(SRC, TGT, 4, score=score, init=init, embedding=2).double()
    pairs = [(s, t[: 1 + i % 2]) for i, (s, t) in
             enumerate(strings.string_pairs(3, rng, min_len=1, max_len=4, alphabet="ab"))]
    batch = vocab.seq2seq_batch(pairs, SRC, TGT)
    logits, weights = model(batch.src, batch.src_lengths, batch.tgt_in)
    B, S = batch.src.shape
    assert logits.shape == (B, batch.tgt_in.shape[1], len(TGT))
    if score is None:
        assert weights is None
    else:  # each row is a distribution over the real source positions only
        torch.testing.assert_close(weights.sum(-1), torch.ones(B, weights.shape[1], dtype=weights.dtype))
        assert bool((weights.masked_select(~batch.src_mask[:, None, :]) == 0).all())
    loss = seq2seq.masked_cross_entropy(logits, batch.tgt_out, batch.tgt_mask)
    ref = torch.nn.functional.cross_entropy(logits.flatten(0, 1), batch.tgt_out.flatten(),
                                            ignore_index=TGT.pad)  # torch's padding-aware mean
    torch.testing.assert_close(loss, ref)
    ok = seq2seq.greedy_exact_match(model, batch)
    tokens, _ = model.greedy_decode(batch.src, batch.src_lengths, batch.tgt_out.shape[1])
    assert ok.tolist() == [TGT.decode(tokens[b][: (tokens[b] == TGT.eos).nonzero()[0, 0] + 1])
                           == t if bool((tokens[b] == TGT.eos).any()) else False
                           for b, (_, t) in enumerate(pairs)]
    assert bool(seq2seq.exact_match(batch.tgt_out, batch.tgt_out, TGT.eos).all())
    losses = seq2seq.fit_seq2seq(model, lambda step: batch, 1)
    assert len(losses) == 1 and np.isfinite(losses[0])
    refuses(seq2seq.Seq2Seq, SRC, TGT, 4, bidirectional=flag)
    refuses(model, batch.src.float(), batch.src_lengths, batch.tgt_in)
    refuses(model, batch.src, batch.src_lengths + S, batch.tgt_in)
    refuses(seq2seq.masked_cross_entropy, logits, batch.tgt_out, batch.tgt_mask.long())
    refuses(seq2seq.fit_seq2seq, model, lambda step: batch, 1, lr=-1.0)
    refuses(seq2seq.fit_seq2seq, model, lambda step: batch, 1, decay=flag)
    refuses(seq2seq.fit_seq2seq, model, lambda step: batch.src, 1)
