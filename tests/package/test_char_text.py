"""seqlearn.char_text: the reference text, its split, the vocabulary, windows and
features; properties at random sizes."""

import re
import zlib

import numpy as np
import pytest
import torch
from hypothesis import given, strategies as st

from properties import covers, refuses, seeds, sizes
from seqlearn import char_text
from seqlearn.char_text import (CharVocab, consecutive_windows, indentation,
                                inside_quotes, line_position, random_windows,
                                split_reference_text)


def test_reference_topics_are_the_frozen_copy_on_every_python():
    """The shipped file, byte for byte, and the text the chapter reads: the same whatever
    Python runs the test (3.11.2 and 3.12 ship other topics in pydoc_data)."""
    import hashlib
    from importlib import resources

    raw = resources.files("seqlearn").joinpath(
        "corpus", "python_reference_topics.json.gz").read_bytes()
    assert hashlib.sha256(raw).hexdigest() == (
        "77fb6bd567b4f2a4625d12605b0bf6c1b7feae39abc9c64a7c1df776c53ca155")
    found = char_text.reference_topics()
    assert list(found) == sorted(found) and len(found) == 79
    assert sum(map(len, found.values())) == 464_970
    assert found["for"].startswith('The "for" statement')
    split = split_reference_text()
    assert (len(split.train), len(split.held_out)) == (422_297, 42_750)
    fingerprint = char_text.text_fingerprint(split.train + split.held_out)
    assert fingerprint == char_text.REFERENCE_FINGERPRINT == "219be7960ea7"


def test_reference_topics_do_not_read_the_running_pythons_pydoc_data(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "pydoc_data.topics", None)  # import would fail
    assert len(char_text.reference_topics()) == 79


def test_split_by_crc32_of_the_name_brute_force():
    topics = {f"topic{i}": f"text {i}\n" for i in range(40)}
    split = split_reference_text(topics, every=4)
    held = [n for n in sorted(topics) if zlib.crc32(n.encode()) % 4 == 0]
    train = [n for n in sorted(topics) if zlib.crc32(n.encode()) % 4 != 0]
    assert split.held_out_topics == tuple(held) and split.train_topics == tuple(train)
    assert split.held_out == "\n".join(topics[n] for n in held)
    assert split.train == "\n".join(topics[n] for n in train)
    # the assignment of a topic does not depend on the others
    fewer = {n: t for n, t in topics.items() if n not in train[:5]}
    assert split_reference_text(fewer, every=4).held_out_topics == tuple(held)


def test_split_of_the_reference_is_deterministic_and_complete():
    split = split_reference_text()
    assert split == split_reference_text()
    names = set(split.train_topics) | set(split.held_out_topics)
    assert names == set(char_text.reference_topics())
    assert not set(split.train_topics) & set(split.held_out_topics)
    share = len(split.held_out) / (len(split.train) + len(split.held_out))
    assert 0.03 < share < 0.3


def test_split_refuses_bad_arguments():
    with pytest.raises(TypeError, match="topics must be a mapping"):
        split_reference_text(["a"])
    with pytest.raises(TypeError, match="topics must map strings"):
        split_reference_text({"a": 1})
    with pytest.raises(ValueError, match="every must be at least 2"):
        split_reference_text({"a": "x"}, every=1)
    with pytest.raises(ValueError, match="both sides"):
        split_reference_text({"a": "x"}, every=2)


def test_fingerprint_is_the_sha256_prefix():
    import hashlib

    assert char_text.text_fingerprint("abc") == hashlib.sha256(b"abc").hexdigest()[:12]
    with pytest.raises(TypeError, match="text must be a str"):
        char_text.text_fingerprint(b"abc")


