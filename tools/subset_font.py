"""The web font of the quotations: exactly the CJK characters and corner quotes used.

Every quotation of the source notes is printed in its language between corner quotes
(「...」): Japanese, Chinese and Korean text that a reader's machine may have no font
for (with only DejaVu, each of those characters is an empty box). So the book ships
the glyphs it needs: a subset of Noto Sans CJK SC (SIL Open Font License 1.1, from
Debian's package ``fonts-noto-cjk``) holding exactly the characters of
:data:`CJK_RANGES` that the book's sources use, in ``_static/fonts/`` with its
licence. ``_static/quotations.css`` declares it with ``@font-face`` and a
``unicode-range``: every other character keeps the theme's fonts, and a browser
downloads the file only for a page that shows one of these characters.

Run it after adding or changing a quotation (``tests/test_font_subset.py`` fails
until then)::

    make font        # or: .venv/bin/python tools/subset_font.py

The font comes from the installed package if there is one; otherwise
``apt-get download`` fetches the package into a temporary folder, where it is
unpacked (nothing is installed; on a machine whose package lists are empty, run
``apt-get update`` first). The same sources give the same file, byte for byte.
"""

from __future__ import annotations

import contextlib
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
from layout import toc_files  # noqa: E402  (the pages of the book, from _toc.yml)

FONTS = ROOT / "_static" / "fonts"
SUBSET = FONTS / "noto-sans-cjk-sc-subset.woff2"
LICENCE = FONTS / "OFL.txt"

PACKAGE = "fonts-noto-cjk"
COLLECTION = "usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc"
COPYRIGHT = f"usr/share/doc/{PACKAGE}/copyright"
FAMILY = "Noto Sans CJK SC"  # the simplified-Chinese face: most quotations are Chinese

CJK_RANGES = (
    (0x1100, 0x11FF),  # Hangul Jamo
    (0x2E80, 0x2FDF),  # CJK and Kangxi radicals
    (0x3000, 0x303F),  # CJK symbols and punctuation: 「」『』、。
    (0x3040, 0x30FF),  # Hiragana, Katakana
    (0x3130, 0x318F),  # Hangul compatibility Jamo
    (0x3400, 0x4DBF),  # CJK unified ideographs, extension A
    (0x4E00, 0x9FFF),  # CJK unified ideographs
    (0xAC00, 0xD7AF),  # Hangul syllables
    (0xF900, 0xFAFF),  # CJK compatibility ideographs
    (0xFF00, 0xFFEF),  # half-width and full-width forms: （），：？
)
"""The characters the subset serves (``_static/quotations.css`` lists the same)."""

CJK = re.compile("[" + "".join(f"\\U{lo:08x}-\\U{hi:08x}" for lo, hi in CJK_RANGES)
                 + "]")

EXTRA_SOURCES = ("references.bib", "_toc.yml", "_config.yml")
"""Rendered into pages too: the references page, the sidebar's captions, the title."""


def sources() -> list[Path]:
    """Every page source of the book (chapters, appendix, parts, assignments, intro)."""
    pages = []
    for name in toc_files():
        found = [ROOT / f"{name}{ext}" for ext in (".md", ".ipynb")
                 if (ROOT / f"{name}{ext}").is_file()]
        if not found:
            raise FileNotFoundError(f"_toc.yml lists {name!r}: no .md or .ipynb")
        pages += found
    return pages + [ROOT / name for name in EXTRA_SOURCES]


def _strings(value) -> list[str]:
    """Every string inside a notebook's JSON: cell sources, outputs, metadata."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, list):
        return [s for item in value for s in _strings(item)]
    return []


def used_characters() -> set[str]:
    """The CJK characters and corner quotes that the book's sources contain."""
    used: set[str] = set()
    for path in sources():
        text = path.read_text(encoding="utf-8")
        if path.suffix == ".ipynb":
            text = "".join(_strings(json.loads(text)))
        used.update(CJK.findall(text))
    return used


def shipped_characters(path: Path = SUBSET) -> set[str]:
    """The characters the shipped subset has glyphs for (its cmap)."""
    from fontTools.ttLib import TTFont

    with TTFont(path) as font:
        return {chr(code) for code in font.getBestCmap()}


@contextlib.contextmanager
def package_files():
    """A folder holding the files of ``fonts-noto-cjk``: ``/`` if it is installed."""
    if (Path("/") / COLLECTION).is_file() and (Path("/") / COPYRIGHT).is_file():
        yield Path("/")
        return
    with tempfile.TemporaryDirectory(prefix="subset-font-") as tmp:
        subprocess.run(["apt-get", "download", PACKAGE], cwd=tmp, check=True)
        deb = next(Path(tmp).glob(f"{PACKAGE}_*.deb"))
        subprocess.run(["dpkg-deb", "-x", str(deb), f"{tmp}/files"], check=True)
        yield Path(tmp) / "files"


def _face_number(collection: Path) -> int:
    from fontTools.ttLib import TTCollection

    with TTCollection(collection) as fonts:
        for number, font in enumerate(fonts):
            if font["name"].getDebugName(1) == FAMILY:
                return number
    raise LookupError(f"{FAMILY!r} is not in {collection}")


def ofl_text(copyright_file: Path) -> str:
    """The SIL OFL 1.1 stanza of a Debian copyright file, as plain text."""
    lines = copyright_file.read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines[:-1])  # the stanza with the text
                 if line == "License: SIL-1.1" and lines[i + 1].startswith(" "))
    body = []
    for line in lines[start + 1:]:
        if not line.startswith(" "):
            break
        body.append("" if line == " ." else line[1:])
    return "\n".join(body).strip() + "\n"


def write_subset(files: Path, characters: set[str]) -> None:
    from fontTools import subset
    from fontTools.ttLib import TTFont

    collection = files / COLLECTION
    options = subset.Options()
    options.hinting = False        # screens draw CJK well without the hints
    options.desubroutinize = True  # compresses better in WOFF2
    with TTFont(collection, fontNumber=_face_number(collection),
                recalcTimestamp=False) as font:  # the same file on every run
        notice = font["name"].getDebugName(0)
        subsetter = subset.Subsetter(options)
        subsetter.populate(unicodes=sorted(map(ord, characters)))
        subsetter.subset(font)
        FONTS.mkdir(parents=True, exist_ok=True)
        font.flavor = "woff2"
        font.save(SUBSET)
    LICENCE.write_text(
        f"{SUBSET.name}: a subset of {FAMILY} (Debian package {PACKAGE}),\n"
        "written by tools/subset_font.py with the CJK characters and corner quotes\n"
        f"the book uses.\n\n{notice}\n\n{ofl_text(files / COPYRIGHT)}",
        encoding="utf-8")


def main() -> None:
    characters = used_characters()
    with package_files() as files:
        write_subset(files, characters)
    print(f"{SUBSET.relative_to(ROOT)}: {len(characters)} characters, "
          f"{SUBSET.stat().st_size / 1024:.0f} KiB")


if __name__ == "__main__":
    main()
