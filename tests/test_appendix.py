"""The appendix's errata page lists every erratum box of every chapter, linked to its chapter,
and proves the errata that no chapter discusses (nbval runs it like a chapter)."""

from __future__ import annotations

import re

import pytest

from layout import ROOT, chapter_notebooks, markdown_of

ERRATA_PAGE = ROOT / "appendix" / "errata.ipynb"
BOX = re.compile(r"^> \*\*Erratum[^(]*\(([^)]*)\):\s*(.+?)\.?\*\*", re.M)


def entries() -> dict[str, str]:
    """Heading (lower case) -> the text of its entry on the errata page."""
    text = "\n".join(markdown_of(ERRATA_PAGE))
    parts = re.split(r"^#### ", text, flags=re.M)[1:]
    return {p.split("\n", 1)[0].strip().lower(): p for p in parts}


def boxes() -> list[tuple[str, str, str]]:
    """(chapter stem, source notes, title) of every erratum box in the chapters."""
    found = []
    for path in chapter_notebooks():
        for text in markdown_of(path):
            found += [(path.stem, m.group(1), m.group(2).strip()) for m in BOX.finditer(text)]
    return found


def test_box_pattern_reads_titles():
    sample = "> **Erratum 2 (the CMU 11-785 notes): a factor pulled out.** The notes"
    assert BOX.findall(sample) == [("the CMU 11-785 notes", "a factor pulled out")]


def test_there_are_errata():
    assert len(boxes()) >= 17


@pytest.mark.parametrize("chapter, source, title", boxes(), ids=lambda x: str(x)[:40])
def test_every_erratum_is_in_the_appendix(chapter, source, title):
    entry = entries().get(title.lower())
    assert entry is not None, f"appendix/errata.ipynb has no '#### {title}' ({chapter}, {source})"
    assert f"(../chapters/{chapter}.ipynb)" in entry, (
        f"the appendix entry '{title}' must link to ../chapters/{chapter}.ipynb")
    for field in ("**Printed:**", "**Correct:**", "**Proved in:**"):
        assert field in entry, f"the appendix entry '{title}' lacks {field}"
