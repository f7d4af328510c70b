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


def boxes(pattern: re.Pattern = BOX) -> list[tuple[str, str, str]]:
    """(chapter stem, source notes, title) of every box of the chapters that ``pattern``
    (erratum boxes by default) reads."""
    found = []
    for path in chapter_notebooks():
        for text in markdown_of(path):
            text = re.sub(r"\n> (?!\*\*)", " ", text)  # a title may run over two lines
            found += [(path.stem, m.group(1), m.group(2).strip())
                      for m in pattern.finditer(text)]
    return found


def test_box_pattern_reads_titles():
    sample = "> **Erratum 2 (the CMU 11-785 notes): a factor pulled out.** The notes"
    assert BOX.findall(sample) == [("the CMU 11-785 notes", "a factor pulled out")]


def test_there_are_errata():
    assert len(boxes()) >= 5  # the pattern still reads the boxes


@pytest.mark.parametrize("chapter, source, title", boxes(), ids=lambda x: str(x)[:40])
def test_every_erratum_is_in_the_appendix(chapter, source, title):
    entry = entries().get(title.lower())
    assert entry is not None, f"appendix/errata.ipynb has no '#### {title}' ({chapter}, {source})"
    assert f"(../chapters/{chapter}.ipynb)" in entry, (
        f"the appendix entry '{title}' must link to ../chapters/{chapter}.ipynb")
    for field in ("**Printed:**", "**Correct:**", "**Proved in:**"):
        assert field in entry, f"the appendix entry '{title}' lacks {field}"


def first_part_entries() -> set[str]:
    """Headings of the entries of "Errata proved in the chapters" (lower case)."""
    text = "\n".join(markdown_of(ERRATA_PAGE))
    first = text.split("## Found on a second reading", 1)[0]
    return {h.strip().lower() for h in re.findall(r"^#### (.+)$", first, flags=re.M)}


def test_no_stale_erratum_in_the_appendix():
    """An entry whose chapter box became a convention or a note leaves the errata list."""
    titles = {title.lower() for _, _, title in boxes()}
    stale = sorted(first_part_entries() - titles)
    assert not stale, f"appendix/errata.ipynb lists errata that no chapter has: {stale}"


NOTATION_PAGE = ROOT / "appendix" / "notation.md"
CONVENTION = re.compile(r"^> \*\*Convention[^(]*\(([^)]*)\):\s*(.+?)\.?\*\*", re.M)


def conventions() -> list[tuple[str, str, str]]:
    """(chapter stem, source notes, title) of every convention box in the chapters."""
    return boxes(CONVENTION)


def convention_rows() -> dict[str, str]:
    """Title (lower case) -> row of the conventions table of the notation appendix."""
    text = NOTATION_PAGE.read_text()
    section = text.split("## Conventions of the notes", 1)
    assert len(section) == 2, "appendix/notation.md has no '## Conventions of the notes' section"
    rows = [r for r in section[1].split("\n## ", 1)[0].splitlines() if r.startswith("| ")]
    return {r.split("|")[2].strip().rstrip(".").lower(): r for r in rows[1:]}


def test_there_are_conventions():
    assert len(conventions()) >= 3


@pytest.mark.parametrize("chapter, source, title", conventions(), ids=lambda x: str(x)[:40])
def test_every_convention_is_in_the_notation_appendix(chapter, source, title):
    row = convention_rows().get(title.lower())
    assert row is not None, (
        f"appendix/notation.md's conventions table has no row '{title}' ({chapter}, {source})")
    assert f"(../chapters/{chapter}.ipynb)" in row, (
        f"the conventions row '{title}' must link to ../chapters/{chapter}.ipynb")


def test_convention_rows_link_to_pages_that_exist():
    """A row may also record a convention that no chapter puts in a box; its link must work."""
    for title, row in convention_rows().items():
        links = re.findall(r"\(\.\./(chapters|appendix)/(\w+)\.(ipynb|md)\)", row)
        assert links, f"the conventions row '{title}' links no page"
        for folder, name, ext in links:
            assert (ROOT / folder / f"{name}.{ext}").exists(), f"{folder}/{name}.{ext}"


def test_claims_table_points_at_what_exists():
    """Every chapter and bench script named by the claims table exists."""
    text = "\n".join(markdown_of(ERRATA_PAGE))
    table = text.split("## Claims the chapters test", 1)[1]
    chapters = re.findall(r"\(\.\./chapters/(\w+)\.ipynb\)", table)
    scripts = re.findall(r"`(bench/\w+\.py)`", table)
    assert chapters, "the claims table links no chapter"
    for name in chapters:
        assert (ROOT / "chapters" / f"{name}.ipynb").exists(), name
    for script in scripts:
        assert (ROOT / script).exists(), script
