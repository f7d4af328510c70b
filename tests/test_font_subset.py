"""The shipped font subset holds every CJK character and corner quote the book shows.

``tools/subset_font.py`` writes ``_static/fonts/`` from the book's sources; a quotation
added or changed without running it again leaves characters that a reader without CJK
fonts sees as empty boxes. These checks read the subset's character map (fontTools)
against the sources, and the CSS that declares the subset against the tool's ranges.
"""

from __future__ import annotations

import re
import sys

from layout import ROOT

sys.path.insert(0, str(ROOT / "tools"))
import subset_font  # noqa: E402

CSS = ROOT / "_static" / "quotations.css"
REGENERATE = "run `make font` (tools/subset_font.py) to write the subset again"


def _shown(chars: set[str]) -> str:
    return " ".join(f"{c} (U+{ord(c):04X})" for c in sorted(chars)[:20])


def test_subset_has_every_character_the_book_uses():
    used = subset_font.used_characters()
    assert "「" in used and "」" in used, "the book quotes the notes in corner quotes"
    missing = used - subset_font.shipped_characters()
    assert not missing, (
        f"{len(missing)} characters missing: {_shown(missing)}; {REGENERATE}")


def test_subset_has_nothing_the_book_does_not_use():
    extra = subset_font.shipped_characters() - subset_font.used_characters()
    assert not extra, (
        f"{len(extra)} characters no page uses: {_shown(extra)}; {REGENERATE}")


def test_css_declares_the_subset_for_its_ranges():
    css = CSS.read_text(encoding="utf-8")
    font_face = re.search(r"@font-face\s*\{(.*?)\}", css, re.S)
    assert font_face, f"{CSS.name} declares no @font-face"
    url = re.search(r'url\("([^"]+)"\)', font_face.group(1)).group(1)
    assert (CSS.parent / url).resolve() == subset_font.SUBSET
    declared = re.findall(r"U\+([0-9A-F]+)-([0-9A-F]+)", font_face.group(1))
    assert [(int(lo, 16), int(hi, 16)) for lo, hi in declared] == list(
        subset_font.CJK_RANGES), "unicode-range must list subset_font.CJK_RANGES"


def test_licence_ships_with_the_font():
    licence = subset_font.LICENCE.read_text(encoding="utf-8")
    assert "SIL OPEN FONT LICENSE Version 1.1" in licence
    assert "Adobe" in licence, "the font's copyright notice"
