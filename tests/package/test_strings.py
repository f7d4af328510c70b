"""seqlearn.data.strings: the reverse / copy length task."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from seqlearn.data import LETTERS, string_pairs


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 6), st.integers(0, 6),
       st.sampled_from(["reverse", "copy"]))
def test_targets_and_lengths(seed, lo, span, task):
    pairs = string_pairs(40, np.random.default_rng(seed), task=task, min_len=lo,
                         max_len=lo + span, alphabet="xyz")
    for s, t in pairs:
        assert lo <= len(s) <= lo + span and set(s) <= set("xyz")
        assert t == (s[::-1] if task == "reverse" else s)


def test_defaults_are_the_measured_setting_and_uniform():
    pairs = string_pairs(20000, np.random.default_rng(0))
    lengths = np.array([len(s) for s, _ in pairs])
    assert lengths.min() == 5 and lengths.max() == 20
    counts = np.bincount(lengths)[5:]
    assert np.abs(counts / len(pairs) - 1 / 16).max() < 0.01
    letters = np.array([ord(c) for s, _ in pairs for c in s]) - ord("a")
    assert np.abs(np.bincount(letters) / letters.size - 1 / 26).max() < 0.005
    assert LETTERS == "abcdefghijklmnopqrstuvwxyz"
    assert string_pairs(5, np.random.default_rng(1)) == string_pairs(5, np.random.default_rng(1))


def test_refuses_bad_input():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="task"):
        string_pairs(3, rng, task="sort")
    with pytest.raises(ValueError, match="max_len must be at least 5"):
        string_pairs(3, rng, max_len=4)
    with pytest.raises(ValueError, match="distinct"):
        string_pairs(3, rng, alphabet="aa")
    with pytest.raises(TypeError, match="alphabet"):
        string_pairs(3, rng, alphabet=["a", "b"])
    with pytest.raises(TypeError, match="rng"):
        string_pairs(3, None)
