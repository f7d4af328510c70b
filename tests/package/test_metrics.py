"""seqlearn.metrics against definitions computed from scratch.

The edit distance against a breadth-first search over strings (the fewest single-
character edits, by definition, with no recurrence), the CER against that, and BLEU
against Papineni et al.'s formula written out with n-gram counts (and sacrebleu's
``exp`` smoothing).

Property tests at random sizes follow the tests above."""

from __future__ import annotations

import itertools
import math
from collections import Counter

import pytest
from hypothesis import given, settings, strategies as st

from properties import covers, refuses
from seqlearn import metrics
from seqlearn.metrics import character_error_rate, corpus_bleu, edit_distance


SETTINGS = settings(max_examples=25, deadline=None)


def bfs_distance(a: str, b: str) -> int:
    """The fewest insertions, deletions and substitutions from ``a`` to ``b``: breadth-first
    search over every string reachable by single edits (letters of ``a`` and ``b`` only)."""
    letters = sorted(set(a + b)) or ["x"]
    frontier, seen, depth = {a}, {a}, 0
    while b not in frontier:
        step = set()
        for s in frontier:
            for i in range(len(s) + 1):
                step.update(s[:i] + c + s[i:] for c in letters)  # insert
                if i < len(s):
                    step.add(s[:i] + s[i + 1:])  # delete
                    step.update(s[:i] + c + s[i + 1:] for c in letters)  # substitute
        frontier = step - seen
        seen |= frontier
        depth += 1
    return depth


def bleu_from_scratch(hyps: list[str], refs: list[str], max_order: int = 4) -> float:
    """Corpus BLEU over characters (spaces left out), sacrebleu's ``exp`` smoothing."""
    hyps = [h.rstrip().replace(" ", "") for h in hyps]
    refs = [r.rstrip().replace(" ", "") for r in refs]
    correct, total = [0] * max_order, [0] * max_order
    for h, r in zip(hyps, refs):
        for n in range(1, max_order + 1):
            hc = Counter(h[i:i + n] for i in range(len(h) - n + 1))
            rc = Counter(r[i:i + n] for i in range(len(r) - n + 1))
            correct[n - 1] += sum(min(c, rc[g]) for g, c in hc.items())
            total[n - 1] += sum(hc.values())
    C, R = sum(map(len, hyps)), sum(map(len, refs))
    if not any(correct):
        return 0.0
    bp = 1.0 if C >= R else (math.exp(1 - R / C) if C else 0.0)
    logs, halvings = [], 1.0
    for n in range(max_order):
        if total[n] == 0:  # no n-gram of this order at all: log 0
            logs.append(-9999999999.0)
            continue
        if correct[n] == 0:
            halvings *= 2
            logs.append(math.log(1 / (halvings * total[n])))
        else:
            logs.append(math.log(correct[n] / total[n]))
    return 100 * bp * math.exp(sum(logs) / max_order)


def test_edit_distance_equals_the_breadth_first_search_on_every_short_pair():
    words = ["".join(w) for n in range(4) for w in itertools.product("ab", repeat=n)]
    for a, b in itertools.product(words, repeat=2):
        assert edit_distance(a, b) == bfs_distance(a, b), (a, b)


@SETTINGS
@given(a=st.text("abc", max_size=4), b=st.text("abc", max_size=4))
def test_edit_distance_equals_the_breadth_first_search(a, b):
    assert edit_distance(a, b) == bfs_distance(a, b)
    assert edit_distance(list(a), tuple(b)) == edit_distance(a, b)  # any token lists


def test_edit_distance_of_known_pairs():
    assert edit_distance("kitten", "sitting") == 3
    assert edit_distance("", "abc") == 3 and edit_distance("abc", "") == 3
    assert edit_distance("1998-03-03", "1998-03-30") == 2
    assert edit_distance(["19", "98"], ["19", "89"]) == 1


@SETTINGS
@given(pairs=st.lists(st.tuples(st.text("abc", max_size=4), st.text("abc", min_size=1,
                                                                     max_size=4)),
                      min_size=1, max_size=4))
def test_cer_is_total_edits_over_total_reference_length(pairs):
    hyps, refs = [h for h, _ in pairs], [r for _, r in pairs]
    want = sum(bfs_distance(h, r) for h, r in pairs) / sum(map(len, refs))
    assert character_error_rate(hyps, refs) == pytest.approx(want, rel=1e-12)


def test_cer_of_perfect_empty_and_long_outputs():
    refs = ["1998-03-03", "2001-12-31"]
    assert character_error_rate(refs, refs) == 0.0
    assert character_error_rate(["", ""], refs) == 1.0  # every character deleted
    assert character_error_rate(["x" * 30, "y" * 30], refs) == 3.0  # above one


