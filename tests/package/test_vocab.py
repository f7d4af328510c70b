"""seqlearn.data.vocab: the vocabulary, padded batches and teacher-forcing batches."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from seqlearn.data import PaddedBatch, Seq2SeqBatch, Vocab, pad_batch, seq2seq_batch

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
