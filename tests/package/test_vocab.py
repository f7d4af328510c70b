"""seqlearn.data.vocab: the vocabulary, padded batches and teacher-forcing batches;
every model takes a vocabulary or its size; properties at random sizes (with the date
and string pairs the batches are made of)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

from properties import covers, refuses, seeds
from seqlearn import memory, seq2seq, transformer
from seqlearn.data import (PaddedBatch, Seq2SeqBatch, Vocab, dates, pad_batch,
                           seq2seq_batch, strings, vocab, vocab_size)


words = st.text(alphabet="abcxyz", min_size=0, max_size=8)


def test_specials_come_first_and_encode_adds_none():
    v = Vocab("abc")
    assert len(v) == 6 and (v.pad, v.bos, v.eos) == (0, 1, 2)
    assert v.itos == ("<pad>", "<bos>", "<eos>", "a", "b", "c")
    assert v.encode("cab") == [5, 3, 4] and v.encode(["c", "a"]) == [5, 3]
    assert v.decode([1, 5, 3, 2, 0, 0]) == "ca"  # specials dropped
    assert v.decode(torch.tensor([3, 4])) == v.decode(np.array([3, 4])) == "ab"
    assert "a" in v and "<pad>" in v and "d" not in v
    w = Vocab(["hello", "world"], specials=("P", "S", "E"))
    assert w.encode(["world", "hello"]) == [4, 3] and w.decode([4, 2, 3]) == "worldhello"


@settings(max_examples=30, deadline=None)
@given(words)
def test_decode_inverts_encode(s):
    v = Vocab("abcxyz")
    assert v.decode(v.encode(s)) == s
    assert v.decode([v.bos, *v.encode(s), v.eos, v.pad]) == s


def test_vocab_refuses_bad_input():
    with pytest.raises(ValueError, match="distinct"):
        Vocab("aba")
    with pytest.raises(ValueError, match="distinct"):
        Vocab(["<pad>", "a"])
    with pytest.raises(ValueError, match="three tokens"):
        Vocab("ab", specials=("<pad>", "<eos>"))
    with pytest.raises(TypeError, match="non-empty string"):
        Vocab(["a", 1])
    with pytest.raises(TypeError, match="iterable"):
        Vocab(3)
    v = Vocab("ab")
    with pytest.raises(ValueError, match="not in the vocabulary"):
        v.encode("abc")
    with pytest.raises(ValueError, match="at most"):
        v.decode([5])
    with pytest.raises(ValueError, match="at least 0"):
        v.decode([-1])
    with pytest.raises(TypeError, match="integers"):
        v.decode(torch.tensor([1.0]))
    with pytest.raises(ValueError, match="one-dimensional"):
        v.decode(torch.tensor([[1]]))


@settings(max_examples=30, deadline=None)
@given(st.lists(st.lists(st.integers(0, 9), max_size=6), min_size=1, max_size=5),
       st.integers(0, 3))
def test_pad_batch_equals_a_loop(seqs, extra):
    T = max(len(s) for s in seqs) + extra
    batch = pad_batch(seqs, 7, width=T)
    assert isinstance(batch, PaddedBatch)
    assert batch.tokens.dtype == torch.long and batch.tokens.shape == (len(seqs), T)
    for b, s in enumerate(seqs):
        assert batch.tokens[b].tolist() == s + [7] * (T - len(s))
        assert batch.mask[b].tolist() == [True] * len(s) + [False] * (T - len(s))
        assert int(batch.lengths[b]) == len(s)


def test_pad_batch_refuses_bad_input():
    with pytest.raises(ValueError, match="at least one"):
        pad_batch([], 0)
    with pytest.raises(ValueError, match="width must be at least 3"):
        pad_batch([[1, 2, 3]], 0, width=2)
    with pytest.raises(TypeError, match="list of int ids"):
        pad_batch(["abc"], 0)
    with pytest.raises(TypeError, match="int ids"):
        pad_batch([[1.5]], 0)
    with pytest.raises(TypeError, match="int ids"):
        pad_batch([[[1]]], 0)
    with pytest.raises(ValueError, match="at least 0"):
        pad_batch([[1, -1]], 0)
    assert pad_batch([[], []], 3).tokens.shape == (2, 0)


def test_seq2seq_batch_shifts_the_target_by_one():
    src_v, tgt_v = Vocab("abc"), Vocab("xy")
    b = seq2seq_batch([("ab", "xyx"), ("cab", "y")], src_v, tgt_v, src_width=4)
    assert isinstance(b, Seq2SeqBatch)
    assert b.src.tolist() == [[3, 4, 0, 0], [5, 3, 4, 0]] and b.src_lengths.tolist() == [2, 3]
    assert b.tgt_in.tolist() == [[1, 3, 4, 3], [1, 4, 0, 0]]
    assert b.tgt_out.tolist() == [[3, 4, 3, 2], [4, 2, 0, 0]]
    assert b.tgt_mask.tolist() == [[True] * 4, [True, True, False, False]]
    assert b.src_mask.tolist() == [[True, True, False, False], [True, True, True, False]]
    with pytest.raises(TypeError, match="src_vocab"):
        seq2seq_batch([("a", "x")], "abc", tgt_v)
    with pytest.raises(ValueError, match="non-empty"):
        seq2seq_batch([], src_v, tgt_v)
    with pytest.raises(ValueError, match="source, target"):
        seq2seq_batch([("a", "x", "y")], src_v, tgt_v)


# ---------------------------------------------- properties at random sizes (hypothesis)


@covers("seqlearn.data.vocab.vocab_size")
@given(tokens=st.lists(st.sampled_from("abcdefgh"), unique=True, max_size=8),
       minimum=st.integers(0, 12), bad=st.sampled_from([True, 2.5, "7", None, [1, 2]]))
def test_vocab_size_is_the_length_of_a_vocab_or_the_int_itself(tokens, minimum, bad):
    vocab = Vocab(tokens)
    size = len(tokens) + 3  # the three specials come first
    if size >= minimum:
        assert vocab_size(vocab, "v", minimum) == size == vocab_size(size, "v", minimum)
        assert vocab_size(np.int64(size), "v", minimum) == size
    else:
        assert "v must" in str(refuses(vocab_size, vocab, "v", minimum))
        assert "v must" in str(refuses(vocab_size, size, "v", minimum))
    assert "v must be an int (the vocabulary's size) or a" in str(refuses(vocab_size, bad, "v"))


# ---------------------------------------------- properties at random sizes (hypothesis)


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


# ------------------------------------------- every model takes a vocabulary or its size


def test_every_model_takes_a_vocabulary_or_its_size():
    chars = Vocab("abcd")  # 7 ids
    for make in (
        lambda v: seq2seq.Seq2Seq(v, v, 4, score="dot"),
        lambda v: transformer.Transformer(v, v, 4, 2, 1, 8),
        lambda v: memory.MemN2N(v, 4, 1),
    ):
        torch.manual_seed(0)
        by_vocab = make(chars)
        torch.manual_seed(0)
        by_size = make(len(chars))
        for p, q in zip(by_vocab.parameters(), by_size.parameters()):
            assert torch.equal(p, q)
    model = seq2seq.Seq2Seq(7, 7, 4, score="dot")
    assert (model.pad, model.bos, model.eos) == (chars.pad, chars.bos, chars.eos)
    with pytest.raises(ValueError, match="tgt_vocab must be at least 3"):
        seq2seq.Seq2Seq(7, 2, 4)
    with pytest.raises(
        TypeError, match=r"src_vocab must be an int \(the vocabulary's size\)"
    ):
        seq2seq.Seq2Seq("abcd", chars, 4)


# ------------------------------------ edge cases: ids beyond int64 (issue 31)

@pytest.mark.parametrize("seq", [[2**63], [2**63, 1], [1, 2**64], [-2**63 - 1, 1],
                                 np.array([2**63], dtype=np.uint64)])
def test_pad_batch_refuses_ids_beyond_int64(seq):
    """NumPy would hold these as uint64, float or object; int64 would wrap them."""
    with pytest.raises(
            ValueError, match=r"ids must be in \[0, 2\*\*63 - 1\].*sequences\[0\]"):
        pad_batch([seq], 0)


def test_pad_batch_keeps_the_largest_int64_id_and_uint64_arrays():
    batch = pad_batch([[2**63 - 1], np.array([3, 4], dtype=np.uint64)], 0)
    assert batch.tokens.tolist() == [[2**63 - 1, 0], [3, 4]]
    with pytest.raises(ValueError, match=r"pad must be at most 9223372036854775807"):
        pad_batch([[1]], 2**63)
