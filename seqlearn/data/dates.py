"""Human-readable dates to ISO dates: a toy translation task whose alignment a reader can check.

Each pair is ``(source, target)``: a date written in one of :data:`DATE_FORMATS` and the same
date as ``"YYYY-MM-DD"``, character by character. The formats reorder day, month and year and
spell the month as a name, an abbreviation or digits, so an attention map must cross::

    "tuesday, 3 march 1998"   "3/3/98"   "March 3rd, 1998"   "03.03.1998"   ->  "1998-03-03"

Dates are drawn uniformly from 1950-01-01 to 2049-12-31 so that a two-digit year is never
ambiguous (``yy >= 50`` is 19yy, ``yy < 50`` is 20yy); the format uniformly from the requested
ones. Month and weekday names are English and fixed here (no locale).
"""

from __future__ import annotations

import datetime
from collections.abc import Sequence

import numpy as np

from seqlearn.validate import check_int, check_rng

MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august",
          "september", "october", "november", "december")
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")

FIRST_DAY = datetime.date(1950, 1, 1)
LAST_DAY = datetime.date(2049, 12, 31)


def _ordinal(day: int) -> str:
    """1 -> "1st", 2 -> "2nd", 3 -> "3rd", 11 -> "11th", 22 -> "22nd"."""
    suffix = "th" if 11 <= day <= 13 else {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")
    return f"{day}{suffix}"


def _render(d: datetime.date, fmt: str) -> str:
    month, weekday = MONTHS[d.month - 1], WEEKDAYS[d.weekday()]
    return {
        "weekday_long": f"{weekday}, {d.day} {month} {d.year}",        # tuesday, 3 march 1998
        "us_slash": f"{d.month}/{d.day}/{d.year % 100:02d}",           # 3/3/98 (month first)
        "month_ordinal": f"{month.capitalize()} {_ordinal(d.day)}, {d.year}",  # March 3rd, 1998
        "dotted": f"{d.day:02d}.{d.month:02d}.{d.year}",                # 03.03.1998
        "short": f"{d.day} {month[:3]} {d.year}",                       # 3 mar 1998
        "weekday_short": f"{weekday[:3]} {d.day:02d} {month[:3]} {d.year}",  # tue 03 mar 1998
        "month_first": f"{month} {d.day}, {d.year}",                    # march 3, 1998
        "dashed_upper": f"{d.day:02d}-{month[:3].upper()}-{d.year % 100:02d}",  # 03-MAR-98
    }[fmt]


DATE_FORMATS: tuple[str, ...] = ("weekday_long", "us_slash", "month_ordinal", "dotted", "short",
                                 "weekday_short", "month_first", "dashed_upper")
"""Names of the source formats, e.g. ``"us_slash"`` renders 1998-03-03 as ``"3/3/98"``."""

DATE_SOURCE_CHARS = "".join(sorted(set(
    "abcdefghijklmnopqrstuvwxyz" + "ABCDEFGHIJKLMNOPQRSTUVWXYZ" + "0123456789" + " ,./-")))
"""Every character a source date can contain (a superset: build a source Vocab from it)."""

DATE_TARGET_CHARS = "0123456789-"
"""The characters of an ISO date."""


def date_pairs(n: int, rng: np.random.Generator, *,
               formats: Sequence[str] = DATE_FORMATS) -> list[tuple[str, str]]:
    """``n`` pairs ``(human-readable date, "YYYY-MM-DD")``, deterministic given ``rng``.

    ``formats`` restricts the source formats to a subset of :data:`DATE_FORMATS`.
    """
    n = check_int(n, "n")
    check_rng(rng)
    if (isinstance(formats, str) or not isinstance(formats, Sequence)
            or len(formats) == 0):
        raise ValueError("formats must be a non-empty list of names from "
                         f"{DATE_FORMATS}, got {formats!r}")
    for fmt in formats:
        if fmt not in DATE_FORMATS:
            raise ValueError(f"unknown date format {fmt!r} in formats; expected one of "
                             f"{DATE_FORMATS}")
    first = FIRST_DAY.toordinal()
    span = LAST_DAY.toordinal() - first + 1
    days = rng.integers(0, span, size=n)  # (n,)
    which = rng.integers(0, len(formats), size=n)  # (n,)
    pairs = []
    for day, k in zip(days.tolist(), which.tolist()):
        d = datetime.date.fromordinal(first + day)
        pairs.append((_render(d, formats[k]), d.isoformat()))
    return pairs
