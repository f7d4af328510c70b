"""seqlearn.data.dates: every format renders the ISO date it is paired with."""

from __future__ import annotations

import datetime
import re

import numpy as np
import pytest

from seqlearn.data import DATE_FORMATS, DATE_SOURCE_CHARS, DATE_TARGET_CHARS, Vocab, date_pairs
from seqlearn.data.dates import MONTHS

EXAMPLE = datetime.date(1998, 3, 3)
DAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]


def _parse(source: str) -> datetime.date:
    """An independent parser of the eight formats (regular expressions, no shared code)."""
    month = {m: i + 1 for i, m in enumerate(MONTHS)}
    short = {m[:3]: i + 1 for i, m in enumerate(MONTHS)}
    full_year = lambda yy: 1900 + yy if yy >= 50 else 2000 + yy  # noqa: E731
    if m := re.fullmatch(r"[a-z]+day, (\d{1,2}) ([a-z]+) (\d{4})", source):
        return datetime.date(int(m[3]), month[m[2]], int(m[1]))
    if m := re.fullmatch(r"(\d{1,2})/(\d{1,2})/(\d{2})", source):
        return datetime.date(full_year(int(m[3])), int(m[1]), int(m[2]))
    if m := re.fullmatch(r"([A-Z][a-z]+) (\d{1,2})(st|nd|rd|th), (\d{4})", source):
        return datetime.date(int(m[4]), month[m[1].lower()], int(m[2]))
    if m := re.fullmatch(r"(\d{2})\.(\d{2})\.(\d{4})", source):
        return datetime.date(int(m[3]), int(m[2]), int(m[1]))
    if m := re.fullmatch(r"(\d{1,2}) ([a-z]{3}) (\d{4})", source):
        return datetime.date(int(m[3]), short[m[2]], int(m[1]))
    if m := re.fullmatch(r"[a-z]{3} (\d{2}) ([a-z]{3}) (\d{4})", source):
        return datetime.date(int(m[3]), short[m[2]], int(m[1]))
    if m := re.fullmatch(r"([a-z]+) (\d{1,2}), (\d{4})", source):
        return datetime.date(int(m[3]), month[m[1]], int(m[2]))
    if m := re.fullmatch(r"(\d{2})-([A-Z]{3})-(\d{2})", source):
        return datetime.date(full_year(int(m[3])), short[m[2].lower()], int(m[1]))
    raise AssertionError(f"unparsed source {source!r}")


def test_every_format_round_trips_and_weekdays_are_right():
    pairs = date_pairs(4000, np.random.default_rng(0))
    vocab = Vocab(DATE_SOURCE_CHARS)
    for source, target in pairs:
        assert _parse(source).isoformat() == target
        vocab.encode(source)  # every character is in DATE_SOURCE_CHARS
        assert set(target) <= set(DATE_TARGET_CHARS)
        if "day," in source or re.match(r"[a-z]{3} \d\d [a-z]", source):
            weekday = DAYS[datetime.date.fromisoformat(target).isoweekday() - 1]
            assert source.startswith(weekday if "," in source else weekday[:3])
    assert len(DATE_FORMATS) >= 7
    for fmt in DATE_FORMATS:  # every format is drawn
        one = date_pairs(50, np.random.default_rng(1), formats=[fmt])
        assert all(_parse(s).isoformat() == t for s, t in one)
    years = [int(t[:4]) for _, t in pairs]
    assert min(years) >= 1950 and max(years) <= 2049


def test_the_issue_examples():
    from seqlearn.data.dates import _render
    want = {"weekday_long": "tuesday, 3 march 1998", "us_slash": "3/3/98",
            "month_ordinal": "March 3rd, 1998", "dotted": "03.03.1998", "short": "3 mar 1998"}
    for fmt, text in want.items():
        assert _render(EXAMPLE, fmt) == text


def test_seeded_and_validated():
    assert date_pairs(20, np.random.default_rng(5)) == date_pairs(20, np.random.default_rng(5))
    with pytest.raises(TypeError, match="rng"):
        date_pairs(3, 0)
    with pytest.raises(ValueError, match="positive"):
        date_pairs(0, np.random.default_rng(0))
    with pytest.raises(ValueError, match="unknown date format"):
        date_pairs(3, np.random.default_rng(0), formats=["iso"])
    with pytest.raises(ValueError, match="non-empty"):
        date_pairs(3, np.random.default_rng(0), formats="dotted")