def test_vocab_round_trip_sorted_ids_and_errors():
    v = CharVocab("hello world\n")
    assert v.itos == tuple(sorted(set("hello world\n")))
    assert len(v) == 9 and "h" in v and "z" not in v
    ids = v.encode("hello")
    assert ids.dtype == torch.long and ids.tolist() == [v.stoi[c] for c in "hello"]
    assert v.decode(ids) == "hello" and v.decode(ids.tolist()) == "hello"
    assert v.decode(torch.zeros(0, dtype=torch.long)) == ""
    with pytest.raises(ValueError, match="not in the vocabulary"):
        v.encode("hez")
    with pytest.raises(TypeError, match="text must be a str"):
        CharVocab(["a"])
    with pytest.raises(ValueError, match="at least one character"):
        CharVocab("")
    with pytest.raises(ValueError, match=r"ids must lie in \[0, 9\)"):
        v.decode(torch.tensor([9]))
    with pytest.raises(TypeError, match="ids must hold integers"):
        v.decode(torch.tensor([1.0]))
    with pytest.raises(ValueError, match="one-dimensional"):
        v.decode(torch.zeros(2, 2, dtype=torch.long))


def test_random_windows_are_slices_shifted_by_one():
    ids = torch.arange(50)
    x, y = random_windows(ids, 8, 6, torch.Generator().manual_seed(0))
    assert x.shape == y.shape == (8, 6)
    for row_x, row_y in zip(x, y):
        s = int(row_x[0])
        assert row_x.tolist() == list(range(s, s + 6))
        assert row_y.tolist() == list(range(s + 1, s + 7))
    # every start 0 .. N - L - 1 can be drawn, and no other
    x, _ = random_windows(ids, 4000, 6, torch.Generator().manual_seed(1))
    assert set(x[:, 0].tolist()) == set(range(0, 44))
    same = random_windows(ids, 8, 6, torch.Generator().manual_seed(0))
    torch.testing.assert_close(same[0], random_windows(ids, 8, 6,
                                                       torch.Generator().manual_seed(0))[0])


def test_random_windows_refuse_bad_arguments():
    ids = torch.arange(10)
    with pytest.raises(ValueError, match="at least length"):
        random_windows(ids, 2, 10)
    with pytest.raises(TypeError, match="LongTensor"):
        random_windows(ids.int(), 2, 3)
    with pytest.raises(ValueError, match=r"ids must have shape \(N\)"):
        random_windows(ids[None], 2, 3)
    with pytest.raises(TypeError, match="generator"):
        random_windows(ids, 2, 3, generator=0)
    with pytest.raises(ValueError, match="batch_size must be positive"):
        random_windows(ids, 0, 3)