@SETTINGS
@given(pairs=st.lists(st.tuples(st.text("abcd", max_size=12), st.text("abcd", min_size=1,
                                                                       max_size=12)),
                      min_size=1, max_size=6))
def test_corpus_bleu_equals_the_formula(pairs):
    hyps, refs = [h for h, _ in pairs], [r for _, r in pairs]
    assert corpus_bleu(hyps, refs) == pytest.approx(bleu_from_scratch(hyps, refs), rel=1e-9,
                                                    abs=1e-9)


def test_corpus_bleu_on_dates():
    refs = ["1998-03-03", "2001-12-31", "1957-07-19"]
    assert corpus_bleu(refs, refs) == pytest.approx(100.0)
    hyps = ["1998-03-03", "2001-12-13", "1957-07-1"]  # a swap and a missing digit
    assert corpus_bleu(hyps, refs) == pytest.approx(bleu_from_scratch(hyps, refs))
    assert 0 < corpus_bleu(hyps, refs) < 100
    assert corpus_bleu(["1 9 9 8"], ["1998"]) == pytest.approx(100.0)  # spaces left out
    assert corpus_bleu(["zzzz"], ["1998"]) == 0.0
    words = corpus_bleu(["the cat sat on the mat"], ["the cat sat on a mat"], tokenize="13a")
    assert words == pytest.approx(bleu_from_scratch(["ABCDEF"], ["ABCDGF"]))  # word = symbol


def test_metrics_validate_their_arguments():
    with pytest.raises(TypeError, match="hypothesis must be a string or a list of tokens, "
                                        "got int"):
        edit_distance(3, "abc")
    with pytest.raises(TypeError, match="reference must be a string or a list of tokens"):
        edit_distance("abc", None)
    for metric in (character_error_rate, corpus_bleu):
        with pytest.raises(TypeError, match="hypotheses must be a list of strings, got str"):
            metric("abc", ["abc"])
        with pytest.raises(TypeError, match=r"references\[1\] must be a string, got int"):
            metric(["a", "b"], ["a", 2])
        with pytest.raises(ValueError, match="same length .* got 2 and 1"):
            metric(["a", "b"], ["a"])
        with pytest.raises(ValueError, match="at least one string, got none"):
            metric([], [])
    with pytest.raises(ValueError, match="references must hold at least one character"):
        character_error_rate(["a"], [""])
    with pytest.raises(ValueError, match="tokenize must be one of"):
        corpus_bleu(["a"], ["a"], tokenize="words")


# ---------------------------------------------- properties at random sizes (hypothesis)


texts = st.text("abc", max_size=6)


@covers("seqlearn.metrics.edit_distance")
@given(a=texts, b=texts, c=texts)
def test_edit_distance_is_a_metric_bounded_by_the_lengths(a, b, c):
    d = metrics.edit_distance
    assert (d(a, b) == 0) == (a == b)
    assert d(a, b) == d(b, a)
    assert d(a, c) <= d(a, b) + d(b, c)
    assert abs(len(a) - len(b)) <= d(a, b) <= max(len(a), len(b))
    loop = len(b) if not a else min(d(a[1:], b) + 1,  # the recurrence on the first letter
                                    (d(a, b[1:]) + 1) if b else len(a),
                                    (d(a[1:], b[1:]) + (a[0] != b[0])) if b else len(a))
    assert d(a, b) == loop
    refuses(d, 1, b)


@covers("seqlearn.metrics.character_error_rate", "seqlearn.metrics.corpus_bleu")
@given(pairs=st.lists(st.tuples(texts, st.text("abc", min_size=1, max_size=6)),
                      min_size=1, max_size=5))
def test_cer_and_bleu_reward_exact_outputs_and_sum_over_the_corpus(pairs):
    hyps, refs = [h for h, _ in pairs], [r for _, r in pairs]
    cer = metrics.character_error_rate(hyps, refs)
    edits = sum(metrics.edit_distance(h, r) for h, r in pairs)
    assert cer == edits / sum(map(len, refs))
    assert metrics.character_error_rate(refs, refs) == 0.0
    bleu = metrics.corpus_bleu(hyps, refs)
    assert 0.0 <= bleu <= 100.0 + 1e-9
    assert (abs(bleu - 100.0) < 1e-9) == (hyps == refs) or sum(map(len, refs)) < 4
    refuses(metrics.character_error_rate, hyps, refs + ["a"])
    refuses(metrics.corpus_bleu, hyps, refs, tokenize="word")
