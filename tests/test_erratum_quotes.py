"""Every erratum quotes the notes verbatim, and every quote occurs in the notes it names.

A box of a chapter or of the errata appendix (a GitHub alert, ``> [!WARNING]``) opens with
bold words that name its sources, ``> **Erratum (the CMU 11-785 notes): ...**``. Inside it,
the printed words appear as ``「original」 (“English gloss”)``. The notes themselves are
not part of the repository: set ``SEQLEARN_NOTES_DIR`` to the folder that holds them
(``.ci/run`` points it at ``../shared/seeds``); without it the comparison with the notes is
skipped, and says so, while the form of the quotes is still checked.
"""

from __future__ import annotations

import functools
import os
import re
from pathlib import Path

import pytest

from layout import ROOT, chapter_notebooks, markdown_of

PAGES = [*chapter_notebooks(), ROOT / "appendix" / "errata.ipynb"]

# the name a box gives its source -> the prefix of the notes' file name
SOURCES = {
    "the GRU-to-Transformer notes": "000_",
    "the Sequence Models notes": "001_",
    "the Chinese Transformer notes": "002_",
    "the NYU notes": "003_",
    "the CMU 11-785 notes": "004_",
}
BOX_HEAD = re.compile(r"^\*\*(Erratum|Note|Convention)\b[^(*]*\(([^)]*)\)")
ALERT = re.compile(r"\[!\w+\]")
QUOTE = re.compile(r"「([^」]+)」")
GLOSSED = re.compile(r"「[^」]+」\s*\(“[^”]+”\)")


def normalise(text: str) -> str:
    return " ".join(text.split())


def original(quote: str) -> str:
    """The quoted words as the notes print them: a quote may be a code span (raw LaTeX of a
    display formula, which would not render as maths on its own)."""
    quote = normalise(quote)
    if len(quote) > 2 and quote[0] == quote[-1] == "`":
        return quote[1:-1].strip()
    return quote


def boxes() -> list[tuple[str, str, list[str], str]]:
    """(page, kind, source files' prefixes, the box's text without "> ") of every box."""
    found = []
    for path in PAGES:
        for cell in markdown_of(path):
            block: list[str] = []
            for line in [*cell.split("\n"), ""]:
                if line.startswith(">"):
                    block.append(line[1:].removeprefix(" "))
                    continue
                if block and ALERT.fullmatch(block[0]):  # the box's kind, "[!WARNING]"
                    block = block[1:]
                if block:
                    head = BOX_HEAD.match(block[0])
                    if head:
                        names = [n for n in SOURCES if n in head.group(2)]
                        prefixes = [SOURCES[n] for n in names]
                        found.append((path.stem, head.group(1), prefixes, "\n".join(block)))
                block = []
    return found


def box_id(box) -> str:
    page, kind, _, text = box
    return f"{page}:{kind}:{normalise(text)[:50]}"


SHORT = {"NYU": "003_", "CMU 11-785": "004_", "Chinese Transformer": "002_",
         "Sequence Models": "001_", "GRU-to-Transformer": "000_"}


def claims() -> list[tuple[str, str, list[str], str]]:
    """The rows of the claims table of the errata page, as boxes: (page, "Claim", notes, row)."""
    text = "\n".join(markdown_of(ROOT / "appendix" / "errata.ipynb"))
    table = text.split("## Claims the chapters test", 1)[1]
    rows = [r for r in table.splitlines() if r.startswith("| ") and not r.startswith("| notes")]
    found = []
    for row in rows:
        names = [n.strip() for n in row.split("|")[1].split(",")]
        found.append(("errata", "Claim", [SHORT[n] for n in names if n in SHORT], row))
    return found


ERRATA = [b for b in boxes() if b[1] == "Erratum"]
QUOTED = [(b, q) for b in [*boxes(), *claims()] for q in QUOTE.findall(b[3])]


def notes_dir() -> Path | None:
    folder = os.environ.get("SEQLEARN_NOTES_DIR")
    return Path(folder) if folder and Path(folder).is_dir() else None


@functools.cache
def notes_text(folder: Path, prefix: str) -> str:
    """The notes whose file name starts with ``prefix``, whitespace normalised (read once)."""
    return normalise(next(folder.glob(f"{prefix}*.txt")).read_text(encoding="utf-8"))


def test_claims_are_quoted():
    rows = claims()
    assert len(rows) >= 5
    assert sum(bool(QUOTE.search(row)) for *_, row in rows) >= len(rows) - 1, (
        "quote the notes in every row of the claims table")


def test_boxes_are_found():
    assert len(ERRATA) >= 5   # the finder works: 8 erratum boxes since four were withdrawn
    assert all(prefixes for _, kind, prefixes, _ in boxes() if kind == "Erratum"), (
        "every erratum box names its notes in parentheses")


@pytest.mark.parametrize("box", ERRATA, ids=box_id)
def test_every_erratum_quotes_the_notes_with_a_gloss(box):
    page, _, _, text = box
    assert GLOSSED.search(text), (
        f"an erratum box of {page} must quote the printed words as 「original」 (“gloss”):\n"
        f"{text[:300]}")


@pytest.mark.parametrize("box, quote", QUOTED, ids=lambda x: box_id(x) if isinstance(x, tuple)
                         else normalise(x)[:30])
def test_every_quote_occurs_in_the_notes(box, quote):
    folder = notes_dir()
    if folder is None:
        pytest.skip("SEQLEARN_NOTES_DIR does not name a folder with the source notes "
                    "(.ci/run sets it to ../shared/seeds): the quotes were not compared")
    page, _, prefixes, _ = box
    assert prefixes, f"a box of {page} quotes notes without naming them: 「{quote}」"
    texts = {p: notes_text(folder, p) for p in prefixes}
    assert any(original(quote) in t for t in texts.values()), (
        f"{page}: 「{quote}」 does not occur in {', '.join(sorted(texts))}* "
        f"(quote the notes character for character; whitespace runs count as one space)")


def test_normalise_and_patterns():
    assert normalise(" a\n  b ") == "a b"
    assert original("`Z &= x`") == "Z &= x" and original("$x$") == "$x$"
    assert original("`c_{t-1} `") == "c_{t-1}"  # a space keeps `{t-1}` from reading as a role
    assert GLOSSED.search("they print 「空行」 (“empty rows”).")
    assert not GLOSSED.search("they print 「空行」 (empty rows).")
    assert BOX_HEAD.match("**Erratum 2 (the CMU 11-785 notes): x.**").group(2) == (
        "the CMU 11-785 notes")