@pytest.mark.parametrize("N, L", [(2, 1), (10, 3), (10, 9), (10, 20), (97, 8)])
def test_consecutive_windows_predict_every_character_once(N, L):
    ids = torch.arange(100, 100 + N)
    x, y = consecutive_windows(ids, L)
    assert x.shape == y.shape and x.shape[1] == L
    keep = y != -1
    assert y[keep].tolist() == ids[1:].tolist()  # each target once, in order
    assert x[keep].tolist() == ids[:-1].tolist()  # read right before its target
    assert int(keep.sum()) == N - 1 and x.shape[0] == -(-(N - 1) // L)
    with pytest.raises(ValueError, match="at least 2"):
        consecutive_windows(ids[:1], L)


def _line_position_brute(text):
    return [len(text[: t].split("\n")[-1]) for t in range(len(text))]


def _quotes_brute(text):
    out = []
    for t in range(len(text)):
        paragraph = re.split(r"\n\n", text[: t + 1])[-1]
        out.append(paragraph.count('"') % 2)
    return out


def _indent_brute(text):
    out = []
    for t in range(len(text)):
        start = text.rfind("\n", 0, t) + 1  # a newline belongs to the line it ends
        end = text.find("\n", t)
        line = text[start: len(text) if end < 0 else end]
        out.append(len(line) - len(line.lstrip(" ")) if line.strip(" ") else 0)
    return out


@pytest.mark.parametrize("seed", range(5))
def test_features_equal_brute_force(seed):
    rng = np.random.default_rng(seed)
    text = "".join(rng.choice(list('ab  "\n'), size=200, p=[.3, .2, .2, .1, .1, .1]))
    assert line_position(text).tolist() == _line_position_brute(text)
    assert inside_quotes(text).tolist() == _quotes_brute(text)
    assert indentation(text).tolist() == _indent_brute(text)


def test_features_by_hand():
    text = 'a "bc" d\n   x = "y\n\nz"'
    assert inside_quotes(text).tolist() == [0, 0, 1, 1, 1, 0, 0, 0, 0,
                                            0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 0, 0, 1]
    assert indentation(text).tolist() == [0] * 9 + [3] * 10 + [0] * 3
    assert line_position(text).tolist() == list(range(9)) + list(range(10)) + [0, 0, 1]
    for feature in (line_position, inside_quotes, indentation):
        assert feature("").shape == (0,)
        with pytest.raises(TypeError, match="text must be a str"):
            feature(None)


# ---------------------------------------------- properties at random sizes (hypothesis)


texts = st.text(alphabet='ab "\n', max_size=60)


@covers("seqlearn.char_text.reference_topics", "seqlearn.char_text.split_reference_text",
        "seqlearn.char_text.TextSplit", "seqlearn.char_text.text_fingerprint")
@given(names=st.lists(st.text("abcdefgh-", min_size=1, max_size=8), min_size=2, max_size=12,
                      unique=True), every=st.integers(2, 5))
def test_split_partitions_the_topics(names, every):
    topics = {n: f"{n} text\n" for n in names}
    try:
        split = char_text.split_reference_text(topics, every=every)
    except ValueError as error:  # one side would be empty: the split names it
        assert "both sides" in str(error)
        return
    assert isinstance(split, char_text.TextSplit)
    assert sorted(split.train_topics + split.held_out_topics) == sorted(names)
    # each part joins its topics with one newline between them
    assert len(split.train) + len(split.held_out) == sum(map(len, topics.values())) + \
        len(names) - 2
    assert char_text.text_fingerprint(split.train) != char_text.text_fingerprint(
        split.train + "x")
    refuses(char_text.split_reference_text, topics, every=1)
    refuses(char_text.text_fingerprint, 3)
    assert "for" in char_text.reference_topics()


@covers("seqlearn.char_text.CharVocab", "seqlearn.char_text.random_windows",
        "seqlearn.char_text.consecutive_windows")
@given(text=st.text(min_size=2, max_size=80), seed=seeds, B=sizes, L=st.integers(1, 6))
def test_vocab_round_trips_and_windows_cover_the_text(text, seed, B, L):
    vocab = char_text.CharVocab(text)
    ids = vocab.encode(text)
    assert vocab.decode(ids) == text and len(vocab) == len(set(text))
    x, y = char_text.consecutive_windows(ids, L)
    assert y[y != -1].tolist() == ids[1:].tolist()
    if len(text) > L:
        xb, yb = char_text.random_windows(ids, B, L, torch.Generator().manual_seed(seed))
        assert torch.equal(xb[:, 1:], yb[:, :-1])
    else:
        refuses(char_text.random_windows, ids, B, L)
    refuses(vocab.decode, torch.tensor([len(vocab)]))
    refuses(char_text.consecutive_windows, ids.float(), L)


@covers("seqlearn.char_text.line_position", "seqlearn.char_text.inside_quotes",
        "seqlearn.char_text.indentation")
@given(text=texts)
def test_features_follow_their_definitions(text):
    col, quote, indent = (f(text) for f in (char_text.line_position, char_text.inside_quotes,
                                            char_text.indentation))
    for t, char in enumerate(text):
        line_start = text.rfind("\n", 0, t) + 1
        assert col[t] == t - line_start
        paragraph_start = text.rfind("\n\n", 0, t + 1)
        paragraph = text[paragraph_start + 2 if paragraph_start >= 0 else 0: t + 1]
        assert quote[t] == paragraph.count('"') % 2
        end = text.find("\n", t)
        line = text[line_start: len(text) if end < 0 else end]
        assert indent[t] == (len(line) - len(line.lstrip(" ")) if line.strip(" ") else 0)
    refuses(char_text.indentation, None)
