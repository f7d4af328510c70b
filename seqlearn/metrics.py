r"""Scores of decoded text against references: corpus BLEU and the character error rate.

Exact match gives a decoded string no credit unless every character is right. Two
scores give partial credit (the chapter :doc:`decoding`), both computed over a whole
corpus of hypotheses :math:`h_i` and references :math:`r_i`:

**BLEU** (Papineni et al. 2002; book equation eq-dec-bleu), here over characters:

.. math::

    \mathrm{BLEU} = 100 \cdot \mathrm{BP} \cdot
    \exp\Big(\frac14 \sum_{n=1}^{4} \log p_n\Big),
    \qquad
    p_n = \frac{\sum_i \sum_{g} \min\big(\#_g(h_i), \#_g(r_i)\big)}
               {\sum_i \sum_g \#_g(h_i)},
    \qquad
    \mathrm{BP} = \min\big(1, e^{1 - R/C}\big),

with :math:`\#_g(s)` the count of the n-gram :math:`g` in :math:`s`, and :math:`C` and
:math:`R` the total lengths of the hypotheses and the references. A hypothesis gets
credit for each n-gram it shares with its reference (no more often than the reference
has it); the brevity penalty BP takes back what a too short output would gain.
:func:`corpus_bleu` calls ``sacrebleu`` (Post 2018), the reference implementation; with
its default ``exp`` smoothing a precision with no match counts as
:math:`1 / (2^k \cdot \text{total})` for the k-th such order (and BLEU is 0 when no
n-gram of any order matches).

**Character error rate** (book equation eq-dec-cer):

.. math::

    \mathrm{CER} = \frac{\sum_i d(h_i, r_i)}{\sum_i |r_i|},

with :math:`d` the Levenshtein distance, the least number of single-character
insertions, deletions and substitutions that turn :math:`h_i` into :math:`r_i`
(:func:`edit_distance`). 0 is perfect; an output much longer than its reference can
score above 1.
"""

from __future__ import annotations

from collections.abc import Sequence

from sacrebleu.metrics import BLEU

__all__ = ["edit_distance", "character_error_rate", "corpus_bleu"]

TOKENIZERS = ("char", "none", "13a")


def _check_sequence(x: object, name: str) -> None:
    if not isinstance(x, (str, list, tuple)):
        raise TypeError(f"{name} must be a string or a list of tokens, got "
                        f"{type(x).__name__}")


def edit_distance(hypothesis: Sequence, reference: Sequence) -> int:
    r"""The Levenshtein distance :math:`d(h, r)`: the fewest insertions, deletions and
    substitutions of one token (a character of a string) that turn ``hypothesis`` into
    ``reference``.

    Dynamic programming over prefixes: :math:`D_{i,j} = d(h_{1..i}, r_{1..j})`,
    :math:`D_{i,0} = i`, :math:`D_{0,j} = j`,
    :math:`D_{i,j} = \min(D_{i-1,j} + 1,\ D_{i,j-1} + 1,\ D_{i-1,j-1} + [h_i \ne r_j])`,
    one row at a time (:math:`O(|h|\,|r|)` time, :math:`O(|r|)` memory; book equation
    eq-dec-levenshtein).
    """
    _check_sequence(hypothesis, "hypothesis")
    _check_sequence(reference, "reference")
    previous = list(range(len(reference) + 1))  # D_{0, j} = j
    for i, h in enumerate(hypothesis, start=1):
        current = [i]  # D_{i, 0} = i
        for j, r in enumerate(reference, start=1):
            current.append(min(previous[j] + 1,  # delete h_i
                               current[j - 1] + 1,  # insert r_j
                               previous[j - 1] + (h != r)))  # substitute (or keep) h_i
        previous = current
    return previous[-1]


def _check_corpus(hypotheses: Sequence[str], references: Sequence[str]) -> None:
    for corpus, name in ((hypotheses, "hypotheses"), (references, "references")):
        if isinstance(corpus, str) or not isinstance(corpus, (list, tuple)):
            raise TypeError(f"{name} must be a list of strings, got "
                            f"{type(corpus).__name__}")
        for k, text in enumerate(corpus):
            if not isinstance(text, str):
                raise TypeError(f"{name}[{k}] must be a string, got "
                                f"{type(text).__name__}")
    if len(hypotheses) != len(references):
        raise ValueError(f"hypotheses and references must have the same length (one "
                         f"reference per hypothesis), got {len(hypotheses)} and "
                         f"{len(references)}")
    if not hypotheses:
        raise ValueError("hypotheses must hold at least one string, got none")


def character_error_rate(hypotheses: Sequence[str], references: Sequence[str]) -> float:
    r"""Corpus CER (eq-dec-cer): total edit distance over total reference length.

    ``hypotheses[i]`` is scored against ``references[i]``; the references must hold at
    least one character in all.
    """
    _check_corpus(hypotheses, references)
    total = sum(len(r) for r in references)
    if total == 0:
        raise ValueError("references must hold at least one character in all, got only "
                         "empty strings")
    edits = sum(0 if h == r else edit_distance(h, r)
                for h, r in zip(hypotheses, references))
    return edits / total


def corpus_bleu(hypotheses: Sequence[str], references: Sequence[str], *,
                tokenize: str = "char") -> float:
    r"""Corpus BLEU in [0, 100] (eq-dec-bleu) by ``sacrebleu``, one reference each.

    ``tokenize="char"`` (the default) counts n-grams of characters, spaces left out,
    the unit of the book's character-level tasks; ``"13a"`` is sacrebleu's word-level
    default for real text, ``"none"`` splits at spaces only. N-grams up to 4 tokens, as
    in the paper.
    """
    _check_corpus(hypotheses, references)
    if tokenize not in TOKENIZERS:
        raise ValueError(f"tokenize must be one of {TOKENIZERS}, got {tokenize!r}")
    bleu = BLEU(tokenize=tokenize)  # sacrebleu's defaults: exp smoothing, 4-grams
    return float(bleu.corpus_score(list(hypotheses), [list(references)]).score)
