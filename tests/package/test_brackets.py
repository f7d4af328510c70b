"""seqlearn.data.brackets: the generator keeps its promises (balance, depth, length,
hard negatives); properties at random sizes."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

from properties import covers, not_bools, refuses, seeds
from seqlearn.data import (BRACKET_VOCAB, balanced_string, bracket_dataset,
                           bracket_strings, brackets, encode_brackets, hard_negative,
                           is_balanced, nesting_depth, running_count)


SEEDS = st.integers(0, 2**32 - 1)


def brute_force_balanced(s: str) -> bool:
    """Independent reference: delete "()" pairs (ignoring fillers) until nothing changes."""
    t = s.replace("x", "")
    while "()" in t:
        t = t.replace("()", "")
    return t == ""


def test_predicates_on_known_strings():
    assert running_count("(()x)").tolist() == [1, 2, 1, 1, 0]
    assert [is_balanced(s) for s in ["", "()", "(())()", "x(x)x", ")(", "(()", "())(()"]] == \
        [True, True, True, True, False, False, False]
    assert [nesting_depth(s) for s in ["", "xx", "()()", "((()))", "(()())", "))"]] == [0, 0, 1, 3, 2, 0]


@settings(max_examples=60, deadline=None)
@given(SEEDS, st.integers(1, 40), st.integers(1, 6), st.sampled_from([0.0, 0.25, 0.5]))
def test_balanced_strings(seed, half, max_depth, fill):
    rng = np.random.default_rng(seed)
    length = 2 * half + (1 if fill and seed % 2 else 0)
    if fill and length * (1 - fill) < 2.5:
        length += 4
    s = balanced_string(length, rng, max_depth=max_depth, fill=fill)
    assert len(s) == length
    assert set(s) <= set(BRACKET_VOCAB)
    assert is_balanced(s) and brute_force_balanced(s)
    assert 1 <= nesting_depth(s) <= max_depth
    assert abs(s.count("x") - fill * length) <= 1.5  # rounded, then made even


@settings(max_examples=60, deadline=None)
@given(SEEDS, st.integers(2, 40), st.integers(1, 6), st.sampled_from([0.0, 0.3]), st.sampled_from(["flip", "swap"]))
def test_hard_negatives(seed, half, max_depth, fill, kind):
    rng = np.random.default_rng(seed)
    s = balanced_string(2 * half + 4 * (fill > 0), rng, max_depth=max_depth, fill=fill)
    u = hard_negative(s, rng, kind=kind, max_depth=max_depth)
    assert not is_balanced(u) and not brute_force_balanced(u)
    assert len(u) == len(s) and nesting_depth(u) <= max_depth
    assert [k for k, ch in enumerate(u) if ch == "x"] == [k for k, ch in enumerate(s) if ch == "x"]
    changed = [k for k in range(len(s)) if s[k] != u[k]]
    if len(changed) == 2:  # a swap: same numbers of "(" and ")", the count dips below zero
        assert sorted(u[k] for k in changed) == ["(", ")"]
        assert u.count("(") == u.count(")") and running_count(u).min() < 0
    else:                  # a flip: the final count is +-2
        assert len(changed) == 1 and abs(int(running_count(u)[-1])) == 2
    brackets_s, brackets_u = s.replace("x", ""), u.replace("x", "")
    assert (brackets_u[0], brackets_u[-1]) == (brackets_s[0], brackets_s[-1]) == ("(", ")")


def test_swap_is_used_when_possible_and_flip_otherwise():
    rng = np.random.default_rng(0)
    assert hard_negative("(())", rng, kind="swap").count("(") == 1           # no inner swap: a flip
    kinds = Counter(hard_negative("()()()()", rng, kind="swap").count("(") for _ in range(50))
    assert kinds == {4: 50}


def test_balanced_words_are_uniform():
    """All 4 balanced words with 6 brackets and depth <= 2 come out equally often."""
    rng = np.random.default_rng(0)
    counts = Counter(balanced_string(6, rng, max_depth=2) for _ in range(4000))
    assert set(counts) == {"()()()", "(())()", "()(())", "(()())"}
    assert all(abs(c / 4000 - 0.25) < 0.03 for c in counts.values())


def test_depth_bound_is_reached():
    rng = np.random.default_rng(1)
    depths = {nesting_depth(balanced_string(30, rng, max_depth=4)) for _ in range(200)}
    assert max(depths) == 4 and min(depths) >= 1


def test_dataset_labels_and_encoding():
    rng = np.random.default_rng(0)
    strings, labels = bracket_strings(101, 12, rng, max_depth=3)
    assert labels.sum() in (50, 51) and labels.dtype == np.int64
    assert all(is_balanced(s) == bool(y) for s, y in zip(strings, labels))
    x = encode_brackets(strings)                                      # (B, T, 3)
    assert x.shape == (101, 12, 3) and x.dtype == torch.float32
    assert torch.equal(x.sum(-1), torch.ones(101, 12))
    index = encode_brackets(strings, onehot=False)                    # (B, T)
    assert index.dtype == torch.int64
    assert ["".join(BRACKET_VOCAB[v] for v in row) for row in index.tolist()] == strings
    assert torch.equal(x.argmax(-1), index)
    x64, y = bracket_dataset(8, 10, np.random.default_rng(0), dtype=torch.float64)
    assert x64.dtype == torch.float64 and y.shape == (8,) and y.dtype == torch.int64


def test_seeded_generator_is_deterministic():
    make = lambda seed: bracket_strings(20, 16, np.random.default_rng(seed), max_depth=3, fill=0.2)  # noqa: E731
    a, b, c = make(5), make(5), make(6)
    assert a[0] == b[0] and (a[1] == b[1]).all()
    assert a[0] != c[0]


def test_validation_errors():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="without filler the length must be even, got 7"):
        balanced_string(7, rng)
    with pytest.raises(ValueError, match="length must be an integer >= 2, got 1"):
        balanced_string(1, rng)
    with pytest.raises(ValueError, match=r"fill must be in \[0, 1\), got 1.5"):
        balanced_string(10, rng, fill=1.5)
    with pytest.raises(ValueError, match="max_depth must be an integer >= 1 or None, got 0"):
        balanced_string(10, rng, max_depth=0)
    with pytest.raises(ValueError, match="leaves fewer than 2 brackets"):
        balanced_string(3, rng, fill=0.9)
    with pytest.raises(TypeError, match="rng must be a numpy.random.Generator"):
        balanced_string(10, 0)
    with pytest.raises(ValueError, match="hard_negative needs a balanced string"):
        hard_negative("(()", rng)
    with pytest.raises(ValueError, match="s has depth 2, more than max_depth=1"):
        hard_negative("(())", rng, max_depth=1)
    with pytest.raises(ValueError, match="kind must be one of"):
        bracket_strings(4, 6, rng, kind="insert")
    with pytest.raises(ValueError, match=r"may only hold characters .*got \['\{'\]"):
        encode_brackets(["({)"])
    with pytest.raises(ValueError, match=r"same length, got lengths \[2, 4\]"):
        encode_brackets(["()", "(())"])
    with pytest.raises(TypeError, match="expected a string"):
        is_balanced(["(", ")"])


# --------------------------------------------------------------------------- second edition: exact values

def test_unbounded_words_are_uniform_and_closed_form_equals_table():
    """Without a depth bound the ballot-number shortcut is used: all 5 words of 6 brackets."""
    from seqlearn.data.brackets import _open_probabilities, _p_open
    rng = np.random.default_rng(3)
    counts = Counter(balanced_string(6, rng) for _ in range(5000))
    assert len(counts) == 5 and all(abs(c / 5000 - 0.2) < 0.03 for c in counts.values())
    for m in (2, 6, 10, 16):
        table = _open_probabilities(m, m // 2)
        for i in range(m):
            for d in range(m // 2):
                if (i + d) % 2 == 0 and d <= min(i, m - i):
                    assert _p_open(i, d, m, m // 2) == pytest.approx(table[i, d], abs=1e-15)
    assert _p_open(0, 0, 4, 1) == 1.0 and _p_open(1, 1, 4, 1) == 0.0   # depth 1: "()()"


def test_exact_filler_counts():
    rng = np.random.default_rng(4)
    for length, fill, n_x in ((11, 0.3, 3), (10, 0.25, 2), (9, 0.5, 5), (12, 0.5, 6)):
        s = balanced_string(length, rng, fill=fill)
        assert len(s) == length and s.count("x") == n_x, (length, fill, s)


def test_odd_counts_and_random_kinds():
    sums = {int(bracket_strings(5, 8, np.random.default_rng(seed))[1].sum()) for seed in range(40)}
    assert sums == {2, 3}
    rng = np.random.default_rng(5)
    changed = Counter(sum(a != b for a, b in zip(s, hard_negative(s, rng)))
                      for s in ["(()()())()"] * 200)
    assert set(changed) == {1, 2}                               # flips and swaps both occur
    assert bracket_strings(1, 4, rng)[1].shape == (1,)


def test_running_count_and_depth_values():
    assert running_count("").tolist() == [] and running_count("))(").tolist() == [-1, -2, -1]
    assert running_count("x").dtype == np.int64
    assert nesting_depth(")))(") == 0 and nesting_depth("x(x") == 1
    assert is_balanced("x") and not is_balanced(")") and not is_balanced("(")


def test_more_validation_errors():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="n must be a positive integer, got 0"):
        bracket_strings(0, 4, rng)
    with pytest.raises(ValueError, match="max_depth must be an integer >= 1 or None, got True"):
        balanced_string(6, rng, max_depth=True)
    with pytest.raises(ValueError, match="length must be an integer >= 2, got 4.0"):
        balanced_string(4.0, rng)
    with pytest.raises(ValueError, match=r"fill must be in \[0, 1\), got -0.1"):
        balanced_string(6, rng, fill=-0.1)
    with pytest.raises(ValueError, match="kind must be one of"):
        hard_negative("()()", rng, kind="insert")
    with pytest.raises(ValueError, match="hard_negative needs a balanced string with brackets"):
        hard_negative("xx", rng)
    with pytest.raises(TypeError, match="dtype must be a torch.dtype, got str"):
        encode_brackets(["()"], dtype="float32")
    with pytest.raises(ValueError, match="strings must be a non-empty list of strings"):
        encode_brackets([])
    with pytest.raises(ValueError, match="strings must be a non-empty list of strings"):
        encode_brackets("()")
    with pytest.raises(TypeError, match="onehot must be"):
        encode_brackets(["()"], onehot=1)
    with pytest.raises(TypeError, match="rng must be a numpy.random.Generator"):
        hard_negative("()", 0)
    with pytest.raises(TypeError, match="rng must be a numpy.random.Generator"):
        bracket_strings(2, 4, 0)


# ---------------------------------------------- properties at random sizes (hypothesis)


@covers("seqlearn.data.brackets.balanced_string", "seqlearn.data.brackets.hard_negative",
        "seqlearn.data.brackets.bracket_strings", "seqlearn.data.brackets.bracket_dataset",
        "seqlearn.data.brackets.encode_brackets", "seqlearn.data.brackets.is_balanced",
        "seqlearn.data.brackets.nesting_depth", "seqlearn.data.brackets.running_count")
@given(seed=seeds, half=st.integers(1, 30), depth=st.one_of(st.none(), st.integers(1, 4)),
       flag=not_bools)
def test_brackets_are_balanced_within_depth_and_negatives_are_not(seed, half, depth, flag):
    rng = np.random.default_rng(seed)
    s = brackets.balanced_string(2 * half, rng, max_depth=depth)
    c = brackets.running_count(s)
    assert brackets.is_balanced(s) and c.min() >= 0 and c[-1] == 0
    assert brackets.nesting_depth(s) <= (depth or half)
    assert not brackets.is_balanced(brackets.hard_negative(s, rng))
    strings, labels = brackets.bracket_strings(4, 2 * half, rng, max_depth=depth)
    assert [brackets.is_balanced(t) for t in strings] == [bool(v) for v in labels]
    x, y = brackets.bracket_dataset(3, 2 * half, rng)
    assert x.shape == (3, 2 * half, 3) and torch.equal(x.sum(-1), torch.ones(3, 2 * half))
    assert brackets.encode_brackets([s], onehot=False).shape == (1, 2 * half)
    refuses(brackets.encode_brackets, [s], onehot=flag)
    refuses(brackets.balanced_string, 2 * half + 1, rng)
    refuses(brackets.balanced_string, 2 * half, rng, fill=float("nan"))


def test_balanced_string_cost_is_linear_without_a_depth_bound():
    s = brackets.balanced_string(20000, np.random.default_rng(0))  # was a cubic big-int table
    assert brackets.is_balanced(s)


def test_encode_empty_strings_gives_t_zero_of_the_documented_dtypes():
    """``encode_brackets([''])`` crashed in one_hot, and with ``onehot=False`` returned
    float32 indices (issue 31)."""
    index = encode_brackets(["", ""], onehot=False)
    assert index.dtype == torch.int64 and index.shape == (2, 0)
    x = encode_brackets([""], dtype=torch.float64)
    assert x.dtype == torch.float64 and x.shape == (1, 0, 3)
